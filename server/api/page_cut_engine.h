// PageCutEngine: realistic mode's cut of one query page (server/faults,
// docs/testing-with-faults.md, "Realistic mode"), as an engine decorator the
// dispatcher puts around the handler of a Query Entities or Query Tables
// request that realistic mode drew a cut for. The handlers know nothing of it.
//
// A page ends after cut.max_rows rows; with max_rows 0 it holds no row, only
// the continuation naming the row (or table) it would have started with.
// With cut.partition_key_only, a continuation that falls on a partition
// boundary names only the next partition: drop_next_row_key() then tells the
// dispatcher to leave out x-ms-continuation-NextRowKey (every row of that
// partition before the token was returned or did not match, so resuming at
// its start repeats nothing).
//
// Not thread-safe: one request's handler runs on one thread at a time.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

#include "protocol/flavor.h"
#include "protocol/operation.h"
#include "server/api/forwarding_engine.h"
#include "server/faults/fault_rules.h"

namespace tablestone::api {

// Whether realistic mode cuts the page the handler builds instead of the
// engine's scans. A page made of whole scans (a shuffled Query Entities page,
// shuffled_scan.h; a Query Tables page with Cosmos tokens, which reads the
// whole listing) would lose a cut of its scans, and an empty cut would
// resume at the same row forever. Such a handler reads the cut from its
// ReadScope / RequestInfo (CutPageSize).
bool CutsWholePage(const protocol::FlavorPolicy& flavor, protocol::Operation operation);

// The size of a whole page of up to `n` entries under `cut` (none: n). An
// empty cut keeps one entry on a first page, where an empty page would have no
// resume point to name; the handler answers an empty page for it otherwise.
inline size_t CutPageSize(size_t n, const faults::PageCut* cut) {
  if (cut == nullptr) return n;
  return std::min(n, std::max<size_t>(1, cut->max_rows));
}

class PageCutEngine final : public ForwardingEngine {
 public:
  PageCutEngine(storage::Engine& inner, faults::PageCut cut) : ForwardingEngine(inner), cut_(cut) {}

  StatusOr<storage::TableListResult> ListTables(std::string_view account,
                                                const storage::TableListSpec& spec) override;
  using storage::Engine::Scan;
  StatusOr<model::ScanResult> Scan(const storage::TableInfo& table, const model::ScanSpec& spec,
                                   const model::ScanRun& run) override;

  // True when the last Scan's continuation fell on a partition boundary and
  // the cut names only the partition.
  bool drop_next_row_key() const { return drop_next_row_key_; }

 private:
  const faults::PageCut cut_;
  bool drop_next_row_key_ = false;
};

}  // namespace tablestone::api
