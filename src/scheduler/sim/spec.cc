#include "src/scheduler/sim/spec.h"

#include <initializer_list>
#include <map>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/bounded_parse.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"
#include "src/scheduler/sim/yaml_field.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler::sim {

absl::StatusOr<Taint> ParseTaint(const Field& f) {
  RETURN_IF_ERROR(f.ExpectMap({"key", "value", "effect"}));
  Taint taint;
  ASSIGN_OR_RETURN(taint.key, f["key"].String());
  if (f.Has("value")) {
    ASSIGN_OR_RETURN(taint.value, f["value"].String());
  }
  ASSIGN_OR_RETURN(taint.effect, f["effect"].String());
  if (taint.effect != "NoSchedule" && taint.effect != "PreferNoSchedule" &&
      taint.effect != "NoExecute") {
    return f["effect"].Error("must be NoSchedule, PreferNoSchedule or NoExecute");
  }
  return taint;
}

namespace {

absl::StatusOr<NodeGroupSpec> ParseNodeGroup(const Field& f, const std::string& pool, size_t i) {
  RETURN_IF_ERROR(f.ExpectMap(
      {"count", "namePrefix", "executor", "labels", "taints", "resources", "unschedulable"}));
  NodeGroupSpec group;
  group.name_prefix = absl::StrCat(pool, "-", i, "-");
  group.executor_id = absl::StrCat(pool, "-executor");
  if (f.Has("count")) {
    ASSIGN_OR_RETURN(group.count, f["count"].IntAtLeast(0));
  }
  if (f.Has("namePrefix")) {
    ASSIGN_OR_RETURN(group.name_prefix, f["namePrefix"].String());
  }
  if (f.Has("executor")) {
    ASSIGN_OR_RETURN(group.executor_id, f["executor"].String());
  }
  ASSIGN_OR_RETURN(group.labels, f["labels"].StringMap());
  ASSIGN_OR_RETURN(auto taints, f["taints"].Elements());
  for (const Field& t : taints) {
    ASSIGN_OR_RETURN(Taint taint, ParseTaint(t));
    group.taints.push_back(std::move(taint));
  }
  if (!f.Has("resources"))
    return f["resources"].Error("is required, e.g. {cpu: 32, memory: 256Gi}");
  ASSIGN_OR_RETURN(group.resources, f["resources"].Resources());
  if (f.Has("unschedulable")) {
    ASSIGN_OR_RETURN(group.unschedulable, f["unschedulable"].Bool());
  }
  return group;
}

// The cluster's `scheduling` section: the server's keys, read by the server's parser. Without
// priority classes the cluster gets one preemptible class, "default".
absl::Status ParseScheduling(const YAML::Node& node, absl::string_view file, ClusterSpec& c) {
  YAML::Node scheduling =
      node && !node.IsNull() ? YAML::Clone(node) : YAML::Node(YAML::NodeType::Map);
  Field f(scheduling, "scheduling", file);
  if (!f.IsMap()) return f.Error("must be a map");
  if (!f.Has("priorityClasses")) {
    scheduling["priorityClasses"]["default"]["priority"] = 0;
    scheduling["priorityClasses"]["default"]["preemptible"] = true;
  }
  if (f.Has("cyclePeriod")) {
    ASSIGN_OR_RETURN(c.cycle_period, f["cyclePeriod"].Duration());
    if (c.cycle_period <= absl::ZeroDuration()) return f["cyclePeriod"].Error("must be > 0");
  }
  if (f.Has("maxLeasesPerCycle")) {
    ASSIGN_OR_RETURN(int64_t max_leases, f["maxLeasesPerCycle"].IntAtLeast(1));
    c.max_leases_per_cycle = static_cast<int>(max_leases);
  }
  // The policy's keys, the two above, and server keys the simulator has no use for (it has no
  // executors to lose, no retries and no lease stream), accepted so a server file can be used.
  RETURN_IF_ERROR(
      f.ExpectMap({"priorityClasses", "defaultPriorityClass", "resourceMultipliers",
                   "enableFairSharePreemption", "protectedFractionOfFairShare", "indexedResources",
                   "indexedNodeLabels", "maxFractionToSchedule", "maxFractionToSchedulePerQueue",
                   "rateLimit", "queueRateLimit", "gangLookahead", "cyclePeriod",
                   "maxLeasesPerCycle", "executorTimeout", "maxRetries", "leaseWait"}));
  absl::StatusOr<SchedulingPolicy> policy = ParseSchedulingPolicy(scheduling, "scheduling");
  if (!policy.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", policy.status().message()));
  }
  c.policy = *std::move(policy);
  return absl::OkStatus();
}

absl::StatusOr<DurationSpec> ParseDurationSpec(const Field& f) {
  DurationSpec d;
  if (!f.IsMap()) {
    // A bare duration: constant.
    ASSIGN_OR_RETURN(d.value, f.Duration());
    return d;
  }
  RETURN_IF_ERROR(f.ExpectMap({"constant", "uniform", "exponential"}));
  if (f.Has("constant") + f.Has("uniform") + f.Has("exponential") != 1) {
    return f.Error("needs exactly one of constant, uniform, exponential");
  }
  if (f.Has("constant")) {
    ASSIGN_OR_RETURN(d.value, f["constant"].Duration());
  } else if (f.Has("uniform")) {
    Field u = f["uniform"];
    RETURN_IF_ERROR(u.ExpectMap({"min", "max"}));
    d.kind = DurationSpec::Kind::kUniform;
    ASSIGN_OR_RETURN(d.min, u["min"].Duration());
    ASSIGN_OR_RETURN(d.max, u["max"].Duration());
    if (d.max < d.min) return u["max"].Error("must be >= min");
  } else {
    Field e = f["exponential"];
    RETURN_IF_ERROR(e.ExpectMap({"mean"}));
    d.kind = DurationSpec::Kind::kExponential;
    ASSIGN_OR_RETURN(d.value, e["mean"].Duration());
  }
  return d;
}

}  // namespace

