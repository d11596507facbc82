#include "src/api/run_service.h"

#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "src/api/pipeline_refs.h"
#include "src/api/read_access.h"
#include "src/api/serve.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/pipelines/engine/run_driver.h"
#include "src/pipelines/ir/parameters.h"
#include "src/pipelines/schedule/schedule.h"
#include "src/pipelines/schedule/uuid5.h"

namespace regatta::api {

namespace pb = regatta::v1;
using nlohmann::json;

namespace {

constexpr int kMaxPageSize = kMaxPipelinePageSize;

absl::Status RunNotFound(absl::string_view id) {
  return absl::NotFoundError(absl::StrCat("pipeline run \"", id, "\" does not exist"));
}

// What a denied read names.
std::string RunWhat(absl::string_view id) { return absl::StrCat("pipeline run \"", id, "\""); }
std::string RecurringWhat(absl::string_view id) {
  return absl::StrCat("recurring run \"", id, "\"");
}

std::string LocalRoot(const std::string& root) {
  if (root.empty() || absl::StrContains(root, "://")) return root;
  return absl::StrCat("file://", root);
}

// A run id derived from the caller's idempotency key (same key, same run).
std::string RequestRunId(absl::string_view owner, absl::string_view key) {
  // A fixed namespace of Regatta's own for request ids (never change it).
  static const pipelines::schedule::UuidBytes kNamespace =
      *pipelines::schedule::ParseUuid("6d1f5b0e-8a43-4e0c-9f4f-3c2a7d9e1b52");
  return pipelines::schedule::FormatUuid(
      pipelines::schedule::Uuid5(kNamespace, absl::StrCat(owner, "/", key)));
}

}  // namespace

// ---- gRPC adapters ---------------------------------------------------------------------------

grpc::Status RunService::CreateRun(grpc::ServerContext* call, const pb::CreateRunRequest* request,
                                   pb::PipelineRun* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return Create(p, *request); });
}

grpc::Status RunService::GetRun(grpc::ServerContext* call, const pb::GetRunRequest* request,
                                pb::PipelineRun* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return Get(p, request->run_id(), !request->without_tasks());
  });
}

grpc::Status RunService::ListRuns(grpc::ServerContext* call, const pb::ListRunsRequest* request,
                                  pb::ListRunsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return List(p, *request); });
}

grpc::Status RunService::TerminateRun(grpc::ServerContext* call, const pb::RunIdRequest* request,
                                      pb::PipelineRun* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Terminate(p, request->run_id()); });
}

grpc::Status RunService::RetryRun(grpc::ServerContext* call, const pb::RunIdRequest* request,
                                  pb::PipelineRun* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Retry(p, request->run_id()); });
}

grpc::Status RunService::ArchiveRun(grpc::ServerContext* call, const pb::RunIdRequest* request,
                                    pb::PipelineRun* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return SetArchived(p, request->run_id(), true); });
}

grpc::Status RunService::UnarchiveRun(grpc::ServerContext* call, const pb::RunIdRequest* request,
                                      pb::PipelineRun* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return SetArchived(p, request->run_id(), false); });
}

grpc::Status RunService::DeleteRun(grpc::ServerContext* call, const pb::RunIdRequest* request,
                                   pb::DeleteRunResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Delete(p, request->run_id()); });
}

grpc::Status RunService::CreateRecurringRun(grpc::ServerContext* call,
                                            const pb::CreateRecurringRunRequest* request,
                                            pb::RecurringRun* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CreateRecurring(p, *request); });
}

grpc::Status RunService::GetRecurringRun(grpc::ServerContext* call,
                                         const pb::RecurringRunIdRequest* request,
                                         pb::RecurringRun* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return GetRecurring(p, request->recurring_run_id());
  });
}

grpc::Status RunService::ListRecurringRuns(grpc::ServerContext* call,
                                           const pb::ListRecurringRunsRequest* request,
                                           pb::ListRecurringRunsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListRecurring(p, *request); });
}

