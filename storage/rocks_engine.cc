// RocksEngine: opening/closing, durability and statistics. The catalog of
// tables and the metadata blobs are in rocks_engine_tables.cc, entity
// reads/writes in rocks_engine_write.cc, scans in rocks_engine_scan.cc,
// snapshots in rocks_engine_snapshot.cc.
#include "storage/rocks_engine.h"

#include <sched.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>

#include <rocksdb/convenience.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/listener.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include "storage/catalog_codec.h"
#include "storage/column_families.h"
#include "storage/key_codec.h"
#include "storage/model/ascii.h"
#include "storage/model/datetime.h"
#include "storage/nowait_file_system.h"
#include "storage/rocks_listeners.h"
#include "storage/rocks_status.h"
#include "storage/sync_point.h"
#include "storage/write_stall_counter.h"

namespace tablestone::storage {
namespace {

// Write buffers of the small column families (catalog, meta): they hold a few
// KiB in practice; the arena grows on demand, so this bounds rather than reserves.
constexpr size_t kSmallCfWriteBuffer = 4u << 20;
// See max_total_wal_size in OpenLocked.
constexpr uint64_t kMaxTotalWalBytes = 48ull << 20;

rocksdb::CompressionType PickCompression() {
  std::vector<rocksdb::CompressionType> supported = rocksdb::GetSupportedCompressions();
  for (rocksdb::CompressionType want : {rocksdb::kLZ4Compression, rocksdb::kSnappyCompression}) {
    if (std::find(supported.begin(), supported.end(), want) != supported.end()) return want;
  }
  return rocksdb::kNoCompression;
}

}  // namespace

StatusOr<std::unique_ptr<Engine>> Engine::Open(const EngineOptions& options) {
  auto engine = std::make_unique<RocksEngine>(options);
  TABLESTONE_RETURN_IF_ERROR(engine->OpenDb());
  return std::unique_ptr<Engine>(std::move(engine));
}

RocksEngine::RocksEngine(const EngineOptions& options) : options_(options) {
  stripe_count_ = std::max<size_t>(1, options_.lock_stripes);
  stripes_ = std::make_unique<std::mutex[]>(stripe_count_);
  if (options_.scan_cache_bytes > 0) {
    scan_cache_ = std::make_unique<PartitionCache>(options_.scan_cache_bytes, stripe_count_);
  }
  if (options_.entity_cache_bytes > 0) entity_cache_ = std::make_unique<EntityCache>(options_.entity_cache_bytes);
  gate_.CloseAndDrain();  // nothing is admitted before OpenDb succeeds
}

RocksEngine::~RocksEngine() { Close().IgnoreError(); }

Status RocksEngine::OpenDb() {
  std::lock_guard lock(close_mu_);
  Status s = OpenLocked();
  if (!s.ok()) {
    for (rocksdb::ColumnFamilyHandle* h : cfs_) {
      if (db_ != nullptr) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
    }
    cfs_.clear();
    if (db_ != nullptr) {
      db_->Close().PermitUncheckedError();
      delete db_;
      db_ = nullptr;
    }
    return s;
  }
  RemoveAbandonedSnapshot();
  group_commit_ = std::make_unique<GroupCommit>([this] { return SyncWal(); }, options_.sync_points.get());
  // Before the gate opens, so the snapshot holds no write made after it.
  std::vector<std::pair<uint64_t, std::shared_ptr<TableState>>> tables(live_tables_.begin(), live_tables_.end());
  stop_counting_.store(false);
  // A clean close saved the counts: nothing to scan (counting reads every row).
  const bool saved = LoadSavedEntityCounts();
  std::vector<ScanCacheBuilder::Restore> restore = LoadCachedPartitionKeys();
  entity_counts_complete_.store(tables.empty() || saved);
  if (!tables.empty() && !saved) {
    entity_counter_ = std::thread(&RocksEngine::CountEntities, this, db_->GetSnapshot(), std::move(tables));
  }
  if (scan_cache_) {
    ScanCacheBuilder::Options builder_options;
    builder_options.admission_nice = options_.scan_build_nice;
    builder_options.warm_after_write = options_.warm_after_write;
    builder_options.stripe_count = stripe_count_;
    builder_ = std::make_unique<ScanCacheBuilder>(
        *scan_cache_, builder_options,
        [this](uint64_t table_id, const PartitionToBuild& build, uint64_t use_clock, size_t* rows) {
          return BuildCachedPartition(table_id, build, use_clock, rows);
        },
        options_.sync_points.get());
  }
  SyncPoint(options_.sync_points.get(), "RocksEngine::Open:GateOpening");
  gate_.Reopen();
  // After the gate opens: a build passes the gate like a scan, so a restore
  // started before it would be refused and the partition silently left out.
  if (builder_) builder_->Start(std::move(restore));
  return s;
}

std::shared_ptr<RocksEngine::TableState> RocksEngine::NewTableState(std::string_view account) {
  auto it = account_counts_.find(account);
  if (it == account_counts_.end()) {
    it = account_counts_.emplace(std::string(account), std::make_shared<AccountCounts>()).first;
  }
  auto state = std::make_shared<TableState>();
  state->counts = it->second;
  return state;
}

void RocksEngine::CountEntities(const rocksdb::Snapshot* snapshot,
                                std::vector<std::pair<uint64_t, std::shared_ptr<TableState>>> tables) {
  // Only when nothing else wants the CPU: this pass reads every row, and must
  // not compete with the first queries after a restart. The counts say when
  // they are complete. Failure (no SCHED_IDLE) leaves the thread as it was.
  sched_param idle{};
  (void)sched_setscheduler(static_cast<pid_t>(syscall(SYS_gettid)), SCHED_IDLE, &idle);
  const auto begin = std::chrono::steady_clock::now();
  uint64_t total = 0;
  bool stopped = false;
  for (auto& [id, state] : tables) {
    const std::string start = TableStart(id), end = TableEnd(id);
    rocksdb::Slice upper(end);
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot;
    ro.iterate_upper_bound = &upper;
    ro.fill_cache = false;  // one pass over everything: keep the block cache for requests
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cf(kEntitiesCf)));
    int64_t n = 0;
    for (it->Seek(start); it->Valid(); it->Next()) {
      if ((++n & 4095) == 0 && stop_counting_.load(std::memory_order_relaxed)) break;
    }
    if (stop_counting_.load(std::memory_order_relaxed) || !it->status().ok()) {
      stopped = true;
      break;
    }
    GatePass table_pass(state->gate);  // refused: the table was deleted meanwhile, nothing to add
    if (table_pass.ok()) {
      state->entities.fetch_add(n);
      state->counts->entities.fetch_add(n);
    }
    total += static_cast<uint64_t>(n);
  }
  db_->ReleaseSnapshot(snapshot);
  if (stopped) return;
  entity_counts_complete_.store(true);
  StorageLog()->debug("counted {} entities of {} tables in {} ms", total, tables.size(),
                           std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - begin).count());
}


