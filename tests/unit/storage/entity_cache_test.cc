// EntityCache: hits and misses, the generation rule that keeps a read from
// caching a value older than a concurrent write, write-through of present
// keys only, and the byte bound with LRU eviction.
#include "storage/entity_cache.h"

#include <gtest/gtest.h>

#include <string>

namespace tablestone::storage {
namespace {

std::string Value(char c, size_t n = 100) { return std::string(n, c); }

TEST(EntityCacheTest, MissThenFillThenHit) {
  EntityCache cache(1 << 20);
  std::string v;
  uint64_t g = 0;
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  cache.Fill("k", "stored", g);
  ASSERT_TRUE(cache.Lookup("k", &v, &g));
  EXPECT_EQ(v, "stored");
  EXPECT_EQ(cache.entry_count(), 1u);
  EXPECT_EQ(cache.size_bytes(), EntityCache::Charge("k", std::string("stored").capacity()));
}

TEST(EntityCacheTest, CountsHitsAndMisses) {
  EntityCache cache(1 << 20, 4);
  std::string value;
  uint64_t generation = 0;
  EXPECT_FALSE(cache.Lookup("a", &value, &generation));
  cache.Fill("a", "va", generation);
  ASSERT_TRUE(cache.Lookup("a", &value, &generation));
  EXPECT_FALSE(cache.Lookup("b", &value, &generation));
  const EntityCache::Counts counts = cache.counts();
  EXPECT_EQ(counts.hits, 1u);
  EXPECT_EQ(counts.misses, 2u);
}

TEST(EntityCacheTest, FillAfterAWriteInTheShardIsDropped) {
  // One shard, so any write moves the generation every reader saw.
  EntityCache cache(1 << 20, 1);
  std::string v;
  uint64_t g = 0;
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  cache.Update("k", "new");  // a write committed after the reader's RocksDB read
  cache.Fill("k", "old", g);
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  EXPECT_FALSE(cache.Lookup("other", &v, &g));
  cache.Erase("k");
  cache.Fill("other", "x", g);
  EXPECT_FALSE(cache.Lookup("other", &v, &g));
  cache.Fill("other", "x", g);  // nothing moved since this miss
  EXPECT_TRUE(cache.Lookup("other", &v, &g));
}

TEST(EntityCacheTest, FillNeverReplacesAPresentValue) {
  EntityCache cache(1 << 20, 1);
  std::string v;
  uint64_t g = 0;
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  cache.Fill("k", "first", g);
  cache.Fill("k", "second", g);
  ASSERT_TRUE(cache.Lookup("k", &v, &g));
  EXPECT_EQ(v, "first");
}

TEST(EntityCacheTest, UpdateReplacesPresentKeysAndInsertsNothing) {
  EntityCache cache(1 << 20);
  std::string v;
  uint64_t g = 0;
  cache.Update("absent", "x");
  EXPECT_FALSE(cache.Lookup("absent", &v, &g));
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  cache.Fill("k", Value('a'), g);
  cache.Update("k", Value('b', 300));
  ASSERT_TRUE(cache.Lookup("k", &v, &g));
  EXPECT_EQ(v, Value('b', 300));
  cache.Update("k", "short");
  ASSERT_TRUE(cache.Lookup("k", &v, &g));
  EXPECT_EQ(v, "short");
  cache.Erase("k");
  EXPECT_FALSE(cache.Lookup("k", &v, &g));
  EXPECT_EQ(cache.entry_count(), 0u);
  EXPECT_EQ(cache.size_bytes(), 0u);
}

TEST(EntityCacheTest, StaysWithinCapacityEvictingTheLeastRecentlyUsed) {
  const size_t charge = EntityCache::Charge("k000", 100);
  EntityCache cache(charge * 3 + charge / 2, 1);  // room for three entries
  std::string v;
  uint64_t g = 0;
  auto fill = [&](const std::string& k) {
    if (!cache.Lookup(k, &v, &g)) cache.Fill(k, Value('v'), g);
  };
  fill("k001");
  fill("k002");
  fill("k003");
  ASSERT_EQ(cache.entry_count(), 3u);
  ASSERT_TRUE(cache.Lookup("k001", &v, &g));  // k002 is now the least recently used
  fill("k004");
  EXPECT_EQ(cache.entry_count(), 3u);
  EXPECT_LE(cache.size_bytes(), charge * 3 + charge / 2);
  EXPECT_FALSE(cache.Lookup("k002", &v, &g));
  EXPECT_TRUE(cache.Lookup("k001", &v, &g));
  EXPECT_TRUE(cache.Lookup("k003", &v, &g));
  EXPECT_TRUE(cache.Lookup("k004", &v, &g));
  // An update that grows a value past the room left evicts others, not itself.
  cache.Update("k004", Value('w', 250));
  EXPECT_LE(cache.size_bytes(), charge * 3 + charge / 2);
  ASSERT_TRUE(cache.Lookup("k004", &v, &g));
  EXPECT_EQ(v, Value('w', 250));
}

TEST(EntityCacheTest, AValueLargerThanAShardIsNeverCached) {
  EntityCache cache(4096, 2);  // 2 KiB per shard
  std::string v;
  uint64_t g = 0;
  EXPECT_FALSE(cache.Lookup("big", &v, &g));
  cache.Fill("big", Value('x', 4096), g);
  EXPECT_FALSE(cache.Lookup("big", &v, &g));
  cache.Fill("big", "small", g);
  ASSERT_TRUE(cache.Lookup("big", &v, &g));
  cache.Update("big", Value('x', 4096));  // the write stands; the old copy must go
  EXPECT_FALSE(cache.Lookup("big", &v, &g));
  EXPECT_EQ(cache.size_bytes(), 0u);
}

}  // namespace
}  // namespace tablestone::storage
