#include "src/pipelines/ir/platform.h"

#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::ir {
namespace {

using json = nlohmann::json;

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

// Fields of a KubernetesExecutorConfig that need volumes, a pod or a cluster: refused until the
// pod model can honour them.
const std::set<std::string>& Unsupported() {
  static const std::set<std::string>* const kFields =
      new std::set<std::string>{"secretAsVolume",         "pvcMount",          "imagePullSecret",
                                "imagePullPolicy",        "configMapAsVolume", "fieldPathAsEnv",
                                "genericEphemeralVolume", "nodeAffinity",      "podAffinity",
                                "enabledSharedMemory",    "emptyDirMounts",    "securityContext",
                                "initContainers",         "podResourceClaims"};
  return *kFields;
}

absl::Status ExpectObject(const json& j, const std::string& path) {
  if (!j.is_object()) return Invalid(path, absl::StrCat("expected a map, got ", j.type_name()));
  return absl::OkStatus();
}

absl::Status ExpectArray(const json& j, const std::string& path) {
  if (!j.is_array()) return Invalid(path, absl::StrCat("expected a list, got ", j.type_name()));
  return absl::OkStatus();
}

// Only the listed keys may appear in `obj`.
absl::Status OnlyKeys(const json& obj, const std::string& path, std::set<std::string> keys) {
  for (const auto& [key, value] : obj.items()) {
    if (!keys.contains(key)) return Invalid(absl::StrCat(path, ".", key), "unknown field");
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StringField(const json& obj, const std::string& key,
                                        const std::string& path) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return Invalid(absl::StrCat(path, ".", key),
                   absl::StrCat("expected a string, got ", it->type_name()));
  }
  return it->get<std::string>();
}

absl::StatusOr<std::map<std::string, std::string>> StringMap(const json& obj,
                                                             const std::string& path) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : obj.items()) {
    if (!value.is_string()) {
      return Invalid(absl::StrCat(path, ".", key),
                     absl::StrCat("expected a string, got ", value.type_name()));
    }
    out[key] = value.get<std::string>();
  }
  return out;
}

// The object's name: the deprecated `<name_key>` or `<name_key>Parameter` holding a constant
// (a name from a task output or pipeline parameter is not resolved here yet).
absl::StatusOr<std::string> ObjectName(const json& entry, const std::string& name_key,
                                       const std::string& path) {
  ASSIGN_OR_RETURN(std::string name, StringField(entry, name_key, path));
  auto parameter = entry.find(name_key + "Parameter");
  if (parameter != entry.end() && !parameter->is_null()) {
    const std::string p = absl::StrCat(path, ".", name_key, "Parameter");
    RETURN_IF_ERROR(ExpectObject(*parameter, p));
    auto runtime = parameter->find("runtimeValue");
    if (runtime == parameter->end() || !runtime->is_object() || !runtime->contains("constant") ||
        !(*runtime)["constant"].is_string()) {
      return Invalid(p,
                     "only a constant name (runtimeValue.constant) is supported; a name from a "
                     "pipeline parameter or task output is not resolved by Regatta yet");
    }
    name = (*runtime)["constant"].get<std::string>();
  }
  if (name.empty())
    return Invalid(path, absl::StrCat("needs ", name_key, " or ", name_key, "Parameter"));
  return name;
}

