#include "protocol/error_body.h"

#include "storage/model/datetime.h"

namespace tablestone::protocol {

void AppendJsonString(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (char ch : text) {
    unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

void AppendXmlEscaped(std::string& out, std::string_view text) {
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
}

std::string ErrorMessageText(const ApiError& error, std::string_view request_id, int64_t time_ticks) {
  std::string text = error.message;
  text += "\nRequestId:";
  text += request_id;
  text += "\nTime:";
  text += model::FormatDateTime7(time_ticks);
  return text;
}

std::string RenderJsonError(const ApiError& error, std::string_view request_id, int64_t time_ticks) {
  std::string out = "{\"odata.error\":{\"code\":";
  AppendJsonString(out, error.code);
  out += ",\"message\":{\"lang\":\"en-US\",\"value\":";
  AppendJsonString(out, ErrorMessageText(error, request_id, time_ticks));
  out += "}}}";
  return out;
}

std::string RenderXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>"
      "<error xmlns=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\"><code>";
  AppendXmlEscaped(out, error.code);
  out += "</code><message xml:lang=\"en-US\">";
  AppendXmlEscaped(out, ErrorMessageText(error, request_id, time_ticks));
  out += "</message></error>";
  return out;
}

}  // namespace tablestone::protocol
