// Submit validation of the fields Armada's job files bring: namespace, services, ingress, and the
// gang and failFast annotations (src/common/pod/armada.h).

#include <set>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "src/api/validation_internal.h"
#include "src/common/error_text.h"
#include "src/common/pod/armada.h"
#include "src/common/status_macros.h"

namespace regatta::api::internal {
namespace {

using regatta::v1::JobSubmitRequestItem;

constexpr int kMaxServices = 64;
constexpr int kMaxPortsPerEntry = 256;

// The containerPorts of the item's pod (its containers; init containers serve nothing).
absl::flat_hash_set<uint32_t> ContainerPorts(const JobSubmitRequestItem& item) {
  absl::flat_hash_set<uint32_t> ports;
  if (!item.task().has_pod_spec()) return ports;
  for (const auto& container : item.task().pod_spec().containers()) {
    for (const auto& port : container.ports()) {
      if (port.container_port() > 0) ports.insert(static_cast<uint32_t>(port.container_port()));
    }
  }
  return ports;
}

absl::Status CheckPorts(const google::protobuf::RepeatedField<uint32_t>& ports,
                        const absl::flat_hash_set<uint32_t>& container_ports, bool has_pod,
                        const std::string& field) {
  if (ports.empty()) return Invalid(absl::StrCat(field, ".ports"), "at least one port is required");
  if (ports.size() > kMaxPortsPerEntry) {
    return Invalid(absl::StrCat(field, ".ports"),
                   absl::StrCat(ports.size(), " ports, over the limit of ", kMaxPortsPerEntry));
  }
  std::set<uint32_t> seen;
  for (int p = 0; p < ports.size(); ++p) {
    const std::string port_field = absl::StrCat(field, ".ports[", p, "]");
    const uint32_t port = ports[p];
    if (!seen.insert(port).second) return Invalid(port_field, absl::StrCat(port, " given twice"));
    if (container_ports.contains(port)) continue;
    return Invalid(port_field,
                   has_pod ? absl::StrCat(port,
                                          " is not a containerPort of the pod (declare it under "
                                          "podSpec.containers[].ports)")
                           : absl::StrCat(port,
                                          " is not a containerPort of the pod: the job has no pod "
                                          "spec (give a podSpec whose containers declare it)"));
  }
  return absl::OkStatus();
}

absl::Status CheckGangAnnotations(const JobSubmitRequestItem& item, const std::string& prefix) {
  const std::string field = absl::StrCat(prefix, ".annotations");
  ASSIGN_OR_RETURN(std::optional<regatta::v1::Gang> gang,
                   pod::ArmadaGang(item.annotations(), field));
  if (!gang.has_value() || item.gang().id().empty()) return absl::OkStatus();
  const auto& own = item.gang();
  if (own.id() != gang->id() || own.cardinality() != gang->cardinality() ||
      own.node_uniformity_label() != gang->node_uniformity_label()) {
    return Invalid(
        Entry(field, pod::kArmadaGangIdAnnotation),
        absl::StrCat("the gang annotations disagree with gang (id \"", Abbreviate(own.id()),
                     "\", cardinality ", own.cardinality(), "); give one or the other"));
  }
  return absl::OkStatus();
}

absl::Status CheckFailFast(const JobSubmitRequestItem& item, const std::string& prefix) {
  auto it = item.annotations().find(std::string(pod::kArmadaFailFastAnnotation));
  if (it == item.annotations().end()) return absl::OkStatus();
  const std::string field =
      Entry(absl::StrCat(prefix, ".annotations"), pod::kArmadaFailFastAnnotation);
  if (it->second != "true" && it->second != "false") {
    return Invalid(
        field, absl::StrCat("\"", Abbreviate(it->second), "\": expected \"true\" or \"false\""));
  }
  const auto& policy = item.retry_policy();
  if (it->second == "true" && (policy.max_retries() > 0 || !policy.retry_on_exit_codes().empty())) {
    return Invalid(field, "a failFast job is never retried, so it cannot have a retry_policy");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckArmadaFields(const JobSubmitRequestItem& item, absl::string_view prefix_view) {
  const std::string prefix(prefix_view);
  if (!item.namespace_().empty() && !IsDns1123Label(item.namespace_())) {
    return Invalid(absl::StrCat(prefix, ".namespace"),
                   absl::StrCat("\"", Abbreviate(item.namespace_()),
                                "\" is not a DNS-1123 label (1-63 characters of a-z, 0-9 and "
                                "'-', starting and ending with a letter or digit)"));
  }
  if (item.services_size() > kMaxServices || item.ingress_size() > kMaxServices) {
    const bool services = item.services_size() > kMaxServices;
    return Invalid(absl::StrCat(prefix, services ? ".services" : ".ingress"),
                   absl::StrCat(services ? item.services_size() : item.ingress_size(),
                                " entries, over the limit of ", kMaxServices));
  }
  const absl::flat_hash_set<uint32_t> container_ports = ContainerPorts(item);
  const bool has_pod = item.task().has_pod_spec();
  std::set<std::string> names;
  for (int s = 0; s < item.services_size(); ++s) {
    const auto& service = item.services(s);
    const std::string field = absl::StrCat(prefix, ".services[", s, "]");
    if (!service.type().empty() && service.type() != "NodePort" && service.type() != "Headless") {
      return Invalid(absl::StrCat(field, ".type"),
                     absl::StrCat("unsupported value \"", Abbreviate(service.type()),
                                  "\" (supported: NodePort, Headless, or empty for NodePort)"));
    }
    if (!service.name().empty()) {
      if (!IsDns1123Label(service.name())) {
        return Invalid(absl::StrCat(field, ".name"),
                       absl::StrCat("\"", Abbreviate(service.name()),
                                    "\" is not a DNS-1123 label (1-63 characters of a-z, 0-9 "
                                    "and '-', starting and ending with a letter or digit)"));
      }
      if (!names.insert(service.name()).second) {
        return Invalid(absl::StrCat(field, ".name"),
                       absl::StrCat("\"", service.name(), "\" names another service too"));
      }
    }
    RETURN_IF_ERROR(CheckPorts(service.ports(), container_ports, has_pod, field));
  }
  for (int i = 0; i < item.ingress_size(); ++i) {
    const auto& ingress = item.ingress(i);
    const std::string field = absl::StrCat(prefix, ".ingress[", i, "]");
    RETURN_IF_ERROR(CheckPorts(ingress.ports(), container_ports, has_pod, field));
    RETURN_IF_ERROR(CheckStringMap(ingress.annotations(), absl::StrCat(field, ".annotations"),
                                   {.max_value_bytes = kMaxPathBytes, .multi_line_values = true}));
    RETURN_IF_ERROR(CheckName(ingress.cert_name(), absl::StrCat(field, ".cert_name"), 253));
  }
  RETURN_IF_ERROR(CheckGangAnnotations(item, prefix));
  return CheckFailFast(item, prefix);
}

regatta::v1::Gang GangOf(const JobSubmitRequestItem& item) {
  if (!item.gang().id().empty()) return item.gang();
  absl::StatusOr<std::optional<regatta::v1::Gang>> gang = pod::ArmadaGang(item.annotations(), "");
  if (gang.ok() && gang->has_value()) return **gang;
  return item.gang();
}

void ApplyArmadaGang(regatta::v1::Job& job) {
  if (!job.gang().id().empty()) return;
  absl::StatusOr<std::optional<regatta::v1::Gang>> gang = pod::ArmadaGang(job.annotations(), "");
  if (gang.ok() && gang->has_value()) *job.mutable_gang() = **gang;
}

}  // namespace regatta::api::internal
