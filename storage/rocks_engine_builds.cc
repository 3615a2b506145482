// The scan cache builder's snapshot reader (RocksEngine::BuildCachedPartition):
// what storage/scan_cache_builder.h's thread calls to build one partition.
// storage/partition_cache.h says when an entry may be built and kept.
#include <memory>
#include <string>
#include <string_view>

#include "storage/column_families.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_read.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {

bool RocksEngine::BuildCachedPartition(uint64_t table_id, const PartitionToBuild& build, uint64_t use_clock,
                                       size_t* rows) {
  GatePass pass(gate_);
  if (!pass.ok() || !scan_cache_ || !FindLiveTable(table_id)) return false;
  // Built meanwhile (admitted again by a scan that started before the entry
  // was inserted): nothing to do.
  if (scan_cache_->Lookup(table_id, build.partition_key, build.stripe, scan_cache_->Sequence())) return true;
  if (build.rows) {
    // The admitting scan's rows, from its snapshot, inserted under its G0.
    std::string prefix = PartitionStart(table_id, build.partition_key);
    const size_t prefix_size = prefix.size();
    PartitionBuilder builder(std::move(prefix), build.partition_key);
    model::Entity row;
    uint64_t row_table = 0;
    const bool decoded = build.rows->ForEach([&](std::string_view k, std::string_view v) {
      if (!DecodeEntityKey(k, &row_table, &row.partition_key, &row.row_key) || !DecodeEntityValue(v, &row).ok()) {
        return false;  // corrupt: the scans that read it report it
      }
      builder.Add(k.substr(prefix_size), row, v);
      return true;
    });
    return decoded && scan_cache_->Insert(table_id, build.partition_key, build.stripe, build.g0, use_clock,
                                          builder.Finish(build.next_key, build.g0));
  }
  // G0 before the snapshot, as for a scan (partition_cache.h): the entry is
  // kept only if no write to its stripe was stamped after G0.
  const uint64_t g0 = scan_cache_->Sequence();
  SnapshotHolder snapshot(db_);
  const std::string prefix = PartitionStart(table_id, build.partition_key);
  const std::string table_end = TableEnd(table_id);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot.get();
  const rocksdb::Slice upper(table_end);
  ro.iterate_upper_bound = &upper;  // the table's end: the key after the partition is its next_key
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kEntitiesCf)));
  PartitionBuilder builder(prefix, build.partition_key);
  model::Entity row;
  std::string value;  // the row's value copied out of RocksDB (CopyIteratorBytes)
  uint64_t row_table = 0;
  for (it->Seek(prefix); it->Valid(); it->Next()) {
    const std::string_view k = View(it->key());
    if (!k.starts_with(prefix)) break;
    CopyIteratorBytes(it->value(), &value);
    const std::string_view v = value;
    if (!DecodeEntityKey(k, &row_table, &row.partition_key, &row.row_key) || !DecodeEntityValue(v, &row).ok()) {
      return false;  // corrupt: the scans that read it report it
    }
    builder.Add(k.substr(prefix.size()), row, v);
    if (builder.approx_bytes() > scan_cache_->max_entry_bytes()) {  // could never be inserted
      scan_cache_->NoteTooLarge(table_id, build.partition_key);
      return false;
    }
    // Written meanwhile (writes resumed after the warmer saw a pause, or
    // stalled for one): Insert() would refuse the entry, so stop reading now
    // rather than build a partition that grows under the build. The warmer
    // notes the partition again at its next write.
    if ((builder.row_count() & 255) == 0 && scan_cache_->WrittenSince(build.stripe, g0)) return false;
  }
  if (rows != nullptr) *rows = builder.row_count();
  if (!it->status().ok() || builder.row_count() < kMinCachedRows) return false;
  std::string next_key = it->Valid() ? std::string(View(it->key())) : table_end;
  return scan_cache_->Insert(table_id, build.partition_key, build.stripe, g0, use_clock,
                             builder.Finish(std::move(next_key), g0));
}

}  // namespace tablestone::storage
