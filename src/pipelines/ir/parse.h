#ifndef REGATTA_SRC_PIPELINES_IR_PARSE_H_
#define REGATTA_SRC_PIPELINES_IR_PARSE_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

// Reads a PipelineSpec as the kfp 2.x SDK compiles it: YAML or JSON, one document, or two where
// the second is the platform spec. Unknown keys are ignored (newer SDKs add fields) but a known
// key with the wrong type is an error naming its path, e.g. `root.dag.tasks.t.dependentTasks`.
// Only the shape is checked here; ValidatePipelineSpec checks references and rules.
absl::StatusOr<PipelineSpec> ParsePipelineSpec(absl::string_view text);

// ParsePipelineSpec followed by ValidatePipelineSpec.
absl::StatusOr<PipelineSpec> LoadPipelineSpec(absl::string_view text);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_PARSE_H_
