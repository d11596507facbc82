#ifndef REGATTA_SRC_API_RUN_SERVICE_H_
#define REGATTA_SRC_API_RUN_SERVICE_H_

#include <string>

#include "absl/synchronization/mutex.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "src/api/api_context.h"
#include "src/pipelines/engine/engine.h"
#include "src/pipelines/schedule/controller.h"

namespace regatta::api {

struct RunServiceOptions {
  // The queue a run's steps go to when the request names none.
  std::string default_queue = "pipelines";
  // Where artifacts go when neither the request nor the spec says (file:///<dir> or a path).
  std::string default_pipeline_root;
};

// Pipeline runs and recurring runs. A created run is recorded in the log (PipelineRunCreated),
// then handed to the pipeline engine, which drives it; terminate and retry go to the engine too.
// Reads come from the views. It is also the recurring-run controller's run creator and source.
class RunService final : public regatta::v1::RunService::Service,
                         public pipelines::schedule::ScheduledRunCreator,
                         public pipelines::schedule::RecurringRunSource {
 public:
  RunService(const ApiContext* ctx, pipelines::engine::PipelineEngine* engine,
             RunServiceOptions options)
      : ctx_(ctx), engine_(engine), options_(std::move(options)) {}

  // Optional: woken when recurring runs change. Set before serving.
  void set_controller(pipelines::schedule::RecurringRunController* controller) {
    controller_ = controller;
  }

  grpc::Status CreateRun(grpc::ServerContext* call, const regatta::v1::CreateRunRequest* request,
                         regatta::v1::PipelineRun* response) override;
  grpc::Status GetRun(grpc::ServerContext* call, const regatta::v1::GetRunRequest* request,
                      regatta::v1::PipelineRun* response) override;
  grpc::Status ListRuns(grpc::ServerContext* call, const regatta::v1::ListRunsRequest* request,
                        regatta::v1::ListRunsResponse* response) override;
  grpc::Status TerminateRun(grpc::ServerContext* call, const regatta::v1::RunIdRequest* request,
                            regatta::v1::PipelineRun* response) override;
  grpc::Status RetryRun(grpc::ServerContext* call, const regatta::v1::RunIdRequest* request,
                        regatta::v1::PipelineRun* response) override;
  grpc::Status ArchiveRun(grpc::ServerContext* call, const regatta::v1::RunIdRequest* request,
                          regatta::v1::PipelineRun* response) override;
  grpc::Status UnarchiveRun(grpc::ServerContext* call, const regatta::v1::RunIdRequest* request,
                            regatta::v1::PipelineRun* response) override;
  grpc::Status DeleteRun(grpc::ServerContext* call, const regatta::v1::RunIdRequest* request,
                         regatta::v1::DeleteRunResponse* response) override;
  grpc::Status CreateRecurringRun(grpc::ServerContext* call,
                                  const regatta::v1::CreateRecurringRunRequest* request,
                                  regatta::v1::RecurringRun* response) override;
  grpc::Status GetRecurringRun(grpc::ServerContext* call,
                               const regatta::v1::RecurringRunIdRequest* request,
                               regatta::v1::RecurringRun* response) override;
  grpc::Status ListRecurringRuns(grpc::ServerContext* call,
                                 const regatta::v1::ListRecurringRunsRequest* request,
                                 regatta::v1::ListRecurringRunsResponse* response) override;
  grpc::Status EnableRecurringRun(grpc::ServerContext* call,
                                  const regatta::v1::RecurringRunIdRequest* request,
                                  regatta::v1::RecurringRun* response) override;
  grpc::Status DisableRecurringRun(grpc::ServerContext* call,
                                   const regatta::v1::RecurringRunIdRequest* request,
                                   regatta::v1::RecurringRun* response) override;
  grpc::Status DeleteRecurringRun(grpc::ServerContext* call,
                                  const regatta::v1::RecurringRunIdRequest* request,
                                  regatta::v1::DeleteRecurringRunResponse* response) override;

  // The transport-neutral cores.
  absl::StatusOr<regatta::v1::PipelineRun> Create(const auth::Principal& principal,
                                                  const regatta::v1::CreateRunRequest& request);
  // Reads: a run (and a recurring run) is readable by its owner, or like the jobs of its queue
  // (ReadAccess); lists leave out the others.
  absl::StatusOr<regatta::v1::PipelineRun> Get(const auth::Principal& principal,
                                               absl::string_view run_id, bool with_tasks = true);
  absl::StatusOr<regatta::v1::ListRunsResponse> List(const auth::Principal& principal,
                                                     const regatta::v1::ListRunsRequest& request);
  absl::StatusOr<regatta::v1::RecurringRun> GetRecurring(const auth::Principal& principal,
                                                         absl::string_view id);
  absl::StatusOr<regatta::v1::ListRecurringRunsResponse> ListRecurring(
      const auth::Principal& principal, const regatta::v1::ListRecurringRunsRequest& request);
  absl::StatusOr<regatta::v1::PipelineRun> Terminate(const auth::Principal& principal,
                                                     absl::string_view run_id);
  absl::StatusOr<regatta::v1::PipelineRun> Retry(const auth::Principal& principal,
                                                 absl::string_view run_id);
  absl::StatusOr<regatta::v1::PipelineRun> SetArchived(const auth::Principal& principal,
                                                       absl::string_view run_id, bool archived);
  absl::Status Delete(const auth::Principal& principal, absl::string_view run_id);
  absl::StatusOr<regatta::v1::RecurringRun> CreateRecurring(
      const auth::Principal& principal, const regatta::v1::CreateRecurringRunRequest& request);
  absl::StatusOr<regatta::v1::RecurringRun> SetRecurringEnabled(const auth::Principal& principal,
                                                                absl::string_view id, bool enabled);
  absl::Status DeleteRecurring(const auth::Principal& principal, absl::string_view id);

  // ScheduledRunCreator: ALREADY_EXISTS if `run_id` exists (another controller made it).
  absl::Status CreateScheduledRun(const regatta::v1::RecurringRun& recurring_run,
                                  absl::string_view run_id, absl::string_view display_name,
                                  absl::Time scheduled_time) override;
  // RecurringRunSource.
  absl::StatusOr<std::vector<regatta::v1::RecurringRun>> ListEnabledRecurringRuns() override;
  absl::StatusOr<int> CountActiveRuns(absl::string_view recurring_run_id) override;

 private:
  struct Draft;
  absl::Status CatchUp();
  // Publishes `events` in one sequence routed by (queue, job_set) and waits for the views.
  absl::Status PublishAndWait(const auth::Principal& principal, absl::string_view queue,
                              absl::string_view job_set, std::vector<regatta::v1::Event> events);
  // The spec, experiment, queue and parameters of a new run, checked.
  absl::StatusOr<regatta::v1::PipelineRun> Prepare(const auth::Principal& principal,
                                                   const regatta::v1::CreateRunRequest& request);
  // Records the run, then starts it in the engine.
  absl::StatusOr<regatta::v1::PipelineRun> Launch(const auth::Principal& principal,
                                                  regatta::v1::PipelineRun run);
  absl::StatusOr<regatta::v1::Experiment> DefaultExperiment(const auth::Principal& principal);
  // The run, if `principal` owns it or may cancel jobs in its queue; a change that replies
  // with the run (`replies_with_run`) also needs a non-owner to be able to read it.
  absl::StatusOr<regatta::v1::PipelineRun> LoadForChange(const auth::Principal& principal,
                                                         absl::string_view run_id,
                                                         bool replies_with_run);
  absl::StatusOr<regatta::v1::RecurringRun> LoadRecurringForChange(const auth::Principal& principal,
                                                                   absl::string_view id,
                                                                   bool replies_with_run);
  // NOT_FOUND "recurring run \"x\" does not exist".
  absl::StatusOr<regatta::v1::RecurringRun> FindRecurring(absl::string_view id);

  const ApiContext* ctx_;
  pipelines::engine::PipelineEngine* engine_;
  const RunServiceOptions options_;
  pipelines::schedule::RecurringRunController* controller_ = nullptr;
  // Serializes the check-then-publish of run creation (ids, the default experiment).
  absl::Mutex create_mu_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_RUN_SERVICE_H_
