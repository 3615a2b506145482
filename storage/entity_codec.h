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
#include <vector>

#include "storage/model/entity.h"
#include "storage/model/filter_eval.h"
#include "storage/model/status.h"

namespace tablestone::storage {

// Current value format version (first byte of every value).
inline constexpr uint8_t kEntityFormatVersion = 1;

// Appends the encoding of entity.timestamp and entity.properties to *out.
void EncodeEntityValue(const model::Entity& entity, std::string* out);
// The same for a timestamp and properties held apart (an entity being written).
void EncodeEntityValue(int64_t timestamp, const std::vector<model::Property>& properties, std::string* out);
std::string EncodeEntityValue(const model::Entity& entity);

// Decodes a value into entity->timestamp and entity->properties, leaving the
// keys alone. Reuses the capacity of *entity's vectors and strings (decode
// into the same Entity in a loop to avoid heap allocation). Malformed or
// truncated input yields Status::Corruption; never crashes or over-reads.
// After an error *entity holds partial data and must not be used as a result.
Status DecodeEntityValue(std::string_view value, model::Entity* entity);
// As above, but entity->properties gets only the properties named in
// `select` (in stored order, every one of each name), e.g. a query's
// $select: the others are validated but never copied. Null or empty
// `select` = all.
Status DecodeEntityValueSelected(std::string_view value, model::Entity* entity,
                                 const std::vector<std::string>& select);  // select not empty
// Inline: without a select, a scan pays no call more than the plain decode.
inline Status DecodeEntityValue(std::string_view value, model::Entity* entity,
                                const std::vector<std::string>* select) {
  if (select == nullptr || select->empty()) return DecodeEntityValue(value, entity);
  return DecodeEntityValueSelected(value, entity, *select);
}

// One property looked up in place by ReadEncodedProperties. view.text points
// into the encoded value (String, Binary, non-canonical Guid) or into
// guid_text (a Guid stored as 16 bytes, printed canonically), so an
// EncodedProperty must not be copied while its view is in use.
struct EncodedProperty {
  bool found = false;
  model::ValueView view;
  char guid_text[36];
};

// Finds the properties `names[0..n)` in an encoded value without decoding
// the others (no allocation): out[i].found says whether names[i] is there
// and out[i].view holds its value as DecodeEntityValue would give it (the
// first property of that name, as model::Entity::Find). *timestamp gets the
// row's Timestamp. Stops reading once every name is found, so bytes after
// that point are not validated, and the properties stepped over before it
// are checked for their size only (an out-of-range Int32 among them is not
// seen). Returns false when the value's structure is broken (or of another
// version) before that point; DecodeEntityValue then says why.
bool ReadEncodedProperties(std::string_view value, const std::string_view* names, size_t n, EncodedProperty* out,
                           int64_t* timestamp);

// Reads only the timestamp (for If-Match checks without a full decode).
Status DecodeEntityTimestamp(std::string_view value, int64_t* ticks);

}  // namespace tablestone::storage
