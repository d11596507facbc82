#ifndef REGATTA_TESTS_UNIT_REST_FAKE_SERVICES_H_
#define REGATTA_TESTS_UNIT_REST_FAKE_SERVICES_H_

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/event_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"

namespace regatta::rest::testing {

// What the fakes saw: one entry per call, in order.
struct RecordedCall {
  std::string method;  // e.g. "CreateQueue"
  std::shared_ptr<google::protobuf::Message> request;
  std::string authorization;  // the "authorization" metadata, empty if absent
};

// Shared by the fakes: records calls and hands out scripted failures.
class Recorder {
 public:
  void Record(grpc::ServerContext* context, const std::string& method,
              const google::protobuf::Message& request);
  // The next call (of any method) fails with `status`.
  void FailNext(grpc::Status status);
  // The next call blocks until the client cancels it.
  void HangNext();
  // OK unless a failure (or hang) was scripted; consumes it.
  grpc::Status TakeFailure(grpc::ServerContext* context);

  std::vector<RecordedCall> Calls();
  // The last call; fails the test if there is none.
  RecordedCall Last();
  template <typename T>
  T LastRequest() {
    T out;
    out.CopyFrom(*Last().request);
    return out;
  }
  size_t Count();

 private:
  absl::Mutex mu_;
  std::vector<RecordedCall> calls_ ABSL_GUARDED_BY(mu_);
  std::deque<grpc::Status> failures_ ABSL_GUARDED_BY(mu_);
  bool hang_next_ ABSL_GUARDED_BY(mu_) = false;
};

class FakeQueueService final : public regatta::v1::QueueService::Service {
 public:
  explicit FakeQueueService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status CreateQueue(grpc::ServerContext* c, const regatta::v1::CreateQueueRequest* r,
                           regatta::v1::Queue* out) override;
  grpc::Status UpdateQueue(grpc::ServerContext* c, const regatta::v1::UpdateQueueRequest* r,
                           regatta::v1::Queue* out) override;
  grpc::Status DeleteQueue(grpc::ServerContext* c, const regatta::v1::DeleteQueueRequest* r,
                           regatta::v1::DeleteQueueResponse* out) override;
  grpc::Status GetQueue(grpc::ServerContext* c, const regatta::v1::GetQueueRequest* r,
                        regatta::v1::Queue* out) override;
  grpc::Status ListQueues(grpc::ServerContext* c, const regatta::v1::ListQueuesRequest* r,
                          regatta::v1::ListQueuesResponse* out) override;
  grpc::Status CordonQueue(grpc::ServerContext* c, const regatta::v1::CordonQueueRequest* r,
                           regatta::v1::Queue* out) override;
  grpc::Status UncordonQueue(grpc::ServerContext* c, const regatta::v1::CordonQueueRequest* r,
                             regatta::v1::Queue* out) override;

 private:
  Recorder* recorder_;
};

class FakeSubmitService final : public regatta::v1::SubmitService::Service {
 public:
  explicit FakeSubmitService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status SubmitJobs(grpc::ServerContext* c, const regatta::v1::SubmitJobsRequest* r,
                          regatta::v1::SubmitJobsResponse* out) override;
  grpc::Status CancelJobs(grpc::ServerContext* c, const regatta::v1::CancelJobsRequest* r,
                          regatta::v1::CancelJobsResponse* out) override;
  grpc::Status CancelJobSet(grpc::ServerContext* c, const regatta::v1::CancelJobSetRequest* r,
                            regatta::v1::CancelJobSetResponse* out) override;
  grpc::Status ReprioritizeJobs(grpc::ServerContext* c,
                                const regatta::v1::ReprioritizeJobsRequest* r,
                                regatta::v1::ReprioritizeJobsResponse* out) override;
  grpc::Status PreemptJobs(grpc::ServerContext* c, const regatta::v1::PreemptJobsRequest* r,
                           regatta::v1::PreemptJobsResponse* out) override;
  grpc::Status CancelQueue(grpc::ServerContext* c, const regatta::v1::CancelQueueRequest* r,
                           regatta::v1::CancelQueueResponse* out) override;
  grpc::Status PreemptQueue(grpc::ServerContext* c, const regatta::v1::PreemptQueueRequest* r,
                            regatta::v1::PreemptQueueResponse* out) override;
  grpc::Status CancelOnExecutor(grpc::ServerContext* c,
                                const regatta::v1::CancelOnExecutorRequest* r,
                                regatta::v1::CancelOnExecutorResponse* out) override;
  grpc::Status PreemptOnExecutor(grpc::ServerContext* c,
                                 const regatta::v1::PreemptOnExecutorRequest* r,
                                 regatta::v1::PreemptOnExecutorResponse* out) override;

