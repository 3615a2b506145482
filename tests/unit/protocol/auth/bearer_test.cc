#include "protocol/auth/bearer.h"

#include <gtest/gtest.h>

#include <string>

#include "protocol/base64.h"

namespace tablestone::protocol::auth {
namespace {

constexpr int64_t kNow = 1'800'000'000;

std::string Segment(const std::string& json) {
  std::string b = Base64Encode(json);
  while (!b.empty() && b.back() == '=') b.pop_back();
  for (char& c : b) {
    if (c == '+') c = '-';
    if (c == '/') c = '_';
  }
  return b;
}

std::string Token(const std::string& aud, const std::string& iss, int64_t nbf, int64_t exp) {
  return Segment(R"({"alg":"RS256","typ":"JWT"})") + "." +
         Segment(R"({"aud":")" + aud + R"(","iss":")" + iss + R"(","tid":"t-1","nbf":)" + std::to_string(nbf) +
                 R"(,"exp":)" + std::to_string(exp) + "}") +
         ".c2lnbmF0dXJl";
}

std::optional<BearerClaims> Check(const std::string& token, std::string* detail) {
  std::string tenant;
  return CheckBearerToken(token, "devstoreaccount1", kNow, detail, &tenant);
}

TEST(BearerTest, AcceptsStorageAudiencesAndEntraIssuersWithinLifetime) {
  std::string detail;
  for (const char* aud : {"https://storage.azure.com", "https://storage.azure.com/",
                          "e406a681-f3d4-42a8-90b6-c2b029497af1", "https://devstoreaccount1.table.core.windows.net"}) {
    auto claims = Check(Token(aud, "https://sts.windows.net/t-1/", kNow - 60, kNow + 3600), &detail);
    ASSERT_TRUE(claims.has_value()) << aud << ": " << detail;
    EXPECT_EQ(claims->tenant, "t-1");
  }
  EXPECT_TRUE(Check(Token("https://storage.azure.com", "https://login.microsoftonline.com/t-1/v2.0", kNow + 200,
                          kNow - 200),
                    &detail)
                  .has_value())
      << "five minutes of skew on both ends: " << detail;
}

TEST(BearerTest, RefusesWrongAudienceIssuerLifetimeAndShape) {
  std::string detail;
  EXPECT_FALSE(Check(Token("https://vault.azure.net", "https://sts.windows.net/t/", kNow, kNow + 60), &detail));
  EXPECT_NE(detail.find("Audience"), std::string::npos);
  EXPECT_FALSE(Check(Token("https://other.table.core.windows.net", "https://sts.windows.net/t/", kNow, kNow + 60),
                     &detail));
  EXPECT_FALSE(Check(Token("https://storage.azure.com", "https://evil.example/t/", kNow, kNow + 60), &detail));
  EXPECT_NE(detail.find("Issuer"), std::string::npos);
  EXPECT_FALSE(Check(Token("https://storage.azure.com", "https://sts.windows.net/t/", kNow - 7200, kNow - 301),
                     &detail));
  EXPECT_NE(detail.find("expired"), std::string::npos);
  EXPECT_FALSE(Check(Token("https://storage.azure.com", "https://sts.windows.net/t/", kNow + 301, kNow + 7200),
                     &detail));
  EXPECT_NE(detail.find("not yet valid"), std::string::npos);
  for (const char* bad : {"", "abc", "a.b", "a.b.c.d", "!!.??.x"}) {
    EXPECT_FALSE(Check(bad, &detail)) << bad;
  }
  EXPECT_FALSE(Check(Segment("{}") + "." + Segment(R"({"aud":"https://storage.azure.com"})") + ".x", &detail));
}

// Issue 36: the detail names the failed check in the service's AuthenticationErrorDetail words.
TEST(BearerTest, DetailNamesTheFailedCheck) {
  std::string detail;
  Check(Token("https://vault.azure.net", "https://sts.windows.net/t/", kNow, kNow + 60), &detail);
  EXPECT_EQ(detail, "Audience validation failed. Audience did not match.");
  Check(Token("https://storage.azure.com", "https://evil.example/t/", kNow, kNow + 60), &detail);
  EXPECT_EQ(detail, "Issuer validation failed. Issuer did not match.");
  Check(Token("https://storage.azure.com", "https://sts.windows.net/t/", kNow - 7200, kNow - 301), &detail);
  EXPECT_EQ(detail, "Lifetime validation failed. The token is expired.");
  Check(Token("https://storage.azure.com", "https://sts.windows.net/t/", kNow + 301, kNow + 7200), &detail);
  EXPECT_EQ(detail, "Lifetime validation failed. The token is not yet valid.");
  for (const char* bad : {"abc", "a.b.c", "a.b.c.d"}) {
    Check(bad, &detail);
    EXPECT_EQ(detail, "Signature validation failed. The token is not a well-formed JWT.") << bad;
  }
}

// Issue 36, --loose: the sovereign clouds' table endpoints of the account, as Azurite accepts them
// (VALID_TABLE_AUDIENCES in Azurite's src/table/utils/constants.ts); only when asked for.
TEST(BearerTest, SovereignAudiencesOnlyWhenAsked) {
  std::string detail, tenant;
  for (const char* aud : {"https://devstoreaccount1.table.core.chinacloudapi.cn",
                          "https://devstoreaccount1.table.core.usgovcloudapi.net/",
                          "https://devstoreaccount1.table.core.cloudapi.de"}) {
    const std::string token = Token(aud, "https://sts.windows.net/t/", kNow, kNow + 60);
    EXPECT_FALSE(CheckBearerToken(token, "devstoreaccount1", kNow, &detail, &tenant)) << aud;
    EXPECT_EQ(detail, "Audience validation failed. Audience did not match.");
    auto claims = CheckBearerToken(token, "devstoreaccount1", kNow, &detail, &tenant, /*sovereign_audiences=*/true);
    ASSERT_TRUE(claims.has_value()) << aud << ": " << detail;
    EXPECT_TRUE(claims->sovereign_audience);
  }
  auto public_cloud = CheckBearerToken(Token("https://devstoreaccount1.table.core.windows.net",
                                             "https://sts.windows.net/t/", kNow, kNow + 60),
                                       "devstoreaccount1", kNow, &detail, &tenant, true);
  ASSERT_TRUE(public_cloud.has_value());
  EXPECT_FALSE(public_cloud->sovereign_audience);
  // Another account's endpoint, another service, or a look-alike suffix: never.
  for (const char* aud : {"https://other.table.core.chinacloudapi.cn", "https://devstoreaccount1.blob.core.cloudapi.de",
                          "https://devstoreaccount1.table.core.cloudapi.de.evil.example",
                          "https://devstoreaccount1.table.core.", "https://devstoreaccount1.table.core.example"}) {
    EXPECT_FALSE(CheckBearerToken(Token(aud, "https://sts.windows.net/t/", kNow, kNow + 60), "devstoreaccount1",
                                  kNow, &detail, &tenant, true))
        << aud;
  }
}

TEST(BearerTest, ChallengeNamesTheTenantAndTheStorageResource) {
  EXPECT_EQ(BearerChallenge("t-1"),
            "Bearer authorization_uri=https://login.microsoftonline.com/t-1/oauth2/authorize "
            "resource_id=https://storage.azure.com");
}

}  // namespace
}  // namespace tablestone::protocol::auth
