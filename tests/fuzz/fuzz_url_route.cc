// libFuzzer target: URL pieces, routing and key literals (protocol/url.h,
// protocol/route.h).
//
// Input layout: "<method>\n<host>\n<target>"; missing parts are empty. The
// target goes through the full route resolution (account, resource path with
// its key predicate '...''...', query string, operation), and its pieces
// through the individual helpers. Properties beyond "no crash":
// PercentEncode -> PercentDecodePath is the identity, and no input yields
// a 5xx.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/route.h"
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
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::string_view all = rest;
  std::string_view method = NextLine(&rest);
  std::string_view host = NextLine(&rest);
  std::string_view target = rest;

  // Helpers on the whole input.
  (void)PercentDecodeQuery(all);
  (void)ParseQueryString(all);
  (void)IsValidUtf8(all);
  (void)ValidateUrlKey(all);
  (void)ValidateTableName(all);
  std::string encoded = PercentEncode(all, "'");
  auto decoded = PercentDecodePath(encoded);
  if (!decoded.has_value() || *decoded != all) abort();

  auto resource = ParseResource(target);
  if (!resource.ok() && resource.error().http_status >= 500) abort();

  RouteInput in;
  in.method = method;
  in.host = host;
  in.target = target;
  in.is_known_account = [](std::string_view a) { return a == "devstoreaccount1"; };
  auto route = ResolveRoute(in);
  if (!route.ok()) {
    if (route.error().http_status < 400 || route.error().http_status >= 500) abort();
    return 0;
  }
  in.disable_product_style = true;
  in.has_if_match = true;
  std::vector<std::string_view> xm = {"MERGE"};
  in.x_http_method = xm;
  (void)ResolveRoute(in);
  return 0;
}
