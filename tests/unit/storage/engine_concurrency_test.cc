// Engine under concurrency: optimistic read-modify-write with ETags, racing
// batches on one partition, and a table deleted while writers run.
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include "storage/column_families.h"
#include "storage/entity_cache.h"
#include "storage/key_codec.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using model::EdmValue;
using model::Entity;
using model::WriteKind;
using model::WriteOp;
using test_util::IfTimestamp;
using test_util::MakeEntity;
using test_util::Op;
using test_util::WriteOne;

class EngineConcurrencyTest : public test_util::EngineTest {};

TEST_P(EngineConcurrencyTest, ConditionalIncrementsNeverLoseOrDuplicateValues) {
  TableInfo t = Create("counter");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("c", "c", {{"n", EdmValue::Int64(0)}}))).status.ok());
  constexpr int kThreads = 16;
  constexpr int kCycles = 50;
  std::mutex mu;
  std::vector<int64_t> handed_out;
  std::atomic<int> conflicts{0};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      for (int done = 0; done < kCycles;) {
        auto cur = engine_->GetEntity(t, "c", "c");
        if (!cur.ok()) {
          ++errors;
          return;
        }
        int64_t n = cur->Find("n")->value.int_value;
        WriteResult w = WriteOne(*engine_, t,
                                 Op(WriteKind::kMerge, MakeEntity("c", "c", {{"n", EdmValue::Int64(n + 1)}}),
                                    IfTimestamp(cur->timestamp)));
        if (w.status.code() == StatusCode::kConditionNotMet) {
          ++conflicts;
          continue;
        }
        if (!w.status.ok()) {
          ++errors;
          return;
        }
        std::lock_guard lock(mu);
        handed_out.push_back(n);
        ++done;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  auto final_entity = engine_->GetEntity(t, "c", "c");
  ASSERT_TRUE(final_entity.ok());
  EXPECT_EQ(final_entity->Find("n")->value.int_value, kThreads * kCycles);
  std::set<int64_t> unique(handed_out.begin(), handed_out.end());
  EXPECT_EQ(handed_out.size(), static_cast<size_t>(kThreads * kCycles));
  EXPECT_EQ(unique.size(), handed_out.size());
  EXPECT_EQ(*unique.begin(), 0);
  EXPECT_EQ(*unique.rbegin(), kThreads * kCycles - 1);
}

TEST_P(EngineConcurrencyTest, RacingInsertBatchesOnOnePartitionCommitAllOrNothing) {
  TableInfo t = Create("race");
  constexpr int kThreads = 8;
  std::atomic<int> winners{0};
  std::atomic<int> losers{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      std::vector<WriteOp> ops;
      for (int k = 0; k < 20; ++k) {
        ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "row" + std::to_string(k), {{"owner", EdmValue::Int32(i)}})));
      }
      WriteResult w = engine_->Write(t, ops);
      if (w.status.ok()) {
        ++winners;
      } else if (w.status.code() == StatusCode::kAlreadyExists && w.failed_index == 0) {
        ++losers;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(winners.load(), 1);
  EXPECT_EQ(losers.load(), kThreads - 1);
  std::vector<Entity> rows = ScanAll(t);
  ASSERT_EQ(rows.size(), 20u);
  for (const Entity& e : rows) {
    EXPECT_EQ(e.properties[0].value, rows[0].properties[0].value);  // one owner
    EXPECT_EQ(e.timestamp, rows[0].timestamp);                      // one commit
  }
}

TEST_P(EngineConcurrencyTest, ConcurrentUpsertBatchesAllLand) {
  TableInfo t = Create("upserts");
  constexpr int kThreads = 8;
  constexpr int kBatches = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      for (int b = 0; b < kBatches; ++b) {
        std::vector<WriteOp> ops;
        for (int k = 0; k < 4; ++k) {
          std::string rk = std::to_string(i) + "-" + std::to_string(b) + "-" + std::to_string(k);
          ops.push_back(Op(WriteKind::kInsertOrReplace, MakeEntity("shared", rk, {{"b", EdmValue::Int32(b)}})));
        }
        // Also contend on one common row.
        ops.push_back(Op(WriteKind::kInsertOrMerge,
                         MakeEntity("shared", "hot", {{"t" + std::to_string(i), EdmValue::Int32(b)}})));
        if (!engine_->Write(t, ops).status.ok()) ++failures;
      }
    });
  }
  // A reader scanning concurrently sees whole batches only.
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0};
  std::thread reader([&] {
    while (!stop) {
      auto r = engine_->Scan(t, {});
      if (!r.ok()) continue;
      std::map<int64_t, int> per_ts;
      for (const Entity& e : r->entities) {
        if (e.row_key != "hot") per_ts[e.timestamp]++;
      }
      for (auto& [ts, n] : per_ts) {
        if (n != 4) ++torn;
      }
    }
  });
  for (std::thread& th : threads) th.join();
  stop = true;
  reader.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(torn.load(), 0);
  std::vector<Entity> rows = ScanAll(t);
  EXPECT_EQ(rows.size(), static_cast<size_t>(kThreads * kBatches * 4 + 1));
  auto hot = engine_->GetEntity(t, "shared", "hot");
  ASSERT_TRUE(hot.ok());
  EXPECT_EQ(hot->properties.size(), static_cast<size_t>(kThreads));
  for (const model::Property& p : hot->properties) EXPECT_EQ(p.value, EdmValue::Int32(kBatches - 1));
}

