#include "server/api/admin_routes.h"

#include <arpa/inet.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "protocol/url.h"
#include "server/api/admin_files.h"
#include "server/api/server_routes.h"
#include "server/faults/fault_rules.h"
#include "storage/model/ascii.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;

constexpr std::string_view kPrefix = "/_tablestone/";

http::Response Json(const http::Request& request, int status, const nlohmann::json& body) {
  http::Response r;
  r.version(request.version());
  r.keep_alive(request.keep_alive());
  r.result(status);
  r.set(bhttp::field::content_type, "application/json");
  r.body() = body.dump();
  r.prepare_payload();
  return r;
}

http::Response Error(const http::Request& request, int status, std::string_view code, std::string_view message) {
  return Json(request, status, {{"error", code}, {"message", message}});
}

std::string_view Header(const http::Request& request, std::string_view name) {
  auto it = request.find(boost::beast::string_view(name.data(), name.size()));
  return it == request.end() ? std::string_view() : std::string_view(it->value().data(), it->value().size());
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

http::Response HostRefusal(const http::Request& request) {
  return Error(request, 403, "HostNotAllowed",
               "admin routes answer only to localhost, an IP literal or --allowedHosts (docs/admin-api.md)");
}

http::Response NeedsAdmin(const http::Request& request, std::string_view what) {
  return Error(request, 403, "AuthorizationFailure",
               std::string(what) + " needs the admin credential (docs/admin-api.md, \"Who may do what\")");
}

// The operation name after /_tablestone/ (path without query).
std::string_view OperationOf(const http::Request& request) {
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path = target.substr(0, target.find('?'));
  return path.substr(kPrefix.size());
}

// The rule objects of a POST /_tablestone/faults body that an account's key
// may send: one rule or an array of rules (not the file form, whose seed and
// realistic settings are server-wide); nullptr for anything else.
std::vector<const nlohmann::json*> AccountRules(const nlohmann::json& body) {
  std::vector<const nlohmann::json*> rules;
  if (body.is_object() && !body.contains("rules") && !body.contains("seed") && !body.contains("realistic")) {
    rules.push_back(&body);
  } else if (body.is_array()) {
    for (const nlohmann::json& r : body) rules.push_back(&r);
  }
  return rules;
}

// True when `object` (JSON) has "account": `account`.
bool NamesAccount(const nlohmann::json& object, std::string_view account) {
  if (!object.is_object()) return false;
  auto it = object.find("account");
  return it != object.end() && it->is_string() && it->get<std::string>() == account;
}

// True when the fault rule `rule` (JSON) matches exactly `account`
// ("match": {"account": ...}).
bool RuleOf(const nlohmann::json& rule, std::string_view account) {
  if (!rule.is_object()) return false;
  auto match = rule.find("match");
  return match != rule.end() && NamesAccount(*match, account);
}

// The fault set's JSON reduced to what `account` may see: its own rules and
// realistic scopes.
nlohmann::json FaultsOf(nlohmann::json all, const std::string& account) {
  nlohmann::json rules = nlohmann::json::array();
  for (auto& r : all["rules"]) {
    if (RuleOf(r, account)) rules.push_back(std::move(r));
  }
  all["rules"] = std::move(rules);
  nlohmann::json scopes = nlohmann::json::object();
  for (auto& [scope, on] : all["realistic"]["scopes"].items()) {
    if (scope == account || scope.starts_with(account + "/")) scopes[scope] = on;
  }
  all["realistic"]["scopes"] = std::move(scopes);
  return all;
}

// GET and POST /_tablestone/trace (after authorization).
http::Response HandleTrace(const http::Request& request, const ApiOptions& options, TraceWriter* trace) {
  if (trace == nullptr) return Error(request, 404, "ResourceNotFound", "this server has no request trace");
  if (request.method() == bhttp::verb::post) {
    nlohmann::json body = nlohmann::json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
    if (!body.is_object() || !body.contains("enabled") || !body["enabled"].is_boolean() ||
        (body.contains("file") && !body["file"].is_string()) ||
        (body.contains("bodies") && !body["bodies"].is_boolean())) {
      return Error(request, 400, "InvalidInput",
                   "expected a JSON object {\"enabled\":bool,\"file\":string,\"bodies\":bool}");
    }
    const bool bodies = body.value("bodies", false);
    if (!body["enabled"].get<bool>()) {
      trace->Stop();
    } else if (!body.contains("file")) {
      // Tracing that is on keeps its file (only "bodies" changes); that path
      // was fixed at start-up or opened below.
      const std::string file = trace->path();
      if (file.empty()) return Error(request, 400, "InvalidInput", "enabling the trace needs \"file\"");
      std::string why;
      if (!trace->Start(file, bodies, &why)) return Error(request, 500, "InternalError", why);
    } else {
      auto name = NameInDirectory(body["file"].get<std::string>(), options.trace_dir);
      if (!name.ok()) return Error(request, 400, "InvalidInput", "\"file\": " + name.status().message());
      auto fd = OpenTraceFile(options.trace_dir, *name);
      if (!fd.ok()) {
        const int status = fd.status().code() == StatusCode::kInvalidArgument ? 400 : 500;
        return Error(request, status, status == 400 ? "InvalidInput" : "InternalError", fd.status().message());
      }
      std::string why;
      if (!trace->StartOpened(*fd, options.trace_dir + "/" + *name, bodies, &why)) {
        return Error(request, 500, "InternalError", why);
      }
    }
  }
  const bool on = trace->enabled();
  return Json(request, 200,
              {{"enabled", on},
               {"file", on ? nlohmann::json(trace->path()) : nlohmann::json(nullptr)},
               {"bodies", on && trace->bodies()},
               {"written", trace->written()},
               {"dropped", trace->dropped()}});
}

// POST /_tablestone/snapshot?to=NAME (after authorization).
http::Response HandleSnapshot(const http::Request& request, const protocol::QueryParams& query,
                              storage::Engine& engine, const ApiOptions& options,
                              std::chrono::steady_clock::time_point start) {
  const std::string* to = protocol::FindQueryParam(query, "to");
  if (to == nullptr || to->empty()) return Error(request, 400, "MissingRequiredQueryParameter", "snapshot needs ?to=NAME");
  if (options.facts.in_memory || options.snapshot_dir.empty()) {
    return Error(request, 409, "SnapshotNotPossible", "this server keeps its data in memory: nothing to snapshot");
  }
  auto name = NameInDirectory(*to, options.snapshot_dir);
  if (!name.ok()) return Error(request, 400, "InvalidQueryParameterValue", "to: " + name.status().message());
  auto path = PrepareSnapshot(options.snapshot_dir, *name, options.facts.data_dir);
  if (!path.ok()) {
    const bool exists = path.status().code() == StatusCode::kAlreadyExists;
    return Error(request, exists ? 409 : 500, exists ? "SnapshotNotPossible" : "InternalError",
                 path.status().message());
  }
  Status s = engine.CreateCheckpoint(*path);
  if (!s.ok()) {
    int status = s.code() == StatusCode::kInvalidArgument ? 409 : 500;
    return Error(request, status, status == 409 ? "SnapshotNotPossible" : "InternalError", s.message());
  }
  s = MatchDataPermissions(*path, options.facts.data_dir);
  if (!s.ok()) return Error(request, 500, "InternalError", s.message());
  return Json(request, 201, {{"snapshot", *path}, {"ms", MillisSince(start)}});
}

// POST /_tablestone/reset[?account=A] (after authorization).
http::Response HandleReset(const http::Request& request, const protocol::QueryParams& query,
                           storage::Engine& engine, const ApiOptions& options,
                           std::chrono::steady_clock::time_point start) {
  std::vector<std::string> accounts;
  if (const std::string* one = protocol::FindQueryParam(query, "account"); one != nullptr && !one->empty()) {
    accounts.push_back(*one);
  } else {
    for (const auto& a : options.accounts) accounts.push_back(a.name);
  }
  size_t deleted = 0;
  for (const std::string& account : accounts) {
    // Collect first, then delete: a listing resumes by name, and deleting
    // behind it is safe, but one pass over a fixed list is simpler to reason about.
    std::vector<std::string> names;
    storage::TableListSpec spec;
    for (;;) {
      auto page = engine.ListTables(account, spec);
      if (!page.ok()) return Error(request, 500, "InternalError", page.status().ToString());
      for (const auto& t : page->tables) names.push_back(t.name);
      if (!page->next) break;
      spec.resume_from = *page->next;
    }
    for (const std::string& name : names) {
      Status s = engine.DeleteTable(account, name);
      if (!s.ok() && s.code() != StatusCode::kTableNotFound) return Error(request, 500, "InternalError", s.ToString());
      ++deleted;
    }
  }
  Status synced = engine.SyncWal();
  if (!synced.ok()) return Error(request, 500, "InternalError", synced.ToString());
  return Json(request, 200, {{"accounts", accounts}, {"tablesDeleted", deleted}, {"ms", MillisSince(start)}});
}

// The fault routes (after authorization); an account's key sees and removes
// only its own rules.
http::Response HandleFaults(const http::Request& request, std::string_view op, const protocol::QueryParams& query,
                            const AdminGrant& grant, faults::FaultSet& faults) {
  std::string error;
  if (op == "faults/realistic") {
    auto body = nlohmann::json::parse(request.body(), nullptr, false);
    if (!faults.SetRealisticJson(body, &error)) return Error(request, 400, "InvalidFaultRule", error);
    return Json(request, 200, grant.admin ? faults.ToJson() : FaultsOf(faults.ToJson(), grant.account));
  }
  switch (request.method()) {
    case bhttp::verb::get:
      return Json(request, 200, grant.admin ? faults.ToJson() : FaultsOf(faults.ToJson(), grant.account));
    case bhttp::verb::post: {
      auto body = nlohmann::json::parse(request.body(), nullptr, false);
      auto ids = faults.AddJson(body, &error);
      if (!ids) return Error(request, 400, "InvalidFaultRule", error);
      return Json(request, 201, {{"ids", *ids}});
    }
    case bhttp::verb::delete_: {
      std::vector<std::string> own;  // the rules this signer may remove
      if (!grant.admin) {
        const nlohmann::json all = faults.ToJson();  // kept alive for the loop
        for (const auto& r : all["rules"]) {
          if (RuleOf(r, grant.account)) own.push_back(r["id"].get<std::string>());
        }
      }
      if (const std::string* id = protocol::FindQueryParam(query, "id"); id != nullptr) {
        const bool allowed = grant.admin || std::find(own.begin(), own.end(), *id) != own.end();
        // Another account's rule answers as a missing one: its id is not this signer's to know.
        if (!allowed || !faults.Remove(*id)) {
          return Error(request, 404, "FaultRuleNotFound", "no fault rule with id " + *id);
        }
        return Json(request, 200, {{"removed", {*id}}});
      }
      if (grant.admin) {
        faults.Clear();
        return Json(request, 200, {{"cleared", true}});
      }
      for (const std::string& id : own) faults.Remove(id);
      return Json(request, 200, {{"removed", own}});
    }
    default: return Error(request, 405, "MethodNotAllowed", "fault routes take GET, POST or DELETE");
  }
}

}  // namespace

