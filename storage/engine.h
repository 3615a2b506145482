// Engine: the RocksDB-backed store of tables and entities. The only public
// entry point of storage/ that server/api uses.
//
// Thread safety: every method may be called concurrently from any thread.
// Writes to one (table, PartitionKey) are serialized by a striped lock; a
// table's deletion waits for writes in flight on that table and vice versa.
//
// Work: the methods below block their caller (a scan for up to its
// deadline, a write on a RocksDB stall, DeleteTable on its drain). Where they
// run is the caller's business: a caller that serves many clients on few
// threads runs them on threads of its own (server/exec/work_executor.h), and
// asks the engine only whether a call would wait (ReadWait::kNoWait,
// CanWriteWithoutWaiting). The engine's own threads (the log writer, the
// scan cache's builder) run nothing of the caller's.
//
// Durability (group commit): Write() and the other writes return once their
// batch is in the write-ahead log's buffer and visible to readers; they are
// durable (survive a process crash; with EngineOptions::sync_writes a power
// loss) once a later SyncWal() has returned. Callers must not acknowledge a
// write, nor send a response that may reflect one, before that: after
// producing the response they call AwaitDurable(), which answers at once when
// nothing visible is pending, and otherwise queues the callback for the
// engine's next log write. That write runs on the engine's log writer thread
// (storage/group_commit.h), which does nothing else, so one WAL write (and
// fsync) covers every request that finished meanwhile instead of one each
// (the leader/follower group commit of LevelDB's DBImpl::Write, with
// callbacks instead of blocked followers: no thread waits for the disk but
// the one writing), and it never waits behind request work. A caller whose
// log write would be a write(2) into the page cache, with the log writer
// idle, may make it itself instead (TrySyncWal).
//
// Errors: StatusCode values from storage/model/status.h:
//   kTableNotFound, kTableAlreadyExists, kNotFound, kAlreadyExists,
//   kConditionNotMet, kTooManyProperties, kEntityTooLarge (merges),
//   kIoError / kNoSpace / kReadOnly / kCorruption (disk trouble),
//   kInvalidArgument (a caller bug, e.g. mixed partitions in Write()).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "storage/model/entity.h"
#include "storage/model/scan_spec.h"
#include "storage/model/status.h"
#include "storage/model/write_op.h"

namespace rocksdb {
class FileSystem;
}  // namespace rocksdb

