#include "storage/warm_candidates.h"

#include "storage/partition_cache.h"

#include <algorithm>
#include <utility>

namespace tablestone::storage {

void WarmCandidates::Note(uint64_t table_id, std::string_view partition_key, size_t stripe, uint64_t rows_now) {
  if (by_key_.size() >= max_candidates_) return;
  std::string key = PartitionCache::CacheKey(table_id, partition_key);
  // A fresh candidate has not been seen by Take(): at least one full look
  // passes before it can be quiet.
  by_key_.emplace(std::move(key), Candidate{table_id, stripe, rows_now, rows_now - 1, next_order_++});
}

std::vector<WarmCandidates::Ready> WarmCandidates::Take(const std::function<uint64_t(size_t)>& rows_of,
                                                        uint64_t min_rows, std::vector<size_t>* forgotten) {
  std::vector<std::pair<uint64_t, Ready>> due;
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    Candidate& c = it->second;
    const uint64_t rows = rows_of(c.stripe);
    if (rows != c.rows_seen) {  // written since the last look
      c.rows_seen = rows;
      ++it;
      continue;
    }
    if (rows - c.rows_at_note >= min_rows) {
      due.emplace_back(c.order, Ready{c.table_id, it->first.substr(sizeof(uint64_t)), c.stripe, rows - c.rows_at_note});
    }
    forgotten->push_back(c.stripe);
    it = by_key_.erase(it);
  }
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Ready> out;
  out.reserve(due.size());
  for (auto& [order, ready] : due) out.push_back(std::move(ready));
  return out;
}

}  // namespace tablestone::storage