absl::StatusOr<regatta::v1::Toleration> ParseToleration(const Field& f) {
  RETURN_IF_ERROR(f.ExpectMap({"key", "operator", "value", "effect"}));
  regatta::v1::Toleration t;
  if (f.Has("key")) {
    ASSIGN_OR_RETURN(*t.mutable_key(), f["key"].String());
  }
  if (f.Has("operator")) {
    ASSIGN_OR_RETURN(*t.mutable_operator_(), f["operator"].String());
    if (t.operator_() != "Equal" && t.operator_() != "Exists") {
      return f["operator"].Error("must be Equal or Exists");
    }
  }
  if (f.Has("value")) {
    ASSIGN_OR_RETURN(*t.mutable_value(), f["value"].String());
  }
  if (f.Has("effect")) {
    ASSIGN_OR_RETURN(*t.mutable_effect(), f["effect"].String());
  }
  return t;
}

namespace {

absl::StatusOr<JobTemplateSpec> ParseJobTemplate(const Field& f, size_t i) {
  RETURN_IF_ERROR(f.ExpectMap({"name", "queue", "count", "requests", "priorityClass", "priority",
                               "nodeSelector", "tolerations", "gang", "submitAt", "submitInterval",
                               "duration"}));
  JobTemplateSpec job;
  job.name = absl::StrCat("job", i);
  if (f.Has("name")) {
    ASSIGN_OR_RETURN(job.name, f["name"].String());
  }
  ASSIGN_OR_RETURN(job.queue, f["queue"].String());
  if (f.Has("count")) {
    ASSIGN_OR_RETURN(int64_t count, f["count"].IntAtLeast(0));
    job.count = static_cast<int>(count);
  }
  if (!f.Has("requests")) return f["requests"].Error("is required, e.g. {cpu: 1, memory: 4Gi}");
  ASSIGN_OR_RETURN(job.requests, f["requests"].Resources());
  if (f.Has("priorityClass")) {
    ASSIGN_OR_RETURN(job.priority_class, f["priorityClass"].String());
  }
  if (f.Has("priority")) {
    ASSIGN_OR_RETURN(int64_t priority, f["priority"].IntAtLeast(0));
    job.priority = static_cast<uint32_t>(priority);
  }
  ASSIGN_OR_RETURN(auto selector, f["nodeSelector"].StringMap());
  for (auto& [k, v] : selector) (*job.task.mutable_node_selector())[k] = v;
  ASSIGN_OR_RETURN(auto tolerations, f["tolerations"].Elements());
  for (const Field& t : tolerations) {
    ASSIGN_OR_RETURN(*job.task.add_tolerations(), ParseToleration(t));
  }
  if (f.Has("gang")) {
    Field g = f["gang"];
    RETURN_IF_ERROR(g.ExpectMap({"cardinality", "nodeUniformityLabel"}));
    ASSIGN_OR_RETURN(int64_t cardinality, g["cardinality"].IntAtLeast(1));
    job.gang_cardinality = static_cast<uint32_t>(cardinality);
    if (g.Has("nodeUniformityLabel")) {
      ASSIGN_OR_RETURN(job.gang_node_uniformity_label, g["nodeUniformityLabel"].String());
    }
    if (job.count % job.gang_cardinality != 0) {
      return f["count"].Error(
          absl::StrCat("must be a multiple of gang.cardinality (", cardinality, ")"));
    }
  }
  if (f.Has("submitAt")) {
    ASSIGN_OR_RETURN(job.submit_at, f["submitAt"].Duration());
  }
  if (f.Has("submitInterval")) {
    ASSIGN_OR_RETURN(job.submit_interval, f["submitInterval"].Duration());
  }
  if (f.Has("duration")) {
    ASSIGN_OR_RETURN(job.duration, ParseDurationSpec(f["duration"]));
  }
  return job;
}

// Parses YAML text into a root node, the parse error naming the file and line.
absl::StatusOr<YAML::Node> ParseYaml(absl::string_view text, absl::string_view file) {
  absl::StatusOr<YAML::Node> root = LoadYaml(text);
  if (!root.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", root.status().message()));
  }
  return root;
}

}  // namespace

