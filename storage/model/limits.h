// The Table service's documented limits as named constants, plus the
// service's entity-size formula. Source: Learn: understanding-the-table-service-data-model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "storage/model/entity.h"

namespace tablestone::model {

// Properties per entity including PartitionKey, RowKey and Timestamp.
inline constexpr size_t kMaxProperties = 255;
inline constexpr size_t kMaxCustomProperties = kMaxProperties - 3;
inline constexpr size_t kMaxPropertyNameLength = 255;
// String values: 64 KiB as UTF-16, i.e. 32,768 code units.
inline constexpr size_t kMaxStringUtf16Units = 32'768;
inline constexpr size_t kMaxBinaryBytes = 65'536;
// PartitionKey/RowKey: 1 KiB; we count UTF-16 code units (Learn: understanding-the-table-service-data-model, recorded
// in docs/compatibility.md).
inline constexpr size_t kMaxKeyUtf16Units = 1'024;
inline constexpr size_t kMaxEntityBytes = 1 << 20;
inline constexpr size_t kMaxBatchOperations = 100;
inline constexpr size_t kMaxBatchBodyBytes = 4 << 20;
inline constexpr size_t kMaxRequestBodyBytes = 4 << 20;
inline constexpr size_t kMaxPageEntities = 1'000;
inline constexpr size_t kMaxPageBytes = 4 << 20;
inline constexpr size_t kMaxFilterComparisons = 15;
inline constexpr size_t kMaxSignedIdentifiers = 5;
inline constexpr size_t kMaxTableNameLength = 63;
inline constexpr size_t kMinTableNameLength = 3;

// Number of UTF-16 code units needed for the UTF-8 text (invalid bytes count as one unit).
size_t Utf16Length(std::string_view utf8);

// Size of one property value by the service's formula.
size_t ValueSizeForLimit(const EdmValue& value);
// Entity size by the service's formula: 4 bytes + 2 bytes per key character +
// per property (8 + 2 * name length + value size). Compared with kMaxEntityBytes.
size_t EntitySizeForLimit(const Entity& entity);

}  // namespace tablestone::model
