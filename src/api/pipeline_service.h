#ifndef REGATTA_SRC_API_PIPELINE_SERVICE_H_
#define REGATTA_SRC_API_PIPELINE_SERVICE_H_

#include <vector>

#include "absl/synchronization/mutex.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "src/api/api_context.h"
#include "src/api/read_access.h"

namespace regatta::api {

// The pipeline catalogue: pipelines and their versions, experiments, artifacts and lineage, and
// the step cache. Writes are published to the log (PipelineCreated, ExperimentUpserted, ...) and
// each call waits until the views show them. Catalogue reads need only authentication; so do
// writes, except that a pipeline is deleted only by its owner or a holder of "delete_queue".
// Artifacts and lineage are readable like the run that made them, and the step cache (outputs of
// every queue's runs) only with "watch_all_events" (ReadAccess, docs/auth.md).
class PipelineService final : public regatta::v1::PipelineService::Service {
 public:
  explicit PipelineService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status CreatePipeline(grpc::ServerContext* call,
                              const regatta::v1::CreatePipelineRequest* request,
                              regatta::v1::CreatePipelineResponse* response) override;
  grpc::Status GetPipeline(grpc::ServerContext* call,
                           const regatta::v1::GetPipelineRequest* request,
                           regatta::v1::Pipeline* response) override;
  grpc::Status ListPipelines(grpc::ServerContext* call,
                             const regatta::v1::ListPipelinesRequest* request,
                             regatta::v1::ListPipelinesResponse* response) override;
  grpc::Status DeletePipeline(grpc::ServerContext* call,
                              const regatta::v1::DeletePipelineRequest* request,
                              regatta::v1::DeletePipelineResponse* response) override;
  grpc::Status CreatePipelineVersion(grpc::ServerContext* call,
                                     const regatta::v1::CreatePipelineVersionRequest* request,
                                     regatta::v1::PipelineVersion* response) override;
  grpc::Status GetPipelineVersion(grpc::ServerContext* call,
                                  const regatta::v1::GetPipelineVersionRequest* request,
                                  regatta::v1::PipelineVersion* response) override;
  grpc::Status ListPipelineVersions(grpc::ServerContext* call,
                                    const regatta::v1::ListPipelineVersionsRequest* request,
                                    regatta::v1::ListPipelineVersionsResponse* response) override;
  grpc::Status DeletePipelineVersion(grpc::ServerContext* call,
                                     const regatta::v1::DeletePipelineVersionRequest* request,
                                     regatta::v1::DeletePipelineVersionResponse* response) override;
  grpc::Status CreateExperiment(grpc::ServerContext* call,
                                const regatta::v1::CreateExperimentRequest* request,
                                regatta::v1::Experiment* response) override;
  grpc::Status GetExperiment(grpc::ServerContext* call,
                             const regatta::v1::GetExperimentRequest* request,
                             regatta::v1::Experiment* response) override;
  grpc::Status ListExperiments(grpc::ServerContext* call,
                               const regatta::v1::ListExperimentsRequest* request,
                               regatta::v1::ListExperimentsResponse* response) override;
  grpc::Status ArchiveExperiment(grpc::ServerContext* call,
                                 const regatta::v1::ArchiveExperimentRequest* request,
                                 regatta::v1::Experiment* response) override;
  grpc::Status UnarchiveExperiment(grpc::ServerContext* call,
                                   const regatta::v1::ArchiveExperimentRequest* request,
                                   regatta::v1::Experiment* response) override;
  grpc::Status DeleteExperiment(grpc::ServerContext* call,
                                const regatta::v1::DeleteExperimentRequest* request,
                                regatta::v1::DeleteExperimentResponse* response) override;
  grpc::Status GetArtifact(grpc::ServerContext* call,
                           const regatta::v1::GetArtifactRequest* request,
                           regatta::v1::PipelineArtifact* response) override;
  grpc::Status ListArtifacts(grpc::ServerContext* call,
                             const regatta::v1::ListArtifactsRequest* request,
                             regatta::v1::ListArtifactsResponse* response) override;
  grpc::Status GetArtifactLineage(grpc::ServerContext* call,
                                  const regatta::v1::GetArtifactLineageRequest* request,
                                  regatta::v1::ArtifactLineageResponse* response) override;
  grpc::Status ListCacheEntries(grpc::ServerContext* call,
                                const regatta::v1::ListCacheEntriesRequest* request,
                                regatta::v1::ListCacheEntriesResponse* response) override;
  grpc::Status PruneCache(grpc::ServerContext* call, const regatta::v1::PruneCacheRequest* request,
                          regatta::v1::PruneCacheResponse* response) override;