Status RocksEngine::OpenLocked() {
  std::string path = options_.path;
  rocksdb::Options db_options;
  if (options_.in_memory) {
    // The memory Env cannot resolve relative paths (GetAbsolutePath is not
    // implemented), and nothing touches disk anyway: use a fixed absolute name.
    path = "/tablestone-in-memory";
    mem_env_.reset(rocksdb::NewMemEnv(rocksdb::Env::Default()));
    db_options.env = mem_env_.get();
  } else {
    if (path.empty()) return Status::InvalidArgument("EngineOptions.path is empty");
    // The default Env (its thread pools included) with SST reads that a
    // NoWaitScope keeps from waiting for the disk (ReadWait::kNoWait).
    nowait_env_ = rocksdb::NewCompositeEnv(std::make_shared<NoWaitFileSystem>(
        options_.file_system != nullptr ? options_.file_system : rocksdb::FileSystem::Default()));
    db_options.env = nowait_env_.get();
    std::error_code ec;
    std::filesystem::create_directories(path, ec);
    if (ec) return Status::IoError("cannot create data directory " + path + ": " + ec.message());
  }
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  // Bounds the memtables of all column families together.
  db_options.db_write_buffer_size = options_.write_buffer_bytes;
  db_options.max_background_jobs = 2;
  // Compactions run at the lowest CPU priority (nice 19): they share the
  // cores that serve requests, and at low priority use the idle time between
  // bursts of writes instead. Under writes that never pause, RocksDB's L0
  // slowdown/stop triggers (below) slow the writers until compaction catches
  // up, so the backlog stays bounded. Flushes keep normal priority: a full
  // memtable blocks writes at once. The setting belongs to the process-wide
  // default Env's thread pool, which every engine in the process shares.
  rocksdb::Env::Default()
      ->LowerThreadPoolCPUPriority(rocksdb::Env::Priority::LOW, rocksdb::CpuPriority::kLow)
      .PermitUncheckedError();
  db_options.max_open_files = options_.max_open_files;
  // Open reads no SST file to refresh compaction statistics (RocksDB's
  // default opens up to a few hundred files for it), so startup does not
  // grow with the data. The statistics only steer deletion-heavy compactions
  // and refill as files are compacted.
  db_options.skip_stats_update_on_db_open = true;
  // The write-ahead log is kept until every column family has flushed what
  // it holds. The catalog and meta column families take a few writes (one
  // Create Table) and would never fill their memtables, so without a limit
  // they pin the first log file up to RocksDB's default (4 x the memtable
  // budget), all of it replayed after a kill -9. Past this total RocksDB
  // flushes the column families that hold the oldest log, so the log stays
  // near the entity memtables' own budget (db_write_buffer_size) plus this
  // margin (docs/reliability.md, "Log size";
  // DiskFailureTest.TheLogStaysBoundedAfterOneCreateTable).
  db_options.max_total_wal_size = kMaxTotalWalBytes;
  db_options.keep_log_file_num = 3;
  db_options.max_log_file_size = 1u << 20;
  // Explicitly: options.h's default depends on how RocksDB's headers see
  // NDEBUG, and at DEBUG level FlushWAL alone writes a line per group commit.
  db_options.info_log_level = rocksdb::InfoLogLevel::INFO_LEVEL;
  if (!options_.in_memory) {
    db_options.info_log =
        NewTolerantInfoLog(path + "/LOG", db_options.max_log_file_size, db_options.info_log_level);
  }
  db_options.avoid_unnecessary_blocking_io = true;
  db_options.listeners.push_back(std::make_shared<WriteStallCounter>(stalled_column_families_, write_stalls_));
  db_options.listeners.push_back(NewManualErrorRecovery(log_writer_error_));
  // Group commit: DB::Write only appends to the log's buffer; SyncWal() writes
  // it once per group of requests (Engine's "Durability", group_commit.h).
  db_options.manual_wal_flush = options_.group_commit == EngineOptions::GroupCommit::kEngine;
  // No RocksDB row cache: the engine's EntityCache (entity_cache.h) serves
  // repeated point reads, also of entities still in the memtable.

  rocksdb::LRUCacheOptions cache_options;
  cache_options.capacity = options_.block_cache_bytes;
  cache_options.high_pri_pool_ratio = 0.5;  // index/filter partitions outlive data blocks
  block_cache_ = rocksdb::NewLRUCache(cache_options);
  rocksdb::BlockBasedTableOptions table_options;
  table_options.block_cache = block_cache_;
  // Index and filter blocks count against the cache, so memory stays bounded
  // however much data there is. They are partitioned (4 KiB pieces under a
  // small pinned top level): a monolithic filter of a large SST file (MBs)
  // does not fit one cache shard and was re-read from disk on every point
  // read, which made writes crawl once the table held a few million rows.
  table_options.index_type = rocksdb::BlockBasedTableOptions::IndexType::kTwoLevelIndexSearch;
  table_options.partition_filters = true;
  table_options.metadata_block_size = 4096;
  table_options.cache_index_and_filter_blocks = true;
  table_options.cache_index_and_filter_blocks_with_high_priority = true;
  table_options.pin_top_level_index_and_filter = true;
  table_options.pin_l0_filter_and_index_blocks_in_cache = true;
  table_options.optimize_filters_for_memory = true;
  table_options.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table_options.block_size = 16u << 10;  // scans dominate; point reads use the bloom filter
  table_options.format_version = 5;
  // Index entries share long prefixes (table id, PartitionKey, most of the
  // RowKey), so prefix-compressing them in runs of 16 makes the index several
  // times smaller than RocksDB's default of a full key per entry; a point
  // read then decodes up to 15 more entries of one 4 KiB partition.
  table_options.index_block_restart_interval = 16;

  rocksdb::ColumnFamilyOptions base;
  base.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table_options));
  base.compression = PickCompression();
  base.write_buffer_size = kSmallCfWriteBuffer;
  base.max_write_buffer_number = 2;

  rocksdb::ColumnFamilyOptions entities_options = base;
  entities_options.write_buffer_size = std::max<size_t>(options_.write_buffer_bytes / 2, 1u << 20);
  entities_options.level_compaction_dynamic_level_bytes = true;
  // L0 (memtable flushes) uncompressed, every other level as `base`. An L0
  // file lives only until the next L0 compaction, but it is what the first
  // scan after a load or a restart (a clean stop flushes the memtable) reads,
  // so that scan does not decompress; flushes also skip compressing. The
  // price is disk: L0 holds at most level0_file_num_compaction_trigger
  // flushed memtables, and a table small enough to live in L0 alone stays
  // uncompressed.
  // With dynamic level bytes, entry 0 is L0 and the next ones apply from the
  // base level down.
  entities_options.compression_per_level.assign(7, base.compression);
  entities_options.compression_per_level[0] = rocksdb::kNoCompression;
  // Up to three full memtables may wait for the one flush thread: with two, a
  // sustained bulk load stopped writes ("2 immutable memtables (waiting for
  // flush)") whenever the shared cores delayed a flush. db_write_buffer_size still decides when
  // memtables are switched; this only bounds the backlog (4 x 16 MiB).
  entities_options.max_write_buffer_number = 4;
  // Compact L0 after 8 files rather than 4: every L0 compaction rewrites the
  // overlapping bottom-level data on the same core that serves requests;
  // point reads test one bloom filter per L0 file, and 8 of them cost little.
  // The stall triggers keep their default distance from it.
  entities_options.level0_file_num_compaction_trigger = 8;
  entities_options.level0_slowdown_writes_trigger = 40;
  entities_options.level0_stop_writes_trigger = 56;
  // A bloom filter over whole keys in the memtable too: every insert first
  // checks that its key does not exist, and for a new key the filter answers
  // without walking the memtable's skip list.
  entities_options.memtable_prefix_bloom_size_ratio = 0.02;
  entities_options.memtable_whole_key_filtering = true;
  // No Bloom filters in the last level, which holds most of the keys once a
  // table is large: at 10 bits per key its filters outgrow the block cache,
  // and a random point read would read a filter partition before its data
  // block. A read of an existing key
  // needs no filter at its last level (the key is there); the price is paid
  // by a read or an insert of a missing key inside the last level's key range,
  // which reads a data block instead of a filter partition (keys beyond it,
  // as in an ascending bulk load, are excluded by the files' key ranges).
  entities_options.optimize_filters_for_hits = true;

  // Open with the column families that exist, then create the missing ones in
  // ONE CreateColumnFamilies call. DB::Open's create_missing_column_families
  // creates them one at a time, and each creation rewrites and re-parses the
  // OPTIONS file (and syncs it), most of a fresh start's CPU. Column families
  // written by a newer version are opened too.
  std::vector<std::string> existing;
  if (!rocksdb::DB::ListColumnFamilies(db_options, path, &existing).ok()) existing = {"default"};
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  std::vector<size_t> slot;  // descriptors[i] goes to cfs_[slot[i]]
  std::vector<rocksdb::ColumnFamilyDescriptor> missing;
  std::vector<size_t> missing_slot;
  for (size_t i = 0; i < kColumnFamilyCount; ++i) {
    rocksdb::ColumnFamilyDescriptor d(std::string(kColumnFamilies[i]), i == kEntitiesCf ? entities_options : base);
    const bool exists = i == 0 || std::find(existing.begin(), existing.end(), d.name) != existing.end();
    (exists ? descriptors : missing).push_back(std::move(d));
    (exists ? slot : missing_slot).push_back(i);
  }
  size_t next_slot = kColumnFamilyCount;
  for (const std::string& name : existing) {
    if (std::find(kColumnFamilies.begin(), kColumnFamilies.end(), name) == kColumnFamilies.end()) {
      descriptors.emplace_back(name, base);
      slot.push_back(next_slot++);
    }
  }

  std::vector<rocksdb::ColumnFamilyHandle*> opened;
  rocksdb::Status rs = rocksdb::DB::Open(db_options, path, descriptors, &opened, &db_);
  if (!rs.ok()) {
    db_ = nullptr;
    // RocksDB reports a held LOCK file as a plain IOError ("While lock file:
    // <dir>/LOCK: Resource temporarily unavailable" or "lock hold by current
    // process"); its text is the only sign, so it is read here, once, and
    // typed for the callers (server/app words it for operators). A LOCK file
    // that cannot be created ("While lock file: ...: Permission denied") is
    // an unwritable directory, not another process, and stays an I/O error.
    const std::string text = rs.ToString();
    const bool held = text.find("Resource temporarily unavailable") != std::string::npos ||
                      text.find("lock hold by current process") != std::string::npos;
    if (rs.IsIOError() && held) {
      return Status::DataDirLocked("data directory " + path + " is in use by another tablestone process (" + text +
                                   ")");
    }
    return FromRocks(rs, "opening data directory " + path);
  }
  cfs_.assign(next_slot, nullptr);
  for (size_t i = 0; i < opened.size(); ++i) cfs_[slot[i]] = opened[i];
  if (!missing.empty()) {
    std::vector<rocksdb::ColumnFamilyHandle*> created;
    rs = db_->CreateColumnFamilies(missing, &created);
    for (size_t i = 0; i < created.size(); ++i) cfs_[missing_slot[i]] = created[i];
    if (!rs.ok()) {
      std::erase(cfs_, nullptr);  // OpenDb destroys the handles that exist
      return FromRocks(rs, "creating column families in " + path);
    }
  }
  return LoadCatalog();
}

