// Golden vectors: every expected signature below was produced by a real SDK
// (azure-data-tables 12.4.2 for Python, @azure/data-tables 13.1.2 for JS)
// signing a request to a local listener; the inputs are that request's
// method, headers and path as captured.
#include "protocol/auth/shared_key.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "protocol/auth/hmac.h"
#include "protocol/base64.h"

namespace tablestone::protocol::auth {
namespace {

const std::string& DevKey() {
  static const std::string key = *Base64Decode(
      "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==");
  return key;
}

std::string SignSharedKey(std::string_view verb, std::string_view content_type, std::string_view date,
                          std::string_view path, std::optional<std::string_view> comp) {
  return SignBase64(DevKey(), SharedKeyStringToSign(verb, "", content_type, date,
                                                    CanonicalizedResource("devstoreaccount1", path, comp)));
}

std::string SignLite(std::string_view date, std::string_view path, std::optional<std::string_view> comp) {
  return SignBase64(DevKey(),
                    SharedKeyLiteStringToSign(date, CanonicalizedResource("devstoreaccount1", path, comp)));
}

TEST(SharedKeyTest, ParsesAuthorizationHeader) {
  auto a = ParseSharedKeyAuthorization("SharedKey devstoreaccount1:jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE=");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->scheme, SharedKeyScheme::kSharedKey);
  EXPECT_EQ(a->account, "devstoreaccount1");
  EXPECT_EQ(a->signature, "jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE=");
  auto lite = ParseSharedKeyAuthorization("  SharedKeyLite   acct:sig==  ");
  ASSERT_TRUE(lite.has_value());
  EXPECT_EQ(lite->scheme, SharedKeyScheme::kSharedKeyLite);
  EXPECT_EQ(lite->account, "acct");
  EXPECT_EQ(lite->signature, "sig==");

  EXPECT_FALSE(ParseSharedKeyAuthorization("").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("SharedKey").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("SharedKey acct").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("SharedKey :sig").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("SharedKey acct:").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("SharedKey a:b:c").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("sharedkey acct:sig").has_value());
  EXPECT_FALSE(ParseSharedKeyAuthorization("Bearer eyJ0eXAi").has_value());
  EXPECT_EQ(AuthorizationScheme(" Bearer eyJ0eXAi"), "Bearer");
  EXPECT_EQ(AuthorizationScheme("SharedKey a:b"), "SharedKey");
}

TEST(SharedKeyTest, CanonicalizedResource) {
  EXPECT_EQ(CanonicalizedResource("acct", "/mytable(PartitionKey='p',RowKey='r')", std::nullopt),
            "/acct/mytable(PartitionKey='p',RowKey='r')");
  EXPECT_EQ(CanonicalizedResource("acct", "/", "properties"), "/acct/?comp=properties");
  EXPECT_EQ(CanonicalizedResource("acct", "", "properties"), "/acct/?comp=properties");
  EXPECT_EQ(CanonicalizedResource("devstoreaccount1", "/devstoreaccount1/Tables", std::nullopt),
            "/devstoreaccount1/devstoreaccount1/Tables");
  EXPECT_EQ(SharedKeyStringToSign("GET", "md5", "ct", "date", "/r"), "GET\nmd5\nct\ndate\n/r");
  EXPECT_EQ(SharedKeyLiteStringToSign("date", "/r"), "date\n/r");
}

TEST(SharedKeyTest, PythonSharedKeyGoldenVectors) {
  // $batch (Content-Type with boundary is part of the string to sign).
  EXPECT_EQ(SignSharedKey("POST", "multipart/mixed; boundary=batch_70227991-ce88-4ef7-be5a-5b9917e3b2f8",
                          "Sat, 21 Nov 2026 10:59:00 GMT", "/devstoreaccount1/$batch", std::nullopt),
            "jiwSyz2WulJhku2nO0v270v6fbLZ7pyyvc6IKItDuHE=");
  // Point GET with percent-encoded keys: Python signs the path exactly as sent.
  EXPECT_EQ(SignSharedKey("GET", "", "Sat, 21 Nov 2026 11:01:56 GMT",
                          "/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r%27%27k%C3%A9%2Fx')", std::nullopt),
            "aQFI7XIZhcGc52VahByJ7hWsprjZnr/5IIniaCa1kkg=");
  // Set Table ACL: ?comp=acl is part of the resource.
  EXPECT_EQ(SignSharedKey("PUT", "application/xml", "Sat, 21 Nov 2026 11:01:56 GMT", "/devstoreaccount1/MyTable",
                          "acl"),
            "ObJfcYJJO1Iv8I70KuV/zgZ2+PLIUckTvp23qbTepgs=");
  // Set service properties: restype is not, comp is.
  EXPECT_EQ(SignSharedKey("PUT", "application/xml", "Sat, 21 Nov 2026 11:01:57 GMT", "/devstoreaccount1/",
                          "properties"),
            "v4hmEVmVGvjQb1B+WGx/bzT7Iy/Gbm+nOAtzh0JmNe8=");
  // get_service_stats: Python sends GET /devstoreaccount1-secondary/devstoreaccount1/
  // but signs the primary path /devstoreaccount1/ (its secondary-host policy
  // rewrites the URL after signing); CandidatePaths must offer that path.
  EXPECT_EQ(SignSharedKey("GET", "", "Sat, 21 Nov 2026 11:01:56 GMT", "/devstoreaccount1/", "stats"),
            "lqFNf47ImONMbsmJDSZtRtz9czeU5awRw7Wywnkxl1s=");
  auto paths = CandidatePaths("/devstoreaccount1-secondary/devstoreaccount1/", "devstoreaccount1");
  EXPECT_NE(std::find(paths.begin(), paths.end(), "/devstoreaccount1/"), paths.end());
  EXPECT_EQ(SignSharedKey("POST", "application/json;odata=nometadata", "Sat, 21 Nov 2026 11:01:57 GMT",
                          "/devstoreaccount1/MyTable", std::nullopt),
            "Oy6fcgTY5HzB5Gfb2fSxtrRjM32tIPj0UrmJrSkAhwg=");
}

TEST(SharedKeyTest, JsSharedKeyLiteGoldenVectors) {
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 10:59:07 GMT", "/devstoreaccount1/$batch", std::nullopt),
            "gCrbFqqOHltk71YGay+2SVDNqWM+6E3juYtnbBhWkTo=");
  // JS leaves the doubled quote raw where Python percent-encodes it.
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 11:02:03 GMT",
                     "/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r''k%C3%A9%2Fx')", std::nullopt),
            "/sC92dvtcJQToNqfjaycqm7SarYcY2nPg6R9xlcx7Bo=");
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 11:02:03 GMT", "/devstoreaccount1/MyTable", "acl"),
            "iVPNgY8OXuqYz8EmXjSP71bTf52i9iwpsJ1opQZuIpM=");
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 11:02:03 GMT", "/devstoreaccount1/", "properties"),
            "KN/vbVZEnx3YqQ6CjycpD0NTKJ1HUah6PCA0vM9A3gI=");
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 11:02:03 GMT", "/devstoreaccount1/", "stats"),
            "jJk6SxcPe6J3OjmouHrh1uMboUOqm7VAHhuG4MxGu8E=");
  EXPECT_EQ(SignLite("Sat, 21 Nov 2026 11:02:03 GMT", "/devstoreaccount1/MyTable", std::nullopt),
            "7FoYD6jhatHFSEpOPPCTChYYgA5zKQ9Ph2xGCQ8Ur4M=");
}

