// Per-request options that shape a response: OData metadata level, Prefer,
// $select, $top, x-ms-version and request Content-Type checks (Learn: payload-format-for-table-service-operations,
// query-entities, versioning-for-the-azure-storage-services). Pure; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"

namespace tablestone::protocol {

enum class MetadataLevel { kNoMetadata, kMinimalMetadata, kFullMetadata };

// "nometadata" / "minimalmetadata" / "fullmetadata".
std::string_view MetadataLevelName(MetadataLevel level);
// "application/json;odata=<level>;streaming=true;charset=utf-8" (Learn: payload-format-for-table-service-operations).
std::string JsonContentType(MetadataLevel level);

// $format (when present) wins over Accept. application/json, */* and no
// header mean minimalmetadata; Atom/XML -> 415 AtomFormatNotSupported;
// odata=verbose -> 415 JsonVerboseFormatNotSupported.
ApiResult<MetadataLevel> NegotiateMetadata(const std::string* format_param, std::string_view accept);

enum class PreferReturn { kNone, kReturnContent, kReturnNoContent };
// Parses a Prefer header; unknown preferences are ignored (kNone).
PreferReturn ParsePrefer(std::string_view header);
std::string_view PreferReturnName(PreferReturn p);  // "return-content" / "return-no-content"

// $select: comma-separated names, whitespace tolerated; "*" or absent = all
// (empty vector). Duplicates are dropped. Empty names -> 400 InvalidInput.
ApiResult<std::vector<std::string>> ParseSelect(const std::string* select_param);

// $top: 0..1000 (0 = empty page, Learn: query-entities); absent = nullopt. Anything
// else -> 400 InvalidInput.
ApiResult<std::optional<int>> ParseTop(const std::string* top_param);

// Newest x-ms-version we know of (Azurite's table API version constant).
inline constexpr std::string_view kNewestApiVersion = "2026-06-06";
inline constexpr std::string_view kOldestApiVersion = "2009-09-19";
// Version echoed when the request sent none.
inline constexpr std::string_view kDefaultApiVersion = "2019-02-02";

// Absent -> OK. A YYYY-MM-DD date between kOldestApiVersion and
// kNewestApiVersion -> OK; anything else -> 400 InvalidHeaderValue.
ApiResult<bool> CheckApiVersion(std::string_view header, bool present);

// Content-Type of an entity/table JSON body: any application/json variant
// (parameters in any order/case) or absent -> OK; Atom -> 415
// AtomFormatNotSupported; odata=verbose -> 415 JsonVerboseFormatNotSupported;
// anything else -> 415 MediaTypeNotSupported.
ApiResult<bool> CheckJsonContentType(std::string_view header, bool present);

}  // namespace tablestone::protocol