Status RocksEngine::LoadCatalog() {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), cf(kCatalogCf)));
  uint64_t max_id = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    std::string_view key(it->key().data(), it->key().size());
    size_t sep = key.find('\0');
    TableInfo info;
    if (sep == std::string_view::npos ||
        !DecodeCatalogValue(std::string_view(it->value().data(), it->value().size()), &info.id, &info.name)) {
      return Status::Corruption("catalog entry is malformed");
    }
    info.account.assign(key.substr(0, sep));
    max_id = std::max(max_id, info.id);
    live_tables_.emplace(info.id, NewTableState(info.account)).first->second->counts->tables.fetch_add(1);
    catalog_.emplace(std::string(key), std::move(info));
  }
  TABLESTONE_RETURN_IF_ERROR(FromRocks(it->status(), "reading catalog"));

  std::string counter;
  rocksdb::Status rs = db_->Get(rocksdb::ReadOptions(), cf(kMetaCf), NextTableIdKey(), &counter);
  if (rs.ok()) {
    if (!DecodeFixed64Be(counter, &next_table_id_)) return Status::Corruption("table id counter is malformed");
  } else if (!rs.IsNotFound()) {
    return FromRocks(rs, "reading table id counter");
  }
  // Defensive: ids are never reused even if the counter were behind.
  next_table_id_ = std::max({next_table_id_, max_id + 1, uint64_t{1}});
  return Status::Ok();
}

