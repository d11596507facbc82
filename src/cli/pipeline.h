#ifndef REGATTA_SRC_CLI_PIPELINE_H_
#define REGATTA_SRC_CLI_PIPELINE_H_

// `regatta pipeline validate FILE`: reads a pipeline as the kfp 2.x SDK compiles it (YAML or
// JSON, optional platform document) or in Regatta's authoring YAML, checks it like the server
// will, and prints what it holds. `regatta pipeline compile FILE`: the authoring YAML compiled to
// the kfp IR.

#include <string>

#include "absl/status/status.h"
#include "src/cli/commands.h"

namespace regatta::cli {

// Errors are INVALID_ARGUMENT "FILE: path.inside.the.document: message". On success prints the
// pipeline's name, schema, components, its parameters and the root DAG's tasks in the order
// they can run (-o json|yaml: the same as a document).
absl::Status ValidatePipeline(const CommandEnv& env, const std::string& file);

// Compiles `file` (authoring YAML; a kfp-compiled file is checked and rewritten as is) to the
// IR as YAML (-o table|yaml) or JSON (-o json), on standard output or into `out_file`. Errors
// as ValidatePipeline's.
absl::Status CompilePipeline(const CommandEnv& env, const std::string& file,
                             const std::string& out_file);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_PIPELINE_H_
