#include "src/api/pipeline_service.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/api/pipeline_refs.h"
#include "src/api/read_access.h"
#include "src/api/serve.h"
#include "src/common/status_macros.h"

namespace regatta::api {

namespace pb = regatta::v1;

namespace {

constexpr size_t kMaxNameBytes = 256;
constexpr char kDefaultVersionName[] = "v1";

// Names of pipelines, versions and experiments: 1..256 bytes, no control characters (they appear
// in tables and, percent-encoded, in REST paths).
absl::Status CheckName(absl::string_view name, absl::string_view field) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  if (name.size() > kMaxNameBytes) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": at most ", kMaxNameBytes, " bytes"));
  }
  for (char c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": must not contain control characters"));
    }
  }
  return absl::OkStatus();
}

std::vector<pb::Event> OneEvent(pb::Event event) {
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  return events;
}

// The store names task states without their prefix ("SUCCEEDED"); empty once the run is gone.
pb::LineageTaskRef ToTaskRef(const store::ArtifactLineage::TaskRef& ref) {
  pb::LineageTaskRef out;
  out.set_run_id(ref.run_id);
  out.set_task_path(ref.task_path);
  out.set_io_name(ref.io_name);
  pb::PipelineTaskState state = pb::PIPELINE_TASK_STATE_UNSPECIFIED;
  if (!ref.task_state.empty()) {
    pb::PipelineTaskState_Parse(absl::StrCat("PIPELINE_TASK_STATE_", ref.task_state), &state);
  }
  out.set_task_state(state);
  return out;
}

}  // namespace

// ---- gRPC adapters ---------------------------------------------------------------------------

grpc::Status PipelineService::CreatePipeline(grpc::ServerContext* call,
                                             const pb::CreatePipelineRequest* request,
                                             pb::CreatePipelineResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CreatePipelineCore(p, *request); });
}

grpc::Status PipelineService::GetPipeline(grpc::ServerContext* call,
                                          const pb::GetPipelineRequest* request,
                                          pb::Pipeline* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) {
    return ResolvePipeline(*ctx_->store, request->pipeline(), "pipeline");
  });
}

grpc::Status PipelineService::ListPipelines(grpc::ServerContext* call,
                                            const pb::ListPipelinesRequest* request,
                                            pb::ListPipelinesResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ListPipelinesCore(*request); });
}

grpc::Status PipelineService::DeletePipeline(grpc::ServerContext* call,
                                             const pb::DeletePipelineRequest* request,
                                             pb::DeletePipelineResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return DeletePipelineCore(p, request->pipeline());
  });
}

grpc::Status PipelineService::CreatePipelineVersion(grpc::ServerContext* call,
                                                    const pb::CreatePipelineVersionRequest* request,
                                                    pb::PipelineVersion* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CreateVersionCore(p, *request); });
}

grpc::Status PipelineService::GetPipelineVersion(grpc::ServerContext* call,
                                                 const pb::GetPipelineVersionRequest* request,
                                                 pb::PipelineVersion* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) {
    return ResolvePipelineVersion(*ctx_->store, request->version_id(), "version_id");
  });
}

grpc::Status PipelineService::ListPipelineVersions(grpc::ServerContext* call,
                                                   const pb::ListPipelineVersionsRequest* request,
                                                   pb::ListPipelineVersionsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ListVersionsCore(*request); });
}

grpc::Status PipelineService::DeletePipelineVersion(grpc::ServerContext* call,
                                                    const pb::DeletePipelineVersionRequest* request,
                                                    pb::DeletePipelineVersionResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return DeleteVersionCore(p, request->version_id());
  });
}

grpc::Status PipelineService::CreateExperiment(grpc::ServerContext* call,
                                               const pb::CreateExperimentRequest* request,
                                               pb::Experiment* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CreateExperimentCore(p, *request); });
}

grpc::Status PipelineService::GetExperiment(grpc::ServerContext* call,
                                            const pb::GetExperimentRequest* request,
                                            pb::Experiment* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) {
    return ResolveExperiment(*ctx_->store, request->experiment(), "experiment");
  });
}