 private:
  Recorder* recorder_;
};

// GetJobLogs streams a scripted log: the chunks set so far (by default "one\n", "two\n"), then
// an empty chunk; with follow, also every chunk appended later, until EndLog() (or the client
// cancels).
class FakeJobService final : public regatta::v1::JobService::Service {
 public:
  explicit FakeJobService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status GetJobStatus(grpc::ServerContext* c, const regatta::v1::GetJobStatusRequest* r,
                            regatta::v1::GetJobStatusResponse* out) override;
  grpc::Status GetJobDetails(grpc::ServerContext* c, const regatta::v1::GetJobDetailsRequest* r,
                             regatta::v1::GetJobDetailsResponse* out) override;
  grpc::Status ListJobs(grpc::ServerContext* c, const regatta::v1::ListJobsRequest* r,
                        regatta::v1::ListJobsResponse* out) override;
  grpc::Status GetJobLogs(grpc::ServerContext* c, const regatta::v1::GetJobLogsRequest* r,
                          grpc::ServerWriter<regatta::v1::LogChunk>* writer) override;

  void set_log(std::vector<std::string> chunks) ABSL_LOCKS_EXCLUDED(mu_);
  void AppendLog(std::string chunk) ABSL_LOCKS_EXCLUDED(mu_);
  // The run ended: following calls send what is left and finish.
  void EndLog() ABSL_LOCKS_EXCLUDED(mu_);
  // Calls fail with `status` after sending the log so far (the executor went away mid-read).
  void FailLogAfterData(grpc::Status status) ABSL_LOCKS_EXCLUDED(mu_);

  // GetJobLogs calls running now, and those that ended because the client cancelled.
  bool WaitForActiveLogs(int n, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);
  bool WaitForCancelledLogs(int n, absl::Duration timeout) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  Recorder* recorder_;
  absl::Mutex mu_;
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_) = {"one\n", "two\n"};
  bool log_ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status log_failure_ ABSL_GUARDED_BY(mu_);
  int active_logs_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_logs_ ABSL_GUARDED_BY(mu_) = 0;
};

// Streams the canned events after `from_id`; with watch, also every event pushed with Push()
// until the call is cancelled.
class FakeEventService final : public regatta::v1::EventService::Service {
 public:
  explicit FakeEventService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status GetJobSetEvents(grpc::ServerContext* c, const regatta::v1::JobSetEventsRequest* r,
                               grpc::ServerWriter<regatta::v1::JobSetEvent>* writer) override;

  // The three canned events: ids "1-0", "2-0", "3-0" (SUBMITTED, QUEUED, RUNNING of job-1).
  static std::vector<regatta::v1::JobSetEvent> CannedEvents();
  // With no canned events, a stream sends nothing until Push().
  void set_canned(bool canned);
  // Sends `event` to every watching stream.
  void Push(const regatta::v1::JobSetEvent& event);

  int active() ABSL_LOCKS_EXCLUDED(mu_);
  int cancelled() ABSL_LOCKS_EXCLUDED(mu_);
  // Waits until `active() == n`; false on timeout.
  bool WaitForActive(int n, absl::Duration timeout);
  bool WaitForCancelled(int n, absl::Duration timeout);

 private:
  Recorder* recorder_;
  absl::Mutex mu_;
  bool canned_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<regatta::v1::JobSetEvent> pushed_ ABSL_GUARDED_BY(mu_);
  int active_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_ ABSL_GUARDED_BY(mu_) = 0;
};

