// The RocksDB column families of a tablestone data directory, listed once.
//
// Persisted: the names are stored in the database. Never rename or reorder
// them; add new families at the end only. The index of a family in
// kColumnFamilies is also its index in the engine's handle vector.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace tablestone::storage {

enum ColumnFamilyIndex : size_t {
  kDefaultCf = 0,   // unused (RocksDB requires it)
  kCatalogCf = 1,   // account '\0' lower(table name) -> table id + name as created
  kEntitiesCf = 2,  // entity key (key_codec.h) -> entity value (entity_codec.h)
  kMetaCf = 3,      // counters, account metadata, table ACLs (catalog_codec.h)
  kColumnFamilyCount = 4,
};

inline constexpr std::array<std::string_view, kColumnFamilyCount> kColumnFamilies = {
    "default",
    "catalog",
    "entities",
    "meta",
};

}  // namespace tablestone::storage
