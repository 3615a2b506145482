#include "tools/connection_string.h"

#include <gtest/gtest.h>

namespace tablestone::tools {
namespace {

Connection Parse(std::string_view text) {
  Connection c;
  std::string error;
  EXPECT_TRUE(ParseConnectionString(text, &c, &error)) << error;
  return c;
}

std::string Error(std::string_view text) {
  Connection c;
  std::string error;
  EXPECT_FALSE(ParseConnectionString(text, &c, &error)) << text;
  return error;
}

TEST(ConnectionStringTest, DevelopmentStorage) {
  Connection c = Parse("UseDevelopmentStorage=true");
  EXPECT_EQ(c.scheme, "http");
  EXPECT_EQ(c.host, "127.0.0.1");
  EXPECT_EQ(c.port, "10002");
  EXPECT_EQ(c.base_path, "/devstoreaccount1");
  EXPECT_EQ(c.account, "devstoreaccount1");
  EXPECT_EQ(c.key.size(), 64u);  // the well-known key, decoded
  EXPECT_TRUE(c.sas.empty());
}

TEST(ConnectionStringTest, PathStyleWithKey) {
  Connection c = Parse(
      "DefaultEndpointsProtocol=http;AccountName=acct;AccountKey=a2V5;"
      "TableEndpoint=http://localhost:1234/acct/;");
  EXPECT_EQ(c.host, "localhost");
  EXPECT_EQ(c.port, "1234");
  EXPECT_EQ(c.base_path, "/acct");
  EXPECT_EQ(c.account, "acct");
  EXPECT_EQ(c.key, "key");
}

TEST(ConnectionStringTest, HostStyleTakesTheAccountFromTheHost) {
  Connection c = Parse("TableEndpoint=http://myacct.table.localhost:8080;AccountKey=a2V5");
  EXPECT_EQ(c.base_path, "");
  EXPECT_EQ(c.account, "myacct");
  Connection s = Parse("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=a2V5;EndpointSuffix=core.windows.net");
  EXPECT_EQ(s.scheme, "https");
  EXPECT_EQ(s.host, "x.table.core.windows.net");
  EXPECT_EQ(s.port, "443");
}

TEST(ConnectionStringTest, SasInConnectionStringOrUrl) {
  Connection c = Parse("TableEndpoint=http://127.0.0.1:9/devstoreaccount1;SharedAccessSignature=?sv=2019-02-02&sig=a%2Bb=");
  EXPECT_EQ(c.sas, "sv=2019-02-02&sig=a%2Bb=");  // '=' inside a value is kept
  EXPECT_TRUE(c.key.empty());
  Connection u = Parse("http://127.0.0.1:9/devstoreaccount1?sv=1&sig=x");
  EXPECT_EQ(u.account, "devstoreaccount1");
  EXPECT_EQ(u.sas, "sv=1&sig=x");
}

TEST(ConnectionStringTest, KeysAreCaseInsensitive) {
  Connection c = Parse("accountname=a;ACCOUNTKEY=a2V5;tableendpoint=http://h:1/a");
  EXPECT_EQ(c.account, "a");
}

TEST(ConnectionStringTest, Errors) {
  EXPECT_NE(Error("AccountKey=a2V5").find("no endpoint"), std::string::npos);
  EXPECT_NE(Error("TableEndpoint=ftp://x/a;AccountKey=a2V5").find("http"), std::string::npos);
  EXPECT_NE(Error("TableEndpoint=http://h:1/a").find("neither AccountKey"), std::string::npos);
  EXPECT_NE(Error("TableEndpoint=http://h:1/a;AccountKey=!!!").find("base64"), std::string::npos);
  EXPECT_NE(Error("TableEndpoint=http://127.0.0.1:1;AccountKey=a2V5").find("no account"), std::string::npos);
  EXPECT_NE(Error("junk").find("NAME=VALUE"), std::string::npos);
  EXPECT_NE(Error("TableEndpoint=http://h:x/a;AccountKey=a2V5").find("port"), std::string::npos);
}

// Issue 35 item 4: the SDKs take the scheme and host of the proxy URI and
// keep the Table service's port (a tool that ignored it reset the wrong server).
TEST(ConnectionStringTest, DevelopmentStorageProxyUri) {
  Connection c = Parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=http://ipv4.fiddler");
  EXPECT_EQ(c.scheme, "http");
  EXPECT_EQ(c.host, "ipv4.fiddler");
  EXPECT_EQ(c.port, "10002");
  EXPECT_EQ(c.base_path, "/devstoreaccount1");
  EXPECT_EQ(c.account, "devstoreaccount1");
  EXPECT_EQ(DescribeEndpoint(c), "http://ipv4.fiddler:10002/devstoreaccount1");
  Connection s = Parse("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=https://[::1]:8888/x");
  EXPECT_EQ(s.scheme, "https");
  EXPECT_EQ(s.host, "::1");
  EXPECT_EQ(s.port, "10002");
  EXPECT_EQ(DescribeEndpoint(s), "https://[::1]:10002/devstoreaccount1");
  EXPECT_NE(Error("UseDevelopmentStorage=true;DevelopmentStorageProxyUri=ftp://x").find("DevelopmentStorageProxyUri"),
            std::string::npos);
  EXPECT_EQ(DescribeEndpoint(Parse("UseDevelopmentStorage=true")), "http://127.0.0.1:10002/devstoreaccount1");
}

TEST(ConnectionStringTest, DescribeEndpointNamesAHostStyleAccount) {
  Connection c = Parse("AccountName=x;AccountKey=a2V5");  // the portal's form: https by default
  EXPECT_EQ(c.scheme, "https");
  EXPECT_EQ(DescribeEndpoint(c), "https://x.table.core.windows.net:443 (account x)");
}

// Issue 35 rough edge: an emulator endpoint without the account segment drew
// 400 InvalidUri from the server with no hint.
TEST(ConnectionStringTest, IpEndpointWithoutAccountSegmentIsRefusedWithTheFix) {
  std::string e = Error("AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002");
  EXPECT_NE(e.find("no account segment"), std::string::npos) << e;
  EXPECT_NE(e.find("http://127.0.0.1:10002/devstoreaccount1"), std::string::npos) << e;
  e = Error("AccountName=a;AccountKey=a2V5;TableEndpoint=http://localhost:1/");
  EXPECT_NE(e.find("http://localhost:1/a"), std::string::npos) << e;
  // Host-style names keep working.
  EXPECT_EQ(Parse("AccountName=a;AccountKey=a2V5;TableEndpoint=http://a.table.localhost:1").account, "a");
}

// Issue 38: the Cosmos DB emulator's connection string (and tablestone's
// --cosmosPort listener's) has no account segment; the tools accept it.
TEST(ConnectionStringTest, CosmosEmulatorShapeIsAccepted) {
  Connection c = Parse(
      "DefaultEndpointsProtocol=http;AccountName=localhost;AccountKey=a2V5;TableEndpoint=http://localhost:8902/;");
  EXPECT_EQ(c.host, "localhost");
  EXPECT_EQ(c.port, "8902");
  EXPECT_EQ(c.base_path, "");
  EXPECT_EQ(c.account, "localhost");
  EXPECT_EQ(DescribeEndpoint(c), "http://localhost:8902 (account localhost)");
  // Any other account on a bare localhost endpoint is still the path-style mistake.
  EXPECT_NE(Error("AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://localhost:8902/").find(
                "no account segment"),
            std::string::npos);
}

// Issue 35: AccountName and the path's account segment disagreeing drew a
// 403 from the server; it is refused before sending, naming both.
TEST(ConnectionStringTest, AccountNameDifferentFromThePathSegmentIsRefused) {
  std::string e = Error("AccountName=other;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1");
  EXPECT_NE(e.find("AccountName other differs"), std::string::npos) << e;
  EXPECT_NE(e.find("'devstoreaccount1'"), std::string::npos) << e;
  EXPECT_EQ(e.find("a2V5"), std::string::npos) << e;  // never the key
  // Same account in another case, or its -secondary endpoint, is fine; so is a host-style endpoint.
  EXPECT_EQ(Parse("AccountName=DevStoreAccount1;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:1/devstoreaccount1")
                .base_path,
            "/devstoreaccount1");
  EXPECT_EQ(Parse("AccountName=a;AccountKey=a2V5;TableEndpoint=http://[::1]:1/a-secondary").account, "a");
  EXPECT_EQ(Parse("AccountName=a;AccountKey=a2V5;TableEndpoint=http://a.table.localhost:1/x").account, "a");
}

// Issue 30 item 10: a malformed connection string echoed 40 characters of a
// part, which is the key when "AccountKey=" was mistyped.
TEST(ConnectionStringTest, MalformedNeverEchoesTheKey) {
  const std::string key(kDevKey);
  for (std::string text : {"AccountName=a;AccountKey " + key, "AccountName=a;" + key, key,
                           "TableEndpoint=http://h:1/a;AccountKey=" + key + ";" + key.substr(0, 20),
                           "AccountName=a;AccountKey=" + key.substr(0, 30) + "!!;TableEndpoint=http://h:1/a"}) {
    Connection c;
    std::string error;
    EXPECT_FALSE(ParseConnectionString(text, &c, &error)) << text;
    for (size_t i = 0; i + 6 <= key.size(); ++i) {
      ASSERT_EQ(error.find(key.substr(i, 6)), std::string::npos) << error;
    }
  }
}

// `tablestone health --url`: an address alone, no account or credential.
TEST(ConnectionStringTest, EndpointUrlAlone) {
  Connection c;
  std::string error;
  ASSERT_TRUE(ParseEndpointUrl(" https://[::1]:10443/ ", &c, &error)) << error;
  EXPECT_EQ(c.scheme, "https");
  EXPECT_EQ(c.host, "::1");
  EXPECT_EQ(c.port, "10443");
  EXPECT_EQ(c.base_path, "");
  EXPECT_TRUE(c.account.empty() && c.key.empty() && c.sas.empty());
  ASSERT_TRUE(ParseEndpointUrl("http://localhost", &c, &error)) << error;
  EXPECT_EQ(c.port, "80");
  for (const char* bad : {"ftp://h:1", "127.0.0.1:10002", "http://:1", "http://h:port", ""}) {
    EXPECT_FALSE(ParseEndpointUrl(bad, &c, &error)) << bad;
    EXPECT_FALSE(error.empty()) << bad;
  }
  // An empty host before the port was taken (the request then went to no host at all).
  EXPECT_FALSE(ParseConnectionString("AccountName=a;AccountKey=" + std::string(kDevKey) + ";TableEndpoint=http://:1/a",
                                     &c, &error));
  EXPECT_NE(error.find("has no host"), std::string::npos) << error;
}

}  // namespace
}  // namespace tablestone::tools
