#ifndef REGATTA_SRC_CLI_PIPELINE_H_
#define REGATTA_SRC_CLI_PIPELINE_H_

// `regatta pipeline validate FILE`: reads a pipeline as the kfp 2.x SDK compiles it (YAML or
// JSON, optional platform document), checks it like the server will, and prints what it holds.

#include <string>

#include "absl/status/status.h"
#include "src/cli/commands.h"

namespace regatta::cli {

// Errors are INVALID_ARGUMENT "FILE: path.inside.the.document: message". On success prints the
// pipeline's name, schema, components, its parameters and the root DAG's tasks in the order
// they can run (-o json|yaml: the same as a document).
absl::Status ValidatePipeline(const CommandEnv& env, const std::string& file);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_PIPELINE_H_
