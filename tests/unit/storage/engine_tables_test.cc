// Engine: tables, catalog persistence, metadata blobs, open/close.
#include <chrono>

#include <gtest/gtest.h>

#include "tests/unit/storage/engine_test_util.h"

namespace tablestone::storage {
namespace {

using test_util::EngineTest;
using test_util::MakeEntity;
using test_util::Op;
using test_util::WriteOne;
using model::EdmValue;
using model::WriteKind;

constexpr const char* kAccount = "devstoreaccount1";

class EngineTablesTest : public EngineTest {};

TEST_P(EngineTablesTest, CreateGetIsCaseInsensitiveAndKeepsCreationCase) {
  TableInfo t = Create("MyTable");
  EXPECT_GT(t.id, 0u);
  EXPECT_EQ(t.name, "MyTable");
  EXPECT_EQ(t.account, kAccount);
  auto got = engine_->GetTable(kAccount, "mytable");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->id, t.id);
  EXPECT_EQ(got->name, "MyTable");
  EXPECT_EQ(engine_->CreateTable(kAccount, "MYTABLE").status().code(), StatusCode::kTableAlreadyExists);
  EXPECT_EQ(engine_->GetTable(kAccount, "other").status().code(), StatusCode::kTableNotFound);
  // Accounts are separate namespaces.
  EXPECT_EQ(engine_->GetTable("otheraccount", "MyTable").status().code(), StatusCode::kTableNotFound);
  EXPECT_TRUE(engine_->CreateTable("otheraccount", "mytable").ok());
}

// Cosmos DB for Table mode: an account in case_sensitive_accounts compares
// its table names exactly, across a reopen; the others keep folding case.
TEST_P(EngineTablesTest, CaseSensitiveAccountsCompareTableNamesExactly) {
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  EngineOptions options = Options();
  options.case_sensitive_accounts = {"localhost"};
  for (int round = 0; round < (GetParam() ? 1 : 2); ++round) {  // in memory: no reopen
    auto opened = Engine::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    engine_ = std::move(opened).value();
    if (round == 0) {
      ASSERT_TRUE(engine_->CreateTable("localhost", "Orders").ok());
      ASSERT_TRUE(engine_->CreateTable("localhost", "orders").ok());
      EXPECT_EQ(engine_->CreateTable("localhost", "Orders").status().code(), StatusCode::kTableAlreadyExists);
      ASSERT_TRUE(engine_->CreateTable(kAccount, "Orders").ok());
      EXPECT_EQ(engine_->CreateTable(kAccount, "ORDERS").status().code(), StatusCode::kTableAlreadyExists);
    }
    auto upper = engine_->GetTable("localhost", "Orders");
    auto lower = engine_->GetTable("localhost", "orders");
    ASSERT_TRUE(upper.ok() && lower.ok());
    EXPECT_NE(upper->id, lower->id);
    EXPECT_EQ(engine_->GetTable("localhost", "ORDERS").status().code(), StatusCode::kTableNotFound);
    EXPECT_TRUE(engine_->GetTable(kAccount, "orders").ok());
    TableListSpec all;
    auto listed = engine_->ListTables("localhost", all);
    ASSERT_TRUE(listed.ok());
    EXPECT_EQ(listed->tables.size(), 2u);
    ASSERT_TRUE(engine_->Close().ok());
    engine_.reset();
  }
  Reopen();  // the fixture's own engine again, for TearDown
}

TEST_P(EngineTablesTest, DeleteRemovesTableAndRecreateGetsNewEmptyTable) {
  TableInfo t = Create("Orders");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  ASSERT_TRUE(engine_->DeleteTable(kAccount, "ORDERS").ok());
  EXPECT_EQ(engine_->GetTable(kAccount, "Orders").status().code(), StatusCode::kTableNotFound);
  EXPECT_EQ(engine_->DeleteTable(kAccount, "Orders").code(), StatusCode::kTableNotFound);
  // The old handle is dead for every operation.
  EXPECT_EQ(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", "r2"))).status.code(),
            StatusCode::kTableNotFound);
  EXPECT_EQ(engine_->GetEntity(t, "p", "r").status().code(), StatusCode::kTableNotFound);
  EXPECT_EQ(engine_->Scan(t, {}).status().code(), StatusCode::kTableNotFound);

  TableInfo again = Create("orders");
  EXPECT_GT(again.id, t.id);
  EXPECT_EQ(again.name, "orders");
  EXPECT_TRUE(ScanAll(again).empty());
  EXPECT_EQ(engine_->GetEntity(again, "p", "r").status().code(), StatusCode::kNotFound);
}

TEST_P(EngineTablesTest, ListTablesOrdersByLowerCaseNameAndPages) {
  for (const char* name : {"delta", "Bravo", "alpha", "Charlie", "echo"}) Create(name);
  Create("zulu", "otheraccount");
  TableListSpec spec;
  auto all = engine_->ListTables(kAccount, spec);
  ASSERT_TRUE(all.ok());
  std::vector<std::string> names;
  for (const TableInfo& t : all->tables) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "Bravo", "Charlie", "delta", "echo"}));
  EXPECT_FALSE(all->next.has_value());

  spec.max_results = 2;
  auto page1 = engine_->ListTables(kAccount, spec);
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->tables.size(), 2u);
  ASSERT_TRUE(page1->next.has_value());
  EXPECT_EQ(*page1->next, "charlie");
  spec.resume_from = *page1->next;
  auto page2 = engine_->ListTables(kAccount, spec);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->tables.size(), 2u);
  EXPECT_EQ(page2->tables[0].name, "Charlie");  // resume is inclusive
  spec.resume_from = *page2->next;
  auto page3 = engine_->ListTables(kAccount, spec);
  ASSERT_TRUE(page3.ok());
  ASSERT_EQ(page3->tables.size(), 1u);
  EXPECT_EQ(page3->tables[0].name, "echo");
  EXPECT_FALSE(page3->next.has_value());

  TableListSpec filtered;
  filtered.predicate = [](std::string_view name) { return name.find('a') != std::string_view::npos; };
  filtered.max_results = 2;
  auto f = engine_->ListTables(kAccount, filtered);
  ASSERT_TRUE(f.ok());
  ASSERT_EQ(f->tables.size(), 2u);
  EXPECT_EQ(f->tables[0].name, "alpha");
  EXPECT_EQ(f->tables[1].name, "Bravo");
  ASSERT_TRUE(f->next.has_value());
  EXPECT_EQ(*f->next, "charlie");  // next matching table; "delta" also matches after it
  filtered.resume_from = "d";
  auto f2 = engine_->ListTables(kAccount, filtered);
  ASSERT_TRUE(f2.ok());
  ASSERT_EQ(f2->tables.size(), 1u);
  EXPECT_EQ(f2->tables[0].name, "delta");
  EXPECT_FALSE(f2->next.has_value());

  auto other = engine_->ListTables("otheraccount", {});
  ASSERT_TRUE(other.ok());
  ASSERT_EQ(other->tables.size(), 1u);
  EXPECT_EQ(other->tables[0].name, "zulu");
  EXPECT_TRUE(engine_->ListTables("nobody", {})->tables.empty());
}

