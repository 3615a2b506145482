// RocksEngine: the Engine implementation on RocksDB (internal to storage/;
// callers use Engine::Open).
//
// Concurrency (outermost first):
//   gate_           every call passes it; Close() shuts it and waits for calls inside
//   ddl_mu_         CreateTable/DeleteTable: serializes catalog changes
//   TableState::gate writes and ACL puts pass it; DeleteTable shuts it and
//                   waits, so no write lands after the table's DeleteRange
//   stripe mutex    hash of (table id, PartitionKey): read-check-write in Write
// catalog_mu_ guards catalog_/live_tables_ and is only held briefly, never
// while waiting for anything else.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <set>
#include <shared_mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/env.h>
#include <rocksdb/write_batch.h>

#include "storage/engine.h"
#include "storage/entity_cache.h"
#include "storage/group_commit.h"
#include "storage/op_gate.h"
#include "storage/partition_cache.h"
#include "storage/rocks_listeners.h"
#include "storage/scan_cache_builder.h"
#include "storage/wal_append_lock.h"

namespace tablestone::storage {

class ScanState;  // one scan's state, rocks_engine_scan.cc

// The scans of an engine whose state is alive (running, or suspended and held
// by the caller: model::SuspendedScan), shared by the engine and each state
// so that either may go first. Close() invalidates every one still alive:
// their iterators and snapshots are released while the database is open, and
// a later Resume is refused by the closed gate. A state unregisters itself
// when destroyed. The handle check of a resumed scan (Contains) replaces a
// dynamic_cast: only a live state of this engine is continued.
class ScanRegistry {
 public:
  // Adds `state`; false once Close began (the state then holds nothing to release).
  bool Add(ScanState* state);
  // Removes `state` and invalidates it under the registry's lock when it was
  // still registered (so Close cannot close the database meanwhile).
  void Remove(ScanState* state);
  bool Contains(const model::SuspendedScan* scan);
  // Close(): invalidates every live state and refuses new ones.
  void CloseAll();

 private:
  std::mutex mu_;
  std::set<ScanState*> live_;  // guarded by mu_
  bool closed_ = false;        // guarded by mu_
};

// The lock stripe of a partition among `stripe_count` (RocksEngine::StripeIndex).
inline size_t LockStripe(uint64_t table_id, std::string_view partition_key, size_t stripe_count) {
  const size_t h = std::hash<std::string_view>()(partition_key) ^ (table_id * 0x9E3779B97F4A7C15ull);
  return h % stripe_count;
}

class RocksEngine final : public Engine {
 public:
  explicit RocksEngine(const EngineOptions& options);
  ~RocksEngine() override;

  // Opens the database and loads the catalog; called once by Engine::Open.
  Status OpenDb();

  Status Close() override;

  StatusOr<TableInfo> CreateTable(std::string_view account, std::string_view name) override;
  Status DeleteTable(std::string_view account, std::string_view name) override;
  StatusOr<TableInfo> GetTable(std::string_view account, std::string_view name) override;
  StatusOr<TableListResult> ListTables(std::string_view account, const TableListSpec& spec) override;

  using Engine::GetEntity;
  StatusOr<model::Entity> GetEntity(const TableInfo& table, std::string_view partition_key,
                                    std::string_view row_key, ReadWait wait) override;
  using Engine::Write;
  WriteResult Write(const TableInfo& table, std::span<const model::WriteOp> ops, ReadWait wait) override;
  // ScanPage, then a debug line on the "storage" logger saying what it read.
  using Engine::Scan;
  StatusOr<model::ScanResult> Scan(const TableInfo& table, const model::ScanSpec& spec,
                                   const model::ScanRun& run) override;

  Status PutAccountMeta(std::string_view account, std::string_view key, std::string_view value) override;
  StatusOr<std::optional<std::string>> GetAccountMeta(std::string_view account, std::string_view key) override;
  Status PutTableAcl(const TableInfo& table, std::string_view value) override;
  StatusOr<std::string> GetTableAcl(const TableInfo& table) override;