// Point reads racing writes on a few keys (the entity cache's generation
// rule, storage/entity_cache.h): a read that starts after a write was
// acknowledged never returns an older value, also while other readers refill
// the cache from RocksDB reads that a write overtakes.
TEST_P(EngineConcurrencyTest, PointReadsNeverSeeAValueOlderThanAnAcknowledgedWrite) {
  // A cache of about one entity per shard: entries are evicted all the time,
  // so reads keep missing and refilling while writes overtake them.
  entity_cache_bytes_ = 16 * EntityCache::Charge("xxxxxxxxxxxxxxxxxxxxxxxxx", 40);
  Reopen();
  TableInfo t = Create("fresh");
  constexpr int kKeys = 8;
  constexpr int kWrites = 3000;
  std::atomic<int64_t> acked[kKeys];
  for (int k = 0; k < kKeys; ++k) {
    acked[k] = 0;
    ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", std::to_string(k), {{"n", EdmValue::Int64(0)}})))
                    .status.ok());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> stale{0};
  std::atomic<int> errors{0};
  std::atomic<int64_t> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&, r] {
      for (int i = r; !stop; ++i) {
        const int k = i % kKeys;
        const int64_t floor = acked[k].load();
        auto e = engine_->GetEntity(t, "p", std::to_string(k));
        if (!e.ok()) {
          ++errors;
          continue;
        }
        if (e->Find("n")->value.int_value < floor) ++stale;
        ++reads;
      }
    });
  }
  // Writers (one per pair of keys, so each key's values only grow) alternate
  // replace and merge; a merge reads the entity through the cache first.
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      for (int i = 1; i <= kWrites; ++i) {
        const int k = (i * 2 + w) % kKeys;
        const std::string rk = std::to_string(k);
        const int64_t n = acked[k].load() + 1;
        WriteResult res;
        if (i % 3 == 0) {
          res = WriteOne(*engine_, t, Op(WriteKind::kMerge, MakeEntity("p", rk, {{"n", EdmValue::Int64(n)}})));
        } else {
          res = WriteOne(*engine_, t, Op(WriteKind::kInsertOrReplace, MakeEntity("p", rk, {{"n", EdmValue::Int64(n)}})));
        }
        if (!res.status.ok()) ++errors;
        acked[k].store(n);
      }
    });
  }
  for (std::thread& th : writers) th.join();
  stop = true;
  for (std::thread& th : readers) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(stale.load(), 0);
  EXPECT_GT(reads.load(), 0);
  for (int k = 0; k < kKeys; ++k) {
    auto e = engine_->GetEntity(t, "p", std::to_string(k));
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(e->Find("n")->value.int_value, acked[k].load());
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineConcurrencyTest, ::testing::Bool(), test_util::ModeName);

class EngineDeleteRaceTest : public test_util::EngineTest {};

TEST_P(EngineDeleteRaceTest, WritersAfterDeleteSeeTableNotFoundAndNothingResurrects) {
  TableInfo t = Create("doomed");
  constexpr int kWriters = 4;
  std::atomic<int> total_ok{0};
  std::atomic<int> unexpected{0};
  std::atomic<int> stopped{0};
  std::vector<std::thread> writers;
  for (int i = 0; i < kWriters; ++i) {
    writers.emplace_back([&, i] {
      for (int n = 0;; ++n) {
        std::vector<WriteOp> ops;
        for (int k = 0; k < 3; ++k) {
          ops.push_back(Op(WriteKind::kInsertOrReplace,
                           MakeEntity("p" + std::to_string(i), std::to_string(n) + "-" + std::to_string(k))));
        }
        WriteResult w = engine_->Write(t, ops);
        if (w.status.code() == StatusCode::kTableNotFound) break;
        if (w.status.ok()) {
          ++total_ok;
        } else {
          ++unexpected;
        }
      }
      ++stopped;
    });
  }
  while (total_ok.load() < 200) std::this_thread::yield();
  ASSERT_TRUE(engine_->DeleteTable(t.account, t.name).ok());
  for (std::thread& th : writers) th.join();
  EXPECT_EQ(stopped.load(), kWriters);
  EXPECT_EQ(unexpected.load(), 0);
  EXPECT_EQ(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p0", "late"))).status.code(),
            StatusCode::kTableNotFound);
  TableInfo again = Create("doomed");
  EXPECT_NE(again.id, t.id);
  EXPECT_TRUE(ScanAll(again).empty());

  if (GetParam()) return;  // the raw check below needs the files on disk
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  // Look under the engine: no row of the old table id is visible in RocksDB.
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (std::string_view name : kColumnFamilies) cfs.emplace_back(std::string(name), rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::OpenForReadOnly(rocksdb::DBOptions(), Options().path, cfs, &handles, &raw).ok());
  std::unique_ptr<rocksdb::Iterator> it(raw->NewIterator(rocksdb::ReadOptions(), handles[kEntitiesCf]));
  size_t old_rows = 0;
  for (it->Seek(TableStart(t.id)); it->Valid() && it->key().compare(TableEnd(t.id)) < 0; it->Next()) ++old_rows;
  EXPECT_EQ(old_rows, 0u);
  it.reset();
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  delete raw;
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineDeleteRaceTest, ::testing::Bool(), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
