// The scan cache (storage/partition_cache.h) in isolation: the columnar
// builder, validity stamps, eviction, admission and the rows' renderings.
// The engine scanning through the cache is cached_scan_test.cc.
#include "storage/partition_cache.h"

#include <gtest/gtest.h>

#include <chrono>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "storage/engine.h"
#include "storage/entity_codec.h"
#include "storage/key_codec.h"
#include "storage/model/filter_eval.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using model::EdmValue;
using model::Entity;
using model::EntityKey;
using model::KeyBound;
using model::KeyRange;
using model::ScanSpec;
using model::WriteKind;
using test_util::MakeEntity;
using test_util::Op;
using test_util::RowKey;

// A finished entry of `rows` rows of partition `pk` of table 1; `approx`
// receives the builder's estimate just before Finish.
std::shared_ptr<const CachedPartition> BuildEntry(const std::string& pk, int rows, size_t* approx = nullptr) {
  PartitionBuilder builder(PartitionStart(1, pk), pk);
  const std::string prefix = PartitionStart(1, pk);
  for (int i = 0; i < rows; ++i) {
    Entity e = MakeEntity(pk, RowKey(i), {{"n", EdmValue::Int32(i)}});
    if (i % 2 == 0) e.properties.push_back({"s", EdmValue::String("x" + std::to_string(i))});
    e.timestamp = 1000 + i;
    const std::string key = EncodeEntityKey(1, pk, e.row_key);
    builder.Add(std::string_view(key).substr(prefix.size()), e, EncodeEntityValue(e));
  }
  if (approx != nullptr) *approx = builder.approx_bytes();
  return builder.Finish(std::string(), 0);
}

TEST(PartitionCacheTest, BuilderLaysOutColumnsAndFindsRows) {
  auto entry = BuildEntry("p", 10);
  const RowBlock& block = entry->block;
  ASSERT_EQ(block.row_count(), 10u);
  EXPECT_EQ(block.partition_key, "p");
  const RowColumn* n = block.FindColumn("n");
  const RowColumn* s = block.FindColumn("s");
  ASSERT_NE(n, nullptr);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(n->uniform_tag, static_cast<uint8_t>(model::EdmType::kInt32));
  EXPECT_EQ(s->uniform_tag, kMixedTag);  // absent in odd rows
  EXPECT_EQ(n->ints[7], 7);
  EXPECT_EQ(s->tags[3], kAbsentTag);
  EXPECT_EQ(s->texts[4], "x4");
  Entity row = block.RowEntity(4);
  EXPECT_EQ(row.row_key, "r0004");
  EXPECT_EQ(row.timestamp, 1004);
  EXPECT_EQ(row.properties.size(), 2u);
  EXPECT_GT(entry->memory_bytes, entry->arena.size());
  // LowerBound over full encoded keys.
  EXPECT_EQ(entry->LowerBound(PartitionStart(1, "p")), 0u);
  EXPECT_EQ(entry->LowerBound(TableStart(1)), 0u);
  EXPECT_EQ(entry->LowerBound(EncodeEntityKey(1, "p", "r0003")), 3u);
  EXPECT_EQ(entry->LowerBound(KeySuccessor(EncodeEntityKey(1, "p", "r0003"))), 4u);
  EXPECT_EQ(entry->LowerBound(EncodeEntityKey(1, "p", "r00035")), 4u);
  EXPECT_EQ(entry->LowerBound(PartitionEnd(1, "p")), 10u);
  EXPECT_EQ(entry->LowerBound(PartitionStart(1, "q")), 10u);
  EXPECT_EQ(entry->LowerBound(TableEnd(1)), 10u);
}

