#include "server/faults/throughput.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>
#include <string>

namespace tablestone::faults {
namespace {

using namespace std::chrono_literals;

class FakeClock {
 public:
  std::chrono::steady_clock::time_point now = std::chrono::steady_clock::time_point() + 1h;
  ThroughputBudget::Clock clock() {
    return [this] { return now; };
  }
};

TEST(ThroughputBudgetTest, AdmitsUntilTheBalanceIsSpentThenSaysHowLongToWait) {
  FakeClock time;
  ThroughputBudget budget(100, time.clock());
  EXPECT_FALSE(budget.Admit("a", "t"));  // never charged
  budget.Charge("a", "t", 100);          // the burst: one second's worth
  EXPECT_FALSE(budget.Admit("a", "t"));  // balance 0: still admitted
  budget.Charge("a", "t", 50);           // balance -50
  auto wait = budget.Admit("a", "t");
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 500u);  // 50 RU at 100 RU/s
  time.now += 250ms;       // +25
  EXPECT_EQ(*budget.Admit("a", "t"), 250u);
  time.now += 250ms;
  EXPECT_FALSE(budget.Admit("a", "t"));
}

TEST(ThroughputBudgetTest, TablesHaveBudgetsOfTheirOwn) {
  FakeClock time;
  ThroughputBudget budget(10, time.clock());
  budget.Charge("a", "t", 20);
  EXPECT_TRUE(budget.Admit("a", "t"));
  EXPECT_FALSE(budget.Admit("a", "other"));
  EXPECT_FALSE(budget.Admit("b", "t"));
  // Names are compared exactly (Cosmos DB's table names are case-sensitive).
  EXPECT_FALSE(budget.Admit("a", "T"));
}

TEST(ThroughputBudgetTest, TheBalanceRefillsToOneSecondsWorthAtMost) {
  FakeClock time;
  ThroughputBudget budget(10, time.clock());
  budget.Charge("a", "t", 1);
  time.now += 1h;  // no hoarding: the burst stays 10
  budget.Charge("a", "t", 10);
  EXPECT_FALSE(budget.Admit("a", "t"));
  budget.Charge("a", "t", 1);
  EXPECT_EQ(*budget.Admit("a", "t"), 100u);
}

// Hostile settings: a budget of 0 is treated as 1 RU/s (the server never
// builds one: 0 means off), and a huge one never overflows the wait.
TEST(ThroughputBudgetTest, ZeroAndHugeBudgetsAreSafe) {
  FakeClock time;
  ThroughputBudget tiny(0, time.clock());
  EXPECT_EQ(tiny.ru_per_second(), 1u);
  tiny.Charge("a", "t", 3);
  EXPECT_EQ(*tiny.Admit("a", "t"), 2000u);
  ThroughputBudget huge(std::numeric_limits<uint64_t>::max(), time.clock());
  huge.Charge("a", "t", 1e18);
  EXPECT_FALSE(huge.Admit("a", "t"));
  huge.Charge("a", "t", 1e300);
  auto wait = huge.Admit("a", "t");
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 3'600'000u);  // capped at an hour
}

TEST(ThroughputBudgetTest, CostModel) {
  EXPECT_EQ(ThroughputBudget::ReadCost(0), 1);
  EXPECT_EQ(ThroughputBudget::ReadCost(1024), 1);
  EXPECT_EQ(ThroughputBudget::ReadCost(1025), 2);
  EXPECT_EQ(ThroughputBudget::WriteCost(10), 5);
  EXPECT_EQ(ThroughputBudget::WriteCost(3000), 15);
}

// Table creation: at most N per account in any 60 s; the wait is until the
// oldest of the last N leaves the window.
TEST(ThroughputBudgetTest, TableCreatesPerMinutePerAccount) {
  FakeClock time;
  ThroughputBudget budget(1000, time.clock(), 5);
  for (int i = 0; i < 5; ++i) {
    EXPECT_FALSE(budget.AdmitTableCreate("a")) << i;
    budget.NoteTableCreate("a");
    time.now += 1s;
  }
  auto wait = budget.AdmitTableCreate("a");  // 5 s after the first
  ASSERT_TRUE(wait);
  EXPECT_EQ(*wait, 55'000u);
  EXPECT_FALSE(budget.AdmitTableCreate("b"));  // another account's window
  time.now += 55s;
  EXPECT_FALSE(budget.AdmitTableCreate("a"));
  budget.NoteTableCreate("a");
  EXPECT_EQ(*budget.AdmitTableCreate("a"), 1'000u);  // the second create, 1 s later in the old window
  // 0: no limit, nothing remembered.
  ThroughputBudget unlimited(1000, time.clock(), 0);
  for (int i = 0; i < 100; ++i) unlimited.NoteTableCreate("a");
  EXPECT_FALSE(unlimited.AdmitTableCreate("a"));
}

}  // namespace
}  // namespace tablestone::faults
