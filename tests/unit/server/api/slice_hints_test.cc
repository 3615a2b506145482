#include "server/api/slice_hints.h"

#include <gtest/gtest.h>

#include <chrono>

namespace tablestone::api {
namespace {

using std::chrono::milliseconds;

TEST(SliceHintsTest, ATableThatOutgrewTheSliceSkipsItForTheHoldThenTriesAgain) {
  SliceHints hints(milliseconds(1000));
  const auto t0 = SliceHints::Clock::now();
  EXPECT_FALSE(hints.SkipInline("acct", "big", t0));
  hints.OutgrewSlice("acct", "big", t0);
  EXPECT_TRUE(hints.SkipInline("acct", "big", t0));
  EXPECT_TRUE(hints.SkipInline("acct", "big", t0 + milliseconds(999)));
  EXPECT_FALSE(hints.SkipInline("acct", "big", t0 + milliseconds(1000)));  // one query tries the slice again
  // Another table (barring a shared slot, which only costs hand-offs) and the
  // same table name in another account are unaffected.
  EXPECT_FALSE(hints.SkipInline("acct", "small", t0));
  EXPECT_FALSE(hints.SkipInline("other", "big", t0));
}

}  // namespace
}  // namespace tablestone::api