grpc::Status PipelineService::ListExperiments(grpc::ServerContext* call,
                                              const pb::ListExperimentsRequest* request,
                                              pb::ListExperimentsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ListExperimentsCore(*request); });
}

grpc::Status PipelineService::ArchiveExperiment(grpc::ServerContext* call,
                                                const pb::ArchiveExperimentRequest* request,
                                                pb::Experiment* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return SetExperimentArchived(p, request->experiment(), true);
  });
}

grpc::Status PipelineService::UnarchiveExperiment(grpc::ServerContext* call,
                                                  const pb::ArchiveExperimentRequest* request,
                                                  pb::Experiment* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return SetExperimentArchived(p, request->experiment(), false);
  });
}

grpc::Status PipelineService::DeleteExperiment(grpc::ServerContext* call,
                                               const pb::DeleteExperimentRequest* request,
                                               pb::DeleteExperimentResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return DeleteExperimentCore(p, request->experiment());
  });
}

grpc::Status PipelineService::GetArtifact(grpc::ServerContext* call,
                                          const pb::GetArtifactRequest* request,
                                          pb::PipelineArtifact* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return GetArtifactCore(p, request->artifact_id());
  });
}

grpc::Status PipelineService::ListArtifacts(grpc::ServerContext* call,
                                            const pb::ListArtifactsRequest* request,
                                            pb::ListArtifactsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListArtifactsCore(p, request->run_id()); });
}

grpc::Status PipelineService::GetArtifactLineage(grpc::ServerContext* call,
                                                 const pb::GetArtifactLineageRequest* request,
                                                 pb::ArtifactLineageResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return LineageCore(p, request->artifact_id()); });
}

grpc::Status PipelineService::ListCacheEntries(grpc::ServerContext* call,
                                               const pb::ListCacheEntriesRequest* request,
                                               pb::ListCacheEntriesResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListCacheCore(p, *request); });
}

grpc::Status PipelineService::PruneCache(grpc::ServerContext* call,
                                         const pb::PruneCacheRequest* request,
                                         pb::PruneCacheResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return PruneCacheCore(p, *request); });
}

// ---- Pipelines and versions ------------------------------------------------------------------

absl::Status PipelineService::Publish(const auth::Principal& principal,
                                      std::vector<pb::Event> events) {
  // Catalogue events belong to no queue or job set.
  return PublishAndWaitForViews(*ctx_, principal, "", "", std::move(events));
}