TEST_P(EngineTablesTest, TableAclIsStoredAndDeletedWithTheTable) {
  TableInfo t = Create("acl");
  auto empty = engine_->GetTableAcl(t);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, "");
  ASSERT_TRUE(engine_->PutTableAcl(t, "<SignedIdentifiers/>").ok());
  EXPECT_EQ(*engine_->GetTableAcl(t), "<SignedIdentifiers/>");
  ASSERT_TRUE(engine_->DeleteTable(kAccount, "acl").ok());
  EXPECT_EQ(engine_->GetTableAcl(t).status().code(), StatusCode::kTableNotFound);
  EXPECT_EQ(engine_->PutTableAcl(t, "x").code(), StatusCode::kTableNotFound);
  TableInfo again = Create("acl");
  EXPECT_EQ(*engine_->GetTableAcl(again), "");
}

TEST_P(EngineTablesTest, AccountMetaIsPerAccount) {
  auto missing = engine_->GetAccountMeta(kAccount, "service-properties");
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->has_value());
  ASSERT_TRUE(engine_->PutAccountMeta(kAccount, "service-properties", "v1").ok());
  ASSERT_TRUE(engine_->PutAccountMeta(kAccount, "service-properties", "v2").ok());
  EXPECT_EQ(engine_->GetAccountMeta(kAccount, "service-properties")->value(), "v2");
  EXPECT_FALSE(engine_->GetAccountMeta("other", "service-properties")->has_value());
}