absl::StatusOr<ClusterSpec> ParseCluster(const YAML::Node& root, absl::string_view file) {
  if (IsArmadaCluster(root)) return ParseArmadaCluster(root, file);
  Field f(root, "", file);
  RETURN_IF_ERROR(f.ExpectMap({"pools", "scheduling"}));
  ClusterSpec c;
  ASSIGN_OR_RETURN(auto pools, f["pools"].Elements());
  if (pools.empty()) return f["pools"].Error("at least one pool is needed");
  for (const Field& p : pools) {
    RETURN_IF_ERROR(p.ExpectMap({"name", "nodeGroups"}));
    PoolSpec pool;
    ASSIGN_OR_RETURN(pool.name, p["name"].String());
    if (pool.name.empty()) return p["name"].Error("must not be empty");
    for (const PoolSpec& other : c.pools) {
      if (other.name == pool.name) return p["name"].Error("duplicate pool name");
    }
    ASSIGN_OR_RETURN(auto groups, p["nodeGroups"].Elements());
    for (size_t i = 0; i < groups.size(); ++i) {
      ASSIGN_OR_RETURN(NodeGroupSpec group, ParseNodeGroup(groups[i], pool.name, i));
      pool.node_groups.push_back(std::move(group));
    }
    c.pools.push_back(std::move(pool));
  }
  RETURN_IF_ERROR(ParseScheduling(root.IsMap() ? root["scheduling"] : YAML::Node(), file, c));
  return c;
}

