// RocksEngine::Scan: one page of a query from a consistent snapshot
// (spec §2.5.2 ordering, §2.5.3 paging).
#include <chrono>

#include "storage/column_families.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {
namespace {

using model::KeyBound;

// Encoded [lower, upper) for one KeyRange; see the KeyBound contract in
// storage/model/scan_spec.h.
std::string LowerKey(uint64_t id, const std::optional<KeyBound>& b) {
  if (!b) return TableStart(id);
  if (b->row_key) {
    std::string point = EncodeEntityKey(id, b->partition_key, *b->row_key);
    return b->inclusive ? point : KeySuccessor(point);
  }
  return b->inclusive ? PartitionStart(id, b->partition_key) : PartitionEnd(id, b->partition_key);
}

std::string UpperKey(uint64_t id, const std::optional<KeyBound>& b) {
  if (!b) return TableEnd(id);
  if (b->row_key) {
    std::string point = EncodeEntityKey(id, b->partition_key, *b->row_key);
    return b->inclusive ? KeySuccessor(point) : point;
  }
  return b->inclusive ? PartitionEnd(id, b->partition_key) : PartitionStart(id, b->partition_key);
}

// How often (in rows) the deadline is checked; reading the clock per row
// would cost more than decoding the row.
constexpr size_t kClockCheckInterval = 256;

class SnapshotHolder {
 public:
  explicit SnapshotHolder(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~SnapshotHolder() { db_->ReleaseSnapshot(snapshot_); }
  SnapshotHolder(const SnapshotHolder&) = delete;
  SnapshotHolder& operator=(const SnapshotHolder&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

}  // namespace

StatusOr<model::ScanResult> RocksEngine::Scan(const TableInfo& table, const model::ScanSpec& spec) {
  GatePass pass(gate_);
  if (!pass.ok()) return Status::ShuttingDown("storage engine is closed");
  if (!FindLiveTable(table.id)) return Status::TableNotFound("the table specified does not exist");
  model::ScanResult result;
  if (spec.match_nothing) return result;

  std::vector<std::pair<std::string, std::string>> ranges;
  if (spec.ranges.empty()) {
    ranges.emplace_back(TableStart(table.id), TableEnd(table.id));
  } else {
    ranges.reserve(spec.ranges.size());
    for (const model::KeyRange& r : spec.ranges) {
      ranges.emplace_back(LowerKey(table.id, r.lower), UpperKey(table.id, r.upper));
    }
  }
  std::string resume;
  if (spec.resume_from) {
    EncodeEntityKey(table.id, spec.resume_from->partition_key, spec.resume_from->row_key, &resume);
  }

  SnapshotHolder snapshot(db_);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();

  model::Entity row;
  uint64_t row_table = 0;
  size_t kept_bytes = 0;
  size_t since_clock_check = 0;
  // Once a page limit is hit, the next row found (in any later range) becomes
  // the continuation; if there is none, the scan is complete.
  bool page_full = spec.max_results == 0;
  for (auto& [lower, upper] : ranges) {
    if (!resume.empty()) {
      if (resume >= upper) continue;  // range entirely before the resume point
      if (resume > lower) lower = resume;
    }
    if (lower >= upper) continue;
    rocksdb::Slice upper_bound(upper);
    ro.iterate_upper_bound = &upper_bound;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kEntitiesCf)));
    for (it->Seek(lower); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key();
      if (!DecodeEntityKey(std::string_view(k.data(), k.size()), &row_table, &row.partition_key, &row.row_key)) {
        return Status::Corruption("entity key is malformed");
      }
      if (!page_full && spec.deadline && ++since_clock_check >= kClockCheckInterval) {
        since_clock_check = 0;
        if (std::chrono::steady_clock::now() >= *spec.deadline) page_full = true;
      }
      if (page_full) {
        result.next = model::EntityKey{row.partition_key, row.row_key};
        return result;
      }
      ++result.rows_examined;
      rocksdb::Slice v = it->value();
      TABLESTONE_RETURN_IF_ERROR(DecodeEntityValue(std::string_view(v.data(), v.size()), &row));
      if (spec.predicate && !spec.predicate(row)) continue;
      result.entities.push_back(row);
      kept_bytes += v.size();
      if (result.entities.size() >= spec.max_results || kept_bytes >= spec.max_bytes) page_full = true;
    }
    TABLESTONE_RETURN_IF_ERROR(FromRocks(it->status(), "scanning entities"));
  }
  return result;
}

}  // namespace tablestone::storage
