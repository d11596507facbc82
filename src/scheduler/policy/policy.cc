#include "src/scheduler/policy/policy.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/common/resources.h"
#include "src/common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler {
namespace {

std::string Key(absl::string_view base, absl::string_view key) {
  return base.empty() ? std::string(key) : absl::StrCat(base, ".", key);
}

template <typename T>
absl::StatusOr<T> As(const YAML::Node& node, const std::string& path) {
  try {
    return node.as<T>();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

// Sets `out` from node[key] if present.
template <typename T>
absl::Status Optional(const YAML::Node& node, absl::string_view key, absl::string_view base,
                      T* out) {
  const YAML::Node child = node[std::string(key)];
  if (!child || child.IsNull()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*out, As<T>(child, Key(base, key)));
  return absl::OkStatus();
}

absl::Status CheckKeys(const YAML::Node& node, const std::string& path,
                       std::initializer_list<absl::string_view> known) {
  if (!node.IsMap()) return absl::InvalidArgumentError(absl::StrCat(path, ": expected a mapping"));
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return absl::InvalidArgumentError(absl::StrCat(Key(path, key), ": unknown key"));
    }
  }
  return absl::OkStatus();
}

// resource name -> fraction in (0, 1].
absl::StatusOr<std::map<std::string, double>> Fractions(const YAML::Node& node,
                                                        const std::string& path) {
  ASSIGN_OR_RETURN(auto fractions, (As<std::map<std::string, double>>(node, path)));
  for (const auto& [resource, fraction] : fractions) {
    if (!IsValidResourceName(resource)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Key(path, resource), ": not a valid resource name"));
    }
    if (!(fraction > 0 && fraction <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Key(path, resource), ": must be a fraction in (0, 1], got ", fraction));
    }
  }
  return fractions;
}

absl::Status OptionalFractions(const YAML::Node& node, absl::string_view key,
                               absl::string_view base, std::map<std::string, double>* out) {
  const YAML::Node child = node[std::string(key)];
  if (!child || child.IsNull()) return absl::OkStatus();
  ASSIGN_OR_RETURN(*out, Fractions(child, Key(base, key)));
  return absl::OkStatus();
}

absl::StatusOr<RateLimit> ParseRateLimit(const YAML::Node& node, const std::string& path) {
  RETURN_IF_ERROR(CheckKeys(node, path, {"rate", "burst"}));
  RateLimit limit;
  RETURN_IF_ERROR(Optional(node, "rate", path, &limit.rate));
  RETURN_IF_ERROR(Optional(node, "burst", path, &limit.burst));
  if (!(limit.rate >= 0 && std::isfinite(limit.rate))) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".rate: must be a finite number >= 0 (0: no limit)"));
  }
  if (limit.rate > 0 && limit.burst < 1) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".burst: must be >= 1 with a rate"));
  }
  return limit;
}

absl::StatusOr<PriorityClassPolicy> ParseClass(const std::string& name, const YAML::Node& node,
                                               const std::string& path) {
  RETURN_IF_ERROR(
      CheckKeys(node, path, {"priority", "preemptible", "maxFractionPerQueue", "pools"}));
  PriorityClassPolicy pc;
  pc.name = name;
  if (!node["priority"])
    return absl::InvalidArgumentError(absl::StrCat(path, ".priority: required"));
  ASSIGN_OR_RETURN(pc.priority, As<int32_t>(node["priority"], Key(path, "priority")));
  RETURN_IF_ERROR(Optional(node, "preemptible", path, &pc.preemptible));
  RETURN_IF_ERROR(OptionalFractions(node, "maxFractionPerQueue", path, &pc.max_fraction_per_queue));
  if (const YAML::Node pools = node["pools"]; pools && !pools.IsNull()) {
    if (!pools.IsMap()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".pools: expected a mapping"));
    }
    for (const auto& kv : pools) {
      const std::string pool = kv.first.as<std::string>();
      const std::string pool_path = absl::StrCat(path, ".pools.", pool);
      RETURN_IF_ERROR(CheckKeys(kv.second, pool_path, {"maxFractionPerQueue"}));
      std::map<std::string, double> fractions;
      RETURN_IF_ERROR(OptionalFractions(kv.second, "maxFractionPerQueue", pool_path, &fractions));
      pc.max_fraction_per_queue_by_pool[pool] = std::move(fractions);
    }
  }
  return pc;
}

absl::StatusOr<std::vector<std::string>> Names(const YAML::Node& node, const std::string& path) {
  ASSIGN_OR_RETURN(auto names, As<std::vector<std::string>>(node, path));
  for (const std::string& n : names) {
    if (n.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": empty name"));
  }
  return names;
}

absl::flat_hash_map<int, double> Interned(const std::map<std::string, double>& by_name) {
  absl::flat_hash_map<int, double> out;
  for (const auto& [name, value] : by_name) out[ResourceNames::Global().Intern(name)] = value;
  return out;
}

}  // namespace

