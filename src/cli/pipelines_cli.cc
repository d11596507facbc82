#include "src/cli/pipelines_cli.h"

#include <ostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using Stub = v1::PipelineService::Stub;

// One unary PipelineService call with the client's deadline and credentials.
template <typename Req, typename Resp>
absl::StatusOr<Resp> Call(Client& client,
                          grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                          const Req& request) {
  return CallUnary(client, client.pipelines(), method, request);
}

// Every page of a listing, merged into the first response.
template <typename Req, typename Resp, typename Rows>
absl::StatusOr<Resp> CallAllPages(Client& client,
                                  grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&,
                                                               Resp*),
                                  Req request, Rows rows) {
  return cli::CallAllPages(client, client.pipelines(), method, std::move(request), rows);
}

absl::Status Required(const std::string& value, absl::string_view what) {
  if (value.empty()) return UsageError(absl::StrCat(what, " is required"));
  return absl::OkStatus();
}

std::string TaskStateName(v1::PipelineTaskState state) {
  if (state == v1::PIPELINE_TASK_STATE_UNSPECIFIED) return "";
  constexpr absl::string_view kPrefix = "PIPELINE_TASK_STATE_";
  return v1::PipelineTaskState_Name(state).substr(kPrefix.size());
}

std::string ShortFingerprint(const std::string& fingerprint) { return fingerprint.substr(0, 16); }

std::string RenderVersionTable(const google::protobuf::RepeatedPtrField<v1::PipelineVersion>& rows,
                               const RenderContext& ctx) {
  Table table({"ID", "NAME", "DESCRIPTION", "AGE"});
  for (const v1::PipelineVersion& v : rows) {
    table.AddRow({v.id(), v.name(), v.description(), FormatAge(v.create_time(), ctx)});
  }
  return table.Render();
}

std::string RenderExperimentTable(const google::protobuf::RepeatedPtrField<v1::Experiment>& rows,
                                  const RenderContext& ctx) {
  Table table({"ID", "NAME", "OWNER", "ARCHIVED", "AGE"});
  for (const v1::Experiment& e : rows) {
    table.AddRow({e.id(), e.name(), e.owner(), e.archived() ? "yes" : "no",
                  FormatAge(e.create_time(), ctx)});
  }
  return table.Render();
}

std::string RenderExperimentDetails(const v1::Experiment& e, const RenderContext& ctx) {
  Details details;
  details.Add("Experiment:", e.name());
  details.Add("ID:", e.id());
  details.Add("Description:", e.description());
  details.Add("Owner:", e.owner());
  details.Add("Archived:", e.archived() ? "yes" : "no");
  details.Add("Created:", FormatTimeWithAge(e.create_time(), ctx));
  return details.Render();
}

std::string RenderArtifactTable(
    const google::protobuf::RepeatedPtrField<v1::PipelineArtifact>& rows) {
  Table table({"ID", "TASK", "NAME", "TYPE", "URI"});
  for (const v1::PipelineArtifact& a : rows) {
    table.AddRow({a.id(), a.task_path(), a.name(), a.schema_title(), a.uri()});
  }
  return table.Render();
}

std::string RenderArtifactDetails(const v1::PipelineArtifact& a, const RenderContext& ctx) {
  Details details;
  details.Add("Artifact:", a.id());
  details.Add("Name:", a.name());
  details.Add("Type:", absl::StrCat(a.schema_title(), a.schema_version().empty() ? "" : " ",
                                    a.schema_version()));
  details.Add("URI:", a.uri());
  details.Add("Run:", a.run_id());
  details.Add("Task:", a.task_path());
  details.Add("Metadata:", a.metadata_json());
  details.Add("Created:", FormatTimeWithAge(a.create_time(), ctx));
  return details.Render();
}

std::string RenderCacheTable(const google::protobuf::RepeatedPtrField<v1::CacheEntry>& rows,
                             const RenderContext& ctx) {
  Table table({"FINGERPRINT", "PIPELINE", "RUN", "TASK", "AGE", "EXPIRES"});
  for (const v1::CacheEntry& e : rows) {
    table.AddRow({ShortFingerprint(e.fingerprint()), e.pipeline_name(), e.run_id(), e.task_path(),
                  FormatAge(e.create_time(), ctx),
                  IsSet(e.expire_time()) ? FormatTime(e.expire_time(), ctx) : "never"});
  }
  return table.Render();
}

}  // namespace