  bool CanWriteWithoutWaiting() override {
    return options_.group_commit == EngineOptions::GroupCommit::kEngine &&
           stalled_column_families_->load(std::memory_order_relaxed) == 0;
  }
  void AwaitDurable(std::function<void(Status)> done) override;
  std::optional<Status> TrySyncWal() override;
  bool TableReadIsDurable(std::string_view account, std::string_view table) override;
  bool IsDurable() override { return VisibleMark() <= DurableMark(); }

  // The marks behind IsDurable, for the storage tests: a number covering
  // every write visible to readers now (RocksDB's last published sequence
  // number; an atomic load), and the one up to which writes are durable
  // (SyncWal raises it to the VisibleMark read before its log write).
  uint64_t VisibleMark();
  uint64_t DurableMark() {
    // RocksDB's group commit: a write is visible only once DB::Write has put
    // it in the log file (and fsynced it when asked), so visible = durable.
    if (options_.group_commit == EngineOptions::GroupCommit::kRocksDb) return VisibleMark();
    return durable_mark_.load(std::memory_order_acquire);
  }
  Status SyncWal() override;
  // SyncWal's log write, or with `may_wait` false nullopt where it would
  // wait: for another log write (sync_mu_) or for a recovery's flush.
  std::optional<Status> WriteWal(bool may_wait);


  Stats GetStats() override;
  Status CreateCheckpoint(const std::string& dir) override;

 private:
  // One page, or its continuation (spec.resume_scan): runs the scan's state
  // (rocks_engine_scan.cc), set in *state, until the page ends or is
  // suspended (ScanSpec::resumable). A state it started is owned by *started;
  // its page, the partitions its cache admitted (built after the page by
  // ScanCacheBuilder::Schedule) and its use clock (partition_cache.h) are read from it.
  Status ScanPage(const TableInfo& table, const model::ScanSpec& spec, const model::ScanRun& run,
                  std::shared_ptr<ScanState>* started,
                  ScanState** state);
  // The scan cache builder's snapshot reader (ScanCacheBuilder::BuildPartition,
  // rocks_engine_builds.cc): builds one partition into the scan cache from
  // build.rows, else from a snapshot of its own; returns whether the cache
  // kept it. *rows (if given) receives the rows read.
  bool BuildCachedPartition(uint64_t table_id, const PartitionToBuild& build, uint64_t use_clock,
                            size_t* rows = nullptr);
  // Tables and entities of one account (Stats::accounts). Entities may dip
  // below zero while the count after open runs (deletes of not yet counted
  // rows); read clamped.
  struct AccountCounts {
    std::atomic<int64_t> tables{0};
    std::atomic<int64_t> entities{0};
  };
  // Liveness of one table id: writes pass the gate, DeleteTable closes it.
  struct TableState {
    OpGate gate;
    std::shared_ptr<AccountCounts> counts;  // its account's
    // Entities of the table: the count after open plus every committed
    // write's change, added under a pass of `gate`, so once DeleteTable has
    // closed the gate this is what leaves the account's count.
    std::atomic<int64_t> entities{0};
    // The scan-cache stamp of the table's latest write (0 = none since open
    // or without a cache); set like the stripe stamps, see partition_cache.h.
    std::atomic<uint64_t> last_write_stamp{0};
  };

