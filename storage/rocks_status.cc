#include "storage/rocks_status.h"

#include <string>

namespace tablestone::storage {

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string msg(context);
  msg += ": ";
  msg += s.ToString();
  if (s.IsNoSpace()) return Status::NoSpace(std::move(msg));
  if (s.IsIOError()) {
    // RocksDB has no read-only subcode; the OS error text (EROFS) is in the message.
    const std::string text = s.ToString();
    if (text.find("Read-only file system") != std::string_view::npos) return Status::ReadOnly(std::move(msg));
    return Status::IoError(std::move(msg));
  }
  if (s.IsNotFound()) return Status::NotFound(std::move(msg));
  if (s.IsCorruption()) return Status::Corruption(std::move(msg));
  if (s.IsBusy() || s.IsTryAgain()) return Status::Busy(std::move(msg));
  if (s.IsTimedOut()) return Status::TimedOut(std::move(msg));
  if (s.IsShutdownInProgress()) return Status::ShuttingDown(std::move(msg));
  if (s.IsInvalidArgument()) return Status::InvalidArgument(std::move(msg));
  return Status::Internal(std::move(msg));
}

}  // namespace tablestone::storage
