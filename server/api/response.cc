#include "server/api/response.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/field.hpp>
#include <cstdio>
#include <memory>

#include "protocol/error_body.h"
#include "protocol/operation.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace http_ns = boost::beast::http;

namespace {

std::shared_ptr<spdlog::logger> ApiLog() {
  auto logger = spdlog::get("api");
  return logger ? logger : spdlog::default_logger();
}

std::string_view CauseOf(const protocol::ApiError& error) {
  return error.cause.empty() ? std::string_view(error.message) : std::string_view(error.cause);
}
}  // namespace

void LogServerError(protocol::Operation operation, std::string_view account, std::string_view table,
                    std::string_view request_id, const protocol::ApiError& error) {
  if (error.http_status != 500) return;
  ApiLog()->error("500 {} on {}/{} (request {}): {}: {}", protocol::OperationName(operation), account, table,
                  request_id, error.code, CauseOf(error));
}

void LogServerError(const RequestInfo& info, const protocol::ApiError& error) {
  LogServerError(info.route.operation, info.account(), info.route.resource.table, info.request_id, error);
}

void LogServerError(std::string_view request_id, std::string_view context, const protocol::ApiError& error) {
  if (error.http_status != 500) return;
  ApiLog()->error("500 {} (request {}): {}: {}", context, request_id, error.code, CauseOf(error));
}

void WriteErrorRaw(std::string_view request_id, std::string_view accept, const protocol::ApiError& error,
                   http::Response& response, bool xml, protocol::XmlErrorForm xml_form,
                   protocol::ErrorMessageStyle style) {
  int64_t now = model::NowTicks();
  response.result(static_cast<unsigned>(error.http_status));
  response.set("x-ms-error-code", error.code);
  if (!error.www_authenticate.empty()) response.set(http_ns::field::www_authenticate, error.www_authenticate);
  if (xml) {
    response.set(http_ns::field::content_type, "application/xml");
    response.body() = protocol::RenderXmlError(error, request_id, now, xml_form);
  } else {
    auto level = protocol::NegotiateMetadata(nullptr, accept);
    response.set(http_ns::field::content_type,
                 protocol::JsonContentType(level.ok() ? *level : protocol::MetadataLevel::kMinimalMetadata));
    response.set("X-Content-Type-Options", "nosniff");
    response.set(http_ns::field::cache_control, "no-cache");
    response.set("DataServiceVersion", "3.0;");
    response.body() = protocol::RenderJsonError(error, request_id, now, style);
  }
  response.prepare_payload();
}

namespace {

// An Atom-era request that negotiated Atom gets its errors as the OData XML
// error document, as the service answered those versions.
bool AnswersAtom(const std::string* format, std::string_view accept, std::string_view version) {
  if (!protocol::IsAtomEraVersion(version)) return false;
  auto level = protocol::NegotiateMetadata(format, accept, version);
  return level.ok() && *level == protocol::MetadataLevel::kAtom;
}

}  // namespace

void WriteError(const RequestInfo& info, const protocol::ApiError& error, http::Response& response, bool xml) {
  std::string_view accept = info.Header("Accept");
  const std::string* format = info.Query("$format");
  std::string accept_for_error(accept);
  if (format != nullptr) accept_for_error = *format;
  LogServerError(info, error);
  // An XML-only operation answers its version's form; an Atom answer keeps the OData form.
  const protocol::XmlErrorForm form = xml ? protocol::XmlErrorFormFor(info.api_version) : protocol::XmlErrorForm::kOData;
  xml = xml || AnswersAtom(format, accept, info.api_version);
  WriteErrorRaw(info.request_id, accept_for_error, error, response, xml, form, info.flavor->error_messages);
}

void WriteError(protocol::Operation operation, const RequestParts& parts, std::string_view request_id,
                const protocol::ApiError& error, http::Response& response) {
  std::string_view accept = parts.headers.Get("Accept");
  const std::string* format = parts.Query("$format");
  std::string accept_for_error(accept);
  if (format != nullptr) accept_for_error = *format;
  LogServerError(operation, parts.account, parts.resource.table, request_id, error);
  WriteErrorRaw(request_id, accept_for_error, error, response, AnswersAtom(format, accept, parts.api_version),
                protocol::XmlErrorForm::kOData, parts.flavor->error_messages);
}

void WriteJson(http::Response& response, unsigned status, protocol::MetadataLevel level, std::string body) {
  response.result(status);
  response.set(http_ns::field::content_type, protocol::JsonContentType(level));
  response.set("X-Content-Type-Options", "nosniff");
  response.set(http_ns::field::cache_control, "no-cache");
  response.set("DataServiceVersion", "3.0;");
  response.body() = std::move(body);
  response.prepare_payload();
}

void WriteAtom(http::Response& response, unsigned status, std::string_view content_type, std::string body) {
  response.result(status);
  response.set(http_ns::field::content_type, content_type);
  response.set(http_ns::field::cache_control, "no-cache");
  response.set("DataServiceVersion", "1.0;");
  response.body() = std::move(body);
  response.prepare_payload();
}

void WriteNoContent(http::Response& response, std::string_view data_service_version) {
  response.result(http_ns::status::no_content);
  response.erase(http_ns::field::content_type);
  response.set("X-Content-Type-Options", "nosniff");
  response.set(http_ns::field::cache_control, "no-cache");
  response.set("DataServiceVersion", data_service_version);
  response.body().clear();
  response.content_length(0);
}

namespace {

// The Date header of the current second, formatted once per second per thread:
// per thread so that every response reads it without a lock; the copies only
// ever hold the same text for the same second.
std::string_view CurrentHttpDate() {
  thread_local int64_t cached_second = -1;
  thread_local std::string cached;
  const int64_t second = model::NowTicks() / model::kTicksPerSecond;
  if (second != cached_second) {
    cached = model::FormatRfc1123(second * model::kTicksPerSecond);
    cached_second = second;
  }
  return cached;
}

}  // namespace

// insert, not set: no handler sets these headers, and set() would first search
// for (and erase) an existing field of the same name.
void SetCommonHeaders(const http::Request& request, std::string_view request_id, http::Response& response) {
  response.insert("x-ms-request-id", request_id);
  const std::optional<std::string_view> version = FindRequestHeader(request, "x-ms-version");
  if (version && !version->empty()) {
    response.insert("x-ms-version", *version);
  } else {
    response.insert("x-ms-version", protocol::kDefaultApiVersion);
  }
  response.insert(http_ns::field::date, CurrentHttpDate());
  response.insert(http_ns::field::server, kServerHeader);
  if (auto client_id = FindRequestHeader(request, "x-ms-client-request-id")) {
    response.insert("x-ms-client-request-id", *client_id);
  }
}

}  // namespace tablestone::api
