#ifndef REGATTA_SRC_SCHEDULER_SIM_SPEC_H_
#define REGATTA_SRC_SCHEDULER_SIM_SPEC_H_

// The simulator's inputs: a cluster (pools of node groups, priority classes, scheduling
// configuration) and a workload (queues and job templates), read from YAML. Errors name the
// file and the field, e.g. "workload.yaml: jobs[2].requests.cpu: ...".

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"
#include "src/scheduler/policy/policy.h"
#include "src/scheduler/round/pool_round.h"

namespace YAML {
class Node;
}

namespace regatta::scheduler::sim {

struct NodeGroupSpec {
  int count = 1;
  std::string name_prefix;  // node ids are <prefix><n>; default "<pool>-<group index>-"
  std::string executor_id;  // default "<pool>-executor"
  absl::flat_hash_map<std::string, std::string> labels;
  std::vector<Taint> taints;
  ResourceList resources;
  bool unschedulable = false;  // cordoned nodes
};

struct PoolSpec {
  std::string name;
  std::vector<NodeGroupSpec> node_groups;
};

struct ClusterSpec {
  std::vector<PoolSpec> pools;
  bool armada_format = false;  // read from Armada's simulator ClusterSpec
  // The server's `scheduling` section, read by the same parser (ParseSchedulingPolicy), so an
  // operator's configuration can be simulated as it is.
  SchedulingPolicy policy;
  absl::Duration cycle_period = absl::Seconds(1);  // scheduling.cyclePeriod
  int max_leases_per_cycle = 0;                    // scheduling.maxLeasesPerCycle; 0: no limit
};

struct QueueSpec {
  std::string name;
  double weight = 1.0;
  bool cordoned = false;
};

// How long a job runs once leased.
struct DurationSpec {
  // kShiftedExponential (Armada's runtimeDistribution): min plus an exponential draw of mean
  // `value`.
  enum class Kind { kConstant, kUniform, kExponential, kShiftedExponential };
  Kind kind = Kind::kConstant;
  absl::Duration value = absl::Minutes(1);  // constant; exponential: the mean
  absl::Duration min, max;                  // uniform; shifted exponential: min
};

struct JobTemplateSpec {
  std::string name;
  std::string queue;
  int count = 1;
  ResourceList requests;
  std::string priority_class;     // empty: scheduling.defaultPriorityClass
  uint32_t priority = 0;          // lower runs first within a queue and class
  regatta::v1::TaskSpec task;     // node selector, tolerations
  uint32_t gang_cardinality = 0;  // 0: no gang
  std::string gang_node_uniformity_label;
  absl::Duration submit_at = absl::ZeroDuration();
  // Zero: all jobs at submit_at; else one job (one gang) every interval from submit_at.
  absl::Duration submit_interval = absl::ZeroDuration();
  DurationSpec duration;
  std::string job_set;  // Armada's jobSet, shown in the per-job results
  // Names of templates every job of which must have ended (succeeded, or ended otherwise: the
  // simulator does not retry) before this one's first job is submitted, at the latest of
  // submit_at and that moment + submit_after_dependencies.
  std::vector<std::string> dependencies;
  absl::Duration submit_after_dependencies = absl::ZeroDuration();
};

struct WorkloadSpec {
  uint64_t seed = 1;  // for duration distributions
  std::vector<QueueSpec> queues;
  std::vector<JobTemplateSpec> jobs;
};

// `file` only names the source in errors.
absl::StatusOr<ClusterSpec> ParseCluster(const YAML::Node& root, absl::string_view file);
absl::StatusOr<WorkloadSpec> ParseWorkload(const YAML::Node& root, absl::string_view file);
// Parse YAML text; errors name `file`.
absl::StatusOr<ClusterSpec> ParseClusterYaml(absl::string_view text, absl::string_view file);
absl::StatusOr<WorkloadSpec> ParseWorkloadYaml(absl::string_view text, absl::string_view file);
// Read and parse a file.
absl::StatusOr<ClusterSpec> LoadClusterFile(absl::string_view path);
absl::StatusOr<WorkloadSpec> LoadWorkloadFile(absl::string_view path);

// Armada's simulator formats (armada_spec.cc): a ClusterSpec (`clusters:` with `pool`, or
// `pools:` with `clusterGroups`) and a WorkloadSpec (`queues:` with `jobTemplates`), recognised
// by their keys; ParseCluster and ParseWorkload hand such files to these.
bool IsArmadaCluster(const YAML::Node& root);
bool IsArmadaWorkload(const YAML::Node& root);
absl::StatusOr<ClusterSpec> ParseArmadaCluster(const YAML::Node& root, absl::string_view file);
absl::StatusOr<WorkloadSpec> ParseArmadaWorkload(const YAML::Node& root, absl::string_view file);

// Armada's scheduling configuration (the `scheduling` section of its config.yaml, or the file
// holding only that section, as its simulator takes it) replaces `cluster`'s policy. Defined in
// armada_spec.cc.
absl::Status ApplyArmadaSchedulingConfig(const YAML::Node& root, absl::string_view file,
                                         ClusterSpec& cluster);
absl::Status LoadArmadaSchedulingConfigFile(absl::string_view path, ClusterSpec& cluster);

// Checks the workload against the cluster: queues exist, priority classes exist.
absl::Status ValidateWorkload(const ClusterSpec& cluster, const WorkloadSpec& workload,
                              absl::string_view file);

}  // namespace regatta::scheduler::sim

#endif  // REGATTA_SRC_SCHEDULER_SIM_SPEC_H_
