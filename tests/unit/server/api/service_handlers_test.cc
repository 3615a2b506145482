// Service-level operations (ACL, service properties, stats, CORS) and the
// authorisation rules around them, driven through the real dispatcher with
// signed requests (anonymous access off), over an in-memory Engine.
#include <gtest/gtest.h>

#include <cctype>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "server/api/api_handler.h"
#include "server/api/cors.h"
#include "storage/engine.h"
#include "storage/model/datetime.h"
#include "tests/unit/server/api/api_test_util.h"

namespace tablestone::api {
namespace {

constexpr const char* kDevAccount = "devstoreaccount1";
constexpr const char* kDevKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
constexpr const char* kKey1 = "MTExMTExMTExMTExMTExMTExMTExMTExMTExMTExMTE=";
constexpr const char* kKey1b = "YmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmJiYmI=";
constexpr const char* kKey2 = "MjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjIyMjI=";

using Headers = std::vector<std::pair<std::string, std::string>>;

std::string UrlEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string RawKey(const char* b64) { return *protocol::Base64Decode(b64); }

std::string NowDate() { return model::FormatRfc1123(model::NowTicks()); }
std::string IsoIn(int64_t seconds) {
  std::string s = model::FormatDateTime7(model::NowTicks() + seconds * model::kTicksPerSecond);
  return s.substr(0, 19) + "Z";  // the SDKs' second-precision form
}

class ServiceApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-service";
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    ApiOptions options;
    options.accounts = {{kDevAccount, {kDevKey}}, {"acct1", {kKey1, kKey1b}}, {"acct2", {kKey2}}};
    options.allow_anonymous = false;
    handler_ = MakeApiHandler(*engine_, *executor_, options);
  }

  // Sends `path` (the full wire path, account included) with optional query.
  // `sign_as`: account name and base64 key for a SharedKey header ("" = none).
  http::Response Raw(std::string_view method, const std::string& target, std::string body = {}, Headers headers = {},
                     std::string sign_account = kDevAccount, std::string sign_key = kDevKey,
                     std::string host = "127.0.0.1:10002") {
    http::Request req;
    req.method_string(boost::beast::string_view(method.data(), method.size()));
    req.target(target);
    req.version(11);
    req.set("Host", host);
    req.set("x-ms-version", "2019-02-02");
    req.set("x-ms-date", NowDate());
    for (auto& [k, v] : headers) req.set(k, v);
    req.body() = std::move(body);
    req.prepare_payload();
    if (!sign_account.empty()) {
      std::string_view t = target;
      std::string_view path = t.substr(0, t.find('?'));
      std::optional<std::string> comp;
      if (size_t q = t.find('?'); q != std::string_view::npos) {
        std::string_view query = t.substr(q + 1);
        size_t at = query.find("comp=");
        if (at == 0 || (at != std::string_view::npos && query[at - 1] == '&')) {
          std::string_view v = query.substr(at + 5);
          comp = std::string(v.substr(0, v.find('&')));
        }
      }
      std::string resource = protocol::auth::CanonicalizedResource(
          sign_account, path, comp ? std::optional<std::string_view>(*comp) : std::nullopt);
      auto content_type = req.find("Content-Type");
      std::string to_sign = protocol::auth::SharedKeyStringToSign(
          method, "", content_type == req.end() ? std::string_view() : std::string_view(content_type->value()),
          std::string(req["x-ms-date"]), resource);
      req.set("Authorization",
              "SharedKey " + sign_account + ":" + protocol::auth::SignBase64(RawKey(sign_key.c_str()), to_sign));
    }
    http::RequestContext ctx;
    ctx.remote_ip = "127.0.0.1";
    http::Response resp;
    resp = http::HandleAndWait(*handler_, req, ctx);
    return resp;
  }

  // Relative to devstoreaccount1's root.
  http::Response Send(std::string_view method, const std::string& rel, std::string body = {}, Headers headers = {}) {
    return Raw(method, std::string("/") + kDevAccount + rel, std::move(body), std::move(headers));
  }

  static std::string H(const http::Response& r, std::string_view name) {
    auto it = r.find(boost::beast::string_view(name.data(), name.size()));
    return it == r.end() ? std::string() : std::string(it->value());
  }
  static std::string Code(const http::Response& r) { return H(r, "x-ms-error-code"); }

  void CreateTable(const std::string& account, const char* key, const std::string& name) {
    auto r = Raw("POST", "/" + account + "/Tables", "{\"TableName\":\"" + name + "\"}",
                 {{"Content-Type", "application/json"}}, account, key);
    ASSERT_EQ(r.result_int(), 201) << r.body();
  }
  void InsertEntity(const std::string& table, const std::string& pk, const std::string& rk) {
    auto r = Send("POST", "/" + table, R"({"PartitionKey":")" + pk + R"(","RowKey":")" + rk + R"("})",
                  {{"Content-Type", "application/json"}, {"Prefer", "return-no-content"}});
    ASSERT_EQ(r.result_int(), 204) << r.body();
  }

