// OData JSON request bodies -> typed values (spec §3.2-3.6).
//
// ParseEntityJson applies every Edm rule of the service: type inference for
// untyped values, "@odata.type" annotations, null = absent, odata.* control
// names ignored, Timestamp ignored, duplicate names rejected, limits (names,
// values, property count, entity size) and key rules. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "protocol/api_error.h"
#include "storage/model/entity.h"

namespace tablestone::protocol {

struct ParsedEntity {
  model::Entity entity;  // timestamp left 0; keys empty when absent
  bool has_partition_key = false;
  bool has_row_key = false;
};

// Errors (400 unless noted): InvalidInput (not a JSON object, nested values,
// bad UTF-8, unknown Edm type, value not matching its annotation, too deep),
// DuplicatePropertiesSpecified, PropertyNameTooLong, PropertyNameInvalid,
// TooManyProperties, PropertyValueTooLarge, EntityTooLarge,
// PrimaryKeyPropertyIsInvalidType, OutOfRangeInput (DateTime range, bad key
// characters: "The 'PartitionKey' parameter of value '<v>' is out of range.").
// Missing keys are NOT an error here (callers decide: insert needs both).
ApiResult<ParsedEntity> ParseEntityJson(std::string_view body);

// Checks a key value taken from a body (spec §3.3): PropertyValueTooLarge
// above 1024 UTF-16 units; OutOfRangeInput for '/', '\', '#', '?' and
// control characters. `name` is "PartitionKey" or "RowKey".
ApiResult<bool> ValidateBodyKey(std::string_view name, std::string_view value);

// Create Table body {"TableName":"x"}: other properties are ignored.
// Missing/null TableName -> PropertiesNeedValue; non-string or malformed
// JSON -> InvalidInput.
ApiResult<std::string> ParseTableNameJson(std::string_view body);

// "MM/dd/yyyy HH:mm:ss" as the service prints a DateTime in range errors.
std::string FormatDateTimeForRangeError(int64_t ticks);

}  // namespace tablestone::protocol
