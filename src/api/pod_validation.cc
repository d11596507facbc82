// Submit validation and derivation for tasks that carry a pod spec. Paths under "podSpec" use
// the Kubernetes (JSON) names users write, e.g. "items[0].task.podSpec.containers[1].ports[0]".

#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/api/validation_internal.h"
#include "src/common/error_text.h"
#include "src/common/pod/pod.h"
#include "src/common/status_macros.h"

namespace regatta::api::internal {

bool IsDns1123Label(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  auto ok = [](char c) { return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-'; };
  for (char c : name) {
    if (!ok(c)) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

namespace {

using google::protobuf::util::MessageDifferencer;
using regatta::v1::Container;
using regatta::v1::JobSubmitRequestItem;
using regatta::v1::PodSpec;
using regatta::v1::TaskSpec;

constexpr int kMaxPort = 65535;

absl::Status CheckLabelName(absl::string_view name, const std::string& field) {
  if (name.empty()) return Invalid(field, "required");
  if (IsDns1123Label(name)) return absl::OkStatus();
  return Invalid(field, absl::StrCat("\"", Abbreviate(name),
                                     "\" is not a DNS-1123 label (1-63 characters of a-z, 0-9 "
                                     "and '-', starting and ending with a letter or digit)"));
}

absl::Status CheckOneOf(absl::string_view value, const std::set<std::string>& allowed,
                        const std::string& field) {
  if (allowed.count(std::string(value))) return absl::OkStatus();
  std::string names;
  for (const std::string& a : allowed) {
    if (!a.empty()) absl::StrAppend(&names, names.empty() ? "" : ", ", a);
  }
  return Invalid(field, absl::StrCat("unsupported value \"", Abbreviate(value), "\" (supported: ",
                                     names, allowed.count("") ? ", or empty" : "", ")"));
}

// An absolute path without control characters.
absl::Status CheckAbsolutePath(absl::string_view path, const std::string& field) {
  if (path.empty()) return Invalid(field, "required");
  RETURN_IF_ERROR(CheckName(path, field, kMaxPathBytes));
  if (path.front() != '/') return Invalid(field, absl::StrCat("\"", path, "\" is not absolute"));
  return absl::OkStatus();
}

// The flat task fields a pod spec replaces: refused rather than silently ignored. (secret_env is
// not one: it goes into every container of the pod, see pod::PodOf.)
absl::Status CheckNoFlatFields(const TaskSpec& task, absl::string_view path) {
  const std::pair<const char*, bool> flat[] = {
      {"image", !task.image().empty()},
      {"command", !task.command().empty()},
      {"args", !task.args().empty()},
      {"env", !task.env().empty()},
      {"working_dir", !task.working_dir().empty()},
      {"resources", !task.resources().requests().empty() || !task.resources().limits().empty()},
  };
  for (const auto& [name, set] : flat) {
    if (set) {
      return Invalid(absl::StrCat(path, ".", name),
                     "not allowed with podSpec (give it on the pod's containers)");
    }
  }
  return absl::OkStatus();
}

bool IsZero(const google::protobuf::Duration& d) { return d.seconds() == 0 && d.nanos() == 0; }

template <typename T>
bool SameRepeated(const google::protobuf::RepeatedPtrField<T>& a,
                  const google::protobuf::RepeatedPtrField<T>& b) {
  if (a.size() != b.size()) return false;
  for (int i = 0; i < a.size(); ++i) {
    if (!MessageDifferencer::Equals(a[i], b[i])) return false;
  }
  return true;
}

absl::Status Conflict(absl::string_view pod_field, absl::string_view task_field) {
  return Invalid(pod_field, absl::StrCat("differs from ", task_field,
                                         " (give it in one place, preferably the pod spec)"));
}

// A duration equal to a whole number of seconds.
bool SameSeconds(const google::protobuf::Duration& d, int64_t seconds) {
  return d.nanos() == 0 && d.seconds() == seconds;
}

// Fields the task and the pod spec both have: when both set them, they must agree.
absl::Status CheckNoConflicts(const JobSubmitRequestItem& item, absl::string_view task,
                              absl::string_view pod_path) {
  const TaskSpec& spec = item.task();
  const PodSpec& pod = spec.pod_spec();
  if (!spec.node_selector().empty() && !pod.node_selector().empty()) {
    std::map<std::string, std::string> a(spec.node_selector().begin(), spec.node_selector().end());
    std::map<std::string, std::string> b(pod.node_selector().begin(), pod.node_selector().end());
    if (a != b) {
      return Conflict(absl::StrCat(pod_path, ".nodeSelector"),
                      absl::StrCat(task, ".node_selector"));
    }
  }
  if (!spec.tolerations().empty() && !pod.tolerations().empty() &&
      !SameRepeated(spec.tolerations(), pod.tolerations())) {
    return Conflict(absl::StrCat(pod_path, ".tolerations"), absl::StrCat(task, ".tolerations"));
  }
  const auto& pod_terms = pod.affinity()
                              .node_affinity()
                              .required_during_scheduling_ignored_during_execution()
                              .node_selector_terms();
  if (!spec.node_affinity().required_terms().empty() && !pod_terms.empty() &&
      !SameRepeated(spec.node_affinity().required_terms(), pod_terms)) {
    return Conflict(absl::StrCat(pod_path, ".affinity.nodeAffinity"),
                    absl::StrCat(task, ".node_affinity"));
  }
  if (!IsZero(spec.active_deadline()) && pod.has_active_deadline_seconds() &&
      !SameSeconds(spec.active_deadline(), pod.active_deadline_seconds())) {
    return Conflict(absl::StrCat(pod_path, ".activeDeadlineSeconds"),
                    absl::StrCat(task, ".active_deadline"));
  }
  if (!IsZero(spec.termination_grace_period()) && pod.has_termination_grace_period_seconds() &&
      !SameSeconds(spec.termination_grace_period(), pod.termination_grace_period_seconds())) {
    return Conflict(absl::StrCat(pod_path, ".terminationGracePeriodSeconds"),
                    absl::StrCat(task, ".termination_grace_period"));
  }
  if (!item.priority_class().empty() && !pod.priority_class_name().empty() &&
      item.priority_class() != pod.priority_class_name()) {
    return Invalid(absl::StrCat(pod_path, ".priorityClassName"),
                   absl::StrCat("\"", Abbreviate(pod.priority_class_name()),
                                "\" differs from the job's priority_class \"",
                                Abbreviate(item.priority_class()), "\" (give it in one place)"));
  }
  return absl::OkStatus();
}

// Fields a client built against a newer schema may send over gRPC: proto3 keeps them as unknown
// fields, which the pod model must refuse rather than drop.
absl::Status CheckNoUnknownFields(const google::protobuf::Message& message,
                                  const std::string& path) {
  const auto* reflection = message.GetReflection();
  const auto& unknown = reflection->GetUnknownFields(message);
  if (!unknown.empty()) {
    return Invalid(path, absl::StrCat("unknown field number ", unknown.field(0).number(), " (",
                                      pod::UnsupportedFieldProblem(message.GetDescriptor()), ")"));
  }
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const auto* field : fields) {
    if (field->cpp_type() != google::protobuf::FieldDescriptor::CPPTYPE_MESSAGE ||
        field->is_map()) {
      continue;
    }
    const std::string child = absl::StrCat(path, ".", field->json_name());
    if (!field->is_repeated()) {
      RETURN_IF_ERROR(CheckNoUnknownFields(reflection->GetMessage(message, field), child));
      continue;
    }
    for (int i = 0; i < reflection->FieldSize(message, field); ++i) {
      RETURN_IF_ERROR(CheckNoUnknownFields(reflection->GetRepeatedMessage(message, field, i),
                                           absl::StrCat(child, "[", i, "]")));
    }
  }
  return absl::OkStatus();
}

struct PodContext {
  // Volume name → its path, for mounts.
  absl::flat_hash_map<std::string, std::string> volumes;
  // Container name → path of the container that has it (unique across init and main).
  absl::flat_hash_map<std::string, std::string> containers;
  // "port/protocol" → the path of the port that serves it on the host network.
  absl::flat_hash_map<std::string, std::string> host_ports;
};

absl::Status CheckEnv(const Container& c, const std::string& path) {
  for (int i = 0; i < c.env_size(); ++i) {
    const auto& var = c.env(i);
    const std::string field = absl::StrCat(path, ".env[", i, "]");
    if (var.name().empty()) return Invalid(absl::StrCat(field, ".name"), "required");
    if (var.name().find('=') != std::string::npos || HasControlChar(var.name())) {
      return Invalid(absl::StrCat(field, ".name"),
                     "invalid variable name (with '=' or a control character)");
    }
    RETURN_IF_ERROR(CheckNoNul(var.value(), absl::StrCat(field, ".value")));
    if (!var.has_value_from()) continue;
    const std::string from = absl::StrCat(field, ".valueFrom");
    if (!var.value().empty()) return Invalid(from, "not allowed together with value");
    if (!var.value_from().has_field_ref()) {
      return Invalid(from, "fieldRef is required (the only source Regatta's pod model supports)");
    }
    const auto& ref = var.value_from().field_ref();
    if (!ref.api_version().empty() && ref.api_version() != "v1") {
      return Invalid(absl::StrCat(from, ".fieldRef.apiVersion"),
                     absl::StrCat("\"", Abbreviate(ref.api_version()), "\" is not v1"));
    }
    if (absl::Status s = pod::CheckFieldPath(ref.field_path()); !s.ok()) {
      return Invalid(absl::StrCat(from, ".fieldRef.fieldPath"), s.message());
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPorts(const Container& c, const std::string& path, PodContext& pod) {
  static const std::set<std::string> kProtocols = {"", "TCP", "UDP", "SCTP"};
  for (int i = 0; i < c.ports_size(); ++i) {
    const auto& port = c.ports(i);
    const std::string field = absl::StrCat(path, ".ports[", i, "]");
    if (port.container_port() < 1 || port.container_port() > kMaxPort) {
      return Invalid(absl::StrCat(field, ".containerPort"),
                     absl::StrCat(port.container_port(), " is not a port (1-65535)"));
    }
    if (port.host_port() != 0 && port.host_port() != port.container_port()) {
      return Invalid(absl::StrCat(field, ".hostPort"),
                     absl::StrCat("must equal containerPort ", port.container_port(),
                                  ": pods run on the host network"));
    }
    RETURN_IF_ERROR(CheckOneOf(port.protocol(), kProtocols, absl::StrCat(field, ".protocol")));
    if (!port.name().empty() && (port.name().size() > 15 || !IsDns1123Label(port.name()))) {
      return Invalid(absl::StrCat(field, ".name"),
                     absl::StrCat("\"", Abbreviate(port.name()),
                                  "\" is not a port name (1-15 characters of a-z, 0-9 and '-')"));
    }
    const std::string key =
        absl::StrCat(port.container_port(), "/", port.protocol().empty() ? "TCP" : port.protocol());
    auto [it, inserted] = pod.host_ports.try_emplace(key, field);
    if (!inserted) {
      return Invalid(absl::StrCat(field, ".containerPort"),
                     absl::StrCat(key, " is also declared by ", it->second,
                                  " (one host network: each port once per pod)"));
    }
  }
  return absl::OkStatus();
}

// Requests and limits parse; where both name a resource they are equal (Armada's rule). A limit
// alone stands for the request (Kubernetes defaulting).
absl::Status CheckContainerResources(const Container& c, const std::string& path) {
  const std::string field = absl::StrCat(path, ".resources");
  ASSIGN_OR_RETURN(auto requests,
                   ParseResourceMap(c.resources().requests(), absl::StrCat(field, ".requests")));
  ASSIGN_OR_RETURN(auto limits,
                   ParseResourceMap(c.resources().limits(), absl::StrCat(field, ".limits")));
  for (const auto& [name, limit] : limits) {
    auto it = requests.find(name);
    if (it == requests.end() || it->second == limit) continue;
    return Invalid(Entry(absl::StrCat(field, ".limits"), name),
                   absl::StrCat(limit.ToString(), " differs from the request ",
                                it->second.ToString(), "; Regatta requires requests = limits"));
  }
  return absl::OkStatus();
}

absl::Status CheckMounts(const Container& c, const std::string& path, const PodContext& pod) {
  std::set<std::string> mount_paths;
  for (int i = 0; i < c.volume_mounts_size(); ++i) {
    const auto& mount = c.volume_mounts(i);
    const std::string field = absl::StrCat(path, ".volumeMounts[", i, "]");
    if (mount.name().empty()) return Invalid(absl::StrCat(field, ".name"), "required");
    if (!pod.volumes.contains(mount.name())) {
      return Invalid(absl::StrCat(field, ".name"),
                     absl::StrCat("no volume named \"", Abbreviate(mount.name()), "\""));
    }
    RETURN_IF_ERROR(CheckAbsolutePath(mount.mount_path(), absl::StrCat(field, ".mountPath")));
    if (!mount_paths.insert(mount.mount_path()).second) {
      return Invalid(absl::StrCat(field, ".mountPath"),
                     absl::StrCat("\"", Abbreviate(mount.mount_path()), "\" is mounted twice"));
    }
    const std::string sub = absl::StrCat(field, ".subPath");
    RETURN_IF_ERROR(CheckName(mount.sub_path(), sub, kMaxPathBytes));
    if (absl::StartsWith(mount.sub_path(), "/")) return Invalid(sub, "must be a relative path");
    for (absl::string_view part : absl::StrSplit(mount.sub_path(), '/')) {
      if (part == "..") return Invalid(sub, "must not contain \"..\"");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckContainer(const Container& c, const std::string& path, PodContext& pod) {
  static const std::set<std::string> kPullPolicies = {"", "Always", "IfNotPresent", "Never"};
  const std::string name_field = absl::StrCat(path, ".name");
  RETURN_IF_ERROR(CheckLabelName(c.name(), name_field));
  auto [it, inserted] = pod.containers.try_emplace(c.name(), path);
  if (!inserted) {
    return Invalid(name_field, absl::StrCat("\"", c.name(), "\" is also the name of ", it->second));
  }
  const std::string image = absl::StrCat(path, ".image");
  if (c.image().empty()) return Invalid(image, "required: the container image to run");
  RETURN_IF_ERROR(CheckName(c.image(), image, kMaxPathBytes));
  RETURN_IF_ERROR(
      CheckOneOf(c.image_pull_policy(), kPullPolicies, absl::StrCat(path, ".imagePullPolicy")));
  RETURN_IF_ERROR(CheckArgv(c.command(), c.args(), path));
  RETURN_IF_ERROR(CheckName(c.working_dir(), absl::StrCat(path, ".workingDir"), kMaxPathBytes));
  RETURN_IF_ERROR(CheckEnv(c, path));
  RETURN_IF_ERROR(CheckPorts(c, path, pod));
  RETURN_IF_ERROR(CheckContainerResources(c, path));
  RETURN_IF_ERROR(CheckMounts(c, path, pod));
  const auto& security = c.security_context();
  if (security.has_run_as_user() && security.run_as_user() < 0) {
    return Invalid(absl::StrCat(path, ".securityContext.runAsUser"), "must not be negative");
  }
  if (security.has_run_as_group() && security.run_as_group() < 0) {
    return Invalid(absl::StrCat(path, ".securityContext.runAsGroup"), "must not be negative");
  }
  return absl::OkStatus();
}

absl::Status CheckVolumes(const PodSpec& spec, const std::string& pod_path, PodContext& pod) {
  static const std::set<std::string> kHostPathTypes = {
      "",       "DirectoryOrCreate", "Directory",  "FileOrCreate", "File",
      "Socket", "CharDevice",        "BlockDevice"};
  for (int i = 0; i < spec.volumes_size(); ++i) {
    const auto& volume = spec.volumes(i);
    const std::string field = absl::StrCat(pod_path, ".volumes[", i, "]");
    RETURN_IF_ERROR(CheckLabelName(volume.name(), absl::StrCat(field, ".name")));
    auto [it, inserted] = pod.volumes.try_emplace(volume.name(), field);
    if (!inserted) {
      return Invalid(absl::StrCat(field, ".name"),
                     absl::StrCat("\"", volume.name(), "\" is also the name of ", it->second));
    }
    if (volume.has_empty_dir() == volume.has_host_path()) {
      return Invalid(field, volume.has_empty_dir()
                                ? "both emptyDir and hostPath given (a volume has one kind)"
                                : "no volume kind given (supported: emptyDir, hostPath)");
    }
    if (volume.has_host_path()) {
      RETURN_IF_ERROR(
          CheckAbsolutePath(volume.host_path().path(), absl::StrCat(field, ".hostPath.path")));
      RETURN_IF_ERROR(CheckOneOf(volume.host_path().type(), kHostPathTypes,
                                 absl::StrCat(field, ".hostPath.type")));
      continue;
    }
    RETURN_IF_ERROR(CheckOneOf(volume.empty_dir().medium(), {"", "Memory"},
                               absl::StrCat(field, ".emptyDir.medium")));
    if (!volume.empty_dir().size_limit().empty()) {
      const std::string limit = absl::StrCat(field, ".emptyDir.sizeLimit");
      RETURN_IF_ERROR(CheckLength(volume.empty_dir().size_limit(), limit, 64));
      absl::StatusOr<Quantity> q = Quantity::Parse(volume.empty_dir().size_limit());
      if (!q.ok()) return Invalid(limit, q.status().message());
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPodTask(const JobSubmitRequestItem& item, absl::string_view task,
                          const SubmitPolicy& policy) {
  const PodSpec& spec = item.task().pod_spec();
  const std::string pod_path = absl::StrCat(task, ".podSpec");
  RETURN_IF_ERROR(CheckNoUnknownFields(spec, pod_path));
  RETURN_IF_ERROR(CheckNoFlatFields(item.task(), task));
  RETURN_IF_ERROR(CheckNoConflicts(item, task, pod_path));
  if (!spec.restart_policy().empty() && spec.restart_policy() != "Never") {
    return Invalid(absl::StrCat(pod_path, ".restartPolicy"),
                   absl::StrCat("unsupported value \"", Abbreviate(spec.restart_policy()),
                                "\" (supported: Never: a job runs once, its retryPolicy "
                                "decides about another run)"));
  }
  if (spec.has_active_deadline_seconds() &&
      (spec.active_deadline_seconds() < 1 ||
       spec.active_deadline_seconds() > kMaxActiveDeadlineSeconds)) {
    return Invalid(absl::StrCat(pod_path, ".activeDeadlineSeconds"),
                   absl::StrCat("must be between 1 and ", kMaxActiveDeadlineSeconds));
  }
  if (spec.has_termination_grace_period_seconds() &&
      (spec.termination_grace_period_seconds() < 0 ||
       spec.termination_grace_period_seconds() > kMaxTerminationGraceSeconds)) {
    return Invalid(absl::StrCat(pod_path, ".terminationGracePeriodSeconds"),
                   absl::StrCat("must be between 0 and ", kMaxTerminationGraceSeconds));
  }
  RETURN_IF_ERROR(CheckStringMap(spec.node_selector(), absl::StrCat(pod_path, ".nodeSelector")));
  RETURN_IF_ERROR(CheckTolerations(spec.tolerations(), pod_path));
  const auto& node_affinity = spec.affinity().node_affinity();
  if (node_affinity.has_required_during_scheduling_ignored_during_execution()) {
    const std::string required = absl::StrCat(
        pod_path, ".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution");
    const auto& terms =
        node_affinity.required_during_scheduling_ignored_during_execution().node_selector_terms();
    if (terms.empty()) {
      return Invalid(absl::StrCat(required, ".nodeSelectorTerms"), "at least one term is required");
    }
    RETURN_IF_ERROR(CheckNodeSelectorTerms(terms, absl::StrCat(required, ".nodeSelectorTerms"),
                                           "matchExpressions"));
  }
  if (!spec.priority_class_name().empty()) {
    RETURN_IF_ERROR(CheckPriorityClass(spec.priority_class_name(),
                                       absl::StrCat(pod_path, ".priorityClassName"), policy));
  }
  PodContext pod;
  RETURN_IF_ERROR(CheckVolumes(spec, pod_path, pod));
  if (spec.containers().empty()) {
    return Invalid(absl::StrCat(pod_path, ".containers"), "at least one container is required");
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    RETURN_IF_ERROR(CheckContainer(spec.init_containers(i),
                                   absl::StrCat(pod_path, ".initContainers[", i, "]"), pod));
  }
  for (int i = 0; i < spec.containers_size(); ++i) {
    RETURN_IF_ERROR(
        CheckContainer(spec.containers(i), absl::StrCat(pod_path, ".containers[", i, "]"), pod));
  }
  return absl::OkStatus();
}

const std::string& PriorityClassOf(const JobSubmitRequestItem& item) {
  if (!item.priority_class().empty() || !item.task().has_pod_spec()) return item.priority_class();
  return item.task().pod_spec().priority_class_name();
}

void DerivePodTask(TaskSpec& task, std::string& priority_class) {
  if (!task.has_pod_spec()) return;
  const PodSpec& pod = task.pod_spec();
  auto* resources = task.mutable_resources();
  resources->clear_requests();
  resources->clear_limits();
  for (const auto& [name, q] : pod::EffectiveRequests(pod)) {
    (*resources->mutable_requests())[name] = q.ToString();
  }
  *resources->mutable_limits() = resources->requests();
  if (!pod.node_selector().empty()) *task.mutable_node_selector() = pod.node_selector();
  if (!pod.tolerations().empty()) *task.mutable_tolerations() = pod.tolerations();
  const auto& terms = pod.affinity()
                          .node_affinity()
                          .required_during_scheduling_ignored_during_execution()
                          .node_selector_terms();
  if (!terms.empty()) *task.mutable_node_affinity()->mutable_required_terms() = terms;
  if (pod.has_active_deadline_seconds()) {
    task.mutable_active_deadline()->set_seconds(pod.active_deadline_seconds());
    task.mutable_active_deadline()->set_nanos(0);
  }
  if (pod.has_termination_grace_period_seconds()) {
    task.mutable_termination_grace_period()->set_seconds(pod.termination_grace_period_seconds());
    task.mutable_termination_grace_period()->set_nanos(0);
  }
  if (priority_class.empty()) priority_class = pod.priority_class_name();
}

}  // namespace regatta::api::internal
