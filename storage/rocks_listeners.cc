#include "storage/rocks_listeners.h"

#include <chrono>
#include <ctime>

namespace tablestone::storage {
namespace {

// RocksDB's own diagnostic LOG, written with stdio and with write errors ignored. RocksDB's
// default logger appends through a WritableFileWriter that, after one failed append (a full
// disk), aborts the process on the next log line: an assertion that Debian's librocksdb 7.8
// keeps enabled (found by tests/reliability/disk_test.py). A diagnostic log must never take
// the server down. Rotates to LOG.old once it passes max_bytes.
class TolerantInfoLog final : public rocksdb::Logger {
 public:
  TolerantInfoLog(std::string path, size_t max_bytes, rocksdb::InfoLogLevel level)
      : rocksdb::Logger(level), path_(std::move(path)), max_bytes_(max_bytes) {
    file_ = std::fopen(path_.c_str(), "a");
  }
  ~TolerantInfoLog() override {
    if (file_ != nullptr) std::fclose(file_);
  }
  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    std::lock_guard lock(mu_);
    if (file_ == nullptr) return;
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    localtime_r(&secs, &tm);
    std::fprintf(file_, "%04d/%02d/%02d-%02d:%02d:%02d.%06lld ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                 tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(micros));
    std::vfprintf(file_, format, ap);
    std::fputc('\n', file_);
    std::fflush(file_);
    std::clearerr(file_);  // a full disk loses log lines, nothing else
    long size = std::ftell(file_);
    if (size > 0 && static_cast<size_t>(size) > max_bytes_) {
      std::fclose(file_);
      std::rename(path_.c_str(), (path_ + ".old").c_str());
      file_ = std::fopen(path_.c_str(), "a");
    }
  }

 private:
  std::mutex mu_;
  const std::string path_;
  const size_t max_bytes_;
  std::FILE* file_ = nullptr;
};

// RocksDB recovers from a full disk by itself (its SstFileManager polls the
// free space every 5 s) and meanwhile refuses DB::Resume() with Busy. The
// engine resumes instead, from the requests that meet the error (CommitBatch,
// RecoverFromLogFailure: at most every 500 ms each), so that writes and the
// reads held behind a failed log write come back within a request of space
// returning, and Close() can flush what it holds without waiting for a poll.
//
// It also notes the errors that leave the log writer failed (a log write or a
// memtable switch): the writer then refuses every later write, and in
// Debian's librocksdb 7.8 with an assertion that aborts the process
// (WritableFileWriter's "previous error"), so SyncWal must not call
// FlushWAL again until a recovery has replaced the writer.
class ManualErrorRecovery final : public rocksdb::EventListener {
 public:
  explicit ManualErrorRecovery(std::shared_ptr<std::atomic<int>> log_writer_error)
      : log_writer_error_(std::move(log_writer_error)) {}

  void OnBackgroundError(rocksdb::BackgroundErrorReason reason, rocksdb::Status* bg_error) override {
    if (bg_error == nullptr || bg_error->ok()) return;
    if (reason == rocksdb::BackgroundErrorReason::kWriteCallback ||
        reason == rocksdb::BackgroundErrorReason::kMemTable) {
      log_writer_error_->store(bg_error->IsNoSpace() ? kLogNoSpace : kLogIoError);
    }
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason /*reason*/, rocksdb::Status bg_error,
                            bool* auto_recovery) override {
    bg_error.PermitUncheckedError();
    *auto_recovery = false;
  }

 private:
  std::shared_ptr<std::atomic<int>> log_writer_error_;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewTolerantInfoLog(std::string path, size_t max_bytes, rocksdb::InfoLogLevel level) {
  return std::make_shared<TolerantInfoLog>(std::move(path), max_bytes, level);
}

std::shared_ptr<rocksdb::EventListener> NewManualErrorRecovery(std::shared_ptr<std::atomic<int>> log_writer_error) {
  return std::make_shared<ManualErrorRecovery>(std::move(log_writer_error));
}

}  // namespace tablestone::storage
