#include "tools/connection_string.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "protocol/base64.h"
#include "protocol/url.h"

namespace tablestone::tools {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// "scheme://host[:port][/path]" -> parts; false when malformed.
bool ParseUrl(std::string_view url, Connection* out, std::string* path, std::string* error) {
  size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    *error = "endpoint '" + std::string(url) + "' is not an http:// or https:// URL";
    return false;
  }
  out->scheme = Lower(url.substr(0, sep));
  if (out->scheme != "http" && out->scheme != "https") {
    *error = "endpoint '" + std::string(url) + "' is not an http:// or https:// URL";
    return false;
  }
  std::string_view rest = url.substr(sep + 3);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  *path = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  while (!path->empty() && path->back() == '/') path->pop_back();
  if (authority.empty()) {
    *error = "endpoint '" + std::string(url) + "' has no host";
    return false;
  }
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    out->host = std::string(authority.substr(0, colon));
    out->port = std::string(authority.substr(colon + 1));
  } else {
    out->host = std::string(authority);
    out->port = out->scheme == "https" ? "443" : "80";
  }
  if (out->host.size() > 2 && out->host.front() == '[' && out->host.back() == ']') {
    out->host = out->host.substr(1, out->host.size() - 2);
  }
  if (out->host.empty() || out->host == "[]") {  // "http://:10002"
    *error = "endpoint '" + std::string(url) + "' has no host";
    return false;
  }
  if (out->port.empty() || !std::all_of(out->port.begin(), out->port.end(), ::isdigit)) {
    *error = "endpoint '" + std::string(url) + "' has a bad port";
    return false;
  }
  return true;
}

bool IsIpLiteralOrLocalhost(std::string_view host) {
  if (host == "localhost" || host.find(':') != std::string_view::npos) return true;
  return std::all_of(host.begin(), host.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}

}  // namespace

