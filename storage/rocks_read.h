// Small helpers of the engine's RocksDB reads, shared by the scans
// (rocks_engine_scan.cc) and the scan cache's builds (rocks_engine_builds.cc).
// Internal to storage/.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/slice.h>

#include <string>
#include <string_view>

namespace tablestone::storage {

// A RocksDB snapshot released when the holder goes.
class SnapshotHolder {
 public:
  explicit SnapshotHolder(rocksdb::DB* db) : db_(db), snapshot_(db->GetSnapshot()) {}
  ~SnapshotHolder() { Release(); }
  SnapshotHolder(const SnapshotHolder&) = delete;
  SnapshotHolder& operator=(const SnapshotHolder&) = delete;
  const rocksdb::Snapshot* get() const { return snapshot_; }
  // Releases the snapshot now (idempotent); get() is then null.
  void Release() {
    if (snapshot_ != nullptr) db_->ReleaseSnapshot(snapshot_);
    snapshot_ = nullptr;
  }

 private:
  rocksdb::DB* db_;
  const rocksdb::Snapshot* snapshot_;
};

inline std::string_view View(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// Copies an iterator's key or value out of RocksDB's memory (possibly a
// memtable another thread is inserting into). Kept out of line under its own
// name so ThreadSanitizer can be told about it: RocksDB orders those bytes
// with atomics inside the uninstrumented library (tests/reliability/tsan.supp).
[[gnu::noinline]] inline void CopyIteratorBytes(const rocksdb::Slice& bytes, std::string* out) {
  out->assign(bytes.data(), bytes.size());
}

}  // namespace tablestone::storage