std::string RenderPipelineTable(const std::vector<v1::Pipeline>& pipelines,
                                const RenderContext& ctx) {
  Table table({"ID", "NAME", "OWNER", "DESCRIPTION", "AGE"});
  for (const v1::Pipeline& p : pipelines) {
    table.AddRow({p.id(), p.name(), p.owner(), p.description(), FormatAge(p.create_time(), ctx)});
  }
  return table.Render();
}

std::string RenderLineageTree(const v1::ArtifactLineageResponse& lineage) {
  const v1::PipelineArtifact& a = lineage.artifact();
  std::string out = absl::StrCat("artifact ", a.id(), " ", a.name(), " (", a.schema_title(), ")\n",
                                 "  uri ", a.uri(), "\n");
  struct Line {
    std::string relation;
    const v1::LineageTaskRef* ref;
    const char* io;
  };
  std::vector<Line> lines;
  lines.push_back({"produced by", &lineage.producer(), "output"});
  for (const auto& ref : lineage.consumers()) lines.push_back({"consumed by", &ref, "input"});
  for (const auto& ref : lineage.republished_by()) {
    lines.push_back({"republished by", &ref, "output"});
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    const Line& line = lines[i];
    const std::string state = TaskStateName(line.ref->task_state());
    absl::StrAppend(&out, i + 1 == lines.size() ? "└─ " : "├─ ", line.relation, " ",
                    line.ref->run_id(), "/", line.ref->task_path(), " ", line.io, " \"",
                    line.ref->io_name(), "\"", state.empty() ? "" : " ", state, "\n");
  }
  return out;
}

// ---- pipeline ---------------------------------------------------------------------------------

absl::Status PipelineUpload(const CommandEnv& env, const PipelineUploadOptions& options) {
  RETURN_IF_ERROR(Required(options.file, "a pipeline FILE"));
  RETURN_IF_ERROR(Required(options.name, "--name"));
  ASSIGN_OR_RETURN(std::string spec, ReadInput(env, options.file));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::CreatePipelineRequest request;
  request.set_name(options.name);
  request.set_description(options.description);
  request.set_spec(spec);
  request.set_version_name(options.version);
  absl::StatusOr<v1::CreatePipelineResponse> created =
      Call(*client, &Stub::CreatePipeline, request);
  // The server's complaints about the spec name its place in it ("line 3, column 5: ...",
  // "root.dag.tasks[train]..."); say which file that is.
  if (absl::IsAlreadyExists(created.status()) && !options.version.empty()) {
    // An existing pipeline: upload the file as its new version.
    v1::CreatePipelineVersionRequest add;
    add.set_pipeline(options.name);
    add.set_name(options.version);
    add.set_description(options.description);
    add.set_spec(std::move(spec));
    absl::StatusOr<v1::PipelineVersion> version = Call(*client, &Stub::CreatePipelineVersion, add);
    RETURN_IF_ERROR(AboutFile(version.status(), options.file));
    PrintMessage(env, *version,
                 absl::StrCat("pipeline ", options.name, " version ", version->name(), " (",
                              version->id(), ") created\n"));
    return absl::OkStatus();
  }
  RETURN_IF_ERROR(AboutFile(created.status(), options.file));
  PrintMessage(env, *created,
               absl::StrCat("pipeline ", created->pipeline().name(), " (", created->pipeline().id(),
                            ") created with version ", created->version().name(), " (",
                            created->version().id(), ")\n"));
  return absl::OkStatus();
}

absl::Status PipelineList(const CommandEnv& env) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  ASSIGN_OR_RETURN(
      v1::ListPipelinesResponse all,
      CallAllPages(*client, &Stub::ListPipelines, v1::ListPipelinesRequest(),
                   [](v1::ListPipelinesResponse& r) { return r.mutable_pipelines(); }));
  if (env.output == OutputFormat::kTable && all.pipelines().empty()) {
    *env.out << "No pipelines found.\n";
    return absl::OkStatus();
  }
  std::vector<v1::Pipeline> rows(all.pipelines().begin(), all.pipelines().end());
  PrintMessage(env, all, RenderPipelineTable(rows, env.render));
  return absl::OkStatus();
}

