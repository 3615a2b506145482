// Engine::Stats::accounts: tables and entities per account, kept by every
// committed write, saved by a clean close and counted once after any other
// open (RocksEngine::CountEntities).
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using model::WriteKind;
using test_util::EngineTest;
using test_util::MakeEntity;
using test_util::Op;
using test_util::WriteOne;

constexpr const char* kAccount = "devstoreaccount1";

// {tables, entities} of `account` (0, 0 when the engine never saw it).
std::pair<uint64_t, uint64_t> Usage(Engine& engine, const std::string& account = kAccount) {
  for (const auto& u : engine.GetStats().accounts) {
    if (u.account == account) return {u.tables, u.entities};
  }
  return {0, 0};
}

void WaitForCount(Engine& engine) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!engine.GetStats().entity_counts_complete && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(engine.GetStats().entity_counts_complete);
}

WriteResult WriteMany(Engine& engine, const TableInfo& table, std::vector<model::WriteOp> ops) {
  return engine.Write(table, ops);
}

class EngineCountsTest : public EngineTest {};

TEST_P(EngineCountsTest, EveryCommittedWriteAdjustsTheCounts) {
  EXPECT_TRUE(engine_->GetStats().entity_counts_complete);  // nothing to count in a new directory
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{0}, uint64_t{0}));
  TableInfo t = Create("counted");
  TableInfo other = Create("other", "secondaccount");
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{0}));
  for (const char* rk : {"a", "b", "c"}) {
    ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", rk))).status.ok());
  }
  EXPECT_EQ(Usage(*engine_).second, 3u);
  // Upserts count only an entity that did not exist; a failed write nothing.
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsertOrReplace, MakeEntity("p", "a"))).status.ok());
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsertOrMerge, MakeEntity("p", "b"))).status.ok());
  EXPECT_EQ(Usage(*engine_).second, 3u);
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsertOrMerge, MakeEntity("p", "d"))).status.ok());
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsertOrReplace, MakeEntity("p", "e"))).status.ok());
  EXPECT_EQ(Usage(*engine_).second, 5u);
  EXPECT_FALSE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", "a"))).status.ok());
  EXPECT_FALSE(WriteOne(*engine_, t, Op(WriteKind::kUpdate, MakeEntity("p", "zz"))).status.ok());
  EXPECT_EQ(Usage(*engine_).second, 5u);
  // A batch counts its net change: insert f, delete a, insert then delete g (same key twice).
  std::vector<model::WriteOp> batch;
  batch.push_back(Op(WriteKind::kInsert, MakeEntity("p", "f")));
  batch.push_back(Op(WriteKind::kDelete, MakeEntity("p", "a")));
  batch.push_back(Op(WriteKind::kInsert, MakeEntity("p", "g")));
  batch.push_back(Op(WriteKind::kDelete, MakeEntity("p", "g")));
  ASSERT_TRUE(WriteMany(*engine_, t, std::move(batch)).status.ok());
  EXPECT_EQ(Usage(*engine_).second, 5u);
  // A failed batch changes nothing (its first op would have added one).
  std::vector<model::WriteOp> failing;
  failing.push_back(Op(WriteKind::kInsert, MakeEntity("p", "h")));
  failing.push_back(Op(WriteKind::kInsert, MakeEntity("p", "b")));
  EXPECT_FALSE(WriteMany(*engine_, t, std::move(failing)).status.ok());
  EXPECT_EQ(Usage(*engine_).second, 5u);
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kDelete, MakeEntity("p", "b"))).status.ok());
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{4}));
  // Accounts are apart; a table delete takes its entities along.
  ASSERT_TRUE(WriteOne(*engine_, other, Op(WriteKind::kInsert, MakeEntity("x", "1"))).status.ok());
  EXPECT_EQ(Usage(*engine_, "secondaccount"), std::make_pair(uint64_t{1}, uint64_t{1}));
  TableInfo second = Create("second");
  ASSERT_TRUE(WriteOne(*engine_, second, Op(WriteKind::kInsert, MakeEntity("q", "1"))).status.ok());
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{2}, uint64_t{5}));
  ASSERT_TRUE(engine_->DeleteTable(kAccount, "counted").ok());
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{1}));
  EXPECT_EQ(engine_->DeleteTable(kAccount, "counted").code(), StatusCode::kTableNotFound);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{1}));
  EXPECT_EQ(Usage(*engine_, "secondaccount"), std::make_pair(uint64_t{1}, uint64_t{1}));
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineCountsTest, ::testing::Bool(), test_util::ModeName);

