// Armada's simulator inputs, read as Armada writes them (internal/scheduler/simulator: the
// ClusterSpec and WorkloadSpec messages in YAML, and the scheduler's `scheduling` config), into
// the simulator's own specs. What cannot be honoured is refused naming the field.

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/common/bounded_parse.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"
#include "src/scheduler/sim/spec.h"
#include "src/scheduler/sim/yaml_field.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler::sim {
namespace {

// Armada's classes when no scheduling config is given (those of its simulator's test config).
constexpr char kArmadaDefaultScheduling[] = R"(
priorityClasses:
  armada-default: {priority: 30000, preemptible: false}
  armada-preemptible: {priority: 30000, preemptible: true}
defaultPriorityClass: armada-default
)";

// A duration distribution that must be absent or zero (we have no delay to apply it to).
absl::Status RefuseNonZeroDistribution(const Field& f) {
  if (!f.node().IsDefined() || f.node().IsNull()) return absl::OkStatus();
  RETURN_IF_ERROR(f.ExpectMap({"minimum", "tailMean"}));
  for (absl::string_view key : {"minimum", "tailMean"}) {
    if (!f.Has(key)) continue;
    ASSIGN_OR_RETURN(absl::Duration d, f[key].Duration());
    if (d != absl::ZeroDuration()) {
      return f[key].Error("cannot be honoured: the simulator has no such delay (leave it 0)");
    }
  }
  return absl::OkStatus();
}

// totalResources: {resources: {cpu: "32"}} (schedulerobjects.ResourceList), or the map itself.
absl::StatusOr<ResourceList> ParseResourceList(const Field& f) {
  if (f.Has("resources")) {
    RETURN_IF_ERROR(f.ExpectMap({"resources"}));
    return f["resources"].Resources();
  }
  return f.Resources();
}

absl::Status ParseNodeTemplates(const Field& templates, const std::string& cluster, PoolSpec& out) {
  ASSIGN_OR_RETURN(auto elements, templates.Elements());
  for (size_t i = 0; i < elements.size(); ++i) {
    const Field& t = elements[i];
    RETURN_IF_ERROR(t.ExpectMap({"number", "taints", "labels", "totalResources"}));
    NodeGroupSpec group;
    group.name_prefix = absl::StrCat(cluster, "-", i, "-");
    group.executor_id = cluster;
    if (t.Has("number")) {
      ASSIGN_OR_RETURN(int64_t number, t["number"].IntAtLeast(0));
      group.count = static_cast<int>(number);
    }
    ASSIGN_OR_RETURN(group.labels, t["labels"].StringMap());
    // Armada labels every node with its cluster; gangs default to that label for uniformity.
    group.labels.emplace("armadaproject.io/clusterName", cluster);
    ASSIGN_OR_RETURN(auto taints, t["taints"].Elements());
    for (const Field& taint : taints) {
      ASSIGN_OR_RETURN(Taint parsed, ParseTaint(taint));
      group.taints.push_back(std::move(parsed));
    }
    if (!t.Has("totalResources")) {
      return t["totalResources"].Error("is required, e.g. {resources: {cpu: \"32\"}}");
    }
    ASSIGN_OR_RETURN(group.resources, ParseResourceList(t["totalResources"]));
    out.node_groups.push_back(std::move(group));
  }
  return absl::OkStatus();
}

PoolSpec& PoolNamed(ClusterSpec& c, const std::string& name) {
  for (PoolSpec& p : c.pools) {
    if (p.name == name) return p;
  }
  PoolSpec& p = c.pools.emplace_back();
  p.name = name;
  return p;
}

absl::Status SetDefaultPolicy(ClusterSpec& c) {
  ASSIGN_OR_RETURN(YAML::Node node, LoadYaml(kArmadaDefaultScheduling));
  ASSIGN_OR_RETURN(c.policy, ParseSchedulingPolicy(node, "scheduling"));
  return absl::OkStatus();
}

}  // namespace

bool IsArmadaCluster(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  for (const char* key :
       {"clusters", "name", "workflowManagerDelayDistribution", "pendingDelayDistribution"}) {
    if (root[key].IsDefined()) return true;
  }
  const YAML::Node pools = root["pools"];
  if (!pools.IsDefined() || !pools.IsSequence()) return false;
  for (const YAML::Node& p : pools) {
    if (p.IsMap() && p["clusterGroups"].IsDefined()) return true;
  }
  return false;
}

