// RocksEngine's snapshots (CreateCheckpoint) and the cleanup of one a kill
// interrupted (RemoveAbandonedSnapshot).
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <string>

#include <rocksdb/utilities/checkpoint.h>
#include <spdlog/spdlog.h>

#include "storage/rocks_engine.h"
#include "storage/rocks_status.h"

namespace tablestone::storage {
namespace {

// Marker of a snapshot in progress (RemoveAbandonedSnapshot): the path of its
// staging directory. RocksDB leaves files of names it does not know alone.
constexpr const char* kSnapshotMarker = "SNAPSHOT-IN-PROGRESS";

}  // namespace

void RocksEngine::RemoveAbandonedSnapshot() {
  if (options_.in_memory) return;
  const std::filesystem::path marker = std::filesystem::path(options_.path) / kSnapshotMarker;
  std::ifstream in(marker);
  if (!in) return;
  std::string staging;
  std::getline(in, staging);
  in.close();
  std::error_code ec;
  // Only RocksDB's staging name, and only a directory: the marker is ours,
  // but a data directory copied elsewhere may carry one naming another path.
  if (staging.size() > 4 && staging.ends_with(".tmp") && std::filesystem::is_directory(staging, ec)) {
    const auto removed = std::filesystem::remove_all(staging, ec);
    StorageLog()->warn("removed {} files of an interrupted snapshot in {}{}", static_cast<long long>(removed), staging,
                       ec ? " (" + ec.message() + ")" : std::string());
  }
  std::filesystem::remove(marker, ec);
}

Status RocksEngine::CreateCheckpoint(const std::string& dir) {
  if (options_.in_memory) return Status::InvalidArgument("an in-memory server has no data directory to snapshot");
  std::error_code ec;
  if (std::filesystem::exists(dir, ec)) return Status::InvalidArgument("'" + dir + "' exists already");
  GatePass pass(gate_);
  if (!pass.ok()) return Status::ShuttingDown("engine closed");
  std::lock_guard snapshot_lock(snapshot_mu_);
  RemoveAbandonedSnapshot();
  // Acknowledged writes may still be in the log's buffer (group commit).
  TABLESTONE_RETURN_IF_ERROR(SyncWal());
  rocksdb::Checkpoint* raw = nullptr;
  TABLESTONE_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_, &raw), "creating a checkpoint"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // RocksDB stages the copy in `dir` + ".tmp" and renames it at the end.
  const std::filesystem::path marker = std::filesystem::path(options_.path) / kSnapshotMarker;
  {
    std::ofstream out(marker, std::ios::trunc);
    std::string staging = std::filesystem::absolute(dir, ec).string();
    while (staging.size() > 1 && staging.back() == '/') staging.pop_back();  // as RocksDB trims it
    out << staging << ".tmp\n";
    out.flush();
    if (!out) return Status::IoError("cannot write " + marker.string());
  }
  // No memtable flush (log_size_for_flush = max): the live log is copied
  // instead, bounded by the write buffers, where a flush of them took longer.
  Status s =
      FromRocks(checkpoint->CreateCheckpoint(dir, std::numeric_limits<uint64_t>::max()), "writing a checkpoint");
  std::filesystem::remove(marker, ec);
  return s;
}

}  // namespace tablestone::storage
