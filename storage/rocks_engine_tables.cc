// RocksEngine's catalog of tables (Create/Delete/Get/List Table) and its
// small metadata blobs (account metadata, table ACLs). Opening, closing and
// statistics are in rocks_engine.cc.
#include <spdlog/spdlog.h>

#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

#include <rocksdb/experimental.h>
#include <rocksdb/write_batch.h>

#include "storage/catalog_codec.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"
#include "storage/model/ascii.h"
#include "storage/rocks_engine.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {
namespace {

Status ShutDownStatus() { return Status::ShuttingDown("storage engine is closed"); }

}  // namespace

// ---- Tables ----

std::string RocksEngine::CatalogName(std::string_view account, std::string_view name) const {
  for (const std::string& exact : options_.case_sensitive_accounts) {
    if (exact == account) return std::string(name);
  }
  return model::ToAsciiLower(name);
}

StatusOr<TableInfo> RocksEngine::CreateTable(std::string_view account, std::string_view name) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  std::lock_guard ddl(ddl_mu_);
  const std::string key = CatalogKey(account, CatalogName(account, name));
  {
    std::shared_lock lock(catalog_mu_);
    if (catalog_.count(key) != 0) return Status::TableAlreadyExists("table " + std::string(name) + " exists");
  }
  TableInfo info{next_table_id_, std::string(account), std::string(name)};
  MarkedWrite marked(*this, OtherDataMark());  // until the catalog shows the table
  rocksdb::WriteBatch batch;
  TABLESTONE_RETURN_IF_ERROR(FromRocks(batch.Put(cf(kCatalogCf), key, EncodeCatalogValue(info.id, name)), "batch"));
  TABLESTONE_RETURN_IF_ERROR(
      FromRocks(batch.Put(cf(kMetaCf), NextTableIdKey(), EncodeFixed64Be(info.id + 1)), "batch"));
  TABLESTONE_RETURN_IF_ERROR(FromRocks(CommitBatch(&batch), "creating table"));
  ++next_table_id_;
  std::unique_lock lock(catalog_mu_);
  live_tables_.emplace(info.id, NewTableState(account)).first->second->counts->tables.fetch_add(1);
  catalog_.emplace(key, info);
  StorageLog()->debug("created table {}/{} (id {})", account, name, info.id);
  return info;
}

Status RocksEngine::DeleteTable(std::string_view account, std::string_view name) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  std::lock_guard ddl(ddl_mu_);
  const std::string key = CatalogKey(account, CatalogName(account, name));
  uint64_t id = 0;
  std::shared_ptr<TableState> state;
  {
    std::shared_lock lock(catalog_mu_);
    auto it = catalog_.find(key);
    if (it == catalog_.end()) return Status::TableNotFound("table " + std::string(name) + " does not exist");
    id = it->second.id;
    state = live_tables_.at(id);
  }
  // Refuses new writes to the table and waits for those in flight, so the
  // DeleteRange below covers every row ever written (no resurrection).
  state->gate.CloseAndDrain();
  MarkedWrite marked(*this, OtherDataMark());  // until the caches and catalog forget the table
  // A table known to hold no entity (counts complete, gate drained) needs no
  // range tombstone and no compaction hint. Test suites create and drop
  // thousands of small or empty tables; each tombstone costs every later read
  // of the memtable it lands in, and each hint a compaction-picker pass.
  const bool has_entities = !entity_counts_complete_.load() || state->entities.load() != 0;
  rocksdb::WriteBatch batch;
  Status s = FromRocks(batch.Delete(cf(kCatalogCf), key), "batch");
  if (s.ok() && has_entities) s = FromRocks(batch.DeleteRange(cf(kEntitiesCf), TableStart(id), TableEnd(id)), "batch");
  if (s.ok()) s = FromRocks(batch.Delete(cf(kMetaCf), TableAclKey(id)), "batch");
  if (s.ok()) s = FromRocks(CommitBatch(&batch), "deleting table");
  if (!s.ok()) {
    // The table stays; writes refused meanwhile got TableNotFound (a rare,
    // disk-failure-only window).
    state->gate.Reopen();
    return s;
  }
  // Reclaim the space soon rather than whenever compaction reaches these
  // files; only a hint (files are marked), so a failure is harmless.
  if (has_entities) {
    const std::string begin = TableStart(id), end = TableEnd(id);
    rocksdb::Slice begin_slice(begin), end_slice(end);
    rocksdb::experimental::SuggestCompactRange(db_, cf(kEntitiesCf), &begin_slice, &end_slice)
        .PermitUncheckedError();
  }
  if (scan_cache_) scan_cache_->DropTable(id);
  std::unique_lock lock(catalog_mu_);
  catalog_.erase(key);
  live_tables_.erase(id);
  // The gate is closed: no write or count adds to state->entities any more.
  state->counts->tables.fetch_sub(1);
  state->counts->entities.fetch_sub(state->entities.load());
  StorageLog()->debug("deleted table {}/{} (id {})", account, name, id);
  return Status::Ok();
}

