#ifndef REGATTA_SRC_PIPELINES_AUTHORING_VALUES_H_
#define REGATTA_SRC_PIPELINES_AUTHORING_VALUES_H_

// The pieces the authoring compiler reads a document with (internal to this library): YAML
// values and maps with errors that name their path, and the names and types of the format.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/ir/pipeline_spec.h"
#include "yaml-cpp/yaml.h"

namespace regatta::pipelines::authoring {

// INVALID_ARGUMENT "path: message".
absl::Status Invalid(absl::string_view path, absl::string_view message);
// "path.key" ("key" at the top).
std::string Child(absl::string_view path, absl::string_view key);

// ---- YAML values

// A scalar with the YAML 1.2 core schema (numbers, true/false, null); quoted scalars are strings.
nlohmann::json ScalarValue(const YAML::Node& node);
// Any node as JSON (maps, lists, scalars).
absl::StatusOr<nlohmann::json> ValueOf(const YAML::Node& node, const std::string& path,
                                       int depth = 0);
// The entries of a map in document order; null is an empty map.
absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> Entries(const YAML::Node& node,
                                                                        const std::string& path);
// `path.KEY: unknown key (expected one of: ...)` for a key of `node` not in `known`.
absl::Status CheckKeys(const YAML::Node& node, const std::string& path,
                       const std::vector<absl::string_view>& known);
// The value at `key`; absent and null both give an undefined node (false in a condition).
YAML::Node Get(const YAML::Node& map, absl::string_view key);
absl::StatusOr<std::string> StringOf(const YAML::Node& node, const std::string& path);
absl::StatusOr<std::vector<std::string>> StringsOf(const YAML::Node& node, const std::string& path);
absl::StatusOr<bool> BoolOf(const YAML::Node& node, const std::string& path);
absl::StatusOr<int64_t> IntOf(const YAML::Node& node, const std::string& path);
// "1s", "1m30s", "2h" or a number of seconds.
absl::StatusOr<absl::Duration> DurationOf(const YAML::Node& node, const std::string& path);

// ---- names and types

// Parameter, input and output names: letters, digits and _, not starting with a digit.
bool IsIdentifier(absl::string_view name);
// Task and loop names: lowercase letters, digits and dashes, starting with a letter.
bool IsTaskName(absl::string_view name);
// condition-N, for-loop-N, exit-handler-N: the names the compiler gives its groups.
bool IsGroupName(absl::string_view name);

// "int" -> NUMBER_INTEGER, ... (kParameterTypeNames and their long forms).
std::optional<ir::ParameterType> ParameterTypeNamed(absl::string_view name);
// "dataset" -> "system.Dataset", ... (kArtifactTypeNames).
std::optional<std::string> ArtifactSchemaNamed(absl::string_view name);
inline constexpr absl::string_view kParameterTypeNames = "int, float, str, bool, list, dict";
inline constexpr absl::string_view kArtifactTypeNames =
    "artifact, dataset, model, metrics, classification_metrics, html, markdown";

// The type of a constant: bool, integer, number, list, map, else string.
ir::ParameterType TypeOfValue(const nlohmann::json& value);
ir::ArtifactSpec ArtifactSpecOf(const std::string& schema_title, bool list);
ir::ParameterSpec ParameterSpecOf(ir::ParameterType type);

// JSON spaced as Python's json.dumps (", ", ": "), as the SDK writes a literal loop's items.raw.
std::string PythonJson(const nlohmann::json& value);

// Kubernetes quantities: CPU cores ("100m", "2", "0.5") and bytes ("64Mi", "1G"); nullopt if
// not one.
std::optional<double> ParseQuantity(absl::string_view text);

}  // namespace regatta::pipelines::authoring

#endif  // REGATTA_SRC_PIPELINES_AUTHORING_VALUES_H_