  // The transport-neutral cores.
  absl::StatusOr<regatta::v1::CreatePipelineResponse> CreatePipelineCore(
      const auth::Principal& principal, const regatta::v1::CreatePipelineRequest& request);
  absl::StatusOr<regatta::v1::ListPipelinesResponse> ListPipelinesCore(
      const regatta::v1::ListPipelinesRequest& request);
  absl::Status DeletePipelineCore(const auth::Principal& principal, absl::string_view pipeline);
  absl::StatusOr<regatta::v1::PipelineVersion> CreateVersionCore(
      const auth::Principal& principal, const regatta::v1::CreatePipelineVersionRequest& request);
  absl::StatusOr<regatta::v1::ListPipelineVersionsResponse> ListVersionsCore(
      const regatta::v1::ListPipelineVersionsRequest& request);
  absl::Status DeleteVersionCore(const auth::Principal& principal, absl::string_view version_id);
  absl::StatusOr<regatta::v1::Experiment> CreateExperimentCore(
      const auth::Principal& principal, const regatta::v1::CreateExperimentRequest& request);
  absl::StatusOr<regatta::v1::ListExperimentsResponse> ListExperimentsCore(
      const regatta::v1::ListExperimentsRequest& request);
  absl::StatusOr<regatta::v1::Experiment> SetExperimentArchived(const auth::Principal& principal,
                                                                absl::string_view experiment,
                                                                bool archived);
  absl::Status DeleteExperimentCore(const auth::Principal& principal, absl::string_view experiment);
  absl::StatusOr<regatta::v1::PipelineArtifact> GetArtifactCore(const auth::Principal& principal,
                                                                absl::string_view artifact_id);
  absl::StatusOr<regatta::v1::ListArtifactsResponse> ListArtifactsCore(
      const auth::Principal& principal, absl::string_view run_id);
  // The lineage's task refs leave out the runs the principal may not read.
  absl::StatusOr<regatta::v1::ArtifactLineageResponse> LineageCore(const auth::Principal& principal,
                                                                   absl::string_view artifact_id);
  absl::StatusOr<regatta::v1::ListCacheEntriesResponse> ListCacheCore(
      const auth::Principal& principal, const regatta::v1::ListCacheEntriesRequest& request);
  absl::StatusOr<regatta::v1::PruneCacheResponse> PruneCacheCore(
      const auth::Principal& principal, const regatta::v1::PruneCacheRequest& request);

 private:
  // The artifact if `access` may read it (NOT_FOUND naming the field, PERMISSION_DENIED).
  absl::StatusOr<regatta::v1::PipelineArtifact> ReadableArtifact(ReadAccess& access,
                                                                 absl::string_view artifact_id);
  absl::Status Publish(const auth::Principal& principal, std::vector<regatta::v1::Event> events);
  // A version of `pipeline_id` named `name`, if any.
  absl::StatusOr<bool> VersionNameTaken(absl::string_view pipeline_id, absl::string_view name);
  absl::StatusOr<std::vector<regatta::v1::CacheEntry>> AllCacheEntries();

  const ApiContext* ctx_;
  // Serializes the check-then-publish of names (pipelines, versions, experiments).
  absl::Mutex catalog_mu_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_PIPELINE_SERVICE_H_