bool IsArmadaWorkload(const YAML::Node& root) {
  if (!root.IsMap()) return false;
  if (root["name"].IsDefined() || root["randomSeed"].IsDefined()) return true;
  const YAML::Node queues = root["queues"];
  if (!queues.IsDefined() || !queues.IsSequence()) return false;
  for (const YAML::Node& q : queues) {
    if (q.IsMap() && q["jobTemplates"].IsDefined()) return true;
  }
  return false;
}

absl::StatusOr<ClusterSpec> ParseArmadaCluster(const YAML::Node& root, absl::string_view file) {
  Field f(root, "", file);
  RETURN_IF_ERROR(f.ExpectMap({"name", "clusters", "pools", "workflowManagerDelayDistribution",
                               "pendingDelayDistribution"}));
  RETURN_IF_ERROR(RefuseNonZeroDistribution(f["workflowManagerDelayDistribution"]));
  RETURN_IF_ERROR(RefuseNonZeroDistribution(f["pendingDelayDistribution"]));
  ClusterSpec c;
  c.armada_format = true;
  std::set<std::string> cluster_names;
  auto add_cluster = [&](const Field& cl, const std::string* pool_of_group,
                         const std::string& default_name) -> absl::Status {
    RETURN_IF_ERROR(pool_of_group == nullptr ? cl.ExpectMap({"name", "pool", "nodeTemplates"})
                                             : cl.ExpectMap({"name", "nodeTemplates"}));
    std::string name = default_name;
    if (cl.Has("name")) {
      ASSIGN_OR_RETURN(name, cl["name"].String());
      if (name.empty()) name = default_name;
    }
    if (!cluster_names.insert(name).second) return cl["name"].Error("duplicate cluster name");
    std::string pool;
    if (pool_of_group != nullptr) {
      pool = *pool_of_group;
    } else {
      ASSIGN_OR_RETURN(pool, cl["pool"].String());
      if (pool.empty()) return cl["pool"].Error("must not be empty");
    }
    return ParseNodeTemplates(cl["nodeTemplates"], name, PoolNamed(c, pool));
  };
  ASSIGN_OR_RETURN(auto clusters, f["clusters"].Elements());
  for (size_t i = 0; i < clusters.size(); ++i) {
    RETURN_IF_ERROR(add_cluster(clusters[i], nullptr, absl::StrCat("cluster-", i)));
  }
  // The older shape: pools[].clusterGroups[].clusters[].
  ASSIGN_OR_RETURN(auto pools, f["pools"].Elements());
  for (size_t p = 0; p < pools.size(); ++p) {
    RETURN_IF_ERROR(pools[p].ExpectMap({"name", "clusterGroups"}));
    ASSIGN_OR_RETURN(std::string pool, pools[p]["name"].String());
    if (pool.empty()) return pools[p]["name"].Error("must not be empty");
    PoolNamed(c, pool);
    ASSIGN_OR_RETURN(auto groups, pools[p]["clusterGroups"].Elements());
    for (size_t g = 0; g < groups.size(); ++g) {
      RETURN_IF_ERROR(groups[g].ExpectMap({"clusters"}));
      ASSIGN_OR_RETURN(auto group_clusters, groups[g]["clusters"].Elements());
      for (size_t i = 0; i < group_clusters.size(); ++i) {
        RETURN_IF_ERROR(add_cluster(group_clusters[i], &pool, absl::StrCat(pool, "-", g, "-", i)));
      }
    }
  }
  if (c.pools.empty()) return f["clusters"].Error("at least one cluster is needed");
  RETURN_IF_ERROR(SetDefaultPolicy(c));
  return c;
}

