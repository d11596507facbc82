#ifndef REGATTA_SRC_PIPELINES_IR_VALIDATE_H_
#define REGATTA_SRC_PIPELINES_IR_VALIDATE_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

// Checks the references and rules a parsed spec must satisfy before it can run (components,
// executors, producer tasks and their outputs, enclosing component inputs, required inputs,
// cycles, iterators, exit handlers, limits). The first violation is returned as
// InvalidArgument naming its path, e.g.
// `root.dag.tasks.consumer.inputs.parameters.x: producer task 'prod' does not exist`.
absl::Status ValidatePipelineSpec(const PipelineSpec& spec);

// The tasks `task` waits for in its DAG: dependentTasks plus every producerTask of its inputs,
// sorted and without duplicates.
std::vector<std::string> UpstreamTasks(const TaskSpec& task);

// The DAG's task names ordered so every task comes after its upstream tasks; ties are broken by
// name, so the order is deterministic. InvalidArgument naming the cycle (`a -> b -> a`) if there
// is one, or naming a missing upstream task.
absl::StatusOr<std::vector<std::string>> TopologicalOrder(const DagSpec& dag);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_VALIDATE_H_
