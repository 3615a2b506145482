// The data browser's routes (docs/ui.md), on unless ApiOptions::ui is off
// (--noUi). GET only; answered on the I/O thread from memory, not counted in
// the metrics, and never reaching the Table API's routing or authentication:
//   GET /_tablestone/ui                redirect (308) to /_tablestone/ui/
//   GET /_tablestone/ui/               index.html
//   GET /_tablestone/ui/config.json    what the page needs to start (below)
//   GET /_tablestone/ui/<file>         an embedded asset by exact base name
//   GET /  from a browser              redirect (302) to /_tablestone/ui/; only
//                                      a page request (IsBrowserPageRequest,
//                                      server_routes.h): SDK requests to / stay
//                                      the Table API's
// Anything else under the prefix is 404; a name is looked up as it is sent
// (no decoding, no directories), so no request can reach outside the embedded
// files.
//
// The page holds no data access of its own: it signs Table API requests with
// an account key kept in the browser's sessionStorage. config.json lists the
// configured account names (as /_tablestone/health?detail=1 does) and says
// `"devKey": true` only when ApiOptions::ui_dev_key is set (the server serves
// devstoreaccount1 with its published key and listens on loopback only) and the
// request itself comes from a loopback address; the page then uses the
// published development key without asking. Otherwise the user pastes a key.
//
// Every answer carries a strict Content-Security-Policy (scripts and styles
// from this origin only, no inline script, no framing), nosniff, and
// Cache-Control: no-cache (assets are not content-addressed, so a browser
// revalidates after an upgrade; they are small).
#pragma once

#include <string_view>

#include "server/api/api_options.h"
#include "server/http/handler.h"

namespace tablestone::api {

inline constexpr std::string_view kUiPrefix = "/_tablestone/ui";

// True for a path (no query) that the UI routes own: kUiPrefix or below it.
inline bool IsUiPath(std::string_view path) {
  return path.starts_with(kUiPrefix) && (path.size() == kUiPrefix.size() || path[kUiPrefix.size()] == '/');
}

// Fills `response` (status, headers, body; not prepare_payload) for a GET of
// `path` (IsUiPath) from a peer at `remote_ip`.
void ServeUi(std::string_view path, std::string_view remote_ip, const ApiOptions& options, http::Response& response);

// Fills `response` for a browser's GET / (ServerRouteId::kUiAtRoot): a 302
// to the UI, with a one-line text body naming it for a client that does not
// follow redirects.
void ServeUiAtRoot(http::Response& response);

// True for a textual IPv4/IPv6 loopback address (127.0.0.0/8, ::1, and
// IPv4-mapped ::ffff:127.x.y.z). Inline: server/app uses it without linking
// this library.
inline bool IsLoopbackAddress(std::string_view ip) {
  if (ip.starts_with("::ffff:")) ip.remove_prefix(7);
  return ip == "::1" || ip.starts_with("127.");
}

}  // namespace tablestone::api