bool IsAdminTarget(std::string_view target) {
  const ServerRoute* route = FindServerRoute(target.substr(0, target.find('?')));
  return route != nullptr && route->auth == RouteAuth::kAdminSignature;
}

bool IsAllowedHost(std::string_view host, const ApiOptions& options) {
  if (host.empty()) return false;
  if (host.front() == '[') {
    // A bracketed IPv6 literal, with an optional port.
    const size_t close = host.find(']');
    if (close == std::string_view::npos) return false;
    const std::string literal(host.substr(1, close - 1));
    const std::string_view rest = host.substr(close + 1);
    unsigned char buf[16];
    return (rest.empty() || rest.front() == ':') && inet_pton(AF_INET6, literal.c_str(), buf) == 1;
  }
  const size_t colon = host.find(':');
  std::string name = model::ToAsciiLower(host.substr(0, colon));
  if (colon != std::string_view::npos && host.find(':', colon + 1) != std::string_view::npos) return false;
  while (!name.empty() && name.back() == '.') name.pop_back();  // "localhost." is localhost
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  unsigned char buf[4];
  if (inet_pton(AF_INET, name.c_str(), buf) == 1) return true;
  for (const std::string& allowed : options.allowed_hosts) {
    if (name == allowed) return true;
  }
  return false;
}

