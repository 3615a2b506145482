// The typed requests of the service operations (service_ops.h): what each
// parse function accepts and the errors it gives, as the handlers gave them.
// No Beast, no engine.
#include "server/api/service_ops.h"

#include <gtest/gtest.h>

#include "request_parts_test_util.h"

namespace tablestone::api {
namespace {

using protocol::ResourceKind;
using testing::PartsHolder;
using testing::TableParts;

TEST(ParseServicePropertiesTest, GetAndSet) {
  PartsHolder h = TableParts(ResourceKind::kServiceRoot, "");
  auto get = ParseGetServiceProperties(h.Parts());
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->account, "devstoreaccount1");

  h.body =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><StorageServiceProperties><Cors><CorsRule>"
      "<AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET,PUT</AllowedMethods><AllowedHeaders/><ExposedHeaders/>"
      "<MaxAgeInSeconds>0</MaxAgeInSeconds></CorsRule></Cors></StorageServiceProperties>";
  auto set = ParseSetServiceProperties(h.Parts());
  ASSERT_TRUE(set.ok()) << set.error().code;
  EXPECT_EQ(set->account, "devstoreaccount1");
  // Sections left out stay unset (they keep their stored values).
  EXPECT_FALSE(set->update.logging.has_value());
  EXPECT_FALSE(set->update.hour_metrics.has_value());
  ASSERT_TRUE(set->update.cors.has_value());
  ASSERT_EQ(set->update.cors->size(), 1u);
  EXPECT_EQ((*set->update.cors)[0].allowed_methods, "GET,PUT");
}

TEST(ParseServicePropertiesTest, SetErrors) {
  auto error_of = [](std::string body) {
    PartsHolder h = TableParts(ResourceKind::kServiceRoot, "");
    h.body = std::move(body);
    auto r = ParseSetServiceProperties(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  EXPECT_EQ(error_of("<StorageServiceProperties>").code, "InvalidXmlDocument");
  EXPECT_EQ(error_of("<Other/>").code, "InvalidXmlDocument");
  auto bad_bool = error_of(
      "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>maybe</Delete><Read>true</Read>"
      "<Write>false</Write><RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>"
      "</StorageServiceProperties>");
  EXPECT_EQ(bad_bool.code, "InvalidXmlNodeValue");
  EXPECT_EQ(bad_bool.http_status, 400);
}

// Only the secondary endpoint answers stats (Learn: get-table-service-stats).
TEST(ParseGetServiceStatsTest, SecondaryOnly) {
  PartsHolder h = TableParts(ResourceKind::kServiceRoot, "");
  auto primary = ParseGetServiceStats(h.Parts());
  ASSERT_FALSE(primary.ok());
  EXPECT_EQ(primary.error().http_status, 400);
  EXPECT_EQ(primary.error().code, "InvalidQueryParameterValue");
  h.secondary = true;
  auto secondary = ParseGetServiceStats(h.Parts());
  ASSERT_TRUE(secondary.ok());
  EXPECT_EQ(secondary->account, "devstoreaccount1");
}

TEST(ParsePreflightTest, ReadsTheCorsHeaders) {
  PartsHolder h = TableParts(ResourceKind::kServiceRoot, "");
  h.headers.Add("origin", "http://a.com");
  h.headers.Add("Access-Control-Request-Method", "PUT");
  auto req = ParsePreflight(h.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->account, "devstoreaccount1");
  EXPECT_EQ(req->origin, "http://a.com");
  EXPECT_EQ(req->method, "PUT");
  EXPECT_EQ(req->requested_headers, "");
  h.headers.Add("Access-Control-Request-Headers", "x-ms-meta-a, content-type");
  req = ParsePreflight(h.Parts());
  ASSERT_TRUE(req.ok());
  EXPECT_EQ(req->requested_headers, "x-ms-meta-a, content-type");
}

TEST(ParsePreflightTest, NeedsOriginAndMethod) {
  auto error_of = [](std::initializer_list<std::pair<std::string, std::string>> headers) {
    PartsHolder h = TableParts(ResourceKind::kServiceRoot, "");
    for (const auto& [k, v] : headers) h.headers.Add(k, v);
    auto r = ParsePreflight(h.Parts());
    EXPECT_FALSE(r.ok());
    return r.ok() ? protocol::ApiError::InternalError() : r.error();
  };
  for (const auto& e : {error_of({}), error_of({{"Origin", "http://a.com"}}),
                        error_of({{"Access-Control-Request-Method", "GET"}}),
                        error_of({{"Origin", ""}, {"Access-Control-Request-Method", "GET"}}),
                        error_of({{"Origin", "http://a.com"}, {"Access-Control-Request-Method", ""}})}) {
    EXPECT_EQ(e.http_status, 400);
    EXPECT_EQ(e.code, "InvalidHeaderValue");
    EXPECT_EQ(e.message, "A required CORS header is not present.");
  }
}

}  // namespace
}  // namespace tablestone::api
