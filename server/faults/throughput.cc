#include "server/faults/throughput.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace tablestone::faults {
namespace {

std::string KeyOf(std::string_view account, std::string_view table) {
  std::string key;
  key.reserve(account.size() + 1 + table.size());
  key.append(account).append("/").append(table);
  return key;
}

constexpr double kMaxWaitMs = 3'600'000;

double StartedKiB(size_t bytes) { return std::ceil(static_cast<double>(bytes) / 1024.0); }

}  // namespace

ThroughputBudget::ThroughputBudget(uint64_t ru_per_second, Clock clock)
    : ru_per_second_(std::max<uint64_t>(ru_per_second, 1)), clock_(std::move(clock)) {}

void ThroughputBudget::Refill(Bucket* bucket, std::chrono::steady_clock::time_point now) const {
  const double seconds = std::chrono::duration<double>(now - bucket->refilled).count();
  if (seconds > 0) {
    bucket->balance = std::min(static_cast<double>(ru_per_second_),
                               bucket->balance + seconds * static_cast<double>(ru_per_second_));
    bucket->refilled = now;
  }
}

std::optional<uint64_t> ThroughputBudget::Admit(std::string_view account, std::string_view table) {
  const auto now = clock_();
  std::lock_guard lock(mu_);
  auto it = buckets_.find(KeyOf(account, table));
  if (it == buckets_.end()) return std::nullopt;  // never charged: a full balance
  Refill(&it->second, now);
  if (it->second.balance >= 0) return std::nullopt;
  // At most an hour: a charge beyond any sane cost must not overflow the cast.
  const double ms = std::ceil(-it->second.balance / static_cast<double>(ru_per_second_) * 1000.0);
  return static_cast<uint64_t>(std::clamp(ms, 1.0, kMaxWaitMs));
}

void ThroughputBudget::Charge(std::string_view account, std::string_view table, double request_units) {
  const auto now = clock_();
  std::lock_guard lock(mu_);
  auto [it, inserted] = buckets_.try_emplace(KeyOf(account, table));
  if (inserted) it->second = Bucket{static_cast<double>(ru_per_second_), now};
  Refill(&it->second, now);
  it->second.balance -= request_units;
}

double ThroughputBudget::ReadCost(size_t response_bytes) { return std::max(1.0, StartedKiB(response_bytes)); }

double ThroughputBudget::WriteCost(size_t request_bytes) { return 5 * std::max(1.0, StartedKiB(request_bytes)); }

}  // namespace tablestone::faults