Status RocksEngine::Close() {
  std::lock_guard lock(close_mu_);
  stop_counting_.store(true);
  if (entity_counter_.joinable()) entity_counter_.join();
  if (builder_ != nullptr) builder_->Stop();
  // The group commit writes the log for the waiters still queued. Calls
  // still running finish against the open database (the gate drains them).
  if (group_commit_ != nullptr) group_commit_->Stop();
  gate_.CloseAndDrain();
  // No scan runs now (the gate is drained); the suspended ones release their
  // snapshots and iterators here, and answer a later Resume with kShuttingDown.
  scans_->CloseAll();
  if (db_ == nullptr) return Status::Ok();
  SaveCachedPartitionKeys();
  SaveEntityCounts();  // last: it records the sequence number
  // Whatever is still in the log's buffer goes to the file first (the flush
  // below makes it redundant, but a failed flush must not lose it).
  const bool log_failed = !log_failure_.ok() || log_writer_error_->load() != kLogOk;
  Status result = log_failed ? Status::Ok() : FromRocks(db_->FlushWAL(options_.sync_writes), "writing the log on close");
  if (!options_.in_memory && (!result.ok() || log_failed)) {
    // The log cannot be trusted (a write to it failed): the flush below is
    // what saves the writes in the memtables, once RocksDB's latched error is
    // cleared. A disk still full fails both; those writes were never
    // acknowledged (SyncWal).
    if (db_->Resume().ok()) result = Status::Ok();
  }
  if (!options_.in_memory) {
    // Flushing makes the next start skip WAL replay.
    rocksdb::FlushOptions flush;
    flush.wait = true;
    std::vector<rocksdb::ColumnFamilyHandle*> handles(cfs_.begin(), cfs_.end());
    Status flushed = FromRocks(db_->Flush(flush, handles), "flushing on close");
    if (result.ok()) result = std::move(flushed);
  }
  for (rocksdb::ColumnFamilyHandle* h : cfs_) db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  cfs_.clear();
  Status close = FromRocks(db_->Close(), "closing database");
  delete db_;
  db_ = nullptr;
  return result.ok() ? close : result;
}