StatusOr<TableInfo> RocksEngine::GetTable(std::string_view account, std::string_view name) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  const std::string key = CatalogKey(account, CatalogName(account, name));
  std::shared_lock lock(catalog_mu_);
  auto it = catalog_.find(key);
  if (it == catalog_.end()) return Status::TableNotFound("table " + std::string(name) + " does not exist");
  return it->second;
}

StatusOr<TableListResult> RocksEngine::ListTables(std::string_view account, const TableListSpec& spec) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  const std::string prefix = CatalogAccountPrefix(account);
  TableListResult result;
  std::shared_lock lock(catalog_mu_);
  for (auto it = catalog_.lower_bound(prefix + spec.resume_from); it != catalog_.end(); ++it) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    if (spec.predicate && !spec.predicate(it->second.name)) continue;
    if (result.tables.size() >= spec.max_results) {
      // The next matching table starts the next page.
      result.next = it->first.substr(prefix.size());
      break;
    }
    result.tables.push_back(it->second);
  }
  return result;
}

// ---- Metadata blobs ----

Status RocksEngine::PutAccountMeta(std::string_view account, std::string_view key, std::string_view value) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  MarkedWrite marked(*this, OtherDataMark());
  WalAppendLock::Append append(wal_lock_);
  return FromRocks(db_->Put(WriteOpts(), cf(kMetaCf), AccountMetaKey(account, key), value), "writing metadata");
}

StatusOr<std::optional<std::string>> RocksEngine::GetAccountMeta(std::string_view account, std::string_view key) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), cf(kMetaCf), AccountMetaKey(account, key), &value);
  if (rs.IsNotFound()) return std::optional<std::string>();
  TABLESTONE_RETURN_IF_ERROR(FromRocks(rs, "reading metadata"));
  return std::optional<std::string>(std::move(value));
}

Status RocksEngine::PutTableAcl(const TableInfo& table, std::string_view value) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  std::shared_ptr<TableState> state = FindLiveTable(table.id);
  if (!state) return Status::TableNotFound("table does not exist");
  GatePass table_pass(state->gate);
  if (!table_pass.ok()) return Status::TableNotFound("table does not exist");
  MarkedWrite marked(*this, OtherDataMark());
  WalAppendLock::Append append(wal_lock_);
  return FromRocks(db_->Put(WriteOpts(), cf(kMetaCf), TableAclKey(table.id), value), "writing table ACL");
}

StatusOr<std::string> RocksEngine::GetTableAcl(const TableInfo& table) {
  GatePass pass(gate_);
  if (!pass.ok()) return ShutDownStatus();
  if (!FindLiveTable(table.id)) return Status::TableNotFound("table does not exist");
  std::string value;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), cf(kMetaCf), TableAclKey(table.id), &value);
  if (rs.IsNotFound()) return std::string();  // no policies set yet
  TABLESTONE_RETURN_IF_ERROR(FromRocks(rs, "reading table ACL"));
  return value;
}

}  // namespace tablestone::storage