TEST(PartitionCacheTest, BuilderComputesZoneMaps) {
  // n: Int32 0..9 in every row; s: strings in even rows (no range).
  auto entry = BuildEntry("p", 10);
  const RowColumn* n = entry->block.FindColumn("n");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->value_tag, static_cast<uint8_t>(model::EdmType::kInt32));
  EXPECT_TRUE(n->has_range);
  EXPECT_EQ(n->min_int, 0);
  EXPECT_EQ(n->max_int, 9);
  const RowColumn* s = entry->block.FindColumn("s");
  EXPECT_EQ(s->value_tag, static_cast<uint8_t>(model::EdmType::kString));
  EXPECT_FALSE(s->has_range);

  // Doubles (one column with a NaN), DateTime with gaps, mixed types.
  const std::string pk = "z";
  PartitionBuilder builder(PartitionStart(1, pk), pk);
  const std::string prefix = PartitionStart(1, pk);
  const double doubles[] = {2.5, -1.0, 0.0, 7.0};
  for (int i = 0; i < 4; ++i) {
    Entity e = MakeEntity(pk, RowKey(i), {{"d", EdmValue::Double(doubles[i])},
                                          {"nan", EdmValue::Double(i == 2 ? std::nan("") : 1.0)},
                                          {"m", i == 3 ? EdmValue::Int64(5) : EdmValue::Int32(i)}});
    if (i != 1) e.properties.push_back({"t", EdmValue::DateTime(1000 - i)});
    const std::string key = EncodeEntityKey(1, pk, e.row_key);
    builder.Add(std::string_view(key).substr(prefix.size()), e, EncodeEntityValue(e));
  }
  auto z = builder.Finish(std::string(), 0);
  const RowColumn* d = z->block.FindColumn("d");
  EXPECT_TRUE(d->has_range);
  EXPECT_EQ(d->min_double, -1.0);
  EXPECT_EQ(d->max_double, 7.0);
  const RowColumn* nan = z->block.FindColumn("nan");
  EXPECT_EQ(nan->value_tag, static_cast<uint8_t>(model::EdmType::kDouble));
  EXPECT_FALSE(nan->has_range);
  const RowColumn* t = z->block.FindColumn("t");
  EXPECT_EQ(t->uniform_tag, kMixedTag);  // absent in row 1
  EXPECT_EQ(t->value_tag, static_cast<uint8_t>(model::EdmType::kDateTime));
  EXPECT_TRUE(t->has_range);
  EXPECT_EQ(t->min_int, 997);
  EXPECT_EQ(t->max_int, 1000);
  const RowColumn* m = z->block.FindColumn("m");
  EXPECT_EQ(m->value_tag, kMixedTag);
  EXPECT_FALSE(m->has_range);
}

TEST(PartitionCacheTest, WritesInvalidateAndSnapshotsMustNotBeOlderThanTheStamp) {
  PartitionCache cache(1u << 20, 4);
  auto entry = BuildEntry("p", 10);
  const uint64_t g0 = cache.Sequence();
  cache.Insert(1, "p", 2, g0, cache.UseClock(), entry);
  EXPECT_EQ(cache.Lookup(1, "p", 2, g0), entry);
  EXPECT_EQ(cache.Lookup(1, "q", 2, g0), nullptr);
  EXPECT_EQ(cache.Lookup(2, "p", 2, g0), nullptr);
  cache.NoteWrite(3);  // another stripe: still valid
  EXPECT_EQ(cache.Lookup(1, "p", 2, cache.Sequence()), entry);
  cache.NoteWrite(2);
  EXPECT_EQ(cache.Lookup(1, "p", 2, cache.Sequence()), nullptr);
  EXPECT_EQ(cache.entry_count(), 0u);  // dropped on sight
  // Built from a snapshot older than the stripe's last write: refused.
  cache.Insert(1, "p", 2, g0, cache.UseClock(), entry);
  EXPECT_EQ(cache.entry_count(), 0u);
  // Built after that write: kept, but not served to a scan whose snapshot
  // predates the write.
  const uint64_t g1 = cache.Sequence();
  cache.Insert(1, "p", 2, g1, cache.UseClock(), entry);
  EXPECT_EQ(cache.Lookup(1, "p", 2, g0), nullptr);
  EXPECT_EQ(cache.Lookup(1, "p", 2, g1), entry);
  cache.DropTable(1);
  EXPECT_EQ(cache.Lookup(1, "p", 2, g1), nullptr);
  EXPECT_EQ(cache.memory_bytes(), 0u);
}

// A build stops once WrittenSince says Insert() would refuse its entry.
TEST(PartitionCacheTest, WrittenSinceAgreesWithInsert) {
  PartitionCache cache(1u << 20, 4);
  const uint64_t g0 = cache.Sequence();
  EXPECT_FALSE(cache.WrittenSince(2, g0));
  cache.NoteWrite(3);  // another stripe
  EXPECT_FALSE(cache.WrittenSince(2, g0));
  EXPECT_TRUE(cache.Insert(1, "p", 2, g0, cache.UseClock(), BuildEntry("p", 10)));
  cache.NoteWrite(2);
  EXPECT_TRUE(cache.WrittenSince(2, g0));
  EXPECT_FALSE(cache.Insert(1, "q", 2, g0, cache.UseClock(), BuildEntry("q", 10)));
  const uint64_t g1 = cache.Sequence();
  EXPECT_FALSE(cache.WrittenSince(2, g1));
  EXPECT_TRUE(cache.Insert(1, "q", 2, g1, cache.UseClock(), BuildEntry("q", 10)));
}