// Why the sequence number proves the counts current: every write to the
// database (entities, catalog, metadata) takes a new sequence number, and this
// blob is the last write before the close, so a later open that finds the
// latest sequence number one past the recorded one knows nothing changed
// since. Any other write (a crash after more writes, an older binary that
// does not save counts) leaves the numbers apart and the open counts again.
void RocksEngine::SaveEntityCounts() {
  if (options_.in_memory || !entity_counts_complete_.load()) return;
  EntityCounts counts;
  {
    std::shared_lock lock(catalog_mu_);
    counts.tables.reserve(live_tables_.size());
    for (const auto& [id, state] : live_tables_) {
      counts.tables.emplace_back(id, static_cast<uint64_t>(std::max<int64_t>(state->entities.load(), 0)));
    }
  }
  counts.sequence = db_->GetLatestSequenceNumber();
  // Best effort: without the blob the next open counts as before.
  db_->Put(WriteOpts(), cf(kMetaCf), EntityCountsKey(), EncodeEntityCounts(counts)).PermitUncheckedError();
}

// The partitions the scan cache held at a clean close are built again after
// the next open, by the builder thread (ScanCacheBuilder): a test rig that
// restarts on a prepared directory finds its partitions cached as before the
// restart once the builder has had the CPU, usually before its first query
// arrives. A stale
// list (writes after it, then a crash) only builds a partition from the data
// as it is now; a deleted table's keys are skipped.
void RocksEngine::SaveCachedPartitionKeys() {
  if (options_.in_memory || !scan_cache_) return;
  db_->Put(WriteOpts(), cf(kMetaCf), CachedPartitionsKey(), EncodeKeyList(scan_cache_->EntryKeys(kSavedCacheKeys)))
      .PermitUncheckedError();  // best effort: without it the next open starts with an empty cache
}

std::vector<ScanCacheBuilder::Restore> RocksEngine::LoadCachedPartitionKeys() {
  std::vector<ScanCacheBuilder::Restore> restore;
  if (!scan_cache_) return restore;
  std::string value;
  std::vector<std::string> keys;
  if (!db_->Get(rocksdb::ReadOptions(), cf(kMetaCf), CachedPartitionsKey(), &value).ok() ||
      !DecodeKeyList(value, &keys)) {
    return restore;
  }
  for (const std::string& key : keys) {
    uint64_t table_id = 0;
    std::string_view partition_key;
    if (!PartitionCache::ParseCacheKey(key, &table_id, &partition_key) || !live_tables_.contains(table_id)) continue;
    restore.push_back({table_id, std::string(partition_key), StripeIndex(table_id, partition_key)});
  }
  return restore;
}

