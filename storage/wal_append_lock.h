// WalAppendLock: keeps the engine's own log flush (DB::FlushWAL) apart from
// DB::Write's appends to the same log buffer.
//
// Why: with manual_wal_flush, a failed append or buffer write marks RocksDB's
// log writer as failed, and RocksDB latches the error (which refuses later
// writes and flushes) only after the failing call has let go of the log's
// mutex. A write or FlushWAL that reaches the failed writer in between trips
// RocksDB's assertion in WritableFileWriter (an abort with assertions on, as
// in Debian's librocksdb). Holding this lock shared around every DB::Write and
// exclusively around FlushWAL (and DB::Resume after a failed log write) means
// each side sees the error the other latched: RocksDB refuses the write, and
// the engine skips the flush (rocks_engine.cc, SyncWal).
// (tests/reliability: crash_harness.py --scenario diskfull)
//
// Writer-preferring, so that a steady stream of writes cannot keep the group
// commit from flushing: once it waits, new writes wait behind it. The
// exclusive section is a buffer write, not the fsync (SyncWAL runs outside).
#pragma once

#include <pthread.h>

#include <mutex>  // std::try_to_lock_t

namespace tablestone::storage {

class WalAppendLock {
 public:
  WalAppendLock() {
    pthread_rwlockattr_t attr;
    pthread_rwlockattr_init(&attr);
    pthread_rwlockattr_setkind_np(&attr, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&lock_, &attr);
    pthread_rwlockattr_destroy(&attr);
  }
  ~WalAppendLock() { pthread_rwlock_destroy(&lock_); }
  WalAppendLock(const WalAppendLock&) = delete;
  WalAppendLock& operator=(const WalAppendLock&) = delete;

  // A DB::Write (or Put) to the log: many at once.
  class Append {
   public:
    explicit Append(WalAppendLock& l) : l_(l) { pthread_rwlock_rdlock(&l_.lock_); }
    ~Append() { pthread_rwlock_unlock(&l_.lock_); }
    Append(const Append&) = delete;
    Append& operator=(const Append&) = delete;

   private:
    WalAppendLock& l_;
  };

  // FlushWAL or a recovery: alone.
  class Flush {
   public:
    explicit Flush(WalAppendLock& l) : l_(l), owns_(pthread_rwlock_wrlock(&l_.lock_) == 0) {}
    // Without waiting: owns() is false when a write is appending (one that
    // sleeps in a RocksDB write stall holds its Append that long).
    Flush(WalAppendLock& l, std::try_to_lock_t) : l_(l), owns_(pthread_rwlock_trywrlock(&l_.lock_) == 0) {}
    ~Flush() {
      if (owns_) pthread_rwlock_unlock(&l_.lock_);
    }
    Flush(const Flush&) = delete;
    Flush& operator=(const Flush&) = delete;
    bool owns() const { return owns_; }

   private:
    WalAppendLock& l_;
    const bool owns_;
  };

 private:
  pthread_rwlock_t lock_;
};

}  // namespace tablestone::storage
