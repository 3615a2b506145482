// The one renderer of error bodies (Learn: table-service-error-codes). Every error a client sees is
// written here, so the shape stays identical across handlers and batch parts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "protocol/api_error.h"

namespace tablestone::protocol {

// How a message ends, by the service imitated (FlavorPolicy::error_messages).
enum class ErrorMessageStyle {
  // Table storage: "\nRequestId:<id>\nTime:<yyyy-MM-ddTHH:mm:ss.fffffffZ>" (7 digits).
  kStorage,
  // Cosmos DB for Table, as recorded in azure-sdk-for-net's Cosmos session
  // records (GetEntityIfExistsDoesNotThrowWhenNotExists.json, BatchError.json):
  // "\nRequestID:<id>\n", no Time line, a change set's part with a blank line
  // before it ("3:<message>\n\nRequestID:<id>\n"); lang "en-us".
  kCosmos,
};

// "[<failed_index>:]<message>" and the ending of `style`.
std::string ErrorMessageText(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                             ErrorMessageStyle style = ErrorMessageStyle::kStorage);

// {"odata.error":{"code":"..","message":{"lang":"en-US","value":".."}}}
std::string RenderJsonError(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                            ErrorMessageStyle style = ErrorMessageStyle::kStorage);

// The two XML error documents of the service (docs/compatibility.md, "XML
// error bodies"): kOData is the unprefixed OData <error> the Atom payloads and
// the versions before 2013-08-15 use; kPrefixed the m:-prefixed <m:error> the
// service's XML-only operations (ACL, service properties, stats, CORS
// preflight) answer from 2013-08-15 on, as recorded in
// Azure/azure-sdk-for-net#21913.
enum class XmlErrorForm { kOData, kPrefixed };

// The form an XML-only operation answers for `version` ("" = no x-ms-version,
// answered as 2019-02-02).
XmlErrorForm XmlErrorFormFor(std::string_view version);

std::string RenderXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks,
                           XmlErrorForm form = XmlErrorForm::kOData);

// What AppendJsonString does with bytes that are not valid UTF-8.
enum class InvalidUtf8 {
  kCopy,     // copied as they are: for text already validated (entities, names)
  kReplace,  // each replaced by U+FFFD, so any byte string (a traced body) yields valid JSON
};

// Appends `text` as a JSON string literal (with quotes) to `out`: quotes,
// backslashes and control characters (and DEL) escaped. The project's one
// JSON string escaper: every hand-built JSON document in server/ uses it.
void AppendJsonString(std::string& out, std::string_view text, InvalidUtf8 invalid = InvalidUtf8::kCopy);
// The most bytes the literal of a `size`-byte text takes (every byte \u00XX).
constexpr size_t JsonStringMaxSize(size_t size) { return 6 * size + 2; }
// The exact size of the literal WriteJsonString writes for `text` (quotes
// included): one pass over the text, no writing.
size_t JsonStringSize(std::string_view text);
// Writes the literal at `out`, which has room for JsonStringMaxSize(text.size())
// bytes; returns one past its last byte. For writers that manage their buffer.
char* WriteJsonString(char* out, std::string_view text);
// Appends `text` with XML special characters escaped (&, <, >, ", ' and the
// carriage return, which XML readers would otherwise turn into a line feed).
void AppendXmlEscaped(std::string& out, std::string_view text);

}  // namespace tablestone::protocol
