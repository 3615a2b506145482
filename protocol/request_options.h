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

// How a response body is written. kAtom is not a JSON level: it is the
// AtomPub payload (protocol/atom/) that the service answers to versions
// before 2015-12-11 (Learn: payload-format-for-table-service-operations); the
// JSON writers are never called with it.
enum class MetadataLevel { kNoMetadata, kMinimalMetadata, kFullMetadata, kAtom };

// "nometadata" / "minimalmetadata" / "fullmetadata" ("atom" for kAtom).
std::string_view MetadataLevelName(MetadataLevel level);
// "application/json;odata=<level>;streaming=true;charset=utf-8" (Learn: payload-format-for-table-service-operations).
// A constant: every JSON answer sets it, and building it was an allocation per answer.
std::string_view JsonContentType(MetadataLevel level);

// True when `version` (the x-ms-version header, empty when absent) is one
// whose OData payload may be Atom: a date before 2015-12-11 (Learn:
// payload-format-for-table-service-operations). A request without the header
// is answered as kDefaultApiVersion, a JSON-only version.
bool IsAtomEraVersion(std::string_view version);

// $format (when present) wins over Accept. For JSON-only versions:
// application/json, */* and no header mean minimalmetadata; Atom/XML -> 415
// AtomFormatNotSupported; odata=verbose -> 415 JsonVerboseFormatNotSupported.
// For Atom-era versions (IsAtomEraVersion): Atom/XML, */*, application/*,
// "atom" and no header mean kAtom (the service's default then), the first
// acceptable item of Accept wins, and JSON is answered when asked for.
ApiResult<MetadataLevel> NegotiateMetadata(const std::string* format_param, std::string_view accept,
                                           std::string_view version = {});

enum class PreferReturn { kNone, kReturnContent, kReturnNoContent };
// Parses a Prefer header; unknown preferences are ignored (kNone).
PreferReturn ParsePrefer(std::string_view header);
std::string_view PreferReturnName(PreferReturn p);  // "return-content" / "return-no-content"

// $select: comma-separated names, whitespace tolerated; "*" or absent = all
// (empty vector). Duplicates are dropped. Empty names -> 400 InvalidInput.
ApiResult<std::vector<std::string>> ParseSelect(const std::string* select_param);

// $top: 0..max_top (0 = empty page; Table storage's maximum is 1000, Learn:
// query-entities; Cosmos DB for Table has none, protocol/flavor.h); absent =
// nullopt. Anything else -> 400 InvalidInput.
ApiResult<std::optional<int>> ParseTop(const std::string* top_param, int max_top = 1000);

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

enum class BodyFormat { kJson, kAtom };
// The format of an entity/table request body. JSON-only versions: as
// CheckJsonContentType (-> kJson). Atom-era versions: application/atom+xml or
// application/xml -> kAtom, and a body without Content-Type is Atom when its
// first non-space byte is '<' (old clients omit the header on small bodies).
ApiResult<BodyFormat> CheckBodyContentType(std::optional<std::string_view> header, std::string_view version,
                                           std::string_view body);

}  // namespace tablestone::protocol
