#include "server/api/server_routes.h"

#include "server/api/api_context.h"

namespace tablestone::api {
namespace {

// True when the query string of `target` has detail=1 (or detail=true).
bool WantsDetail(std::string_view target) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) return false;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const size_t amp = query.find('&');
    const std::string_view param = query.substr(0, amp);
    if (param == "detail=1" || param == "detail=true") return true;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return false;
}

}  // namespace

const ServerRoute* FindServerRoute(std::string_view path) {
  for (const ServerRoute& route : kServerRoutes) {
    if (path == route.path) return &route;
    if (route.subtree && path.starts_with(route.path) && path[route.path.size()] == '/') return &route;
  }
  return nullptr;
}

const ServerRoute* FindServerRoute(const http::Request& request, const ApiOptions& options) {
  const std::string_view target(request.target().data(), request.target().size());
  const ServerRoute* route = FindServerRoute(target.substr(0, target.find('?')));
  if (route == nullptr) return nullptr;
  if (route->auth == RouteAuth::kAdminSignature && !options.admin_api) return nullptr;
  if ((route->id == ServerRouteId::kUi || route->id == ServerRouteId::kUiAtRoot) && !options.ui) return nullptr;
  if (route->browser_page && !IsBrowserPageRequest(request)) return nullptr;
  return route;
}

bool IsBrowserPageRequest(const http::Request& request) {
  const std::string_view target(request.target().data(), request.target().size());
  return request.method() == boost::beast::http::verb::get && target.find('?') == std::string_view::npos &&
         RequestHeader(request, "Accept").find("text/html") != std::string_view::npos &&
         RequestHeader(request, "Authorization").empty() && RequestHeader(request, "x-ms-version").empty();
}

bool ServesMethod(const ServerRoute& route, std::string_view method) {
  std::string_view methods = route.methods;
  while (!methods.empty()) {
    const size_t space = methods.find(' ');
    if (methods.substr(0, space) == method) return true;
    if (space == std::string_view::npos) break;
    methods.remove_prefix(space + 1);
  }
  return false;
}

RouteAuth AuthOf(const ServerRoute& route, std::string_view target) {
  if (route.id == ServerRouteId::kHealth && WantsDetail(target)) return RouteAuth::kServerDetail;
  return route.auth;
}

}  // namespace tablestone::api
