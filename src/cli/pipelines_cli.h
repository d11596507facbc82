#ifndef REGATTA_SRC_CLI_PIPELINES_CLI_H_
#define REGATTA_SRC_CLI_PIPELINES_CLI_H_

// The verbs of the pipeline catalogue (PipelineService): `pipeline upload|list|get|delete|
// versions`, `experiment ...`, `artifact get|list`, `lineage`, `cache list|prune`.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "regatta/v1/pipeline_service.pb.h"
#include "src/cli/commands.h"

namespace regatta::cli {

struct PipelineUploadOptions {
  std::string file;  // kfp-compiled IR, YAML or JSON; "-" reads stdin
  std::string name;
  std::string version;  // empty: "v1" for a new pipeline
  std::string description;
};
// Creates the pipeline with its first version; if the pipeline exists and --version is given,
// adds that version to it instead.
absl::Status PipelineUpload(const CommandEnv& env, const PipelineUploadOptions& options);
absl::Status PipelineList(const CommandEnv& env);
absl::Status PipelineGet(const CommandEnv& env, const std::string& pipeline);
absl::Status PipelineDelete(const CommandEnv& env, const std::string& pipeline);
absl::Status PipelineVersions(const CommandEnv& env, const std::string& pipeline);

absl::Status ExperimentCreate(const CommandEnv& env, const std::string& name,
                              const std::string& description);
absl::Status ExperimentList(const CommandEnv& env, bool include_archived);
absl::Status ExperimentGet(const CommandEnv& env, const std::string& experiment);
absl::Status ExperimentArchive(const CommandEnv& env, const std::string& experiment, bool archived);
absl::Status ExperimentDelete(const CommandEnv& env, const std::string& experiment);

absl::Status ArtifactGet(const CommandEnv& env, const std::string& artifact_id);
absl::Status ArtifactList(const CommandEnv& env, const std::string& run_id);
// `regatta lineage ARTIFACT_ID`: the producer, consumers and cached republishers as a tree.
absl::Status Lineage(const CommandEnv& env, const std::string& artifact_id);

absl::Status CacheList(const CommandEnv& env);
// No fingerprints and not `all`: only the expired entries.
absl::Status CachePrune(const CommandEnv& env, bool all,
                        const std::vector<std::string>& fingerprints);

// The human forms (exposed for tests).
std::string RenderLineageTree(const regatta::v1::ArtifactLineageResponse& lineage);
std::string RenderPipelineTable(const std::vector<regatta::v1::Pipeline>& pipelines,
                                const RenderContext& ctx);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_PIPELINES_CLI_H_
