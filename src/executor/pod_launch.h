#ifndef REGATTA_SRC_EXECUTOR_POD_LAUNCH_H_
#define REGATTA_SRC_EXECUTOR_POD_LAUNCH_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "regatta/v1/executor_service.pb.h"
#include "src/executor/local/container_runtime.h"

namespace regatta::executor {

// The containers a lease runs, as the container runtime takes them: the task's pod spec (or its
// flat task as a one-container pod, see pod::PodOf), with each container's env (fieldRef values
// resolved for this run), `extra_env` (REGATTA_* and device variables) added to every
// container, requests as limits, volume mounts resolved (emptyDir: the run's shared directory;
// hostPath: the path, with subPath), runAsUser/runAsGroup as the user, and the lease's device
// specs and mounts given to every container (as Akri's agent does for the pod that claims
// them). INVALID_ARGUMENT naming the field for what submit validation should have refused.
absl::StatusOr<PodLaunch> PodLaunchOf(
    const regatta::v1::JobRunLease& lease,
    const std::vector<std::pair<std::string, std::string>>& extra_env);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_POD_LAUNCH_H_
