// NoWaitFileSystem: RocksDB's file system, except that the SST files' reads
// on a thread inside a NoWaitScope never wait for the disk.
//
// Why: point reads run on the I/O threads (server/api/dispatcher.h), on the
// assumption that what they read is in memory: RocksDB's block cache, or else
// the kernel's page cache. On a large table neither holds everything (the
// 50M-entity table of bench/scale is 3.6 GB, and a VM's memory manager may
// take page cache back), and a read that goes to the disk blocked the I/O
// thread and every connection on it for the device's latency. Inside a
// NoWaitScope, a table file read is a preadv2(RWF_NOWAIT): served from the
// page cache, or failed at once (the kernel then starts reading the pages in
// the background), and the scope records that it would have waited, so that
// the caller can run the read again on a thread that may wait
// (Engine::GetEntity with ReadWait::kNoWait, docs/architecture.md).
//
// Random-access files (SST reads) are opened here, one descriptor each, and
// read with preadv2; direct and mmap reads, and every other kind of file, are
// the wrapped file system's. A file system without RWF_NOWAIT support
// (EOPNOTSUPP) gets a plain read: it waits, as before.
//
// Thread safety: as rocksdb::FileSystem. A NoWaitScope is per thread.
#pragma once

#include <memory>
#include <string>

#include <rocksdb/file_system.h>

namespace tablestone::storage {

class NoWaitFileSystem final : public rocksdb::FileSystemWrapper {
 public:
  explicit NoWaitFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target);

  static const char* kClassName() { return "TablestoneNoWaitFileSystem"; }
  const char* Name() const override { return kClassName(); }

  rocksdb::IOStatus NewRandomAccessFile(const std::string& fname, const rocksdb::FileOptions& options,
                                        std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
                                        rocksdb::IODebugContext* dbg) override;
};

// While one lives on a thread, that thread's reads of files opened by a
// NoWaitFileSystem fail with IOStatus::Busy instead of waiting for the disk,
// and would_have_waited() turns true. Scopes do not nest.
class NoWaitScope {
 public:
  NoWaitScope();
  ~NoWaitScope();
  NoWaitScope(const NoWaitScope&) = delete;
  NoWaitScope& operator=(const NoWaitScope&) = delete;

  // A read in this scope found its bytes outside the page cache.
  bool would_have_waited() const;
};

}  // namespace tablestone::storage