class EngineCountsDiskTest : public EngineTest {
 protected:
  // Closes the engine and writes one unrelated key into the directory with
  // RocksDB itself, as a crash after more writes would leave it: the counts a
  // clean close saved are then stale, and the next open must count.
  void ReopenWithStaleSavedCounts() {
    ASSERT_TRUE(engine_->Close().ok());
    engine_.reset();
    const std::string path = Options().path;
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const std::string& name : names) families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* raw = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::Options(), path, families, &handles, &raw).ok());
    ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), handles[0], "unrelated", "x").ok());
    for (rocksdb::ColumnFamilyHandle* h : handles) ASSERT_TRUE(raw->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(raw->Close().ok());
    delete raw;
    Reopen();
  }
};

TEST_P(EngineCountsDiskTest, ACleanCloseSavesTheCountsAndAStaleSaveIsCountedAgain) {
  TableInfo t = Create("saved");
  Create("empty");
  Create("elsewhere", "secondaccount");
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", std::to_string(i)))).status.ok());
  }
  Reopen();
  // Taken from the save: complete before any count could have run.
  EXPECT_TRUE(engine_->GetStats().entity_counts_complete);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{2}, uint64_t{300}));
  EXPECT_EQ(Usage(*engine_, "secondaccount"), std::make_pair(uint64_t{1}, uint64_t{0}));
  // Writes after the open adjust the loaded figures; the next clean close saves those.
  auto reopened = engine_->GetTable(kAccount, "saved");
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE(WriteOne(*engine_, *reopened, Op(WriteKind::kDelete, MakeEntity("p", "0"))).status.ok());
  Reopen();
  EXPECT_TRUE(engine_->GetStats().entity_counts_complete);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{2}, uint64_t{299}));
  // Saved counts older than the data are not trusted: counted again, exactly.
  ReopenWithStaleSavedCounts();
  WaitForCount(*engine_);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{2}, uint64_t{299}));
  EXPECT_EQ(Usage(*engine_, "secondaccount"), std::make_pair(uint64_t{1}, uint64_t{0}));
}

TEST_P(EngineCountsDiskTest, ReopenCountsOnceAndWritesDuringTheCountStayExact) {
  TableInfo big = Create("big");
  TableInfo gone = Create("gone");
  TableInfo small = Create("small", "secondaccount");
  constexpr int kRows = 20000;
  for (int start = 0; start < kRows; start += 100) {
    std::vector<model::WriteOp> ops;
    for (int i = start; i < start + 100; ++i) ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", std::to_string(i))));
    ASSERT_TRUE(WriteMany(*engine_, big, std::move(ops)).status.ok());
  }
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(WriteOne(*engine_, gone, Op(WriteKind::kInsert, MakeEntity("g", std::to_string(i)))).status.ok());
  }
  ASSERT_TRUE(WriteOne(*engine_, small, Op(WriteKind::kInsert, MakeEntity("s", "1"))).status.ok());
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{2}, uint64_t{kRows + 500}));

  ReopenWithStaleSavedCounts();
  // Tables are known at once; entities are counted in the background. Writes
  // and a table delete racing the count must leave exact figures.
  EXPECT_EQ(Usage(*engine_).first, 2u);
  auto reopened = engine_->GetTable(kAccount, "big");
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE(WriteOne(*engine_, *reopened, Op(WriteKind::kDelete, MakeEntity("p", "0"))).status.ok());
  ASSERT_TRUE(WriteOne(*engine_, *reopened, Op(WriteKind::kInsert, MakeEntity("p", "new"))).status.ok());
  ASSERT_TRUE(WriteOne(*engine_, *reopened, Op(WriteKind::kDelete, MakeEntity("p", "1"))).status.ok());
  ASSERT_TRUE(engine_->DeleteTable(kAccount, "gone").ok());
  WaitForCount(*engine_);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{kRows - 1}));
  EXPECT_EQ(Usage(*engine_, "secondaccount"), std::make_pair(uint64_t{1}, uint64_t{1}));

  // Closing while the count runs stops it (Close joins it, and saves nothing);
  // the next open counts again.
  ReopenWithStaleSavedCounts();
  Reopen();
  WaitForCount(*engine_);
  EXPECT_EQ(Usage(*engine_), std::make_pair(uint64_t{1}, uint64_t{kRows - 1}));
}

INSTANTIATE_TEST_SUITE_P(Disk, EngineCountsDiskTest, ::testing::Values(false), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
