// The one mapping from rocksdb::Status to tablestone Status.
#pragma once

#include <memory>
#include <string_view>

#include <rocksdb/status.h>

#include "storage/model/status.h"

namespace spdlog {
class logger;
}  // namespace spdlog

namespace tablestone::storage {

// The "storage" logger (registered by the server at startup), or spdlog's
// default logger when none was registered before the first call (tests).
const std::shared_ptr<spdlog::logger>& StorageLog();

// Maps a RocksDB status; `context` (e.g. "write batch") prefixes the message.
//   ok -> OK; NotFound -> kNotFound; Corruption -> kCorruption;
//   IOError(NoSpace) -> kNoSpace; IOError on a read-only file system -> kReadOnly;
//   other IOError -> kIoError; Busy/TryAgain -> kBusy; TimedOut -> kTimedOut;
//   ShutdownInProgress -> kShuttingDown; InvalidArgument -> kInvalidArgument;
//   anything else -> kInternal.
// I/O errors (kIoError, kNoSpace, kReadOnly) and corruption are logged once
// here, with RocksDB's message, on the "storage" logger.
Status FromRocks(const rocksdb::Status& status, std::string_view context);

}  // namespace tablestone::storage