grpc::Status RunService::EnableRecurringRun(grpc::ServerContext* call,
                                            const pb::RecurringRunIdRequest* request,
                                            pb::RecurringRun* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return SetRecurringEnabled(p, request->recurring_run_id(), true);
  });
}

grpc::Status RunService::DisableRecurringRun(grpc::ServerContext* call,
                                             const pb::RecurringRunIdRequest* request,
                                             pb::RecurringRun* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return SetRecurringEnabled(p, request->recurring_run_id(), false);
  });
}

grpc::Status RunService::DeleteRecurringRun(grpc::ServerContext* call,
                                            const pb::RecurringRunIdRequest* request,
                                            pb::DeleteRecurringRunResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return DeleteRecurring(p, request->recurring_run_id());
  });
}

// ---- Cores -----------------------------------------------------------------------------------

absl::Status RunService::CatchUp() { return CatchUpViews(*ctx_); }

absl::Status RunService::PublishAndWait(const auth::Principal& principal, absl::string_view queue,
                                        absl::string_view job_set, std::vector<pb::Event> events) {
  return PublishAndWaitForViews(*ctx_, principal, queue, job_set, std::move(events));
}

absl::StatusOr<pb::Experiment> RunService::DefaultExperiment(const auth::Principal& principal) {
  absl::StatusOr<pb::Experiment> existing = ctx_->store->GetExperiment(kDefaultExperimentIdForRuns);
  if (!absl::IsNotFound(existing.status())) return existing;
  pb::Event event;
  pb::Experiment& experiment = *event.mutable_experiment_upserted()->mutable_experiment();
  experiment.set_id(kDefaultExperimentIdForRuns);
  experiment.set_name(kDefaultExperimentNameForRuns);
  experiment.set_description("Runs created without an experiment.");
  SetTimestamp(ctx_->clock->Now(), experiment.mutable_create_time());
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  RETURN_IF_ERROR(PublishAndWait(principal, "", "", std::move(events)));
  return ctx_->store->GetExperiment(kDefaultExperimentIdForRuns);
}

