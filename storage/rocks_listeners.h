// RocksDB hooks of the engine: its diagnostic log (TolerantInfoLog) and the
// listener that takes error recovery over from RocksDB (ManualErrorRecovery).
// Internal to storage/ (RocksEngine's OpenLocked installs them).
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include <rocksdb/env.h>
#include <rocksdb/listener.h>

namespace tablestone::storage {

// What RocksDB last reported of its log writer (ManualErrorRecovery).
inline constexpr int kLogOk = 0;
inline constexpr int kLogNoSpace = 1;
inline constexpr int kLogIoError = 2;

// RocksDB's own diagnostic LOG at `path`, written with stdio, write errors
// ignored (a full disk loses log lines, nothing else), rotated to LOG.old past
// `max_bytes`. See the definition for why not RocksDB's default logger.
std::shared_ptr<rocksdb::Logger> NewTolerantInfoLog(std::string path, size_t max_bytes, rocksdb::InfoLogLevel level);

// Turns RocksDB's automatic error recovery off (the engine resumes from the
// requests that meet the error) and records in *log_writer_error (kLog*) when
// a log write or a memtable switch failed. See the definition.
std::shared_ptr<rocksdb::EventListener> NewManualErrorRecovery(std::shared_ptr<std::atomic<int>> log_writer_error);

}  // namespace tablestone::storage
