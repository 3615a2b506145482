// Helpers shared by the engine tests: temporary data directories, engines in
// both modes (disk and in-memory), and terse entity/op builders.
#pragma once

#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "storage/engine.h"
#include "storage/rocks_engine.h"
#include "storage/model/entity.h"
#include "storage/model/row_predicate.h"
#include "storage/model/write_op.h"
#include "storage/sync_point.h"

namespace tablestone::storage::test_util {

// A fresh directory under the system temp dir, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("tablestone-storage-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A scan predicate from a function of the entity; blocks of cached
// partitions are tested row by row (columnar() is null).
class FunctionPredicate final : public model::RowPredicate {
 public:
  explicit FunctionPredicate(std::function<bool(const model::Entity&)> fn) : fn_(std::move(fn)) {}
  bool Matches(const model::Entity& entity) const override { return fn_(entity); }

 private:
  std::function<bool(const model::Entity&)> fn_;
};

inline std::shared_ptr<const model::RowPredicate> Where(std::function<bool(const model::Entity&)> fn) {
  return std::make_shared<FunctionPredicate>(std::move(fn));
}

inline model::Entity MakeEntity(std::string pk, std::string rk, std::vector<model::Property> props = {}) {
  model::Entity e;
  e.partition_key = std::move(pk);
  e.row_key = std::move(rk);
  e.properties = std::move(props);
  return e;
}

// "r0000", "r0001", ...: RowKeys that sort as their numbers do.
inline std::string RowKey(int i) {
  char rk[16];
  std::snprintf(rk, sizeof rk, "r%04d", i);
  return rk;
}

inline model::WriteOp Op(model::WriteKind kind, model::Entity e, model::IfMatch if_match = {}) {
  return model::WriteOp{kind, std::move(e), if_match};
}

inline model::IfMatch IfAny() { return {model::IfMatch::Kind::kAny, 0}; }
inline model::IfMatch IfTimestamp(int64_t ticks) { return {model::IfMatch::Kind::kTimestamp, ticks}; }
inline model::IfMatch IfNever() { return {model::IfMatch::Kind::kNever, 0}; }

inline WriteResult WriteOne(Engine& engine, const TableInfo& table, model::WriteOp op) {
  std::vector<model::WriteOp> ops;
  ops.push_back(std::move(op));
  return engine.Write(table, ops);
}

// Base fixture: parameter true = in-memory RocksDB, false = on disk.
class EngineTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { Reopen(); }

  EngineOptions Options() const {
    EngineOptions o;
    o.path = dir_.path() + "/data";
    o.in_memory = GetParam();
    o.block_cache_bytes = 8u << 20;
    o.write_buffer_bytes = 8u << 20;
    o.entity_cache_bytes = entity_cache_bytes_;
    o.scan_fill_cache_bytes = scan_fill_cache_bytes_;
    o.sync_points = sync_points_;
    return o;
  }

  void Reopen() {
    if (engine_) {
      ASSERT_TRUE(engine_->Close().ok());
    }
    engine_.reset();
    auto opened = Engine::Open(Options());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    engine_ = std::move(opened).value();
  }

  // The engine as what Engine::Open makes, for its durability marks.
  RocksEngine& rocks() { return static_cast<RocksEngine&>(*engine_); }

  TableInfo Create(const std::string& name, const std::string& account = "devstoreaccount1") {
    auto t = engine_->CreateTable(account, name);
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return t.ok() ? *t : TableInfo{};
  }

  // Every entity of the table, in order (no limits).
  std::vector<model::Entity> ScanAll(const TableInfo& table) {
    model::ScanSpec spec;
    spec.max_results = SIZE_MAX;
    spec.max_bytes = SIZE_MAX;
    auto r = engine_->Scan(table, spec);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->entities : std::vector<model::Entity>{};
  }

  TempDir dir_;
  size_t entity_cache_bytes_ = EngineOptions().entity_cache_bytes;  // set before Reopen()
  size_t scan_fill_cache_bytes_ = EngineOptions().scan_fill_cache_bytes;  // set before Reopen()
  // The engine's test hooks (storage/sync_point.h), shared by every engine the fixture opens.
  std::shared_ptr<SyncPoints> sync_points_ = std::make_shared<SyncPoints>();
  std::unique_ptr<Engine> engine_;
};

inline std::string ModeName(const ::testing::TestParamInfo<bool>& info) {
  return info.param ? "InMemory" : "OnDisk";
}

}  // namespace tablestone::storage::test_util