  Status OpenLocked();
  Status LoadCatalog();
  // The state of a table of `account` (new, zero entities); holds catalog_mu_ exclusively.
  std::shared_ptr<TableState> NewTableState(std::string_view account);
  // The count of existing entities after open, on its own thread: every table
  // live at open, read at `snapshot` (taken before any write), added to the
  // counts under the table's gate; stops early when Close asks.
  void CountEntities(const rocksdb::Snapshot* snapshot,
                     std::vector<std::pair<uint64_t, std::shared_ptr<TableState>>> tables);
  // Close() records every table's count (meta 'C', catalog_codec.h) when the
  // counts are complete; the next open takes them instead of counting when no
  // write came after them (see the definition). Load runs before the gate
  // opens and returns whether it set the counts.
  void SaveEntityCounts();
  bool LoadSavedEntityCounts();
  // Close() records the scan cache's partitions (meta 'G'); the next open
  // reads them back for the builder to rebuild (ScanCacheBuilder).
  void SaveCachedPartitionKeys();
  std::vector<ScanCacheBuilder::Restore> LoadCachedPartitionKeys();
  static constexpr size_t kSavedCacheKeys = 1024;
  rocksdb::ColumnFamilyHandle* cf(size_t index) const { return cfs_[index]; }
  // The live state of `table_id`, or null if no such table exists now.
  std::shared_ptr<TableState> FindLiveTable(uint64_t table_id);
  size_t StripeIndex(uint64_t table_id, std::string_view partition_key) const;
  std::mutex& StripeFor(uint64_t table_id, std::string_view partition_key);
  // A commit timestamp > every one handed out before and >= floor.
  int64_t NextTimestamp(int64_t floor);
  rocksdb::WriteOptions WriteOpts() const;
  // db_->Write, recovering from a latched background error (disk full, read-only
  // volume) once the disk accepts writes again; see the definition. The caller
  // holds a MarkedWrite for what the batch changes.
  rocksdb::Status CommitBatch(rocksdb::WriteBatch* batch);
  // Whether a DB::Resume() may be tried now (at most one every 500 ms: each
  // attempt on a full disk writes and removes partial table files).
  bool ResumeAllowedNow(std::atomic<int64_t>& last_attempt_ns);
  // After a failed log write (log_failure_ set; holds sync_mu_): makes every
  // write visible now durable without the log, by DB::Resume() (which clears
  // RocksDB's latched error and flushes every memtable) and a flush of every
  // column family, then raises the durable mark to `visible`. Returns the
  // failure while the disk still refuses; see SyncWal in engine.h.
  Status RecoverFromLogFailure(uint64_t visible);
  // Snapshots (CreateCheckpoint) stage their files in "DIR.tmp" (RocksDB's
  // name) and rename it; a kill in between left that directory of hard links
  // behind. The staging path is written to a marker file in the data
  // directory first and the marker removed after; a marker found at open or
  // at the next snapshot names a staging directory to remove.
  void RemoveAbandonedSnapshot();

  // ---- Write marks (TableReadIsDurable) ----
  // The durability state of the writes to one group of data: how many are
  // between "about to commit" and "committed, caches updated", and a sequence
  // number covering every one of them that finished. Slot kTableMarkSlots is
  // everything that is not a table's entities (catalog, ACLs, account
  // metadata); the others are tables' entities by hash of account and name
  // (a shared slot only makes a read wait when it need not).
  struct alignas(64) WriteMark {
    std::atomic<uint32_t> in_flight{0};
    std::atomic<uint64_t> last_seq{0};
  };
  static constexpr size_t kTableMarkSlots = 1024;
  WriteMark& TableMark(std::string_view account, std::string_view table);
  WriteMark& OtherDataMark() { return write_marks_[kTableMarkSlots]; }
  // Held around a commit and everything that makes it visible (caches, the
  // catalog): a read that saw the write then finds the mark in flight or its
  // sequence number recorded. See TableReadIsDurable's definition.
  class MarkedWrite {
   public:
    MarkedWrite(RocksEngine& engine, WriteMark& mark);
    ~MarkedWrite();
    MarkedWrite(const MarkedWrite&) = delete;
    MarkedWrite& operator=(const MarkedWrite&) = delete;

   private:
    RocksEngine& engine_;
    WriteMark& mark_;
  };
  // The stored value of an entity key: from the entity cache, else from
  // RocksDB (then offered to the cache, entity_cache.h). On ok, *bytes views
  // *cached or *value, whichever served it. kNotFound when the key has no
  // value; with ReadWait::kNoWait, kWouldBlock where RocksDB would have read
  // the disk (NoWaitScope).
  Status ReadEntityValue(const std::string& key, ReadWait wait, std::string* cached, rocksdb::PinnableSlice* value,
                         std::string_view* bytes);

  // The catalog's form of a table name: lower-cased, or as given for an
  // account in EngineOptions::case_sensitive_accounts.
  std::string CatalogName(std::string_view account, std::string_view name) const;
  const EngineOptions options_;
  std::unique_ptr<rocksdb::Env> mem_env_;  // outlives db_ (in-memory mode)
  std::unique_ptr<rocksdb::Env> nowait_env_;  // outlives db_ (on disk): NoWaitFileSystem under the default Env
  std::shared_ptr<rocksdb::Cache> block_cache_;
  rocksdb::DB* db_ = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs_;  // kColumnFamilies order, then unknown extras