absl::Status PipelineGet(const CommandEnv& env, const std::string& pipeline) {
  RETURN_IF_ERROR(Required(pipeline, "a PIPELINE (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetPipelineRequest request;
  request.set_pipeline(pipeline);
  ASSIGN_OR_RETURN(v1::Pipeline p, Call(*client, &Stub::GetPipeline, request));
  v1::ListPipelineVersionsRequest versions_request;
  versions_request.set_pipeline(p.id());
  versions_request.set_page_size(5);
  ASSIGN_OR_RETURN(v1::ListPipelineVersionsResponse versions,
                   Call(*client, &Stub::ListPipelineVersions, versions_request));
  Details details;
  details.Add("Pipeline:", p.name());
  details.Add("ID:", p.id());
  details.Add("Display name:", p.display_name());
  details.Add("Description:", p.description());
  details.Add("Owner:", p.owner());
  details.Add("Created:", FormatTimeWithAge(p.create_time(), env.render));
  std::string text = details.Render();
  if (!versions.versions().empty()) {
    absl::StrAppend(&text, "\nLatest versions:\n",
                    RenderVersionTable(versions.versions(), env.render));
  }
  PrintMessage(env, p, text);
  return absl::OkStatus();
}

absl::Status PipelineDelete(const CommandEnv& env, const std::string& pipeline) {
  RETURN_IF_ERROR(Required(pipeline, "a PIPELINE (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::DeletePipelineRequest request;
  request.set_pipeline(pipeline);
  ASSIGN_OR_RETURN(v1::DeletePipelineResponse response,
                   Call(*client, &Stub::DeletePipeline, request));
  PrintMessage(env, response, absl::StrCat("pipeline ", pipeline, " deleted\n"));
  return absl::OkStatus();
}

absl::Status PipelineVersions(const CommandEnv& env, const std::string& pipeline) {
  RETURN_IF_ERROR(Required(pipeline, "a PIPELINE (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListPipelineVersionsRequest request;
  request.set_pipeline(pipeline);
  ASSIGN_OR_RETURN(
      v1::ListPipelineVersionsResponse all,
      CallAllPages(*client, &Stub::ListPipelineVersions, request,
                   [](v1::ListPipelineVersionsResponse& r) { return r.mutable_versions(); }));
  PrintMessage(env, all, RenderVersionTable(all.versions(), env.render));
  return absl::OkStatus();
}

// ---- experiment -------------------------------------------------------------------------------

absl::Status ExperimentCreate(const CommandEnv& env, const std::string& name,
                              const std::string& description) {
  RETURN_IF_ERROR(Required(name, "an experiment NAME"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::CreateExperimentRequest request;
  request.set_name(name);
  request.set_description(description);
  ASSIGN_OR_RETURN(v1::Experiment e, Call(*client, &Stub::CreateExperiment, request));
  PrintMessage(env, e, absl::StrCat("experiment ", e.name(), " (", e.id(), ") created\n"));
  return absl::OkStatus();
}

absl::Status ExperimentList(const CommandEnv& env, bool include_archived) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListExperimentsRequest request;
  request.set_include_archived(include_archived);
  ASSIGN_OR_RETURN(
      v1::ListExperimentsResponse all,
      CallAllPages(*client, &Stub::ListExperiments, request,
                   [](v1::ListExperimentsResponse& r) { return r.mutable_experiments(); }));
  if (env.output == OutputFormat::kTable && all.experiments().empty()) {
    *env.out << "No experiments found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderExperimentTable(all.experiments(), env.render));
  return absl::OkStatus();
}

absl::Status ExperimentGet(const CommandEnv& env, const std::string& experiment) {
  RETURN_IF_ERROR(Required(experiment, "an EXPERIMENT (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetExperimentRequest request;
  request.set_experiment(experiment);
  ASSIGN_OR_RETURN(v1::Experiment e, Call(*client, &Stub::GetExperiment, request));
  PrintMessage(env, e, RenderExperimentDetails(e, env.render));
  return absl::OkStatus();
}

absl::Status ExperimentArchive(const CommandEnv& env, const std::string& experiment,
                               bool archived) {
  RETURN_IF_ERROR(Required(experiment, "an EXPERIMENT (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ArchiveExperimentRequest request;
  request.set_experiment(experiment);
  ASSIGN_OR_RETURN(
      v1::Experiment e,
      Call(*client, archived ? &Stub::ArchiveExperiment : &Stub::UnarchiveExperiment, request));
  PrintMessage(env, e,
               absl::StrCat("experiment ", e.name(), archived ? " archived\n" : " unarchived\n"));
  return absl::OkStatus();
}

absl::Status ExperimentDelete(const CommandEnv& env, const std::string& experiment) {
  RETURN_IF_ERROR(Required(experiment, "an EXPERIMENT (id or name)"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::DeleteExperimentRequest request;
  request.set_experiment(experiment);
  ASSIGN_OR_RETURN(v1::DeleteExperimentResponse response,
                   Call(*client, &Stub::DeleteExperiment, request));
  PrintMessage(env, response, absl::StrCat("experiment ", experiment, " deleted\n"));
  return absl::OkStatus();
}

// ---- artifacts and lineage --------------------------------------------------------------------

absl::Status ArtifactGet(const CommandEnv& env, const std::string& artifact_id) {
  RETURN_IF_ERROR(Required(artifact_id, "an ARTIFACT_ID"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetArtifactRequest request;
  request.set_artifact_id(artifact_id);
  ASSIGN_OR_RETURN(v1::PipelineArtifact a, Call(*client, &Stub::GetArtifact, request));
  PrintMessage(env, a, RenderArtifactDetails(a, env.render));
  return absl::OkStatus();
}

absl::Status ArtifactList(const CommandEnv& env, const std::string& run_id) {
  RETURN_IF_ERROR(Required(run_id, "--run"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListArtifactsRequest request;
  request.set_run_id(run_id);
  ASSIGN_OR_RETURN(v1::ListArtifactsResponse response,
                   Call(*client, &Stub::ListArtifacts, request));
  if (env.output == OutputFormat::kTable && response.artifacts().empty()) {
    *env.out << "No artifacts found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, response, RenderArtifactTable(response.artifacts()));
  return absl::OkStatus();
}

absl::Status Lineage(const CommandEnv& env, const std::string& artifact_id) {
  RETURN_IF_ERROR(Required(artifact_id, "an ARTIFACT_ID"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetArtifactLineageRequest request;
  request.set_artifact_id(artifact_id);
  ASSIGN_OR_RETURN(v1::ArtifactLineageResponse lineage,
                   Call(*client, &Stub::GetArtifactLineage, request));
  PrintMessage(env, lineage, RenderLineageTree(lineage));
  return absl::OkStatus();
}

// ---- cache ------------------------------------------------------------------------------------

absl::Status CacheList(const CommandEnv& env) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  ASSIGN_OR_RETURN(
      v1::ListCacheEntriesResponse all,
      CallAllPages(*client, &Stub::ListCacheEntries, v1::ListCacheEntriesRequest(),
                   [](v1::ListCacheEntriesResponse& r) { return r.mutable_entries(); }));
  if (env.output == OutputFormat::kTable && all.entries().empty()) {
    *env.out << "No cache entries found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderCacheTable(all.entries(), env.render));
  return absl::OkStatus();
}

absl::Status CachePrune(const CommandEnv& env, bool all,
                        const std::vector<std::string>& fingerprints) {
  if (all && !fingerprints.empty()) return UsageError("--all and --fingerprint exclude each other");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::PruneCacheRequest request;
  request.set_all(all);
  for (const std::string& f : fingerprints) request.add_fingerprints(f);
  ASSIGN_OR_RETURN(v1::PruneCacheResponse response, Call(*client, &Stub::PruneCache, request));
  PrintMessage(env, response,
               absl::StrCat(response.deleted(), response.deleted() == 1 ? " entry" : " entries",
                            " deleted\n"));
  return absl::OkStatus();
}

}  // namespace regatta::cli