// Records every call; answers with an empty response except where noted in the .cc.
class FakePipelineService final : public regatta::v1::PipelineService::Service {
 public:
  explicit FakePipelineService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status CreatePipeline(grpc::ServerContext* c, const regatta::v1::CreatePipelineRequest* r,
                              regatta::v1::CreatePipelineResponse* out) override;
  grpc::Status GetPipeline(grpc::ServerContext* c, const regatta::v1::GetPipelineRequest* r,
                           regatta::v1::Pipeline* out) override;
  grpc::Status ListPipelines(grpc::ServerContext* c, const regatta::v1::ListPipelinesRequest* r,
                             regatta::v1::ListPipelinesResponse* out) override;
  grpc::Status DeletePipeline(grpc::ServerContext* c, const regatta::v1::DeletePipelineRequest* r,
                              regatta::v1::DeletePipelineResponse* out) override;
  grpc::Status CreatePipelineVersion(grpc::ServerContext* c,
                                     const regatta::v1::CreatePipelineVersionRequest* r,
                                     regatta::v1::PipelineVersion* out) override;
  grpc::Status GetPipelineVersion(grpc::ServerContext* c,
                                  const regatta::v1::GetPipelineVersionRequest* r,
                                  regatta::v1::PipelineVersion* out) override;
  grpc::Status ListPipelineVersions(grpc::ServerContext* c,
                                    const regatta::v1::ListPipelineVersionsRequest* r,
                                    regatta::v1::ListPipelineVersionsResponse* out) override;
  grpc::Status DeletePipelineVersion(grpc::ServerContext* c,
                                     const regatta::v1::DeletePipelineVersionRequest* r,
                                     regatta::v1::DeletePipelineVersionResponse* out) override;
  grpc::Status CreateExperiment(grpc::ServerContext* c,
                                const regatta::v1::CreateExperimentRequest* r,
                                regatta::v1::Experiment* out) override;
  grpc::Status GetExperiment(grpc::ServerContext* c, const regatta::v1::GetExperimentRequest* r,
                             regatta::v1::Experiment* out) override;
  grpc::Status ListExperiments(grpc::ServerContext* c, const regatta::v1::ListExperimentsRequest* r,
                               regatta::v1::ListExperimentsResponse* out) override;
  grpc::Status ArchiveExperiment(grpc::ServerContext* c,
                                 const regatta::v1::ArchiveExperimentRequest* r,
                                 regatta::v1::Experiment* out) override;
  grpc::Status UnarchiveExperiment(grpc::ServerContext* c,
                                   const regatta::v1::ArchiveExperimentRequest* r,
                                   regatta::v1::Experiment* out) override;
  grpc::Status DeleteExperiment(grpc::ServerContext* c,
                                const regatta::v1::DeleteExperimentRequest* r,
                                regatta::v1::DeleteExperimentResponse* out) override;
  grpc::Status GetArtifact(grpc::ServerContext* c, const regatta::v1::GetArtifactRequest* r,
                           regatta::v1::PipelineArtifact* out) override;
  grpc::Status ListArtifacts(grpc::ServerContext* c, const regatta::v1::ListArtifactsRequest* r,
                             regatta::v1::ListArtifactsResponse* out) override;
  grpc::Status GetArtifactLineage(grpc::ServerContext* c,
                                  const regatta::v1::GetArtifactLineageRequest* r,
                                  regatta::v1::ArtifactLineageResponse* out) override;
  grpc::Status ListCacheEntries(grpc::ServerContext* c,
                                const regatta::v1::ListCacheEntriesRequest* r,
                                regatta::v1::ListCacheEntriesResponse* out) override;
  grpc::Status PruneCache(grpc::ServerContext* c, const regatta::v1::PruneCacheRequest* r,
                          regatta::v1::PruneCacheResponse* out) override;

 private:
  Recorder* recorder_;
};

// Records every call; answers with an empty response except where noted in the .cc.
class FakeRunService final : public regatta::v1::RunService::Service {
 public:
  explicit FakeRunService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status CreateRun(grpc::ServerContext* c, const regatta::v1::CreateRunRequest* r,
                         regatta::v1::PipelineRun* out) override;
  grpc::Status GetRun(grpc::ServerContext* c, const regatta::v1::GetRunRequest* r,
                      regatta::v1::PipelineRun* out) override;
  grpc::Status ListRuns(grpc::ServerContext* c, const regatta::v1::ListRunsRequest* r,
                        regatta::v1::ListRunsResponse* out) override;
  grpc::Status TerminateRun(grpc::ServerContext* c, const regatta::v1::RunIdRequest* r,
                            regatta::v1::PipelineRun* out) override;
  grpc::Status RetryRun(grpc::ServerContext* c, const regatta::v1::RunIdRequest* r,
                        regatta::v1::PipelineRun* out) override;
  grpc::Status ArchiveRun(grpc::ServerContext* c, const regatta::v1::RunIdRequest* r,
                          regatta::v1::PipelineRun* out) override;
  grpc::Status UnarchiveRun(grpc::ServerContext* c, const regatta::v1::RunIdRequest* r,
                            regatta::v1::PipelineRun* out) override;
  grpc::Status DeleteRun(grpc::ServerContext* c, const regatta::v1::RunIdRequest* r,
                         regatta::v1::DeleteRunResponse* out) override;
  grpc::Status CreateRecurringRun(grpc::ServerContext* c,
                                  const regatta::v1::CreateRecurringRunRequest* r,
                                  regatta::v1::RecurringRun* out) override;
  grpc::Status GetRecurringRun(grpc::ServerContext* c, const regatta::v1::RecurringRunIdRequest* r,
                               regatta::v1::RecurringRun* out) override;
  grpc::Status ListRecurringRuns(grpc::ServerContext* c,
                                 const regatta::v1::ListRecurringRunsRequest* r,
                                 regatta::v1::ListRecurringRunsResponse* out) override;
  grpc::Status EnableRecurringRun(grpc::ServerContext* c,
                                  const regatta::v1::RecurringRunIdRequest* r,
                                  regatta::v1::RecurringRun* out) override;
  grpc::Status DisableRecurringRun(grpc::ServerContext* c,
                                   const regatta::v1::RecurringRunIdRequest* r,
                                   regatta::v1::RecurringRun* out) override;
  grpc::Status DeleteRecurringRun(grpc::ServerContext* c,
                                  const regatta::v1::RecurringRunIdRequest* r,
                                  regatta::v1::DeleteRecurringRunResponse* out) override;

