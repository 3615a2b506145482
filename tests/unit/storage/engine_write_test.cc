// Engine::Write / GetEntity: every operation kind and condition (Learn: insert-entity, update-entity2, merge-entity,
// delete-entity1), batch atomicity (Learn: performing-entity-group-transactions) and merge
// limits (Learn: understanding-the-table-service-data-model).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "storage/model/limits.h"
#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using model::EdmValue;
using model::Entity;
using model::WriteKind;
using model::WriteOp;
using test_util::IfAny;
using test_util::IfNever;
using test_util::IfTimestamp;
using test_util::MakeEntity;
using test_util::Op;

class EngineWriteTest : public test_util::EngineTest {
 protected:
  void SetUp() override {
    EngineTest::SetUp();
    table_ = Create("entities");
  }
  WriteResult Write1(WriteKind kind, Entity e, model::IfMatch m = {}) {
    return test_util::WriteOne(*engine_, table_, Op(kind, std::move(e), m));
  }
  StatusCode Code(WriteKind kind, Entity e, model::IfMatch m = {}) { return Write1(kind, std::move(e), m).status.code(); }
  Entity Get(const std::string& pk, const std::string& rk) {
    auto e = engine_->GetEntity(table_, pk, rk);
    EXPECT_TRUE(e.ok()) << e.status().ToString();
    return e.ok() ? *e : Entity{};
  }
  bool Exists(const std::string& pk, const std::string& rk) { return engine_->GetEntity(table_, pk, rk).ok(); }

  TableInfo table_;
};

TEST_P(EngineWriteTest, InsertThenGetReturnsKeysPropertiesAndTimestamp) {
  Entity e = MakeEntity("p", "r", {{"a", EdmValue::String("x")}, {"b", EdmValue::Int32(1)}});
  WriteResult w = Write1(WriteKind::kInsert, e);
  ASSERT_TRUE(w.status.ok());
  EXPECT_GT(w.timestamp, 0);
  Entity got = Get("p", "r");
  EXPECT_EQ(got.partition_key, "p");
  EXPECT_EQ(got.row_key, "r");
  EXPECT_EQ(got.timestamp, w.timestamp);
  EXPECT_EQ(got.properties, e.properties);
  EXPECT_EQ(Code(WriteKind::kInsert, e), StatusCode::kAlreadyExists);
  EXPECT_EQ(engine_->GetEntity(table_, "p", "missing").status().code(), StatusCode::kNotFound);
}

TEST_P(EngineWriteTest, UpdateReplacesAndChecksIfMatch) {
  Entity e = MakeEntity("p", "r", {{"a", EdmValue::String("x")}, {"b", EdmValue::Int32(1)}});
  EXPECT_EQ(Code(WriteKind::kUpdate, e, IfAny()), StatusCode::kNotFound);
  EXPECT_EQ(Code(WriteKind::kUpdate, e, IfTimestamp(5)), StatusCode::kNotFound);
  EXPECT_EQ(Code(WriteKind::kUpdate, e, IfNever()), StatusCode::kNotFound);
  WriteResult w1 = Write1(WriteKind::kInsert, e);
  ASSERT_TRUE(w1.status.ok());

  Entity replacement = MakeEntity("p", "r", {{"c", EdmValue::Boolean(true)}});
  EXPECT_EQ(Code(WriteKind::kUpdate, replacement, IfTimestamp(w1.timestamp - 1)), StatusCode::kConditionNotMet);
  EXPECT_EQ(Code(WriteKind::kUpdate, replacement, IfNever()), StatusCode::kConditionNotMet);
  EXPECT_EQ(Get("p", "r").properties, e.properties);  // failed updates change nothing

  WriteResult w2 = Write1(WriteKind::kUpdate, replacement, IfTimestamp(w1.timestamp));
  ASSERT_TRUE(w2.status.ok());
  EXPECT_GT(w2.timestamp, w1.timestamp);
  EXPECT_EQ(Get("p", "r").properties, replacement.properties);  // old properties gone
  // The old ETag no longer matches; '*' and no If-Match do.
  EXPECT_EQ(Code(WriteKind::kUpdate, e, IfTimestamp(w1.timestamp)), StatusCode::kConditionNotMet);
  EXPECT_EQ(Code(WriteKind::kUpdate, e, IfAny()), StatusCode::kOk);
  EXPECT_EQ(Code(WriteKind::kUpdate, replacement), StatusCode::kOk);
}

