// Entity: one row of a table.
//
// Contract: partition_key and row_key are UTF-8; `properties` holds the custom
// properties only (never PartitionKey, RowKey, Timestamp), each name at most
// once, in the order the client first sent them. `timestamp` is the commit
// time in ticks (see datetime.h); the ETag is derived from it (etag.h), so an
// entity's ETag changes exactly when its timestamp does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/model/edm.h"

namespace tablestone::model {

struct Property {
  std::string name;
  EdmValue value;
  friend bool operator==(const Property&, const Property&) = default;
};

struct Entity {
  std::string partition_key;
  std::string row_key;
  int64_t timestamp = 0;
  std::vector<Property> properties;

  // Linear search: entities are small and this keeps insertion order.
  const Property* Find(std::string_view name) const {
    for (const Property& p : properties) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }
  Property* Find(std::string_view name) {
    for (Property& p : properties) {
      if (p.name == name) return &p;
    }
    return nullptr;
  }
  friend bool operator==(const Entity&, const Entity&) = default;
};

}  // namespace tablestone::model