// Lookup answers a stripe with no entry without the lock (a per-stripe
// count): the count must follow every way an entry comes and goes, or a
// cached entry would be missed (or a miss would cost the lock).
TEST(PartitionCacheTest, LookupSeesEntriesThroughReplaceEvictionAndDrop) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 2 + a->memory_bytes / 2, 4);
  const uint64_t g = cache.Sequence();
  EXPECT_EQ(cache.Lookup(1, "a", 1, g), nullptr);  // empty stripe
  cache.Insert(1, "a", 1, g, cache.UseClock(), a);
  cache.Insert(1, "a", 1, g, cache.UseClock(), a);  // replaces: still one entry in stripe 1
  EXPECT_EQ(cache.Lookup(1, "a", 1, g), a);
  cache.Insert(2, "b", 1, g, cache.UseClock(), BuildEntry("b", 100));  // same stripe, other table
  cache.DropTable(2);
  EXPECT_EQ(cache.Lookup(1, "a", 1, g), a);
  EXPECT_EQ(cache.Lookup(2, "b", 1, g), nullptr);
  // Evicted by two newer entries of another stripe, then cached again.
  cache.Insert(1, "c", 3, g, cache.UseClock(), BuildEntry("c", 100));
  cache.Insert(1, "d", 3, g, cache.UseClock(), BuildEntry("d", 100));
  EXPECT_EQ(cache.Lookup(1, "a", 1, g), nullptr);
  cache.Insert(1, "a", 1, g, cache.UseClock(), a);
  EXPECT_EQ(cache.Lookup(1, "a", 1, g), a);
  // Invalidated by a write, dropped on sight, cached again after it.
  cache.NoteWrite(1);
  EXPECT_EQ(cache.Lookup(1, "a", 1, cache.Sequence()), nullptr);
  const uint64_t g1 = cache.Sequence();
  cache.Insert(1, "a", 1, g1, cache.UseClock(), a);
  EXPECT_EQ(cache.Lookup(1, "a", 1, g1), a);
}

TEST(PartitionCacheTest, EvictsLeastRecentlyUsedByBytes) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 2 + a->memory_bytes / 2, 1);
  const uint64_t g = cache.Sequence();
  // Each insert comes from a scan of its own (scan clock read just before).
  cache.Insert(1, "a", 0, g, cache.UseClock(), a);
  cache.Insert(1, "b", 0, g, cache.UseClock(), BuildEntry("b", 100));
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);  // a is now the most recent
  cache.Insert(1, "c", 0, g, cache.UseClock(), BuildEntry("c", 100));
  EXPECT_EQ(cache.entry_count(), 2u);
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);
  EXPECT_EQ(cache.Lookup(1, "b", 0, g), nullptr);
  EXPECT_NE(cache.Lookup(1, "c", 0, g), nullptr);
  EXPECT_LE(cache.memory_bytes(), cache.capacity_bytes());
  PartitionCache tiny(a->memory_bytes - 1, 1);
  tiny.Insert(1, "a", 0, g, tiny.UseClock(), a);  // larger than the whole cache
  EXPECT_EQ(tiny.entry_count(), 0u);
}

// A scan must not evict what it used itself: with room for two entries, a
// scan that used a and b cannot make room for c; a later scan can.
TEST(PartitionCacheTest, AScanNeverEvictsEntriesUsedSinceItStarted) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 2 + a->memory_bytes / 2, 1);
  const uint64_t g = cache.Sequence();
  const uint64_t scan = cache.UseClock();
  cache.Insert(1, "a", 0, g, scan, a);
  cache.Insert(1, "b", 0, g, scan, BuildEntry("b", 100));
  EXPECT_FALSE(cache.ShouldBuild(1, "c", 0, scan));  // full of this scan's entries
  cache.Insert(1, "c", 0, g, scan, BuildEntry("c", 100));
  EXPECT_EQ(cache.Lookup(1, "c", 0, g), nullptr);
  // Refused once for want of room: that scan builds nothing more, even where
  // a small entry would still fit.
  EXPECT_FALSE(cache.ShouldBuild(1, "d", 0, scan));
  EXPECT_FALSE(cache.ShouldBuild(1, "d", 0, scan));
  const uint64_t next_scan = cache.UseClock();  // a later scan may: ghost first, then build
  EXPECT_FALSE(cache.ShouldBuild(1, "d", 0, next_scan));
  EXPECT_TRUE(cache.ShouldBuild(1, "d", 0, next_scan));
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);
  const uint64_t later = cache.UseClock();
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);  // the later scan uses a, not b
  cache.Insert(1, "c", 0, g, later, BuildEntry("c", 100));
  EXPECT_NE(cache.Lookup(1, "c", 0, g), nullptr);
  EXPECT_EQ(cache.Lookup(1, "b", 0, g), nullptr);  // b was the one to go
}

