#include "protocol/request_options.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "storage/model/ascii.h"

namespace tablestone::protocol {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One media type: lower-cased "type/subtype" and the lower-cased odata= value.
struct MediaType {
  std::string type;
  std::string odata;
};

MediaType ParseMediaType(std::string_view text) {
  MediaType m;
  size_t semi = text.find(';');
  m.type = model::ToAsciiLower(Trim(text.substr(0, semi)));
  while (semi != std::string_view::npos) {
    text = text.substr(semi + 1);
    semi = text.find(';');
    std::string_view param = Trim(text.substr(0, semi));
    size_t eq = param.find('=');
    if (eq == std::string_view::npos) continue;
    if (model::ToAsciiLower(Trim(param.substr(0, eq))) == "odata") {
      m.odata = model::ToAsciiLower(Trim(param.substr(eq + 1)));
    }
  }
  return m;
}

enum class Verdict { kJson, kAtom, kVerbose, kUnknownLevel, kOther };

Verdict Classify(const MediaType& m, MetadataLevel* level) {
  if (m.type == "application/json" || m.type == "*/*" || m.type == "application/*") {
    if (m.odata.empty() || m.odata == "minimalmetadata") {
      *level = MetadataLevel::kMinimalMetadata;
    } else if (m.odata == "nometadata") {
      *level = MetadataLevel::kNoMetadata;
    } else if (m.odata == "fullmetadata") {
      *level = MetadataLevel::kFullMetadata;
    } else if (m.odata == "verbose") {
      return Verdict::kVerbose;
    } else {
      return Verdict::kUnknownLevel;
    }
    return Verdict::kJson;
  }
  if (m.type == "application/atom+xml" || m.type == "application/xml" || m.type == "text/xml" ||
      m.type == "atom" || m.type == "xml") {
    return Verdict::kAtom;
  }
  return Verdict::kOther;
}

bool ParseFixedDigits(std::string_view s, int* out) {
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return !s.empty();
}

}  // namespace

std::string_view MetadataLevelName(MetadataLevel level) {
  switch (level) {
    case MetadataLevel::kNoMetadata: return "nometadata";
    case MetadataLevel::kMinimalMetadata: return "minimalmetadata";
    case MetadataLevel::kFullMetadata: return "fullmetadata";
    case MetadataLevel::kAtom: return "atom";
  }
  return "minimalmetadata";
}

std::string_view JsonContentType(MetadataLevel level) {
  switch (level) {
    case MetadataLevel::kNoMetadata: return "application/json;odata=nometadata;streaming=true;charset=utf-8";
    case MetadataLevel::kMinimalMetadata: break;
    case MetadataLevel::kFullMetadata: return "application/json;odata=fullmetadata;streaming=true;charset=utf-8";
    case MetadataLevel::kAtom: return "application/json;odata=atom;streaming=true;charset=utf-8";
  }
  return "application/json;odata=minimalmetadata;streaming=true;charset=utf-8";
}

bool IsAtomEraVersion(std::string_view version) {
  // CheckApiVersion ran first, so a present version is a YYYY-MM-DD date and
  // compares as text.
  return !version.empty() && version < std::string_view("2015-12-11");
}

ApiResult<MetadataLevel> NegotiateMetadata(const std::string* format_param, std::string_view accept,
                                           std::string_view version) {
  const bool atom_era = IsAtomEraVersion(version);
  // Before 2015-12-11 Atom is the default, so "anything" means Atom.
  const MetadataLevel fallback = atom_era ? MetadataLevel::kAtom : MetadataLevel::kMinimalMetadata;
  MetadataLevel level = MetadataLevel::kMinimalMetadata;
  auto classify = [&](std::string_view text) {
    MediaType m = ParseMediaType(text);
    if (atom_era && (m.type == "*/*" || m.type == "application/*")) return Verdict::kAtom;
    return Classify(m, &level);
  };
  if (format_param != nullptr && !Trim(*format_param).empty()) {
    std::string f = model::ToAsciiLower(Trim(*format_param));
    if (f == "json") return MetadataLevel::kMinimalMetadata;
    switch (classify(f)) {
      case Verdict::kJson: return level;
      case Verdict::kAtom:
        if (atom_era) return MetadataLevel::kAtom;
        return ApiError::AtomFormatNotSupported();
      case Verdict::kVerbose: return ApiError::JsonVerboseFormatNotSupported();
      default: return ApiError::InvalidQueryParameterValue();
    }
  }
  accept = Trim(accept);
  if (accept.empty()) return fallback;
  // The exact values the SDKs (and most clients) send, answered without
  // parsing: this runs on every entity request.
  if (accept == "application/json;odata=nometadata") return MetadataLevel::kNoMetadata;
  if (accept == "application/json;odata=minimalmetadata") return MetadataLevel::kMinimalMetadata;
  if (accept == "application/json;odata=fullmetadata") return MetadataLevel::kFullMetadata;
  bool saw_atom = false;
  bool saw_verbose = false;
  while (!accept.empty()) {
    size_t comma = accept.find(',');
    std::string_view item = accept.substr(0, comma);
    accept = comma == std::string_view::npos ? std::string_view() : accept.substr(comma + 1);
    switch (classify(item)) {
      case Verdict::kJson: return level;
      case Verdict::kAtom:
        if (atom_era) return MetadataLevel::kAtom;  // the first acceptable item wins
        saw_atom = true;
        break;
      case Verdict::kVerbose: saw_verbose = true; break;
      default: break;
    }
  }
  if (saw_verbose) return ApiError::JsonVerboseFormatNotSupported();
  if (saw_atom) return ApiError::AtomFormatNotSupported();
  // Unknown media types: answer the version's default rather than fail, as
  // the service answers a missing Accept.
  return fallback;
}