bool RocksEngine::LoadSavedEntityCounts() {
  std::string value;
  EntityCounts counts;
  if (!db_->Get(rocksdb::ReadOptions(), cf(kMetaCf), EntityCountsKey(), &value).ok() ||
      !DecodeEntityCounts(value, &counts) || db_->GetLatestSequenceNumber() != counts.sequence + 1) {
    return false;
  }
  std::unordered_map<uint64_t, uint64_t> by_id(counts.tables.begin(), counts.tables.end());
  if (by_id.size() != live_tables_.size()) return false;
  for (const auto& entry : live_tables_) {
    if (!by_id.contains(entry.first)) return false;
  }
  for (const auto& [id, state] : live_tables_) {
    const auto n = static_cast<int64_t>(by_id[id]);
    state->entities.store(n);
    state->counts->entities.fetch_add(n);
  }
  return true;
}

std::shared_ptr<RocksEngine::TableState> RocksEngine::FindLiveTable(uint64_t table_id) {
  std::shared_lock lock(catalog_mu_);
  auto it = live_tables_.find(table_id);
  return it == live_tables_.end() ? nullptr : it->second;
}

size_t RocksEngine::StripeIndex(uint64_t table_id, std::string_view partition_key) const {
  return LockStripe(table_id, partition_key, stripe_count_);
}

std::mutex& RocksEngine::StripeFor(uint64_t table_id, std::string_view partition_key) {
  return stripes_[StripeIndex(table_id, partition_key)];
}

int64_t RocksEngine::NextTimestamp(int64_t floor) {
  const int64_t now = std::max(model::NowTicks(), floor);
  int64_t last = last_timestamp_.load(std::memory_order_relaxed);
  while (true) {
    int64_t next = std::max(now, last + 1);
    if (last_timestamp_.compare_exchange_weak(last, next, std::memory_order_relaxed)) return next;
  }
}

rocksdb::WriteOptions RocksEngine::WriteOpts() const {
  // Never sync here in the engine's group commit: SyncWal() writes and fsyncs
  // the log for a whole group of requests.
  rocksdb::WriteOptions wo;
  if (options_.group_commit == EngineOptions::GroupCommit::kRocksDb) wo.sync = options_.sync_writes;
  return wo;
}

uint64_t RocksEngine::VisibleMark() {
  GatePass pass(gate_);
  // Closed: Close() flushed everything, so nothing visible is pending.
  if (!pass.ok()) return 0;
  return db_->GetLatestSequenceNumber();
}

void RocksEngine::AwaitDurable(std::function<void(Status)> done) {
  if (VisibleMark() <= DurableMark()) return done(Status::Ok());
  // Not open (or closed): nothing is pending, or Close wrote it already.
  if (group_commit_ == nullptr) return done(SyncWal());
  group_commit_->Await(std::move(done));
}

// Why a read that saw a write W finds it here: W's writer raised its mark's
// in_flight before committing, and lowers it only after recording a sequence
// number >= W's and after the caches and catalog show W. The read saw W
// through RocksDB's published sequence number, a cache mutex or the catalog
// mutex, each of which orders the raise before the read's loads below; so it
// finds in_flight > 0, or (after the lower) last_seq covering W. Either is
// compared with the durable mark like the global test. Loading the durable
// mark first only makes the answer more cautious.
bool RocksEngine::TableReadIsDurable(std::string_view account, std::string_view table) {
  const uint64_t durable = DurableMark();
  auto idle = [durable](const WriteMark& mark) {
    return mark.in_flight.load(std::memory_order_seq_cst) == 0 &&
           mark.last_seq.load(std::memory_order_seq_cst) <= durable;
  };
  return idle(TableMark(account, table)) && idle(OtherDataMark());
}

RocksEngine::WriteMark& RocksEngine::TableMark(std::string_view account, std::string_view table) {
  // FNV-1a over both names, ASCII case folded (table names are
  // case-insensitive; account names are lower case already).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view text) {
    for (unsigned char c : text) {
      h ^= (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
      h *= 1099511628211ull;
    }
  };
  mix(account);
  h ^= '/';
  h *= 1099511628211ull;
  mix(table);
  return write_marks_[h % kTableMarkSlots];
}

RocksEngine::MarkedWrite::MarkedWrite(RocksEngine& engine, WriteMark& mark) : engine_(engine), mark_(mark) {
  mark_.in_flight.fetch_add(1, std::memory_order_seq_cst);
}