namespace tablestone::storage {

class SyncPoints;

struct EngineOptions {
  std::string path;               // data directory (created if missing)
  bool in_memory = false;         // RocksDB on rocksdb::NewMemEnv; nothing touches disk
  bool sync_writes = false;       // SyncWal() also fsyncs the WAL (survives power loss)
  // RocksDB blocks; index and filter partitions take up to half (high priority).
  size_t block_cache_bytes = 64u << 20;
  // A scan adds the blocks it reads to the block cache only until it has read
  // this many bytes of rows; the rest of it reads blocks uncached (freed as
  // the scan moves on). A long scan's blocks would evict the cache's blocks
  // and each other before anything read them again (the scan cache keeps the
  // partitions worth keeping), and inserting them is a large share of a cold
  // scan's CPU, mostly page faults.
  size_t scan_fill_cache_bytes = 256u << 10;
  // Encoded values of recently read entities (storage/entity_cache.h), for
  // point reads and the reads of Write(); 0 disables.
  size_t entity_cache_bytes = 16u << 20;
  size_t write_buffer_bytes = 32u << 20;
  // SST files whose table readers (footer, properties, the pinned top level
  // of the index and filter) stay open. A point read in a file whose reader
  // was closed opens it again first, so with more files than this random
  // point reads spend much of their time reopening. Each open file holds a
  // descriptor: the server derives it from its descriptor limit
  // (app::TableFilesKeptOpen).
  int max_open_files = 512;
  size_t lock_stripes = 1024;
  // Columnar copies of recently scanned partitions for filtered scans
  // (storage/partition_cache.h), bounded by this many bytes; 0 disables.
  size_t scan_cache_bytes = 64u << 20;
  // Partitions that just received at least kMinCachedRows rows are built
  // into the scan cache once no write reached them for this long, by the
  // engine's builder thread at scan_build_nice (warm_candidates.h), so the
  // first query after a load is a cached one. Zero (the default; the server
  // sets it) turns this off.
  std::chrono::milliseconds warm_after_write{0};
  // nice value the scan cache's builder thread runs its builds at (the
  // partitions queries asked for, the restores and the warm builds). The server
  // gives it the nice of the lane its long queries run on, so a build and the
  // scan that asked for it compete for the CPU on equal terms.
  int scan_build_nice = 0;
  // Who groups log writes. kEngine (the default): writes only append to the
  // log's buffer and AwaitDurable's leader writes it once per group. kRocksDb:
  // every DB::Write writes (and with sync_writes fsyncs) the log itself, and
  // RocksDB groups writers that arrive together; a write is durable when it
  // returns. Kept so that the two can be measured against each other.
  enum class GroupCommit { kEngine, kRocksDb };
  GroupCommit group_commit = GroupCommit::kEngine;
  // Test hooks in the engine's background threads (storage/sync_point.h);
  // null (the default) costs one pointer test per point.
  std::shared_ptr<SyncPoints> sync_points;
  // The file system under the data directory; null = the operating system's.
  // Tests put one here that fails chosen writes (a full disk, an I/O error).
  std::shared_ptr<rocksdb::FileSystem> file_system;
  // Accounts whose table names are compared exactly (Cosmos DB for Table,
  // docs/cosmos-mode.md); every other account's are compared ASCII
  // case-insensitively, as Table storage's. A property of the account's
  // data: the catalog keys its tables by the compared form, so the server
  // records it (kTableNameCaseKey) and refuses to start on a mismatch.
  std::vector<std::string> case_sensitive_accounts;
};

// The account metadata key recording that an account's table names are
// compared exactly (value kTableNamesExact); absent = case-insensitively.
inline constexpr std::string_view kTableNameCaseKey = "tableNameCase";
inline constexpr std::string_view kTableNamesExact = "exact";

struct TableInfo {
  uint64_t id = 0;        // never reused, even after the table is deleted
  std::string account;
  std::string name;       // as created (case kept)
};

struct TableListSpec {
  // Resume at this compared name (lower-cased, or exact for a case-sensitive
  // account; inclusive); empty = from the start.
  std::string resume_from;
  // Keep tables for which this returns true (argument: the stored name).
  std::function<bool(std::string_view)> predicate;
  size_t max_results = 1000;
};

struct TableListResult {
  std::vector<TableInfo> tables;        // ordered by lower-cased name
  std::optional<std::string> next;      // lower-cased name to resume at
};

// Outcome of Write(): the commit timestamp shared by every op, or the index of
// the first op that failed and why (nothing was written in that case).
struct WriteResult {
  Status status;             // OK or the failing op's status
  size_t failed_index = 0;   // meaningful when !status.ok()
  int64_t timestamp = 0;     // meaningful when status.ok()
};

class Engine {
 public:
  // Opens (creating if needed) the database. Fails with kDataDirLocked when
  // another process holds the directory, kIoError when it is unreadable.
  static StatusOr<std::unique_ptr<Engine>> Open(const EngineOptions& options);
  virtual ~Engine() = default;

  // Flushes memtables and closes the database; further calls fail with
  // kShuttingDown. Idempotent. The destructor calls it too.
  virtual Status Close() = 0;

  // ---- Tables (names compared case-insensitively within an account) ----
  virtual StatusOr<TableInfo> CreateTable(std::string_view account, std::string_view name) = 0;
  // Removes the catalog entry and every entity of the table in one batch.
  virtual Status DeleteTable(std::string_view account, std::string_view name) = 0;
  virtual StatusOr<TableInfo> GetTable(std::string_view account, std::string_view name) = 0;
  virtual StatusOr<TableListResult> ListTables(std::string_view account, const TableListSpec& spec) = 0;

