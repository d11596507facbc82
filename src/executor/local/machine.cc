#include "src/executor/local/machine.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/executor/local/files.h"

namespace regatta::executor::local {
namespace {

std::optional<std::string> ReadTrimmed(const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) return std::nullopt;
  return std::string(absl::StripAsciiWhitespace(*contents));
}

// The directories to consult for one hierarchy, from the process's own cgroup up to the mount
// root: limits of ancestors apply too. `mount` is where the hierarchy is mounted and `path` the
// process's cgroup path in it ("/a/b"). Inside a cgroup namespace the path may not exist under
// the mount; then only the mount root is used.
std::vector<std::string> CgroupDirs(const std::string& mount, std::string path) {
  std::vector<std::string> dirs;
  while (!path.empty() && path != "/") {
    dirs.push_back(mount + path);
    path = path.substr(0, path.rfind('/'));
  }
  dirs.push_back(mount);
  return dirs;
}

struct SelfCgroups {
  std::optional<std::string> v2_path;
  std::optional<std::string> v1_cpu_path;
  std::string v1_cpu_mount_name;  // e.g. "cpu,cpuacct"
  std::optional<std::string> v1_memory_path;
};

SelfCgroups ReadSelfCgroups(const std::string& file) {
  SelfCgroups out;
  absl::StatusOr<std::string> contents = ReadFile(file);
  if (!contents.ok()) return out;
  for (absl::string_view line : absl::StrSplit(*contents, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    if (parts[0] == "0" && parts[1].empty()) {
      out.v2_path = parts[2];
      continue;
    }
    for (absl::string_view controller : absl::StrSplit(parts[1], ',')) {
      if (controller == "cpu") {
        out.v1_cpu_path = parts[2];
        out.v1_cpu_mount_name = parts[1];
      } else if (controller == "memory") {
        out.v1_memory_path = parts[2];
      }
    }
  }
  return out;
}

bool Exists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

std::string V1Mount(const std::string& root, const std::string& name) {
  std::string mount = absl::StrCat(root, "/", name);
  if (Exists(mount)) return mount;
  return absl::StrCat(root, "/cpu");
}

}  // namespace

std::optional<int64_t> ParseCpuMax(absl::string_view cpu_max) {
  std::vector<absl::string_view> parts =
      absl::StrSplit(absl::StripAsciiWhitespace(cpu_max), ' ', absl::SkipEmpty());
  if (parts.empty() || parts[0] == "max") return std::nullopt;
  return CpuQuotaMilli(parts[0], parts.size() > 1 ? parts[1] : "100000");
}

std::optional<int64_t> CpuQuotaMilli(absl::string_view quota_us, absl::string_view period_us) {
  int64_t quota = 0;
  int64_t period = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(quota_us), &quota) ||
      !absl::SimpleAtoi(absl::StripAsciiWhitespace(period_us), &period) || quota <= 0 ||
      period <= 0) {
    return std::nullopt;  // -1: no quota
  }
  return quota * 1000 / period;
}

int64_t ParseMemTotal(absl::string_view meminfo) {
  for (absl::string_view line : absl::StrSplit(meminfo, '\n', absl::SkipEmpty())) {
    if (!absl::ConsumePrefix(&line, "MemTotal:")) continue;
    line = absl::StripAsciiWhitespace(line);
    int64_t multiplier = 1;
    if (absl::ConsumeSuffix(&line, "kB")) multiplier = 1024;
    int64_t value = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) return value * multiplier;
  }
  return 0;
}

MachineResources DetectMachineResourcesFrom(const MachineProbe& probe) {
  MachineResources out;
  int cpus = probe.affinity_cpus;
  if (cpus <= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof(set), &set) == 0) cpus = CPU_COUNT(&set);
    if (cpus <= 0) cpus = static_cast<int>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
  }
  out.cpu_milli = int64_t{cpus} * 1000;

  absl::StatusOr<std::string> meminfo = ReadFile(probe.meminfo_file);
  out.memory_bytes = meminfo.ok() ? ParseMemTotal(*meminfo) : 0;

  SelfCgroups self = ReadSelfCgroups(probe.self_cgroup_file);
  auto cap_cpu = [&out](std::optional<int64_t> milli) {
    if (milli && *milli > 0) out.cpu_milli = std::min(out.cpu_milli, *milli);
  };
  auto cap_memory = [&out](absl::string_view text) {
    int64_t limit = 0;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(text), &limit) && limit > 0 &&
        (out.memory_bytes == 0 || limit < out.memory_bytes)) {
      out.memory_bytes = limit;
    }
  };
  // cgroup v2: at the root (pure v2) or under "unified" (hybrid).
  if (self.v2_path) {
    std::string mount = probe.cgroup_root;
    if (!Exists(mount + "/cgroup.controllers") && Exists(mount + "/unified/cgroup.controllers")) {
      mount += "/unified";
    }
    for (const std::string& dir : CgroupDirs(mount, *self.v2_path)) {
      if (auto cpu_max = ReadTrimmed(dir + "/cpu.max")) cap_cpu(ParseCpuMax(*cpu_max));
      if (auto memory_max = ReadTrimmed(dir + "/memory.max")) cap_memory(*memory_max);  // "max"
    }
  }
  if (self.v1_cpu_path) {
    std::string mount = V1Mount(probe.cgroup_root, self.v1_cpu_mount_name);
    for (const std::string& dir : CgroupDirs(mount, *self.v1_cpu_path)) {
      auto quota = ReadTrimmed(dir + "/cpu.cfs_quota_us");
      auto period = ReadTrimmed(dir + "/cpu.cfs_period_us");
      if (quota && period) cap_cpu(CpuQuotaMilli(*quota, *period));
    }
  }
  if (self.v1_memory_path) {
    std::string mount = probe.cgroup_root + "/memory";
    for (const std::string& dir : CgroupDirs(mount, *self.v1_memory_path)) {
      if (auto limit = ReadTrimmed(dir + "/memory.limit_in_bytes")) cap_memory(*limit);
    }
  }

  if (!probe.hostname.empty()) {
    out.hostname = probe.hostname;
  } else {
    char name[256] = {};
    if (::gethostname(name, sizeof(name) - 1) == 0) out.hostname = name;
  }
  return out;
}

}  // namespace regatta::executor::local

namespace regatta::executor {

MachineResources DetectMachineResources() {
  return local::DetectMachineResourcesFrom(local::MachineProbe{});
}

}  // namespace regatta::executor