absl::StatusOr<pb::PipelineRun> RunService::Prepare(const auth::Principal& principal,
                                                    const pb::CreateRunRequest& request) {
  pb::PipelineRun run;
  pipelines::ir::PipelineSpec spec;
  const int sources = (request.pipeline_version_id().empty() ? 0 : 1) +
                      (request.pipeline().empty() ? 0 : 1) + (request.spec().empty() ? 0 : 1);
  if (sources != 1) {
    return absl::InvalidArgumentError(
        "pipeline_version_id, pipeline, spec: exactly one must be given");
  }
  if (!request.spec().empty()) {
    ASSIGN_OR_RETURN(spec, ParsePipelineText(request.spec(), "spec"));
  } else {
    pb::PipelineVersion version;
    if (!request.pipeline_version_id().empty()) {
      absl::StatusOr<pb::PipelineVersion> found =
          ctx_->store->GetPipelineVersion(request.pipeline_version_id());
      if (absl::IsNotFound(found.status())) {
        return absl::NotFoundError(absl::StrCat(
            "pipeline_version_id: version \"", request.pipeline_version_id(), "\" does not exist"));
      }
      if (!found.ok()) return found.status();
      version = *std::move(found);
    } else {
      ASSIGN_OR_RETURN(pb::Pipeline pipeline,
                       ResolvePipeline(*ctx_->store, request.pipeline(), "pipeline"));
      ASSIGN_OR_RETURN(version, LatestPipelineVersion(*ctx_->store, pipeline));
    }
    ASSIGN_OR_RETURN(spec, ParsePipelineText(version.spec_json(), "pipeline version spec"));
    run.set_pipeline_id(version.pipeline_id());
    run.set_pipeline_version_id(version.id());
  }
  // Experiment.
  pb::Experiment experiment;
  if (request.experiment().empty()) {
    ASSIGN_OR_RETURN(experiment, DefaultExperiment(principal));
  } else {
    ASSIGN_OR_RETURN(experiment,
                     ResolveExperiment(*ctx_->store, request.experiment(), "experiment"));
  }
  if (experiment.archived()) {
    return absl::FailedPreconditionError(
        absl::StrCat("experiment: \"", experiment.name(), "\" is archived"));
  }
  // Queue: the owner must be allowed to submit there.
  const std::string& queue_name =
      request.queue().empty() ? options_.default_queue : request.queue();
  absl::StatusOr<pb::Queue> queue = ctx_->store->GetQueue(queue_name);
  if (absl::IsNotFound(queue.status()) && queue_name == options_.default_queue &&
      ctx_->authorizer->HasGlobal(principal, auth::GlobalPermission::kCreateQueue)) {
    // The pipelines' default queue is made on first use by someone who may create queues (on
    // `regatta up`, everyone), owned by them like any queue they create.
    pb::Event event;
    pb::Queue& created = *event.mutable_queue_created()->mutable_queue();
    created.set_name(queue_name);
    created.set_priority_factor(1);
    *created.add_permissions() = auth::CreatorQueuePermission(principal);
    std::vector<pb::Event> events;
    events.push_back(std::move(event));
    RETURN_IF_ERROR(PublishAndWait(principal, queue_name, "", std::move(events)));
    queue = ctx_->store->GetQueue(queue_name);
  }
  if (absl::IsNotFound(queue.status())) {
    return absl::NotFoundError(absl::StrCat("queue: queue \"", queue_name, "\" does not exist"));
  }
  if (!queue.ok()) return queue.status();
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, *queue, auth::QueueVerb::kSubmit));
  if (queue->cordoned()) {
    return absl::FailedPreconditionError(
        absl::StrCat("queue: queue \"", queue_name, "\" is cordoned"));
  }
  // Parameters: JSON values; a bare word is a string.
  std::map<std::string, json> given;
  for (const auto& [name, text] : request.parameters()) {
    absl::StatusOr<json> value = ParseJson(text);
    if (!value.ok() && IsParseLimitError(value.status())) {
      return absl::InvalidArgumentError(
          absl::StrCat("parameters.", name, ": ", value.status().message()));
    }
    given[name] = value.ok() ? *std::move(value) : json(text);
  }
  absl::StatusOr<std::map<std::string, json>> params =
      pipelines::ir::ResolvePipelineParameters(spec, given);
  if (!params.ok()) {
    return absl::Status(params.status().code(),
                        absl::StrCat("parameters: ", params.status().message()));
  }
  for (const auto& [name, value] : *params) (*run.mutable_parameters())[name] = value.dump();

  run.set_display_name(request.display_name().empty() ? spec.pipeline_info.name
                                                      : request.display_name());
  run.set_description(request.description());
  run.set_experiment_id(experiment.id());
  run.set_pipeline_name(spec.pipeline_info.name);
  run.set_spec_json(SpecJson(spec));
  run.set_platform_spec_json(PlatformSpecJson(spec));
  run.set_queue(queue_name);
  std::string root = request.pipeline_root();
  if (root.empty()) root = spec.default_pipeline_root;
  if (root.empty()) root = options_.default_pipeline_root;
  run.set_pipeline_root(LocalRoot(root));
  run.set_disable_cache(request.disable_cache());
  run.set_owner(principal.name);
  for (const std::string& g : principal.groups) run.add_owner_groups(g);
  run.set_state(pb::PIPELINE_RUN_STATE_PENDING);
  SetTimestamp(ctx_->clock->Now(), run.mutable_create_time());
  return run;
}

absl::StatusOr<pb::PipelineRun> RunService::Launch(const auth::Principal& principal,
                                                   pb::PipelineRun run) {
  const std::string id = run.id();
  const std::string queue = run.queue();
  pb::Event event;
  *event.mutable_pipeline_run_created()->mutable_run() = std::move(run);
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  RETURN_IF_ERROR(
      PublishAndWait(principal, queue, pipelines::engine::RunJobSet(id), std::move(events)));
  // Recorded: the engine resumes it after a restart even if this start fails.
  RETURN_IF_ERROR(engine_->StartRun(id));
  return ctx_->store->GetPipelineRun(id, /*with_tasks=*/false);
}

