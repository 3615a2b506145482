#include "storage/warm_candidates.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tablestone::storage {
namespace {

std::vector<std::string> Keys(const std::vector<WarmCandidates::Ready>& ready) {
  std::vector<std::string> out;
  for (const auto& r : ready) out.push_back(std::to_string(r.table_id) + "/" + r.partition_key);
  return out;
}

// Rows written per stripe, as the engine's counters.
struct Stripes {
  std::map<size_t, uint64_t> rows;
  std::vector<size_t> forgotten;
  std::vector<WarmCandidates::Ready> Take(WarmCandidates& c, uint64_t min_rows) {
    return c.Take([this](size_t s) { return rows[s]; }, min_rows, &forgotten);
  }
  // A write of `n` rows that notes its partition, as RocksEngine::Write does.
  void Write(WarmCandidates& c, uint64_t table_id, const std::string& pk, size_t stripe, uint64_t n) {
    c.Note(table_id, pk, stripe, rows[stripe]);
    rows[stripe] += n;
  }
};

TEST(WarmCandidatesTest, DueOnceTheirStripeStopsMovingBetweenTwoLooks) {
  WarmCandidates c(100);
  Stripes s;
  s.Write(c, 1, "a", 7, 100);
  s.Write(c, 1, "b", 8, 100);
  EXPECT_TRUE(s.Take(c, 64).empty());  // first look: both just written
  s.rows[7] += 100;                    // "a" goes on
  EXPECT_EQ(Keys(s.Take(c, 64)), std::vector<std::string>{"1/b"});
  EXPECT_EQ(s.forgotten, std::vector<size_t>{8});
  EXPECT_EQ(c.size(), 1u);
  const auto ready = s.Take(c, 64);
  EXPECT_EQ(Keys(ready), std::vector<std::string>{"1/a"});
  ASSERT_EQ(ready.size(), 1u);
  EXPECT_EQ(ready[0].stripe, 7u);
  EXPECT_TRUE(c.empty());
}

TEST(WarmCandidatesTest, ReadyInTheOrderNotedAndOnlyWithEnoughRows) {
  WarmCandidates c(100);
  Stripes s;
  s.Write(c, 2, "z", 1, 40);
  s.Write(c, 1, "y", 2, 10);                        // too few rows
  s.Write(c, 3, std::string("x\0y", 3), 3, 64);  // keys are bytes, table ids kept apart
  s.Write(c, 2, std::string("x\0y", 3), 4, 64);
  s.Write(c, 2, "z", 1, 40);  // noted already: counted from the first note
  EXPECT_TRUE(s.Take(c, 64).empty());
  EXPECT_EQ(Keys(s.Take(c, 64)),
            (std::vector<std::string>{"2/z", "3/" + std::string("x\0y", 3), "2/" + std::string("x\0y", 3)}));
  EXPECT_TRUE(c.empty());  // the small one is forgotten too
  EXPECT_EQ(s.forgotten.size(), 4u);
}

TEST(WarmCandidatesTest, HoldsAtMostItsBound) {
  WarmCandidates c(2);
  Stripes s;
  c.Note(1, "a", 0, 0);
  c.Note(1, "b", 1, 0);
  c.Note(1, "c", 2, 0);  // not recorded
  EXPECT_EQ(c.size(), 2u);
  s.rows[0] = s.rows[1] = 100;
  s.Take(c, 64);
  EXPECT_EQ(Keys(s.Take(c, 64)), (std::vector<std::string>{"1/a", "1/b"}));
  c.Note(1, "c", 2, 0);  // room again
  EXPECT_EQ(c.size(), 1u);
}

}  // namespace
}  // namespace tablestone::storage
