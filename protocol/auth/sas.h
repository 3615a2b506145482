// Shared Access Signature maths for the Table service (Learn: create-service-sas): parsing the
// query parameters of service (table) and account SAS tokens, their
// strings-to-sign, and the checks that need no stored state (permissions per
// operation, time window, IP, protocol, PartitionKey/RowKey range).
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/api_error.h"
#include "protocol/operation.h"
#include "protocol/url.h"
#include "storage/model/scan_spec.h"

namespace tablestone::protocol::auth {

using QueryParams = protocol::QueryParams;

enum class SasKind { kNone, kService, kAccount };

// kNone when there is no "sig" parameter; kAccount when "ss" or "srt" is
// present (only account SAS carries them); otherwise kService.
SasKind DetectSas(const QueryParams& query);

// Fields as sent (already percent-decoded); absent = empty.
struct ServiceSas {
  std::string sv, tn, sp, st, se, spk, srk, epk, erk, si, sip, spr, sig;
};
struct AccountSas {
  std::string sv, ss, srt, sp, st, se, sip, spr, sig, ses;
};

// Parses a service SAS. 403 AuthenticationFailed when sig/sv are missing, a
// parameter is repeated, or srk/erk come without spk/epk; 400
// InvalidQueryParameterValue is never used here (the service reports SAS
// problems as authentication failures).
ApiResult<ServiceSas> ParseServiceSas(const QueryParams& query);
// Parses an account SAS; sig, sv, ss, srt, sp and se are required.
ApiResult<AccountSas> ParseAccountSas(const QueryParams& query);

// sp\nst\nse\n/table/<account>/<lower(tn)>\nsi\nsip\nspr\nsv\nspk\nsrk\nepk\nerk
std::string ServiceSasStringToSign(const ServiceSas& sas, std::string_view account);
// account\nsp\nss\nsrt\nst\nse\nsip\nspr\nsv\n [+ ses\n for sv >= 2020-12-06]
std::string AccountSasStringToSign(const AccountSas& sas, std::string_view account);

// Time window: `st` (optional) must not be after now, `se` (required by the
// caller) must be after now. Accepts ISO 8601 with or without fraction, and
// date-only. 403 AuthenticationFailed otherwise (also for unparsable times).
std::optional<ApiError> CheckSasTimeWindow(std::string_view st, std::string_view se, int64_t now_ticks);

// The same check in two steps, for a token that is reused (the authenticator remembers the last
// account SAS): the times parsed once, then compared with the clock on every request. Same
// answers, in the same order, as CheckSasTimeWindow(st, se, now).
struct SasTimeWindow {
  std::optional<ApiError> malformed;  // se missing, or se/st not a time: refused whatever the clock
  std::optional<int64_t> start;       // st, when given
  int64_t expiry = 0;
};
SasTimeWindow ParseSasTimeWindow(std::string_view st, std::string_view se);
std::optional<ApiError> CheckSasTimeWindow(const SasTimeWindow& window, int64_t now_ticks);
// `sip` is empty (any), one IPv4/IPv6 address, or "a-b" IPv4 range.
bool SasIpAllowed(std::string_view sip, std::string_view client_ip);
// `spr` is empty, "https" or "https,http".
bool SasProtocolAllowed(std::string_view spr, bool is_https);

// Account SAS: the resource type (srt) and permissions (sp) `op` needs.
// Errors: 403 AuthorizationServiceMismatch (ss lacks 't'),
// AuthorizationResourceTypeMismatch, AuthorizationPermissionMismatch,
// AuthorizationFailure (ACL operations: Shared Key only).
std::optional<ApiError> CheckAccountSasPermission(const AccountSas& sas, Operation op);
// Service SAS: r/a/u/d per entity operation (upserts need a AND u); table- and
// service-level operations are refused with 403 AuthorizationFailure; missing
// letters give 403 AuthorizationPermissionMismatch.
std::optional<ApiError> CheckServiceSasPermission(std::string_view sp, Operation op);

// True if `sv` is a service version a SAS of `kind` may be signed with: a
// YYYY-MM-DD date no newer than kNewestApiVersion (request_options.h) and no
// older than the first version with that kind of SAS (service SAS for tables:
// 2012-02-12; account SAS: 2015-04-05). The service refuses any other value
// with 403 AuthenticationFailed (docs/compatibility.md).
bool IsKnownSignedVersion(std::string_view sv, SasKind kind);

// The key range of a service SAS as scan bounds (Learn: create-service-sas rules).
struct SasKeyRange {
  std::optional<model::KeyBound> start;  // lower bound, inclusive
  std::optional<model::KeyBound> end;    // upper bound, inclusive
};
SasKeyRange ServiceSasKeyRange(const ServiceSas& sas);
// True if (pk, rk) lies inside [start, end] in ordinal UTF-16 order.
bool KeyInSasRange(const std::optional<model::KeyBound>& start, const std::optional<model::KeyBound>& end,
                   std::string_view partition_key, std::string_view row_key);
// Ordinal UTF-16 code-unit comparison of two UTF-8 strings (<0, 0, >0), the
// order the service sorts keys in.
int CompareUtf16(std::string_view a, std::string_view b);

}  // namespace tablestone::protocol::auth