absl::StatusOr<pb::CreatePipelineResponse> PipelineService::CreatePipelineCore(
    const auth::Principal& principal, const pb::CreatePipelineRequest& request) {
  RETURN_IF_ERROR(CheckName(request.name(), "name"));
  const std::string version_name =
      request.version_name().empty() ? kDefaultVersionName : request.version_name();
  RETURN_IF_ERROR(CheckName(version_name, "version_name"));
  ASSIGN_OR_RETURN(pipelines::ir::PipelineSpec spec, ParsePipelineText(request.spec(), "spec"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  absl::MutexLock lock(&catalog_mu_);
  absl::StatusOr<pb::Pipeline> existing = ctx_->store->GetPipelineByName(request.name());
  if (existing.ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("name: pipeline \"", request.name(), "\" already exists"));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();

  pb::Event pipeline_event;
  pb::Pipeline& pipeline = *pipeline_event.mutable_pipeline_created()->mutable_pipeline();
  pipeline.set_id(ctx_->ids->NewId());
  pipeline.set_name(request.name());
  pipeline.set_display_name(request.display_name().empty() ? request.name()
                                                           : request.display_name());
  pipeline.set_description(request.description());
  pipeline.set_owner(principal.name);
  SetTimestamp(ctx_->clock->Now(), pipeline.mutable_create_time());
  pb::Event version_event;
  pb::PipelineVersion& version =
      *version_event.mutable_pipeline_version_created()->mutable_version();
  version.set_id(ctx_->ids->NewId());
  version.set_pipeline_id(pipeline.id());
  version.set_name(version_name);
  version.set_description(request.description());
  version.set_spec_json(SpecJson(spec));
  version.set_platform_spec_json(PlatformSpecJson(spec));
  *version.mutable_create_time() = pipeline.create_time();
  const std::string pipeline_id = pipeline.id();
  const std::string version_id = version.id();

  std::vector<pb::Event> events;
  events.push_back(std::move(pipeline_event));
  events.push_back(std::move(version_event));
  RETURN_IF_ERROR(Publish(principal, std::move(events)));
  pb::CreatePipelineResponse response;
  ASSIGN_OR_RETURN(*response.mutable_pipeline(), ctx_->store->GetPipeline(pipeline_id));
  ASSIGN_OR_RETURN(*response.mutable_version(), ctx_->store->GetPipelineVersion(version_id));
  return response;
}

absl::StatusOr<pb::ListPipelinesResponse> PipelineService::ListPipelinesCore(
    const pb::ListPipelinesRequest& request) {
  RETURN_IF_ERROR(CheckPageSize(request.page_size()));
  store::PageRequest page{request.page_token(), request.page_size()};
  ASSIGN_OR_RETURN(store::Page<pb::Pipeline> rows, ctx_->store->ListPipelines(page));
  pb::ListPipelinesResponse response;
  for (pb::Pipeline& p : rows.rows) *response.add_pipelines() = std::move(p);
  response.set_next_page_token(rows.next_page_token);
  return response;
}

absl::Status PipelineService::DeletePipelineCore(const auth::Principal& principal,
                                                 absl::string_view pipeline_ref) {
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  ASSIGN_OR_RETURN(pb::Pipeline pipeline, ResolvePipeline(*ctx_->store, pipeline_ref, "pipeline"));
  const bool owner = pipeline.owner() == principal.name && !principal.anonymous;
  if (!owner && !ctx_->authorizer->HasGlobal(principal, auth::GlobalPermission::kDeleteQueue)) {
    return absl::PermissionDeniedError(
        absl::StrCat("user \"", principal.name, "\" may not delete pipeline \"", pipeline.name(),
                     "\" (owned by \"", pipeline.owner(), "\"; needs permission \"",
                     auth::GlobalPermissionName(auth::GlobalPermission::kDeleteQueue), "\")"));
  }
  pb::Event event;
  event.mutable_pipeline_deleted()->set_pipeline_id(pipeline.id());
  return Publish(principal, OneEvent(std::move(event)));
}

absl::StatusOr<bool> PipelineService::VersionNameTaken(absl::string_view pipeline_id,
                                                       absl::string_view name) {
  store::PageRequest page{"", kMaxPipelinePageSize};
  while (true) {
    ASSIGN_OR_RETURN(store::Page<pb::PipelineVersion> rows,
                     ctx_->store->ListPipelineVersions(pipeline_id, page, /*with_spec=*/false));
    for (const pb::PipelineVersion& v : rows.rows) {
      if (v.name() == name) return true;
    }
    if (rows.next_page_token.empty()) return false;
    page.page_token = rows.next_page_token;
  }
}

absl::StatusOr<pb::PipelineVersion> PipelineService::CreateVersionCore(
    const auth::Principal& principal, const pb::CreatePipelineVersionRequest& request) {
  RETURN_IF_ERROR(CheckName(request.name(), "name"));
  ASSIGN_OR_RETURN(pipelines::ir::PipelineSpec spec, ParsePipelineText(request.spec(), "spec"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  absl::MutexLock lock(&catalog_mu_);
  ASSIGN_OR_RETURN(pb::Pipeline pipeline,
                   ResolvePipeline(*ctx_->store, request.pipeline(), "pipeline"));
  ASSIGN_OR_RETURN(bool taken, VersionNameTaken(pipeline.id(), request.name()));
  if (taken) {
    return absl::AlreadyExistsError(absl::StrCat(
        "name: pipeline \"", pipeline.name(), "\" already has a version \"", request.name(), "\""));
  }
  pb::Event event;
  pb::PipelineVersion& version = *event.mutable_pipeline_version_created()->mutable_version();
  version.set_id(ctx_->ids->NewId());
  version.set_pipeline_id(pipeline.id());
  version.set_name(request.name());
  version.set_description(request.description());
  version.set_spec_json(SpecJson(spec));
  version.set_platform_spec_json(PlatformSpecJson(spec));
  SetTimestamp(ctx_->clock->Now(), version.mutable_create_time());
  const std::string id = version.id();
  RETURN_IF_ERROR(Publish(principal, OneEvent(std::move(event))));
  return ctx_->store->GetPipelineVersion(id);
}

absl::StatusOr<pb::ListPipelineVersionsResponse> PipelineService::ListVersionsCore(
    const pb::ListPipelineVersionsRequest& request) {
  RETURN_IF_ERROR(CheckPageSize(request.page_size()));
  ASSIGN_OR_RETURN(pb::Pipeline pipeline,
                   ResolvePipeline(*ctx_->store, request.pipeline(), "pipeline"));
  store::PageRequest page{request.page_token(), request.page_size()};
  ASSIGN_OR_RETURN(store::Page<pb::PipelineVersion> rows,
                   ctx_->store->ListPipelineVersions(pipeline.id(), page, /*with_spec=*/false));
  pb::ListPipelineVersionsResponse response;
  for (pb::PipelineVersion& v : rows.rows) *response.add_versions() = std::move(v);
  response.set_next_page_token(rows.next_page_token);
  return response;
}

absl::Status PipelineService::DeleteVersionCore(const auth::Principal& principal,
                                                absl::string_view version_id) {
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  ASSIGN_OR_RETURN(pb::PipelineVersion version,
                   ResolvePipelineVersion(*ctx_->store, version_id, "version_id"));
  pb::Event event;
  event.mutable_pipeline_version_deleted()->set_version_id(version.id());
  return Publish(principal, OneEvent(std::move(event)));
}

// ---- Experiments -----------------------------------------------------------------------------

absl::StatusOr<pb::Experiment> PipelineService::CreateExperimentCore(
    const auth::Principal& principal, const pb::CreateExperimentRequest& request) {
  RETURN_IF_ERROR(CheckName(request.name(), "name"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  absl::MutexLock lock(&catalog_mu_);
  absl::StatusOr<pb::Experiment> existing = ctx_->store->GetExperimentByName(request.name());
  if (existing.ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("name: experiment \"", request.name(), "\" already exists"));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  pb::Event event;
  pb::Experiment& experiment = *event.mutable_experiment_upserted()->mutable_experiment();
  // "Default" is the run service's default experiment: made here first, it is the same one.
  experiment.set_id(request.name() == kDefaultExperimentNameForRuns ? kDefaultExperimentIdForRuns
                                                                    : ctx_->ids->NewId());
  experiment.set_name(request.name());
  experiment.set_description(request.description());
  experiment.set_owner(principal.name);
  SetTimestamp(ctx_->clock->Now(), experiment.mutable_create_time());
  const std::string id = experiment.id();
  RETURN_IF_ERROR(Publish(principal, OneEvent(std::move(event))));
  return ctx_->store->GetExperiment(id);
}

absl::StatusOr<pb::ListExperimentsResponse> PipelineService::ListExperimentsCore(
    const pb::ListExperimentsRequest& request) {
  RETURN_IF_ERROR(CheckPageSize(request.page_size()));
  store::PageRequest page{request.page_token(), request.page_size()};
  ASSIGN_OR_RETURN(store::Page<pb::Experiment> rows,
                   ctx_->store->ListExperiments(page, request.include_archived()));
  pb::ListExperimentsResponse response;
  for (pb::Experiment& e : rows.rows) *response.add_experiments() = std::move(e);
  response.set_next_page_token(rows.next_page_token);
  return response;
}

absl::StatusOr<pb::Experiment> PipelineService::SetExperimentArchived(
    const auth::Principal& principal, absl::string_view experiment_ref, bool archived) {
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  absl::MutexLock lock(&catalog_mu_);
  ASSIGN_OR_RETURN(pb::Experiment experiment,
                   ResolveExperiment(*ctx_->store, experiment_ref, "experiment"));
  if (experiment.archived() == archived) return experiment;
  experiment.set_archived(archived);
  const std::string id = experiment.id();
  pb::Event event;
  *event.mutable_experiment_upserted()->mutable_experiment() = std::move(experiment);
  RETURN_IF_ERROR(Publish(principal, OneEvent(std::move(event))));
  return ctx_->store->GetExperiment(id);
}

absl::Status PipelineService::DeleteExperimentCore(const auth::Principal& principal,
                                                   absl::string_view experiment_ref) {
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  ASSIGN_OR_RETURN(pb::Experiment experiment,
                   ResolveExperiment(*ctx_->store, experiment_ref, "experiment"));
  store::PipelineRunFilter filter;
  filter.experiment_id = experiment.id();
  filter.states = {pb::PIPELINE_RUN_STATE_PENDING, pb::PIPELINE_RUN_STATE_RUNNING,
                   pb::PIPELINE_RUN_STATE_CANCELING};
  filter.include_archived = true;
  filter.page.limit = 3;
  ASSIGN_OR_RETURN(store::Page<pb::PipelineRun> active, ctx_->store->ListPipelineRuns(filter));
  if (!active.rows.empty()) {
    std::vector<std::string> ids;
    for (const pb::PipelineRun& run : active.rows) ids.push_back(run.id());
    return absl::FailedPreconditionError(absl::StrCat(
        "experiment: \"", experiment.name(), "\" has active runs (", absl::StrJoin(ids, ", "),
        active.next_page_token.empty() ? "" : ", ...", "); terminate them first"));
  }
  pb::Event event;
  event.mutable_experiment_deleted()->set_experiment_id(experiment.id());
  return Publish(principal, OneEvent(std::move(event)));
}

// ---- Artifacts and lineage -------------------------------------------------------------------

absl::StatusOr<pb::PipelineArtifact> PipelineService::GetArtifactCore(
    const auth::Principal& principal, absl::string_view artifact_id) {
  ReadAccess access(*ctx_, principal);
  return ReadableArtifact(access, artifact_id);
}

absl::StatusOr<pb::PipelineArtifact> PipelineService::ReadableArtifact(
    ReadAccess& access, absl::string_view artifact_id) {
  if (artifact_id.empty()) return absl::InvalidArgumentError("artifact_id: required");
  absl::StatusOr<pb::PipelineArtifact> artifact = ctx_->store->GetArtifact(artifact_id);
  if (absl::IsNotFound(artifact.status())) {
    return absl::NotFoundError(
        absl::StrCat("artifact_id: artifact \"", artifact_id, "\" does not exist"));
  }
  if (!artifact.ok()) return artifact.status();
  RETURN_IF_ERROR(
      access.CheckRun(artifact->run_id(), absl::StrCat("artifact \"", artifact_id, "\"")));
  return artifact;
}

absl::StatusOr<pb::ListArtifactsResponse> PipelineService::ListArtifactsCore(
    const auth::Principal& principal, absl::string_view run_id) {
  if (run_id.empty()) return absl::InvalidArgumentError("run_id: required");
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(
      access.CheckRun(run_id, absl::StrCat("the artifacts of pipeline run \"", run_id, "\"")));
  ASSIGN_OR_RETURN(std::vector<pb::PipelineArtifact> artifacts,
                   ctx_->store->ListRunArtifacts(run_id));
  pb::ListArtifactsResponse response;
  for (pb::PipelineArtifact& a : artifacts) *response.add_artifacts() = std::move(a);
  return response;
}

absl::StatusOr<pb::ArtifactLineageResponse> PipelineService::LineageCore(
    const auth::Principal& principal, absl::string_view artifact_id) {
  // The artifact's existence and readability first, for an error naming the field.
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(ReadableArtifact(access, artifact_id).status());
  ASSIGN_OR_RETURN(store::ArtifactLineage lineage, ctx_->store->GetArtifactLineage(artifact_id));
  pb::ArtifactLineageResponse response;
  *response.mutable_artifact() = std::move(lineage.artifact);
  // Tasks of other runs that used it appear only if those runs are readable too.
  auto add_readable = [&](const std::vector<store::ArtifactLineage::TaskRef>& refs,
                          google::protobuf::RepeatedPtrField<pb::LineageTaskRef>* out) {
    for (const auto& ref : refs) {
      ASSIGN_OR_RETURN(bool readable, access.MayReadRun(ref.run_id));
      if (readable) *out->Add() = ToTaskRef(ref);
    }
    return absl::OkStatus();
  };
  ASSIGN_OR_RETURN(bool producer_readable, access.MayReadRun(lineage.producer.run_id));
  if (producer_readable) *response.mutable_producer() = ToTaskRef(lineage.producer);
  RETURN_IF_ERROR(add_readable(lineage.consumers, response.mutable_consumers()));
  RETURN_IF_ERROR(add_readable(lineage.republished_by, response.mutable_republished_by()));
  return response;
}

// ---- Cache -----------------------------------------------------------------------------------

absl::StatusOr<pb::ListCacheEntriesResponse> PipelineService::ListCacheCore(
    const auth::Principal& principal, const pb::ListCacheEntriesRequest& request) {
  RETURN_IF_ERROR(CheckPageSize(request.page_size()));
  // One cache serves every queue: its entries hold the outputs of any queue's runs.
  RETURN_IF_ERROR(ReadAccess(*ctx_, principal)
                      .CheckAll("the step cache", "it holds the outputs of every queue's runs"));
  store::PageRequest page{request.page_token(), request.page_size()};
  ASSIGN_OR_RETURN(store::Page<pb::CacheEntry> rows, ctx_->store->ListCacheEntries(page));
  pb::ListCacheEntriesResponse response;
  for (pb::CacheEntry& e : rows.rows) *response.add_entries() = std::move(e);
  response.set_next_page_token(rows.next_page_token);
  return response;
}

absl::StatusOr<std::vector<pb::CacheEntry>> PipelineService::AllCacheEntries() {
  std::vector<pb::CacheEntry> all;
  store::PageRequest page{"", kMaxPipelinePageSize};
  while (true) {
    ASSIGN_OR_RETURN(store::Page<pb::CacheEntry> rows, ctx_->store->ListCacheEntries(page));
    for (pb::CacheEntry& e : rows.rows) all.push_back(std::move(e));
    if (rows.next_page_token.empty()) return all;
    page.page_token = rows.next_page_token;
  }
}

absl::StatusOr<pb::PruneCacheResponse> PipelineService::PruneCacheCore(
    const auth::Principal& principal, const pb::PruneCacheRequest& request) {
  if (request.all() && !request.fingerprints().empty()) {
    return absl::InvalidArgumentError("all, fingerprints: give at most one");
  }
  // One cache serves every queue: pruning it makes any queue's runs compute their steps again.
  if (!ctx_->authorizer->HasGlobal(principal, auth::GlobalPermission::kDeleteQueue)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "user \"", principal.name,
        "\" may not prune the step cache (it serves every queue's runs; ", "needs permission \"",
        auth::GlobalPermissionName(auth::GlobalPermission::kDeleteQueue), "\")"));
  }
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  ASSIGN_OR_RETURN(std::vector<pb::CacheEntry> entries, AllCacheEntries());
  const absl::flat_hash_set<std::string> named(request.fingerprints().begin(),
                                               request.fingerprints().end());
  const absl::Time now = ctx_->clock->Now();
  pb::Event event;
  pb::CacheEntriesDeleted& deleted = *event.mutable_cache_entries_deleted();
  for (const pb::CacheEntry& entry : entries) {
    bool prune;
    if (request.all()) {
      prune = true;
    } else if (!named.empty()) {
      prune = named.contains(entry.fingerprint());
    } else {
      prune = entry.has_expire_time() && FromTimestamp(entry.expire_time()) <= now;
    }
    if (prune) deleted.add_fingerprints(entry.fingerprint());
  }
  pb::PruneCacheResponse response;
  response.set_deleted(deleted.fingerprints_size());
  if (deleted.fingerprints_size() > 0) {
    RETURN_IF_ERROR(Publish(principal, OneEvent(std::move(event))));
  }
  return response;
}

}  // namespace regatta::api