// A partition read again is not built if that would evict an entry used
// since its previous read: a pass over more partitions than the cache holds
// keeps the entries it has instead of replacing each by the next.
TEST(PartitionCacheTest, ASecondReadNeverEvictsWhatWasUsedSinceTheFirst) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 2 + 16, 1);  // room for two, and full with them
  const uint64_t g = cache.Sequence();
  ASSERT_TRUE(cache.Insert(1, "a", 0, g, cache.UseClock(), a));
  ASSERT_TRUE(cache.Insert(1, "b", 0, g, cache.UseClock(), BuildEntry("b", 100)));
  // Pass 1, page by page (each page a scan with its own clock): a, b, then c.
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);
  EXPECT_NE(cache.Lookup(1, "b", 0, g), nullptr);
  EXPECT_FALSE(cache.ShouldBuild(1, "c", 0, cache.UseClock()));  // first read: a ghost
  // Pass 2: a and b are used again before c's second read.
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);
  EXPECT_NE(cache.Lookup(1, "b", 0, g), nullptr);
  EXPECT_FALSE(cache.ShouldBuild(1, "c", 0, cache.UseClock()));
  // Pass 3 uses only a: b has not been used since c's last read, so c may replace it.
  EXPECT_NE(cache.Lookup(1, "a", 0, g), nullptr);
  EXPECT_TRUE(cache.ShouldBuild(1, "c", 0, cache.UseClock()));
}

// An entry refused for want of room leaves its size with the partition's
// ghost: the next admission asks for room for that much, not for a minimal
// entry that fits in the scraps of a full cache (each such build was thrown
// away, on every pass of a query over more partitions than the cache holds).
TEST(PartitionCacheTest, AnEntryRefusedForRoomIsNotAdmittedAgainAtThatSize) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 4 + 16, 1);  // largest entry: 2 x a
  const uint64_t g = cache.Sequence();
  const uint64_t scan = cache.UseClock();  // a scan that starts before a, b, c are used
  ASSERT_TRUE(cache.Insert(1, "a", 0, g, cache.UseClock(), a));
  ASSERT_TRUE(cache.Insert(1, "b", 0, g, cache.UseClock(), BuildEntry("b", 100)));
  ASSERT_TRUE(cache.Insert(1, "c", 0, g, cache.UseClock(), BuildEntry("c", 100)));
  EXPECT_FALSE(cache.ShouldBuild(1, "big", 0, scan));
  EXPECT_TRUE(cache.ShouldBuild(1, "big", 0, scan));  // a minimal entry fits beside a, b, c
  auto big = BuildEntry("big", 150);
  ASSERT_LE(big->memory_bytes, cache.max_entry_bytes());
  EXPECT_FALSE(cache.Insert(1, "big", 0, g, scan, big));  // it does not, without evicting them
  EXPECT_EQ(cache.entry_count(), 3u);
  // The next pass uses a, b and c again before reading big: no admission.
  for (const char* pk : {"a", "b", "c"}) EXPECT_NE(cache.Lookup(1, pk, 0, g), nullptr);
  EXPECT_FALSE(cache.ShouldBuild(1, "big", 0, cache.UseClock()));
  for (const char* pk : {"a", "b", "c"}) EXPECT_NE(cache.Lookup(1, pk, 0, g), nullptr);
  EXPECT_FALSE(cache.ShouldBuild(1, "big", 0, cache.UseClock()));
  // Once they go unused for a whole pass, big may replace them.
  EXPECT_TRUE(cache.ShouldBuild(1, "big", 0, cache.UseClock()));
}

