// NewLastLevelUnfilteredPolicy (storage/last_level_filter.h): Bloom filters in
// level 0 and the middle levels, none in the last level, on a real RocksDB.
#include "storage/last_level_filter.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include <rocksdb/db.h>
#include <rocksdb/statistics.h>
#include <rocksdb/table.h>
#include <rocksdb/table_properties.h>

#include "engine_test_util.h"

namespace tablestone::storage {
namespace {

rocksdb::Options OptionsWith(std::shared_ptr<const rocksdb::FilterPolicy> policy) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.level_compaction_dynamic_level_bytes = true;  // as the entities column family
  options.statistics = rocksdb::CreateDBStatistics();
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy = std::move(policy);
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

std::unique_ptr<rocksdb::DB> OpenDb(const rocksdb::Options& options, const std::string& path) {
  rocksdb::DB* db = nullptr;
  EXPECT_TRUE(rocksdb::DB::Open(options, path, &db).ok());
  return std::unique_ptr<rocksdb::DB>(db);
}

std::string Key(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "k%07d", i);
  return buf;
}

// Writes keys [from, to) in steps of 2 and flushes them into one level-0 file.
void WriteAndFlush(rocksdb::DB* db, int from, int to) {
  for (int i = from; i < to; i += 2) ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), Key(i), "v").ok());
  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
}

// The filter size of every live file, by level.
std::vector<std::pair<int, uint64_t>> FilterSizes(rocksdb::DB* db) {
  rocksdb::TablePropertiesCollection props;
  EXPECT_TRUE(db->GetPropertiesOfAllTables(&props).ok());
  std::vector<rocksdb::LiveFileMetaData> files;
  db->GetLiveFilesMetaData(&files);
  std::vector<std::pair<int, uint64_t>> out;
  for (const auto& f : files) {
    for (const auto& [path, p] : props) {
      if (path.ends_with(f.name)) out.emplace_back(f.level, p->filter_size);
    }
  }
  return out;
}

// A missing key inside the only level-0 file's key range: the filter answers
// (RocksDB's optimize_filters_for_hits skipped it there, the case this
// policy exists for).
TEST(LastLevelFilterTest, LevelZeroFilesHaveFiltersThatReadsUse) {
  test_util::TempDir dir;
  rocksdb::Options options = OptionsWith(NewLastLevelUnfilteredPolicy(10));
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir.path());
  ASSERT_NE(db, nullptr);
  WriteAndFlush(db.get(), 0, 2000);
  const auto sizes = FilterSizes(db.get());
  ASSERT_EQ(sizes.size(), 1u);
  EXPECT_EQ(sizes[0].first, 0);
  EXPECT_GT(sizes[0].second, 0u);
  std::string value;
  int found = 0;
  for (int i = 1; i < 2000; i += 2) found += db->Get(rocksdb::ReadOptions(), Key(i), &value).ok();
  EXPECT_EQ(found, 0);
  // Most of the 1,000 misses were answered by the filter (1% false positives).
  EXPECT_GT(options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL), 900u);
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), Key(10), &value).ok());
}

TEST(LastLevelFilterTest, LastLevelFilesHaveNoFilter) {
  test_util::TempDir dir;
  std::unique_ptr<rocksdb::DB> db = OpenDb(OptionsWith(NewLastLevelUnfilteredPolicy(10)), dir.path());
  ASSERT_NE(db, nullptr);
  WriteAndFlush(db.get(), 0, 2000);
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(db->CompactRange(compact, nullptr, nullptr).ok());
  WriteAndFlush(db.get(), 1, 2000);  // a new level-0 file above the last level
  int last = 0, level0 = 0;
  for (const auto& [level, filter] : FilterSizes(db.get())) {
    if (level == db->NumberLevels() - 1) {
      ++last;
      EXPECT_EQ(filter, 0u);
    } else {
      ++level0;
      EXPECT_EQ(level, 0);
      EXPECT_GT(filter, 0u);
    }
  }
  EXPECT_EQ(last, 1);
  EXPECT_EQ(level0, 1);
  std::string value;
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), Key(i), &value).ok()) << i;
}

// Directories written with the built-in policy (and by older tablestone
// builds) are read with their filters, and the other way round.
TEST(LastLevelFilterTest, ReadsTheBuiltInBloomFilters) {
  test_util::TempDir dir;
  {
    std::unique_ptr<rocksdb::DB> db =
        OpenDb(OptionsWith(std::shared_ptr<const rocksdb::FilterPolicy>(rocksdb::NewBloomFilterPolicy(10))), dir.path());
    ASSERT_NE(db, nullptr);
    WriteAndFlush(db.get(), 0, 2000);
  }
  rocksdb::Options options = OptionsWith(NewLastLevelUnfilteredPolicy(10));
  std::unique_ptr<rocksdb::DB> db = OpenDb(options, dir.path());
  ASSERT_NE(db, nullptr);
  std::string value;
  for (int i = 1; i < 2000; i += 2) EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), Key(i), &value).IsNotFound());
  EXPECT_GT(options.statistics->getTickerCount(rocksdb::BLOOM_FILTER_USEFUL), 900u);
}

}  // namespace
}  // namespace tablestone::storage
