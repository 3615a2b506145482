#include "protocol/xml/service_xml.h"

#include <charconv>

#include "protocol/xml/xml.h"
#include "storage/model/datetime.h"

namespace tablestone::protocol::xml {
namespace {

std::string_view Text(const XmlElement* el) { return el == nullptr ? std::string_view() : TrimXmlSpace(el->text); }

// Reads an optional boolean child into *out; false on a bad value.
bool ReadBool(const XmlElement& parent, std::string_view name, bool* out) {
  const XmlElement* c = parent.Child(name);
  if (c == nullptr) return true;
  std::string_view v = Text(c);
  if (v == "true") {
    *out = true;
  } else if (v == "false") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

bool ParseInt(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && p == text.data() + text.size();
}

std::optional<ApiError> ReadRetention(const XmlElement& parent, RetentionPolicy* out) {
  const XmlElement* r = parent.Child("RetentionPolicy");
  if (r == nullptr) return std::nullopt;
  RetentionPolicy policy;
  if (!ReadBool(*r, "Enabled", &policy.enabled)) return ApiError::InvalidXmlNodeValue();
  if (policy.enabled) {
    int64_t days = 0;
    if (!ParseInt(Text(r->Child("Days")), &days) || days < kMinRetentionDays || days > kMaxRetentionDays) {
      return ApiError::InvalidXmlNodeValue();
    }
    policy.days = static_cast<int>(days);
  }
  *out = policy;
  return std::nullopt;
}

std::optional<ApiError> ReadMetrics(const XmlElement& el, MetricsSettings* out) {
  if (auto v = Text(el.Child("Version")); !v.empty()) out->version = std::string(v);
  if (!ReadBool(el, "Enabled", &out->enabled)) return ApiError::InvalidXmlNodeValue();
  if (el.Child("IncludeAPIs") != nullptr) {
    bool include = false;
    if (!ReadBool(el, "IncludeAPIs", &include)) return ApiError::InvalidXmlNodeValue();
    out->include_apis = include;
  }
  if (!out->enabled) out->include_apis.reset();
  return ReadRetention(el, &out->retention);
}

// Counts comma-separated items; false if any item is empty (",," or a
// trailing comma).
bool CountItems(std::string_view list, size_t* count) {
  *count = 0;
  if (list.empty()) return true;
  while (true) {
    size_t comma = list.find(',');
    if (TrimXmlSpace(list.substr(0, comma)).empty()) return false;
    ++*count;
    if (comma == std::string_view::npos) return true;
    list = list.substr(comma + 1);
  }
}

// Longest origin or header entry the service accepts (256 characters, "CORS
// support for the Azure Storage services" on Microsoft Learn).
constexpr size_t kMaxCorsItemLength = 256;

// RFC 9110 section 5.6.2 tchar.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

// Spaces and tabs around an item, as SplitCorsList (server/api/cors.h) trims
// them when the rule is applied; a CR or LF inside the list stays part of an
// item, and so makes it invalid.
std::string_view TrimSpaceAndTab(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls `ok` on every trimmed item of a comma list; false as soon as one fails.
template <typename F>
bool AllItems(std::string_view list, F ok) {
  if (list.empty()) return true;
  while (true) {
    size_t comma = list.find(',');
    if (!ok(TrimSpaceAndTab(list.substr(0, comma)))) return false;
    if (comma == std::string_view::npos) return true;
    list = list.substr(comma + 1);
  }
}

}  // namespace

bool IsCorsHeaderEntry(std::string_view entry) {
  if (entry == "*") return true;
  if (entry.empty() || entry.size() > kMaxCorsItemLength) return false;
  // A prefix entry ("x-ms-meta-*") names the headers it starts.
  std::string_view name = entry.back() == '*' ? entry.substr(0, entry.size() - 1) : entry;
  if (name.empty()) return false;
  for (char c : name) {
    if (c == '*' || !IsTokenChar(c)) return false;
  }
  return true;
}

bool IsCorsOriginEntry(std::string_view entry) {
  if (entry == "*") return true;
  if (entry.empty() || entry.size() > kMaxCorsItemLength) return false;
  // Any origin string the service stores ("www.xyz.com" as well as
  // "https://host:port"): only what could not travel in a header (controls,
  // spaces, DEL, non-ASCII) or would split the list (',') is refused.
  for (char c : entry) {
    if (c <= 0x20 || c >= 0x7F || c == ',') return false;
  }
  return true;
}

namespace {

bool IsCorsMethod(std::string_view m) {
  // PATCH: accepted by newer service versions (undocumented; docs/compatibility-notes/batch-auth.md); SDKs
  // send it for MERGE-like updates, so refusing it would only hurt.
  for (std::string_view allowed : {"DELETE", "GET", "HEAD", "MERGE", "POST", "OPTIONS", "PUT", "PATCH"}) {
    if (m == allowed) return true;
  }
  return false;
}

std::optional<ApiError> ReadCorsRule(const XmlElement& el, CorsRule* out) {
  const XmlElement* origins = el.Child("AllowedOrigins");
  const XmlElement* methods = el.Child("AllowedMethods");
  const XmlElement* max_age = el.Child("MaxAgeInSeconds");
  if (origins == nullptr || methods == nullptr || max_age == nullptr) return ApiError::InvalidXmlDocument();
  out->allowed_origins = std::string(Text(origins));
  out->allowed_methods = std::string(Text(methods));
  out->allowed_headers = std::string(Text(el.Child("AllowedHeaders")));
  out->exposed_headers = std::string(Text(el.Child("ExposedHeaders")));
  if (!ParseInt(Text(max_age), &out->max_age_seconds) || out->max_age_seconds < 0) {
    return ApiError::InvalidXmlNodeValue();
  }
  size_t n = 0;
  if (out->allowed_origins.empty() || !CountItems(out->allowed_origins, &n) || n > kMaxCorsListItems) {
    return ApiError::InvalidXmlNodeValue();
  }
  // Origins and header names are sent back in Access-Control-* response
  // headers: anything but an origin or a header name (a CR/LF above all) would
  // inject headers into every CORS response.
  if (!AllItems(out->allowed_origins, IsCorsOriginEntry)) return ApiError::InvalidXmlNodeValue();
  for (const std::string* list : {&out->allowed_headers, &out->exposed_headers}) {
    if (!CountItems(*list, &n) || n > kMaxCorsListItems) return ApiError::InvalidXmlNodeValue();
    if (!AllItems(*list, IsCorsHeaderEntry)) return ApiError::InvalidXmlNodeValue();
  }
  if (out->allowed_methods.empty()) return ApiError::InvalidXmlNodeValue();
  std::string_view methods_list = out->allowed_methods;
  while (true) {
    size_t comma = methods_list.find(',');
    if (!IsCorsMethod(TrimXmlSpace(methods_list.substr(0, comma)))) return ApiError::InvalidXmlNodeValue();
    if (comma == std::string_view::npos) break;
    methods_list = methods_list.substr(comma + 1);
  }
  return std::nullopt;
}

const char* Bool(bool b) { return b ? "true" : "false"; }

void WriteRetention(std::string* out, const RetentionPolicy& r) {
  *out += "<RetentionPolicy><Enabled>";
  *out += Bool(r.enabled);
  *out += "</Enabled>";
  if (r.enabled && r.days) *out += "<Days>" + std::to_string(*r.days) + "</Days>";
  *out += "</RetentionPolicy>";
}

void WriteMetrics(std::string* out, std::string_view tag, const MetricsSettings& m) {
  *out += "<" + std::string(tag) + "><Version>" + XmlEscape(m.version) + "</Version><Enabled>";
  *out += Bool(m.enabled);
  *out += "</Enabled>";
  if (m.enabled) {
    *out += "<IncludeAPIs>";
    *out += Bool(m.include_apis.value_or(false));
    *out += "</IncludeAPIs>";
  }
  WriteRetention(out, m.retention);
  *out += "</" + std::string(tag) + ">";
}

}  // namespace

ApiResult<ServicePropertiesUpdate> ParseServiceProperties(std::string_view body) {
  auto doc = ParseXml(body);
  if (!doc.ok()) return doc.error();
  if (doc->name != "StorageServiceProperties") return ApiError::InvalidXmlDocument();
  ServicePropertiesUpdate update;
  if (const XmlElement* el = doc->Child("Logging")) {
    LoggingSettings logging;
    if (auto v = Text(el->Child("Version")); !v.empty()) logging.version = std::string(v);
    if (!ReadBool(*el, "Delete", &logging.delete_) || !ReadBool(*el, "Read", &logging.read) ||
        !ReadBool(*el, "Write", &logging.write)) {
      return ApiError::InvalidXmlNodeValue();
    }
    if (auto e = ReadRetention(*el, &logging.retention)) return *e;
    update.logging = logging;
  }
  for (auto [tag, slot] : {std::pair{"HourMetrics", &update.hour_metrics},
                           std::pair{"MinuteMetrics", &update.minute_metrics}}) {
    if (const XmlElement* el = doc->Child(tag)) {
      MetricsSettings metrics;
      if (auto e = ReadMetrics(*el, &metrics)) return *e;
      *slot = metrics;
    }
  }
  if (const XmlElement* el = doc->Child("Cors")) {
    std::vector<const XmlElement*> rules = el->Children("CorsRule");
    if (rules.size() > kMaxCorsRules) return ApiError::InvalidXmlDocument();
    std::vector<CorsRule> parsed;
    for (const XmlElement* r : rules) {
      CorsRule rule;
      if (auto e = ReadCorsRule(*r, &rule)) return *e;
      parsed.push_back(std::move(rule));
    }
    update.cors = std::move(parsed);
  }
  return update;
}

ServiceProperties MergeServiceProperties(const ServiceProperties& current, const ServicePropertiesUpdate& update) {
  ServiceProperties out = current;
  if (update.logging) out.logging = *update.logging;
  if (update.hour_metrics) out.hour_metrics = *update.hour_metrics;
  if (update.minute_metrics) out.minute_metrics = *update.minute_metrics;
  if (update.cors) out.cors = *update.cors;
  return out;
}

std::string WriteServiceProperties(const ServiceProperties& p) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceProperties>";
  out += "<Logging><Version>" + XmlEscape(p.logging.version) + "</Version>";
  out += std::string("<Delete>") + Bool(p.logging.delete_) + "</Delete>";
  out += std::string("<Read>") + Bool(p.logging.read) + "</Read>";
  out += std::string("<Write>") + Bool(p.logging.write) + "</Write>";
  WriteRetention(&out, p.logging.retention);
  out += "</Logging>";
  WriteMetrics(&out, "HourMetrics", p.hour_metrics);
  WriteMetrics(&out, "MinuteMetrics", p.minute_metrics);
  if (p.cors.empty()) {
    out += "<Cors />";
  } else {
    out += "<Cors>";
    for (const CorsRule& r : p.cors) {
      out += "<CorsRule><AllowedOrigins>" + XmlEscape(r.allowed_origins) + "</AllowedOrigins>";
      out += "<AllowedMethods>" + XmlEscape(r.allowed_methods) + "</AllowedMethods>";
      out += "<MaxAgeInSeconds>" + std::to_string(r.max_age_seconds) + "</MaxAgeInSeconds>";
      out += "<ExposedHeaders>" + XmlEscape(r.exposed_headers) + "</ExposedHeaders>";
      out += "<AllowedHeaders>" + XmlEscape(r.allowed_headers) + "</AllowedHeaders></CorsRule>";
    }
    out += "</Cors>";
  }
  out += "</StorageServiceProperties>";
  return out;
}

std::string WriteServiceStats(std::string_view status, std::optional<int64_t> last_sync_ticks) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?><StorageServiceStats><GeoReplication><Status>";
  out += XmlEscape(status);
  out += "</Status><LastSyncTime>";
  if (last_sync_ticks) out += model::FormatRfc1123(*last_sync_ticks);
  out += "</LastSyncTime></GeoReplication></StorageServiceStats>";
  return out;
}

std::string WriteXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"utf-8\" standalone=\"yes\"?>\n"
      "<error xmlns=\"http://schemas.microsoft.com/ado/2007/08/dataservices/metadata\">\n"
      "  <code>";
  out += XmlEscape(error.code);
  out += "</code>\n  <message xml:lang=\"en-US\">";
  out += XmlEscape(error.message + "\nRequestId:" + std::string(request_id) +
                   "\nTime:" + model::FormatDateTime7(time_ticks));
  out += "</message>\n</error>";
  return out;
}

std::string WriteStorageXmlError(const ApiError& error, std::string_view request_id, int64_t time_ticks) {
  std::string out = "<?xml version=\"1.0\" encoding=\"utf-8\"?><Error><Code>";
  out += XmlEscape(error.code);
  out += "</Code><Message>";
  out += XmlEscape(error.message + "\nRequestId:" + std::string(request_id) +
                   "\nTime:" + model::FormatDateTime7(time_ticks));
  out += "</Message></Error>";
  return out;
}

}  // namespace tablestone::protocol::xml