TEST_P(EngineWriteTest, MergeOverwritesAddsAndKeepsOthers) {
  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "r",
                                                    {{"a", EdmValue::String("x")},
                                                     {"b", EdmValue::Int32(1)},
                                                     {"c", EdmValue::Double(2.5)}}))
                  .status.ok());
  WriteResult w = Write1(WriteKind::kMerge,
                         MakeEntity("p", "r", {{"b", EdmValue::String("now a string")}, {"d", EdmValue::Int64(9)}}),
                         IfAny());
  ASSERT_TRUE(w.status.ok());
  Entity got = Get("p", "r");
  std::vector<model::Property> want = {{"a", EdmValue::String("x")},
                                       {"b", EdmValue::String("now a string")},
                                       {"c", EdmValue::Double(2.5)},
                                       {"d", EdmValue::Int64(9)}};
  EXPECT_EQ(got.properties, want);
  EXPECT_EQ(got.timestamp, w.timestamp);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "nope"), IfAny()), StatusCode::kNotFound);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r"), IfTimestamp(w.timestamp + 1)),
            StatusCode::kConditionNotMet);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r"), IfNever()), StatusCode::kConditionNotMet);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r", {{"e", EdmValue::Boolean(false)}}), IfTimestamp(w.timestamp)),
            StatusCode::kOk);
  EXPECT_EQ(Get("p", "r").properties.size(), 5u);
}

TEST_P(EngineWriteTest, UpsertsNeverFailOnStateOrETag) {
  Entity a = MakeEntity("p", "r", {{"a", EdmValue::Int32(1)}});
  EXPECT_EQ(Code(WriteKind::kInsertOrReplace, a), StatusCode::kOk);
  EXPECT_EQ(Get("p", "r").properties, a.properties);
  Entity b = MakeEntity("p", "r", {{"b", EdmValue::Int32(2)}});
  // An If-Match that would fail is not consulted by upserts.
  EXPECT_EQ(Code(WriteKind::kInsertOrReplace, b, IfNever()), StatusCode::kOk);
  EXPECT_EQ(Get("p", "r").properties, b.properties);

  EXPECT_EQ(Code(WriteKind::kInsertOrMerge, MakeEntity("p", "r2", {{"x", EdmValue::Int32(1)}})), StatusCode::kOk);
  EXPECT_EQ(Code(WriteKind::kInsertOrMerge, MakeEntity("p", "r2", {{"y", EdmValue::Int32(2)}}), IfNever()),
            StatusCode::kOk);
  std::vector<model::Property> want = {{"x", EdmValue::Int32(1)}, {"y", EdmValue::Int32(2)}};
  EXPECT_EQ(Get("p", "r2").properties, want);
}

TEST_P(EngineWriteTest, DeleteNeedsExistenceAndMatchingETag) {
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r"), IfAny()), StatusCode::kNotFound);
  WriteResult w = Write1(WriteKind::kInsert, MakeEntity("p", "r", {{"a", EdmValue::Int32(1)}}));
  ASSERT_TRUE(w.status.ok());
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r"), IfTimestamp(w.timestamp - 1)),
            StatusCode::kConditionNotMet);
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r"), IfNever()), StatusCode::kConditionNotMet);
  EXPECT_TRUE(Exists("p", "r"));
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r"), IfTimestamp(w.timestamp)), StatusCode::kOk);
  EXPECT_FALSE(Exists("p", "r"));
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r"), IfAny()), StatusCode::kNotFound);
  // Delete then re-insert: a fresh entity with a new ETag.
  WriteResult w2 = Write1(WriteKind::kInsert, MakeEntity("p", "r"));
  ASSERT_TRUE(w2.status.ok());
  EXPECT_GT(w2.timestamp, w.timestamp);
  EXPECT_TRUE(Get("p", "r").properties.empty());
  EXPECT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r")), StatusCode::kOk);  // no If-Match acts as '*'
}

TEST_P(EngineWriteTest, TimestampsStrictlyIncreaseAndBatchSharesOne) {
  int64_t last = 0;
  for (int i = 0; i < 200; ++i) {
    WriteResult w = Write1(WriteKind::kInsertOrReplace, MakeEntity("p", "same"));
    ASSERT_TRUE(w.status.ok());
    EXPECT_GT(w.timestamp, last);
    last = w.timestamp;
  }
  std::vector<WriteOp> ops;
  for (int i = 0; i < 5; ++i) ops.push_back(Op(WriteKind::kInsert, MakeEntity("b", std::to_string(i))));
  WriteResult w = engine_->Write(table_, ops);
  ASSERT_TRUE(w.status.ok());
  EXPECT_GT(w.timestamp, last);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Get("b", std::to_string(i)).timestamp, w.timestamp);
}