absl::StatusOr<WorkloadSpec> ParseWorkload(const YAML::Node& root, absl::string_view file) {
  if (IsArmadaWorkload(root)) return ParseArmadaWorkload(root, file);
  Field f(root, "", file);
  RETURN_IF_ERROR(f.ExpectMap({"seed", "queues", "jobs"}));
  WorkloadSpec w;
  if (f.Has("seed")) {
    ASSIGN_OR_RETURN(int64_t seed, f["seed"].IntAtLeast(0));
    w.seed = static_cast<uint64_t>(seed);
  }
  ASSIGN_OR_RETURN(auto queues, f["queues"].Elements());
  for (const Field& q : queues) {
    RETURN_IF_ERROR(q.ExpectMap({"name", "weight", "priorityFactor", "cordoned"}));
    QueueSpec queue;
    ASSIGN_OR_RETURN(queue.name, q["name"].String());
    if (q.Has("weight")) {
      ASSIGN_OR_RETURN(queue.weight, q["weight"].Double());
    }
    if (q.Has("priorityFactor")) {
      ASSIGN_OR_RETURN(double factor, q["priorityFactor"].Double());
      if (!(factor > 0)) return q["priorityFactor"].Error("must be > 0");
      queue.weight = 1.0 / factor;
    }
    if (!(queue.weight > 0)) return q["weight"].Error("must be > 0");
    if (q.Has("cordoned")) {
      ASSIGN_OR_RETURN(queue.cordoned, q["cordoned"].Bool());
    }
    for (const QueueSpec& other : w.queues) {
      if (other.name == queue.name) return q["name"].Error("duplicate queue name");
    }
    w.queues.push_back(std::move(queue));
  }
  ASSIGN_OR_RETURN(auto jobs, f["jobs"].Elements());
  for (size_t i = 0; i < jobs.size(); ++i) {
    ASSIGN_OR_RETURN(JobTemplateSpec job, ParseJobTemplate(jobs[i], i));
    for (const JobTemplateSpec& other : w.jobs) {
      if (other.name == job.name) return jobs[i]["name"].Error("duplicate job template name");
    }
    w.jobs.push_back(std::move(job));
  }
  return w;
}

absl::Status ValidateWorkload(const ClusterSpec& cluster, const WorkloadSpec& workload,
                              absl::string_view file) {
  for (size_t i = 0; i < workload.jobs.size(); ++i) {
    const JobTemplateSpec& job = workload.jobs[i];
    bool queue_found = false;
    for (const QueueSpec& q : workload.queues) queue_found = queue_found || q.name == job.queue;
    if (!queue_found) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": jobs[", i, "].queue: \"", job.queue,
                                                     "\" is not one of the workload's queues"));
    }
    for (const std::string& dep : job.dependencies) {
      bool found = false;
      for (const JobTemplateSpec& other : workload.jobs) found = found || other.name == dep;
      if (!found || dep == job.name) {
        return absl::InvalidArgumentError(
            absl::StrCat(file, ": jobs[", i, "] (", job.name, ").dependencies: \"", dep, "\" is ",
                         found ? "the template itself" : "not a job template"));
      }
    }
    if (job.priority_class.empty()) continue;
    if (!cluster.policy.priority_classes.contains(job.priority_class)) {
      return absl::InvalidArgumentError(absl::StrCat(file, ": jobs[", i, "].priorityClass: \"",
                                                     job.priority_class,
                                                     "\" is not one of the cluster's classes"));
    }
  }
  // Templates waiting for each other in a circle would never be submitted.
  std::map<std::string, int> waits;  // template -> dependencies not yet resolved
  for (const JobTemplateSpec& job : workload.jobs) {
    waits[job.name] = static_cast<int>(job.dependencies.size());
  }
  std::vector<std::string> ready;
  for (const auto& [name, n] : waits) {
    if (n == 0) ready.push_back(name);
  }
  size_t resolved = 0;
  while (!ready.empty()) {
    const std::string done = ready.back();
    ready.pop_back();
    ++resolved;
    for (const JobTemplateSpec& job : workload.jobs) {
      for (const std::string& dep : job.dependencies) {
        if (dep == done && --waits[job.name] == 0) ready.push_back(job.name);
      }
    }
  }
  if (resolved < waits.size()) {
    std::vector<std::string> stuck;
    for (const auto& [name, n] : waits) {
      if (n > 0) stuck.push_back(name);
    }
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": dependencies: templates ", absl::StrJoin(stuck, ", "),
                     " depend on each other in a cycle (none could ever be submitted)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ClusterSpec> ParseClusterYaml(absl::string_view text, absl::string_view file) {
  ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  return ParseCluster(root, file);
}

absl::StatusOr<WorkloadSpec> ParseWorkloadYaml(absl::string_view text, absl::string_view file) {
  ASSIGN_OR_RETURN(YAML::Node root, ParseYaml(text, file));
  return ParseWorkload(root, file);
}

absl::StatusOr<ClusterSpec> LoadClusterFile(absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseClusterYaml(text, path);
}

absl::StatusOr<WorkloadSpec> LoadWorkloadFile(absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseWorkloadYaml(text, path);
}

}  // namespace regatta::scheduler::sim
