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

TEST(BearerTest, ChallengeNamesTheTenantAndTheStorageResource) {
  EXPECT_EQ(BearerChallenge("t-1"),
            "Bearer authorization_uri=https://login.microsoftonline.com/t-1/oauth2/authorize "
            "resource_id=https://storage.azure.com");
}

}  // namespace
}  // namespace tablestone::protocol::auth
