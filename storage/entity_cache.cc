#include "storage/entity_cache.h"

#include <functional>

namespace tablestone::storage {

// One cached entity; `key` is what the shard's map points into, so a node
// never moves while it is cached. Nodes form the shard's LRU ring (head.next
// = most recently used).
struct EntityCache::Node {
  std::string key;
  std::string value;
  size_t hash = 0;  // of key: eviction removes a node without rehashing it
  Node* prev = nullptr;
  Node* next = nullptr;
};

namespace {

// The key with its hash, computed once per call for both the shard choice and
// the map (keys are ~40-byte strings; hashing them twice showed up).
struct KeyRef {
  std::string_view key;
  size_t hash;
  bool operator==(const KeyRef& other) const { return key == other.key; }
};
struct KeyRefHash {
  size_t operator()(const KeyRef& k) const { return k.hash; }
};

// unordered_map node + bucket slot + allocator headers, roughly.
constexpr size_t kEntryOverhead = sizeof(void*) * 4 + 64;

}  // namespace

struct EntityCache::Shard {
  std::mutex mu;
  uint64_t generation = 0;
  size_t bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  std::unordered_map<KeyRef, Node*, KeyRefHash> map;
  Node ring;  // sentinel

  Shard() { ring.prev = ring.next = &ring; }
  ~Shard() {
    for (auto& [k, node] : map) delete node;
  }

  void Unlink(Node* n) {
    n->prev->next = n->next;
    n->next->prev = n->prev;
  }
  void PushFront(Node* n) {
    n->next = ring.next;
    n->prev = &ring;
    ring.next->prev = n;
    ring.next = n;
  }
  void Remove(Node* n) {
    map.erase(KeyRef{n->key, n->hash});
    Unlink(n);
    bytes -= Charge(n->key, n->value.capacity());
    delete n;
  }
  void EvictTo(size_t capacity) {
    while (bytes > capacity && ring.prev != &ring) {
      Remove(ring.prev);
    }
  }
};

size_t EntityCache::Charge(std::string_view key, size_t value_capacity) {
  return sizeof(Node) + key.size() + value_capacity + kEntryOverhead;
}

EntityCache::EntityCache(size_t capacity_bytes, size_t shard_count)
    : shard_capacity_(capacity_bytes / (shard_count == 0 ? 1 : shard_count)),
      shard_count_(shard_count == 0 ? 1 : shard_count),
      shards_(std::make_unique<Shard[]>(shard_count_)) {}

EntityCache::~EntityCache() = default;

EntityCache::Shard& EntityCache::ShardFor(std::string_view key, size_t* hash) const {
  *hash = std::hash<std::string_view>()(key);
  // The high bits pick the shard; the map's buckets use the low ones.
  return shards_[(*hash >> 32) % shard_count_];
}

EntityCache::Counts EntityCache::counts() const {
  Counts c;
  for (size_t i = 0; i < shard_count_; ++i) {
    std::lock_guard lock(shards_[i].mu);
    c.hits += shards_[i].hits;
    c.misses += shards_[i].misses;
  }
  return c;
}

bool EntityCache::Lookup(std::string_view key, std::string* value, uint64_t* generation) {
  size_t hash;
  Shard& shard = ShardFor(key, &hash);
  std::lock_guard lock(shard.mu);
  auto it = shard.map.find(KeyRef{key, hash});
  if (it == shard.map.end()) {
    *generation = shard.generation;
    ++shard.misses;
    return false;
  }
  ++shard.hits;
  Node* n = it->second;
  value->assign(n->value);
  shard.Unlink(n);
  shard.PushFront(n);
  return true;
}

void EntityCache::Fill(std::string_view key, std::string_view value, uint64_t generation) {
  const size_t charge = Charge(key, value.size());
  if (charge > shard_capacity_) return;  // would evict everything else for one entry
  size_t hash;
  Shard& shard = ShardFor(key, &hash);
  std::lock_guard lock(shard.mu);
  if (shard.generation != generation) return;
  if (shard.map.find(KeyRef{key, hash}) != shard.map.end()) return;
  auto* n = new Node{std::string(key), std::string(value), hash};
  shard.map.emplace(KeyRef{n->key, hash}, n);
  shard.PushFront(n);
  shard.bytes += Charge(n->key, n->value.capacity());
  shard.EvictTo(shard_capacity_);
}

void EntityCache::Update(std::string_view key, std::string_view value) {
  size_t hash;
  Shard& shard = ShardFor(key, &hash);
  std::lock_guard lock(shard.mu);
  ++shard.generation;
  auto it = shard.map.find(KeyRef{key, hash});
  if (it == shard.map.end()) return;
  Node* n = it->second;
  if (Charge(key, value.size()) > shard_capacity_) {
    shard.Remove(n);
    return;
  }
  shard.bytes -= Charge(n->key, n->value.capacity());
  n->value.assign(value);  // reuses the buffer when the new value fits
  shard.bytes += Charge(n->key, n->value.capacity());
  shard.Unlink(n);
  shard.PushFront(n);
  shard.EvictTo(shard_capacity_);
}

void EntityCache::Erase(std::string_view key) {
  size_t hash;
  Shard& shard = ShardFor(key, &hash);
  std::lock_guard lock(shard.mu);
  ++shard.generation;
  auto it = shard.map.find(KeyRef{key, hash});
  if (it != shard.map.end()) shard.Remove(it->second);
}

size_t EntityCache::size_bytes() const {
  size_t total = 0;
  for (size_t i = 0; i < shard_count_; ++i) {
    std::lock_guard lock(shards_[i].mu);
    total += shards_[i].bytes;
  }
  return total;
}

size_t EntityCache::entry_count() const {
  size_t total = 0;
  for (size_t i = 0; i < shard_count_; ++i) {
    std::lock_guard lock(shards_[i].mu);
    total += shards_[i].map.size();
  }
  return total;
}

}  // namespace tablestone::storage