// Builds only on the second read from the first row with no write between.
TEST(PartitionCacheTest, BuildsOnTheSecondUnchangedRead) {
  PartitionCache cache(1u << 20, 4);
  EXPECT_FALSE(cache.ShouldBuild(1, "p", 2, cache.UseClock()));
  EXPECT_TRUE(cache.ShouldBuild(1, "p", 2, cache.UseClock()));
  EXPECT_FALSE(cache.ShouldBuild(1, "q", 2, cache.UseClock()));  // per partition
  EXPECT_FALSE(cache.ShouldBuild(2, "p", 2, cache.UseClock()));  // per table
  cache.NoteWrite(2);
  EXPECT_FALSE(cache.ShouldBuild(1, "q", 2, cache.UseClock()));  // written since the first read
  EXPECT_TRUE(cache.ShouldBuild(1, "q", 2, cache.UseClock()));
}

// No entry larger than half the cache is kept, and a partition marked too
// large is never admitted again, even on a second unchanged read.
TEST(PartitionCacheTest, EntriesOverHalfTheCacheAndPartitionsMarkedTooLargeAreRefused) {
  auto a = BuildEntry("a", 100);
  PartitionCache cache(a->memory_bytes * 2 - 1, 1);  // a is just over half of it
  EXPECT_EQ(cache.max_entry_bytes(), (a->memory_bytes * 2 - 1) / 2);
  const uint64_t g = cache.Sequence();
  EXPECT_FALSE(cache.Insert(1, "a", 0, g, cache.UseClock(), a));
  EXPECT_TRUE(cache.Insert(1, "b", 0, g, cache.UseClock(), BuildEntry("b", 50)));
  cache.NoteTooLarge(1, "p");
  EXPECT_EQ(cache.too_large_count(), 1u);
  EXPECT_TRUE(cache.KnownTooLarge(1, "p"));
  EXPECT_FALSE(cache.KnownTooLarge(1, "q"));
  EXPECT_FALSE(cache.KnownTooLarge(2, "p"));
  EXPECT_FALSE(cache.ShouldBuild(1, "p", 0, cache.UseClock()));
  EXPECT_FALSE(cache.ShouldBuild(1, "p", 0, cache.UseClock()));  // the second unchanged read too
  EXPECT_FALSE(cache.ShouldBuild(1, "q", 0, cache.UseClock()));  // others as before: ghost, then build
  EXPECT_TRUE(cache.ShouldBuild(1, "q", 0, cache.UseClock()));
}

// The builder's estimate grows with every part of a row the entry keeps, so a
// build gives up near the entry's real size, not at a fraction of it.
TEST(PartitionCacheTest, BuilderEstimateIsCloseToTheEntrySize) {
  size_t approx = 0;
  auto entry = BuildEntry("a", 1000, &approx);
  EXPECT_GE(approx, entry->memory_bytes * 3 / 4);
  EXPECT_LE(approx, entry->memory_bytes * 5 / 4);
}

// A renderer's rows past the entry's budget come back as plain rows.
TEST(PartitionCacheTest, RenderingsClaimAndBudget) {
  RowRenderings r;
  r.Reset(3, 2 * (sizeof(RenderedRow) + 16) + 40);
  EXPECT_FALSE(r.Claim(0));
  EXPECT_TRUE(r.Claim(5));
  EXPECT_FALSE(r.Claim(6));
  EXPECT_TRUE(r.Claim(5));
  auto row = [](std::string text) {
    auto p = std::make_unique<RenderedRow>();
    p->bytes = std::move(text);
    p->page_bytes = 1;
    return p;
  };
  EXPECT_EQ(r.Find(0), nullptr);
  auto a = row("a");
  const RenderedRow* kept = r.Keep(0, a);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(a, nullptr);
  EXPECT_EQ(r.Find(0), kept);
  auto again = row("other");
  EXPECT_EQ(r.Keep(0, again), kept);  // the first rendering of a row stays
  EXPECT_EQ(again, nullptr);
  auto b = row("b");
  EXPECT_NE(r.Keep(1, b), nullptr);
  auto c = row(std::string(64, 'c'));
  EXPECT_TRUE(r.has_room());
  EXPECT_EQ(r.Keep(2, c), nullptr);  // past the budget: left to the caller
  EXPECT_NE(c, nullptr);
  EXPECT_EQ(r.Find(2), nullptr);
  EXPECT_FALSE(r.has_room());  // no later row is rendered only to be refused
}

}  // namespace
}  // namespace tablestone::storage