  OpGate gate_;            // closed until OpenDb succeeds and after Close
  std::mutex close_mu_;    // serializes OpenDb/Close

  std::mutex ddl_mu_;
  uint64_t next_table_id_ = 1;  // guarded by ddl_mu_

  std::shared_mutex catalog_mu_;
  // CatalogKey(account, lower name) -> table; ordered for ListTables.
  std::map<std::string, TableInfo, std::less<>> catalog_;
  std::unordered_map<uint64_t, std::shared_ptr<TableState>> live_tables_;
  std::map<std::string, std::shared_ptr<AccountCounts>, std::less<>> account_counts_;  // guarded by catalog_mu_
  std::thread entity_counter_;            // CountEntities; joined by Close
  std::atomic<bool> stop_counting_{false};
  std::atomic<bool> entity_counts_complete_{false};

  std::unique_ptr<std::mutex[]> stripes_;
  size_t stripe_count_ = 1;
  // Null when EngineOptions::scan_cache_bytes is 0. Write() stamps a stripe
  // after each commit under its lock; see partition_cache.h for the argument.
  std::unique_ptr<PartitionCache> scan_cache_;
  // Null when EngineOptions::entity_cache_bytes is 0. Reads fill it; Write()
  // updates or erases its keys after each commit under the stripe lock; see
  // entity_cache.h for the argument.
  std::unique_ptr<EntityCache> entity_cache_;

  // Column families whose writes RocksDB delays or stops now, kept by a
  // listener of its stall notifications (CanWriteWithoutWaiting). Shared with
  // the listener, which RocksDB may hold until the DB is deleted.
  std::shared_ptr<std::atomic<int>> stalled_column_families_ = std::make_shared<std::atomic<int>>(0);
  std::shared_ptr<std::atomic<uint64_t>> write_stalls_ = std::make_shared<std::atomic<uint64_t>>(0);  // onsets
  // Sequence number up to which the WAL is written (SyncWal); see Engine.
  std::atomic<uint64_t> durable_mark_{0};
  std::unique_ptr<WriteMark[]> write_marks_ = std::make_unique<WriteMark[]>(kTableMarkSlots + 1);
  std::atomic<uint64_t> wal_syncs_{0};  // Stats::wal_syncs
  // Stats::scan_cache_hits/misses: each scan counts locally and adds once.
  std::atomic<uint64_t> scan_cache_hits_{0};
  std::atomic<uint64_t> scan_cache_misses_{0};
  // Every live scan state (see ScanRegistry).
  std::shared_ptr<ScanRegistry> scans_ = std::make_shared<ScanRegistry>();
  // The scan cache's builder thread; created by OpenDb when there is a scan
  // cache, stopped by Close.
  std::unique_ptr<ScanCacheBuilder> builder_;
  std::mutex sync_mu_;  // one SyncWal at a time: concurrent ones would only repeat the work
  // Shared by every DB::Write and Put, exclusive around FlushWAL and the
  // recovery after a failed log write (wal_append_lock.h). Taken after
  // sync_mu_, never while waiting for durability.
  WalAppendLock wal_lock_;
  // The error of the log write that failed, until RecoverFromLogFailure
  // succeeds; OK otherwise. Guarded by sync_mu_.
  Status log_failure_;
  // Set by a RocksDB listener (rocks_listeners.h, ManualErrorRecovery) when a
  // write's log append or a memtable switch failed; cleared by a recovery.
  std::shared_ptr<std::atomic<int>> log_writer_error_ = std::make_shared<std::atomic<int>>(kLogOk);
  std::mutex snapshot_mu_;  // one CreateCheckpoint at a time (its marker file)
  // Created by OpenDb; stopped by Close(), whose last log write answers the
  // waiters still queued.
  std::unique_ptr<GroupCommit> group_commit_;

  std::atomic<int64_t> last_timestamp_{0};
  std::atomic<int64_t> last_resume_ns_{0};  // steady clock of CommitBatch's last DB::Resume() attempt
  std::atomic<int64_t> last_log_recovery_ns_{0};  // and of RecoverFromLogFailure's
};

}  // namespace tablestone::storage
