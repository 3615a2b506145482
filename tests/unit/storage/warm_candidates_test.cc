#include "storage/warm_candidates.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace tablestone::storage {
namespace {

using Clock = WarmCandidates::Clock;
using std::chrono::milliseconds;

std::vector<std::string> Keys(const std::vector<WarmCandidates::Ready>& ready) {
  std::vector<std::string> out;
  for (const auto& r : ready) out.push_back(std::to_string(r.table_id) + "/" + r.partition_key);
  return out;
}

TEST(WarmCandidatesTest, PartitionsAreDueOnceTheirWritesPause) {
  WarmCandidates c(100);
  const Clock::time_point t0{};
  c.Note(1, "a", 7, 100, t0);
  c.Note(1, "b", 8, 100, t0 + milliseconds(5));
  c.Note(1, "a", 7, 100, t0 + milliseconds(10));  // "a" written again: its pause starts again
  EXPECT_EQ(c.NextDue(milliseconds(20)), t0 + milliseconds(25));
  EXPECT_TRUE(c.Take(t0 + milliseconds(24), milliseconds(20), 64).empty());
  const auto ready = c.Take(t0 + milliseconds(25), milliseconds(20), 64);
  EXPECT_EQ(Keys(ready), std::vector<std::string>{"1/b"});
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].stripe, 8u);
  EXPECT_EQ(Keys(c.Take(t0 + milliseconds(30), milliseconds(20), 64)), std::vector<std::string>{"1/a"});
  EXPECT_TRUE(c.empty());
  EXPECT_FALSE(c.NextDue(milliseconds(20)).has_value());
}

TEST(WarmCandidatesTest, ReadyInTheOrderFirstWrittenAndOnlyWithEnoughRows) {
  WarmCandidates c(100);
  const Clock::time_point t0{};
  c.Note(2, "z", 0, 40, t0);
  c.Note(1, "y", 0, 10, t0);        // too few rows in all
  c.Note(2, "z", 0, 40, t0);        // 80 in all
  c.Note(3, std::string("x\0y", 3), 0, 64, t0);  // keys are bytes, table ids kept apart
  c.Note(2, std::string("x\0y", 3), 0, 64, t0);
  EXPECT_EQ(Keys(c.Take(t0 + milliseconds(1), milliseconds(1), 64)),
            (std::vector<std::string>{"2/z", "3/" + std::string("x\0y", 3), "2/" + std::string("x\0y", 3)}));
  EXPECT_TRUE(c.empty());  // the small one is dropped, not kept for later
}

TEST(WarmCandidatesTest, HoldsAtMostItsBound) {
  WarmCandidates c(2);
  const Clock::time_point t0{};
  c.Note(1, "a", 0, 100, t0);
  c.Note(1, "b", 0, 100, t0);
  c.Note(1, "c", 0, 100, t0);  // not recorded
  c.Note(1, "a", 0, 100, t0);  // a known one still counts
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(Keys(c.Take(t0, milliseconds(0), 64)), (std::vector<std::string>{"1/a", "1/b"}));
  c.Note(1, "c", 0, 100, t0);  // room again
  EXPECT_EQ(c.size(), 1u);
}

}  // namespace
}  // namespace tablestone::storage