  // A service SAS query string (no leading '?') for devstoreaccount1.
  static std::string ServiceSas(protocol::auth::ServiceSas sas, const char* account = kDevAccount,
                                const char* key = kDevKey) {
    if (sas.sv.empty()) sas.sv = "2019-02-02";
    std::string sig = protocol::auth::SignBase64(RawKey(key), protocol::auth::ServiceSasStringToSign(sas, account));
    std::string q = "sv=" + sas.sv + "&tn=" + UrlEncode(sas.tn);
    auto add = [&q](const char* name, const std::string& v) {
      if (!v.empty()) q += std::string("&") + name + "=" + UrlEncode(v);
    };
    add("sp", sas.sp);
    add("st", sas.st);
    add("se", sas.se);
    add("spk", sas.spk);
    add("srk", sas.srk);
    add("epk", sas.epk);
    add("erk", sas.erk);
    add("si", sas.si);
    add("sip", sas.sip);
    add("spr", sas.spr);
    return q + "&sig=" + UrlEncode(sig);
  }
  static std::string AccountSas(protocol::auth::AccountSas sas, const char* account = kDevAccount,
                                const char* key = kDevKey) {
    if (sas.sv.empty()) sas.sv = "2019-02-02";
    if (sas.ss.empty()) sas.ss = "t";
    std::string sig = protocol::auth::SignBase64(RawKey(key), protocol::auth::AccountSasStringToSign(sas, account));
    return "sv=" + sas.sv + "&ss=" + sas.ss + "&srt=" + sas.srt + "&sp=" + sas.sp + "&se=" + UrlEncode(sas.se) +
           "&sig=" + UrlEncode(sig);
  }

  std::unique_ptr<storage::Engine> engine_;
  std::unique_ptr<http::RequestHandler> handler_;
  std::unique_ptr<exec::WorkExecutor> executor_ = testing::TestLanes();
};

constexpr const char* kDefaultProperties =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>"
    "<Logging><Version>1.0</Version><Delete>false</Delete><Read>false</Read><Write>false</Write>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></Logging>"
    "<HourMetrics><Version>1.0</Version><Enabled>false</Enabled>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></HourMetrics>"
    "<MinuteMetrics><Version>1.0</Version><Enabled>false</Enabled>"
    "<RetentionPolicy><Enabled>false</Enabled></RetentionPolicy></MinuteMetrics>"
    "<Cors /></StorageServiceProperties>";

constexpr const char* kCorsRules =
    "<StorageServiceProperties><Cors>"
    "<CorsRule><AllowedOrigins>http://a.example,http://b.example</AllowedOrigins>"
    "<AllowedMethods>GET,PUT,POST</AllowedMethods><MaxAgeInSeconds>600</MaxAgeInSeconds>"
    "<ExposedHeaders>x-ms-meta-*</ExposedHeaders><AllowedHeaders>x-ms-meta-*,Content-Type</AllowedHeaders>"
    "</CorsRule>"
    "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>"
    "<MaxAgeInSeconds>5</MaxAgeInSeconds><ExposedHeaders></ExposedHeaders><AllowedHeaders>*</AllowedHeaders>"
    "</CorsRule></Cors></StorageServiceProperties>";

// ---- Service properties ------------------------------------------------------------------------

TEST_F(ServiceApiTest, ServicePropertiesDefaultsAndPartialUpdate) {
  auto get = Send("GET", "/?restype=service&comp=properties");
  ASSERT_EQ(get.result_int(), 200) << get.body();
  EXPECT_EQ(H(get, "Content-Type"), "application/xml");
  EXPECT_EQ(get.body(), kDefaultProperties);

  auto set = Send("PUT", "/?restype=service&comp=properties",
                  "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>"
                  "<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true</IncludeAPIs>"
                  "<RetentionPolicy><Enabled>true</Enabled><Days>7</Days></RetentionPolicy></HourMetrics>"
                  "</StorageServiceProperties>",
                  {{"Content-Type", "application/xml"}});
  ASSERT_EQ(set.result_int(), 202) << set.body();
  EXPECT_EQ(set.body(), "");
  EXPECT_EQ(H(set, "Content-Length"), "0");

  // A second update of another section keeps the first one (sections left out keep their values).
  ASSERT_EQ(Send("PUT", "/?restype=service&comp=properties", kCorsRules).result_int(), 202);
  auto after = Send("GET", "/?restype=service&comp=properties");
  ASSERT_EQ(after.result_int(), 200);
  EXPECT_NE(after.body().find("<HourMetrics><Version>1.0</Version><Enabled>true</Enabled><IncludeAPIs>true"
                              "</IncludeAPIs><RetentionPolicy><Enabled>true</Enabled><Days>7</Days>"),
            std::string::npos)
      << after.body();
  EXPECT_NE(after.body().find("<AllowedOrigins>http://a.example,http://b.example</AllowedOrigins>"), std::string::npos);
  EXPECT_NE(after.body().find("<Logging><Version>1.0</Version><Delete>false</Delete>"), std::string::npos);

  // An empty <Cors/> clears the rules only.
  ASSERT_EQ(Send("PUT", "/?restype=service&comp=properties",
                 "<StorageServiceProperties><Cors/>"
                 "</StorageServiceProperties>")
                .result_int(),
            202);
  auto cleared = Send("GET", "/?restype=service&comp=properties");
  EXPECT_NE(cleared.body().find("<Cors />"), std::string::npos);
  EXPECT_NE(cleared.body().find("<Days>7</Days>"), std::string::npos);
}