bool Contains(const std::vector<std::string>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(SharedKeyTest, CandidatePathsCoverClientEncodings) {
  // A server that received the JS form must also be able to accept a client
  // that signed the Python (fully encoded) form and vice versa.
  auto c = CandidatePaths("/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r%27%27k%C3%A9%2Fx')");
  EXPECT_EQ(c.front(), "/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r%27%27k%C3%A9%2Fx')");
  EXPECT_TRUE(Contains(c, "/devstoreaccount1/MyTable(PartitionKey='p k',RowKey='r''k\xC3\xA9/x')"));
  EXPECT_TRUE(Contains(c, "/devstoreaccount1/MyTable(PartitionKey='p%20k',RowKey='r''k%C3%A9/x')"));
  EXPECT_LE(c.size(), 4u);

  auto same = CandidatePaths("/devstoreaccount1/$batch");
  EXPECT_EQ(same, std::vector<std::string>{"/devstoreaccount1/$batch"});

  // Bad escapes survive decoding unchanged.
  EXPECT_EQ(PercentDecodePath("/a%2"), "/a%2");
  EXPECT_EQ(PercentDecodePath("/a%zz%41"), "/a%zzA");
  EXPECT_EQ(PercentDecodePath("%"), "%");
}

TEST(SharedKeyTest, SecondaryVariants) {
  auto c = CandidatePaths("/devstoreaccount1-secondary/", "devstoreaccount1");
  EXPECT_TRUE(Contains(c, "/devstoreaccount1-secondary/"));
  EXPECT_TRUE(Contains(c, "/devstoreaccount1/"));
  EXPECT_TRUE(Contains(c, "/"));
  c = CandidatePaths("/devstoreaccount1-secondary/Tables", "devstoreaccount1");
  EXPECT_EQ(c, (std::vector<std::string>{"/devstoreaccount1-secondary/Tables", "/devstoreaccount1/Tables", "/Tables"}));
  c = CandidatePaths("/devstoreaccount1-secondary", "devstoreaccount1");
  EXPECT_TRUE(Contains(c, "/devstoreaccount1"));
  // Only the first segment, and only an exact "-secondary" segment.
  c = CandidatePaths("/devstoreaccount1-secondaryx/t", "devstoreaccount1");
  EXPECT_EQ(c, std::vector<std::string>{"/devstoreaccount1-secondaryx/t"});
  c = CandidatePaths("/t/devstoreaccount1-secondary", "devstoreaccount1");
  EXPECT_EQ(c.size(), 1u);
}

}  // namespace
}  // namespace tablestone::protocol::auth