absl::StatusOr<pb::PipelineRun> RunService::Create(const auth::Principal& principal,
                                                   const pb::CreateRunRequest& request) {
  RETURN_IF_ERROR(CatchUp());
  absl::MutexLock lock(&create_mu_);
  std::string id;
  if (!request.client_request_id().empty()) {
    id = RequestRunId(principal.name, request.client_request_id());
    absl::StatusOr<pb::PipelineRun> existing = ctx_->store->GetPipelineRun(id, false);
    if (existing.ok()) return existing;
    if (!absl::IsNotFound(existing.status())) return existing.status();
  } else {
    id = ctx_->ids->NewId();
  }
  ASSIGN_OR_RETURN(pb::PipelineRun run, Prepare(principal, request));
  run.set_id(id);
  return Launch(principal, std::move(run));
}

absl::StatusOr<pb::PipelineRun> RunService::Get(const auth::Principal& principal,
                                                absl::string_view run_id, bool with_tasks) {
  if (run_id.empty()) return absl::InvalidArgumentError("run_id: required");
  absl::StatusOr<pb::PipelineRun> run = ctx_->store->GetPipelineRun(run_id, with_tasks);
  if (absl::IsNotFound(run.status())) return RunNotFound(run_id);
  if (!run.ok()) return run.status();
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(access.CheckOwned(run->queue(), run->owner(), RunWhat(run_id)));
  return run;
}

absl::StatusOr<pb::ListRunsResponse> RunService::List(const auth::Principal& principal,
                                                      const pb::ListRunsRequest& request) {
  store::PipelineRunFilter filter;
  if (!request.experiment().empty()) {
    ASSIGN_OR_RETURN(pb::Experiment e,
                     ResolveExperiment(*ctx_->store, request.experiment(), "experiment"));
    filter.experiment_id = e.id();
  }
  if (!request.pipeline().empty()) {
    ASSIGN_OR_RETURN(pb::Pipeline p, ResolvePipeline(*ctx_->store, request.pipeline(), "pipeline"));
    filter.pipeline_id = p.id();
  }
  filter.recurring_run_id = request.recurring_run_id();
  for (int s : request.states()) filter.states.push_back(static_cast<pb::PipelineRunState>(s));
  filter.include_archived = request.include_archived();
  filter.only_archived = request.only_archived();
  if (!request.sort_by().empty()) {
    if (request.sort_by() != "create_time" && request.sort_by() != "display_name") {
      return absl::InvalidArgumentError("sort_by: must be \"create_time\" or \"display_name\"");
    }
    filter.sort_by = request.sort_by();
  }
  filter.descending = !request.ascending();
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(absl::StrCat("page_size: at most ", kMaxPageSize));
  }
  ReadAccess access(*ctx_, principal);
  auto read = [&](const store::PageRequest& page) {
    filter.page = page;
    return ctx_->store->ListPipelineRuns(filter);
  };
  ASSIGN_OR_RETURN(
      store::Page<pb::PipelineRun> page,
      ReadablePage<pb::PipelineRun>(access.All(), request.page_size(), request.page_token(), read,
                                    [&](const pb::PipelineRun& run) {
                                      return access.MayReadOwned(run.queue(), run.owner());
                                    }));
  pb::ListRunsResponse response;
  for (pb::PipelineRun& run : page.rows) *response.add_runs() = std::move(run);
  response.set_next_page_token(page.next_page_token);
  return response;
}

absl::StatusOr<pb::PipelineRun> RunService::LoadForChange(const auth::Principal& principal,
                                                          absl::string_view run_id,
                                                          bool replies_with_run) {
  if (run_id.empty()) return absl::InvalidArgumentError("run_id: required");
  RETURN_IF_ERROR(CatchUp());
  absl::StatusOr<pb::PipelineRun> run = ctx_->store->GetPipelineRun(run_id, false);
  if (absl::IsNotFound(run.status())) return RunNotFound(run_id);
  if (!run.ok()) return run.status();
  if (run->owner() == principal.name && !principal.anonymous) return run;
  ASSIGN_OR_RETURN(pb::Queue queue, ctx_->store->GetQueue(run->queue()));
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, queue, auth::QueueVerb::kCancel));
  if (replies_with_run) {
    ReadAccess access(*ctx_, principal);
    RETURN_IF_ERROR(access.Check(run->queue(), RunWhat(run_id)));
  }
  return run;
}