absl::Status ParseObjectsAsEnv(const json& list, const std::string& path,
                               const std::string& name_key, const std::string& key_key,
                               std::vector<ObjectAsEnv>* out) {
  RETURN_IF_ERROR(ExpectArray(list, path));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = absl::StrCat(path, "[", i, "]");
    const json& entry = list[i];
    RETURN_IF_ERROR(ExpectObject(entry, p));
    RETURN_IF_ERROR(OnlyKeys(entry, p, {name_key, name_key + "Parameter", "keyToEnv", "optional"}));
    ObjectAsEnv object;
    object.path = p;
    ASSIGN_OR_RETURN(object.name, ObjectName(entry, name_key, p));
    if (auto optional = entry.find("optional"); optional != entry.end() && !optional->is_null()) {
      if (!optional->is_boolean())
        return Invalid(absl::StrCat(p, ".optional"), "expected a boolean");
      object.optional = optional->get<bool>();
    }
    auto keys = entry.find("keyToEnv");
    if (keys != entry.end() && !keys->is_null()) {
      const std::string kp = absl::StrCat(p, ".keyToEnv");
      RETURN_IF_ERROR(ExpectArray(*keys, kp));
      for (size_t k = 0; k < keys->size(); ++k) {
        const std::string ep = absl::StrCat(kp, "[", k, "]");
        RETURN_IF_ERROR(ExpectObject((*keys)[k], ep));
        RETURN_IF_ERROR(OnlyKeys((*keys)[k], ep, {key_key, "envVar"}));
        ASSIGN_OR_RETURN(std::string key, StringField((*keys)[k], key_key, ep));
        ASSIGN_OR_RETURN(std::string env, StringField((*keys)[k], "envVar", ep));
        if (key.empty()) return Invalid(absl::StrCat(ep, ".", key_key), "missing");
        if (env.empty()) return Invalid(absl::StrCat(ep, ".envVar"), "missing");
        object.key_to_env.emplace_back(std::move(key), std::move(env));
      }
    }
    out->push_back(std::move(object));
  }
  return absl::OkStatus();
}

absl::Status ParseTolerations(const json& list, const std::string& path,
                              std::vector<PlatformToleration>* out) {
  RETURN_IF_ERROR(ExpectArray(list, path));
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string p = absl::StrCat(path, "[", i, "]");
    RETURN_IF_ERROR(ExpectObject(list[i], p));
    if (list[i].contains("tolerationSeconds") || list[i].contains("tolerationJson")) {
      const char* field =
          list[i].contains("tolerationSeconds") ? "tolerationSeconds" : "tolerationJson";
      return Invalid(absl::StrCat(p, ".", field),
                     "cannot be honoured: Regatta's tolerations have no eviction delay and are "
                     "not read from parameters");
    }
    RETURN_IF_ERROR(OnlyKeys(list[i], p, {"key", "operator", "value", "effect"}));
    PlatformToleration t;
    ASSIGN_OR_RETURN(t.key, StringField(list[i], "key", p));
    ASSIGN_OR_RETURN(t.op, StringField(list[i], "operator", p));
    ASSIGN_OR_RETURN(t.value, StringField(list[i], "value", p));
    ASSIGN_OR_RETURN(t.effect, StringField(list[i], "effect", p));
    if (!t.op.empty() && t.op != "Equal" && t.op != "Exists") {
      return Invalid(absl::StrCat(p, ".operator"),
                     absl::StrCat("expected Equal or Exists, got '", t.op, "'"));
    }
    out->push_back(std::move(t));
  }
  return absl::OkStatus();
}

