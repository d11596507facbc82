#ifndef REGATTA_SRC_API_PIPELINE_REFS_H_
#define REGATTA_SRC_API_PIPELINE_REFS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/pipelines.pb.h"
#include "src/pipelines/ir/pipeline_spec.h"
#include "src/store/store.h"

namespace regatta::api {

// Shared by the pipeline catalogue and the run service.

// A pipeline spec from text: a kfp-compiled IR (YAML or JSON, optional platform document) or
// Regatta's authoring YAML.
// INVALID_ARGUMENT "<field>: <path in the document>: <message>".
absl::StatusOr<pipelines::ir::PipelineSpec> ParsePipelineText(absl::string_view text,
                                                              absl::string_view field);
// The IR as the server stores it (JSON in the IR's names) and its platform document.
std::string SpecJson(const pipelines::ir::PipelineSpec& spec);
std::string PlatformSpecJson(const pipelines::ir::PipelineSpec& spec);

// A pipeline by id or by name. NOT_FOUND "<field>: pipeline \"x\" does not exist".
absl::StatusOr<regatta::v1::Pipeline> ResolvePipeline(store::PipelineViews& views,
                                                      absl::string_view id_or_name,
                                                      absl::string_view field);
// The newest version of a pipeline (with its spec).
absl::StatusOr<regatta::v1::PipelineVersion> LatestPipelineVersion(
    store::PipelineViews& views, const regatta::v1::Pipeline& pipeline);
// An experiment by id or by name. NOT_FOUND names the field.
absl::StatusOr<regatta::v1::Experiment> ResolveExperiment(store::PipelineViews& views,
                                                          absl::string_view id_or_name,
                                                          absl::string_view field);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_PIPELINE_REFS_H_