 private:
  Recorder* recorder_;
};

// A real gRPC server on an ephemeral port with the fakes.
class FakeDeviceService final : public regatta::v1::DeviceService::Service {
 public:
  explicit FakeDeviceService(Recorder* recorder) : recorder_(recorder) {}
  grpc::Status ApplyConfiguration(grpc::ServerContext* c,
                                  const regatta::v1::ApplyConfigurationRequest* r,
                                  regatta::v1::Configuration* out) override;
  grpc::Status ListConfigurations(grpc::ServerContext* c,
                                  const regatta::v1::ListConfigurationsRequest* r,
                                  regatta::v1::ListConfigurationsResponse* out) override;
  grpc::Status GetConfiguration(grpc::ServerContext* c,
                                const regatta::v1::GetConfigurationRequest* r,
                                regatta::v1::Configuration* out) override;
  grpc::Status DeleteConfiguration(grpc::ServerContext* c,
                                   const regatta::v1::DeleteConfigurationRequest* r,
                                   regatta::v1::DeleteConfigurationResponse* out) override;
  grpc::Status ListInstances(grpc::ServerContext* c, const regatta::v1::ListInstancesRequest* r,
                             regatta::v1::ListInstancesResponse* out) override;
  grpc::Status GetInstance(grpc::ServerContext* c, const regatta::v1::GetInstanceRequest* r,
                           regatta::v1::Instance* out) override;
  grpc::Status ListServices(grpc::ServerContext* c, const regatta::v1::ListServicesRequest* r,
                            regatta::v1::ListServicesResponse* out) override;
  grpc::Status GetService(grpc::ServerContext* c, const regatta::v1::GetServiceRequest* r,
                          regatta::v1::Service* out) override;
  grpc::Status ApplySecret(grpc::ServerContext* c, const regatta::v1::ApplySecretRequest* r,
                           regatta::v1::Secret* out) override;
  grpc::Status ListSecrets(grpc::ServerContext* c, const regatta::v1::ListSecretsRequest* r,
                           regatta::v1::ListSecretsResponse* out) override;
  grpc::Status GetSecret(grpc::ServerContext* c, const regatta::v1::GetSecretRequest* r,
                         regatta::v1::Secret* out) override;
  grpc::Status DeleteSecret(grpc::ServerContext* c, const regatta::v1::DeleteSecretRequest* r,
                            regatta::v1::DeleteSecretResponse* out) override;
  grpc::Status ApplyConfigMap(grpc::ServerContext* c, const regatta::v1::ApplyConfigMapRequest* r,
                              regatta::v1::ConfigMap* out) override;
  grpc::Status ListConfigMaps(grpc::ServerContext* c, const regatta::v1::ListConfigMapsRequest* r,
                              regatta::v1::ListConfigMapsResponse* out) override;
  grpc::Status GetConfigMap(grpc::ServerContext* c, const regatta::v1::GetConfigMapRequest* r,
                            regatta::v1::ConfigMap* out) override;
  grpc::Status DeleteConfigMap(grpc::ServerContext* c, const regatta::v1::DeleteConfigMapRequest* r,
                               regatta::v1::DeleteConfigMapResponse* out) override;

 private:
  Recorder* recorder_;
};

class FakeApi {
 public:
  FakeApi();
  ~FakeApi();
  std::shared_ptr<grpc::Channel> channel() const { return channel_; }
  Recorder& recorder() { return recorder_; }
  FakeEventService& events() { return events_; }
  FakeJobService& jobs() { return jobs_; }

 private:
  Recorder recorder_;
  FakeQueueService queues_{&recorder_};
  FakeSubmitService submit_{&recorder_};
  FakeJobService jobs_{&recorder_};
  FakeEventService events_{&recorder_};
  FakePipelineService pipelines_{&recorder_};
  FakeRunService runs_{&recorder_};
  FakeDeviceService devices_{&recorder_};
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

}  // namespace regatta::rest::testing

#endif  // REGATTA_TESTS_UNIT_REST_FAKE_SERVICES_H_
