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
constexpr std::chrono::seconds kCreateWindow{60};

double StartedKiB(size_t bytes) { return std::ceil(static_cast<double>(bytes) / 1024.0); }

}  // namespace

ThroughputBudget::ThroughputBudget(uint64_t ru_per_second, Clock clock, uint64_t table_creates_per_minute)
    : ru_per_second_(std::max<uint64_t>(ru_per_second, 1)),
      clock_(std::move(clock)),
      table_creates_per_minute_(table_creates_per_minute) {}

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

std::optional<uint64_t> ThroughputBudget::AdmitTableCreate(std::string_view account) {
  if (table_creates_per_minute_ == 0) return std::nullopt;
  const auto now = clock_();
  std::lock_guard lock(mu_);
  auto it = creates_.find(account);
  if (it == creates_.end()) return std::nullopt;
  auto& times = it->second;
  while (!times.empty() && now - times.front() >= kCreateWindow) times.pop_front();
  if (times.size() < table_creates_per_minute_) return std::nullopt;
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(times.front() + kCreateWindow - now);
  return static_cast<uint64_t>(std::max<int64_t>(wait.count(), 1));
}

void ThroughputBudget::NoteTableCreate(std::string_view account) {
  if (table_creates_per_minute_ == 0) return;
  const auto now = clock_();
  std::lock_guard lock(mu_);
  auto& times = creates_.try_emplace(std::string(account)).first->second;
  times.push_back(now);
  // Creates admitted together may overshoot the limit; keep only the newest.
  while (times.size() > table_creates_per_minute_) times.pop_front();
}

double ThroughputBudget::ReadCost(size_t response_bytes) { return std::max(1.0, StartedKiB(response_bytes)); }

double ThroughputBudget::WriteCost(size_t request_bytes) { return 5 * std::max(1.0, StartedKiB(request_bytes)); }

}  // namespace tablestone::faults
