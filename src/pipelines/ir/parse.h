#ifndef REGATTA_SRC_PIPELINES_IR_PARSE_H_
#define REGATTA_SRC_PIPELINES_IR_PARSE_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

// Reads a PipelineSpec as the kfp 2.x SDK compiles it: YAML or JSON, one document, or two where
// the second is the platform spec. Unknown keys are ignored (newer SDKs add fields) but a known
// key with the wrong type is an error naming its path, e.g. `root.dag.tasks.t.dependentTasks`.
// Only the shape is checked here; ValidatePipelineSpec checks references and rules.
absl::StatusOr<PipelineSpec> ParsePipelineSpec(absl::string_view text);

// ParsePipelineSpec followed by ValidatePipelineSpec.
absl::StatusOr<PipelineSpec> LoadPipelineSpec(absl::string_view text);

// `text` as one JSON object, or nullopt if it is not one (then it is read as YAML, which also
// gives the errors). The server stores specs as JSON and the SDK can write them so; yaml-cpp
// took ~6 ms for a 100-task spec that this reads in well under one.
std::optional<nlohmann::json> ParseJsonObject(absl::string_view text);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_PARSE_H_