TEST_F(ServiceApiTest, ServicePropertiesRejectsBadXml) {
  auto malformed = Send("PUT", "/?restype=service&comp=properties", "<StorageServiceProperties>");
  EXPECT_EQ(malformed.result_int(), 400);
  EXPECT_EQ(Code(malformed), "InvalidXmlDocument");
  EXPECT_EQ(H(malformed, "Content-Type"), "application/xml");
  // The m:-prefixed document from 2013-08-15 (issue 36, docs/compatibility.md).
  EXPECT_NE(malformed.body().find("<m:code>InvalidXmlDocument</m:code>"), std::string::npos) << malformed.body();

  std::string six = "<StorageServiceProperties><Cors>";
  for (int i = 0; i < 6; ++i) {
    six +=
        "<CorsRule><AllowedOrigins>*</AllowedOrigins><AllowedMethods>GET</AllowedMethods>"
        "<MaxAgeInSeconds>1</MaxAgeInSeconds></CorsRule>";
  }
  six += "</Cors></StorageServiceProperties>";
  EXPECT_EQ(Code(Send("PUT", "/?restype=service&comp=properties", six)), "InvalidXmlDocument");
  auto days = Send("PUT", "/?restype=service&comp=properties",
                   "<StorageServiceProperties><Logging><Version>1.0</Version><Delete>true</Delete><Read>false</Read>"
                   "<Write>false</Write><RetentionPolicy><Enabled>true</Enabled><Days>400</Days></RetentionPolicy>"
                   "</Logging></StorageServiceProperties>");
  EXPECT_EQ(days.result_int(), 400);
  EXPECT_EQ(Code(days), "InvalidXmlNodeValue");
  // Nothing was stored by the failed attempts.
  EXPECT_EQ(Send("GET", "/?restype=service&comp=properties").body(), kDefaultProperties);
}

TEST_F(ServiceApiTest, ServicePropertiesArePerAccount) {
  ASSERT_EQ(Send("PUT", "/?restype=service&comp=properties", kCorsRules).result_int(), 202);
  auto other = Raw("GET", "/acct1/?restype=service&comp=properties", {}, {}, "acct1", kKey1);
  ASSERT_EQ(other.result_int(), 200) << other.body();
  EXPECT_EQ(other.body(), kDefaultProperties);
}

// ---- Table ACL ---------------------------------------------------------------------------------

