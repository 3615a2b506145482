#include "server/api/cors.h"

#include <cctype>

#include "protocol/route.h"

namespace tablestone::api {
namespace {

using protocol::EqualsIgnoreCase;
using protocol::xml::CorsRule;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool StartsWithIgnoreCase(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && EqualsIgnoreCase(s.substr(0, prefix.size()), prefix);
}

// One allowed-header entry against one requested header name.
bool HeaderAllowed(std::string_view allowed, std::string_view name) {
  if (allowed == "*") return true;
  if (!allowed.empty() && allowed.back() == '*') {
    return StartsWithIgnoreCase(name, allowed.substr(0, allowed.size() - 1));
  }
  return EqualsIgnoreCase(allowed, name);
}

void SetHeader(http::Response& response, std::string_view name, std::string_view value) {
  response.set(boost::beast::string_view(name.data(), name.size()),
               boost::beast::string_view(value.data(), value.size()));
}

// Appends `name` to a comma list unless an equal name (case-insensitive) is there.
void AppendUnique(std::vector<std::string>* names, std::string_view name) {
  for (const std::string& n : *names) {
    if (EqualsIgnoreCase(n, name)) return;
  }
  names->emplace_back(name);
}

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

}  // namespace

std::vector<std::string> SplitCorsList(std::string_view list) {
  std::vector<std::string> out;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = Trim(list.substr(0, comma));
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

OriginMatch MatchOrigin(const CorsRule& rule, std::string_view origin) {
  OriginMatch result = OriginMatch::kNone;
  for (const std::string& allowed : SplitCorsList(rule.allowed_origins)) {
    // Exact and case-sensitive, as the service documents for AllowedOrigins
    // (the CorsRule reference of the storage SDKs; docs/compatibility.md).
    if (allowed == origin) return OriginMatch::kExplicit;
    if (allowed == "*") result = OriginMatch::kWildcard;
  }
  return result;
}

bool MatchMethod(const CorsRule& rule, std::string_view method) {
  if (method.empty()) return false;
  for (const std::string& allowed : SplitCorsList(rule.allowed_methods)) {
    if (EqualsIgnoreCase(allowed, method)) return true;
  }
  return false;
}

bool MatchRequestHeaders(const CorsRule& rule, std::string_view requested_headers) {
  const std::vector<std::string> allowed = SplitCorsList(rule.allowed_headers);
  for (const std::string& name : SplitCorsList(requested_headers)) {
    bool ok = false;
    for (const std::string& a : allowed) {
      if (HeaderAllowed(a, name)) {
        ok = true;
        break;
      }
    }
    if (!ok) return false;
  }
  return true;
}

CorsRuleMatch FindPreflightRule(const std::vector<CorsRule>& rules, std::string_view origin, std::string_view method,
                                std::string_view requested_headers) {
  for (const CorsRule& rule : rules) {
    OriginMatch o = MatchOrigin(rule, origin);
    if (o == OriginMatch::kNone || !MatchMethod(rule, method) || !MatchRequestHeaders(rule, requested_headers)) {
      continue;
    }
    return {&rule, o};
  }
  return {};
}

CorsRuleMatch FindRequestRule(const std::vector<CorsRule>& rules, std::string_view origin, std::string_view method) {
  for (const CorsRule& rule : rules) {
    OriginMatch o = MatchOrigin(rule, origin);
    if (o == OriginMatch::kNone || !MatchMethod(rule, method)) continue;
    return {&rule, o};
  }
  return {};
}

void SetPreflightHeaders(const CorsRuleMatch& match, std::string_view origin, std::string_view method,
                         std::string_view requested_headers, http::Response& response) {
  const bool wildcard = match.origin == OriginMatch::kWildcard;
  SetHeader(response, "Access-Control-Allow-Origin", wildcard ? std::string_view("*") : origin);
  SetHeader(response, "Access-Control-Allow-Methods", method);
  std::string_view headers = Trim(requested_headers);
  if (!headers.empty()) SetHeader(response, "Access-Control-Allow-Headers", headers);
  SetHeader(response, "Access-Control-Max-Age", std::to_string(match.rule->max_age_seconds));
  if (!wildcard) SetHeader(response, "Access-Control-Allow-Credentials", "true");
}

void SetActualRequestHeaders(const std::vector<CorsRule>& rules, std::string_view origin, std::string_view method,
                             http::Response& response) {
  if (rules.empty()) return;
  CorsRuleMatch match = FindRequestRule(rules, origin, method);
  if (match.rule == nullptr) {
    // A cacheable response must say it depends on Origin once CORS is on.
    SetHeader(response, "Vary", "Origin");
    return;
  }
  const bool wildcard = match.origin == OriginMatch::kWildcard;
  std::vector<std::string> exposed = SplitCorsList(match.rule->exposed_headers);
  for (const auto& field : response) {
    std::string_view name(field.name_string().data(), field.name_string().size());
    if (StartsWithIgnoreCase(name, "Access-Control-") || EqualsIgnoreCase(name, "Vary")) continue;
    AppendUnique(&exposed, name);
  }
  SetHeader(response, "Access-Control-Allow-Origin", wildcard ? std::string_view("*") : origin);
  if (!exposed.empty()) SetHeader(response, "Access-Control-Expose-Headers", Join(exposed));
  if (!wildcard) {
    SetHeader(response, "Access-Control-Allow-Credentials", "true");
    SetHeader(response, "Vary", "Origin");
  }
}

}  // namespace tablestone::api
