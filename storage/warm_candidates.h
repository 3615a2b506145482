// WarmCandidates: the partitions a burst of writes filled, so that the scan
// cache (partition_cache.h) can hold them before their first query.
//
// Why: the cache's admission builds a partition only on its second read, so
// the first query after a load (the common case of a test suite: load, then
// query once) reads RocksDB row by row. A partition that just received many
// rows is the likely target of that query; building it once its writes have
// stopped, on an idle thread (RocksEngine's warmer), makes the first query a
// cached one without costing any query or write more than this bookkeeping.
//
// Contract:
//   * Note() records `rows` written to (table_id, partition_key) at `now`;
//     the caller passes the lock stripe it will need to build the partition.
//   * Take() removes and returns every candidate whose last write is at least
//     `quiet` before `now`, in the order their first write was noted, keeping
//     only those with at least `min_rows` rows written since they were noted
//     (a partition of a few writes is not worth a build; one that was cached
//     before still is admitted by the ordinary route when read twice).
//   * At most `max_candidates` partitions are held; writes to further ones
//     are not recorded (bounded memory whatever the key pattern: a table
//     keyed by GUID would otherwise note every write).
//   * NextDue() is the earliest time at which Take() can return something
//     (nullopt when empty), for the warmer's timed wait.
//
// Thread safety: none; RocksEngine guards it with a mutex.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tablestone::storage {

class WarmCandidates {
 public:
  using Clock = std::chrono::steady_clock;
  struct Ready {
    uint64_t table_id = 0;
    std::string partition_key;
    size_t stripe = 0;
  };

  explicit WarmCandidates(size_t max_candidates) : max_candidates_(max_candidates) {}

  void Note(uint64_t table_id, std::string_view partition_key, size_t stripe, size_t rows, Clock::time_point now);
  std::vector<Ready> Take(Clock::time_point now, Clock::duration quiet, size_t min_rows);
  std::optional<Clock::time_point> NextDue(Clock::duration quiet) const;
  size_t size() const { return by_key_.size(); }
  bool empty() const { return by_key_.empty(); }

 private:
  struct Candidate {
    uint64_t table_id = 0;
    size_t stripe = 0;
    size_t rows = 0;
    uint64_t order = 0;  // when first noted
    Clock::time_point last_write;
  };
  // Transparent hashing: Note() looks a key up without allocating.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view k) const { return std::hash<std::string_view>()(k); }
  };
  // The key: 8 bytes of table id, then the partition key, in a buffer reused
  // across calls.
  std::string_view KeyOf(uint64_t table_id, std::string_view partition_key);

  const size_t max_candidates_;
  uint64_t next_order_ = 0;
  std::string key_buffer_;
  std::unordered_map<std::string, Candidate, KeyHash, std::equal_to<>> by_key_;
};

}  // namespace tablestone::storage
