#include "protocol/auth/sas.h"

#include <array>
#include <cstdint>

#include "protocol/operation.h"
#include "protocol/request_options.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol::auth {
namespace {

using protocol::ApiError;

// A SAS field and where its value goes.
struct SasField {
  std::string_view name;
  std::string* out;
};

// Copies each named parameter's value into its field (absent: left empty) in
// one pass over the query; false when a named parameter is repeated. One pass
// instead of a tree lookup per field: SAS parsing runs on every request.
template <size_t N>
bool CollectOnce(const QueryParams& q, const SasField (&fields)[N]) {
  bool seen[N] = {};
  for (const auto& [name, value] : q) {
    for (size_t i = 0; i < N; ++i) {
      if (name != fields[i].name) continue;
      if (seen[i]) return false;
      seen[i] = true;
      *fields[i].out = value;
      break;
    }
  }
  return true;
}

ApiError SasFailed(const char* detail) { return ApiError::AuthenticationFailed(detail); }

bool Has(std::string_view set, char c) { return set.find(c) != std::string_view::npos; }

std::optional<uint32_t> ParseIpv4(std::string_view s) {
  uint32_t value = 0;
  int parts = 0;
  size_t i = 0;
  while (parts < 4) {
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return std::nullopt;
    uint32_t octet = 0;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      octet = octet * 10 + static_cast<uint32_t>(s[i] - '0');
      if (++digits > 3 || octet > 255) return std::nullopt;
      ++i;
    }
    value = (value << 8) | octet;
    ++parts;
    if (parts < 4) {
      if (i >= s.size() || s[i] != '.') return std::nullopt;
      ++i;
    }
  }
  if (i != s.size()) return std::nullopt;
  return value;
}

// "::ffff:1.2.3.4" (IPv4-mapped, as dual-stack sockets report) -> "1.2.3.4".
std::string_view StripMapped(std::string_view ip) {
  constexpr std::string_view kMapped = "::ffff:";
  if (ip.size() > kMapped.size() && model::ToAsciiLower(ip.substr(0, kMapped.size())) == kMapped) {
    return ip.substr(kMapped.size());
  }
  return ip;
}

// Decodes one UTF-8 sequence at s[*i] into UTF-16 units; invalid bytes map to
// one unit each (their byte value) so the order stays total.
void NextUnits(std::string_view s, size_t* i, std::array<uint16_t, 2>* units, int* count) {
  auto b = static_cast<unsigned char>(s[*i]);
  uint32_t cp = b;
  size_t len = 1;
  if (b >= 0xF0 && b <= 0xF4 && *i + 3 < s.size()) {
    cp = ((b & 0x07u) << 18) | ((static_cast<unsigned char>(s[*i + 1]) & 0x3Fu) << 12) |
         ((static_cast<unsigned char>(s[*i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[*i + 3]) & 0x3Fu);
    len = 4;
  } else if (b >= 0xE0 && b <= 0xEF && *i + 2 < s.size()) {
    cp = ((b & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[*i + 1]) & 0x3Fu) << 6) |
         (static_cast<unsigned char>(s[*i + 2]) & 0x3Fu);
    len = 3;
  } else if (b >= 0xC0 && b <= 0xDF && *i + 1 < s.size()) {
    cp = ((b & 0x1Fu) << 6) | (static_cast<unsigned char>(s[*i + 1]) & 0x3Fu);
    len = 2;
  }
  *i += len;
  if (cp >= 0x10000) {
    cp -= 0x10000;
    (*units)[0] = static_cast<uint16_t>(0xD800 + (cp >> 10));
    (*units)[1] = static_cast<uint16_t>(0xDC00 + (cp & 0x3FF));
    *count = 2;
  } else {
    (*units)[0] = static_cast<uint16_t>(cp);
    *count = 1;
  }
}

}  // namespace

SasKind DetectSas(const QueryParams& query) {
  if (query.find("sig") == query.end()) return SasKind::kNone;
  if (query.find("ss") != query.end() || query.find("srt") != query.end()) return SasKind::kAccount;
  return SasKind::kService;
}

