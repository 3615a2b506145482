// The server's own routes, under /_tablestone/ outside the Azure namespace:
// one table of {method, path, authentication, placement}, which the
// dispatcher looks up once when a request's headers arrive (AdmitHeaders:
// whether a body may follow, and how large) and once when it is handled.
// Three kinds share the table:
//   status routes  GET /_tablestone/health (?detail=1) and /_tablestone/metrics
//                  (docs/observability.md; answers in status_routes.cc)
//   UI routes      GET /_tablestone/ui/... (docs/ui.md, ui_routes.h)
//   admin routes   snapshot, reset, trace, faults (docs/admin-api.md,
//                  admin_routes.h), signed for the one Authenticator
// and one outside it: GET / from a browser's address bar, redirected to the
// UI (ServerRoute::browser_page; every other request to / is the Table
// API's, as on the service).
// None is counted in the metrics or traced: reading the server's state does
// not change what it reads. The `_tablestone` segment cannot clash with an
// account name (lower-case letters and digits only).
#pragma once

#include <array>
#include <string_view>

#include "server/api/api_options.h"
#include "server/api/placement.h"
#include "server/http/handler.h"

namespace tablestone::api {

enum class ServerRouteId { kHealth, kMetrics, kUi, kUiAtRoot, kSnapshot, kReset, kTrace, kFaults, kFaultsRealistic };

// Who may call a route (docs/admin-api.md).
enum class RouteAuth {
  kAnyone,  // GET /_tablestone/health without detail: a constant
  // A Host no DNS-rebinding page can send (IsAllowedHost); the UI's data
  // needs an account key of the browser's own.
  kAllowedHost,
  // An allowed Host, and a loopback peer or an admin signature
  // (docs/admin-api.md, "Server details").
  kServerDetail,
  // An allowed Host and a signature for Authenticator::AuthenticateAdmin,
  // then AuthorizeAdmin ("Who may do what"). The signature is checked when
  // the headers arrive, if the body is still to come (AdmitHeaders: an
  // unsigned request's body is never read), and always when the request is
  // handled, with the body's hash: a request whose body arrived with its
  // headers is not shown to AdmitHeaders, and Handle() has no record of what
  // AdmitHeaders decided (http::RequestHandler passes nothing between them).
  kAdminSignature,
};

struct ServerRoute {
  ServerRouteId id;
  // The methods it serves, space-separated. Another method: an admin route
  // answers 405; a status or UI route is not one, and the request goes on to
  // the Table API's routing (which refuses it).
  std::string_view methods;
  std::string_view path;  // exact, or, with `subtree`, also every path below it
  bool subtree;
  RouteAuth auth;
  Placement placement;  // kIoThread (from memory) or kLongLane (waits for the disk)
  // Only a browser's page request takes the route (IsBrowserPageRequest): the
  // path is shared with the Table API, whose requests go on to its routing.
  bool browser_page = false;
};

inline constexpr std::array<ServerRoute, 9> kServerRoutes = {{
    {ServerRouteId::kHealth, "GET", "/_tablestone/health", false, RouteAuth::kAnyone, Placement::kIoThread},
    {ServerRouteId::kMetrics, "GET", "/_tablestone/metrics", false, RouteAuth::kServerDetail, Placement::kIoThread},
    {ServerRouteId::kUi, "GET", "/_tablestone/ui", true, RouteAuth::kAllowedHost, Placement::kIoThread},
    // The server's address typed into a browser: 302 to the UI, not 400 InvalidUri.
    {ServerRouteId::kUiAtRoot, "GET", "/", false, RouteAuth::kAllowedHost, Placement::kIoThread,
     /*browser_page=*/true},
    {ServerRouteId::kSnapshot, "POST", "/_tablestone/snapshot", false, RouteAuth::kAdminSignature,
     Placement::kLongLane},
    {ServerRouteId::kReset, "POST", "/_tablestone/reset", false, RouteAuth::kAdminSignature, Placement::kLongLane},
    {ServerRouteId::kTrace, "GET POST", "/_tablestone/trace", false, RouteAuth::kAdminSignature,
     Placement::kLongLane},
    {ServerRouteId::kFaults, "GET POST DELETE", "/_tablestone/faults", false, RouteAuth::kAdminSignature,
     Placement::kLongLane},
    {ServerRouteId::kFaultsRealistic, "POST", "/_tablestone/faults/realistic", false, RouteAuth::kAdminSignature,
     Placement::kLongLane},
}};

// The route `request` takes among those `options` turn on (the admin routes
// need ApiOptions::admin_api, the UI's ApiOptions::ui), or null: the request
// is the Table API's. Looks at the path, and for a browser_page row at the
// request's method and headers too; AdmitHeaders and Handle both ask here,
// so they agree.
const ServerRoute* FindServerRoute(const http::Request& request, const ApiOptions& options);
// The route of `path` (no query) whether on or off, or null.
const ServerRoute* FindServerRoute(std::string_view path);
// True for what a browser sends when a person types the server's address:
// GET of the bare path (no query), Accept naming text/html, and neither an
// Authorization nor an x-ms-version header (which every SDK request carries).
bool IsBrowserPageRequest(const http::Request& request);
// True when `route` serves `method` (as on the request line).
bool ServesMethod(const ServerRoute& route, std::string_view method);
// Who may call `route` with `target` (path and query): the health route's
// ?detail=1 (or detail=true) asks for the server's details.
RouteAuth AuthOf(const ServerRoute& route, std::string_view target);

}  // namespace tablestone::api
