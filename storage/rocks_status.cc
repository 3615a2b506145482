#include "storage/rocks_status.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

namespace tablestone::storage {
const std::shared_ptr<spdlog::logger>& StorageLog() {
  static const std::shared_ptr<spdlog::logger> log =
      spdlog::get("storage") ? spdlog::get("storage") : spdlog::default_logger();
  return log;
}

namespace {

// Disk trouble is logged where RocksDB's own words are still at hand; the api
// layer logs the 500 it becomes with this Status's text as its cause.
Status Logged(Status status) {
  StorageLog()->error("{}", status.ToString());
  return status;
}

}  // namespace

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string msg(context);
  msg += ": ";
  msg += s.ToString();
  if (s.IsNoSpace()) return Logged(Status::NoSpace(std::move(msg)));
  if (s.IsIOError()) {
    // RocksDB has no read-only subcode; the OS error text (EROFS) is in the message.
    const std::string text = s.ToString();
    if (text.find("Read-only file system") != std::string_view::npos) return Logged(Status::ReadOnly(std::move(msg)));
    return Logged(Status::IoError(std::move(msg)));
  }
  if (s.IsNotFound()) return Status::NotFound(std::move(msg));
  if (s.IsCorruption()) return Logged(Status::Corruption(std::move(msg)));
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(std::move(msg));
  if (s.IsTimedOut()) return Status::TimedOut(std::move(msg));
  if (s.IsShutdownInProgress()) return Status::ShuttingDown(std::move(msg));
  if (s.IsInvalidArgument()) return Status::InvalidArgument(std::move(msg));
  return Status::Internal(std::move(msg));
}

}  // namespace tablestone::storage
