#include "storage/sync_point.h"

namespace tablestone::storage {

void SyncPoints::Hit(std::string_view name) {
  std::unique_lock lock(mu_);
  auto it = counts_.find(name);
  if (it == counts_.end()) it = counts_.emplace(std::string(name), 0).first;
  ++it->second;
  changed_.notify_all();
  changed_.wait(lock, [&] { return !held_.contains(name); });
}

uint64_t SyncPoints::Count(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = counts_.find(name);
  return it == counts_.end() ? 0 : it->second;
}

bool SyncPoints::WaitFor(std::string_view name, uint64_t count, std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [&] {
    auto it = counts_.find(name);
    return it != counts_.end() && it->second >= count;
  });
}

void SyncPoints::Hold(std::string_view name) {
  std::lock_guard lock(mu_);
  held_.emplace(name);
}

void SyncPoints::Release(std::string_view name) {
  {
    std::lock_guard lock(mu_);
    auto it = held_.find(name);
    if (it != held_.end()) held_.erase(it);
  }
  changed_.notify_all();
}

void SyncPoints::ReleaseAll() {
  {
    std::lock_guard lock(mu_);
    held_.clear();
  }
  changed_.notify_all();
}

}  // namespace tablestone::storage
