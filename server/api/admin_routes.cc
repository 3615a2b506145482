#include "server/api/admin_routes.h"

#include <chrono>
#include <nlohmann/json.hpp>

#include "protocol/auth/hmac.h"
#include "protocol/auth/shared_key.h"
#include "protocol/base64.h"
#include "protocol/url.h"
#include "server/faults/fault_rules.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;

constexpr std::string_view kPrefix = "/_tablestone/";
// A signed request older or newer than this is refused, as the service
// refuses a stale x-ms-date (Learn: authorize-with-shared-key).
constexpr int64_t kMaxClockSkewTicks = 15LL * 60 * model::kTicksPerSecond;

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

std::string Header(const http::Request& request, std::string_view name) {
  auto it = request.find(boost::beast::string_view(name.data(), name.size()));
  return it == request.end() ? std::string() : std::string(it->value());
}

// Which account signed the request, or empty when no configured key did.
std::string SignedBy(const http::Request& request, std::string_view path, const ApiOptions& options) {
  auto auth = protocol::auth::ParseSharedKeyAuthorization(Header(request, "Authorization"));
  if (!auth || auth->scheme != protocol::auth::SharedKeyScheme::kSharedKey) return {};
  std::string date = Header(request, "x-ms-date");
  if (date.empty()) date = Header(request, "Date");
  auto ticks = model::ParseRfc1123(date);
  if (!ticks || std::llabs(*ticks - model::NowTicks()) > kMaxClockSkewTicks) return {};
  std::string to_sign = protocol::auth::SharedKeyStringToSign(
      std::string(request.method_string()), Header(request, "Content-MD5"), Header(request, "Content-Type"), date,
      protocol::auth::CanonicalizedResource(auth->account, path, std::nullopt));
  for (const AccountKeys& account : options.accounts) {
    if (account.name != auth->account) continue;
    for (const std::string& key : account.keys) {
      auto raw = protocol::Base64Decode(key);
      if (raw && protocol::auth::ConstantTimeEquals(protocol::auth::SignBase64(*raw, to_sign), auth->signature)) {
        return account.name;
      }
    }
  }
  return {};
}

double MillisSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