absl::StatusOr<WorkloadSpec> ParseArmadaWorkload(const YAML::Node& root, absl::string_view file) {
  Field f(root, "", file);
  RETURN_IF_ERROR(f.ExpectMap({"name", "randomSeed", "queues"}));
  WorkloadSpec w;
  if (f.Has("randomSeed")) {
    ASSIGN_OR_RETURN(int64_t seed, f["randomSeed"].Int());
    // Armada seeds 0 from the clock; a simulation here is always reproducible, so 0 is a seed.
    w.seed = static_cast<uint64_t>(seed);
  }
  ASSIGN_OR_RETURN(auto queues, f["queues"].Elements());
  std::map<std::string, size_t> template_index;  // id -> index in w.jobs of its first copy
  std::map<std::string, std::vector<std::string>> copies;  // id -> names of its repeats
  std::vector<std::pair<size_t, Field>> dependency_fields;
  for (size_t qi = 0; qi < queues.size(); ++qi) {
    const Field& q = queues[qi];
    RETURN_IF_ERROR(q.ExpectMap({"name", "weight", "jobTemplates"}));
    QueueSpec queue;
    ASSIGN_OR_RETURN(queue.name, q["name"].String());
    if (queue.name.empty()) return q["name"].Error("must not be empty");
    for (const QueueSpec& other : w.queues) {
      if (other.name == queue.name) return q["name"].Error("duplicate queue name");
    }
    if (q.Has("weight")) {
      ASSIGN_OR_RETURN(queue.weight, q["weight"].Double());
      if (!(queue.weight > 0)) return q["weight"].Error("must be > 0");
    }
    w.queues.push_back(queue);
    ASSIGN_OR_RETURN(auto templates, q["jobTemplates"].Elements());
    for (size_t ti = 0; ti < templates.size(); ++ti) {
      const Field& t = templates[ti];
      RETURN_IF_ERROR(
          t.ExpectMap({"number", "numberSuccessful", "queue", "id", "jobSet", "queuePriority",
                       "priorityClassName", "requirements", "dependencies", "earliestSubmitTime",
                       "earliestSubmitTimeFromDependencyCompletion", "runtimeDistribution",
                       "gangCardinality", "gangNodeUniformityLabel", "repeat"}));
      JobTemplateSpec job;
      job.queue = queue.name;
      job.name = absl::StrCat(queue.name, "-", ti);  // Armada's default id: <queue>-<index>
      if (t.Has("id")) {
        ASSIGN_OR_RETURN(std::string id, t["id"].String());
        if (!id.empty()) job.name = id;
      }
      if (t.Has("queue")) {
        ASSIGN_OR_RETURN(std::string named, t["queue"].String());
        if (!named.empty() && named != queue.name) {
          return t["queue"].Error(absl::StrCat("is \"", named,
                                               "\" but the template is listed "
                                               "under queue \"",
                                               queue.name, "\""));
        }
      }
      if (t.Has("numberSuccessful")) {
        ASSIGN_OR_RETURN(int64_t n, t["numberSuccessful"].Int());
        if (n != 0) return t["numberSuccessful"].Error("is kept by the simulator: leave it 0");
      }
      if (t.Has("number")) {
        ASSIGN_OR_RETURN(int64_t number, t["number"].IntAtLeast(0));
        job.count = static_cast<int>(number);
      } else {
        job.count = 0;  // proto3: an absent number is 0
      }
      if (t.Has("jobSet")) {
        ASSIGN_OR_RETURN(job.job_set, t["jobSet"].String());
      }
      if (t.Has("queuePriority")) {
        ASSIGN_OR_RETURN(int64_t priority, t["queuePriority"].IntAtLeast(0));
        job.priority = static_cast<uint32_t>(priority);
      }
      if (t.Has("priorityClassName")) {
        ASSIGN_OR_RETURN(job.priority_class, t["priorityClassName"].String());
      }
      // requirements: schedulerobjects.PodRequirements.
      Field r = t["requirements"];
      if (t.Has("requirements")) {
        RETURN_IF_ERROR(r.ExpectMap({"nodeSelector", "affinity", "tolerations", "annotations",
                                     "preemptionPolicy", "resourceRequirements"}));
        ASSIGN_OR_RETURN(auto selector, r["nodeSelector"].StringMap());
        for (auto& [k, v] : selector) (*job.task.mutable_node_selector())[k] = v;
        ASSIGN_OR_RETURN(auto tolerations, r["tolerations"].Elements());
        for (const Field& tol : tolerations) {
          ASSIGN_OR_RETURN(*job.task.add_tolerations(), ParseToleration(tol));
        }
        if (r.Has("affinity") && r["affinity"].node().size() > 0) {
          return r["affinity"].Error(
              "cannot be honoured by the simulator: use nodeSelector (affinity is not simulated)");
        }
        if (r.Has("annotations") && r["annotations"].node().size() > 0) {
          return r["annotations"].Error(
              "cannot be honoured: annotations have no effect in the simulator (gangs: use "
              "gangCardinality and gangNodeUniformityLabel)");
        }
        if (r.Has("preemptionPolicy")) {
          ASSIGN_OR_RETURN(std::string policy, r["preemptionPolicy"].String());
          if (!policy.empty() && policy != "PreemptLowerPriority") {
            return r["preemptionPolicy"].Error(
                "only PreemptLowerPriority can be honoured (preemptibility comes from the "
                "priority class)");
          }
        }
        Field rr = r["resourceRequirements"];
        if (r.Has("resourceRequirements")) RETURN_IF_ERROR(rr.ExpectMap({"requests", "limits"}));
        ASSIGN_OR_RETURN(job.requests, rr["requests"].Resources());
        // As in Kubernetes: a limit with no request is also the request.
        ASSIGN_OR_RETURN(ResourceList limits, rr["limits"].Resources());
        for (int i = 0; i < limits.size(); ++i) {
          if (limits.Get(i).milli() > 0 && job.requests.Get(i).milli() == 0) {
            job.requests.Set(i, limits.Get(i));
          }
        }
      }
      ASSIGN_OR_RETURN(auto dependencies, t["dependencies"].Elements());
      for (size_t d = 0; d < dependencies.size(); ++d) {
        ASSIGN_OR_RETURN(std::string dep, dependencies[d].String());
        job.dependencies.push_back(dep);
      }
      if (t.Has("earliestSubmitTime")) {
        ASSIGN_OR_RETURN(job.submit_at, t["earliestSubmitTime"].Duration());
      }
      if (t.Has("earliestSubmitTimeFromDependencyCompletion")) {
        ASSIGN_OR_RETURN(job.submit_after_dependencies,
                         t["earliestSubmitTimeFromDependencyCompletion"].Duration());
      }
      // runtimeDistribution: minimum + an exponential tail of mean tailMean.
      job.duration = DurationSpec{.kind = DurationSpec::Kind::kShiftedExponential,
                                  .value = absl::ZeroDuration(),
                                  .min = absl::ZeroDuration(),
                                  .max = absl::ZeroDuration()};
      if (t.Has("runtimeDistribution")) {
        Field rd = t["runtimeDistribution"];
        RETURN_IF_ERROR(rd.ExpectMap({"minimum", "tailMean"}));
        if (rd.Has("minimum")) {
          ASSIGN_OR_RETURN(job.duration.min, rd["minimum"].Duration());
        }
        if (rd.Has("tailMean")) {
          ASSIGN_OR_RETURN(job.duration.value, rd["tailMean"].Duration());
        }
      }
      if (t.Has("gangCardinality")) {
        ASSIGN_OR_RETURN(int64_t cardinality, t["gangCardinality"].IntAtLeast(0));
        job.gang_cardinality = static_cast<uint32_t>(cardinality);
        if (cardinality > 0 && job.count % cardinality != 0) {
          return t["number"].Error(
              absl::StrCat("must be a multiple of gangCardinality (", cardinality, ")"));
        }
      }
      if (t.Has("gangNodeUniformityLabel")) {
        ASSIGN_OR_RETURN(job.gang_node_uniformity_label, t["gangNodeUniformityLabel"].String());
      }
      if (job.gang_cardinality > 0 && job.gang_node_uniformity_label.empty()) {
        job.gang_node_uniformity_label = "armadaproject.io/clusterName";  // Armada's default
      }
      // repeat: numTimes submissions of the template, `period` apart, as separate templates.
      int64_t times = 1;
      absl::Duration period = absl::ZeroDuration();
      if (t.Has("repeat")) {
        Field rep = t["repeat"];
        RETURN_IF_ERROR(rep.ExpectMap({"numTimes", "period"}));
        ASSIGN_OR_RETURN(times, rep["numTimes"].IntAtLeast(1));
        if (!rep.Has("period")) return rep["period"].Error("is required with repeat");
        ASSIGN_OR_RETURN(period, rep["period"].Duration());
      }
      if (template_index.contains(job.name)) {
        return t["id"].Error(absl::StrCat("duplicate job template id \"", job.name, "\""));
      }
      template_index[job.name] = w.jobs.size();
      const std::string id = job.name;
      for (int64_t k = 0; k < times; ++k) {
        JobTemplateSpec copy = job;
        if (times > 1) copy.name = absl::StrCat(id, "-r", k);
        copy.submit_at = job.submit_at + period * k;
        copies[id].push_back(copy.name);
        dependency_fields.emplace_back(w.jobs.size(), t["dependencies"]);
        w.jobs.push_back(std::move(copy));
      }
    }
  }
  // Dependencies name template ids; a repeated template is done when all its copies are.
  for (const auto& [index, field] : dependency_fields) {
    std::vector<std::string> resolved;
    for (size_t d = 0; d < w.jobs[index].dependencies.size(); ++d) {
      const std::string& dep = w.jobs[index].dependencies[d];
      auto it = copies.find(dep);
      if (it == copies.end()) {
        return field.At(d).Error(absl::StrCat("\"", dep, "\" is not the id of a job template"));
      }
      resolved.insert(resolved.end(), it->second.begin(), it->second.end());
    }
    w.jobs[index].dependencies = std::move(resolved);
  }
  return w;
}

