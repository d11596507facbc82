#include "src/common/pod/pod.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace regatta::pod {
namespace {

using regatta::v1::Container;
using regatta::v1::EnvVar;
using regatta::v1::PodSpec;
using regatta::v1::TaskSpec;

constexpr char kSupportedFieldPaths[] =
    "metadata.name, metadata.namespace, metadata.uid, metadata.labels['KEY'], "
    "metadata.annotations['KEY'], spec.nodeName, spec.serviceAccountName, status.podIP, "
    "status.hostIP";

void AddQuantities(const google::protobuf::Map<std::string, std::string>& from,
                   std::map<std::string, Quantity>& to) {
  for (const auto& [name, text] : from) {
    if (to.count(name)) continue;
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    if (q.ok()) to.emplace(name, *q);
  }
}

// Duration → whole seconds, rounded up so that a deadline never shrinks.
int64_t CeilSeconds(const google::protobuf::Duration& d) {
  return d.seconds() + (d.nanos() > 0 ? 1 : 0);
}

// "metadata.labels['KEY']" → KEY when `path` has that shape for `map_name`.
bool Subscript(absl::string_view path, absl::string_view map_name, std::string* key) {
  if (!absl::ConsumePrefix(&path, map_name) || !absl::ConsumePrefix(&path, "['") ||
      !absl::ConsumeSuffix(&path, "']") || path.empty() || absl::StrContains(path, '\'')) {
    return false;
  }
  *key = std::string(path);
  return true;
}

std::string Lookup(const std::map<std::string, std::string>& map, const std::string& key) {
  auto it = map.find(key);
  return it == map.end() ? "" : it->second;
}

}  // namespace

PodSpec PodOf(const TaskSpec& task) {
  if (task.has_pod_spec()) {
    PodSpec pod = task.pod_spec();
    // secret_env in every container, below the container's own env (sorted, as below).
    std::map<std::string, std::string> secrets(task.secret_env().begin(), task.secret_env().end());
    auto add_secrets = [&](Container& container) {
      for (const auto& secret : secrets) {
        const std::string& name = secret.first;
        const bool own = std::any_of(container.env().begin(), container.env().end(),
                                     [&](const EnvVar& e) { return e.name() == name; });
        if (own) continue;
        EnvVar* var = container.add_env();
        var->set_name(name);
        var->set_value(secret.second);
      }
    };
    for (Container& c : *pod.mutable_init_containers()) add_secrets(c);
    for (Container& c : *pod.mutable_containers()) add_secrets(c);
    return pod;
  }
  PodSpec pod;
  pod.set_restart_policy("Never");
  Container* container = pod.add_containers();
  container->set_name(std::string(kMainContainerName));
  container->set_image(task.image());
  *container->mutable_command() = task.command();
  *container->mutable_args() = task.args();
  container->set_working_dir(task.working_dir());
  // Map order is unspecified: sorted, so that the same task always gives the same pod.
  std::vector<std::pair<std::string, std::string>> env(task.env().begin(), task.env().end());
  env.insert(env.end(), task.secret_env().begin(), task.secret_env().end());
  std::sort(env.begin(), env.end());
  for (const auto& [name, value] : env) {
    auto* var = container->add_env();
    var->set_name(name);
    var->set_value(value);
  }
  if (task.has_resources()) *container->mutable_resources() = task.resources();
  if (task.active_deadline().seconds() > 0 || task.active_deadline().nanos() > 0) {
    pod.set_active_deadline_seconds(CeilSeconds(task.active_deadline()));
  }
  if (task.has_termination_grace_period()) {
    pod.set_termination_grace_period_seconds(CeilSeconds(task.termination_grace_period()));
  }
  *pod.mutable_node_selector() = task.node_selector();
  *pod.mutable_tolerations() = task.tolerations();
  if (!task.node_affinity().required_terms().empty()) {
    *pod.mutable_affinity()
         ->mutable_node_affinity()
         ->mutable_required_during_scheduling_ignored_during_execution()
         ->mutable_node_selector_terms() = task.node_affinity().required_terms();
  }
  return pod;
}

std::map<std::string, Quantity> ContainerRequests(const Container& container) {
  std::map<std::string, Quantity> out;
  AddQuantities(container.resources().requests(), out);
  AddQuantities(container.resources().limits(), out);
  return out;
}

std::map<std::string, Quantity> EffectiveRequests(const PodSpec& pod) {
  std::map<std::string, Quantity> total;
  for (const Container& c : pod.containers()) {
    for (const auto& [name, q] : ContainerRequests(c)) total[name] = total[name] + q;
  }
  for (const Container& c : pod.init_containers()) {
    for (const auto& [name, q] : ContainerRequests(c)) {
      Quantity& have = total[name];
      have = std::max(have, q);
    }
  }
  return total;
}

absl::StatusOr<std::string> ResolveFieldRef(absl::string_view field_path,
                                            const PodMetadata& metadata) {
  if (field_path == "metadata.name") return metadata.name;
  if (field_path == "metadata.namespace") return metadata.namespace_;
  if (field_path == "metadata.uid") return metadata.uid;
  if (field_path == "spec.nodeName") return metadata.node_name;
  if (field_path == "spec.serviceAccountName") return metadata.service_account;
  if (field_path == "status.podIP") return metadata.pod_ip;
  if (field_path == "status.hostIP") return metadata.host_ip;
  std::string key;
  if (Subscript(field_path, "metadata.labels", &key)) return Lookup(metadata.labels, key);
  if (Subscript(field_path, "metadata.annotations", &key)) {
    return Lookup(metadata.annotations, key);
  }
  return absl::InvalidArgumentError(absl::StrCat("unsupported fieldPath \"", field_path,
                                                 "\" (supported: ", kSupportedFieldPaths, ")"));
}

absl::Status CheckFieldPath(absl::string_view field_path) {
  return ResolveFieldRef(field_path, PodMetadata()).status();
}

bool IsPodModelMessage(const google::protobuf::Descriptor* descriptor) {
  return descriptor != nullptr && descriptor->file()->name() == "regatta/v1/pod.proto";
}

std::string UnsupportedFieldProblem(const google::protobuf::Descriptor* descriptor) {
  std::vector<std::string> supported;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (descriptor->field(i)->name() != "name") {
      supported.push_back(descriptor->field(i)->json_name());
    }
  }
  return absl::StrCat(
      "not supported by Regatta's pod model (supported: ", absl::StrJoin(supported, ", "), ")");
}

}  // namespace regatta::pod
