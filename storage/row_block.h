// RowBlock: the rows of ONE partition laid out by column, the layout of the
// scan cache (partition_cache.h). Private to storage/: nothing outside it sees
// the columns; a scan's predicate reaches them only as a $filter expression
// (model::RowPredicate::columnar()) that block_evaluator.h evaluates here.
//
// Why columns: a filtered scan spends almost all its time per row. Comparing a
// contiguous int64 array with a literal costs ~1 ns per row; finding a
// property by name in a decoded Entity costs 10-100x that. The storage engine
// keeps blocks of hot partitions (partition_cache.h) and filters them with
// block_evaluator.h; rows not in a block go through RowPredicate::Matches().
//
// Contract of a RowBlock (all views borrowed from the block's owner, which
// keeps them alive and immutable while the block is in use):
//   * rows are in key order (ordinal RowKey order) and all have partition_key;
//   * row_keys[i] and timestamps[i] describe row i (row_count() rows);
//   * columns hold the custom properties, one column per property name that
//     occurs in any row, each with exactly row_count() tags. Row i of column c:
//       tags[i] == kAbsentTag         the row has no such property
//       tags[i] == EdmType value      ints[i]    for Int32/Int64/Boolean/DateTime
//                                     doubles[i] for Double
//                                     texts[i]   for String/Guid/Binary
//     Payload vectors are either empty (no row of the column has a value of
//     that family) or row_count() long; entries of other rows are zero/empty.
//   * uniform_tag is the tag every row shares, or kMixedTag (filters use it to
//     pick a tight loop once per block instead of a switch per row).
//   * the zone map, set by ComputeZoneMap() (left at its conservative
//     defaults by a builder that does not call it):
//       value_tag   the tag every row HAVING the property shares (absent rows
//                   ignored), or kMixedTag (types differ, or no row has it);
//       has_range   value_tag is Int32/Int64/DateTime/Boolean and [min_int,
//                   max_int] bounds ints[] of the rows that have it (Boolean:
//                   bounds ints[i] != 0, i.e. within [0, 1]), or value_tag is
//                   Double, no such row is NaN, and [min_double, max_double]
//                   bounds their doubles[] (-0.0 == 0.0 as in IEEE order).
//     Filters use it to prove that no row of the block can match a
//     comparison (block_evaluator.h) and skip the block's per-row work;
//     absent rows never match a comparison, so ignoring them is safe.
//     Strings, Guids and Binary have no range.
//
// Thread safety: plain data; concurrent const use is safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/model/edm.h"
#include "storage/model/entity.h"

namespace tablestone::storage {

inline constexpr uint8_t kAbsentTag = 0;    // not an EdmType value (those start at 1)
inline constexpr uint8_t kMixedTag = 0xFF;  // RowColumn::uniform_tag when rows differ

struct RowColumn {
  std::string_view name;
  uint8_t uniform_tag = kMixedTag;
  std::vector<uint8_t> tags;
  std::vector<int64_t> ints;
  std::vector<double> doubles;
  std::vector<std::string_view> texts;

  // Zone map (see the contract above). The defaults claim nothing.
  uint8_t value_tag = kMixedTag;
  bool has_range = false;
  int64_t min_int = 0;
  int64_t max_int = 0;
  double min_double = 0;
  double max_double = 0;

  // Sets value_tag, has_range and the bounds from tags and payloads: one pass
  // over the column when the block is built.
  void ComputeZoneMap() {
    value_tag = kMixedTag;
    has_range = false;
    min_int = max_int = 0;
    min_double = max_double = 0;
    uint8_t seen = kAbsentTag;
    for (uint8_t t : tags) {
      if (t == kAbsentTag || t == seen) continue;
      if (seen != kAbsentTag) return;  // two types: no value_tag, no range
      seen = t;
    }
    if (seen == kAbsentTag) return;  // no row has the property
    value_tag = seen;
    const size_t n = tags.size();
    switch (static_cast<model::EdmType>(seen)) {
      case model::EdmType::kInt32:
      case model::EdmType::kInt64:
      case model::EdmType::kDateTime:
      case model::EdmType::kBoolean: {
        if (ints.size() != n) return;
        const bool is_bool = seen == static_cast<uint8_t>(model::EdmType::kBoolean);
        bool first = true;
        for (size_t i = 0; i < n; ++i) {
          if (tags[i] == kAbsentTag) continue;
          const int64_t v = is_bool ? (ints[i] != 0 ? 1 : 0) : ints[i];
          if (first || v < min_int) min_int = v;
          if (first || v > max_int) max_int = v;
          first = false;
        }
        has_range = true;
        return;
      }
      case model::EdmType::kDouble: {
        if (doubles.size() != n) return;
        bool first = true;
        for (size_t i = 0; i < n; ++i) {
          if (tags[i] == kAbsentTag) continue;
          const double v = doubles[i];
          if (v != v) return;  // NaN: unordered, no usable range
          if (first || v < min_double) min_double = v;
          if (first || v > max_double) max_double = v;
          first = false;
        }
        has_range = true;
        return;
      }
      default: return;  // String, Guid, Binary: no range
    }
  }
};

struct RowBlock {
  std::string_view partition_key;
  std::vector<std::string_view> row_keys;
  std::vector<int64_t> timestamps;
  std::vector<RowColumn> columns;

  size_t row_count() const { return row_keys.size(); }

  // Linear search: an entity type has few distinct property names, and a
  // filter looks a column up once per block, not per row.
  const RowColumn* FindColumn(std::string_view name) const {
    for (const RowColumn& c : columns) {
      if (c.name == name) return &c;
    }
    return nullptr;
  }

  // Row `row` as an Entity (keys, timestamp, the properties it has, in column
  // order rather than the order the client sent them). For predicates without
  // a columnar expression and for tests; scans decode results from the stored
  // bytes instead, which keep the property order.
  model::Entity RowEntity(size_t row) const {
    model::Entity e;
    e.partition_key.assign(partition_key);
    e.row_key.assign(row_keys[row]);
    e.timestamp = timestamps[row];
    for (const RowColumn& c : columns) {
      const uint8_t tag = c.tags[row];
      if (tag == kAbsentTag) continue;
      model::EdmValue v;
      v.type = static_cast<model::EdmType>(tag);
      switch (v.type) {
        case model::EdmType::kDouble: v.double_value = c.doubles[row]; break;
        case model::EdmType::kString:
        case model::EdmType::kGuid:
        case model::EdmType::kBinary: v.text.assign(c.texts[row]); break;
        default: v.int_value = c.ints[row]; break;
      }
      e.properties.push_back(model::Property{std::string(c.name), std::move(v)});
    }
    return e;
  }
};

}  // namespace tablestone::storage
