// Response building blocks shared by every handler, so headers and error
// bodies look the same everywhere (Learn: query-entities, table-service-error-codes).
#pragma once

#include <string>
#include <string_view>

#include "protocol/api_error.h"
#include "protocol/error_body.h"
#include "protocol/operation.h"
#include "protocol/request_options.h"
#include "server/api/api_context.h"
#include "server/api/request_parts.h"
#include "server/http/handler.h"

namespace tablestone::api {

inline constexpr std::string_view kServerHeader = "Tablestone-Table/0.1 (Windows-Azure-Table/1.0 compatible)";

// Error response: status, x-ms-error-code and the body from protocol/error_body
// (JSON; the XML-only operations' XML when `xml`, its form by x-ms-version; the
// OData XML shape when the request negotiated Atom). The JSON Content-Type follows the negotiated metadata level (minimal
// when negotiation itself failed).
// A 500 is logged here (LogServerError), so handlers only write the error.
void WriteError(const RequestInfo& info, const protocol::ApiError& error, http::Response& response,
                bool xml = false);
// The same for a request known by its parts (the GET inside $batch has no
// RequestInfo of its own): `operation` names it in the 500 log line. JSON, or XML
// for a request that negotiated Atom.
void WriteError(protocol::Operation operation, const RequestParts& parts, std::string_view request_id,
                const protocol::ApiError& error, http::Response& response);
// Same without a routed request (transport errors, version/route failures).
// It does not log: its caller logs a 500 with what it knows (LogServerError),
// or leaves it to the HTTP layer that already logged the cause.
// `xml_form` is the XML document's form when `xml` (protocol/error_body.h);
// `style` how a JSON message ends (the listener's FlavorPolicy::error_messages).
void WriteErrorRaw(std::string_view request_id, std::string_view accept, const protocol::ApiError& error,
                   http::Response& response, bool xml = false,
                   protocol::XmlErrorForm xml_form = protocol::XmlErrorForm::kOData,
                   protocol::ErrorMessageStyle style = protocol::ErrorMessageStyle::kStorage);

// The one log line of a 500 answer, on the "api" logger: operation, account/
// table, request id and the cause (error.cause, else its message). Does
// nothing for any other status, so callers need not check. Every path that
// answers 500 calls it exactly once: WriteError, the batch failure part, and
// the dispatcher's answers outside a handler.
void LogServerError(const RequestInfo& info, const protocol::ApiError& error);
void LogServerError(protocol::Operation operation, std::string_view account, std::string_view table,
                    std::string_view request_id, const protocol::ApiError& error);
void LogServerError(std::string_view request_id, std::string_view context, const protocol::ApiError& error);

// 200/201 JSON body with the OData Content-Type, nosniff, no-cache and
// DataServiceVersion 3.0.
void WriteJson(http::Response& response, unsigned status, protocol::MetadataLevel level, std::string body);

// 200/201 AtomPub body (protocol/atom/atom_writer.h's content types), no-cache
// and DataServiceVersion 1.0.
void WriteAtom(http::Response& response, unsigned status, std::string_view content_type, std::string body);

// 204 with no body (no Content-Type), nosniff, no-cache.
void WriteNoContent(http::Response& response, std::string_view data_service_version = "1.0;");

// Adds x-ms-request-id, x-ms-version, Date, Server, x-ms-client-request-id echo.
// Called once per response, which must not carry these headers yet.
void SetCommonHeaders(const http::Request& request, std::string_view request_id, http::Response& response);

}  // namespace tablestone::api