ApiResult<ServiceSas> ParseServiceSas(const QueryParams& q) {
  ServiceSas s;
  const SasField fields[] = {
      {"sv", &s.sv},   {"tn", &s.tn},   {"sp", &s.sp},   {"st", &s.st},   {"se", &s.se},
      {"spk", &s.spk}, {"srk", &s.srk}, {"epk", &s.epk}, {"erk", &s.erk}, {"si", &s.si},
      {"sip", &s.sip}, {"spr", &s.spr}, {"sig", &s.sig},
  };
  if (!CollectOnce(q, fields)) return SasFailed("A SAS parameter is specified more than once.");
  if (s.sig.empty() || s.sv.empty()) return SasFailed("Signature or signed version is missing.");
  if ((!s.srk.empty() && s.spk.empty()) || (!s.erk.empty() && s.epk.empty())) {
    return SasFailed("A row key bound requires the matching partition key bound.");
  }
  if (s.si.size() > 64) return SasFailed("Signed identifier is longer than 64 characters.");
  return s;
}

ApiResult<AccountSas> ParseAccountSas(const QueryParams& q) {
  AccountSas s;
  const SasField fields[] = {
      {"sv", &s.sv}, {"ss", &s.ss},   {"srt", &s.srt}, {"sp", &s.sp},   {"st", &s.st},
      {"se", &s.se}, {"sip", &s.sip}, {"spr", &s.spr}, {"sig", &s.sig}, {"ses", &s.ses},
  };
  if (!CollectOnce(q, fields)) return SasFailed("A SAS parameter is specified more than once.");
  if (s.sig.empty() || s.sv.empty() || s.ss.empty() || s.srt.empty() || s.sp.empty() || s.se.empty()) {
    return SasFailed("A required account SAS parameter is missing.");
  }
  return s;
}

std::string ServiceSasStringToSign(const ServiceSas& s, std::string_view account) {
  std::string out;
  out.reserve(256);
  out.append(s.sp).append("\n");
  out.append(s.st).append("\n");
  out.append(s.se).append("\n");
  out.append("/table/").append(account).append("/").append(model::ToAsciiLower(s.tn)).append("\n");
  out.append(s.si).append("\n");
  out.append(s.sip).append("\n");
  out.append(s.spr).append("\n");
  out.append(s.sv).append("\n");
  out.append(s.spk).append("\n");
  out.append(s.srk).append("\n");
  out.append(s.epk).append("\n");
  out.append(s.erk);
  return out;
}

std::string AccountSasStringToSign(const AccountSas& s, std::string_view account) {
  std::string out;
  out.reserve(256);
  out.append(account).append("\n");
  out.append(s.sp).append("\n");
  out.append(s.ss).append("\n");
  out.append(s.srt).append("\n");
  out.append(s.st).append("\n");
  out.append(s.se).append("\n");
  out.append(s.sip).append("\n");
  out.append(s.spr).append("\n");
  out.append(s.sv).append("\n");
  // Versions are ISO dates, so string order is date order.
  if (s.sv >= "2020-12-06") out.append(s.ses).append("\n");
  return out;
}

SasTimeWindow ParseSasTimeWindow(std::string_view st, std::string_view se) {
  SasTimeWindow window;
  if (se.empty()) {
    window.malformed = SasFailed("Signed expiry time is missing.");
    return window;
  }
  auto expiry = model::ParseIsoDateTime(se);
  if (!expiry) {
    window.malformed = SasFailed("Signed expiry time is not in a valid format.");
    return window;
  }
  window.expiry = *expiry;
  if (!st.empty()) {
    window.start = model::ParseIsoDateTime(st);
    if (!window.start) window.malformed = SasFailed("Signed start time is not in a valid format.");
  }
  return window;
}

std::optional<ApiError> CheckSasTimeWindow(const SasTimeWindow& window, int64_t now_ticks) {
  if (window.malformed) return window.malformed;
  if (window.start) {
    if (*window.start > now_ticks) return SasFailed("Signed start time is in the future.");
    if (window.expiry <= *window.start) return SasFailed("Signed expiry time must be after signed start time.");
  }
  if (window.expiry <= now_ticks) return SasFailed("Signed expiry time has passed.");
  return std::nullopt;
}

std::optional<ApiError> CheckSasTimeWindow(std::string_view st, std::string_view se, int64_t now_ticks) {
  return CheckSasTimeWindow(ParseSasTimeWindow(st, se), now_ticks);
}

bool SasIpAllowed(std::string_view sip, std::string_view client_ip) {
  if (sip.empty()) return true;
  std::string_view ip = StripMapped(client_ip);
  size_t dash = sip.find('-');
  if (dash == std::string_view::npos) {
    if (auto a = ParseIpv4(sip), b = ParseIpv4(ip); a && b) return *a == *b;
    return model::ToAsciiLower(sip) == model::ToAsciiLower(ip);
  }
  auto lo = ParseIpv4(sip.substr(0, dash));
  auto hi = ParseIpv4(sip.substr(dash + 1));
  auto value = ParseIpv4(ip);
  if (!lo || !hi || !value) return false;
  return *lo <= *value && *value <= *hi;
}