  // ---- Entities ----
  // Whether a read may wait for the disk. kNoWait is for the I/O threads
  // (server/api/dispatcher.h): the read uses what is in memory (the entity
  // cache, RocksDB's block cache and the kernel's page cache, through
  // NoWaitFileSystem) and fails with kWouldBlock where it would have read the
  // disk; the kernel has then started reading those pages.
  enum class ReadWait { kMayWait, kNoWait };
  virtual StatusOr<model::Entity> GetEntity(const TableInfo& table, std::string_view partition_key,
                                            std::string_view row_key, ReadWait wait) = 0;
  StatusOr<model::Entity> GetEntity(const TableInfo& table, std::string_view partition_key,
                                    std::string_view row_key) {
    return GetEntity(table, partition_key, row_key, ReadWait::kMayWait);
  }
  // Applies `ops` atomically: validates every op against the current state
  // (in order, each seeing the effect of the earlier ones), then commits one
  // WriteBatch; all written entities get the same new timestamp. All ops must
  // share one PartitionKey. Returns kTableNotFound if the table was deleted.
  // With ReadWait::kNoWait, reading the stored versions may not wait for the
  // disk: where it would, nothing is written and the result is kWouldBlock.
  virtual WriteResult Write(const TableInfo& table, std::span<const model::WriteOp> ops, ReadWait wait) = 0;
  WriteResult Write(const TableInfo& table, std::span<const model::WriteOp> ops) {
    return Write(table, ops, ReadWait::kMayWait);
  }
  // Reads one page from a consistent snapshot: the rows `spec` names, on the
  // calling thread as `run` says (its CPU budget and bursts, the rendering of
  // kept rows).
  virtual StatusOr<model::ScanResult> Scan(const TableInfo& table, const model::ScanSpec& spec,
                                           const model::ScanRun& run) = 0;
  StatusOr<model::ScanResult> Scan(const TableInfo& table, const model::ScanSpec& spec) {
    return Scan(table, spec, model::ScanRun{});
  }

  // ---- Small metadata blobs (opaque to storage) ----
  // Per-account settings such as service properties, keyed by `key`.
  virtual Status PutAccountMeta(std::string_view account, std::string_view key, std::string_view value) = 0;
  virtual StatusOr<std::optional<std::string>> GetAccountMeta(std::string_view account,
                                                              std::string_view key) = 0;
  // Per-table ACL blob; deleted with the table. kTableNotFound if the table is gone.
  virtual Status PutTableAcl(const TableInfo& table, std::string_view value) = 0;
  virtual StatusOr<std::string> GetTableAcl(const TableInfo& table) = 0;

  // ---- Work (see above) ----
  // True when a small Write() would neither wait for the disk nor sleep in a
  // RocksDB write stall now: the engine groups log writes itself (kEngine, so
  // Write() only appends to the log's buffer) and no column family is
  // delaying or stopping writes. A caller serving many clients per thread may
  // then run such a write on its own thread instead of handing it to a thread
  // that may wait: the hand-off costs more than the write. Advisory: a stall
  // that begins just after this returns delays that one write.
  virtual bool CanWriteWithoutWaiting() = 0;

