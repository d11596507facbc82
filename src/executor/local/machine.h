#ifndef REGATTA_SRC_EXECUTOR_LOCAL_MACHINE_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_MACHINE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "src/executor/local/process_supervisor.h"

// DetectMachineResources with injectable sources, so tests can use fake /proc and cgroup trees.
namespace regatta::executor::local {

struct MachineProbe {
  std::string cgroup_root = "/sys/fs/cgroup";
  std::string self_cgroup_file = "/proc/self/cgroup";
  std::string meminfo_file = "/proc/meminfo";
  // 0: sched_getaffinity of this process.
  int affinity_cpus = 0;
  // Empty: gethostname.
  std::string hostname;
};

MachineResources DetectMachineResourcesFrom(const MachineProbe& probe);

// The CPU limit of a v2 cpu.max ("max 100000" or "150000 100000") or v1 quota/period pair,
// in milli-CPUs; nullopt when unlimited or unparsable.
std::optional<int64_t> ParseCpuMax(absl::string_view cpu_max);
std::optional<int64_t> CpuQuotaMilli(absl::string_view quota_us, absl::string_view period_us);
// MemTotal of /proc/meminfo contents in bytes; 0 if absent.
int64_t ParseMemTotal(absl::string_view meminfo);

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_MACHINE_H_