TEST_P(EngineWriteTest, FailingOpInABatchWritesNothing) {
  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "037", {{"orig", EdmValue::Int32(1)}})).status.ok());
  std::vector<WriteOp> ops;
  for (int i = 0; i < 100; ++i) {
    char rk[8];
    std::snprintf(rk, sizeof rk, "%03d", i);
    ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", rk, {{"i", EdmValue::Int32(i)}})));
  }
  WriteResult w = engine_->Write(table_, ops);
  EXPECT_EQ(w.status.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(w.failed_index, 37u);
  std::vector<Entity> all = ScanAll(table_);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].row_key, "037");
  EXPECT_EQ(all[0].properties[0].name, "orig");

  // Other failure kinds at other positions behave the same.
  ops[37] = Op(WriteKind::kInsertOrReplace, MakeEntity("p", "037"));
  ops[80] = Op(WriteKind::kUpdate, MakeEntity("p", "missing"), IfAny());
  w = engine_->Write(table_, ops);
  EXPECT_EQ(w.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(w.failed_index, 80u);
  EXPECT_EQ(ScanAll(table_).size(), 1u);

  ops[80] = Op(WriteKind::kInsert, MakeEntity("p", "080"));
  w = engine_->Write(table_, ops);
  ASSERT_TRUE(w.status.ok()) << w.status.ToString();
  EXPECT_EQ(ScanAll(table_).size(), 100u);
}

TEST_P(EngineWriteTest, LaterOpsSeeEarlierOpsOfTheSameBatch) {
  std::vector<WriteOp> ops;
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "a", {{"x", EdmValue::Int32(1)}})));
  ops.push_back(Op(WriteKind::kMerge, MakeEntity("p", "a", {{"y", EdmValue::Int32(2)}}), IfAny()));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "gone")));
  ops.push_back(Op(WriteKind::kDelete, MakeEntity("p", "gone"), IfAny()));
  ASSERT_TRUE(engine_->Write(table_, ops).status.ok());
  std::vector<model::Property> want = {{"x", EdmValue::Int32(1)}, {"y", EdmValue::Int32(2)}};
  EXPECT_EQ(Get("p", "a").properties, want);
  EXPECT_FALSE(Exists("p", "gone"));

  // Delete then merge of the same key inside one batch: the merge sees it missing.
  ops.clear();
  ops.push_back(Op(WriteKind::kDelete, MakeEntity("p", "a"), IfAny()));
  ops.push_back(Op(WriteKind::kMerge, MakeEntity("p", "a"), IfAny()));
  WriteResult w = engine_->Write(table_, ops);
  EXPECT_EQ(w.status.code(), StatusCode::kNotFound);
  EXPECT_EQ(w.failed_index, 1u);
  EXPECT_TRUE(Exists("p", "a"));
}

// A replacing op's properties are read from the op itself (not copied) until
// a later op of the batch merges into them: each op then sees exactly what the
// ops before it left, and the ops themselves are left as they were.
TEST_P(EngineWriteTest, ReplacedPropertiesAreTheLastReplacingOpsWithTheMergesAfterIt) {
  const std::vector<WriteOp> ops = {
      Op(WriteKind::kInsert, MakeEntity("p", "r", {{"x", EdmValue::Int32(1)}})),
      Op(WriteKind::kUpdate, MakeEntity("p", "r", {{"y", EdmValue::String("two")}}), IfAny()),
      Op(WriteKind::kMerge, MakeEntity("p", "r", {{"z", EdmValue::Int32(3)}}), IfAny()),
      Op(WriteKind::kInsertOrReplace, MakeEntity("p", "r", {{"w", EdmValue::Int32(4)}})),
      Op(WriteKind::kInsertOrMerge, MakeEntity("p", "r", {{"v", EdmValue::Int32(5)}, {"w", EdmValue::Int32(6)}})),
      Op(WriteKind::kInsert, MakeEntity("p", "s", {{"only", EdmValue::Boolean(true)}}))};
  const std::vector<WriteOp> before = ops;
  ASSERT_TRUE(engine_->Write(table_, ops).status.ok());
  EXPECT_EQ(Get("p", "r").properties,
            (std::vector<model::Property>{{"w", EdmValue::Int32(6)}, {"v", EdmValue::Int32(5)}}));
  EXPECT_EQ(Get("p", "s").properties, (std::vector<model::Property>{{"only", EdmValue::Boolean(true)}}));
  for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(ops[i].entity, before[i].entity) << i;

  // A replace checks the limits on the op's own entity.
  std::vector<model::Property> big;
  for (int i = 0; i < 3; ++i) big.push_back({"b" + std::to_string(i), EdmValue::String(std::string(400 * 1024, 'x'))});
  WriteResult w = engine_->Write(table_, std::vector<WriteOp>{Op(WriteKind::kInsertOrReplace, MakeEntity("p", "r", big))});
  EXPECT_EQ(w.status.code(), StatusCode::kEntityTooLarge);
  EXPECT_EQ(Get("p", "r").properties.size(), 2u);
}

