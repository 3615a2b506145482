#include "server/http/connection_registry.h"

#include <vector>

namespace tablestone::http {

ConnectionRegistry::Id ConnectionRegistry::Add(std::weak_ptr<Closable> connection, size_t max_connections) {
  return Add(std::move(connection), max_connections, std::string(), 0);
}

ConnectionRegistry::Id ConnectionRegistry::Add(std::weak_ptr<Closable> connection, size_t max_connections,
                                               const std::string& address, size_t max_per_address) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_ || live_.size() >= max_connections) return 0;
  const bool counted = !address.empty() && max_per_address > 0;
  if (counted) {
    size_t& from = per_address_[address];
    if (from >= max_per_address) return 0;
    ++from;
  }
  Id id = next_id_++;
  live_.emplace(id, Entry{std::move(connection), counted ? address : std::string()});
  return id;
}

size_t ConnectionRegistry::CountFrom(const std::string& address) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = per_address_.find(address);
  return it == per_address_.end() ? 0 : it->second;
}

void ConnectionRegistry::Remove(Id id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(id);
  if (it == live_.end()) return;
  if (!it->second.address.empty()) {
    auto from = per_address_.find(it->second.address);
    if (from != per_address_.end() && --from->second == 0) per_address_.erase(from);
  }
  live_.erase(it);
  if (live_.empty()) empty_cv_.notify_all();
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
    for (auto& [id, entry] : live_) {
      if (auto strong = entry.connection.lock()) targets.push_back(std::move(strong));
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