// GET and POST /_tablestone/trace (after authentication).
http::Response HandleTrace(const http::Request& request, TraceWriter* trace) {
  if (trace == nullptr) return Error(request, 404, "ResourceNotFound", "this server has no request trace");
  if (request.method() == bhttp::verb::post) {
    nlohmann::json body = nlohmann::json::parse(request.body(), nullptr, /*allow_exceptions=*/false);
    if (!body.is_object() || !body.contains("enabled") || !body["enabled"].is_boolean() ||
        (body.contains("file") && !body["file"].is_string()) ||
        (body.contains("bodies") && !body["bodies"].is_boolean())) {
      return Error(request, 400, "InvalidInput",
                   "expected a JSON object {\"enabled\":bool,\"file\":string,\"bodies\":bool}");
    }
    if (!body["enabled"].get<bool>()) {
      trace->Stop();
    } else {
      // Without "file", tracing that is on keeps its file (only "bodies" changes).
      std::string file = body.contains("file") ? body["file"].get<std::string>() : trace->path();
      if (file.empty()) return Error(request, 400, "InvalidInput", "enabling the trace needs \"file\"");
      std::string why;
      if (!trace->Start(file, body.value("bodies", false), &why)) return Error(request, 500, "InternalError", why);
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

}  // namespace

bool IsAdminTarget(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  return path == "/_tablestone/snapshot" || path == "/_tablestone/reset" || path == "/_tablestone/trace" ||
         path == "/_tablestone/faults" || path == "/_tablestone/faults/realistic";
}

namespace {

// The fault routes (admin_routes.h); `query` is the parsed query string.
http::Response HandleFaults(const http::Request& request, std::string_view op, const protocol::QueryParams& query,
                            faults::FaultSet& faults) {
  std::string error;
  if (op == "faults/realistic") {
    if (request.method() != bhttp::verb::post) return Error(request, 405, "MethodNotAllowed", "realistic takes POST");
    auto body = nlohmann::json::parse(request.body(), nullptr, false);
    if (body.is_discarded()) return Error(request, 400, "InvalidJson", "the body is not JSON");
    if (!faults.SetRealisticJson(body, &error)) return Error(request, 400, "InvalidFaultRule", error);
    return Json(request, 200, faults.ToJson());
  }
  switch (request.method()) {
    case bhttp::verb::get: return Json(request, 200, faults.ToJson());
    case bhttp::verb::post: {
      auto body = nlohmann::json::parse(request.body(), nullptr, false);
      if (body.is_discarded()) return Error(request, 400, "InvalidJson", "the body is not JSON");
      auto ids = faults.AddJson(body, &error);
      if (!ids) return Error(request, 400, "InvalidFaultRule", error);
      return Json(request, 201, {{"ids", *ids}});
    }
    case bhttp::verb::delete_: {
      if (const std::string* id = protocol::FindQueryParam(query, "id"); id != nullptr) {
        if (!faults.Remove(*id)) return Error(request, 404, "FaultRuleNotFound", "no fault rule with id " + *id);
        return Json(request, 200, {{"removed", {*id}}});
      }
      faults.Clear();
      return Json(request, 200, {{"cleared", true}});
    }
    default: return Error(request, 405, "MethodNotAllowed", "fault routes take GET, POST or DELETE");
  }
}

}  // namespace

http::Response HandleAdmin(const http::Request& request, storage::Engine& engine, const ApiOptions& options,
                           TraceWriter* trace) {
  const auto start = std::chrono::steady_clock::now();
  std::string_view target(request.target().data(), request.target().size());
  std::string_view path, raw_query;
  protocol::SplitTarget(target, &path, &raw_query);
  std::string_view op = path.substr(kPrefix.size());
  const bool get_trace = op == "trace" && request.method() == bhttp::verb::get;
  const bool fault_route = op.substr(0, 6) == "faults";
  if (fault_route && options.faults == nullptr) return Error(request, 404, "NotFound", "fault injection is off");
  if (!fault_route && request.method() != bhttp::verb::post && !get_trace) {
    return Error(request, 405, "MethodNotAllowed", "admin routes take POST (and GET for the trace)");
  }
  auto query = protocol::ParseQueryString(raw_query);
  if (!query) return Error(request, 400, "InvalidQueryParameterValue", "malformed query string");
  const std::string signer = SignedBy(request, path, options);
  if (signer.empty()) {
    return Error(request, 403, "AuthenticationFailed",
                 "admin routes need a Shared Key signature of a configured account key (docs/admin-api.md)");
  }
  if (fault_route) return HandleFaults(request, op, *query, *options.faults);

  if (op == "trace") return HandleTrace(request, trace);
  if (op == "snapshot") {
    const std::string* to = protocol::FindQueryParam(*query, "to");
    if (to == nullptr || to->empty()) return Error(request, 400, "MissingRequiredQueryParameter", "snapshot needs ?to=DIR");
    Status s = engine.CreateCheckpoint(*to);
    if (!s.ok()) {
      int status = s.code() == StatusCode::kInvalidArgument ? 409 : 500;
      return Error(request, status, status == 409 ? "SnapshotNotPossible" : "InternalError", s.message());
    }
    return Json(request, 201, {{"snapshot", *to}, {"ms", MillisSince(start)}});
  }

  // reset
  std::vector<std::string> accounts;
  if (const std::string* one = protocol::FindQueryParam(*query, "account"); one != nullptr && !one->empty()) {
    bool known = false;
    for (const auto& a : options.accounts) known = known || a.name == *one;
    if (!known) return Error(request, 404, "AccountNotFound", "no such account: " + *one);
    if (*one != signer) return Error(request, 403, "AuthenticationFailed", "resetting an account needs its own key");
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

}  // namespace tablestone::api
