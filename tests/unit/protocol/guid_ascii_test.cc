// The shared helpers: protocol/guid.h and storage/model/ascii.h.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "protocol/guid.h"
#include "storage/model/ascii.h"

namespace tablestone {
namespace {

TEST(GuidTest, VersionFourLowerCaseAndFresh) {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) {
    std::string g = protocol::NewGuid();
    ASSERT_EQ(g.size(), 36u) << g;
    for (size_t k : {8u, 13u, 18u, 23u}) EXPECT_EQ(g[k], '-') << g;
    EXPECT_EQ(g[14], '4') << g;                                        // version 4
    EXPECT_NE(std::string("89ab").find(g[19]), std::string::npos) << g;  // variant 1
    for (char c : g) EXPECT_TRUE(c == '-' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << g;
    seen.insert(g);
  }
  EXPECT_EQ(seen.size(), 100u);
}

// The generator is shared by every thread: none of them repeats another's GUID.
TEST(GuidTest, ThreadsNeverRepeatEachOther) {
  constexpr int kThreads = 4;
  constexpr int kEach = 2000;
  std::vector<std::vector<std::string>> made(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&made, t] {
      for (int i = 0; i < kEach; ++i) made[t].push_back(protocol::NewGuid());
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::string> seen;
  for (const auto& list : made) seen.insert(list.begin(), list.end());
  EXPECT_EQ(seen.size(), static_cast<size_t>(kThreads * kEach));
}

TEST(AsciiTest, FoldsOnlyAsciiLetters) {
  EXPECT_EQ(model::ToAsciiLower("MyTable-09_Z"), "mytable-09_z");
  EXPECT_EQ(model::ToAsciiLower("\xC3\x84"), "\xC3\x84");  // UTF-8 bytes are kept
  static_assert(model::AsciiLower('Q') == 'q' && model::AsciiLower('[') == '[' && model::AsciiLower('@') == '@');
  EXPECT_TRUE(model::EqualsIgnoreCase("Tables", "tABLES"));
  EXPECT_FALSE(model::EqualsIgnoreCase("Table", "Tables"));
  EXPECT_FALSE(model::EqualsIgnoreCase("a[", "A{"));
}

}  // namespace
}  // namespace tablestone
