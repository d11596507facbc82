#ifndef REGATTA_SRC_API_PIPELINE_REFS_H_
#define REGATTA_SRC_API_PIPELINE_REFS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/events.pb.h"
#include "regatta/v1/pipelines.pb.h"
#include "src/api/api_context.h"
#include "src/pipelines/ir/pipeline_spec.h"
#include "src/store/store.h"

namespace regatta::api {

// Shared by the pipeline catalogue and the run service.

// The experiment runs go to when the request names none (Kubeflow's "Default"); the run
// service makes it on first use, and creating an experiment of that name makes the same one.
inline constexpr char kDefaultExperimentIdForRuns[] = "default";
inline constexpr char kDefaultExperimentNameForRuns[] = "Default";
// The largest page a listing of the pipeline layer serves.
inline constexpr int kMaxPipelinePageSize = 10'000;

// INVALID_ARGUMENT naming `field` unless 0 <= page_size <= kMaxPipelinePageSize.
absl::Status CheckPageSize(int page_size, absl::string_view field = "page_size");

// Waits until the views include everything logged so far (before a check-then-publish).
absl::Status CatchUpViews(const ApiContext& ctx);
// Publishes `events` in one sequence routed by (queue, job_set) as `principal` and waits until
// the views include it.
absl::Status PublishAndWaitForViews(const ApiContext& ctx, const auth::Principal& principal,
                                    absl::string_view queue, absl::string_view job_set,
                                    std::vector<regatta::v1::Event> events);

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
// A pipeline version by id. NOT_FOUND "<field>: version \"x\" does not exist".
absl::StatusOr<regatta::v1::PipelineVersion> ResolvePipelineVersion(store::PipelineViews& views,
                                                                    absl::string_view id,
                                                                    absl::string_view field);
// An experiment by id or by name. NOT_FOUND names the field.
absl::StatusOr<regatta::v1::Experiment> ResolveExperiment(store::PipelineViews& views,
                                                          absl::string_view id_or_name,
                                                          absl::string_view field);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_PIPELINE_REFS_H_
