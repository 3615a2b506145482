// ForwardingEngine: a storage::Engine that forwards every call to another,
// the base of the engine decorators the dispatcher puts around one request's
// handler (TracingEngine, trace_engine.h) and of the tests' fakes
// (tests/unit/server/api). A subclass overrides only what it adds to.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "storage/engine.h"

namespace tablestone::api {

// Forwards every call to `inner`, which must outlive it.
class ForwardingEngine : public storage::Engine {
 public:
  explicit ForwardingEngine(storage::Engine& inner) : inner_(inner) {}
  Status Close() override { return inner_.Close(); }
  StatusOr<storage::TableInfo> CreateTable(std::string_view account, std::string_view name) override {
    return inner_.CreateTable(account, name);
  }
  Status DeleteTable(std::string_view account, std::string_view name) override {
    return inner_.DeleteTable(account, name);
  }
  StatusOr<storage::TableInfo> GetTable(std::string_view account, std::string_view name) override {
    return inner_.GetTable(account, name);
  }
  StatusOr<storage::TableListResult> ListTables(std::string_view account,
                                                const storage::TableListSpec& spec) override {
    return inner_.ListTables(account, spec);
  }
  using storage::Engine::GetEntity;
  StatusOr<model::Entity> GetEntity(const storage::TableInfo& table, std::string_view partition_key,
                                    std::string_view row_key, ReadWait wait) override {
    return inner_.GetEntity(table, partition_key, row_key, wait);
  }
  using storage::Engine::Write;
  storage::WriteResult Write(const storage::TableInfo& table, std::span<const model::WriteOp> ops,
                             ReadWait wait) override {
    return inner_.Write(table, ops, wait);
  }
  using storage::Engine::Scan;
  StatusOr<model::ScanResult> Scan(const storage::TableInfo& table, const model::ScanSpec& spec,
                                   const model::ScanRun& run) override {
    return inner_.Scan(table, spec, run);
  }
  Status PutAccountMeta(std::string_view account, std::string_view key, std::string_view value) override {
    return inner_.PutAccountMeta(account, key, value);
  }
  StatusOr<std::optional<std::string>> GetAccountMeta(std::string_view account, std::string_view key) override {
    return inner_.GetAccountMeta(account, key);
  }
  Status PutTableAcl(const storage::TableInfo& table, std::string_view value) override {
    return inner_.PutTableAcl(table, value);
  }
  StatusOr<std::string> GetTableAcl(const storage::TableInfo& table) override { return inner_.GetTableAcl(table); }
  bool CanWriteWithoutWaiting() override { return inner_.CanWriteWithoutWaiting(); }
  void AwaitDurable(std::function<void(Status)> done) override { inner_.AwaitDurable(std::move(done)); }
  std::optional<Status> TrySyncWal() override { return inner_.TrySyncWal(); }
  bool TableReadIsDurable(std::string_view account, std::string_view table) override {
    return inner_.TableReadIsDurable(account, table);
  }
  bool IsDurable() override { return inner_.IsDurable(); }
  Status SyncWal() override { return inner_.SyncWal(); }
  Status CreateCheckpoint(const std::string& dir) override { return inner_.CreateCheckpoint(dir); }
  Stats GetStats() override { return inner_.GetStats(); }

 protected:
  storage::Engine& inner_;
};

}  // namespace tablestone::api
