// Connection strings as the Azure SDKs accept them, reduced to what a Table
// client needs. Pure; thread-safe.
//
// Accepted forms (keys case-insensitive, ';'-separated, values may contain '='):
//   UseDevelopmentStorage=true                        -> http://127.0.0.1:10002/devstoreaccount1
//   UseDevelopmentStorage=true;DevelopmentStorageProxyUri=https://h  -> https://h:10002/devstoreaccount1
//   AccountName=a;AccountKey=k;TableEndpoint=URL      (path-style URL "http://h:p/a" or host-style "http://a.h:p")
//   AccountName=localhost;AccountKey=k;TableEndpoint=http://localhost:8902/  (the Cosmos DB emulator's shape)
//   DefaultEndpointsProtocol=http;AccountName=a;AccountKey=k;EndpointSuffix=s  -> http://a.table.s
//   TableEndpoint=URL;SharedAccessSignature=sv=...    (SAS instead of a key)
//   a bare URL "http://h:p/a[?sas]" (a SAS URL)
#pragma once

#include <string>
#include <string_view>

namespace tablestone::tools {

struct Connection {
  std::string scheme;     // "http" or "https"
  std::string host;
  std::string port;       // always set ("80"/"443" by default)
  std::string base_path;  // "" (host-style) or "/account" (path-style), no trailing '/'
  std::string account;
  std::string key;        // base64-DECODED account key; empty with a SAS
  std::string sas;        // query string without '?', empty with a key
};

// The emulator's well-known account and key (Learn: azurite, "Connection strings").
inline constexpr std::string_view kDevAccount = "devstoreaccount1";
inline constexpr std::string_view kDevKey =
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

// The Cosmos DB emulator's account. Its Table endpoint (and tablestone's
// --cosmosPort listener) carries no account segment: TableEndpoint=
// http://localhost:8902/ with AccountName=localhost (docs/cosmos-mode.md).
inline constexpr std::string_view kCosmosEmulatorAccount = "localhost";

// False with a reason naming the missing or malformed part (never the key).
bool ParseConnectionString(std::string_view text, Connection* out, std::string* error);

// "http[s]://host[:port][/path]" alone (no account, no credential): scheme,
// host, port and base_path of *out. False with a reason when malformed.
bool ParseEndpointUrl(std::string_view url, Connection* out, std::string* error);

// Percent-encodes a query parameter value (RFC 3986 unreserved kept).
std::string UrlEncode(std::string_view text);

// "http://127.0.0.1:10002/devstoreaccount1" (path-style) or
// "https://a.table.core.windows.net:443 (account a)": for messages. Never
// holds a secret.
std::string DescribeEndpoint(const Connection& connection);

}  // namespace tablestone::tools
