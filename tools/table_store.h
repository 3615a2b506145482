// TableStore: the tables of one account, wherever they live: a running
// endpoint that speaks the Table REST API (remote_store.cc) or a data
// directory opened directly through storage/ (offline_store.cc). The data
// commands (data_commands.h) read and write through this interface only.
//
// Errors: false with a one-line reason in *error. Not thread-safe: one
// caller per instance.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/model/entity.h"
#include "tools/connection_string.h"

namespace tablestone::storage {
class Engine;
}

namespace tablestone::tools {

// How the data commands cut their writes into $batch requests. A body must
// fit the smaller of the two services' limits: 4 MiB on Table storage, 2 MB
// on Cosmos DB for Table (docs/cosmos-mode.md). BatchOperationBytes bounds
// what one operation adds to the body: its JSON, its URL (the keys
// percent-encoded, at most 3 bytes per byte) and its part's framing (with a
// table name of up to 254 characters). An entity over the budget goes alone.
inline constexpr size_t kMaxBatchEntities = 100;
inline constexpr size_t kMaxBatchBodyBytes = 1'900'000;  // + the envelope's few hundred bytes < 2,000,000

inline size_t BatchOperationBytes(size_t json_bytes, const model::Entity& e) {
  return json_bytes + 3 * (e.partition_key.size() + e.row_key.size()) + 1024;
}

enum class WriteMode {
  kInsert,   // fail if the entity exists
  kUpsert,   // Insert Or Merge
  kReplace,  // Insert Or Replace
};

// Where a table's read stands between pages. Opaque to callers except that
// it can be saved and restored (checkpoints) through these strings.
struct PageToken {
  bool resume = false;  // false: start at the table's first entity
  std::string next_partition_key;
  std::string next_row_key;
  bool done = false;
};

class TableStore {
 public:
  virtual ~TableStore() = default;

  // For export headers: the account name (never an endpoint or a secret).
  virtual std::string AccountName() const = 0;
  // Every table of the account, in the order the source lists them.
  virtual bool ListTables(std::vector<std::string>* names, std::string* error) = 0;
  // Creates `name`; *existed = true (and OK) when it was already there.
  virtual bool CreateTable(std::string_view name, bool* existed, std::string* error) = 0;
  virtual bool DeleteTable(std::string_view name, std::string* error) = 0;
  // True and *exists when the table could be looked up.
  virtual bool TableExists(std::string_view name, bool* exists, std::string* error) = 0;
  // Reads the page at *token (default-constructed = the first) and advances
  // it; token->done once the table has been read to its end.
  virtual bool ReadPage(std::string_view table, PageToken* token, std::vector<model::Entity>* out,
                        std::string* error) = 0;
  // *count = the number of entities in `table` now, reading keys only where
  // the store allows it (for the ETA of `copy`; a copy does not rely on it).
  virtual bool CountEntities(std::string_view table, uint64_t* count, std::string* error) = 0;
  // Writes up to kMaxBatchEntities entities of ONE partition atomically.
  virtual bool WriteBatch(std::string_view table, WriteMode mode, std::span<const model::Entity> entities,
                          std::string* error) = 0;
  // Makes every write so far durable (offline: the log is synced).
  virtual bool Flush(std::string* error) = 0;
};

struct RemoteOptions {
  int attempts = 6;             // per request, first try included
  int first_backoff_ms = 200;   // doubled per retry, with jitter
  int timeout_ms = 30000;       // per request
  // https://: PEM certificates trusted besides the system's store (a private
  // CA, or a self-signed server certificate). Verification is never off.
  std::vector<std::string> ca_files;
  // https:// instead: trust exactly this server certificate (the first of a
  // PEM file, or a PKCS#12 bundle's with server_cert_password), whatever
  // names it carries; any other certificate fails. How a server's own health
  // probe checks it (`tablestone health`): the handshake proves the peer
  // holds that certificate's key, which is what a name check would establish.
  std::string server_cert;
  std::string server_cert_password;
};

// Connects lazily: an unreachable endpoint is reported by the first call.
// http:// and https:// (TLS 1.2+, the certificate checked against the
// system's trust store and options.ca_files, and against the endpoint's host
// name or IP address; an untrusted certificate fails at once, unretried).
std::unique_ptr<TableStore> OpenRemoteStore(const Connection& connection, const RemoteOptions& options);

// Opens the data directory with the storage engine. Fails (with a clear
// message) when a running server holds it, or when `create` is false and the
// directory does not hold a database.
std::unique_ptr<TableStore> OpenOfflineStore(const std::string& path, const std::string& account, bool create,
                                             std::string* error);

// GET /_tablestone/health without a credential: *status and *body of the
// answer; false only when no answer came (the reason in *error).
bool GetHealth(const Connection& connection, const RemoteOptions& options, int* status, std::string* body,
               std::string* error);

// POST /_tablestone/<op>?<query> on a running tablestone (docs/admin-api.md),
// signed with the connection's account key. *body is the JSON answer.
bool CallAdminRoute(const Connection& connection, const RemoteOptions& options, std::string_view op,
                    const std::string& query, std::string* body, std::string* error);

// The same with another method ("GET", "POST", "DELETE") and a JSON request
// body, signed with it (`tablestone faults`, `tablestone trace`).
bool CallAdminRoute(const Connection& connection, const RemoteOptions& options, std::string_view method,
                    std::string_view op, const std::string& query, const std::string& json_body, std::string* body,
                    std::string* error);

// A store over an engine the caller owns and keeps open (a server seeding
// itself before it listens). Same behaviour as OpenOfflineStore's.
std::unique_ptr<TableStore> WrapEngine(storage::Engine& engine, const std::string& account);

// `tablestone snapshot`: opens the data directory of a stopped server and
// writes a RocksDB checkpoint of it to `to` (which must not exist).
bool SnapshotDataDirectory(const std::string& location, const std::string& to, std::string* error);

}  // namespace tablestone::tools
