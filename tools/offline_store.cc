// TableStore over a data directory, through the storage engine directly (no
// server, no HTTP). The engine's directory lock keeps a running server and
// this tool from opening the same directory.
#include <filesystem>

#include "protocol/odata_json.h"
#include "protocol/route.h"
#include "storage/engine.h"
#include "tools/table_store.h"

namespace tablestone::tools {
namespace {

class OfflineStore final : public TableStore {
 public:
  // Owns the engine (closed with the store)...
  OfflineStore(std::unique_ptr<storage::Engine> engine, std::string account)
      : owned_(std::move(engine)), engine_(owned_.get()), account_(std::move(account)) {}
  // ... or borrows a running server's.
  OfflineStore(storage::Engine& engine, std::string account) : engine_(&engine), account_(std::move(account)) {}
  ~OfflineStore() override {
    if (owned_) (void)owned_->Close();
  }

  std::string AccountName() const override { return account_; }

  bool ListTables(std::vector<std::string>* names, std::string* error) override {
    names->clear();
    storage::TableListSpec spec;
    for (;;) {
      auto page = engine_->ListTables(account_, spec);
      if (!page.ok()) return Fail("listing tables: " + page.status().ToString(), error);
      for (const auto& t : page->tables) names->push_back(t.name);
      if (!page->next) return true;
      spec.resume_from = *page->next;
    }
  }

  bool CreateTable(std::string_view name, bool* existed, std::string* error) override {
    // The engine takes any name; a server would refuse to serve one the
    // Table API refuses ('../x', NUL, 5,000 characters), so none is created.
    if (auto valid = protocol::ValidateTableName(name); !valid.ok()) {
      *existed = false;
      return Fail("table name '" + std::string(name.substr(0, 80)) + (name.size() > 80 ? "...'" : "'") +
                      " is not one the Table API accepts (3 to 63 letters and digits, starting with a letter): " +
                      valid.error().message,
                  error);
    }
    auto created = engine_->CreateTable(account_, name);
    *existed = !created.ok() && created.status().code() == StatusCode::kTableAlreadyExists;
    if (created.ok() || *existed) return true;
    return Fail("creating table '" + std::string(name) + "': " + created.status().ToString(), error);
  }

  bool DeleteTable(std::string_view name, std::string* error) override {
    Status s = engine_->DeleteTable(account_, name);
    if (s.ok() || s.code() == StatusCode::kTableNotFound) return true;
    return Fail("deleting table '" + std::string(name) + "': " + s.ToString(), error);
  }

  bool TableExists(std::string_view name, bool* exists, std::string* error) override {
    auto t = engine_->GetTable(account_, name);
    *exists = t.ok();
    if (t.ok() || t.status().code() == StatusCode::kTableNotFound) return true;
    return Fail("looking up table '" + std::string(name) + "': " + t.status().ToString(), error);
  }

  bool ReadPage(std::string_view table, PageToken* token, std::vector<model::Entity>* out,
                std::string* error) override {
    out->clear();
    auto info = engine_->GetTable(account_, table);
    if (!info.ok()) return Fail("reading table '" + std::string(table) + "': " + info.status().ToString(), error);
    model::ScanSpec spec;
    if (token->resume) spec.resume_from = model::EntityKey{token->next_partition_key, token->next_row_key};
    auto page = engine_->Scan(*info, spec);
    if (!page.ok()) return Fail("reading table '" + std::string(table) + "': " + page.status().ToString(), error);
    *out = std::move(page->entities);
    token->resume = page->next.has_value();
    token->done = !token->resume;
    if (page->next) {
      token->next_partition_key = page->next->partition_key;
      token->next_row_key = page->next->row_key;
    }
    return true;
  }

  bool CountEntities(std::string_view table, uint64_t* count, std::string* error) override {
    *count = 0;
    PageToken token;
    std::vector<model::Entity> page;
    while (!token.done) {
      if (!ReadPage(table, &token, &page, error)) return false;
      *count += page.size();
    }
    return true;
  }