TEST_F(ServiceApiTest, TableAclRoundTrip) {
  CreateTable(kDevAccount, kDevKey, "acltable");
  auto empty = Send("GET", "/acltable?comp=acl");
  ASSERT_EQ(empty.result_int(), 200) << empty.body();
  EXPECT_EQ(H(empty, "Content-Type"), "application/xml");
  EXPECT_EQ(empty.body(), "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers />");

  // JS form: declaration with standalone, an empty AccessPolicy.
  auto set = Send("PUT", "/acltable?comp=acl",
                  "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><SignedIdentifiers>"
                  "<SignedIdentifier><Id>full</Id><AccessPolicy><Start>2021-07-08T09:10:09Z</Start>"
                  "<Expiry>2031-07-08T09:10:09.1234567Z</Expiry><Permission>raud</Permission></AccessPolicy>"
                  "</SignedIdentifier><SignedIdentifier><Id>empty</Id><AccessPolicy/></SignedIdentifier>"
                  "</SignedIdentifiers>",
                  {{"Content-Type", "application/xml"}});
  ASSERT_EQ(set.result_int(), 204) << set.body();
  EXPECT_EQ(H(set, "Content-Length"), "0");

  auto get = Send("GET", "/acltable?comp=acl");
  EXPECT_EQ(get.body(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><SignedIdentifiers><SignedIdentifier><Id>full</Id>"
            "<AccessPolicy><Start>2021-07-08T09:10:09.0000000Z</Start><Expiry>2031-07-08T09:10:09.1234567Z</Expiry>"
            "<Permission>raud</Permission></AccessPolicy></SignedIdentifier>"
            "<SignedIdentifier><Id>empty</Id></SignedIdentifier></SignedIdentifiers>");

  // An empty body clears the ACL.
  ASSERT_EQ(Send("PUT", "/acltable?comp=acl").result_int(), 204);
  EXPECT_EQ(Send("GET", "/acltable?comp=acl").body(), empty.body());
}

TEST_F(ServiceApiTest, TableAclErrors) {
  auto missing = Send("GET", "/nosuchtable?comp=acl");
  EXPECT_EQ(missing.result_int(), 404);
  // Issue 36: ResourceNotFound, the ACL endpoint's code (docs/compatibility.md), not TableNotFound.
  EXPECT_EQ(Code(missing), "ResourceNotFound");
  EXPECT_EQ(H(missing, "Content-Type"), "application/xml");
  EXPECT_NE(missing.body().find("<m:code>ResourceNotFound</m:code><m:message xml:lang=\"en-US\">The specified "
                                "resource does not exist.\nRequestId:"),
            std::string::npos)
      << missing.body();
  auto missing_set = Send("PUT", "/nosuchtable?comp=acl", "<SignedIdentifiers/>");
  EXPECT_EQ(missing_set.result_int(), 404);
  EXPECT_EQ(Code(missing_set), "ResourceNotFound");

  CreateTable(kDevAccount, kDevKey, "aclerrors");
  std::string six = "<SignedIdentifiers>";
  for (int i = 0; i < 6; ++i) six += "<SignedIdentifier><Id>id" + std::to_string(i) + "</Id></SignedIdentifier>";
  six += "</SignedIdentifiers>";
  auto too_many = Send("PUT", "/aclerrors?comp=acl", six);
  EXPECT_EQ(too_many.result_int(), 400);
  EXPECT_EQ(Code(too_many), "InvalidXmlDocument");
  auto bad_time = Send("PUT", "/aclerrors?comp=acl",
                       "<SignedIdentifiers><SignedIdentifier><Id>x</Id><AccessPolicy><Start>yesterday</Start>"
                       "</AccessPolicy></SignedIdentifier></SignedIdentifiers>");
  EXPECT_EQ(Code(bad_time), "InvalidXmlNodeValue");

  // ACL operations are Shared Key only: a SAS with every permission is refused.
  protocol::auth::AccountSas sas;
  sas.srt = "sco";
  sas.sp = "rwdlacu";
  sas.se = IsoIn(3600);
  auto by_sas = Raw("GET", "/devstoreaccount1/aclerrors?comp=acl&" + AccountSas(sas), {}, {}, "");
  EXPECT_EQ(by_sas.result_int(), 403);
  EXPECT_EQ(Code(by_sas), "AuthorizationFailure");
}

// ---- Stored access policies used by a service SAS ---------------------------------------------

TEST_F(ServiceApiTest, ServiceSasResolvesStoredPolicy) {
  CreateTable(kDevAccount, kDevKey, "policytable");
  InsertEntity("policytable", "p", "1");
  ASSERT_EQ(
      Send("PUT", "/policytable?comp=acl",
           "<SignedIdentifiers><SignedIdentifier><Id>readonly</Id><AccessPolicy><Expiry>" + IsoIn(3600) +
               "</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier>"
               "<SignedIdentifier><Id>expired</Id><AccessPolicy><Expiry>" +
               IsoIn(-60) + "</Expiry><Permission>r</Permission></AccessPolicy></SignedIdentifier></SignedIdentifiers>")
          .result_int(),
      204);

  protocol::auth::ServiceSas sas;
  sas.tn = "policytable";
  sas.si = "readonly";
  std::string q = ServiceSas(sas);
  auto read = Raw("GET", "/devstoreaccount1/policytable()?" + q, {}, {}, "");
  EXPECT_EQ(read.result_int(), 200) << read.body();
  auto write = Raw("POST", "/devstoreaccount1/policytable?" + q, R"({"PartitionKey":"p","RowKey":"2"})",
                   {{"Content-Type", "application/json"}}, "");
  EXPECT_EQ(write.result_int(), 403);
  EXPECT_EQ(Code(write), "AuthorizationPermissionMismatch");

  sas.si = "expired";
  auto expired = Raw("GET", "/devstoreaccount1/policytable()?" + ServiceSas(sas), {}, {}, "");
  EXPECT_EQ(expired.result_int(), 403);
  EXPECT_EQ(Code(expired), "AuthenticationFailed");

  sas.si = "nosuchpolicy";
  EXPECT_EQ(Code(Raw("GET", "/devstoreaccount1/policytable()?" + ServiceSas(sas), {}, {}, "")), "AuthenticationFailed");

  // Removing the policy revokes the token at once.
  ASSERT_EQ(Send("PUT", "/policytable?comp=acl", "<SignedIdentifiers/>").result_int(), 204);
  auto revoked = Raw("GET", "/devstoreaccount1/policytable()?" + q, {}, {}, "");
  EXPECT_EQ(revoked.result_int(), 403);
}

TEST_F(ServiceApiTest, ServiceSasKeyRangeRestrictsQueriesAndWrites) {
  CreateTable(kDevAccount, kDevKey, "rangetable");
  for (const char* pk : {"a", "b", "c", "d"}) {
    for (const char* rk : {"1", "2", "3"}) InsertEntity("rangetable", pk, rk);
  }
  protocol::auth::ServiceSas sas;
  sas.tn = "rangetable";
  sas.sp = "raud";
  sas.se = IsoIn(3600);
  sas.spk = "b";
  sas.srk = "2";
  sas.epk = "c";
  sas.erk = "2";
  std::string q = ServiceSas(sas);
  auto query =
      Raw("GET", "/devstoreaccount1/rangetable()?" + q, {}, {{"Accept", "application/json;odata=nometadata"}}, "");
  ASSERT_EQ(query.result_int(), 200) << query.body();
  std::string keys;
  for (size_t at = 0; (at = query.body().find("\"PartitionKey\":\"", at)) != std::string::npos;) {
    at += 16;
    keys += query.body().substr(at, 1);
    size_t rk = query.body().find("\"RowKey\":\"", at) + 10;
    keys += query.body().substr(rk, 1) + " ";
  }
  EXPECT_EQ(keys, "b2 b3 c1 c2 ");

  auto out_get = Raw("GET", "/devstoreaccount1/rangetable(PartitionKey='a',RowKey='1')?" + q, {}, {}, "");
  EXPECT_EQ(out_get.result_int(), 403);
  EXPECT_EQ(Code(out_get), "AuthorizationFailure");
  auto in_get = Raw("GET", "/devstoreaccount1/rangetable(PartitionKey='b',RowKey='3')?" + q, {}, {}, "");
  EXPECT_EQ(in_get.result_int(), 200) << in_get.body();
  auto out_insert = Raw("POST", "/devstoreaccount1/rangetable?" + q, R"({"PartitionKey":"d","RowKey":"0"})",
                        {{"Content-Type", "application/json"}}, "");
  EXPECT_EQ(out_insert.result_int(), 403);
  EXPECT_EQ(Code(out_insert), "AuthorizationFailure");
  auto out_delete =
      Raw("DELETE", "/devstoreaccount1/rangetable(PartitionKey='c',RowKey='3')?" + q, {}, {{"If-Match", "*"}}, "");
  EXPECT_EQ(out_delete.result_int(), 403);
  auto in_delete =
      Raw("DELETE", "/devstoreaccount1/rangetable(PartitionKey='c',RowKey='1')?" + q, {}, {{"If-Match", "*"}}, "");
  EXPECT_EQ(in_delete.result_int(), 204) << in_delete.body();
}

// ---- Service stats and the secondary endpoint ---------------------------------------------------

TEST_F(ServiceApiTest, ServiceStatsOnlyOnSecondary) {
  auto primary = Send("GET", "/?restype=service&comp=stats");
  EXPECT_EQ(primary.result_int(), 400);
  EXPECT_EQ(Code(primary), "InvalidQueryParameterValue");

  auto secondary = Raw("GET", "/devstoreaccount1-secondary/?restype=service&comp=stats");
  ASSERT_EQ(secondary.result_int(), 200) << secondary.body();
  EXPECT_EQ(H(secondary, "Content-Type"), "application/xml");
  EXPECT_NE(secondary.body().find("<StorageServiceStats><GeoReplication><Status>live</Status><LastSyncTime>"),
            std::string::npos);
  EXPECT_NE(secondary.body().find(" GMT</LastSyncTime>"), std::string::npos);

  // Python 12.x path-style: the primary path kept after the secondary account, signed as the primary path.
  auto py = Raw("GET", "/devstoreaccount1-secondary/devstoreaccount1/?restype=service&comp=stats", {}, {}, "");
  EXPECT_EQ(py.result_int(), 403);  // unsigned: still refused
  // Signed over "/devstoreaccount1/" (what Python signs) but sent on the secondary path.
  std::string date = NowDate();
  std::string sig = protocol::auth::SignBase64(
      RawKey(kDevKey),
      protocol::auth::SharedKeyStringToSign("GET", "", "", date, "/devstoreaccount1/devstoreaccount1/?comp=stats"));
  auto signed_py = Raw("GET", "/devstoreaccount1-secondary/devstoreaccount1/?restype=service&comp=stats", {},
                       {{"x-ms-date", date}, {"Authorization", "SharedKey devstoreaccount1:" + sig}}, "");
  EXPECT_EQ(signed_py.result_int(), 200) << signed_py.body();
}

TEST_F(ServiceApiTest, SecondaryServesReadsAndRefusesWrites) {
  CreateTable(kDevAccount, kDevKey, "secondarytable");
  InsertEntity("secondarytable", "p", "r");
  auto read = Raw("GET", "/devstoreaccount1-secondary/secondarytable(PartitionKey='p',RowKey='r')");
  EXPECT_EQ(read.result_int(), 200) << read.body();
  auto python_style = Raw("GET", "/devstoreaccount1-secondary/devstoreaccount1/secondarytable()");
  EXPECT_EQ(python_style.result_int(), 200) << python_style.body();
  auto props = Raw("GET", "/devstoreaccount1-secondary/?restype=service&comp=properties");
  EXPECT_EQ(props.result_int(), 200);

  auto insert = Raw("POST", "/devstoreaccount1-secondary/secondarytable", R"({"PartitionKey":"p","RowKey":"x"})",
                    {{"Content-Type", "application/json"}});
  EXPECT_EQ(insert.result_int(), 403);
  EXPECT_EQ(Code(insert), "AuthorizationFailure");
  auto create = Raw("POST", "/devstoreaccount1-secondary/Tables", R"({"TableName":"fromsecondary"})",
                    {{"Content-Type", "application/json"}});
  EXPECT_EQ(create.result_int(), 403);
  auto set_props = Raw("PUT", "/devstoreaccount1-secondary/?restype=service&comp=properties", kCorsRules);
  EXPECT_EQ(set_props.result_int(), 403);
  auto set_acl = Raw("PUT", "/devstoreaccount1-secondary/secondarytable?comp=acl", "<SignedIdentifiers/>");
  EXPECT_EQ(set_acl.result_int(), 403);
  // Nothing was written.
  EXPECT_EQ(Send("GET", "/secondarytable(PartitionKey='p',RowKey='x')").result_int(), 404);
  EXPECT_EQ(Send("GET", "/?restype=service&comp=properties").body(), kDefaultProperties);
}

// ---- CORS ----------------------------------------------------------------------------------------

TEST_F(ServiceApiTest, PreflightAnsweredFromStoredRules) {
  Headers pre = {{"Origin", "http://a.example"}, {"Access-Control-Request-Method", "PUT"}};
  auto none = Raw("OPTIONS", "/devstoreaccount1/Tables", {}, pre, "");
  EXPECT_EQ(none.result_int(), 403);
  EXPECT_EQ(Code(none), "CorsPreflightFailure");
  // Issue 36: from 2013-08-15 the m:-prefixed error document, before it the OData <error>.
  EXPECT_EQ(none.body().rfind("<?xml version=\"1.0\" encoding=\"utf-8\"?><m:error xmlns:m=", 0), 0u) << none.body();
  EXPECT_NE(none.body().find("<m:code>CorsPreflightFailure</m:code>"), std::string::npos);
  Headers old_version = pre;
  old_version.emplace_back("x-ms-version", "2012-02-12");
  auto old_none = Raw("OPTIONS", "/devstoreaccount1/Tables", {}, old_version, "");
  EXPECT_EQ(old_none.result_int(), 403);
  EXPECT_NE(old_none.body().find("<error xmlns=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">"
                                 "<code>CorsPreflightFailure</code>"),
            std::string::npos)
      << old_none.body();

  auto missing = Raw("OPTIONS", "/devstoreaccount1/Tables", {}, {{"Origin", "http://a.example"}}, "");
  EXPECT_EQ(missing.result_int(), 400);
  EXPECT_EQ(Code(missing), "InvalidHeaderValue");

  ASSERT_EQ(Send("PUT", "/?restype=service&comp=properties", kCorsRules).result_int(), 202);
  pre.emplace_back("Access-Control-Request-Headers", "content-type,x-ms-meta-abc");
  auto ok = Raw("OPTIONS", "/devstoreaccount1/sometable(PartitionKey='a',RowKey='b')", {}, pre, "");
  ASSERT_EQ(ok.result_int(), 200) << ok.body();
  EXPECT_EQ(H(ok, "Access-Control-Allow-Origin"), "http://a.example");
  EXPECT_EQ(H(ok, "Access-Control-Allow-Methods"), "PUT");
  EXPECT_EQ(H(ok, "Access-Control-Allow-Headers"), "content-type,x-ms-meta-abc");
  EXPECT_EQ(H(ok, "Access-Control-Max-Age"), "600");
  EXPECT_EQ(H(ok, "Access-Control-Allow-Credentials"), "true");
  EXPECT_FALSE(H(ok, "x-ms-request-id").empty());

  // A header the first rule does not allow, and a method only the wildcard rule lacks.
  auto bad_header = Raw("OPTIONS", "/devstoreaccount1/Tables", {},
                        {{"Origin", "http://a.example"},
                         {"Access-Control-Request-Method", "PUT"},
                         {"Access-Control-Request-Headers", "x-custom"}},
                        "");
  EXPECT_EQ(bad_header.result_int(), 403);
  auto other_origin_put = Raw("OPTIONS", "/devstoreaccount1/Tables", {},
                              {{"Origin", "http://c.example"}, {"Access-Control-Request-Method", "PUT"}}, "");
  EXPECT_EQ(other_origin_put.result_int(), 403);

  // The wildcard rule: "*" back and no credentials.
  auto wildcard = Raw("OPTIONS", "/devstoreaccount1/Tables", {},
                      {{"Origin", "http://c.example"},
                       {"Access-Control-Request-Method", "GET"},
                       {"Access-Control-Request-Headers", "x-anything"}},
                      "");
  ASSERT_EQ(wildcard.result_int(), 200);
  EXPECT_EQ(H(wildcard, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(H(wildcard, "Access-Control-Max-Age"), "5");
  EXPECT_EQ(H(wildcard, "Access-Control-Allow-Credentials"), "");

  // Rules belong to the account: acct1 has none.
  EXPECT_EQ(Raw("OPTIONS", "/acct1/Tables", {}, pre, "").result_int(), 403);
}

TEST_F(ServiceApiTest, CorsHeadersOnActualRequests) {
  // No rules: no CORS headers at all.
  auto plain = Send("GET", "/Tables", {}, {{"Origin", "http://a.example"}});
  EXPECT_EQ(plain.result_int(), 200);
  EXPECT_EQ(H(plain, "Access-Control-Allow-Origin"), "");
  EXPECT_EQ(H(plain, "Vary"), "");

  ASSERT_EQ(Send("PUT", "/?restype=service&comp=properties", kCorsRules).result_int(), 202);
  auto matched = Send("GET", "/Tables", {}, {{"Origin", "http://b.example"}});
  ASSERT_EQ(matched.result_int(), 200);
  EXPECT_EQ(H(matched, "Access-Control-Allow-Origin"), "http://b.example");
  EXPECT_EQ(H(matched, "Access-Control-Allow-Credentials"), "true");
  EXPECT_EQ(H(matched, "Vary"), "Origin");
  std::string exposed = H(matched, "Access-Control-Expose-Headers");
  EXPECT_EQ(exposed.rfind("x-ms-meta-*,", 0), 0u) << exposed;
  for (const char* h : {"x-ms-request-id", "x-ms-version", "Date", "Content-Type"}) {
    EXPECT_NE(exposed.find(h), std::string::npos) << h << " in " << exposed;
  }

  // Errors carry CORS headers too, so a browser can read them.
  auto error = Send("GET", "/nosuchtable()", {}, {{"Origin", "http://a.example"}});
  EXPECT_EQ(error.result_int(), 404);
  EXPECT_EQ(H(error, "Access-Control-Allow-Origin"), "http://a.example");
  auto unauth = Raw("GET", "/devstoreaccount1/Tables", {}, {{"Origin", "http://a.example"}}, "");
  EXPECT_EQ(unauth.result_int(), 403);
  EXPECT_EQ(H(unauth, "Access-Control-Allow-Origin"), "http://a.example");

  // DELETE matches no rule: Vary only.
  auto unmatched = Send("DELETE", "/Tables('nosuch')", {}, {{"Origin", "http://a.example"}});
  EXPECT_EQ(H(unmatched, "Access-Control-Allow-Origin"), "");
  EXPECT_EQ(H(unmatched, "Vary"), "Origin");
  // Wildcard rule for GET from any origin: "*", no credentials, no Vary.
  auto any = Send("GET", "/Tables", {}, {{"Origin", "http://z.example"}});
  EXPECT_EQ(H(any, "Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(H(any, "Access-Control-Allow-Credentials"), "");
}

// ---- Authentication and account isolation -------------------------------------------------------

TEST_F(ServiceApiTest, AnonymousRequestsAreRefused) {
  for (const char* target : {"/devstoreaccount1/Tables", "/devstoreaccount1/?restype=service&comp=properties"}) {
    auto r = Raw("GET", target, {}, {}, "");
    EXPECT_EQ(r.result_int(), 403) << target;
    EXPECT_EQ(Code(r), "AuthenticationFailed") << target;
  }
}

TEST_F(ServiceApiTest, EitherAccountKeyAndSharedKeyLite) {
  EXPECT_EQ(Raw("GET", "/acct1/Tables", {}, {}, "acct1", kKey1).result_int(), 200);
  EXPECT_EQ(Raw("GET", "/acct1/Tables", {}, {}, "acct1", kKey1b).result_int(), 200);
  EXPECT_EQ(Raw("GET", "/acct1/Tables", {}, {}, "acct1", kKey2).result_int(), 403);

  std::string date = NowDate();
  std::string sig = protocol::auth::SignBase64(
      RawKey(kKey1), protocol::auth::SharedKeyLiteStringToSign(date, "/acct1/acct1/?comp=properties"));
  auto lite = Raw("GET", "/acct1/?restype=service&comp=properties", {},
                  {{"x-ms-date", date}, {"Authorization", "SharedKeyLite acct1:" + sig}}, "");
  EXPECT_EQ(lite.result_int(), 200) << lite.body();
}

TEST_F(ServiceApiTest, OneAccountsCredentialsNeverReachAnother) {
  CreateTable("acct2", kKey2, "secrets");
  // acct1's own key, acct1 named in the header, acct2 in the path.
  auto r1 = Raw("GET", "/acct2/secrets()", {}, {}, "acct1", kKey1);
  EXPECT_EQ(r1.result_int(), 403);
  EXPECT_EQ(Code(r1), "AuthenticationFailed");
  // acct1's key but claiming acct2.
  EXPECT_EQ(Raw("GET", "/acct2/secrets()", {}, {}, "acct2", kKey1).result_int(), 403);
  // An account SAS of acct1 on acct2's table.
  protocol::auth::AccountSas sas;
  sas.srt = "sco";
  sas.sp = "rwdlacu";
  sas.se = IsoIn(3600);
  EXPECT_EQ(Raw("GET", "/acct2/secrets()?" + AccountSas(sas, "acct1", kKey1), {}, {}, "").result_int(), 403);
  EXPECT_EQ(Raw("GET", "/acct2/secrets()?" + AccountSas(sas, "acct2", kKey2), {}, {}, "").result_int(), 200);
  // A service SAS of acct1 for a table of the same name.
  protocol::auth::ServiceSas ssas;
  ssas.tn = "secrets";
  ssas.sp = "raud";
  ssas.se = IsoIn(3600);
  EXPECT_EQ(Raw("GET", "/acct2/secrets()?" + ServiceSas(ssas, "acct1", kKey1), {}, {}, "").result_int(), 403);
}

TEST_F(ServiceApiTest, PathTricksDoNotSwitchAccounts) {
  CreateTable("acct2", kKey2, "secrets");
  auto put = Raw("POST", "/acct2/secrets", R"({"PartitionKey":"p","RowKey":"r","Secret":"hush"})",
                 {{"Content-Type", "application/json"}}, "acct2", kKey2);
  ASSERT_EQ(put.result_int(), 201) << put.body();
  // Each attempt is signed correctly by acct1 over the exact wire path.
  struct Case {
    const char* target;
    const char* host;
  };
  for (const Case& c :
       {Case{"/acct1/../acct2/secrets()", "127.0.0.1:10002"}, Case{"/acct1/%2E%2E/acct2/secrets()", "127.0.0.1:10002"},
        Case{"/acct1%2F..%2Facct2/secrets()", "127.0.0.1:10002"}, Case{"//acct2/secrets()", "127.0.0.1:10002"},
        Case{"/acct1//acct2/secrets()", "127.0.0.1:10002"}, Case{"/acct1/acct2%2Fsecrets()", "127.0.0.1:10002"},
        Case{"/acct2/secrets()", "acct1.table.localhost.test:10002"},
        Case{"/secrets()", "acct2.table.localhost.test:10002"}}) {
    auto r = Raw("GET", c.target, {}, {}, "acct1", kKey1, c.host);
    EXPECT_NE(r.result_int(), 200) << c.target << " host " << c.host << ": " << r.body();
    EXPECT_EQ(r.body().find("hush"), std::string::npos) << c.target;
  }
  // A percent-encoded account segment is still that same account, and needs its key.
  EXPECT_EQ(Raw("GET", "/acct%32/secrets()", {}, {}, "acct1", kKey1).result_int(), 403);
  EXPECT_EQ(Raw("GET", "/acct%32/secrets()", {}, {}, "acct2", kKey2).result_int(), 200);
  // Host-style with the right key works; with the other account's key it does not.
  EXPECT_EQ(Raw("GET", "/secrets()", {}, {}, "acct2", kKey2, "acct2.table.localhost.test:10002").result_int(), 200);
}

// ---- CORS matching (pure) ----------------------------------------------------------------------

TEST(CorsMatchTest, RulesInOrderWithWildcards) {
  protocol::xml::CorsRule exact{"http://a.example, https://B.example", "GET,PUT", "x-ms-meta-*, content-type", "", 60};
  protocol::xml::CorsRule any{"*", "GET", "", "", 1};
  std::vector<protocol::xml::CorsRule> rules{exact, any};
  EXPECT_EQ(SplitCorsList(" a, ,b ,"), (std::vector<std::string>{"a", "b"}));
  // Origins match exactly and case-sensitively (CorsRule.allowedOrigins in the storage SDKs'
  // reference; issue 36).
  EXPECT_EQ(MatchOrigin(exact, "https://B.example"), OriginMatch::kExplicit);
  EXPECT_EQ(MatchOrigin(exact, "https://b.example"), OriginMatch::kNone);
  EXPECT_EQ(MatchOrigin(exact, "HTTP://a.example"), OriginMatch::kNone);
  EXPECT_EQ(MatchOrigin(exact, "http://c.example"), OriginMatch::kNone);
  EXPECT_EQ(MatchOrigin(any, "http://c.example"), OriginMatch::kWildcard);
  EXPECT_TRUE(MatchMethod(exact, "put"));
  EXPECT_FALSE(MatchMethod(exact, "DELETE"));
  EXPECT_TRUE(MatchRequestHeaders(exact, "X-MS-META-foo,Content-Type"));
  EXPECT_TRUE(MatchRequestHeaders(exact, ""));
  EXPECT_FALSE(MatchRequestHeaders(exact, "x-ms-meta-foo,x-other"));
  EXPECT_FALSE(MatchRequestHeaders(any, "x-other"));  // no AllowedHeaders: only header-less requests

  EXPECT_EQ(FindPreflightRule(rules, "http://a.example", "GET", "content-type").rule, &rules[0]);
  EXPECT_EQ(FindPreflightRule(rules, "http://a.example", "GET", "x-other").rule, nullptr);
  EXPECT_EQ(FindPreflightRule(rules, "http://a.example", "GET", "").rule, &rules[0]);
  EXPECT_EQ(FindRequestRule(rules, "http://q.example", "GET").rule, &rules[1]);
  EXPECT_EQ(FindRequestRule(rules, "http://q.example", "PUT").rule, nullptr);
}

}  // namespace
}  // namespace tablestone::api
