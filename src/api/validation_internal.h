#ifndef REGATTA_SRC_API_VALIDATION_INTERNAL_H_
#define REGATTA_SRC_API_VALIDATION_INTERNAL_H_

// Checks shared by validation.cc and pod_validation.cc; not an API of the library.

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/duration.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "regatta/v1/types.pb.h"
#include "src/api/validation.h"
#include "src/common/resources.h"

namespace regatta::api::internal {

// INVALID_ARGUMENT "field: problem".
absl::Status Invalid(absl::string_view field, absl::string_view problem);
absl::Status CheckDuration(const google::protobuf::Duration& d, absl::string_view field,
                           int64_t max_seconds);
// `field[key]` with the key cut short, for messages about one map entry.
std::string Entry(absl::string_view field, absl::string_view key);
absl::Status CheckLength(absl::string_view text, absl::string_view field, size_t max_bytes);
absl::Status CheckNoControlChars(absl::string_view text, absl::string_view field);
absl::Status CheckNoNul(absl::string_view text, absl::string_view field);
// Bounded length and no control characters.
absl::Status CheckName(absl::string_view text, absl::string_view field, size_t max_bytes);

// What reaches exec(): no NUL in "path.command[i]" and "path.args[i]", no control characters in
// the program.
absl::Status CheckArgv(const google::protobuf::RepeatedPtrField<std::string>& command,
                       const google::protobuf::RepeatedPtrField<std::string>& args,
                       absl::string_view path);

struct MapRules {
  size_t max_value_bytes = kMaxLabelValueBytes;
  // Annotations may hold multi-line text; labels and selectors may not.
  bool multi_line_values = false;
};
absl::Status CheckStringMap(const google::protobuf::Map<std::string, std::string>& map,
                            absl::string_view field, MapRules rules = {});

// Parses one side of resource requirements, naming the entry ("field[cpu]") on error.
absl::StatusOr<std::map<std::string, Quantity>> ParseResourceMap(
    const google::protobuf::Map<std::string, std::string>& map, absl::string_view field);
// The flat task's resources: both maps parse, and equal each other when both are given.
absl::Status CheckResources(const regatta::v1::ResourceRequirements& resources,
                            absl::string_view field);
// Entries are named "field.tolerations[i]".
absl::Status CheckTolerations(
    const google::protobuf::RepeatedPtrField<regatta::v1::Toleration>& tolerations,
    absl::string_view field);
// Entries are named "terms_field[t].expressions_name[e]", so that the flat task and the pod
// spec each use their own spelling.
absl::Status CheckNodeSelectorTerms(
    const google::protobuf::RepeatedPtrField<regatta::v1::NodeSelectorTerm>& terms,
    absl::string_view terms_field, absl::string_view expressions_name);
absl::Status CheckPriorityClass(absl::string_view name, absl::string_view field,
                                const SubmitPolicy& policy);

// 1-63 characters of a-z, 0-9 and '-', starting and ending with a letter or digit.
bool IsDns1123Label(absl::string_view name);

// armada_fields.cc: Armada's fields of a job. The namespace is a DNS-1123 label; each service
// has type NodePort or Headless (empty: NodePort) and, like each ingress, ports that are
// containerPorts of the pod spec's containers; the gang annotations read as a gang (agreeing
// with `gang` when both are given) and failFast is "true" or "false" (true: no retry_policy).
// `prefix` is the item's path, e.g. "items[3]".
absl::Status CheckArmadaFields(const regatta::v1::JobSubmitRequestItem& item,
                               absl::string_view prefix);
// The item's gang: its own when it has an id, else the one its Armada annotations declare
// (empty when neither; for validated items, or ones being validated after CheckArmadaFields).
regatta::v1::Gang GangOf(const regatta::v1::JobSubmitRequestItem& item);
// The same for a job: sets `gang` from the annotations when the job has none.
void ApplyArmadaGang(regatta::v1::Job& job);

// pod_validation.cc: every rule for a task with a pod spec, named under "TASK.podSpec" in
// Kubernetes spelling. `task` is the task's path, e.g. "items[3].task".
absl::Status CheckPodTask(const regatta::v1::JobSubmitRequestItem& item, absl::string_view task,
                          const SubmitPolicy& policy);
// The item's priority class, or its pod spec's priorityClassName when it sets none.
const std::string& PriorityClassOf(const regatta::v1::JobSubmitRequestItem& item);
// For a validated pod-spec task: resources = the pod's effective request (requests = limits,
// canonical quantities), and node selector, tolerations, node affinity, active deadline,
// termination grace and (when empty) the priority class from the pod spec where it sets them.
// No-op for a flat task.
void DerivePodTask(regatta::v1::TaskSpec& task, std::string& priority_class);

}  // namespace regatta::api::internal

#endif  // REGATTA_SRC_API_VALIDATION_INTERNAL_H_