RocksEngine::MarkedWrite::~MarkedWrite() {
  // Covers this write whether or not it committed (a failed commit records a
  // number that is already visible: harmless). Callers hold a gate pass, so
  // db_ is open.
  const uint64_t seq = engine_.db_->GetLatestSequenceNumber();
  uint64_t last = mark_.last_seq.load(std::memory_order_relaxed);
  while (last < seq && !mark_.last_seq.compare_exchange_weak(last, seq, std::memory_order_seq_cst)) {
  }
  mark_.in_flight.fetch_sub(1, std::memory_order_seq_cst);
}

// Why the mark read BEFORE FlushWAL covers the right writes: RocksDB publishes
// a write's sequence number (makes it visible) only after appending it to the
// log buffer, so every write <= `visible` is in the buffer when FlushWAL runs.
//
// Why a failed FlushWAL must not raise the mark: RocksDB drops the log buffer
// it could not write (WritableFileWriter clears it, so a retry cannot write a
// piece twice), while the writes stay in the memtables and visible. They are
// lost in a crash unless something else makes them durable; until then every
// response that may reflect them waits and fails (the dispatcher answers it
// with an error), which is what keeps them invisible to clients.
namespace {
// The Status of a log write the listener saw fail (rocks_listeners.h codes).
Status LogWriterFailure(int code) {
  return code == kLogNoSpace ? Status::NoSpace("writing the log: no space left on the device")
                             : Status::IoError("writing the log failed (see the storage log)");
}
}  // namespace

Status RocksEngine::SyncWal() { return *WriteWal(/*may_wait=*/true); }

std::optional<Status> RocksEngine::TrySyncWal() {
  if (options_.sync_writes || options_.group_commit != EngineOptions::GroupCommit::kEngine) return std::nullopt;
  if (group_commit_ == nullptr) return std::nullopt;  // not open: AwaitDurable answers
  return group_commit_->SyncHere([this] { return WriteWal(/*may_wait=*/false); });
}

std::optional<Status> RocksEngine::WriteWal(bool may_wait) {
  GatePass pass(gate_);
  if (!pass.ok()) return Status::Ok();
  // RocksDB's group commit: every acknowledged DB::Write is in the log already.
  if (options_.group_commit == EngineOptions::GroupCommit::kRocksDb) return Status::Ok();
  std::unique_lock lock(sync_mu_, std::defer_lock);
  if (may_wait) {
    lock.lock();
  } else if (!lock.try_lock()) {
    return std::nullopt;  // a tool's SyncWal or a snapshot's
  }
  const uint64_t visible = db_->GetLatestSequenceNumber();
  if (visible <= durable_mark_.load(std::memory_order_acquire)) return Status::Ok();  // another thread did it
  if (log_failure_.ok() && log_writer_error_->load() != kLogOk) {
    // A write's own log append failed (DB::Write), or a memtable switch:
    // what the buffer held is as lost as after a failed FlushWAL.
    log_failure_ = LogWriterFailure(log_writer_error_->load());
  }
  if (!log_failure_.ok()) {
    // The recovery flushes every memtable and waits for it: the log writer's work.
    if (!may_wait) return std::nullopt;
    return RecoverFromLogFailure(visible);
  }
  Status s;
  {
    std::optional<WalAppendLock::Flush> alone;
    if (may_wait) {
      alone.emplace(wal_lock_);
    } else if (!alone.emplace(wal_lock_, std::try_to_lock).owns()) {
      return std::nullopt;
    }
    // Checked again now that no write is appending: one may have failed since.
    if (log_writer_error_->load() != kLogOk) {
      log_failure_ = LogWriterFailure(log_writer_error_->load());
      return log_failure_;
    }
    s = FromRocks(db_->FlushWAL(false), "writing the log");
  }
  // The fsync runs beside new appends (RocksDB's SyncWAL is made for that).
  if (s.ok() && options_.sync_writes) s = FromRocks(db_->SyncWAL(), "syncing the log");
  wal_syncs_.fetch_add(1, std::memory_order_relaxed);
  if (!s.ok()) {
    log_failure_ = s;
    return s;
  }
  uint64_t mark = durable_mark_.load(std::memory_order_relaxed);
  while (mark < visible && !durable_mark_.compare_exchange_weak(mark, visible, std::memory_order_release)) {
  }
  return s;
}