// Write() matches the ops of one batch by RowKey, rejecting most candidates by
// length and last byte first: keys alike in both must still be told apart,
// and the empty RowKey is a key like any other.
TEST_P(EngineWriteTest, OpsOfABatchAreMatchedByTheirExactRowKey) {
  std::vector<WriteOp> ops;
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "", {{"n", EdmValue::Int32(0)}})));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "a1", {{"n", EdmValue::Int32(1)}})));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "b1", {{"n", EdmValue::Int32(2)}})));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "1", {{"n", EdmValue::Int32(3)}})));
  ops.push_back(Op(WriteKind::kMerge, MakeEntity("p", "b1", {{"m", EdmValue::Int32(4)}}), IfAny()));
  ops.push_back(Op(WriteKind::kDelete, MakeEntity("p", ""), IfAny()));
  ASSERT_TRUE(engine_->Write(table_, ops).status.ok());
  EXPECT_FALSE(Exists("p", ""));
  EXPECT_EQ(Get("p", "a1").properties, (std::vector<model::Property>{{"n", EdmValue::Int32(1)}}));
  EXPECT_EQ(Get("p", "b1").properties,
            (std::vector<model::Property>{{"n", EdmValue::Int32(2)}, {"m", EdmValue::Int32(4)}}));
  EXPECT_EQ(Get("p", "1").properties, (std::vector<model::Property>{{"n", EdmValue::Int32(3)}}));

  // A second insert of a key the batch already inserted fails at that op.
  const std::vector<WriteOp> twice = {Op(WriteKind::kInsert, MakeEntity("p", "c1")),
                                      Op(WriteKind::kInsert, MakeEntity("p", "d1")),
                                      Op(WriteKind::kInsert, MakeEntity("p", "c1"))};
  WriteResult w = engine_->Write(table_, twice);
  EXPECT_EQ(w.status.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(w.failed_index, 2u);
  EXPECT_FALSE(Exists("p", "c1"));
}

TEST_P(EngineWriteTest, RejectsMixedPartitionsAndEmptyBatches) {
  std::vector<WriteOp> ops;
  EXPECT_EQ(engine_->Write(table_, ops).status.code(), StatusCode::kInvalidArgument);
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "1")));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("p", "2")));
  ops.push_back(Op(WriteKind::kInsert, MakeEntity("q", "3")));
  WriteResult w = engine_->Write(table_, ops);
  EXPECT_EQ(w.status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(w.failed_index, 2u);
  EXPECT_TRUE(ScanAll(table_).empty());
}

TEST_P(EngineWriteTest, MergeBeyondPropertyCountFails) {
  std::vector<model::Property> props;
  for (int i = 0; i < 200; ++i) props.push_back({"a" + std::to_string(i), EdmValue::Int32(i)});
  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "r", props)).status.ok());
  std::vector<model::Property> more;
  for (int i = 0; i < 52; ++i) more.push_back({"b" + std::to_string(i), EdmValue::Int32(i)});
  ASSERT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r", more), IfAny()), StatusCode::kOk);  // exactly 252
  EXPECT_EQ(Get("p", "r").properties.size(), 252u);
  // Overwriting existing ones is fine; one new property is one too many.
  EXPECT_EQ(Code(WriteKind::kInsertOrMerge, MakeEntity("p", "r", more)), StatusCode::kOk);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r", {{"c", EdmValue::Int32(0)}}), IfAny()),
            StatusCode::kTooManyProperties);
  EXPECT_EQ(Code(WriteKind::kInsertOrMerge, MakeEntity("p", "r", {{"c", EdmValue::Int32(0)}})),
            StatusCode::kTooManyProperties);
  EXPECT_EQ(Get("p", "r").properties.size(), 252u);
}

