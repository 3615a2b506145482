// WarmCandidates: the partitions a burst of writes filled, so that the scan
// cache (partition_cache.h) can hold them before their first query.
//
// Why: the cache's admission builds a partition only on its second read, so
// the first query after a load (the common case of a test suite: load, then
// query once) reads RocksDB row by row. A partition that just received many
// rows is the likely target of that query; building it once its writes have
// stopped (storage/scan_cache_builder.h), makes the first query a
// cached one.
//
// Cost on the write path (kept to a few instructions per write): a write that goes on filling the partition it filled last
// in its lock stripe only adds its rows to the stripe's counter (`rows`, an
// atomic add) after comparing the partition with the stripe's memo; only the
// first write to a partition (per stripe, per burst) takes the mutex that
// guards this class and calls Note(). Quiet is detected by the warmer, not
// by the writes: a candidate whose stripe counter did not move between two
// of the warmer's looks, `quiet` apart, has stopped receiving writes.
//
// Contract:
//   * Note() records (table_id, partition_key) in `stripe`, whose row counter
//     reads `rows_now`; ignored when the partition is noted already or
//     `max_candidates` partitions are.
//   * Take(rows_of) returns and forgets every candidate whose stripe counter
//     (rows_of(stripe)) equals what the previous Take() saw, in the order the
//     candidates were noted, keeping those whose stripe received at least
//     `min_rows` rows since Note() (rows of other partitions sharing the
//     stripe count too: a heuristic, and rare). Other candidates remember the
//     counter for the next Take().
//   * Take() reports the stripe of every candidate it forgets; the engine
//     bumps that stripe's epoch, so the writers' memo of the stripe is stale
//     and the next write to the partition notes it again.
//
// Thread safety: none; ScanCacheBuilder guards it with a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tablestone::storage {

class WarmCandidates {
 public:
  struct Ready {
    uint64_t table_id = 0;
    std::string partition_key;
    size_t stripe = 0;
    uint64_t rows = 0;  // rows its stripe received since it was noted
  };

  explicit WarmCandidates(size_t max_candidates) : max_candidates_(max_candidates) {}

  void Note(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t rows_now);
  // `forgotten` receives the stripe of every candidate forgotten (for the epochs).
  std::vector<Ready> Take(const std::function<uint64_t(size_t)>& rows_of, uint64_t min_rows,
                          std::vector<size_t>* forgotten);
  size_t size() const { return by_key_.size(); }
  bool empty() const { return by_key_.empty(); }

 private:
  struct Candidate {
    uint64_t table_id = 0;
    size_t stripe = 0;
    uint64_t rows_at_note = 0;
    uint64_t rows_seen = 0;  // the stripe counter at the last Take()
    uint64_t order = 0;      // when noted
  };
  const size_t max_candidates_;
  uint64_t next_order_ = 0;
  // Key: PartitionCache::CacheKey (8 bytes of table id, then the partition key).
  std::unordered_map<std::string, Candidate> by_key_;
};

}  // namespace tablestone::storage