  // ---- Group commit of the write-ahead log (see "Durability" above) ----
  // Calls `done` once every write visible now is durable: at once on the
  // calling thread when it already is, else later on the log writer thread.
  // `done` gets the log write's error if it failed (the caller must then not
  // acknowledge: those writes may be lost in a crash). Never blocks on I/O.
  virtual void AwaitDurable(std::function<void(Status)> done) = 0;
  // AwaitDurable's log write made on the calling thread, when that costs a
  // write(2) of the log's buffer into the page cache and nothing more: the
  // engine groups log writes itself without fsync (no sync_writes), the log
  // writer has nothing queued and is not writing, and no failed log write is
  // being recovered. Returns its result (as SyncWal's: on an error nothing
  // visible before the call may be acknowledged), or nullopt when it would
  // wait for the disk or another thread: then AwaitDurable. For a caller
  // serving many clients on one thread that has just produced writes (an I/O
  // thread at the end of its turn): the log writer's wake-up and the answers'
  // hand-back cost it more than the write(2).
  virtual std::optional<Status> TrySyncWal() { return std::nullopt; }
  // True when a response built now from reading the entities of `table` in
  // `account` (name in any case) cannot reflect a write that is not durable
  // yet: nothing pending for that table's entities, the catalog, ACLs or
  // account metadata. Writes to other tables do not count, so their burst does
  // not make these reads wait for its log writes. Call it after reading; when
  // it answers false, AwaitDurable() as for any response. May answer false when
  // nothing is pending (never the reverse). Cheap: a few atomic loads.
  virtual bool TableReadIsDurable(std::string_view account, std::string_view table) {
    (void)account;
    (void)table;
    return IsDurable();
  }
  // True when every write visible to readers now is durable: a response built
  // now, whatever it read, may be sent. Cheap: two atomic loads.
  virtual bool IsDurable() = 0;
  // AwaitDurable's work done on the calling thread, for tools that write
  // without serving requests (a reset, an import): writes the buffered log
  // to its file (and fsyncs it with sync_writes), so that every write visible
  // before the call is durable when it returns OK. On failure (a full
  // or failing disk) those writes stay not durable and the error is returned:
  // the responses that waited are answered with an error, and every read that
  // may reflect those writes keeps waiting and failing the same way, so no
  // client sees a write a crash could take back. The writes stay in RocksDB's
  // memtables; later calls try to make them durable another way (DB::Resume,
  // which flushes every memtable to table files, at most every 500 ms). OK
  // after Close().
  virtual Status SyncWal() = 0;

  // ---- Snapshots ----
  // Writes a consistent copy of the whole database to `dir` (which must not
  // exist; same file system for hard links): RocksDB's checkpoint, whose
  // table files are hard links, so it costs milliseconds whatever the data
  // size. Every write visible now is in it (the log is synced first). A
  // server started on `dir` sees exactly that state. kInvalidArgument for an
  // in-memory engine or an existing `dir`.
  virtual Status CreateCheckpoint(const std::string& dir) {
    return Status::InvalidArgument("this engine cannot take snapshots");
  }

  // Approximate on-disk bytes and live entity count (benchmarks, health,
  // the metrics route). Counters count since open.
  struct Stats {
    uint64_t live_data_bytes = 0;
    uint64_t estimated_entities = 0;
    uint64_t entity_cache_entries = 0;  // entities held by the entity cache
    uint64_t block_cache_bytes = 0;     // charged to RocksDB's block cache now
    uint64_t wal_syncs = 0;             // log writes SyncWal() made since open (group commits)
    uint64_t memtable_bytes = 0;        // all column families' memtables
    uint64_t sst_bytes = 0;             // all column families' SST files
    uint64_t pending_compaction_bytes = 0;  // RocksDB's estimate
    uint64_t stalled_column_families = 0;   // delayed or stopped right now
    uint64_t write_stalls = 0;              // stalls begun since open (a column family leaving normal)
    uint64_t entity_cache_hits = 0;     // point reads answered by the entity cache
    uint64_t entity_cache_misses = 0;
    uint64_t scan_cache_hits = 0;       // partitions a scan served from the scan cache
    uint64_t scan_cache_misses = 0;     // partitions a scan looked up and read from RocksDB
    uint64_t scan_cache_entries = 0;    // partitions the scan cache holds now (valid or not yet dropped)
    uint64_t scan_cache_too_large = 0;  // builds given up: the partition outgrew the largest entry
    // Tables and entities per account, kept up to date by every committed
    // write (not counted here). Every account that had a table since open.
    struct AccountUsage {
      std::string account;
      uint64_t tables = 0;
      uint64_t entities = 0;
    };
    std::vector<AccountUsage> accounts;
    // False while the one count of existing entities after open still runs
    // (entities are then too low; tables are always exact).
    bool entity_counts_complete = false;
  };
  virtual Stats GetStats() = 0;
};

}  // namespace tablestone::storage
