#include "src/executor/local/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/executor/local/files.h"

namespace regatta::executor::local {
namespace {

bool IsCgroup2Mount(const std::string& path) {
  struct statfs fs;
  return ::statfs(path.c_str(), &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

bool ListContains(absl::string_view list, absl::string_view word) {
  for (absl::string_view item : absl::StrSplit(list, absl::ByAnyChar(" \n"), absl::SkipEmpty())) {
    if (item == word) return true;
  }
  return false;
}

// Writes `value` to an existing control file (O_CREAT so fake trees in tests work too).
absl::Status WriteControl(const std::string& path, absl::string_view value) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", path, "'"));
  ssize_t n = ::write(fd, value.data(), value.size());
  int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(value.size())) {
    return ErrnoStatus(n < 0 ? err : EIO, absl::StrCat("write '", path, "'"));
  }
  return absl::OkStatus();
}

}  // namespace

CgroupSupport DetectCgroupMemory(const CgroupProbe& probe) {
  CgroupSupport support;
  bool v2 =
      probe.is_cgroup2 ? probe.is_cgroup2(probe.cgroup_root) : IsCgroup2Mount(probe.cgroup_root);
  if (!v2) {
    support.reason =
        absl::StrCat(probe.cgroup_root, " is not a cgroup v2 mount (cgroup v1 or hybrid)");
    return support;
  }
  absl::StatusOr<std::string> self = ReadFile(probe.self_cgroup_file);
  if (!self.ok()) {
    support.reason = std::string(self.status().message());
    return support;
  }
  std::string path;
  bool found = false;
  for (absl::string_view line : absl::StrSplit(*self, '\n', absl::SkipEmpty())) {
    if (absl::ConsumePrefix(&line, "0::")) {
      path = std::string(absl::StripSuffix(line, "/"));
      found = true;
      break;
    }
  }
  if (!found) {
    support.reason = absl::StrCat("no cgroup v2 entry (0::) in ", probe.self_cgroup_file);
    return support;
  }
  std::string dir = probe.cgroup_root + path;
  absl::StatusOr<std::string> controllers = ReadFile(dir + "/cgroup.controllers");
  if (!controllers.ok() || !ListContains(*controllers, "memory")) {
    support.reason = absl::StrCat("the memory controller is not available in ", dir);
    return support;
  }
  absl::StatusOr<std::string> subtree = ReadFile(dir + "/cgroup.subtree_control");
  if (!subtree.ok() || !ListContains(*subtree, "memory")) {
    support.reason = absl::StrCat("memory is not enabled in ", dir,
                                  "/cgroup.subtree_control (the cgroup is not delegated)");
    return support;
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    support.reason = absl::StrCat("cannot create cgroups under ", dir, ": ", ErrnoText(errno));
    return support;
  }
  support.usable = true;
  support.parent_dir = dir;
  return support;
}

int64_t ParseOomKills(absl::string_view memory_events) {
  for (absl::string_view line : absl::StrSplit(memory_events, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> kv = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t value = 0;
    if (kv.size() == 2 && kv[0] == "oom_kill" && absl::SimpleAtoi(kv[1], &value)) return value;
  }
  return 0;
}

absl::Status CgroupMemory::Probe() const {
  ASSIGN_OR_RETURN(std::string dir, Create(absl::StrCat("probe-", ::getpid()), 1LL << 30));
  bool has_max = ::access((dir + "/memory.max").c_str(), F_OK) == 0;
  if (::rmdir(dir.c_str()) != 0) return ErrnoStatus(errno, absl::StrCat("rmdir '", dir, "'"));
  if (!has_max) return absl::FailedPreconditionError(absl::StrCat(dir, " has no memory.max"));
  return absl::OkStatus();
}

absl::StatusOr<std::string> CgroupMemory::Create(absl::string_view name,
                                                 int64_t limit_bytes) const {
  std::string dir = absl::StrCat(parent_dir_, "/regatta-", name);
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    return ErrnoStatus(errno, absl::StrCat("mkdir '", dir, "'"));
  }
  absl::Status status = WriteControl(dir + "/memory.max", absl::StrCat(limit_bytes));
  if (status.ok() && ::access((dir + "/memory.swap.max").c_str(), F_OK) == 0) {
    status = WriteControl(dir + "/memory.swap.max", "0");
  }
  if (!status.ok()) {
    ::rmdir(dir.c_str());
    return status;
  }
  return dir;
}

absl::Status CgroupMemory::AddProcess(const std::string& dir, pid_t pid) {
  return WriteControl(dir + "/cgroup.procs", absl::StrCat(pid));
}

int64_t CgroupMemory::OomKills(const std::string& dir) {
  absl::StatusOr<std::string> events = ReadFile(dir + "/memory.events");
  return events.ok() ? ParseOomKills(*events) : 0;
}

void CgroupMemory::KillAll(const std::string& dir) {
  std::string path = dir + "/cgroup.kill";
  if (::access(path.c_str(), F_OK) == 0) WriteControl(path, "1").IgnoreError();
}

void CgroupMemory::Remove(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    LOG_WARN("cannot remove the run's cgroup", "dir", dir, "error", ErrnoText(errno));
  }
}

}  // namespace regatta::executor::local
