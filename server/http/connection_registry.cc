#include "server/http/connection_registry.h"

#include <vector>

namespace tablestone::http {

ConnectionRegistry::Id ConnectionRegistry::Add(std::weak_ptr<Closable> connection, size_t max_connections) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || live_.size() >= max_connections) return 0;
  Id id = next_id_++;
  live_.emplace(id, std::move(connection));
  return id;
}

void ConnectionRegistry::Remove(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (live_.erase(id) > 0 && live_.empty()) empty_cv_.notify_all();
}

void ConnectionRegistry::CloseAll(CloseMode mode) {
  // Collect strong references under the lock, call out without it: a
  // connection's RequestClose only posts work, but a connection that dies
  // meanwhile runs Remove(), which takes the lock.
  std::vector<std::shared_ptr<Closable>> targets;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    targets.reserve(live_.size());
    for (auto& [id, weak] : live_) {
      if (auto strong = weak.lock()) targets.push_back(std::move(strong));
    }
  }
  for (auto& target : targets) target->RequestClose(mode);
}

bool ConnectionRegistry::WaitUntilEmpty(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return empty_cv_.wait_for(lock, timeout, [this] { return live_.empty(); });
}

size_t ConnectionRegistry::Size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

bool ConnectionRegistry::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

}  // namespace tablestone::http
