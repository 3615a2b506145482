// OData JSON request bodies -> typed values (Learn: understanding-the-table-service-data-model,
// payload-format-for-table-service-operations).
//
// ParseEntityJson applies every Edm rule of the service: type inference for
// untyped values, "@odata.type" annotations, null = absent, odata.* control
// names ignored, Timestamp ignored, duplicate names rejected, limits (names,
// values, property count, entity size) and key rules. Pure; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/api_error.h"
#include "protocol/flat_json.h"
#include "storage/model/entity.h"

namespace tablestone::protocol {

struct ParsedEntity {
  model::Entity entity;  // timestamp left 0; keys empty when absent
  bool has_partition_key = false;
  bool has_row_key = false;
};

// Errors (400 unless noted): InvalidInput (not a JSON object, nested values,
// bad UTF-8, unknown Edm type, too deep, a PartitionKey/RowKey that is not a
// string), InvalidInput worded "An error occurred while processing this
// request." for a value not matching its annotation (ApiError::ValueNotConvertible),
// DuplicatePropertiesSpecified, PropertyNameTooLong, PropertyNameInvalid,
// TooManyProperties, PropertyValueTooLarge, EntityTooLarge,
// OutOfRangeInput (DateTime range, bad key
// characters: "The 'PartitionKey' parameter of value '<v>' is out of range.").
// Missing keys are NOT an error here (callers decide: insert needs both).
ApiResult<ParsedEntity> ParseEntityJson(std::string_view body);

// ParseEntityJson's rules applied to members already read (the Atom reader,
// protocol/atom/atom_reader.h, turns an entry's properties into members:
// "<name>@odata.type" annotations, strings, booleans and nulls). Every error
// above except those of the JSON text itself; duplicates are the caller's.
ApiResult<ParsedEntity> EntityFromMembers(std::vector<JsonMember>&& members);

// Checks a key value taken from a body (Learn: understanding-the-table-service-data-model): PropertyValueTooLarge
// above 1024 UTF-16 units; OutOfRangeInput for '/', '\', '#', '?' and
// control characters. `name` is "PartitionKey" or "RowKey".
ApiResult<bool> ValidateBodyKey(std::string_view name, std::string_view value);

// The rules above that concern an entity already decoded (by a reader other
// than ParseEntityJson, such as the export-file decoder): keys, property
// names, the number of properties, String and Binary value sizes and the
// entity's size, with the same errors. For writers that bypass the API (the
// offline tools), so that they store nothing the service would refuse.
ApiResult<bool> ValidateEntity(const model::Entity& entity);

// Create Table body {"TableName":"x"}: other properties are ignored.
// Missing/null TableName -> PropertiesNeedValue; non-string or malformed
// JSON -> InvalidInput.
ApiResult<std::string> ParseTableNameJson(std::string_view body);

// "MM/dd/yyyy HH:mm:ss" as the service prints a DateTime in range errors.
std::string FormatDateTimeForRangeError(int64_t ticks);

}  // namespace tablestone::protocol
