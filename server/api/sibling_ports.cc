#include "server/api/sibling_ports.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include "protocol/api_error.h"
#include "protocol/error_body.h"
#include "protocol/guid.h"
#include "protocol/url.h"
#include "server/api/request_parts.h"
#include "server/api/response.h"
#include "storage/model/datetime.h"

namespace tablestone::api {
namespace {

namespace http_ns = boost::beast::http;

std::string_view ServiceName(SiblingService service) { return service == SiblingService::kBlob ? "Blob" : "Queue"; }

// A request the sibling port answers with an empty list, or why not.
struct ListCall {
  bool is_list = false;
  std::string account;  // empty for a URL without one (host-style)
  std::optional<std::string> prefix, marker, max_results;
};

// GET /?comp=list or GET /<account>[/]?comp=list with no restype (with one,
// or with a second path segment, it is List Blobs or a container/queue
// operation, which are refused like any other).
ListCall ParseListCall(const http::Request& request) {
  ListCall call;
  if (request.method() != http_ns::verb::get) return call;
  std::string_view target(request.target().data(), request.target().size());
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  std::string_view query = question == std::string_view::npos ? std::string_view() : target.substr(question + 1);
  auto params = protocol::ParseQueryString(query);
  if (!params) return call;
  const std::string* comp = protocol::FindQueryParam(*params, "comp");
  if (comp == nullptr || *comp != "list" || protocol::FindQueryParam(*params, "restype") != nullptr) return call;
  if (path.empty() || path.front() != '/') return call;
  path.remove_prefix(1);
  if (!path.empty() && path.back() == '/') path.remove_suffix(1);
  if (path.find('/') != std::string_view::npos) return call;
  auto account = protocol::PercentDecodePath(path);
  if (!account) return call;
  call.account = *account;
  if (const std::string* v = protocol::FindQueryParam(*params, "prefix")) call.prefix = *v;
  if (const std::string* v = protocol::FindQueryParam(*params, "marker")) call.marker = *v;
  if (const std::string* v = protocol::FindQueryParam(*params, "maxresults")) call.max_results = *v;
  call.is_list = true;
  return call;
}

void AppendElement(std::string& out, std::string_view name, const std::optional<std::string>& value) {
  if (!value) return;
  out += '<';
  out += name;
  out += '>';
  protocol::AppendXmlEscaped(out, *value);
  out += "</";
  out += name;
  out += '>';
}

}  // namespace

SiblingPortHandler::SiblingPortHandler(SiblingPortOptions options) : options_(std::move(options)) {}

std::string SiblingPortHandler::RefusalMessage() const {
  const bool blob = options_.service == SiblingService::kBlob;
  return std::string("This is tablestone, which provides the Azure Table service only (at ") + options_.table_url +
         "). This " + std::string(ServiceName(options_.service)) + " port answers " +
         (blob ? "List Containers" : "List Queues") +
         " with an empty list, for readiness checks, and refuses every other request. For Blob and Queue "
         "storage use Azurite (the image mcr.microsoft.com/azure-storage/azurite, or azurite-blob and "
         "azurite-queue from npm) or an Azure Storage account.";
}

void SiblingPortHandler::WriteXmlError(const http::Request& request, unsigned status, std::string_view code,
                                       const std::string& message, http::Response& response) const {
  const std::string request_id = protocol::NewGuid();
  protocol::ApiError error;
  error.http_status = static_cast<int>(status);
  error.code = std::string(code);
  error.message = message;
  // The Blob and Queue services' error document: <Error><Code/><Message/></Error>
  // (Learn: "Status and error codes"), not the Table service's OData one.
  std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>";
  protocol::AppendXmlEscaped(body, code);
  body += "</Code><Message>";
  protocol::AppendXmlEscaped(body, protocol::ErrorMessageText(error, request_id, model::NowTicks()));
  body += "</Message></Error>";
  response.result(status);
  SetCommonHeaders(request, request_id, response);
  response.set("x-ms-error-code", code);
  response.set(http_ns::field::content_type, "application/xml");
  response.body() = std::move(body);
}

void SiblingPortHandler::Answer(const http::Request& request, bool is_tls, http::Response& response) const {
  const ListCall call = ParseListCall(request);
  if (!call.is_list) {
    WriteXmlError(request, 501, "NotImplemented", RefusalMessage(), response);
    return;
  }
  if (!call.account.empty() &&
      std::find(options_.accounts.begin(), options_.accounts.end(), call.account) == options_.accounts.end()) {
    WriteXmlError(request, 404, "ResourceNotFound",
                  "The specified resource does not exist: this server has no account '" + call.account + "'.",
                  response);
    return;
  }
  if (call.max_results) {
    uint64_t n = 0;
    const std::string& text = *call.max_results;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (ec != std::errc() || end != text.data() + text.size() || n == 0) {
      WriteXmlError(request, 400, "OutOfRangeQueryParameterValue",
                    "One of the query parameters specified in the request URI is outside the permissible range.",
                    response);
      return;
    }
  }
  std::string endpoint = is_tls ? "https://" : "http://";
  auto host = request.find(http_ns::field::host);
  if (host != request.end()) endpoint.append(host->value().data(), host->value().size());
  endpoint += '/';
  if (!call.account.empty()) endpoint += call.account + '/';

  std::string body = "<?xml version=\"1.0\" encoding=\"utf-8\"?><EnumerationResults ServiceEndpoint=\"";
  protocol::AppendXmlEscaped(body, endpoint);
  body += "\">";
  AppendElement(body, "Prefix", call.prefix);
  AppendElement(body, "Marker", call.marker);
  AppendElement(body, "MaxResults", call.max_results);
  body += options_.service == SiblingService::kBlob ? "<Containers />" : "<Queues />";
  body += "<NextMarker /></EnumerationResults>";
  response.result(http_ns::status::ok);
  SetCommonHeaders(request, protocol::NewGuid(), response);
  response.set(http_ns::field::content_type, "application/xml");
  response.body() = std::move(body);
}

void SiblingPortHandler::Handle(const http::Request& request, const http::RequestContext& context,
                                http::Completion done) {
  http::Response response;
  response.version(request.version());
  Answer(request, context.is_tls, response);
  done(std::move(response));
}

bool SiblingPortHandler::AdmitHeaders(const http::Request& header, const http::RequestContext& context,
                                      http::Response& refusal) {
  if (ParseListCall(header).is_list) return true;
  refusal.version(header.version());
  WriteXmlError(header, 501, "NotImplemented", RefusalMessage(), refusal);
  return false;
}

void SiblingPortHandler::RenderTransportError(http::TransportError error, const http::Request& partial_request,
                                              http::Response& response) {
  switch (error) {
    case http::TransportError::kBodyTooLarge:
      WriteXmlError(partial_request, 413, "RequestBodyTooLarge", "The request body is too large.", response);
      return;
    case http::TransportError::kHeaderTooLarge:
      WriteXmlError(partial_request, 400, "RequestHeaderTooLarge", "The request headers are too large.", response);
      return;
    case http::TransportError::kBadRequest:
      WriteXmlError(partial_request, 400, "InvalidInput", "The request is not valid HTTP.", response);
      return;
    case http::TransportError::kInternalError:
      break;
  }
  WriteXmlError(partial_request, 500, "InternalError", "The server encountered an internal error.", response);
}

}  // namespace tablestone::api
