// AtomPub request bodies -> typed values, for the requests of x-ms-version
// before 2015-12-11 (Learn: payload-format-for-table-service-operations,
// insert-entity and create-table of those versions). An entry carries its
// properties as <m:properties><d:Name m:type="Edm.Int32">5</d:Name>...; they
// become the same members a JSON body yields and go through the same rules
// (protocol/odata_json.h, EntityFromMembers), so both formats accept and
// refuse the same values.
//
// XML is parsed by expat with namespaces resolved (any prefixes may be used).
// A document type declaration is refused (no entity expansion), depth is
// bounded. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/odata_json.h"

namespace tablestone::protocol::atom {

inline constexpr std::string_view kAtomNamespace = "http://www.w3.org/2005/Atom";
inline constexpr std::string_view kDataNamespace = "http://schemas.microsoft.com/ado/2007/08/dataservices";
inline constexpr std::string_view kMetadataNamespace =
    "http://schemas.microsoft.com/ado/2007/08/dataservices/metadata";
inline constexpr size_t kMaxAtomDepth = 32;

// The children of the first m:properties element, in document order, as
// members: a property with m:type="T" is preceded by "<name>@odata.type": "T";
// m:null="true" -> null; Edm.Boolean "1"/"0" (what the clients of that era
// write) -> a boolean; every other value -> its text (an untyped one is
// therefore Edm.String), trimmed of XML white space unless it is a string.
// Errors: InvalidInput (malformed XML, a document type declaration, too
// deep, no m:properties, an element inside a property),
// DuplicatePropertiesSpecified, TooManyProperties (more than
// `max_properties` properties, null ones included: the parse stops there).
// Time linear in the body's size.
ApiResult<std::vector<JsonMember>> ReadEntryProperties(std::string_view body,
                                                       size_t max_properties = static_cast<size_t>(-1));

// An entity entry (Insert/Update/Merge/upserts): ReadEntryProperties then
// EntityFromMembers; errors of both.
ApiResult<ParsedEntity> ParseEntityAtom(std::string_view body);

// Create Table's entry: <d:TableName>. Missing or null -> PropertiesNeedValue;
// the errors of ReadEntryProperties.
ApiResult<std::string> ParseTableNameAtom(std::string_view body);

}  // namespace tablestone::protocol::atom
