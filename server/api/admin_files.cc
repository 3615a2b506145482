#include "server/api/admin_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace tablestone::api {
namespace {

namespace fs = std::filesystem;

std::string Errno(std::string_view what, const std::string& path) {
  return std::string(what) + " '" + path + "': " + std::strerror(errno);
}

// Creates `dir` (and missing parents) with `mode` when it is missing; then it
// must be a directory.
Status EnsureDirectory(const std::string& dir, mode_t mode) {
  if (dir.empty()) return Status::InvalidArgument("no directory is configured for this");
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return Status::IoError("cannot create '" + dir + "': " + ec.message());
    if (::chmod(dir.c_str(), mode) != 0) return Status::IoError(Errno("cannot set the mode of", dir));
  }
  if (!fs::is_directory(dir, ec)) return Status::InvalidArgument("'" + dir + "' is not a directory");
  return Status::Ok();
}

// The permission bits of `path` (0700 when it cannot be read).
mode_t ModeOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0700;
  return st.st_mode & 07777;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 || errno != ENOENT;
}

}  // namespace

bool IsPlainFileName(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.front() == '.') return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

StatusOr<std::string> NameInDirectory(std::string_view requested, const std::string& dir) {
  if (dir.empty()) return Status::InvalidArgument("no directory is configured for this (docs/admin-api.md)");
  if (IsPlainFileName(requested)) return std::string(requested);
  const fs::path path{std::string(requested)};
  if (path.is_absolute() && IsPlainFileName(path.filename().string()) &&
      path.lexically_normal() == path && path.parent_path() == fs::path(dir).lexically_normal()) {
    return path.filename().string();
  }
  return Status::InvalidArgument("expected a plain name ([A-Za-z0-9._-], not starting with '.'), created in " + dir);
}

StatusOr<int> OpenTraceFile(const std::string& dir, const std::string& name) {
  if (!IsPlainFileName(name)) return Status::InvalidArgument("not a plain file name: " + name);
  Status made = EnsureDirectory(dir, 0700);
  if (!made.ok()) return made;
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return Status::IoError(Errno("cannot open", dir));
  int fd = ::openat(dfd, name.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0 && errno == EEXIST) {
    fd = ::openat(dfd, name.c_str(), O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st {};
    if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1 || st.st_uid != ::geteuid())) {
      ::close(fd);
      ::close(dfd);
      return Status::InvalidArgument("'" + name + "' in " + dir + " is not a regular file of this server's own");
    }
  }
  const int saved = errno;
  ::close(dfd);
  errno = saved;
  if (fd < 0 && (errno == ELOOP || errno == EISDIR || errno == ENXIO)) {
    return Status::InvalidArgument("'" + name + "' in " + dir + " is a link, a directory or a device");
  }
  if (fd < 0) return Status::IoError(Errno("cannot open", (fs::path(dir) / name).string()));
  return fd;
}

StatusOr<std::string> PrepareSnapshot(const std::string& dir, const std::string& name, const std::string& data_dir) {
  if (!IsPlainFileName(name)) return Status::InvalidArgument("not a plain name: " + name);
  Status made = EnsureDirectory(dir, ModeOf(data_dir));
  if (!made.ok()) return made;
  const std::string path = (fs::path(dir) / name).string();
  if (Exists(path)) return Status::AlreadyExists("'" + path + "' exists already");
  if (Exists(path + ".tmp")) return Status::AlreadyExists("'" + path + ".tmp' exists (a snapshot's staging name)");
  return path;
}

Status MatchDataPermissions(const std::string& snapshot, const std::string& data_dir) {
  const mode_t mode = ModeOf(data_dir);
  if (::chmod(snapshot.c_str(), mode) != 0) return Status::IoError(Errno("cannot set the mode of", snapshot));
  DIR* d = ::opendir(snapshot.c_str());
  if (d == nullptr) return Status::IoError(Errno("cannot list", snapshot));
  const int dfd = ::dirfd(d);
  for (dirent* e = ::readdir(d); e != nullptr; e = ::readdir(d)) {
    struct stat st {};
    if (::fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_nlink == 1) (void)::fchmodat(dfd, e->d_name, mode & 0666, 0);
  }
  ::closedir(d);
  return Status::Ok();
}

}  // namespace tablestone::api
