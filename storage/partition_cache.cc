#include "storage/partition_cache.h"

#include <algorithm>

namespace tablestone::storage {
namespace {

using model::EdmType;

template <typename T>
size_t VectorBytes(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}

bool IsText(EdmType t) { return t == EdmType::kString || t == EdmType::kGuid || t == EdmType::kBinary; }

}  // namespace

RowRenderings::~RowRenderings() {
  for (size_t i = 0; i < count_; ++i) delete rows_[i].load(std::memory_order_relaxed);
}

void RowRenderings::Reset(size_t rows, size_t budget) {
  for (size_t i = 0; i < count_; ++i) delete rows_[i].load(std::memory_order_relaxed);
  count_ = rows;
  budget_ = budget;
  bytes_.store(0);
  full_.store(false);
  id_.store(0);
  rows_ = std::make_unique<std::atomic<RenderedRow*>[]>(rows);
  for (size_t i = 0; i < rows; ++i) rows_[i].store(nullptr, std::memory_order_relaxed);
}

bool RowRenderings::Claim(uint64_t id) const {
  if (id == 0) return false;
  uint64_t owner = id_.load(std::memory_order_acquire);
  if (owner == 0 && id_.compare_exchange_strong(owner, id)) return true;
  return owner == id;
}

const RenderedRow* RowRenderings::Keep(size_t i, std::unique_ptr<RenderedRow>& row) const {
  // Counted with the string's header and the allocator's rounding, roughly.
  const size_t cost = sizeof(RenderedRow) + row->bytes.capacity() + 16;
  if (bytes_.fetch_add(cost, std::memory_order_relaxed) + cost > budget_) {
    bytes_.fetch_sub(cost, std::memory_order_relaxed);
    full_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  RenderedRow* expected = nullptr;
  RenderedRow* mine = row.get();
  if (rows_[i].compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) {
    row.release();
    return mine;
  }
  bytes_.fetch_sub(cost, std::memory_order_relaxed);
  row.reset();
  return expected;  // another thread kept row i first
}

size_t CachedPartition::LowerBound(std::string_view key) const {
  const std::string_view p(prefix);
  if (key <= p) return 0;  // at or before the partition's first possible key
  // A key above the prefix that does not extend it differs from it at some
  // byte where it is greater: above every row of the partition.
  if (key.substr(0, p.size()) != p) return row_suffixes.size();
  const std::string_view suffix = key.substr(p.size());
  return static_cast<size_t>(std::lower_bound(row_suffixes.begin(), row_suffixes.end(), suffix) -
                             row_suffixes.begin());
}

[[gnu::noinline]] void CopiedRows::Append(std::string_view key, std::string_view value) {
  const uint32_t sizes[2] = {static_cast<uint32_t>(key.size()), static_cast<uint32_t>(value.size())};
  bytes_.append(reinterpret_cast<const char*>(sizes), sizeof sizes);
  bytes_.append(key);
  bytes_.append(value);
  ++row_count_;
}

PartitionBuilder::PartitionBuilder(std::string prefix, std::string_view partition_key)
    : prefix_(std::move(prefix)) {
  partition_key_ = Append(partition_key);
}

PartitionBuilder::Span PartitionBuilder::Append(std::string_view bytes) {
  Span s{static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(bytes.size())};
  arena_.append(bytes);
  return s;
}

void PartitionBuilder::Add(std::string_view key_suffix, const model::Entity& row, std::string_view value) {
  const size_t r = rows_.size();
  rows_.push_back(Row{Append(key_suffix), Append(row.row_key), Append(value), row.timestamp});
  value_bytes_ += value.size();
  column_bytes_ += row.properties.size() * (1 + sizeof(int64_t));
  for (const model::Property& p : row.properties) {
    auto [it, added] = column_index_.try_emplace(p.name, columns_.size());
    if (added) columns_.emplace_back().name = Append(p.name);
    ColumnBuilder& c = columns_[it->second];
    c.tags.resize(r, kAbsentTag);  // rows since the column's last value lack it
    const EdmType type = p.value.type;
    c.tags.push_back(static_cast<uint8_t>(type));
    if (type == EdmType::kDouble) {
      c.doubles.resize(r + 1);
      c.doubles[r] = p.value.double_value;
    } else if (IsText(type)) {
      c.texts.resize(r + 1);
      c.texts[r] = Append(p.value.text);
    } else {
      c.ints.resize(r + 1);
      c.ints[r] = p.value.int_value;
    }
  }
}

std::shared_ptr<const CachedPartition> PartitionBuilder::Finish(std::string next_key, uint64_t built_g0) {
  auto out = std::make_shared<CachedPartition>();
  const size_t n = rows_.size();
  out->prefix = std::move(prefix_);
  arena_.shrink_to_fit();
  out->arena = std::move(arena_);
  // Views are made only now: the arena no longer moves (the entry is heap
  // allocated and never moved again).
  const char* base = out->arena.data();
  auto view = [base](Span s) { return std::string_view(base + s.offset, s.size); };
  RowBlock& block = out->block;
  block.partition_key = view(partition_key_);
  block.row_keys.reserve(n);
  block.timestamps.reserve(n);
  out->row_suffixes.reserve(n);
  out->values.reserve(n);
  for (const Row& row : rows_) {
    out->row_suffixes.push_back(view(row.suffix));
    block.row_keys.push_back(view(row.row_key));
    block.timestamps.push_back(row.timestamp);
    out->values.push_back(view(row.value));
  }
  size_t column_bytes = 0;
  block.columns.reserve(columns_.size());
  for (ColumnBuilder& c : columns_) {
    RowColumn& col = block.columns.emplace_back();
    col.name = view(c.name);
    c.tags.resize(n, kAbsentTag);
    col.tags = std::move(c.tags);
    col.tags.shrink_to_fit();
    const bool uniform = std::all_of(col.tags.begin(), col.tags.end(), [&](uint8_t t) { return t == col.tags[0]; });
    col.uniform_tag = uniform && n > 0 ? col.tags[0] : kMixedTag;
    if (!c.ints.empty()) {
      c.ints.resize(n);
      col.ints = std::move(c.ints);
      col.ints.shrink_to_fit();
    }
    if (!c.doubles.empty()) {
      c.doubles.resize(n);
      col.doubles = std::move(c.doubles);
      col.doubles.shrink_to_fit();
    }
    if (!c.texts.empty()) {
      col.texts.reserve(n);
      for (const Span& s : c.texts) col.texts.push_back(view(s));
      col.texts.resize(n);
    }
    col.ComputeZoneMap();
    column_bytes += sizeof(RowColumn) + VectorBytes(col.tags) + VectorBytes(col.ints) +
                    VectorBytes(col.doubles) + VectorBytes(col.texts);
  }
  out->next_key = std::move(next_key);
  out->built_g0 = built_g0;
  const size_t value_bytes = value_bytes_;  // the renderings' budget
  out->renderings.Reset(n, value_bytes);
  out->memory_bytes = sizeof(CachedPartition) + out->prefix.capacity() + out->next_key.capacity() +
                      out->arena.capacity() + value_bytes + n * sizeof(std::atomic<RenderedRow*>) +
                      VectorBytes(block.row_keys) + VectorBytes(block.timestamps) + VectorBytes(out->row_suffixes) +
                      VectorBytes(out->values) + column_bytes;
  rows_.clear();
  columns_.clear();
  column_index_.clear();
  value_bytes_ = 0;
  column_bytes_ = 0;
  return out;
}

PartitionCache::PartitionCache(size_t capacity_bytes, size_t stripe_count)
    : capacity_bytes_(capacity_bytes),
      stamps_(std::make_unique<std::atomic<uint64_t>[]>(stripe_count)),
      entries_per_stripe_(std::make_unique<std::atomic<uint32_t>[]>(stripe_count)) {}

std::string PartitionCache::CacheKey(uint64_t table_id, std::string_view partition_key) {
  std::string key(reinterpret_cast<const char*>(&table_id), sizeof table_id);
  key.append(partition_key);
  return key;
}

bool PartitionCache::ParseCacheKey(std::string_view key, uint64_t* table_id, std::string_view* partition_key) {
  if (key.size() < sizeof *table_id) return false;
  std::memcpy(table_id, key.data(), sizeof *table_id);
  *partition_key = key.substr(sizeof *table_id);
  return true;
}

void PartitionCache::EraseLocked(std::list<Entry>::iterator it) {
  total_bytes_ -= it->partition->memory_bytes;
  entries_per_stripe_[it->stripe].fetch_sub(1, std::memory_order_relaxed);
  index_.erase(it->key);
  lru_.erase(it);
}

std::shared_ptr<const CachedPartition> PartitionCache::Lookup(uint64_t table_id, std::string_view partition_key,
                                                              size_t stripe, uint64_t g0) {
  if (entries_per_stripe_[stripe].load(std::memory_order_relaxed) == 0) return nullptr;
  const std::string key = CacheKey(table_id, partition_key);
  std::lock_guard lock(mu_);
  auto found = index_.find(key);
  if (found == index_.end()) return nullptr;
  auto it = found->second;
  if (it->stamp != stamps_[stripe].load()) {  // a write to the stripe since the entry was built
    EraseLocked(it);
    return nullptr;
  }
  if (it->stamp > g0) return nullptr;  // newer than the caller's snapshot
  it->last_use = use_clock_.fetch_add(1) + 1;
  lru_.splice(lru_.begin(), lru_, it);
  return it->partition;
}

bool PartitionCache::CanFitLocked(size_t bytes, uint64_t scan_clock) const {
  if (bytes > capacity_bytes_) return false;
  size_t total = total_bytes_;
  for (auto it = lru_.rbegin(); total + bytes > capacity_bytes_ && it != lru_.rend(); ++it) {
    if (it->last_use > scan_clock) return false;  // used since the scan started: keep it
    total -= it->partition->memory_bytes;
  }
  return true;
}

bool PartitionCache::ShouldBuild(uint64_t table_id, std::string_view partition_key, size_t stripe,
                                 uint64_t scan_clock) {
  std::string key = CacheKey(table_id, partition_key);
  std::lock_guard lock(mu_);
  // Room for at least a minimal entry; the real size is checked again on Insert.
  if (scan_clock == refused_scan_ || !CanFitLocked(kMinCachedRows * 64, scan_clock)) return false;
  const uint64_t stamp = stamps_[stripe].load();
  if (auto ghost = ghosts_.find(key); ghost != ghosts_.end()) {
    Ghost& g = ghost->second;
    if (g.stamp == kTooLarge) return false;
    const uint64_t last_read = g.clock;
    g.clock = scan_clock;
    if (g.stamp != stamp) {  // written since the last read: this read counts as the first
      g.stamp = stamp;
      return false;
    }
    // Second read, unchanged: build, unless that would evict an entry used
    // since the partition's last read. Such an entry is used more often than
    // this partition, so replacing it only makes the next pass miss it:
    // without this rule a query paging through more partitions than the
    // cache holds (each page a scan with its own clock) rebuilt nearly every
    // partition on every pass. The ghost ages out either way.
    //
    // The room asked for is the entry's likely size: the size refused
    // before, else the average entry's (a minimal entry fits in the scraps
    // of a full cache; a real one then evicts, or is built and thrown away).
    size_t need = std::max<size_t>(kMinCachedRows * 64, g.bytes);
    if (!lru_.empty()) need = std::max(need, total_bytes_ / lru_.size());
    const uint64_t clock = std::min(last_read, scan_clock);
    if (!CanFitLocked(need, clock)) return false;
    g.admit_clock = clock;
    return true;
  }
  SetGhostLocked(std::move(key), Ghost{stamp, scan_clock});
  return false;
}

void PartitionCache::SetGhostLocked(std::string key, Ghost value) {
  if (auto ghost = ghosts_.find(key); ghost != ghosts_.end()) {
    ghost->second = value;
    return;
  }
  if (ghosts_.size() >= kMaxGhosts) {
    ghosts_.erase(ghost_order_.front());
    ghost_order_.pop_front();
  }
  ghosts_.emplace(key, value);
  ghost_order_.push_back(std::move(key));
}

void PartitionCache::NoteTooLarge(uint64_t table_id, std::string_view partition_key) {
  too_large_count_.fetch_add(1, std::memory_order_relaxed);
  std::string key = CacheKey(table_id, partition_key);
  std::lock_guard lock(mu_);
  SetGhostLocked(std::move(key), Ghost{kTooLarge, 0});
}

std::vector<std::string> PartitionCache::EntryKeys(size_t max) const {
  std::vector<std::string> keys;
  std::lock_guard lock(mu_);
  for (auto it = lru_.begin(); it != lru_.end() && keys.size() < max; ++it) keys.push_back(it->key);
  return keys;
}

bool PartitionCache::KnownTooLarge(uint64_t table_id, std::string_view partition_key) const {
  const std::string key = CacheKey(table_id, partition_key);
  std::lock_guard lock(mu_);
  const auto ghost = ghosts_.find(key);
  return ghost != ghosts_.end() && ghost->second.stamp == kTooLarge;
}

bool PartitionCache::Insert(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t g0,
                            uint64_t scan_clock, std::shared_ptr<const CachedPartition> entry) {
  if (entry->memory_bytes > max_entry_bytes()) return false;
  std::string key = CacheKey(table_id, partition_key);
  std::lock_guard lock(mu_);
  // Read under mu_ so that an entry replaced below is never newer than this one.
  const uint64_t stamp = stamps_[stripe].load();
  if (stamp > g0) return false;  // a write the snapshot may miss: see the header
  if (auto found = index_.find(key); found != index_.end()) EraseLocked(found->second);
  // Admitted by a second read: evict only what ShouldBuild allowed.
  uint64_t evict_before = scan_clock;
  Ghost* ghost = nullptr;
  if (auto it = ghosts_.find(key); it != ghosts_.end()) ghost = &it->second;
  if (ghost != nullptr && ghost->admit_clock != kNoClock) {
    evict_before = std::min(evict_before, ghost->admit_clock);
    ghost->admit_clock = kNoClock;
  }
  if (!CanFitLocked(entry->memory_bytes, evict_before)) {
    refused_scan_ = scan_clock;
    // Remembered for this partition's next admission (ShouldBuild).
    if (ghost != nullptr) {
      if (ghost->stamp != kTooLarge) ghost->bytes = entry->memory_bytes;
    } else {
      SetGhostLocked(std::move(key), Ghost{stamp, scan_clock, entry->memory_bytes});
    }
    return false;
  }
  total_bytes_ += entry->memory_bytes;
  lru_.push_front(Entry{key, table_id, stripe, stamp, use_clock_.fetch_add(1) + 1, std::move(entry)});
  entries_per_stripe_[stripe].fetch_add(1, std::memory_order_relaxed);
  index_.emplace(std::move(key), lru_.begin());
  while (total_bytes_ > capacity_bytes_) EraseLocked(std::prev(lru_.end()));
  return true;
}

void PartitionCache::DropTable(uint64_t table_id) {
  std::lock_guard lock(mu_);
  // Ghosts of the table age out of the FIFO; ids are never reused.
  for (auto it = lru_.begin(); it != lru_.end();) {
    auto next = std::next(it);
    if (it->table_id == table_id) EraseLocked(it);
    it = next;
  }
}

size_t PartitionCache::memory_bytes() const {
  std::lock_guard lock(mu_);
  return total_bytes_;
}

size_t PartitionCache::entry_count() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

}  // namespace tablestone::storage
