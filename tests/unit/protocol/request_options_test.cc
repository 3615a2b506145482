#include "protocol/request_options.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "protocol/continuation.h"
#include "protocol/error_body.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol {
namespace {

TEST(RequestOptionsTest, MetadataNegotiation) {
  EXPECT_EQ(NegotiateMetadata(nullptr, "").value(), MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/json").value(), MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(NegotiateMetadata(nullptr, "*/*").value(), MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/json;odata=nometadata").value(), MetadataLevel::kNoMetadata);
  EXPECT_EQ(NegotiateMetadata(nullptr, "Application/JSON; odata=FullMetadata").value(),
            MetadataLevel::kFullMetadata);
  // The exact SDK values (answered without parsing) agree with the parser's answers.
  for (const char* level : {"nometadata", "minimalmetadata", "fullmetadata"}) {
    const std::string exact = std::string("application/json;odata=") + level;
    const std::string spaced = std::string("application/json; odata=") + level;
    EXPECT_EQ(NegotiateMetadata(nullptr, exact).value(), NegotiateMetadata(nullptr, spaced).value()) << level;
  }
  std::string fmt = "application/json;odata=nometadata";
  EXPECT_EQ(NegotiateMetadata(&fmt, "application/json;odata=fullmetadata").value(), MetadataLevel::kNoMetadata);
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/atom+xml").error().code, "AtomFormatNotSupported");
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/atom+xml").error().http_status, 415);
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/json;odata=verbose").error().code,
            "JsonVerboseFormatNotSupported");
  EXPECT_EQ(NegotiateMetadata(nullptr, "application/atom+xml, application/json").value(),
            MetadataLevel::kMinimalMetadata);
  EXPECT_EQ(JsonContentType(MetadataLevel::kNoMetadata), "application/json;odata=nometadata;streaming=true;charset=utf-8");
  for (MetadataLevel level : {MetadataLevel::kNoMetadata, MetadataLevel::kMinimalMetadata,
                              MetadataLevel::kFullMetadata, MetadataLevel::kAtom}) {
    EXPECT_EQ(JsonContentType(level),
              "application/json;odata=" + std::string(MetadataLevelName(level)) + ";streaming=true;charset=utf-8");
  }
}

TEST(RequestOptionsTest, PreferSelectTop) {
  EXPECT_EQ(ParsePrefer("return-no-content"), PreferReturn::kReturnNoContent);
  EXPECT_EQ(ParsePrefer("return-content"), PreferReturn::kReturnContent);
  EXPECT_EQ(ParsePrefer("odata.maxpagesize=5"), PreferReturn::kNone);
  std::string sel = " a , b,a,PartitionKey ";
  EXPECT_EQ(ParseSelect(&sel).value(), (std::vector<std::string>{"a", "b", "PartitionKey"}));
  std::string star = "*";
  EXPECT_TRUE(ParseSelect(&star).value().empty());
  std::string bad = "a,,b";
  EXPECT_EQ(ParseSelect(&bad).error().code, "InvalidInput");
  EXPECT_FALSE(ParseTop(nullptr).value().has_value());
  for (const char* ok : {"0", "1", "1000"}) {
    std::string t = ok;
    EXPECT_EQ(*ParseTop(&t).value(), std::stoi(ok));
  }
  for (const char* bad_top : {"-1", "1001", "abc", "", "1.5", "001000"}) {
    std::string t = bad_top;
    EXPECT_EQ(ParseTop(&t).error().code, "InvalidInput") << bad_top;
  }
}

// Cosmos DB for Table: $top is not limited to 1,000 (protocol/flavor.h); the
// largest int is the cap, and no text overflows.
TEST(RequestOptionsTest, TopWithAHigherMaximum) {
  for (const char* ok : {"1001", "5000", "2147483647", "02147483647"}) {
    std::string t = ok;
    EXPECT_EQ(*ParseTop(&t, INT32_MAX).value(), std::stoll(ok)) << ok;
  }
  for (const char* bad_top : {"2147483648", "99999999999", "999999999999999999999", "-1", "1e3", ""}) {
    std::string t = bad_top;
    EXPECT_EQ(ParseTop(&t, INT32_MAX).error().code, "InvalidInput") << bad_top;
  }
}

TEST(RequestOptionsTest, ApiVersion) {
  EXPECT_TRUE(CheckApiVersion("", false).ok());
  EXPECT_TRUE(CheckApiVersion("2019-02-02", true).ok());
  EXPECT_TRUE(CheckApiVersion("2009-09-19", true).ok());
  EXPECT_EQ(CheckApiVersion("2009-09-18", true).error().code, "InvalidHeaderValue");
  EXPECT_EQ(CheckApiVersion("2099-01-01", true).error().code, "InvalidHeaderValue");
  EXPECT_EQ(CheckApiVersion("garbage", true).error().code, "InvalidHeaderValue");
  EXPECT_EQ(CheckApiVersion("2019-13-02", true).error().code, "InvalidHeaderValue");
}

TEST(RequestOptionsTest, ContentTypes) {
  EXPECT_TRUE(CheckJsonContentType("", false).ok());
  EXPECT_TRUE(CheckJsonContentType("application/json", true).ok());
  EXPECT_TRUE(CheckJsonContentType("application/json; charset=utf-8", true).ok());
  EXPECT_TRUE(CheckJsonContentType("APPLICATION/JSON;odata=nometadata", true).ok());
  EXPECT_EQ(CheckJsonContentType("application/atom+xml", true).error().code, "AtomFormatNotSupported");
  EXPECT_EQ(CheckJsonContentType("text/plain", true).error().code, "MediaTypeNotSupported");
}

TEST(ContinuationTest, RealServiceShapes) {
  // Tokens recorded from the real service (Learn: query-timeout-and-pagination).
  EXPECT_EQ(EncodeContinuation("listEntitiesTest"), "1!24!bGlzdEVudGl0aWVzVGVzdA--");
  EXPECT_EQ(EncodeContinuation("13"), "1!4!MTM-");
  EXPECT_EQ(EncodeContinuation("5"), "1!4!NQ--");
  EXPECT_EQ(DecodeContinuation("1!24!bGlzdEVudGl0aWVzVGVzdA--").value(), "listEntitiesTest");
}

TEST(ContinuationTest, RoundTripAndUrlSafety) {
  for (std::string v : {std::string(""), std::string("a b&c=d#?/+"), std::string("\xC3\xA9\xF0\x9F\x98\x80"),
                        std::string(">>>???")}) {
    std::string token = EncodeContinuation(v);
    for (char c : token) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '!' || c == '*' || c == '_' || c == '-')
          << token;
    }
    EXPECT_EQ(DecodeContinuation(token).value(), v);
  }
}

TEST(ContinuationTest, ForgedTokensAreRejected) {
  for (const char* bad : {"", "abc", "2!4!MTM-", "1!5!MTM-", "1!4!MT=-", "1!x!MTM-", "1!4!M$M-", "1!!"}) {
    auto r = DecodeContinuation(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, "InvalidInput");
    EXPECT_EQ(r.error().http_status, 400);
  }
}

TEST(ErrorBodyTest, JsonShape) {
  int64_t t = *model::ParseIsoDateTime("2020-10-26T16:41:38.2990653Z");
  std::string body = RenderJsonError(ApiError::TableNotFound(), "req-1", t);
  EXPECT_EQ(body,
            "{\"odata.error\":{\"code\":\"TableNotFound\",\"message\":{\"lang\":\"en-US\",\"value\":"
            "\"The table specified does not exist.\\nRequestId:req-1\\nTime:2020-10-26T16:41:38.2990653Z\"}}}");
  int64_t whole = *model::ParseIsoDateTime("2020-10-26T16:41:38Z");
  EXPECT_NE(RenderJsonError(ApiError::InvalidInput(), "r", whole).find("Time:2020-10-26T16:41:38.0000000Z"),
            std::string::npos);
}

TEST(ErrorBodyTest, XmlShape) {
  int64_t t = *model::ParseIsoDateTime("2020-10-26T16:41:38Z");
  std::string body = RenderXmlError(ApiError::InvalidXmlDocument(), "id<&>", t);
  EXPECT_NE(body.find("<code>InvalidXmlDocument</code>"), std::string::npos);
  EXPECT_NE(body.find("RequestId:id&lt;&amp;&gt;"), std::string::npos);
  EXPECT_EQ(body.rfind("<?xml", 0), 0u);
}

// Issue 36: the XML-only operations answer the m:-prefixed form from 2013-08-15 (the service's
// comp=acl error recorded in Azure/azure-sdk-for-net#21913), the unprefixed OData form before.
TEST(ErrorBodyTest, XmlPrefixedFormFrom20130815) {
  int64_t t = *model::ParseIsoDateTime("2020-10-26T16:41:38Z");
  EXPECT_EQ(RenderXmlError(ApiError::ResourceNotFound(), "r&1", t, XmlErrorForm::kPrefixed),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><m:error "
            "xmlns:m=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"><m:code>ResourceNotFound"
            "</m:code><m:message xml:lang=\"en-US\">The specified resource does not exist.\nRequestId:r&amp;1\n"
            "Time:2020-10-26T16:41:38.0000000Z</m:message></m:error>");
  EXPECT_EQ(RenderXmlError(ApiError::ResourceNotFound(), "r", t, XmlErrorForm::kOData).rfind(
                "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?><error xmlns=", 0),
            0u);
  EXPECT_EQ(XmlErrorFormFor(""), XmlErrorForm::kPrefixed);
  EXPECT_EQ(XmlErrorFormFor("2013-08-15"), XmlErrorForm::kPrefixed);
  EXPECT_EQ(XmlErrorFormFor("2026-06-06"), XmlErrorForm::kPrefixed);
  EXPECT_EQ(XmlErrorFormFor("2012-02-12"), XmlErrorForm::kOData);
  EXPECT_EQ(XmlErrorFormFor("2009-09-19"), XmlErrorForm::kOData);
}

}  // namespace
}  // namespace tablestone::protocol
