// The engine decorators the dispatcher puts around one request's handler:
// TracingEngine (trace_engine.h) and PageCutEngine (page_cut_engine.h), over a
// real in-memory engine.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/api/page_cut_engine.h"
#include "server/api/trace_engine.h"
#include "storage/engine.h"

namespace tablestone::api {
namespace {

constexpr std::string_view kAccount = "devstoreaccount1";

class EngineDecoratorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    storage::EngineOptions eo;
    eo.in_memory = true;
    eo.path = "/tmp/tablestone-unit-engine-decorators";
    auto engine = storage::Engine::Open(eo);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto table = engine_->CreateTable(kAccount, "t");
    ASSERT_TRUE(table.ok());
    table_ = *table;
  }
  void TearDown() override { (void)engine_->Close(); }

  static model::WriteOp Insert(std::string pk, std::string rk) {
    model::WriteOp op;
    op.kind = model::WriteKind::kInsert;
    op.entity.partition_key = std::move(pk);
    op.entity.row_key = std::move(rk);
    return op;
  }
  void Fill() {
    for (const char* pk : {"a", "b"}) {
      for (const char* rk : {"1", "2", "3"}) {
        auto op = Insert(pk, rk);
        ASSERT_TRUE(engine_->Write(table_, std::span<const model::WriteOp>(&op, 1)).status.ok());
      }
    }
  }

  std::unique_ptr<storage::Engine> engine_;
  storage::TableInfo table_;
};

TEST_F(EngineDecoratorsTest, TracingRecordsTheKeysOfASingleEntityWriteOnly) {
  RequestTrace insert_trace;
  TracingEngine insert(*engine_, insert_trace, protocol::Operation::kInsertEntity);
  auto op = Insert("p", "r");
  ASSERT_TRUE(insert.Write(table_, std::span<const model::WriteOp>(&op, 1)).status.ok());
  EXPECT_EQ(insert_trace.partition_key, "p");
  EXPECT_EQ(insert_trace.row_key, "r");
  EXPECT_GT(insert_trace.storage.count(), 0);

  RequestTrace batch_trace;  // a $batch's keys are not recorded (docs/observability.md)
  TracingEngine batch(*engine_, batch_trace, protocol::Operation::kBatch);
  auto one = Insert("p", "s");
  ASSERT_TRUE(batch.Write(table_, std::span<const model::WriteOp>(&one, 1)).status.ok());
  EXPECT_FALSE(batch_trace.partition_key.has_value());
  EXPECT_FALSE(batch_trace.row_key.has_value());
  EXPECT_GT(batch_trace.storage.count(), 0);
}

TEST_F(EngineDecoratorsTest, TracingNamesTheTableOfCreateTableAndCountsScannedRows) {
  RequestTrace create_trace;
  TracingEngine create(*engine_, create_trace, protocol::Operation::kCreateTable);
  ASSERT_TRUE(create.CreateTable(kAccount, "Other").ok());
  EXPECT_EQ(create_trace.table, "Other");

  Fill();
  RequestTrace query_trace;
  TracingEngine query(*engine_, query_trace, protocol::Operation::kQueryEntities);
  model::ScanSpec spec;
  spec.max_results = 4;
  auto page = query.Scan(table_, spec);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(query_trace.rows_returned, page->entities.size());
  EXPECT_EQ(query_trace.rows_scanned, page->rows_examined);
  EXPECT_EQ(page->entities.size(), 4u);
}

TEST_F(EngineDecoratorsTest, APageCutToNoRowNamesTheRowItWouldHaveReturned) {
  Fill();
  PageCutEngine cut(*engine_, faults::PageCut{0, false});
  auto page = cut.Scan(table_, model::ScanSpec{});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->entities.empty());
  ASSERT_TRUE(page->next.has_value());
  EXPECT_EQ(page->next->partition_key, "a");
  EXPECT_EQ(page->next->row_key, "1");
  EXPECT_FALSE(cut.drop_next_row_key());
}

TEST_F(EngineDecoratorsTest, APartitionKeyOnlyCutDropsTheRowKeyOnlyAtAPartitionBoundary) {
  Fill();
  PageCutEngine inside(*engine_, faults::PageCut{2, true});  // ends at a/3: inside partition a
  auto first = inside.Scan(table_, model::ScanSpec{});
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->entities.size(), 2u);
  EXPECT_FALSE(inside.drop_next_row_key());

  PageCutEngine boundary(*engine_, faults::PageCut{3, true});  // ends after a/3: next is b/1
  auto whole = boundary.Scan(table_, model::ScanSpec{});
  ASSERT_TRUE(whole.ok());
  ASSERT_TRUE(whole->next.has_value());
  EXPECT_EQ(whole->next->partition_key, "b");
  EXPECT_TRUE(boundary.drop_next_row_key());
}

TEST_F(EngineDecoratorsTest, ACutTableListHoldsNoTableAndResumesAtTheFirstLowerCased) {
  ASSERT_TRUE(engine_->CreateTable(kAccount, "Beta").ok());
  PageCutEngine cut(*engine_, faults::PageCut{0, false});
  auto page = cut.ListTables(kAccount, storage::TableListSpec{});
  ASSERT_TRUE(page.ok());
  EXPECT_TRUE(page->tables.empty());
  EXPECT_EQ(page->next, "beta");
}

}  // namespace
}  // namespace tablestone::api
