#ifndef REGATTA_SRC_PIPELINES_IR_PLATFORM_H_
#define REGATTA_SRC_PIPELINES_IR_PLATFORM_H_

// The kfp-kubernetes PlatformSpec: the second YAML document the SDK writes when kfp-kubernetes
// is used (`platforms.kubernetes.deploymentSpec.executors.<executor>`, a
// KubernetesExecutorConfig each). Only what one machine can honour is modelled; every other
// field is refused with its path, never dropped.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

struct PlatformToleration {
  std::string key;
  std::string op;  // "Equal" or "Exists"
  std::string value;
  std::string effect;
};

// secretAsEnv / configMapAsEnv: keys of one named Secret or ConfigMap as environment variables.
struct ObjectAsEnv {
  std::string name;
  bool optional = false;
  std::vector<std::pair<std::string, std::string>> key_to_env;  // key -> env var
  std::string path;  // the entry's field path, for errors at launch
};

struct KubernetesExecutorConfig {
  std::map<std::string, std::string> node_selector;
  std::vector<PlatformToleration> tolerations;
  std::map<std::string, std::string> pod_labels;
  std::map<std::string, std::string> pod_annotations;
  std::vector<ObjectAsEnv> secret_as_env;
  std::vector<ObjectAsEnv> config_map_as_env;
  int64_t active_deadline_seconds = 0;
};

// The executors' configs of a platform spec document. INVALID_ARGUMENT naming the field for a
// malformed document, an executor that `spec` does not have, or a field that cannot be honoured
// here (volumes, PVCs, image pull secrets and policies, affinities, security contexts, ...).
absl::StatusOr<std::map<std::string, KubernetesExecutorConfig>> ParsePlatformSpec(
    const nlohmann::json& platform, const PipelineSpec& spec);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_PLATFORM_H_
