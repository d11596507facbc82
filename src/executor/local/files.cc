#include "src/executor/local/files.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <system_error>

#include "absl/strings/str_cat.h"

namespace regatta::executor::local {
namespace {

std::string DirOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

absl::Status WriteAll(int fd, absl::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, absl::StrCat("write '", path, "'"));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ErrnoText(int err) {
  if (const char* desc = strerrordesc_np(err)) return desc;
  return std::error_code(err, std::generic_category()).message();
}

absl::Status ErrnoStatus(int err, absl::string_view what) {
  std::string message = absl::StrCat(what, ": ", ErrnoText(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    case ENOSPC:
    case EDQUOT:
    case EMFILE:
    case ENFILE:
    case ENOMEM:
      return absl::ResourceExhaustedError(message);
    case EINVAL:
    case ENOTDIR:
    case EISDIR:
    case ENAMETOOLONG:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", path, "'"));
  std::string out;
  char buf[16384];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, absl::StrCat("read '", path, "'"));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents, bool sync) {
  std::string dir = DirOf(path);
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::string tmp =
      absl::StrCat(slash == std::string::npos ? "" : path.substr(0, slash + 1), ".", base, ".tmp");
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", tmp, "'"));
  absl::Status status = WriteAll(fd, contents, tmp);
  if (status.ok() && sync && ::fsync(fd) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("fsync '", tmp, "'"));
  }
  ::close(fd);
  if (status.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoStatus(errno, absl::StrCat("rename '", tmp, "' to '", path, "'"));
  }
  if (!status.ok()) {
    ::unlink(tmp.c_str());
    return status;
  }
  return sync ? SyncDir(dir) : absl::OkStatus();
}

absl::Status OverwriteFileInPlace(const std::string& path, absl::string_view contents) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", path, "'"));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    absl::Status status = ErrnoStatus(errno, absl::StrCat("fstat '", path, "'"));
    ::close(fd);
    return status;
  }
  std::string padded;
  if (static_cast<off_t>(contents.size()) < st.st_size) {
    padded.assign(contents.data(), contents.size());
    padded.resize(static_cast<size_t>(st.st_size), ' ');
    contents = padded;
  }
  // One write from the start (WriteAll loops only after a short write).
  absl::Status status = WriteAll(fd, contents, path);
  ::close(fd);
  return status;
}

absl::Status RemoveFileDurably(const std::string& path, bool sync) {
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return ErrnoStatus(errno, absl::StrCat("unlink '", path, "'"));
  }
  return sync ? SyncDir(DirOf(path)) : absl::OkStatus();
}

absl::Status MakeDirs(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory path");
  // Usually only the last component is new (a run's directory): one mkdir, not one per level.
  if (::mkdir(path.c_str(), 0755) == 0) return absl::OkStatus();
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, absl::StrCat("mkdir '", prefix, "'"));
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, absl::StrCat("stat '", path, "'"));
  if (!S_ISDIR(st.st_mode)) return ErrnoStatus(ENOTDIR, absl::StrCat("mkdir '", path, "'"));
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", dir, "'"));
  absl::Status status;
  if (::fsync(fd) != 0) status = ErrnoStatus(errno, absl::StrCat("fsync '", dir, "'"));
  ::close(fd);
  return status;
}

}  // namespace regatta::executor::local