absl::StatusOr<pb::PipelineRun> RunService::Terminate(const auth::Principal& principal,
                                                      absl::string_view run_id) {
  ASSIGN_OR_RETURN(pb::PipelineRun run, LoadForChange(principal, run_id, true));
  if (pipelines::engine::IsTerminal(run.state())) {
    return absl::FailedPreconditionError(absl::StrCat("pipeline run \"", run_id, "\" has ended (",
                                                      pipelines::engine::RunStateName(run.state()),
                                                      ")"));
  }
  RETURN_IF_ERROR(engine_->TerminateRun(run_id));
  RETURN_IF_ERROR(CatchUp());
  return ctx_->store->GetPipelineRun(run_id, false);
}

absl::StatusOr<pb::PipelineRun> RunService::Retry(const auth::Principal& principal,
                                                  absl::string_view run_id) {
  ASSIGN_OR_RETURN(pb::PipelineRun run, LoadForChange(principal, run_id, true));
  RETURN_IF_ERROR(engine_->RetryRun(run_id));
  RETURN_IF_ERROR(CatchUp());
  return ctx_->store->GetPipelineRun(run_id, false);
}

absl::StatusOr<pb::PipelineRun> RunService::SetArchived(const auth::Principal& principal,
                                                        absl::string_view run_id, bool archived) {
  ASSIGN_OR_RETURN(pb::PipelineRun run, LoadForChange(principal, run_id, true));
  pb::Event event;
  event.mutable_pipeline_run_archived()->set_run_id(run.id());
  event.mutable_pipeline_run_archived()->set_archived(archived);
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  RETURN_IF_ERROR(PublishAndWait(principal, run.queue(), pipelines::engine::RunJobSet(run.id()),
                                 std::move(events)));
  return ctx_->store->GetPipelineRun(run_id, false);
}

absl::Status RunService::Delete(const auth::Principal& principal, absl::string_view run_id) {
  ASSIGN_OR_RETURN(pb::PipelineRun run, LoadForChange(principal, run_id, false));
  if (!pipelines::engine::IsTerminal(run.state())) {
    return absl::FailedPreconditionError(absl::StrCat("pipeline run \"", run_id, "\" is ",
                                                      pipelines::engine::RunStateName(run.state()),
                                                      "; terminate it first"));
  }
  pb::Event event;
  event.mutable_pipeline_run_deleted()->set_run_id(run.id());
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  return PublishAndWait(principal, run.queue(), pipelines::engine::RunJobSet(run.id()),
                        std::move(events));
}

// ---- Recurring runs --------------------------------------------------------------------------

