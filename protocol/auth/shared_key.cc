#include "protocol/auth/shared_key.h"

#include <algorithm>

namespace tablestone::protocol::auth {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendEscaped(std::string* out, unsigned char c) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out->push_back('%');
  out->push_back(kHex[c >> 4]);
  out->push_back(kHex[c & 15]);
}

bool IsAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// WHATWG "path percent-encode set": C0 controls, space, '"', '#', '<', '>',
// '?', '`', '{', '}', DEL and every non-ASCII byte. This is what JS's
// new URL(...).pathname yields for a decoded path.
std::string EncodeWhatwgPath(std::string_view decoded) {
  std::string out;
  out.reserve(decoded.size());
  for (unsigned char c : decoded) {
    bool escape = c <= 0x20 || c >= 0x7f || c == '"' || c == '#' || c == '<' || c == '>' || c == '?' ||
                  c == '`' || c == '{' || c == '}';
    if (escape) {
      AppendEscaped(&out, c);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

// encodeURIComponent's unreserved set (A-Z a-z 0-9 - _ . ! ~ * ' ( )) plus the
// path separator and '$' (used by "$batch"), as SDKs that build paths from
// encodeURIComponent(tableName) produce.
std::string EncodeUriComponentPath(std::string_view decoded) {
  std::string out;
  out.reserve(decoded.size());
  for (unsigned char c : decoded) {
    bool keep = IsAlnum(c) || c == '-' || c == '_' || c == '.' || c == '!' || c == '~' || c == '*' ||
                c == '\'' || c == '(' || c == ')' || c == '/' || c == '$';
    if (keep) {
      out.push_back(static_cast<char>(c));
    } else {
      AppendEscaped(&out, c);
    }
  }
  return out;
}

void AddUnique(std::vector<std::string>* v, std::string s) {
  if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(std::move(s));
}

}  // namespace

std::string_view AuthorizationScheme(std::string_view header_value) {
  header_value = Trim(header_value);
  size_t sp = header_value.find(' ');
  return sp == std::string_view::npos ? header_value : header_value.substr(0, sp);
}

std::optional<SharedKeyAuthorization> ParseSharedKeyAuthorization(std::string_view header_value) {
  header_value = Trim(header_value);
  size_t sp = header_value.find(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  std::string_view scheme = header_value.substr(0, sp);
  SharedKeyAuthorization out;
  if (scheme == "SharedKey") {
    out.scheme = SharedKeyScheme::kSharedKey;
  } else if (scheme == "SharedKeyLite") {
    out.scheme = SharedKeyScheme::kSharedKeyLite;
  } else {
    return std::nullopt;
  }
  std::string_view credential = Trim(header_value.substr(sp + 1));
  // The account name never contains ':'; the signature is base64 (no ':').
  size_t colon = credential.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == credential.size()) return std::nullopt;
  std::string_view signature = credential.substr(colon + 1);
  if (signature.find(':') != std::string_view::npos || signature.find(' ') != std::string_view::npos) {
    return std::nullopt;
  }
  out.account = std::string(credential.substr(0, colon));
  out.signature = std::string(signature);
  return out;
}

std::string CanonicalizedResource(std::string_view account, std::string_view path,
                                  std::optional<std::string_view> comp) {
  std::string out;
  out.reserve(account.size() + path.size() + 16);
  out.push_back('/');
  out.append(account);
  if (path.empty()) {
    out.push_back('/');
  } else {
    out.append(path);
  }
  if (comp.has_value()) {
    out.append("?comp=");
    out.append(*comp);
  }
  return out;
}

std::string SharedKeyStringToSign(std::string_view verb, std::string_view content_md5,
                                  std::string_view content_type, std::string_view date,
                                  std::string_view canonicalized_resource) {
  std::string out;
  out.reserve(verb.size() + content_md5.size() + content_type.size() + date.size() +
              canonicalized_resource.size() + 4);
  out.append(verb).push_back('\n');
  out.append(content_md5).push_back('\n');
  out.append(content_type).push_back('\n');
  out.append(date).push_back('\n');
  out.append(canonicalized_resource);
  return out;
}

std::string SharedKeyLiteStringToSign(std::string_view date, std::string_view canonicalized_resource) {
  std::string out(date);
  out.push_back('\n');
  out.append(canonicalized_resource);
  return out;
}

std::string PercentDecodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size()) {
      int hi = HexValue(path[i + 1]);
      int lo = HexValue(path[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(path[i]);
  }
  return out;
}

std::vector<std::string> CandidatePaths(std::string_view raw_path, std::string_view secondary_account) {
  std::vector<std::string> base;
  AddUnique(&base, std::string(raw_path));
  std::string decoded = PercentDecodePath(raw_path);
  AddUnique(&base, EncodeWhatwgPath(decoded));
  AddUnique(&base, EncodeUriComponentPath(decoded));
  AddUnique(&base, decoded);
  if (secondary_account.empty()) return base;

  std::string prefix = "/" + std::string(secondary_account) + "-secondary";
  std::vector<std::string> out = base;
  for (const std::string& p : base) {
    if (p.compare(0, prefix.size(), prefix) == 0 && (p.size() == prefix.size() || p[prefix.size()] == '/')) {
      std::string rest = p.substr(prefix.size());
      AddUnique(&out, "/" + std::string(secondary_account) + rest);
      // Python's get_service_stats on a path-style endpoint sends
      // /<acct>-secondary/<acct>/ but signs the primary URL /<acct>/.
      AddUnique(&out, rest.empty() ? "/" : rest);
    }
  }
  return out;
}

}  // namespace tablestone::protocol::auth
