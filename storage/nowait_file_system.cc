#include "storage/nowait_file_system.h"

#include <fcntl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace tablestone::storage {
namespace {

// Per thread, and justified: RocksDB calls Read() deep inside DB::Get with no
// way to pass a per-call flag down, so the scope (NoWaitScope) that asks for
// a no-wait read and the file read that honours it meet on the calling
// thread. Both are plain flags, set and reset by the scope on that thread.
thread_local bool t_no_wait = false;
thread_local bool t_would_have_waited = false;

rocksdb::IOStatus ErrnoStatus(const std::string& context, const std::string& name, int error) {
  const std::string text = context + ": " + name + ": " + std::strerror(error);
  switch (error) {
    case ENOENT: return rocksdb::IOStatus::PathNotFound(text);
    case ENOSPC: return rocksdb::IOStatus::NoSpace(text);
    default: return rocksdb::IOStatus::IOError(text);
  }
}

// An SST file read with pread, or preadv2(RWF_NOWAIT) inside a NoWaitScope.
// What it does beyond Read mirrors RocksDB's POSIX file: Prefetch is
// readahead(2), Hint and InvalidateCache are posix_fadvise.
class NoWaitFile final : public rocksdb::FSRandomAccessFile {
 public:
  NoWaitFile(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}
  ~NoWaitFile() override { close(fd_); }
  NoWaitFile(const NoWaitFile&) = delete;
  NoWaitFile& operator=(const NoWaitFile&) = delete;

  rocksdb::IOStatus Read(uint64_t offset, size_t n, const rocksdb::IOOptions& /*options*/, rocksdb::Slice* result,
                         char* scratch, rocksdb::IODebugContext* /*dbg*/) const override {
    int flags = t_no_wait ? RWF_NOWAIT : 0;
    size_t got = 0;
    while (got < n) {
      iovec piece{scratch + got, n - got};
      const ssize_t r = preadv2(fd_, &piece, 1, static_cast<off_t>(offset + got), flags);
      if (r > 0) {
        got += static_cast<size_t>(r);
        continue;
      }
      if (r == 0) break;  // end of file
      if (errno == EINTR) continue;
      if (flags != 0 && errno == EAGAIN) {
        // Not (all) in the page cache; the kernel has started reading it.
        t_would_have_waited = true;
        *result = rocksdb::Slice(scratch, 0);
        return rocksdb::IOStatus::Busy("would wait for the disk", name_);
      }
      if (flags != 0 && errno == EOPNOTSUPP) {  // this file system cannot say: read and wait
        flags = 0;
        continue;
      }
      *result = rocksdb::Slice(scratch, 0);
      return ErrnoStatus("While pread offset " + std::to_string(offset) + " len " + std::to_string(n), name_, errno);
    }
    *result = rocksdb::Slice(scratch, got);
    return rocksdb::IOStatus::OK();
  }

  rocksdb::IOStatus Prefetch(uint64_t offset, size_t n, const rocksdb::IOOptions& /*options*/,
                             rocksdb::IODebugContext* /*dbg*/) override {
    if (readahead(fd_, static_cast<off64_t>(offset), n) != 0) return ErrnoStatus("While readahead", name_, errno);
    return rocksdb::IOStatus::OK();
  }

  void Hint(AccessPattern pattern) override {
    int advice = POSIX_FADV_NORMAL;
    switch (pattern) {
      case kNormal: advice = POSIX_FADV_NORMAL; break;
      case kRandom: advice = POSIX_FADV_RANDOM; break;
      case kSequential: advice = POSIX_FADV_SEQUENTIAL; break;
      case kWillNeed: advice = POSIX_FADV_WILLNEED; break;
      case kWontNeed: advice = POSIX_FADV_DONTNEED; break;
    }
    (void)posix_fadvise(fd_, 0, 0, advice);
  }

  rocksdb::IOStatus InvalidateCache(size_t offset, size_t length) override {
    const int rc = posix_fadvise(fd_, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED);
    return rc == 0 ? rocksdb::IOStatus::OK() : ErrnoStatus("While fadvise NotNeeded", name_, rc);
  }

 private:
  const int fd_;
  const std::string name_;
};

}  // namespace

NoWaitFileSystem::NoWaitFileSystem(const std::shared_ptr<rocksdb::FileSystem>& target)
    : rocksdb::FileSystemWrapper(target) {}

rocksdb::IOStatus NoWaitFileSystem::NewRandomAccessFile(const std::string& fname, const rocksdb::FileOptions& options,
                                                        std::unique_ptr<rocksdb::FSRandomAccessFile>* result,
                                                        rocksdb::IODebugContext* dbg) {
  if (options.use_direct_reads || options.use_mmap_reads) {
    return target()->NewRandomAccessFile(fname, options, result, dbg);
  }
  int fd;
  do {
    fd = open(fname.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return ErrnoStatus("While open a file for random read", fname, errno);
  *result = std::make_unique<NoWaitFile>(fd, fname);
  return rocksdb::IOStatus::OK();
}

NoWaitScope::NoWaitScope() {
  t_no_wait = true;
  t_would_have_waited = false;
}

NoWaitScope::~NoWaitScope() {
  t_no_wait = false;
  t_would_have_waited = false;
}

bool NoWaitScope::would_have_waited() const { return t_would_have_waited; }

}  // namespace tablestone::storage