absl::StatusOr<KubernetesExecutorConfig> ParseExecutorConfig(const json& obj,
                                                             const std::string& path) {
  KubernetesExecutorConfig config;
  RETURN_IF_ERROR(ExpectObject(obj, path));
  for (const auto& [key, value] : obj.items()) {
    const std::string p = absl::StrCat(path, ".", key);
    if (value.is_null()) continue;
    if (Unsupported().contains(key)) {
      return Invalid(p,
                     "cannot be honoured by Regatta yet: volumes, image pull settings, "
                     "affinities and security contexts need the pod model");
    }
    if (key == "nodeSelector") {
      RETURN_IF_ERROR(ExpectObject(value, p));
      if (value.contains("nodeSelectorJson")) {
        return Invalid(absl::StrCat(p, ".nodeSelectorJson"),
                       "a node selector from a parameter is not resolved by Regatta yet");
      }
      RETURN_IF_ERROR(OnlyKeys(value, p, {"labels"}));
      if (value.contains("labels")) {
        ASSIGN_OR_RETURN(config.node_selector, StringMap(value["labels"], p + ".labels"));
      }
    } else if (key == "tolerations") {
      RETURN_IF_ERROR(ParseTolerations(value, p, &config.tolerations));
    } else if (key == "podMetadata") {
      RETURN_IF_ERROR(ExpectObject(value, p));
      RETURN_IF_ERROR(OnlyKeys(value, p, {"labels", "annotations"}));
      if (value.contains("labels")) {
        ASSIGN_OR_RETURN(config.pod_labels, StringMap(value["labels"], p + ".labels"));
      }
      if (value.contains("annotations")) {
        ASSIGN_OR_RETURN(config.pod_annotations,
                         StringMap(value["annotations"], p + ".annotations"));
      }
    } else if (key == "secretAsEnv") {
      RETURN_IF_ERROR(
          ParseObjectsAsEnv(value, p, "secretName", "secretKey", &config.secret_as_env));
    } else if (key == "configMapAsEnv") {
      RETURN_IF_ERROR(
          ParseObjectsAsEnv(value, p, "configMapName", "configMapKey", &config.config_map_as_env));
    } else if (key == "activeDeadlineSeconds") {
      // int64 in protobuf JSON: a number or a string.
      int64_t seconds = 0;
      const bool ok =
          value.is_number_integer()
              ? (seconds = value.get<int64_t>(), true)
              : value.is_string() && absl::SimpleAtoi(value.get<std::string>(), &seconds);
      if (!ok || seconds < 0) return Invalid(p, "expected a non-negative integer");
      config.active_deadline_seconds = seconds;
    } else {
      return Invalid(p, "unknown field");
    }
  }
  return config;
}

}  // namespace

absl::StatusOr<std::map<std::string, KubernetesExecutorConfig>> ParsePlatformSpec(
    const json& platform, const PipelineSpec& spec) {
  std::map<std::string, KubernetesExecutorConfig> configs;
  RETURN_IF_ERROR(ExpectObject(platform, "(platform spec)"));
  RETURN_IF_ERROR(OnlyKeys(platform, "(platform spec)", {"platforms"}));
  auto platforms = platform.find("platforms");
  if (platforms == platform.end() || platforms->is_null()) return configs;
  RETURN_IF_ERROR(ExpectObject(*platforms, "platforms"));
  for (const auto& [name, value] : platforms->items()) {
    if (name != "kubernetes") {
      return Invalid(absl::StrCat("platforms.", name),
                     "only the kubernetes platform (kfp-kubernetes) is supported");
    }
  }
  auto kubernetes = platforms->find("kubernetes");
  if (kubernetes == platforms->end() || kubernetes->is_null()) return configs;
  const std::string kp = "platforms.kubernetes";
  RETURN_IF_ERROR(ExpectObject(*kubernetes, kp));
  RETURN_IF_ERROR(OnlyKeys(*kubernetes, kp, {"deploymentSpec"}));
  auto deployment = kubernetes->find("deploymentSpec");
  if (deployment == kubernetes->end() || deployment->is_null()) return configs;
  const std::string dp = kp + ".deploymentSpec";
  RETURN_IF_ERROR(ExpectObject(*deployment, dp));
  RETURN_IF_ERROR(OnlyKeys(*deployment, dp, {"executors"}));
  auto executors = deployment->find("executors");
  if (executors == deployment->end() || executors->is_null()) return configs;
  RETURN_IF_ERROR(ExpectObject(*executors, dp + ".executors"));
  for (const auto& [label, value] : executors->items()) {
    const std::string p = absl::StrCat(dp, ".executors.", label);
    auto executor = spec.executors.find(label);
    if (executor == spec.executors.end()) {
      return Invalid(p,
                     absl::StrCat("executor '", label,
                                  "' does not exist in the pipeline's deploymentSpec.executors"));
    }
    if (value.is_null()) continue;
    ASSIGN_OR_RETURN(KubernetesExecutorConfig config, ParseExecutorConfig(value, p));
    if (executor->second.kind != ExecutorSpec::Kind::kContainer) {
      return Invalid(p, "only container executors run a job that a platform config applies to");
    }
    configs.emplace(label, std::move(config));
  }
  return configs;
}

}  // namespace regatta::pipelines::ir
