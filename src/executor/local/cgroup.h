#ifndef REGATTA_SRC_EXECUTOR_LOCAL_CGROUP_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_CGROUP_H_

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// Memory limits for runs with cgroup v2: one child cgroup per run, under the supervisor's own
// cgroup, with memory.max set. Used only when the machine allows it; otherwise memory limits are
// accounted by the scheduler and not enforced.
namespace regatta::executor::local {

// Where to look; tests point these at a fake tree.
struct CgroupProbe {
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string self_cgroup_file = "/proc/self/cgroup";
  // Whether `cgroup_root` is a cgroup2 mount. Default: statfs f_type == CGROUP2_SUPER_MAGIC.
  std::function<bool(const std::string&)> is_cgroup2;
};

struct CgroupSupport {
  bool usable = false;
  // The supervisor's own cgroup directory; run cgroups are created inside it.
  std::string parent_dir;
  // Why limits cannot be enforced (when !usable).
  std::string reason;
};

// Checks, without changing anything: cgroup2 at the root, the supervisor's cgroup from
// "0::<path>", "memory" in its cgroup.controllers and cgroup.subtree_control (so a child gets a
// memory.max), and that the directory is writable.
CgroupSupport DetectCgroupMemory(const CgroupProbe& probe);

// The oom_kill count of a memory.events file's contents (0 if absent).
int64_t ParseOomKills(absl::string_view memory_events);

// Run cgroups under one parent directory.
class CgroupMemory {
 public:
  explicit CgroupMemory(std::string parent_dir) : parent_dir_(std::move(parent_dir)) {}

  // Creates and removes a child cgroup to prove that memory.max is settable.
  absl::Status Probe() const;
  // Creates <parent>/regatta-<name> with memory.max = limit_bytes (and memory.swap.max = 0 when
  // the file exists) and returns its directory.
  absl::StatusOr<std::string> Create(absl::string_view name, int64_t limit_bytes) const;
  // Moves `pid` into the cgroup.
  static absl::Status AddProcess(const std::string& dir, pid_t pid);
  // How many times the kernel's OOM killer killed a process in the cgroup.
  static int64_t OomKills(const std::string& dir);
  // Kills every process in the cgroup (cgroup.kill, kernel 5.14+); best effort.
  static void KillAll(const std::string& dir);
  // Removes the (empty) cgroup; best effort, logs a warning.
  static void Remove(const std::string& dir);

 private:
  std::string parent_dir_;
};

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_CGROUP_H_