TEST_P(EngineWriteTest, MergeBeyondEntitySizeFails) {
  // Each property: 8 + 2*3 + 4 + 2*32768 = 65554 bytes by the service formula; 15 fit in 1 MiB, 16 do not.
  std::vector<model::Property> props;
  for (int i = 10; i < 25; ++i) props.push_back({"p" + std::to_string(i), EdmValue::String(std::string(32768, 'x'))});
  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "r", props)).status.ok());
  WriteResult w = Write1(WriteKind::kMerge, MakeEntity("p", "r", {{"p99", EdmValue::String(std::string(32768, 'y'))}}),
                         IfAny());
  EXPECT_EQ(w.status.code(), StatusCode::kEntityTooLarge);
  Entity got = Get("p", "r");
  EXPECT_EQ(got.properties.size(), 15u);
  EXPECT_EQ(got.Find("p99"), nullptr);
  // Replacing a big value with a small one keeps it under the limit.
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r", {{"p10", EdmValue::Int32(1)}}), IfAny()), StatusCode::kOk);
}

TEST_P(EngineWriteTest, UnusualKeysRoundTrip) {
  const std::vector<std::string> keys = {"", std::string("nul\0inside", 10), "\xF0\x9F\x98\x80", "\xEF\xBF\xBD",
                                         "with space", std::string(1000, 'k')};
  for (const std::string& pk : keys) {
    for (const std::string& rk : keys) {
      ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity(pk, rk, {{"v", EdmValue::String(pk + "|" + rk)}})).status.ok());
    }
  }
  for (const std::string& pk : keys) {
    for (const std::string& rk : keys) {
      Entity got = Get(pk, rk);
      EXPECT_EQ(got.partition_key, pk);
      EXPECT_EQ(got.row_key, rk);
      EXPECT_EQ(got.properties[0].value.text, pk + "|" + rk);
    }
  }
  EXPECT_EQ(ScanAll(table_).size(), keys.size() * keys.size());
}

TEST_P(EngineWriteTest, UnknownTableIsTableNotFound) {
  TableInfo bogus{999999, "devstoreaccount1", "bogus"};
  WriteResult w = test_util::WriteOne(*engine_, bogus, Op(WriteKind::kInsert, MakeEntity("p", "r")));
  EXPECT_EQ(w.status.code(), StatusCode::kTableNotFound);
  EXPECT_EQ(w.failed_index, 0u);
  EXPECT_EQ(engine_->GetEntity(bogus, "p", "r").status().code(), StatusCode::kTableNotFound);
}

// Bytes in the data directory's write-ahead log files (*.log).
uintmax_t WalBytes(const std::string& dir) {
  uintmax_t total = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) {
    if (f.path().extension() == ".log") total += f.file_size();
  }
  return total;
}

TEST_P(EngineWriteTest, WritesAreDurableOnlyAfterSyncWal) {
  ASSERT_TRUE(engine_->SyncWal().ok());  // the table's creation
  const uint64_t start = rocks().VisibleMark();
  EXPECT_LE(start, rocks().DurableMark());
  const uintmax_t wal_before = GetParam() ? 0 : WalBytes(dir_.path() + "/data");

  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "r", {{"a", EdmValue::String(std::string(500, 'x'))}})).status.ok());
  const uint64_t visible = rocks().VisibleMark();
  EXPECT_GT(visible, start);
  EXPECT_LT(rocks().DurableMark(), visible) << "a write must not count as durable before SyncWal";
  EXPECT_EQ(Get("p", "r").row_key, "r");  // visible to readers meanwhile
  if (!GetParam()) {
    // Group commit: the write is in the log's buffer, not yet in the file.
    EXPECT_EQ(WalBytes(dir_.path() + "/data"), wal_before);
  }

  ASSERT_TRUE(engine_->SyncWal().ok());
  EXPECT_GE(rocks().DurableMark(), visible);
  if (!GetParam()) EXPECT_GT(WalBytes(dir_.path() + "/data"), wal_before + 500);

  // A write that fails makes nothing visible, so it needs no log write.
  EXPECT_EQ(Code(WriteKind::kInsert, MakeEntity("p", "r")), StatusCode::kAlreadyExists);
  EXPECT_EQ(rocks().VisibleMark(), visible);
  EXPECT_GE(rocks().DurableMark(), rocks().VisibleMark());

  // Closed: everything was flushed, nothing waits, SyncWal is harmless.
  ASSERT_TRUE(engine_->Close().ok());
  EXPECT_TRUE(engine_->SyncWal().ok());
  EXPECT_LE(rocks().VisibleMark(), rocks().DurableMark());
}

