// Cosmos DB for Table's query order over the engine's key-ordered scans
// (protocol/cosmos_token.h). A page is the `n` entities with the smallest
// (ShuffleKey(seed, PK, RK), PK, RK) after the resume point among every row
// the spec keeps: each page scans all of the spec's key ranges and keeps the
// smallest in a bounded max-heap. That costs a full scan of the filtered
// ranges per page, O(rows log n); fine for test data, and docs/cosmos-mode.md
// says to turn the shuffle off (cosmos.shuffle) for large load tests.
//
// Bounds: the heap holds at most `n` entities and, like any page, at most
// model::kMaxPageBytes of them as the spec's row_sizer counts (the page is
// then shorter and a continuation follows); no allocation grows with `n`
// itself, so $top=2147483647 costs what the rows cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "protocol/cosmos_token.h"
#include "storage/engine.h"
#include "storage/model/scan_spec.h"

namespace tablestone::api {

struct ShuffledPage {
  std::vector<model::Entity> entities;  // in shuffled order
  // Where the next page starts (after this point) when more rows follow.
  std::optional<protocol::CosmosResume> next;
  size_t rows_examined = 0;
  // A scan met spec.deadline: nothing else in this answer is meaningful.
  bool deadline_passed = false;
};

// `spec` as a query page would use it (ranges, bound, predicate, select,
// row_sizer, deadline); its resume, page limits and renderer are replaced.
StatusOr<ShuffledPage> ScanShuffled(storage::Engine& engine, const storage::TableInfo& table, model::ScanSpec spec,
                                    size_t n, uint64_t seed, const std::optional<protocol::CosmosResume>& after);

}  // namespace tablestone::api