bool SasProtocolAllowed(std::string_view spr, bool is_https) {
  if (spr.empty() || spr == "https,http" || spr == "http,https") return true;
  if (spr == "https") return is_https;
  return false;
}

std::optional<ApiError> CheckAccountSasPermission(const AccountSas& sas, Operation op) {
  if (!Has(sas.ss, 't')) return ApiError::AuthorizationServiceMismatch();
  const OperationRow& row = RowOf(op);
  if (!row.authenticated) return std::nullopt;
  const AccountSasRule& rule = row.account_sas;
  if (rule.resource_types.empty()) return ApiError::AuthorizationFailure();  // no account SAS may call it
  bool type_ok = false;
  for (char t : rule.resource_types) type_ok = type_ok || Has(sas.srt, t);
  if (!type_ok) return ApiError::AuthorizationResourceTypeMismatch();
  if (!rule.any_of.empty()) {
    bool perm_ok = false;
    for (char p : rule.any_of) perm_ok = perm_ok || Has(sas.sp, p);
    if (!perm_ok) return ApiError::AuthorizationPermissionMismatch();
  }
  for (char p : rule.all_of) {
    if (!Has(sas.sp, p)) return ApiError::AuthorizationPermissionMismatch();
  }
  return std::nullopt;
}

std::optional<ApiError> CheckServiceSasPermission(std::string_view sp, Operation op) {
  const OperationRow& row = RowOf(op);
  if (!row.authenticated) return std::nullopt;
  // Table- and service-level operations and ACLs are outside a table SAS.
  if (row.scope != OperationScope::kEntity) return ApiError::AuthorizationFailure();
  for (char p : row.service_sas) {
    if (!Has(sp, p)) return ApiError::AuthorizationPermissionMismatch();
  }
  return std::nullopt;
}

bool IsKnownSignedVersion(std::string_view sv, SasKind kind) {
  if (sv.size() != 10 || !CheckApiVersion(sv, true).ok()) return false;
  return sv >= (kind == SasKind::kAccount ? std::string_view("2015-04-05") : std::string_view("2012-02-12"));
}

SasKeyRange ServiceSasKeyRange(const ServiceSas& sas) {
  SasKeyRange r;
  if (!sas.spk.empty()) {
    model::KeyBound b;
    b.partition_key = sas.spk;
    if (!sas.srk.empty()) b.row_key = sas.srk;
    b.inclusive = true;
    r.start = b;
  }
  if (!sas.epk.empty()) {
    model::KeyBound b;
    b.partition_key = sas.epk;
    if (!sas.erk.empty()) b.row_key = sas.erk;
    b.inclusive = true;
    r.end = b;
  }
  return r;
}

int CompareUtf16(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  std::array<uint16_t, 2> ua{}, ub{};
  int na = 0, nb = 0, ia = 0, ib = 0;
  while (true) {
    if (ia == na) {
      if (i >= a.size()) {
        na = 0;
      } else {
        NextUnits(a, &i, &ua, &na);
      }
      ia = 0;
    }
    if (ib == nb) {
      if (j >= b.size()) {
        nb = 0;
      } else {
        NextUnits(b, &j, &ub, &nb);
      }
      ib = 0;
    }
    bool a_end = na == 0;
    bool b_end = nb == 0;
    if (a_end || b_end) return a_end == b_end ? 0 : (a_end ? -1 : 1);
    if (ua[ia] != ub[ib]) return ua[ia] < ub[ib] ? -1 : 1;
    ++ia;
    ++ib;
  }
}

bool KeyInSasRange(const std::optional<model::KeyBound>& start, const std::optional<model::KeyBound>& end,
                   std::string_view pk, std::string_view rk) {
  if (start) {
    int c = CompareUtf16(pk, start->partition_key);
    if (c < 0) return false;
    if (c == 0 && start->row_key && CompareUtf16(rk, *start->row_key) < 0) return false;
  }
  if (end) {
    int c = CompareUtf16(pk, end->partition_key);
    if (c > 0) return false;
    if (c == 0 && end->row_key && CompareUtf16(rk, *end->row_key) > 0) return false;
  }
  return true;
}

}  // namespace tablestone::protocol::auth
