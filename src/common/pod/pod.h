#ifndef REGATTA_SRC_COMMON_POD_POD_H_
#define REGATTA_SRC_COMMON_POD_POD_H_

// The pod model shared by the API server (validation, derivation at submit) and the executors
// (the local container runtime now, the Kubernetes executor later): one view of what a task
// runs, whether it was submitted as a pod spec or as the flat task.

#include <map>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "regatta/v1/pod.pb.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"

namespace regatta::pod {

// The container a flat task becomes.
inline constexpr absl::string_view kMainContainerName = "main";

// The task's pod spec (with the task's secret_env added to every container that does not set
// the same name), or the flat task lowered to a one-container pod named "main": image,
// command, args, env (secret_env included as plain values, sorted by name), workingDir,
// resources, activeDeadlineSeconds (rounded up), terminationGracePeriodSeconds (when set),
// nodeSelector, tolerations and node affinity; restartPolicy Never.
regatta::v1::PodSpec PodOf(const regatta::v1::TaskSpec& task);

// One container's request per resource: its requests, plus its limits where no request is
// given (Kubernetes defaults a missing request to the limit). Unparsable quantities, which
// submit validation refuses, are left out.
std::map<std::string, Quantity> ContainerRequests(const regatta::v1::Container& container);

// The pod's effective request, as Kubernetes computes it: per resource, the larger of the sum
// over the containers and each init container's request (init containers run one at a time,
// before the others).
std::map<std::string, Quantity> EffectiveRequests(const regatta::v1::PodSpec& pod);

// What a fieldRef can name about the pod a container runs in.
struct PodMetadata {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::string node_name;
  std::string service_account;
  std::string pod_ip;
  std::string host_ip;
};

// The value of an env var's valueFrom.fieldRef.fieldPath: metadata.name, metadata.namespace,
// metadata.uid, metadata.labels['KEY'], metadata.annotations['KEY'] (empty when the key is
// absent, as in Kubernetes), spec.nodeName, spec.serviceAccountName, status.podIP or
// status.hostIP. Any other path is INVALID_ARGUMENT.
absl::StatusOr<std::string> ResolveFieldRef(absl::string_view field_path,
                                            const PodMetadata& metadata);

// OK when ResolveFieldRef accepts `field_path`; else INVALID_ARGUMENT saying what is supported.
absl::Status CheckFieldPath(absl::string_view field_path);

// True for the messages of regatta/v1/pod.proto, whose unknown fields are Kubernetes fields
// outside Regatta's subset.
bool IsPodModelMessage(const google::protobuf::Descriptor* descriptor);

// The problem text for a field of `descriptor` outside the subset:
// "not supported by Regatta's pod model (supported: emptyDir, hostPath)" (JSON names; `name`
// left out of the list as it is never the alternative a user looks for).
std::string UnsupportedFieldProblem(const google::protobuf::Descriptor* descriptor);

}  // namespace regatta::pod

#endif  // REGATTA_SRC_COMMON_POD_POD_H_
