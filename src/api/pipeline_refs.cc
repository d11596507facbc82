#include "src/api/pipeline_refs.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"
#include "src/pipelines/authoring/authoring.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/write.h"

namespace regatta::api {

namespace pb = regatta::v1;

absl::Status CheckPageSize(int page_size, absl::string_view field) {
  if (page_size >= 0 && page_size <= kMaxPipelinePageSize) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": must be within 0..", kMaxPipelinePageSize));
}

absl::Status CatchUpViews(const ApiContext& ctx) {
  return ctx.wait_for_views(ctx.log->LastOffset(), ctx.clock->Now() + ctx.view_wait_timeout);
}

absl::Status PublishAndWaitForViews(const ApiContext& ctx, const auth::Principal& principal,
                                    absl::string_view queue, absl::string_view job_set,
                                    std::vector<pb::Event> events) {
  pb::EventSequence seq;
  seq.set_queue(std::string(queue));
  seq.set_job_set(std::string(job_set));
  seq.set_user_id(principal.name);
  for (const std::string& g : principal.groups) seq.add_groups(g);
  for (pb::Event& event : events) {
    SetTimestamp(ctx.clock->Now(), event.mutable_created());
    *seq.add_events() = std::move(event);
  }
  std::vector<pb::EventSequence> batch;
  batch.push_back(std::move(seq));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ctx.log->Append(std::move(batch)));
  return ctx.wait_for_views(offsets.back(), ctx.clock->Now() + ctx.view_wait_timeout);
}

absl::StatusOr<pipelines::ir::PipelineSpec> ParsePipelineText(absl::string_view text,
                                                              absl::string_view field) {
  if (text.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  // A kfp-compiled IR, or Regatta's authoring YAML (compiled to the same IR).
  absl::StatusOr<pipelines::ir::PipelineSpec> spec =
      pipelines::authoring::LoadAnyPipelineFile(text);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(), absl::StrCat(field, ": ", spec.status().message()));
  }
  return spec;
}

std::string SpecJson(const pipelines::ir::PipelineSpec& spec) {
  return pipelines::ir::PipelineSpecToJson(spec).dump();
}

std::string PlatformSpecJson(const pipelines::ir::PipelineSpec& spec) {
  return spec.platform_spec ? spec.platform_spec->dump() : "";
}

absl::StatusOr<pb::Pipeline> ResolvePipeline(store::PipelineViews& views,
                                             absl::string_view id_or_name,
                                             absl::string_view field) {
  if (id_or_name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  absl::StatusOr<pb::Pipeline> pipeline = views.GetPipeline(id_or_name);
  if (absl::IsNotFound(pipeline.status())) pipeline = views.GetPipelineByName(id_or_name);
  if (absl::IsNotFound(pipeline.status())) {
    return absl::NotFoundError(
        absl::StrCat(field, ": pipeline \"", id_or_name, "\" does not exist"));
  }
  return pipeline;
}

absl::StatusOr<pb::PipelineVersion> LatestPipelineVersion(store::PipelineViews& views,
                                                          const pb::Pipeline& pipeline) {
  store::PageRequest page;
  page.limit = 1;
  ASSIGN_OR_RETURN(store::Page<pb::PipelineVersion> versions,
                   views.ListPipelineVersions(pipeline.id(), page, /*with_spec=*/true));
  if (versions.rows.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("pipeline \"", pipeline.name(), "\" has no version"));
  }
  return versions.rows.front();
}

absl::StatusOr<pb::PipelineVersion> ResolvePipelineVersion(store::PipelineViews& views,
                                                           absl::string_view id,
                                                           absl::string_view field) {
  if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  absl::StatusOr<pb::PipelineVersion> version = views.GetPipelineVersion(id);
  if (absl::IsNotFound(version.status())) {
    return absl::NotFoundError(absl::StrCat(field, ": version \"", id, "\" does not exist"));
  }
  return version;
}

absl::StatusOr<pb::Experiment> ResolveExperiment(store::PipelineViews& views,
                                                 absl::string_view id_or_name,
                                                 absl::string_view field) {
  if (id_or_name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  absl::StatusOr<pb::Experiment> experiment = views.GetExperiment(id_or_name);
  if (absl::IsNotFound(experiment.status())) experiment = views.GetExperimentByName(id_or_name);
  if (absl::IsNotFound(experiment.status())) {
    return absl::NotFoundError(
        absl::StrCat(field, ": experiment \"", id_or_name, "\" does not exist"));
  }
  return experiment;
}

}  // namespace regatta::api
