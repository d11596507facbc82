// The REST routes of the pipeline layer: PipelineService (pipelines, versions, experiments,
// artifacts, cache) and RunService (runs, recurring runs).
#include "absl/strings/str_cat.h"
#include "src/api/rest/gateway.h"

namespace regatta::rest {
namespace {

namespace v1 = regatta::v1;
using PipelineStub = v1::PipelineService::Stub;
using RunStub = v1::RunService::Stub;

constexpr bool kBody = true;
constexpr bool kQuery = false;

}  // namespace

HttpResponse Gateway::HandlePipelineRoute(const HttpRequest& request, const RouteMatch& match,
                                          const QueryParams& query) {
  PipelineStub* p = pipelines_.get();
  RunStub* r = runs_.get();
  auto call = [&](auto* stub, auto method, bool from_body, const char* path_field = nullptr) {
    return Forward(request, match, query, stub, method, from_body, path_field);
  };
  switch (match.id) {
    // ---- Pipelines and versions --------------------------------------------------------------
    case RouteId::kCreatePipeline:
      return call(p, &PipelineStub::CreatePipeline, kBody);
    case RouteId::kListPipelines:
      return call(p, &PipelineStub::ListPipelines, kQuery);
    case RouteId::kGetPipeline:
      return call(p, &PipelineStub::GetPipeline, kQuery, "pipeline");
    case RouteId::kDeletePipeline:
      return call(p, &PipelineStub::DeletePipeline, kQuery, "pipeline");
    case RouteId::kCreatePipelineVersion:
      return call(p, &PipelineStub::CreatePipelineVersion, kBody, "pipeline");
    case RouteId::kListPipelineVersions:
      return call(p, &PipelineStub::ListPipelineVersions, kQuery, "pipeline");
    case RouteId::kGetPipelineVersion:
      return call(p, &PipelineStub::GetPipelineVersion, kQuery, "version_id");
    case RouteId::kDeletePipelineVersion:
      return call(p, &PipelineStub::DeletePipelineVersion, kQuery, "version_id");

    // ---- Experiments -------------------------------------------------------------------------
    case RouteId::kCreateExperiment:
      return call(p, &PipelineStub::CreateExperiment, kBody);
    case RouteId::kListExperiments:
      return call(p, &PipelineStub::ListExperiments, kQuery);
    case RouteId::kGetExperiment:
      return call(p, &PipelineStub::GetExperiment, kQuery, "experiment");
    case RouteId::kDeleteExperiment:
      return call(p, &PipelineStub::DeleteExperiment, kQuery, "experiment");
    case RouteId::kArchiveExperiment:
      return call(p, &PipelineStub::ArchiveExperiment, kBody, "experiment");
    case RouteId::kUnarchiveExperiment:
      return call(p, &PipelineStub::UnarchiveExperiment, kBody, "experiment");

    // ---- Artifacts and cache -----------------------------------------------------------------
    case RouteId::kGetArtifact:
      return call(p, &PipelineStub::GetArtifact, kQuery, "artifact_id");
    case RouteId::kGetArtifactLineage:
      return call(p, &PipelineStub::GetArtifactLineage, kQuery, "artifact_id");
    case RouteId::kListRunArtifacts:
      return call(p, &PipelineStub::ListArtifacts, kQuery, "run_id");
    case RouteId::kListCacheEntries:
      return call(p, &PipelineStub::ListCacheEntries, kQuery);
    case RouteId::kPruneCache:
      return call(p, &PipelineStub::PruneCache, kBody);

    // ---- Runs --------------------------------------------------------------------------------
    case RouteId::kCreateRun:
      return call(r, &RunStub::CreateRun, kBody);
    case RouteId::kListRuns:
      return call(r, &RunStub::ListRuns, kQuery);
    case RouteId::kGetRun:
      return call(r, &RunStub::GetRun, kQuery, "run_id");
    case RouteId::kDeleteRun:
      return call(r, &RunStub::DeleteRun, kQuery, "run_id");
    case RouteId::kTerminateRun:
      return call(r, &RunStub::TerminateRun, kBody, "run_id");
    case RouteId::kRetryRun:
      return call(r, &RunStub::RetryRun, kBody, "run_id");
    case RouteId::kArchiveRun:
      return call(r, &RunStub::ArchiveRun, kBody, "run_id");
    case RouteId::kUnarchiveRun:
      return call(r, &RunStub::UnarchiveRun, kBody, "run_id");

    // ---- Recurring runs ----------------------------------------------------------------------
    case RouteId::kCreateRecurringRun:
      return call(r, &RunStub::CreateRecurringRun, kBody);
    case RouteId::kListRecurringRuns:
      return call(r, &RunStub::ListRecurringRuns, kQuery);
    case RouteId::kGetRecurringRun:
      return call(r, &RunStub::GetRecurringRun, kQuery, "recurring_run_id");
    case RouteId::kDeleteRecurringRun:
      return call(r, &RunStub::DeleteRecurringRun, kQuery, "recurring_run_id");
    case RouteId::kEnableRecurringRun:
      return call(r, &RunStub::EnableRecurringRun, kBody, "recurring_run_id");
    case RouteId::kDisableRecurringRun:
      return call(r, &RunStub::DisableRecurringRun, kBody, "recurring_run_id");

    default:
      break;
  }
  return ErrorResponse(grpc::StatusCode::INTERNAL, "unhandled pipeline route");
}

}  // namespace regatta::rest