absl::Status ApplyArmadaSchedulingConfig(const YAML::Node& root, absl::string_view file,
                                         ClusterSpec& cluster) {
  Field top(root, "", file);
  // The whole scheduler config.yaml, or only its scheduling section.
  Field f = top.Has("scheduling") ? top["scheduling"] : top;
  if (!f.IsMap()) return f.Error("must be a map");
  // Keys with no bearing on a simulated outcome (server operation, metrics, resolutions).
  static const std::set<std::string> kNoEffect = {"supportedResourceTypes",
                                                  "enableAssertions",
                                                  "executorTimeout",
                                                  "maxUnacknowledgedJobsPerExecutor",
                                                  "executorUpdateFrequency",
                                                  "maxRetries",
                                                  "nodeIdLabel",
                                                  "gangIdAnnotation",
                                                  "gangCardinalityAnnotation",
                                                  "gangNodeUniformityLabelAnnotation",
                                                  "maxJobSchedulingContextsPerExecutor",
                                                  "maxPodSpecSizeBytes",
                                                  "minJobResources",
                                                  "defaultJobLimits",
                                                  "defaultJobTolerations",
                                                  "defaultJobTolerationsByPriorityClass",
                                                  "defaultJobTolerationsByResourceRequest",
                                                  "disableSubmitCheck"};
  YAML::Node out(YAML::NodeType::Map);
  // Only the resources Armada's DRF considers count: the others get multiplier 0.
  std::set<std::string> considered;
  bool has_considered = false;
  for (const auto& kv : f.node()) {
    const std::string key = kv.first.as<std::string>();
    Field v = f[key];
    if (kNoEffect.contains(key)) continue;
    if (key == "priorityClasses") {
      ASSIGN_OR_RETURN(auto classes, v.Entries());
      for (auto& [name, pc] : classes) {
        RETURN_IF_ERROR(pc.ExpectMap({"priority", "preemptible", "maximumResourceFractionPerQueue",
                                      "maximumResourceFractionPerQueueByPool"}));
        YAML::Node c = out["priorityClasses"][name];
        if (pc.Has("priority")) {
          ASSIGN_OR_RETURN(int64_t priority, pc["priority"].Int());
          c["priority"] = priority;
        } else {
          c["priority"] = 0;
        }
        if (pc.Has("preemptible")) {
          ASSIGN_OR_RETURN(bool preemptible, pc["preemptible"].Bool());
          c["preemptible"] = preemptible;
        }
        if (pc.Has("maximumResourceFractionPerQueue")) {
          c["maxFractionPerQueue"] = YAML::Clone(pc["maximumResourceFractionPerQueue"].node());
        }
        ASSIGN_OR_RETURN(auto by_pool, pc["maximumResourceFractionPerQueueByPool"].Entries());
        for (auto& [pool, fractions] : by_pool) {
          c["pools"][pool]["maxFractionPerQueue"] = YAML::Clone(fractions.node());
        }
      }
    } else if (key == "defaultPriorityClassName") {
      ASSIGN_OR_RETURN(std::string name, v.String());
      out["defaultPriorityClass"] = name;
    } else if (key == "dominantResourceFairnessResourcesToConsider" ||
               key == "experimentalDominantResourceFairnessResourcesToConsider") {
      has_considered = true;
      ASSIGN_OR_RETURN(auto names, v.Elements());
      for (const Field& n : names) {
        if (n.IsMap()) {
          RETURN_IF_ERROR(n.ExpectMap({"name", "multiplier"}));
          ASSIGN_OR_RETURN(std::string name, n["name"].String());
          double multiplier = 1;
          if (n.Has("multiplier")) {
            ASSIGN_OR_RETURN(multiplier, n["multiplier"].NonNegativeDouble());
          }
          considered.insert(name);
          out["resourceMultipliers"][name] = multiplier;
        } else {
          ASSIGN_OR_RETURN(std::string name, n.String());
          considered.insert(name);
          out["resourceMultipliers"][name] = 1;
        }
      }
    } else if (key == "maximumResourceFractionToSchedule") {
      out["maxFractionToSchedule"] = YAML::Clone(v.node());
    } else if (key == "protectedFractionOfFairShare") {
      ASSIGN_OR_RETURN(double fraction, v.NonNegativeDouble());
      out["protectedFractionOfFairShare"] = fraction;
    } else if (key == "maximumSchedulingRate" || key == "maximumPerQueueSchedulingRate" ||
               key == "maximumSchedulingBurst" || key == "maximumPerQueueSchedulingBurst") {
      const bool per_queue = key.find("PerQueue") != std::string::npos;
      const bool is_rate = key.ends_with("Rate");
      ASSIGN_OR_RETURN(std::string text, v.String());
      std::string lower = absl::AsciiStrToLower(text);
      YAML::Node bucket = out[per_queue ? "queueRateLimit" : "rateLimit"];
      if (lower == "+inf" || lower == "inf") {
        if (!is_rate) return v.Error("must be an integer");
        bucket["rate"] = 0;  // Regatta's "no limit"
        continue;
      }
      ASSIGN_OR_RETURN(double value, v.NonNegativeDouble());
      if (is_rate) {
        bucket["rate"] = value;
      } else {
        // A burst past any job count is no limit on bursts.
        bucket["burst"] = static_cast<int64_t>(std::min(value, 1e15));
      }
    } else if (key == "indexedResources") {
      ASSIGN_OR_RETURN(auto resources, v.Elements());
      for (const Field& res : resources) {
        if (res.IsMap()) {
          RETURN_IF_ERROR(res.ExpectMap({"name", "resolution"}));
          ASSIGN_OR_RETURN(std::string name, res["name"].String());
          out["indexedResources"].push_back(name);
        } else {
          ASSIGN_OR_RETURN(std::string name, res.String());
          out["indexedResources"].push_back(name);
        }
      }
    } else if (key == "indexedNodeLabels") {
      ASSIGN_OR_RETURN(auto labels, v.Elements());
      for (const Field& l : labels) {
        ASSIGN_OR_RETURN(std::string name, l.String());
        out["indexedNodeLabels"].push_back(name);
      }
    } else if (key == "nodeEvictionProbability") {
      // Regatta evicts every preemptible job each round (and places it again if it still fits).
      ASSIGN_OR_RETURN(double p, v.Double());
      if (p != 1.0) return v.Error("only 1.0 can be honoured (every preemptible job is evicted)");
    } else if (key == "maxQueueLookback") {
      ASSIGN_OR_RETURN(int64_t lookback, v.Int());
      if (lookback != 0) {
        return v.Error("cannot be honoured: Regatta looks at every queued job (leave it 0)");
      }
    } else if (key == "enablePreferLargeJobOrdering" || key == "disableScheduling") {
      ASSIGN_OR_RETURN(bool on, v.Bool());
      if (on) return v.Error("cannot be honoured by the simulator (leave it false)");
    } else if (key == "maximumGangsToSchedule" || key == "maxGangsToSchedule") {
      ASSIGN_OR_RETURN(int64_t n, v.IntAtLeast(1));
      out["gangLookahead"] = n;
    } else {
      return v.Error("cannot be honoured by the simulator (not a setting it knows how to apply)");
    }
  }
  if (has_considered) {
    for (const PoolSpec& pool : cluster.pools) {
      for (const NodeGroupSpec& group : pool.node_groups) {
        for (int i = 0; i < group.resources.size(); ++i) {
          if (group.resources.Get(i).milli() <= 0) continue;
          std::string name(ResourceNames::Global().Name(i));
          if (!considered.contains(name)) out["resourceMultipliers"][name] = 0;
        }
      }
    }
  }
  if (!out["priorityClasses"]) {
    ASSIGN_OR_RETURN(YAML::Node defaults, LoadYaml(kArmadaDefaultScheduling));
    out["priorityClasses"] = defaults["priorityClasses"];
    if (!out["defaultPriorityClass"]) out["defaultPriorityClass"] = "armada-default";
  }
  absl::StatusOr<SchedulingPolicy> policy = ParseSchedulingPolicy(out, "scheduling");
  if (!policy.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": ", policy.status().message(), " (as translated from Armada's keys)"));
  }
  cluster.policy = *std::move(policy);
  return absl::OkStatus();
}

absl::Status LoadArmadaSchedulingConfigFile(absl::string_view path, ClusterSpec& cluster) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  absl::StatusOr<YAML::Node> root = LoadYaml(text);
  if (!root.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", root.status().message()));
  }
  return ApplyArmadaSchedulingConfig(*root, path, cluster);
}

}  // namespace regatta::scheduler::sim