TEST_P(EngineTablesTest, CloseIsIdempotentAndLaterCallsFail) {
  TableInfo t = Create("closing");
  ASSERT_TRUE(engine_->Close().ok());
  ASSERT_TRUE(engine_->Close().ok());
  EXPECT_EQ(engine_->GetTable(kAccount, "closing").status().code(), StatusCode::kShuttingDown);
  EXPECT_EQ(engine_->CreateTable(kAccount, "x2x").status().code(), StatusCode::kShuttingDown);
  EXPECT_EQ(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", "r"))).status.code(),
            StatusCode::kShuttingDown);
  EXPECT_EQ(engine_->Scan(t, {}).status().code(), StatusCode::kShuttingDown);
}

TEST_P(EngineTablesTest, StatsCountEntities) {
  TableInfo t = Create("stats");
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", std::to_string(i)))).status.ok());
  }
  Engine::Stats stats = engine_->GetStats();
  EXPECT_GE(stats.estimated_entities, 40u);
  EXPECT_GT(stats.live_data_bytes, 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, EngineTablesTest, ::testing::Bool(), test_util::ModeName);

// ---- On-disk only ----

class EngineDiskTest : public EngineTest {};

TEST_P(EngineDiskTest, DataSurvivesReopen) {
  TableInfo keep = Create("Keep");
  TableInfo gone = Create("Gone");
  model::Entity e = MakeEntity("p", "r", {{"n", EdmValue::Int64(42)}});
  WriteResult w = WriteOne(*engine_, keep, Op(WriteKind::kInsert, e));
  ASSERT_TRUE(w.status.ok());
  ASSERT_TRUE(WriteOne(*engine_, gone, Op(WriteKind::kInsert, e)).status.ok());
  ASSERT_TRUE(engine_->PutTableAcl(keep, "acl").ok());
  ASSERT_TRUE(engine_->PutAccountMeta(kAccount, "k", "v").ok());
  ASSERT_TRUE(engine_->DeleteTable(kAccount, "gone").ok());
  Reopen();

  auto t = engine_->GetTable(kAccount, "keep");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->id, keep.id);
  EXPECT_EQ(t->name, "Keep");
  auto got = engine_->GetEntity(*t, "p", "r");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->properties, e.properties);
  EXPECT_EQ(got->timestamp, w.timestamp);
  EXPECT_EQ(*engine_->GetTableAcl(*t), "acl");
  EXPECT_EQ(engine_->GetAccountMeta(kAccount, "k")->value(), "v");
  EXPECT_EQ(engine_->GetTable(kAccount, "gone").status().code(), StatusCode::kTableNotFound);
  // Ids are never reused, even across restarts and for deleted tables.
  TableInfo fresh = Create("gone");
  EXPECT_GT(fresh.id, gone.id);
  EXPECT_TRUE(ScanAll(fresh).empty());
}

TEST_P(EngineDiskTest, SecondOpenOfTheSameDirectoryFailsClearly) {
  auto second = Engine::Open(Options());
  ASSERT_FALSE(second.ok());
  // Typed where RocksDB's answer is read, so server/app never parses text.
  EXPECT_EQ(second.status().code(), StatusCode::kDataDirLocked);
  EXPECT_EQ(StatusCodeName(second.status().code()), "DataDirLocked");
  EXPECT_NE(second.status().message().find("is in use by another tablestone process"), std::string::npos)
      << second.status().message();
}

TEST_P(EngineDiskTest, SyncWritesModeWorks) {
  ASSERT_TRUE(engine_->Close().ok());
  EngineOptions o = Options();
  o.sync_writes = true;
  auto opened = Engine::Open(o);
  ASSERT_TRUE(opened.ok());
  engine_ = std::move(opened).value();
  TableInfo t = Create("synced");
  ASSERT_TRUE(WriteOne(*engine_, t, Op(WriteKind::kInsert, MakeEntity("p", "r"))).status.ok());
  EXPECT_TRUE(engine_->GetEntity(t, "p", "r").ok());
}

TEST_P(EngineDiskTest, EmptyOpenIsFast) {
  ASSERT_TRUE(engine_->Close().ok());
  engine_.reset();
  auto start = std::chrono::steady_clock::now();
  auto opened = Engine::Open(Options());
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(opened.ok());
  engine_ = std::move(opened).value();
  // Target is 50 ms; allow slack for a loaded test machine.
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 1000);
}

INSTANTIATE_TEST_SUITE_P(Disk, EngineDiskTest, ::testing::Values(false), test_util::ModeName);

}  // namespace
}  // namespace tablestone::storage
