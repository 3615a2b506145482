// libFuzzer target: Shared Key and SAS parsing (protocol/auth/*.h).
//
// Input layout, one field per line: Authorization header, SAS query string,
// request path, client IP, then the rest. Every parser and the pure checks of
// a parsed SAS run on it; signatures are computed for the strings-to-sign so
// HMAC/SHA-256 see arbitrary lengths too.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "protocol/auth/hmac.h"
#include "protocol/auth/sas.h"
#include "protocol/auth/shared_key.h"
#include "protocol/operation.h"
#include "protocol/url.h"

namespace {

std::string_view NextLine(std::string_view* rest) {
  size_t nl = rest->find('\n');
  std::string_view line = rest->substr(0, nl);
  *rest = nl == std::string_view::npos ? std::string_view{} : rest->substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tablestone::protocol;
  using namespace tablestone::protocol::auth;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view header = NextLine(&rest);
  std::string_view query_text = NextLine(&rest);
  std::string_view path = NextLine(&rest);
  std::string_view ip = NextLine(&rest);
  std::string_view tail = rest;

  (void)AuthorizationScheme(header);
  auto sk = ParseSharedKeyAuthorization(header);
  if (sk.has_value() && (sk->account.empty() || sk->signature.empty())) abort();

  for (const std::string& candidate : CandidatePaths(path, "devstoreaccount1")) {
    std::string resource = CanonicalizedResource("devstoreaccount1", candidate, tail);
    std::string sts = SharedKeyStringToSign("GET", "", "application/json", "date", resource);
    (void)SharedKeyLiteStringToSign(tail, resource);
    (void)SignBase64(std::string(tail.substr(0, 64)), sts);
  }
  (void)auth::PercentDecodePath(path);

  auto query = ParseQueryString(query_text);
  if (!query.has_value()) return 0;
  QueryParams params(query->begin(), query->end());
  switch (DetectSas(params)) {
    case SasKind::kNone:
      break;
    case SasKind::kService: {
      auto sas = ParseServiceSas(params);
      if (!sas.ok()) {
        if (sas.error().http_status != 403) abort();
        break;
      }
      (void)ServiceSasStringToSign(sas.value(), "devstoreaccount1");
      (void)CheckSasTimeWindow(sas->st, sas->se, 638000000000000000);
      (void)SasIpAllowed(sas->sip, ip);
      (void)SasProtocolAllowed(sas->spr, false);
      (void)CheckServiceSasPermission(sas->sp, Operation::kInsertEntity);
      (void)CheckServiceSasPermission(sas->sp, Operation::kQueryEntities);
      SasKeyRange range = ServiceSasKeyRange(sas.value());
      (void)KeyInSasRange(range.start, range.end, tail, ip);
      break;
    }
    case SasKind::kAccount: {
      auto sas = ParseAccountSas(params);
      if (!sas.ok()) {
        if (sas.error().http_status != 403) abort();
        break;
      }
      (void)AccountSasStringToSign(sas.value(), "devstoreaccount1");
      (void)CheckSasTimeWindow(sas->st, sas->se, 638000000000000000);
      (void)SasIpAllowed(sas->sip, ip);
      (void)CheckAccountSasPermission(sas.value(), Operation::kDeleteTable);
      (void)CheckAccountSasPermission(sas.value(), Operation::kUpdateEntity);
      break;
    }
  }
  (void)SasIpAllowed(ip, tail);
  (void)CompareUtf16(ip, tail);
  return 0;
}
