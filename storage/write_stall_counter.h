// WriteStallCounter: a RocksDB listener that keeps, in a shared counter, how
// many column families RocksDB is delaying or stopping writes of right now,
// and, in a second one (optional), how many stalls began: a column family
// going from normal to delayed or stopped (the metric
// tablestone_storage_write_stalls_total). RocksEngine::CanWriteWithoutWaiting
// reads the first to decide whether a write may run on the caller's thread
// (engine.h). Pinned by
// tests/unit/storage/write_stall_counter_test.cc.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>

#include <rocksdb/listener.h>

namespace tablestone::storage {

class WriteStallCounter final : public rocksdb::EventListener {
 public:
  explicit WriteStallCounter(std::shared_ptr<std::atomic<int>> count,
                             std::shared_ptr<std::atomic<uint64_t>> onsets = nullptr)
      : count_(std::move(count)), onsets_(std::move(onsets)) {}

  // RocksDB calls this on the thread that changed a column family's
  // condition, once per change; delayed <-> stopped keeps the count.
  void OnStallConditionsChanged(const rocksdb::WriteStallInfo& info) override {
    const bool was = info.condition.prev != rocksdb::WriteStallCondition::kNormal;
    const bool is = info.condition.cur != rocksdb::WriteStallCondition::kNormal;
    if (was != is) count_->fetch_add(is ? 1 : -1, std::memory_order_relaxed);
    if (!was && is && onsets_) onsets_->fetch_add(1, std::memory_order_relaxed);
  }

 private:
  std::shared_ptr<std::atomic<int>> count_;
  std::shared_ptr<std::atomic<uint64_t>> onsets_;  // may be null
};

}  // namespace tablestone::storage
