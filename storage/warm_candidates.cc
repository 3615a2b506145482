#include "storage/warm_candidates.h"

#include <algorithm>
#include <cstring>

namespace tablestone::storage {

std::string_view WarmCandidates::KeyOf(uint64_t table_id, std::string_view partition_key) {
  key_buffer_.resize(sizeof table_id + partition_key.size());
  std::memcpy(key_buffer_.data(), &table_id, sizeof table_id);
  std::memcpy(key_buffer_.data() + sizeof table_id, partition_key.data(), partition_key.size());
  return key_buffer_;
}

void WarmCandidates::Note(uint64_t table_id, std::string_view partition_key, size_t stripe, size_t rows,
                          Clock::time_point now) {
  const std::string_view key = KeyOf(table_id, partition_key);
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    if (by_key_.size() >= max_candidates_) return;
    it = by_key_.emplace(std::string(key), Candidate{table_id, stripe, 0, next_order_++, now}).first;
  }
  it->second.rows += rows;
  it->second.last_write = now;
}

std::vector<WarmCandidates::Ready> WarmCandidates::Take(Clock::time_point now, Clock::duration quiet,
                                                        size_t min_rows) {
  std::vector<std::pair<uint64_t, Ready>> due;
  for (auto it = by_key_.begin(); it != by_key_.end();) {
    const Candidate& c = it->second;
    if (now - c.last_write < quiet) {
      ++it;
      continue;
    }
    if (c.rows >= min_rows) {
      due.emplace_back(c.order, Ready{c.table_id, it->first.substr(sizeof(uint64_t)), c.stripe});
    }
    it = by_key_.erase(it);
  }
  std::sort(due.begin(), due.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Ready> out;
  out.reserve(due.size());
  for (auto& [order, ready] : due) out.push_back(std::move(ready));
  return out;
}

std::optional<WarmCandidates::Clock::time_point> WarmCandidates::NextDue(Clock::duration quiet) const {
  std::optional<Clock::time_point> due;
  for (const auto& [key, c] : by_key_) {
    if (!due || c.last_write + quiet < *due) due = c.last_write + quiet;
  }
  return due;
}

}  // namespace tablestone::storage
