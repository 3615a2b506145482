// EntityCache: encoded values of recently read entities, by RocksDB key,
// bounded by bytes (LRU), kept current by the write path.
//
// Why: a point read that RocksDB serves from its memtable walks a skip list
// whose nodes are spread over tens of MiB; after a burst of writes to the
// same keys that walk is mostly cache misses and dominates a point GET's
// user-space time. RocksDB's own row cache
// only covers SST files, i.e. never the recently written entities.
//
// What is cached: only values that a read found (no negative entries). Reads
// fill the cache; a write updates an entry that is already present (so a read
// after a write still hits) and inserts nothing new, so a bulk insert does not
// churn it.
//
// Validity (the concurrency argument; RocksEngine follows it):
//   * Every method locks the shard of its key. Each shard has a generation,
//     raised by every Update/Erase in it.
//   * Writers (RocksEngine::Write, under the partition's stripe lock) call
//     Update or Erase for each key AFTER the batch is committed, BEFORE the
//     write is acknowledged; after a failed commit they Erase every key.
//   * A reader that misses gets the shard's generation G from Lookup, reads
//     RocksDB, and calls Fill(key, value, G). Fill inserts only if the shard's
//     generation is still G. If a write to the key committed after the reader's
//     RocksDB read, its Update/Erase comes after that commit, so either it runs
//     before Fill (generation moved: Fill does nothing) or after Fill
//     (it overwrites or erases the filled value). Either way no stale value
//     survives the write's acknowledgement.
//   * Table ids are never reused, so entries of a deleted table are
//     unreachable (callers check the table first) and age out.
//
// Thread safety: every method may be called concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tablestone::storage {

class EntityCache {
 public:
  // capacity_bytes > 0: the sum of the entries' charges (key + value + fixed
  // overhead) stays at or below it. shard_count > 0; a power of two is not
  // required.
  explicit EntityCache(size_t capacity_bytes, size_t shard_count = 16);
  ~EntityCache();
  EntityCache(const EntityCache&) = delete;
  EntityCache& operator=(const EntityCache&) = delete;

  // Hit: copies the value into *value, marks it recently used, returns true.
  // Miss: stores the shard's generation in *generation (for Fill), false.
  bool Lookup(std::string_view key, std::string* value, uint64_t* generation);
  // Caches a value read from RocksDB after a miss that returned `generation`,
  // unless an Update/Erase ran in the key's shard since, or the key is present.
  void Fill(std::string_view key, std::string_view value, uint64_t generation);
  // A committed write stored `value` under `key`: replaces a cached value,
  // inserts nothing if the key is absent.
  void Update(std::string_view key, std::string_view value);
  // A committed delete, or a write whose outcome is unknown.
  void Erase(std::string_view key);

  size_t size_bytes() const;    // sum of the entries' charges
  size_t entry_count() const;
  // Lookups that hit and missed since construction (kept per shard under its
  // lock, which Lookup holds anyway).
  struct Counts {
    uint64_t hits = 0;
    uint64_t misses = 0;
  };
  Counts counts() const;

  // The charge of one entry: what it counts against the capacity.
  static size_t Charge(std::string_view key, size_t value_capacity);

 private:
  struct Node;
  struct Shard;
  Shard& ShardFor(std::string_view key, size_t* hash) const;

  const size_t shard_capacity_;
  const size_t shard_count_;
  std::unique_ptr<Shard[]> shards_;
};

}  // namespace tablestone::storage