absl::StatusOr<pb::RecurringRun> RunService::CreateRecurring(
    const auth::Principal& principal, const pb::CreateRecurringRunRequest& request) {
  RETURN_IF_ERROR(CatchUp());
  pb::RecurringRun rr = request.recurring_run();
  if (rr.display_name().empty()) {
    return absl::InvalidArgumentError("recurring_run.display_name: required");
  }
  if (rr.trigger_case() == pb::RecurringRun::TRIGGER_NOT_SET) {
    return absl::InvalidArgumentError("recurring_run: a cron or periodic trigger is required");
  }
  if (rr.max_concurrency() < 0 || rr.max_concurrency() > 100) {
    return absl::InvalidArgumentError("recurring_run.max_concurrency: must be within 1..100");
  }
  if (rr.max_concurrency() == 0) rr.set_max_concurrency(1);
  // The pipeline version it runs, and the same checks a run gets (queue, parameters).
  pb::CreateRunRequest probe;
  if (!rr.pipeline_version_id().empty()) {
    probe.set_pipeline_version_id(rr.pipeline_version_id());
  } else {
    ASSIGN_OR_RETURN(pb::Pipeline pipeline,
                     ResolvePipeline(*ctx_->store, request.pipeline(), "pipeline"));
    ASSIGN_OR_RETURN(pb::PipelineVersion version, LatestPipelineVersion(*ctx_->store, pipeline));
    rr.set_pipeline_version_id(version.id());
    probe.set_pipeline_version_id(version.id());
  }
  probe.set_experiment(request.experiment().empty() ? rr.experiment_id() : request.experiment());
  *probe.mutable_parameters() = rr.parameters();
  probe.set_queue(rr.queue());
  ASSIGN_OR_RETURN(pb::PipelineRun prepared, Prepare(principal, probe));
  rr.set_pipeline_id(prepared.pipeline_id());
  rr.set_experiment_id(prepared.experiment_id());
  rr.set_queue(prepared.queue());
  absl::StatusOr<pipelines::schedule::Schedule> schedule =
      pipelines::schedule::Schedule::Create(rr);
  if (!schedule.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("recurring_run.", schedule.status().message()));
  }
  rr.set_id(ctx_->ids->NewId());
  rr.set_owner(principal.name);
  rr.set_enabled(true);  // created enabled (Kubeflow's default mode); DisableRecurringRun pauses
  SetTimestamp(ctx_->clock->Now(), rr.mutable_create_time());
  *rr.mutable_update_time() = rr.create_time();
  rr.clear_last_scheduled_time();
  pb::Event event;
  *event.mutable_recurring_run_upserted()->mutable_recurring_run() = rr;
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  RETURN_IF_ERROR(PublishAndWait(principal, "", "", std::move(events)));
  if (controller_ != nullptr) controller_->Wake();
  return ctx_->store->GetRecurringRun(rr.id());
}

absl::StatusOr<pb::RecurringRun> RunService::FindRecurring(absl::string_view id) {
  if (id.empty()) return absl::InvalidArgumentError("recurring_run_id: required");
  absl::StatusOr<pb::RecurringRun> rr = ctx_->store->GetRecurringRun(id);
  if (absl::IsNotFound(rr.status())) {
    return absl::NotFoundError(absl::StrCat("recurring run \"", id, "\" does not exist"));
  }
  return rr;
}

absl::StatusOr<pb::RecurringRun> RunService::GetRecurring(const auth::Principal& principal,
                                                          absl::string_view id) {
  ASSIGN_OR_RETURN(pb::RecurringRun rr, FindRecurring(id));
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(access.CheckOwned(rr.queue(), rr.owner(), RecurringWhat(id)));
  return rr;
}

absl::StatusOr<pb::ListRecurringRunsResponse> RunService::ListRecurring(
    const auth::Principal& principal, const pb::ListRecurringRunsRequest& request) {
  ReadAccess access(*ctx_, principal);
  auto read = [&](const store::PageRequest& page) { return ctx_->store->ListRecurringRuns(page); };
  ASSIGN_OR_RETURN(
      store::Page<pb::RecurringRun> rows,
      ReadablePage<pb::RecurringRun>(
          access.All(), request.page_size(), request.page_token(), read,
          [&](const pb::RecurringRun& rr) { return access.MayReadOwned(rr.queue(), rr.owner()); }));
  pb::ListRecurringRunsResponse out;
  for (pb::RecurringRun& r : rows.rows) *out.add_recurring_runs() = std::move(r);
  out.set_next_page_token(rows.next_page_token);
  return out;
}

absl::StatusOr<pb::RecurringRun> RunService::LoadRecurringForChange(
    const auth::Principal& principal, absl::string_view id, bool replies_with_run) {
  if (id.empty()) return absl::InvalidArgumentError("recurring_run_id: required");
  RETURN_IF_ERROR(CatchUp());
  ASSIGN_OR_RETURN(pb::RecurringRun rr, FindRecurring(id));
  if (rr.owner() == principal.name && !principal.anonymous) return rr;
  ASSIGN_OR_RETURN(pb::Queue queue, ctx_->store->GetQueue(rr.queue()));
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, queue, auth::QueueVerb::kCancel));
  if (replies_with_run) {
    ReadAccess access(*ctx_, principal);
    RETURN_IF_ERROR(access.Check(rr.queue(), RecurringWhat(id)));
  }
  return rr;
}