// DB::Resume() after a failed log write flushes every memtable (RocksDB cannot
// trust the log any more) and clears the latched error (RocksDB's own
// recovery is off: ManualErrorRecovery). The explicit flush below then finds
// the writes in table files or puts them there: every write <= `visible` was
// in a memtable before it, so once it succeeds they are durable without the
// log.
Status RocksEngine::RecoverFromLogFailure(uint64_t visible) {
  if (options_.in_memory || !ResumeAllowedNow(last_log_recovery_ns_)) return log_failure_;
  WalAppendLock::Flush alone(wal_lock_);
  // Cleared first, so that an error RocksDB reports during the attempt shows.
  const int noted = log_writer_error_->exchange(kLogOk);
  Status s = FromRocks(db_->Resume(), "resuming after a failed log write");
  if (s.ok()) {
    rocksdb::FlushOptions flush;
    flush.wait = true;
    flush.allow_write_stall = true;
    std::vector<rocksdb::ColumnFamilyHandle*> handles(cfs_.begin(), cfs_.end());
    s = FromRocks(db_->Flush(flush, handles), "flushing after a failed log write");
  }
  if (!s.ok() || log_writer_error_->load() != kLogOk) {
    int none = kLogOk;
    log_writer_error_->compare_exchange_strong(none, noted);
    return log_failure_;
  }
  StorageLog()->warn("the writes held since the log write failed are durable now (flushed to table files)");
  log_failure_ = Status::Ok();
  uint64_t mark = durable_mark_.load(std::memory_order_relaxed);
  while (mark < visible && !durable_mark_.compare_exchange_weak(mark, visible, std::memory_order_release)) {
  }
  return Status::Ok();
}

bool RocksEngine::ResumeAllowedNow(std::atomic<int64_t>& last_attempt_ns) {
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  int64_t last = last_attempt_ns.load(std::memory_order_relaxed);
  return now - last >= 500'000'000 && last_attempt_ns.compare_exchange_strong(last, now);
}

// A failed write (ENOSPC, EROFS, EIO) makes RocksDB latch a background error and refuse every
// later write, even once the cause is gone. DB::Resume() clears it when the disk accepts writes
// again (it flushes the memtables first); we try that at most every 500 ms and retry the write
// once: the failed attempt applied nothing, so the retry cannot apply it twice. This lets the
// server recover from a full or read-only volume without a restart (tests/reliability/disk_test.py).
rocksdb::Status RocksEngine::CommitBatch(rocksdb::WriteBatch* batch) {
  WalAppendLock::Append append(wal_lock_);
  rocksdb::Status rs = db_->Write(WriteOpts(), batch);
  if (rs.ok() || options_.in_memory || !(rs.IsIOError() || rs.IsNoSpace())) return rs;
  if (!ResumeAllowedNow(last_resume_ns_) || !db_->Resume().ok()) return rs;
  return db_->Write(WriteOpts(), batch);
}

Engine::Stats RocksEngine::GetStats() {
  Stats stats;
  GatePass pass(gate_);
  if (!pass.ok()) return stats;
  uint64_t v = 0;
  if (db_->GetIntProperty(cf(kEntitiesCf), "rocksdb.estimate-live-data-size", &v)) stats.live_data_bytes = v;
  if (db_->GetIntProperty(cf(kEntitiesCf), "rocksdb.cur-size-all-mem-tables", &v)) stats.live_data_bytes += v;
  if (db_->GetIntProperty(cf(kEntitiesCf), "rocksdb.estimate-num-keys", &v)) stats.estimated_entities = v;
  if (entity_cache_) {
    stats.entity_cache_entries = entity_cache_->entry_count();
    const EntityCache::Counts counts = entity_cache_->counts();
    stats.entity_cache_hits = counts.hits;
    stats.entity_cache_misses = counts.misses;
  }
  if (block_cache_) stats.block_cache_bytes = block_cache_->GetUsage();
  stats.wal_syncs = wal_syncs_.load(std::memory_order_relaxed);
  if (db_->GetAggregatedIntProperty("rocksdb.cur-size-all-mem-tables", &v)) stats.memtable_bytes = v;
  if (db_->GetAggregatedIntProperty("rocksdb.total-sst-files-size", &v)) stats.sst_bytes = v;
  if (db_->GetAggregatedIntProperty("rocksdb.estimate-pending-compaction-bytes", &v)) {
    stats.pending_compaction_bytes = v;
  }
  const int stalled = stalled_column_families_->load(std::memory_order_relaxed);
  stats.stalled_column_families = stalled > 0 ? static_cast<uint64_t>(stalled) : 0;
  stats.write_stalls = write_stalls_->load(std::memory_order_relaxed);
  stats.scan_cache_hits = scan_cache_hits_.load(std::memory_order_relaxed);
  stats.scan_cache_misses = scan_cache_misses_.load(std::memory_order_relaxed);
  if (scan_cache_) {
    stats.scan_cache_entries = scan_cache_->entry_count();
    stats.scan_cache_too_large = scan_cache_->too_large_count();
  }
  stats.entity_counts_complete = entity_counts_complete_.load();
  {
    std::shared_lock lock(catalog_mu_);
    for (const auto& [account, counts] : account_counts_) {
      const int64_t tables = counts->tables.load(std::memory_order_relaxed);
      const int64_t entities = counts->entities.load(std::memory_order_relaxed);
      stats.accounts.push_back({account, static_cast<uint64_t>(std::max<int64_t>(tables, 0)),
                                static_cast<uint64_t>(std::max<int64_t>(entities, 0))});
    }
  }
  return stats;
}

}  // namespace tablestone::storage
