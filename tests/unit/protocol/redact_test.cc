// protocol::RedactSecrets (protocol/redact.h): every encoding of a secret
// that issue 30 item 6 found in the access log, the debug log or the trace.
#include "protocol/redact.h"

#include <gtest/gtest.h>

#include <chrono>

namespace tablestone::protocol {
namespace {

constexpr char kSig[] = "Zm9vYmFyYmF6cXV4K2Zvby9iYXI9PQ%3D%3D";

TEST(RedactTest, SigInAQueryStringInAnyCaseAndPosition) {
  EXPECT_EQ(RedactSecrets("/acct/t()?sv=2019-02-02&sig=abc%2Bdef%3D&se=2030"),
            "/acct/t()?sv=2019-02-02&sig=REDACTED&se=2030");
  EXPECT_EQ(RedactSecrets("sig=first&x=1&SIG=second"), "sig=REDACTED&x=1&SIG=REDACTED");
  EXPECT_EQ(RedactSecrets("/t?sig="), "/t?sig=REDACTED");
  EXPECT_EQ(RedactSecrets("/t?xsig=1&signature=2&sigx=3"), "/t?xsig=1&signature=2&sigx=3");
  EXPECT_EQ(RedactSecrets("no query"), "no query");
  EXPECT_EQ(RedactSecrets(""), "");
}

TEST(RedactTest, PercentEncodedNames) {
  // The service decodes parameter names, so each of these is the signature.
  for (const char* name : {"%73ig", "si%67", "%53%49%47", "%73%69%67", "S%49g", "%2573ig"}) {
    const std::string text = std::string("/acct/t()?sv=2019&") + name + "=" + kSig + "&se=2030";
    const std::string out = RedactSecrets(text);
    EXPECT_EQ(out.find("Zm9v"), std::string::npos) << name << " -> " << out;
    EXPECT_NE(out.find("&se=2030"), std::string::npos) << out;
  }
}

TEST(RedactTest, AtomBodiesWithAmpEntities) {
  const std::string atom = std::string("<link href=\"http://h/acct/t()?sv=2019&amp;sig=") + kSig +
                           "&amp;se=2030\" rel=\"next\"/>";
  const std::string out = RedactSecrets(atom);
  EXPECT_EQ(out, "<link href=\"http://h/acct/t()?sv=2019&amp;sig=REDACTED&amp;se=2030\" rel=\"next\"/>");
}

TEST(RedactTest, ASigInABatchBodyHidesNothingElseOnItsLine) {
  const std::string batch = std::string("--batch_1\r\nGET http://h/acct/t()?sig=") + kSig +
                            " HTTP/1.1\r\nAccept: application/json\r\n\r\n{\"text\":\"sig=abc keep this\"}";
  const std::string out = RedactSecrets(batch);
  EXPECT_EQ(out, "--batch_1\r\nGET http://h/acct/t()?sig=REDACTED HTTP/1.1\r\nAccept: application/json\r\n\r\n"
                 "{\"text\":\"sig=REDACTED keep this\"}");
}

TEST(RedactTest, CredentialHeaderLinesInsideBodies) {
  const std::string batch =
      "--changeset_1\r\nContent-Type: application/http\r\n\r\nPOST http://h/acct/t HTTP/1.1\r\n"
      "Authorization: SharedKey acct:c2VjcmV0\r\nproxy-authorization: Basic dXNlcjpwdw==\r\n"
      "Cookie: session=abc\r\nx-ms-copy-source-authorization: Bearer tok\r\n  authorization : x\r\n"
      "Content-Type: application/json\r\n\r\n{}";
  const std::string out = RedactSecrets(batch);
  for (const char* secret : {"c2VjcmV0", "dXNlcjpw", "session=abc", "Bearer tok", ": x"}) {
    EXPECT_EQ(out.find(secret), std::string::npos) << secret << " in " << out;
  }
  EXPECT_NE(out.find("Authorization: REDACTED\r\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Content-Type: application/json\r\n\r\n{}"), std::string::npos) << out;
}

TEST(RedactTest, TheMacEchoedByAnAuthenticationFailure) {
  const std::string body =
      "{\"odata.error\":{\"code\":\"AuthenticationFailed\",\"message\":{\"value\":\"The MAC signature found in the "
      "HTTP request 'c2VjcmV0K3NpZ25hdHVyZQ==' is not the same as any computed signature.\"}}}";
  const std::string out = RedactSecrets(body);
  EXPECT_EQ(out.find("c2VjcmV0"), std::string::npos) << out;
  EXPECT_NE(out.find("request 'REDACTED' is not the same"), std::string::npos) << out;
}

TEST(RedactTest, SecretHeadersByName) {
  for (const char* name : {"Authorization", "proxy-authorization", "COOKIE", "Set-Cookie",
                           "x-ms-copy-source-authorization"}) {
    EXPECT_TRUE(IsSecretHeader(name)) << name;
    EXPECT_EQ(RedactHeaderValue(name, "anything"), "REDACTED");
  }
  EXPECT_FALSE(IsSecretHeader("x-ms-date"));
  EXPECT_EQ(RedactHeaderValue("x-ms-copy-source", "http://h/a/t?sig=abc&x=1"), "http://h/a/t?sig=REDACTED&x=1");
  EXPECT_EQ(RedactHeaderValue("Content-Type", "application/json"), "application/json");
}

// A 4 MiB body of short lines, '=' and ':' is redacted in linear time (a
// trace line or log line must never cost a request's worth of CPU).
TEST(RedactTest, LinearInTheSizeOfTheText) {
  std::string text;
  while (text.size() < (4u << 20)) text += "a=b\nx:y\n%%%%%%%%%%%%%%%%=\n";
  text += "sig=secret";
  const auto start = std::chrono::steady_clock::now();
  const std::string out = RedactSecrets(text);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  EXPECT_TRUE(out.ends_with("sig=REDACTED"));
  EXPECT_LT(ms.count(), 1000);
}

}  // namespace
}  // namespace tablestone::protocol