absl::StatusOr<pb::RecurringRun> RunService::SetRecurringEnabled(const auth::Principal& principal,
                                                                 absl::string_view id,
                                                                 bool enabled) {
  ASSIGN_OR_RETURN(pb::RecurringRun rr, LoadRecurringForChange(principal, id, true));
  rr.set_enabled(enabled);
  SetTimestamp(ctx_->clock->Now(), rr.mutable_update_time());
  pb::Event event;
  *event.mutable_recurring_run_upserted()->mutable_recurring_run() = rr;
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  RETURN_IF_ERROR(PublishAndWait(principal, "", "", std::move(events)));
  if (controller_ != nullptr) controller_->Wake();
  return ctx_->store->GetRecurringRun(id);
}

absl::Status RunService::DeleteRecurring(const auth::Principal& principal, absl::string_view id) {
  ASSIGN_OR_RETURN(pb::RecurringRun rr, LoadRecurringForChange(principal, id, false));
  pb::Event event;
  event.mutable_recurring_run_deleted()->set_recurring_run_id(rr.id());
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  return PublishAndWait(principal, "", "", std::move(events));
}

absl::Status RunService::CreateScheduledRun(const pb::RecurringRun& recurring_run,
                                            absl::string_view run_id,
                                            absl::string_view display_name,
                                            absl::Time scheduled_time) {
  RETURN_IF_ERROR(CatchUp());
  absl::MutexLock lock(&create_mu_);
  absl::StatusOr<pb::PipelineRun> existing = ctx_->store->GetPipelineRun(run_id, false);
  if (existing.ok()) {
    return absl::AlreadyExistsError(absl::StrCat("pipeline run \"", run_id, "\" exists"));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  // The run is created with the authority its recurring run was created with.
  auth::Principal owner;
  owner.name = recurring_run.owner();
  pb::CreateRunRequest request;
  request.set_display_name(std::string(display_name));
  request.set_pipeline_version_id(recurring_run.pipeline_version_id());
  request.set_experiment(recurring_run.experiment_id());
  *request.mutable_parameters() = recurring_run.parameters();
  request.set_queue(recurring_run.queue());
  ASSIGN_OR_RETURN(pb::PipelineRun run, Prepare(owner, request));
  run.set_id(std::string(run_id));
  run.set_recurring_run_id(recurring_run.id());
  SetTimestamp(scheduled_time, run.mutable_scheduled_time());
  return Launch(owner, std::move(run)).status();
}

absl::StatusOr<std::vector<pb::RecurringRun>> RunService::ListEnabledRecurringRuns() {
  RETURN_IF_ERROR(CatchUp());
  std::vector<pb::RecurringRun> enabled;
  store::PageRequest page{"", kMaxPageSize};
  while (true) {
    ASSIGN_OR_RETURN(store::Page<pb::RecurringRun> rows, ctx_->store->ListRecurringRuns(page));
    for (pb::RecurringRun& rr : rows.rows) {
      if (rr.enabled()) enabled.push_back(std::move(rr));
    }
    if (rows.next_page_token.empty()) break;
    page.page_token = rows.next_page_token;
  }
  return enabled;
}

absl::StatusOr<int> RunService::CountActiveRuns(absl::string_view recurring_run_id) {
  store::PipelineRunFilter filter;
  filter.recurring_run_id = std::string(recurring_run_id);
  filter.states = {pb::PIPELINE_RUN_STATE_PENDING, pb::PIPELINE_RUN_STATE_RUNNING,
                   pb::PIPELINE_RUN_STATE_CANCELING};
  filter.include_archived = true;
  filter.page.limit = kMaxPageSize;
  ASSIGN_OR_RETURN(store::Page<pb::PipelineRun> page, ctx_->store->ListPipelineRuns(filter));
  return static_cast<int>(page.rows.size());
}

}  // namespace regatta::api