  bool WriteBatch(std::string_view table, WriteMode mode, std::span<const model::Entity> entities,
                  std::string* error) override {
    if (entities.empty()) return true;
    if (!table_ || table_->name != table) {
      auto info = engine_->GetTable(account_, table);
      if (!info.ok()) return Fail("writing to table '" + std::string(table) + "': " + info.status().ToString(), error);
      table_ = *info;
    }
    ops_.clear();
    for (const model::Entity& e : entities) {
      // The API refuses such an entity before storing it; written here
      // unchecked, it would be data no client of the service could write or
      // read back the same way.
      if (auto valid = protocol::ValidateEntity(e); !valid.ok()) {
        auto cut = [](const std::string& key) { return key.substr(0, 80) + (key.size() > 80 ? "..." : ""); };
        return Fail("writing to table '" + std::string(table) + "' (PartitionKey '" + cut(e.partition_key) +
                        "', RowKey '" + cut(e.row_key) + "'): the Table API refuses this entity: " +
                        valid.error().code + ": " + valid.error().message,
                    error);
      }
      model::WriteOp op;
      op.kind = mode == WriteMode::kInsert   ? model::WriteKind::kInsert
                : mode == WriteMode::kUpsert ? model::WriteKind::kInsertOrMerge
                                             : model::WriteKind::kInsertOrReplace;
      op.entity = e;
      ops_.push_back(std::move(op));
    }
    storage::WriteResult r = engine_->Write(*table_, ops_);
    if (!r.status.ok()) {
      const model::Entity& e = entities[r.failed_index];
      std::string why = r.status.code() == StatusCode::kAlreadyExists
                            ? "the entity exists already (use --mode upsert or replace)"
                            : r.status.ToString();
      return Fail("writing to table '" + std::string(table) + "' (PartitionKey '" + e.partition_key +
                      "', RowKey '" + e.row_key + "'): " + why,
                  error);
    }
    return true;
  }

  bool Flush(std::string* error) override {
    Status s = engine_->SyncWal();
    if (!s.ok()) return Fail("syncing the log: " + s.ToString(), error);
    return true;
  }

 private:
  static bool Fail(std::string why, std::string* error) {
    *error = std::move(why);
    return false;
  }

  std::unique_ptr<storage::Engine> owned_;
  storage::Engine* engine_;
  std::string account_;
  std::optional<storage::TableInfo> table_;
  std::vector<model::WriteOp> ops_;
};

}  // namespace

namespace {

StatusOr<std::unique_ptr<storage::Engine>> OpenEngine(const std::string& path, std::string* error) {
  storage::EngineOptions options;
  options.path = path;
  auto engine = storage::Engine::Open(options);
  if (!engine.ok()) {
    if (engine.status().code() == StatusCode::kDataDirLocked) {
      *error = "data directory '" + path +
               "' is in use by a running server; stop it, or use its connection string (--from/--to) instead";
    } else {
      *error = "cannot open data directory '" + path + "': " + engine.status().ToString();
    }
  }
  return engine;
}

bool IsDataDirectory(const std::string& path, std::string* error) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec)) return true;
  *error = "'" + path + "' is not a tablestone data directory (no database in it)";
  return false;
}

}  // namespace

std::unique_ptr<TableStore> WrapEngine(storage::Engine& engine, const std::string& account) {
  return std::make_unique<OfflineStore>(engine, account);
}

bool SnapshotDataDirectory(const std::string& location, const std::string& to, std::string* error) {
  if (!IsDataDirectory(location, error)) return false;
  auto engine = OpenEngine(location, error);
  if (!engine.ok()) return false;
  Status s = engine.value()->CreateCheckpoint(to);
  Status closed = engine.value()->Close();
  if (!s.ok()) {
    *error = "snapshot of '" + location + "' to '" + to + "': " + s.ToString();
    return false;
  }
  if (!closed.ok()) {
    *error = "closing '" + location + "': " + closed.ToString();
    return false;
  }
  return true;
}

std::unique_ptr<TableStore> OpenOfflineStore(const std::string& path, const std::string& account, bool create,
                                             std::string* error) {
  if (!create && !IsDataDirectory(path, error)) return nullptr;
  auto engine = OpenEngine(path, error);
  if (!engine.ok()) return nullptr;
  return std::make_unique<OfflineStore>(std::move(engine.value()), account);
}

}  // namespace tablestone::tools
