#ifndef REGATTA_SRC_PIPELINES_AUTHORING_AUTHORING_H_
#define REGATTA_SRC_PIPELINES_AUTHORING_AUTHORING_H_

// Regatta's concise authoring YAML for pipelines, compiled to the Kubeflow Pipelines IR the kfp
// 2.x SDK would emit for the same pipeline (docs/cli.md "Authoring pipelines" is the reference):
//
//   name: train-and-eval
//   params: {rows: {type: int, default: 1000}, lr: float}
//   tasks:
//     make-data:
//       command: [sh, -c, 'seq $0 > $1', '{{params.rows}}', '{{outputs.data}}']
//       outputs: {data: dataset}
//     train:
//       inputs: {data: make-data.data, lr: params.lr, epochs: 3}
//       command: [train, '{{inputs.data}}', '{{inputs.lr}}', '{{inputs.epochs}}']
//       when: params.rows > 10
//
// Every task becomes a component "comp-<task>" with executor "exec-<task>"; `when` wraps it in a
// "condition-N" sub-DAG, `for_each` in a "for-loop-N" sub-DAG (loop outside, condition inside),
// and an `exit_handler` task runs after an "exit-handler-1" sub-DAG that holds all the others.
// Tasks naming the same entry of `loops:` share one for-loop sub-DAG (a chain per item).

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::authoring {

// Compiles an authoring document to the IR; the result passes ir::ValidatePipelineSpec.
// Errors are INVALID_ARGUMENT naming the path in the authoring document, e.g.
// `tasks.train.inputs.data: task 'make-data' has no output 'dta'`.
absl::StatusOr<ir::PipelineSpec> CompileAuthoring(absl::string_view yaml_text);

// Whether `text` is an authoring document rather than a compiled IR: its (first) document is a
// map without any of the IR's top-level keys (root, schemaVersion, sdkVersion, pipelineInfo,
// deploymentSpec, components). False for text that is not a YAML (or JSON) map.
bool IsAuthoringDocument(absl::string_view text);

// A pipeline file of either kind, checked: CompileAuthoring for an authoring document, else
// ir::LoadPipelineSpec (kfp-compiled YAML or JSON).
absl::StatusOr<ir::PipelineSpec> LoadAnyPipelineFile(absl::string_view text);

}  // namespace regatta::pipelines::authoring

#endif  // REGATTA_SRC_PIPELINES_AUTHORING_AUTHORING_H_
