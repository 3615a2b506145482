// WriteStallCounter (storage/write_stall_counter.h): counts the column
// families in a delayed or stopped condition from RocksDB's notifications.
#include "storage/write_stall_counter.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>

namespace tablestone::storage {
namespace {

using Condition = rocksdb::WriteStallCondition;

void Notify(WriteStallCounter& counter, Condition prev, Condition cur) {
  rocksdb::WriteStallInfo info;
  info.cf_name = "entities";
  info.condition.prev = prev;
  info.condition.cur = cur;
  counter.OnStallConditionsChanged(info);
}

TEST(WriteStallCounterTest, CountsColumnFamiliesOutOfTheNormalCondition) {
  auto count = std::make_shared<std::atomic<int>>(0);
  WriteStallCounter counter(count);
  Notify(counter, Condition::kNormal, Condition::kDelayed);
  EXPECT_EQ(count->load(), 1);
  Notify(counter, Condition::kDelayed, Condition::kStopped);  // still stalled: no change
  EXPECT_EQ(count->load(), 1);
  Notify(counter, Condition::kNormal, Condition::kStopped);  // a second column family
  EXPECT_EQ(count->load(), 2);
  Notify(counter, Condition::kStopped, Condition::kNormal);
  Notify(counter, Condition::kStopped, Condition::kNormal);
  EXPECT_EQ(count->load(), 0);
}

TEST(WriteStallCounterTest, CountsStallOnsetsOnly) {
  auto count = std::make_shared<std::atomic<int>>(0);
  auto onsets = std::make_shared<std::atomic<uint64_t>>(0);
  WriteStallCounter counter(count, onsets);
  Notify(counter, Condition::kNormal, Condition::kDelayed);   // onset
  Notify(counter, Condition::kDelayed, Condition::kStopped);  // worse, same stall
  Notify(counter, Condition::kStopped, Condition::kNormal);   // over
  Notify(counter, Condition::kNormal, Condition::kStopped);   // a second onset
  EXPECT_EQ(onsets->load(), 2u);
  EXPECT_EQ(count->load(), 1);
}

}  // namespace
}  // namespace tablestone::storage
