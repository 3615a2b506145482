// Where the admin routes may touch the server's disk (docs/admin-api.md,
// "Files"): a request never names a path. A snapshot or a trace file is a
// plain name inside a directory fixed at start-up (--snapshotDir,
// --traceDir), opened without following symbolic links; a new file is
// created exclusively with mode 0600, a snapshot takes the data directory's
// permissions. Thread-safe: no state.
#pragma once

#include <string>
#include <string_view>

#include "storage/model/status.h"

namespace tablestone::api {

// 1 to 128 of [A-Za-z0-9._-], not starting with '.' (so never "." or "..").
bool IsPlainFileName(std::string_view name);

// The plain name `requested` designates inside `dir` (absolute, normalised):
// `requested` itself when plain, or the last segment of an absolute path
// whose parent is exactly `dir`. kInvalidArgument with the reason otherwise
// (a relative path, "..", another directory, an empty `dir`).
StatusOr<std::string> NameInDirectory(std::string_view requested, const std::string& dir);

// Opens `dir`/`name` for appending (dir created with mode 0700 when missing):
// a new file is created with O_EXCL and mode 0600; an existing one must be a
// regular file of this user with one link. Never follows a symbolic link.
// The file descriptor, or the refusal.
StatusOr<int> OpenTraceFile(const std::string& dir, const std::string& name);

// Before a snapshot into `dir`/`name`: `dir` exists (created with the mode
// of `data_dir` when missing) and neither `name` nor RocksDB's staging
// `name`.tmp exists in it (lstat: a dangling link counts). The snapshot's path.
StatusOr<std::string> PrepareSnapshot(const std::string& dir, const std::string& name, const std::string& data_dir);

// After the checkpoint: the snapshot directory gets `data_dir`'s mode, and
// the files RocksDB copied (one link) its mode without execute bits. Hard
// links share the live files' inodes and are left alone.
Status MatchDataPermissions(const std::string& snapshot, const std::string& data_dir);

}  // namespace tablestone::api
