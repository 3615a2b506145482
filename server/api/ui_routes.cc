#include "server/api/ui_routes.h"

#include <string>

#include "protocol/error_body.h"
#include "server/ui/ui_assets.h"

namespace tablestone::api {
namespace {

namespace bhttp = boost::beast::http;

// No inline script or style, nothing from another origin; connect-src 'self'
// covers the Table API and the metrics route on the same host and port.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

void SetCommon(http::Response& response) {
  response.set(bhttp::field::cache_control, "no-cache");
  response.set("Content-Security-Policy", kContentSecurityPolicy);
  response.set("X-Content-Type-Options", "nosniff");
  response.set("Referrer-Policy", "no-referrer");
}

void NotFound(http::Response& response) {
  response.result(bhttp::status::not_found);
  response.set(bhttp::field::content_type, "text/plain; charset=utf-8");
  response.body() = "not found\n";
}

// Account names and the version are operator-chosen (a command line may
// carry any bytes): every character survives, escaped, and the document is
// valid JSON whatever they hold.
std::string ConfigJson(std::string_view remote_ip, const ApiOptions& options) {
  std::string out = "{\"accounts\":[";
  for (size_t i = 0; i < options.accounts.size(); ++i) {
    if (i > 0) out += ',';
    protocol::AppendJsonString(out, options.accounts[i].name, protocol::InvalidUtf8::kReplace);
  }
  const bool dev_key = options.ui_dev_key && IsLoopbackAddress(remote_ip);
  out += "],\"devKey\":";
  out += dev_key ? "true" : "false";
  out += ",\"version\":";
  protocol::AppendJsonString(out, options.facts.version, protocol::InvalidUtf8::kReplace);
  out += '}';
  return out;
}

}  // namespace

void ServeUi(std::string_view path, std::string_view remote_ip, const ApiOptions& options, http::Response& response) {
  SetCommon(response);
  if (path.size() == kUiPrefix.size()) {
    // Relative asset URLs in the page resolve against the directory.
    response.result(bhttp::status::permanent_redirect);
    response.set(bhttp::field::location, std::string(kUiPrefix) + "/");
    return;
  }
  std::string_view name = path.substr(kUiPrefix.size() + 1);
  if (name.empty()) name = "index.html";
  if (name == "config.json") {
    response.result(bhttp::status::ok);
    response.set(bhttp::field::content_type, "application/json");
    response.set(bhttp::field::cache_control, "no-store");
    response.body() = ConfigJson(remote_ip, options);
    return;
  }
  const ui::EmbeddedFile* file = ui::FindEmbeddedFile(name);
  if (file == nullptr) return NotFound(response);
  response.result(bhttp::status::ok);
  response.set(bhttp::field::content_type, ui::ContentTypeOf(name));
  response.body().assign(file->bytes.data(), file->bytes.size());
}

void ServeUiAtRoot(http::Response& response) {
  SetCommon(response);
  response.result(bhttp::status::found);
  response.set(bhttp::field::location, std::string(kUiPrefix) + "/");
  response.set(bhttp::field::content_type, "text/plain; charset=utf-8");
  response.body() = "The tablestone data browser is at " + std::string(kUiPrefix) + "/\n";
}

}  // namespace tablestone::api
