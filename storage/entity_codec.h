// Entity values in the `entities` column family: a compact, versioned binary
// form of an entity's Timestamp and custom properties (PartitionKey and RowKey
// live in the key, see key_codec.h). The byte grammar is the opening comment
// of entity_codec.cc and docs/storage-format.md.
//
// Thread safety: all functions are pure.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "storage/model/entity.h"
#include "storage/model/status.h"

namespace tablestone::storage {

// Current value format version (first byte of every value).
inline constexpr uint8_t kEntityFormatVersion = 1;

// Appends the encoding of entity.timestamp and entity.properties to *out.
void EncodeEntityValue(const model::Entity& entity, std::string* out);
std::string EncodeEntityValue(const model::Entity& entity);

// Decodes a value into entity->timestamp and entity->properties, leaving the
// keys alone. Reuses the capacity of *entity's vectors and strings (decode
// into the same Entity in a loop to avoid heap allocation). Malformed or
// truncated input yields Status::Corruption; never crashes or over-reads.
// After an error *entity holds partial data and must not be used as a result.
Status DecodeEntityValue(std::string_view value, model::Entity* entity);

// Reads only the timestamp (for If-Match checks without a full decode).
Status DecodeEntityTimestamp(std::string_view value, int64_t* ticks);

}  // namespace tablestone::storage