TEST_P(EngineWriteTest, CloseWritesTheBufferedLog) {
  ASSERT_TRUE(Write1(WriteKind::kInsert, MakeEntity("p", "r1")).status.ok());
  if (GetParam()) GTEST_SKIP() << "in-memory data does not survive a reopen";
  Reopen();  // no SyncWal: Close() must not lose the buffered write
  table_ = *engine_->GetTable("devstoreaccount1", "entities");
  EXPECT_TRUE(Exists("p", "r1"));
}

// The entity cache (storage/entity_cache.h) through the engine: reads fill
// it, writes keep what it holds current, inserts add nothing, deletes and a
// recreated table never resurrect a value.
TEST_P(EngineWriteTest, EntityCacheIsFilledByReadsAndKeptCurrentByWrites) {
  auto cached = [&] { return engine_->GetStats().entity_cache_entries; };
  for (int i = 0; i < 5; ++i) {
    ASSERT_EQ(Code(WriteKind::kInsert, MakeEntity("p", "r" + std::to_string(i), {{"v", EdmValue::Int32(i)}})),
              StatusCode::kOk);
  }
  EXPECT_EQ(cached(), 0u);  // a bulk insert does not churn the cache
  EXPECT_EQ(Get("p", "r0").Find("v")->value, EdmValue::Int32(0));
  EXPECT_EQ(cached(), 1u);
  EXPECT_EQ(Get("p", "r0").Find("v")->value, EdmValue::Int32(0));  // a hit
  EXPECT_EQ(cached(), 1u);

  ASSERT_EQ(Code(WriteKind::kUpdate, MakeEntity("p", "r0", {{"v", EdmValue::Int32(10)}}), IfAny()), StatusCode::kOk);
  Entity got = Get("p", "r0");
  EXPECT_EQ(got.Find("v")->value, EdmValue::Int32(10));
  ASSERT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r0", {{"w", EdmValue::Int32(11)}}), IfTimestamp(got.timestamp)),
            StatusCode::kOk);
  got = Get("p", "r0");
  EXPECT_EQ(got.Find("v")->value, EdmValue::Int32(10));
  EXPECT_EQ(got.Find("w")->value, EdmValue::Int32(11));
  // The ETag the cached copy carries is the stored one: a stale condition fails.
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r0", {{"w", EdmValue::Int32(12)}}),
                 IfTimestamp(got.timestamp - 1)),
            StatusCode::kConditionNotMet);

  ASSERT_EQ(Code(WriteKind::kDelete, MakeEntity("p", "r0", {}), IfAny()), StatusCode::kOk);
  EXPECT_FALSE(Exists("p", "r0"));
  EXPECT_EQ(cached(), 0u);
  EXPECT_EQ(Code(WriteKind::kMerge, MakeEntity("p", "r0", {{"w", EdmValue::Int32(1)}}), IfAny()), StatusCode::kNotFound);

  // A batch that fails leaves the cached entity as it was.
  EXPECT_EQ(Get("p", "r1").Find("v")->value, EdmValue::Int32(1));
  std::vector<WriteOp> ops = {Op(WriteKind::kInsertOrReplace, MakeEntity("p", "r1", {{"v", EdmValue::Int32(99)}})),
                              Op(WriteKind::kInsert, MakeEntity("p", "r2", {}))};
  EXPECT_EQ(engine_->Write(table_, ops).status.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(Get("p", "r1").Find("v")->value, EdmValue::Int32(1));

  // Same name, new table: nothing of the old one is served.
  ASSERT_TRUE(engine_->DeleteTable("devstoreaccount1", "entities").ok());
  table_ = Create("entities");
  EXPECT_FALSE(Exists("p", "r1"));
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineWriteTest, ::testing::Bool(), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
