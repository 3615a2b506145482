#include <gtest/gtest.h>

#include <string>

#include "protocol/xml/acl_xml.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol::xml {
namespace {

int64_t Iso(const char* s) { return *model::ParseIsoDateTime(s); }

// Bodies as captured from azure-data-tables 12.4.2 and @azure/data-tables 13.1.2.
constexpr const char* kPythonBody =
    "<?xml version='1.0' encoding='utf-8'?>\n<SignedIdentifiers><SignedIdentifier><Id>id1</Id><AccessPolicy>"
    "<Start>2021-07-08T09:10:09Z</Start><Expiry>2021-07-09T09:10:09Z</Expiry><Permission>raud</Permission>"
    "</AccessPolicy></SignedIdentifier><SignedIdentifier><Id>empty</Id></SignedIdentifier></SignedIdentifiers>";
constexpr const char* kJsBody =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><SignedIdentifiers><SignedIdentifier><Id>id1</Id>"
    "<AccessPolicy><Start>2021-07-08T09:10:09Z</Start><Expiry>2021-07-09T09:10:09Z</Expiry><Permission>raud"
    "</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>empty</Id><AccessPolicy/>"
    "</SignedIdentifier></SignedIdentifiers>";

TEST(XmlAclTest, ParsesSdkBodies) {
  for (const char* body : {kPythonBody, kJsBody}) {
    auto r = ParseSignedIdentifiers(body);
    ASSERT_TRUE(r.ok()) << r.error().code;
    ASSERT_EQ(r->size(), 2u);
    EXPECT_EQ((*r)[0], (SignedIdentifier{"id1", Iso("2021-07-08T09:10:09Z"), Iso("2021-07-09T09:10:09Z"), "raud"}));
    EXPECT_EQ((*r)[1], (SignedIdentifier{"empty", std::nullopt, std::nullopt, std::nullopt}));
  }
}

TEST(XmlAclTest, WritesServiceShape) {
  auto r = ParseSignedIdentifiers(kJsBody);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(WriteSignedIdentifiers(*r),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>id1</Id><AccessPolicy>"
            "<Start>2021-07-08T09:10:09.0000000Z</Start><Expiry>2021-07-09T09:10:09.0000000Z</Expiry>"
            "<Permission>raud</Permission></AccessPolicy></SignedIdentifier><SignedIdentifier><Id>empty</Id>"
            "</SignedIdentifier></SignedIdentifiers>");
  EXPECT_EQ(WriteSignedIdentifiers({}), "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers />");
  // Only the fields that were set.
  EXPECT_EQ(WriteSignedIdentifiers({{"p", std::nullopt, std::nullopt, "r"}}),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>p</Id>"
            "<AccessPolicy><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>");
}

TEST(XmlAclTest, RoundTripKeepsFractions) {
  std::vector<SignedIdentifier> in = {{"a&b", Iso("2021-01-01T00:00:00.1234567Z"), std::nullopt, "ru"}};
  auto back = ParseSignedIdentifiers(WriteSignedIdentifiers(in));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, in);
}

TEST(XmlAclTest, EmptyBodiesClear) {
  for (const char* body : {"", "  \r\n", "<SignedIdentifiers/>", "<?xml version=\"1.0\"?><SignedIdentifiers />"}) {
    auto r = ParseSignedIdentifiers(body);
    ASSERT_TRUE(r.ok()) << body;
    EXPECT_TRUE(r->empty());
  }
}

std::string WithIds(int n) {
  std::string s = "<SignedIdentifiers>";
  for (int i = 0; i < n; ++i) s += "<SignedIdentifier><Id>id" + std::to_string(i) + "</Id></SignedIdentifier>";
  return s + "</SignedIdentifiers>";
}

void ExpectError(std::string_view body, const char* code) {
  auto r = ParseSignedIdentifiers(body);
  ASSERT_FALSE(r.ok()) << body;
  EXPECT_EQ(r.error().http_status, 400);
  EXPECT_EQ(r.error().code, code) << body;
}

TEST(XmlAclTest, Limits) {
  EXPECT_TRUE(ParseSignedIdentifiers(WithIds(5)).ok());
  ExpectError(WithIds(6), "InvalidXmlDocument");
  const std::string id64(64, 'x');
  EXPECT_TRUE(ParseSignedIdentifiers("<SignedIdentifiers><SignedIdentifier><Id>" + id64 +
                                     "</Id></SignedIdentifier></SignedIdentifiers>").ok());
  ExpectError("<SignedIdentifiers><SignedIdentifier><Id>" + id64 + "x</Id></SignedIdentifier></SignedIdentifiers>",
              "InvalidXmlDocument");
  ExpectError("<SignedIdentifiers><SignedIdentifier></SignedIdentifier></SignedIdentifiers>", "InvalidXmlDocument");
  ExpectError("<SignedIdentifiers><SignedIdentifier><Id>a</Id></SignedIdentifier><SignedIdentifier><Id>a</Id>"
              "</SignedIdentifier></SignedIdentifiers>",
              "InvalidXmlDocument");
  ExpectError("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Permission>rwx</Permission>"
              "</AccessPolicy></SignedIdentifier></SignedIdentifiers>",
              "InvalidXmlDocument");
  ExpectError("<SignedIdentifiers><SignedIdentifier><Id>a</Id><AccessPolicy><Start>yesterday</Start>"
              "</AccessPolicy></SignedIdentifier></SignedIdentifiers>",
              "InvalidXmlNodeValue");
  ExpectError("<Other/>", "InvalidXmlDocument");
  ExpectError("<SignedIdentifiers>", "InvalidXmlDocument");
}

}  // namespace
}  // namespace tablestone::protocol::xml