absl::StatusOr<SchedulingPolicy> ParseSchedulingPolicy(const YAML::Node& s,
                                                       absl::string_view base_view) {
  const std::string base(base_view);
  SchedulingPolicy p;
  if (!s || s.IsNull()) return absl::InvalidArgumentError(absl::StrCat(base, ": required"));
  if (!s.IsMap()) return absl::InvalidArgumentError(absl::StrCat(base, ": expected a mapping"));

  const YAML::Node classes = s["priorityClasses"];
  const std::string classes_path = Key(base, "priorityClasses");
  if (!classes || !classes.IsMap() || classes.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(classes_path, ": at least one class is needed"));
  }
  for (const auto& kv : classes) {
    const std::string name = kv.first.as<std::string>();
    ASSIGN_OR_RETURN(p.priority_classes[name],
                     ParseClass(name, kv.second, absl::StrCat(classes_path, ".", name)));
  }
  p.default_priority_class = p.priority_classes.begin()->first;
  RETURN_IF_ERROR(Optional(s, "defaultPriorityClass", base, &p.default_priority_class));
  if (!p.priority_classes.contains(p.default_priority_class)) {
    return absl::InvalidArgumentError(absl::StrCat(Key(base, "defaultPriorityClass"), ": \"",
                                                   p.default_priority_class, "\" is not one of ",
                                                   classes_path));
  }
  RETURN_IF_ERROR(Optional(s, "resourceMultipliers", base, &p.resource_multipliers));
  for (const auto& [name, multiplier] : p.resource_multipliers) {
    // Shares are allocated / total x multiplier: an infinite one makes them NaN.
    if (!(multiplier >= 0 && multiplier <= 1e6)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Key(base, "resourceMultipliers"), ".", name, ": must be between 0 and 1e6"));
    }
  }
  RETURN_IF_ERROR(Optional(s, "enableFairSharePreemption", base, &p.enable_fair_share_preemption));
  RETURN_IF_ERROR(
      Optional(s, "protectedFractionOfFairShare", base, &p.protected_fraction_of_fair_share));
  if (!(p.protected_fraction_of_fair_share >= 0 && p.protected_fraction_of_fair_share <= 100)) {
    return absl::InvalidArgumentError(
        absl::StrCat(Key(base, "protectedFractionOfFairShare"), ": must be between 0 and 100"));
  }
  if (const YAML::Node n = s["indexedResources"]; n && !n.IsNull()) {
    ASSIGN_OR_RETURN(p.indexed_resources, Names(n, Key(base, "indexedResources")));
    if (p.indexed_resources.empty() || p.indexed_resources.size() > 4) {
      return absl::InvalidArgumentError(
          absl::StrCat(Key(base, "indexedResources"), ": between 1 and 4 resource names"));
    }
  }
  if (const YAML::Node n = s["indexedNodeLabels"]; n && !n.IsNull()) {
    ASSIGN_OR_RETURN(p.indexed_node_labels, Names(n, Key(base, "indexedNodeLabels")));
  }
  RETURN_IF_ERROR(OptionalFractions(s, "maxFractionToSchedule", base, &p.max_fraction_to_schedule));
  RETURN_IF_ERROR(OptionalFractions(s, "maxFractionToSchedulePerQueue", base,
                                    &p.max_fraction_to_schedule_per_queue));
  if (const YAML::Node n = s["rateLimit"]; n && !n.IsNull()) {
    ASSIGN_OR_RETURN(p.rate_limit, ParseRateLimit(n, Key(base, "rateLimit")));
  }
  if (const YAML::Node n = s["queueRateLimit"]; n && !n.IsNull()) {
    ASSIGN_OR_RETURN(p.queue_rate_limit, ParseRateLimit(n, Key(base, "queueRateLimit")));
  }
  RETURN_IF_ERROR(Optional(s, "gangLookahead", base, &p.gang_lookahead));
  if (p.gang_lookahead < 1) {
    return absl::InvalidArgumentError(absl::StrCat(Key(base, "gangLookahead"), ": must be >= 1"));
  }
  return p;
}

PoolRoundConfig MakePoolRoundConfig(const SchedulingPolicy& policy, absl::string_view pool,
                                    std::vector<std::string>* class_names) {
  PoolRoundConfig config;
  class_names->clear();
  for (const auto& [name, pc] : policy.priority_classes) {
    PriorityClass out;
    out.name = name;
    out.priority = pc.priority;
    out.preemptible = pc.preemptible;
    auto by_pool = pc.max_fraction_per_queue_by_pool.find(std::string(pool));
    out.max_fraction_per_queue =
        Interned(by_pool != pc.max_fraction_per_queue_by_pool.end() ? by_pool->second
                                                                    : pc.max_fraction_per_queue);
    config.priority_classes.push_back(std::move(out));
    class_names->push_back(name);
  }
  config.resource_multipliers = Interned(policy.resource_multipliers);
  config.indexed_resources.clear();
  for (const std::string& r : policy.indexed_resources) {
    config.indexed_resources.push_back(ResourceNames::Global().Intern(r));
  }
  config.indexed_node_labels = policy.indexed_node_labels;
  config.enable_fair_share_preemption = policy.enable_fair_share_preemption;
  config.protected_fraction_of_fair_share = policy.protected_fraction_of_fair_share;
  config.max_fraction_to_schedule = Interned(policy.max_fraction_to_schedule);
  config.max_fraction_to_schedule_per_queue = Interned(policy.max_fraction_to_schedule_per_queue);
  config.gang_lookahead = policy.gang_lookahead;
  return config;
}

}  // namespace regatta::scheduler