std::optional<http::Response> AuthorizeAdmin(const http::Request& request, const protocol::QueryParams& query,
                                             const AdminGrant& grant, const ApiOptions& options) {
  if (grant.admin) return std::nullopt;
  const std::string_view op = OperationOf(request);
  if (op == "snapshot") return NeedsAdmin(request, "a snapshot (of every account's data)");
  if (op == "trace") return NeedsAdmin(request, "the trace (of every account's requests)");
  if (op == "reset") {
    const std::string* one = protocol::FindQueryParam(query, "account");
    if (one == nullptr || one->empty()) return NeedsAdmin(request, "a reset of every account");
    // Another account, configured or not: the same refusal, so that a key
    // does not learn which account names exist.
    if (!grant.Covers(*one)) {
      return Error(request, 403, "AuthorizationFailure", "resetting an account needs its own key or the admin's");
    }
    return std::nullopt;
  }
  if (op == "faults" && request.method() == bhttp::verb::post) {
    auto body = nlohmann::json::parse(request.body(), nullptr, false);
    const auto rules = AccountRules(body);
    if (rules.empty() || !std::all_of(rules.begin(), rules.end(),
                                      [&](const nlohmann::json* r) { return RuleOf(*r, grant.account); })) {
      return Error(request, 403, "AuthorizationFailure",
                   "an account's key may add only rules with \"match\":{\"account\":\"" + grant.account +
                       "\"} (one rule or an array); other rules need the admin credential");
    }
    return std::nullopt;
  }
  if (op == "faults/realistic") {
    auto body = nlohmann::json::parse(request.body(), nullptr, false);
    bool own = NamesAccount(body, grant.account);
    for (const auto& [key, value] : body.is_object() ? body.items() : nlohmann::json::object().items()) {
      own = own && (key == "enabled" || key == "account" || key == "table");
    }
    if (!own) {
      return Error(request, 403, "AuthorizationFailure",
                   "an account's key may switch realistic mode only for itself ({\"enabled\":B,\"account\":\"" +
                       grant.account + "\",\"table\":T}); the global settings need the admin credential");
    }
  }
  return std::nullopt;
}

