// The request-unit budget of Cosmos DB for Table mode (docs/cosmos-mode.md):
// each table has `ru_per_second` request units a second, a burst of one
// second's worth; a request that finds its table's balance below zero is
// refused (the dispatcher answers 429 with x-ms-retry-after-ms, as the
// service does: Learn, "HTTP Status Codes for Azure Cosmos DB"), and an
// answered request is charged after the fact, when its cost is known.
//
// Deterministic given the request sequence and the clock (injectable for
// tests). Memory: one bucket per (account, table) that was charged, and
// only answered requests are charged, so unknown table names cost nothing.
// Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace tablestone::faults {

class ThroughputBudget {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // ru_per_second > 0. table_creates_per_minute: see AdmitTableCreate (0 = no limit).
  explicit ThroughputBudget(uint64_t ru_per_second, Clock clock = &std::chrono::steady_clock::now,
                            uint64_t table_creates_per_minute = 0);

  // nullopt: admitted. Else how long to wait, in milliseconds (at least 1),
  // until the table's balance is back at zero.
  std::optional<uint64_t> Admit(std::string_view account, std::string_view table);
  // Debits `request_units` from the table's balance.
  void Charge(std::string_view account, std::string_view table, double request_units);

  // The deliberate approximation of the cost model (Learn, "Request Units in
  // Azure Cosmos DB": a point read of a 1 KB item costs 1 RU): a read 1 RU per
  // started KiB answered (at least 1); a write or batch 5 RU per started KiB
  // sent (at least 5); a table operation 5.
  static double ReadCost(size_t response_bytes);

  // The table-creation limit (Learn, "Frequently asked questions about Azure
  // Cosmos DB for Table", 2020 version: a rapid rate of table creation is
  // throttled; keep it under 5 a minute): nullopt when `account` created
  // fewer than table_creates_per_minute tables in the last 60 s, else the
  // milliseconds (at least 1) until the oldest of them leaves that window.
  std::optional<uint64_t> AdmitTableCreate(std::string_view account);
  // Records a table `account` created. Memory: at most
  // table_creates_per_minute times per account that created a table.
  void NoteTableCreate(std::string_view account);
  static double WriteCost(size_t request_bytes);
  static constexpr double kTableOperationCost = 5;

  uint64_t ru_per_second() const { return ru_per_second_; }

 private:
  struct Bucket {
    double balance = 0;
    std::chrono::steady_clock::time_point refilled;
  };
  // Refills `bucket` to now (capped at one second's worth).
  void Refill(Bucket* bucket, std::chrono::steady_clock::time_point now) const;

  const uint64_t ru_per_second_;
  const Clock clock_;
  const uint64_t table_creates_per_minute_;
  std::mutex mu_;
  std::map<std::string, Bucket, std::less<>> buckets_;  // "<account>/<table>"
  // Per account, when its last tables were created (oldest first).
  std::map<std::string, std::deque<std::chrono::steady_clock::time_point>, std::less<>> creates_;
};

}  // namespace tablestone::faults