PreferReturn ParsePrefer(std::string_view header) {
  PreferReturn result = PreferReturn::kNone;
  while (!header.empty()) {
    size_t comma = header.find(',');
    std::string item = model::ToAsciiLower(Trim(header.substr(0, comma)));
    header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
    if (item == "return-no-content") result = PreferReturn::kReturnNoContent;
    if (item == "return-content") result = PreferReturn::kReturnContent;
  }
  return result;
}

std::string_view PreferReturnName(PreferReturn p) {
  return p == PreferReturn::kReturnNoContent ? "return-no-content" : "return-content";
}

ApiResult<std::vector<std::string>> ParseSelect(const std::string* select_param) {
  std::vector<std::string> names;
  if (select_param == nullptr) return names;
  std::string_view rest = Trim(*select_param);
  if (rest.empty() || rest == "*") return names;
  while (true) {
    size_t comma = rest.find(',');
    std::string_view item = Trim(rest.substr(0, comma));
    if (item.empty()) return ApiError::InvalidInput();
    if (item == "*") return std::vector<std::string>();
    if (std::find(names.begin(), names.end(), item) == names.end()) names.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return names;
}

ApiResult<std::optional<int>> ParseTop(const std::string* top_param, int max_top) {
  if (top_param == nullptr) return std::optional<int>();
  std::string_view t = Trim(*top_param);
  // One leading zero at most beyond the maximum's own digits (storage: "01000"
  // parses, "001000" does not); at most 11 digits, compared in 64 bits, so no
  // text overflows.
  size_t max_digits = 2;
  for (int rest = max_top; rest >= 10; rest /= 10) ++max_digits;
  int64_t v = 0;
  if (t.empty() || t.size() > max_digits) return ApiError::InvalidInput();
  for (char c : t) {
    if (c < '0' || c > '9') return ApiError::InvalidInput();
    v = v * 10 + (c - '0');
  }
  if (v > max_top) return ApiError::InvalidInput();
  return std::optional<int>(static_cast<int>(v));
}

ApiResult<bool> CheckApiVersion(std::string_view header, bool present) {
  if (!present) return true;
  std::string_view v = Trim(header);
  int y, m, d;
  if (v.size() != 10 || v[4] != '-' || v[7] != '-' || !ParseFixedDigits(v.substr(0, 4), &y) ||
      !ParseFixedDigits(v.substr(5, 2), &m) || !ParseFixedDigits(v.substr(8, 2), &d) || m < 1 || m > 12 ||
      d < 1 || d > 31 || v < kOldestApiVersion || v > kNewestApiVersion) {
    return ApiError::InvalidHeaderValue();
  }
  return true;
}

ApiResult<bool> CheckJsonContentType(std::string_view header, bool present) {
  if (!present || Trim(header).empty()) return true;
  MetadataLevel ignored;
  MediaType m = ParseMediaType(header);
  if (m.type == "application/json") {
    if (m.odata == "verbose") return ApiError::JsonVerboseFormatNotSupported();
    return true;
  }
  switch (Classify(m, &ignored)) {
    case Verdict::kAtom: return ApiError::AtomFormatNotSupported();
    default: return ApiError::MediaTypeNotSupported();
  }
}

ApiResult<BodyFormat> CheckBodyContentType(std::optional<std::string_view> header, std::string_view version,
                                           std::string_view body) {
  if (IsAtomEraVersion(version)) {
    if (!header || Trim(*header).empty()) {
      size_t first = body.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos && body[first] == '<') return BodyFormat::kAtom;
      return BodyFormat::kJson;
    }
    MediaType m = ParseMediaType(*header);
    if (m.type == "application/atom+xml" || m.type == "application/xml") return BodyFormat::kAtom;
  }
  auto json = CheckJsonContentType(header.value_or(std::string_view()), header.has_value());
  if (!json.ok()) return json.error();
  return BodyFormat::kJson;
}

}  // namespace tablestone::protocol