protocol::ApiResult<AdminGrant> AuthenticateAdminRequest(const http::Request& request,
                                                         const protocol::QueryParams& query,
                                                         const Authenticator& authenticator, bool with_body) {
  std::string_view target(request.target().data(), request.target().size());
  AdminAuthRequest auth;
  auth.method = std::string_view(request.method_string().data(), request.method_string().size());
  auth.path = target.substr(0, target.find('?'));
  auth.query = &query;
  auth.header = [&request](std::string_view name) { return Header(request, name); };
  if (with_body) auth.body = std::string_view(request.body());
  return authenticator.AuthenticateAdmin(auth);
}

protocol::ApiResult<AdminGrant> AuthenticateAdminRequest(const http::Request& request,
                                                         const Authenticator& authenticator, bool with_body) {
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path, raw_query;
  protocol::SplitTarget(target, &path, &raw_query);
  auto query = protocol::ParseQueryString(raw_query);
  if (!query) return protocol::ApiError::InvalidInput("malformed query string");
  return AuthenticateAdminRequest(request, *query, authenticator, with_body);
}

std::optional<http::Response> AdmitAdmin(const http::Request& header, const ApiOptions& options,
                                         const Authenticator& authenticator) {
  if (!IsAllowedHost(Header(header, "Host"), options)) return HostRefusal(header);
  auto grant = AuthenticateAdminRequest(header, authenticator, /*with_body=*/false);
  if (!grant.ok()) return Error(header, grant.error().http_status, grant.error().code, grant.error().message);
  return std::nullopt;
}

http::Response HandleAdmin(const http::Request& request, storage::Engine& engine, const ApiOptions& options,
                           const Authenticator& authenticator, TraceWriter* trace) {
  const auto start = std::chrono::steady_clock::now();
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path, raw_query;
  protocol::SplitTarget(target, &path, &raw_query);
  const ServerRoute* route = FindServerRoute(path);
  if (route == nullptr || route->auth != RouteAuth::kAdminSignature) {
    return Error(request, 404, "ResourceNotFound", "no admin route at this path");
  }
  std::string_view op = path.substr(kPrefix.size());
  const bool fault_route = route->id == ServerRouteId::kFaults || route->id == ServerRouteId::kFaultsRealistic;
  if (fault_route && options.faults == nullptr) return Error(request, 404, "NotFound", "fault injection is off");
  if (!ServesMethod(*route, std::string_view(request.method_string().data(), request.method_string().size()))) {
    return Error(request, 405, "MethodNotAllowed", std::string(route->path) + " takes " + std::string(route->methods));
  }
  if (!IsAllowedHost(Header(request, "Host"), options)) return HostRefusal(request);
  auto query = protocol::ParseQueryString(raw_query);
  if (!query) return Error(request, 400, "InvalidQueryParameterValue", "malformed query string");
  auto grant = AuthenticateAdminRequest(request, *query, authenticator, /*with_body=*/true);
  if (!grant.ok()) return Error(request, grant.error().http_status, grant.error().code, grant.error().message);
  if (fault_route && request.method() == bhttp::verb::post &&
      nlohmann::json::parse(request.body(), nullptr, false).is_discarded()) {
    return Error(request, 400, "InvalidJson", "the body is not JSON");
  }
  if (auto refusal = AuthorizeAdmin(request, *query, *grant, options)) return std::move(*refusal);
  if (op == "reset") {
    const std::string* one = protocol::FindQueryParam(*query, "account");
    if (one != nullptr && !one->empty() &&
        std::none_of(options.accounts.begin(), options.accounts.end(),
                     [&](const AccountKeys& a) { return a.name == *one; })) {
      return Error(request, 404, "AccountNotFound", "no such account: " + *one);
    }
  }

  if (fault_route) return HandleFaults(request, op, *query, *grant, *options.faults);
  if (op == "trace") return HandleTrace(request, options, trace);
  if (op == "snapshot") return HandleSnapshot(request, *query, engine, options, start);
  return HandleReset(request, *query, engine, options, start);
}

}  // namespace tablestone::api