bool ParseConnectionString(std::string_view text, Connection* out, std::string* error) {
  *out = Connection{};
  text = Trim(text);
  std::map<std::string, std::string> kv;
  std::string endpoint;
  if (text.starts_with("http://") || text.starts_with("https://")) {
    size_t q = text.find('?');
    endpoint = std::string(text.substr(0, q));
    if (q != std::string_view::npos) kv["sharedaccesssignature"] = std::string(text.substr(q + 1));
  } else {
    size_t pos = 0;
    int index = 0;
    while (pos <= text.size()) {
      size_t end = text.find(';', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view part = Trim(text.substr(pos, end - pos));
      pos = end + 1;
      if (part.empty()) continue;
      ++index;
      size_t eq = part.find('=');
      if (eq == std::string_view::npos) {
        // Never quoted: a key pasted without "AccountKey=" would be echoed.
        *error = "connection string part " + std::to_string(index) + " (" + std::to_string(part.size()) +
                 " characters) is not NAME=VALUE";
        return false;
      }
      kv[Lower(Trim(part.substr(0, eq)))] = std::string(Trim(part.substr(eq + 1)));
    }
    if (auto it = kv.find("usedevelopmentstorage"); it != kv.end() && Lower(it->second) == "true") {
      // DevelopmentStorageProxyUri replaces the emulator's scheme and host;
      // the port stays the Table service's 10002, as the Azure SDKs build it
      // (Learn: storage-configure-connection-string, "Connect to the
      // emulator account using the shortcut").
      std::string dev_endpoint = "http://127.0.0.1:10002/devstoreaccount1";
      if (auto proxy = kv.find("developmentstorageproxyuri"); proxy != kv.end() && !proxy->second.empty()) {
        Connection p;
        std::string ignored_path;
        if (!ParseUrl(proxy->second, &p, &ignored_path, error)) {
          *error = "DevelopmentStorageProxyUri: " + *error;
          return false;
        }
        std::string host = p.host.find(':') != std::string::npos ? "[" + p.host + "]" : p.host;
        dev_endpoint = p.scheme + "://" + host + ":10002/devstoreaccount1";
      }
      kv.try_emplace("tableendpoint", dev_endpoint);
      kv.try_emplace("accountname", std::string(kDevAccount));
      kv.try_emplace("accountkey", std::string(kDevKey));
    }
    if (auto it = kv.find("tableendpoint"); it != kv.end()) {
      endpoint = it->second;
    } else if (kv.count("accountname") != 0 && kv.count("endpointsuffix") != 0) {
      std::string scheme = kv.count("defaultendpointsprotocol") ? Lower(kv["defaultendpointsprotocol"]) : "https";
      endpoint = scheme + "://" + kv["accountname"] + ".table." + kv["endpointsuffix"];
    } else if (kv.count("accountname") != 0) {
      std::string scheme = kv.count("defaultendpointsprotocol") ? Lower(kv["defaultendpointsprotocol"]) : "https";
      endpoint = scheme + "://" + kv["accountname"] + ".table.core.windows.net";
    } else {
      *error = "connection string names no endpoint (TableEndpoint, AccountName or UseDevelopmentStorage=true)";
      return false;
    }
  }
  std::string path;
  if (!ParseUrl(endpoint, out, &path, error)) return false;
  out->base_path = path;
  if (auto it = kv.find("accountname"); it != kv.end() && !it->second.empty()) {
    out->account = it->second;
  } else if (!path.empty()) {
    size_t next = path.find('/', 1);
    out->account = path.substr(1, next == std::string::npos ? std::string::npos : next - 1);
  } else if (!IsIpLiteralOrLocalhost(out->host)) {
    out->account = out->host.substr(0, out->host.find('.'));
  }
  if (out->account.empty()) {
    *error = "connection string names no account (AccountName, or the endpoint's first path segment)";
    return false;
  }
  if (out->base_path.empty() && IsIpLiteralOrLocalhost(out->host) && out->account != kCosmosEmulatorAccount) {
    // An IP address or localhost cannot carry the account in the host name,
    // so the service (and tablestone, Azurite) answer 400 InvalidUri to every
    // request: say so before sending one. The Cosmos DB emulator's account is
    // the exception: its endpoint has no account segment.
    Connection fixed = *out;
    fixed.base_path = "/" + out->account;
    *error = "TableEndpoint " + endpoint + " has no account segment: on an IP address or localhost the endpoint "
             "is path-style, " + DescribeEndpoint(fixed);
    return false;
  }
  if (IsIpLiteralOrLocalhost(out->host) && !out->base_path.empty() && kv.count("accountname") != 0) {
    // Path-style: the server takes the account from the path, the signature
    // is made for AccountName; when they differ every request is 403. Said
    // before sending one (a "-secondary" segment is the same account).
    const size_t next = out->base_path.find('/', 1);
    const std::string segment = out->base_path.substr(1, next == std::string::npos ? std::string::npos : next - 1);
    if (Lower(segment) != Lower(out->account) && Lower(segment) != Lower(out->account) + "-secondary") {
      *error = "AccountName " + out->account + " differs from the account in TableEndpoint " + endpoint +
               " ('" + segment + "'): the server would refuse every request (403); use the same account in both";
      return false;
    }
  }
  if (auto it = kv.find("sharedaccesssignature"); it != kv.end() && !it->second.empty()) {
    out->sas = it->second;
    if (!out->sas.empty() && out->sas.front() == '?') out->sas.erase(0, 1);
  } else if (auto key = kv.find("accountkey"); key != kv.end() && !key->second.empty()) {
    auto decoded = protocol::Base64Decode(key->second);
    if (!decoded || decoded->empty()) {
      *error = "AccountKey is not valid base64";
      return false;
    }
    out->key = std::move(*decoded);
  } else {
    *error = "connection string has neither AccountKey nor SharedAccessSignature";
    return false;
  }
  return true;
}

bool ParseEndpointUrl(std::string_view url, Connection* out, std::string* error) {
  std::string path;
  Connection c;
  if (!ParseUrl(Trim(url), &c, &path, error)) return false;
  c.base_path = path;
  *out = std::move(c);
  return true;
}

std::string UrlEncode(std::string_view text) { return protocol::PercentEncode(text); }

std::string DescribeEndpoint(const Connection& c) {
  std::string host = c.host.find(':') != std::string::npos ? "[" + c.host + "]" : c.host;
  std::string out = c.scheme + "://" + host + ":" + c.port + c.base_path;
  if (c.base_path.empty()) out += " (account " + c.account + ")";
  return out;
}

}  // namespace tablestone::tools
