#ifndef REGATTA_SRC_API_SUBMIT_SERVICE_H_
#define REGATTA_SRC_API_SUBMIT_SERVICE_H_

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "regatta/v1/submit_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// The submit path, in order: authenticate → authorize → validate → deduplicate → convert to
// SubmitJob events → publish one EventSequence (durable) → store the dedup ids → answer.
// The same path changes jobs: cancel, cancel a job set, reprioritize, preempt.
class SubmitService final : public regatta::v1::SubmitService::Service {
 public:
  explicit SubmitService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status SubmitJobs(grpc::ServerContext* call, const regatta::v1::SubmitJobsRequest* request,
                          regatta::v1::SubmitJobsResponse* response) override;
  grpc::Status ValidateSubmit(grpc::ServerContext* call,
                              const regatta::v1::SubmitJobsRequest* request,
                              regatta::v1::ValidateSubmitResponse* response) override;
  grpc::Status CancelJobs(grpc::ServerContext* call, const regatta::v1::CancelJobsRequest* request,
                          regatta::v1::CancelJobsResponse* response) override;
  grpc::Status CancelJobSet(grpc::ServerContext* call,
                            const regatta::v1::CancelJobSetRequest* request,
                            regatta::v1::CancelJobSetResponse* response) override;
  grpc::Status ReprioritizeJobs(grpc::ServerContext* call,
                                const regatta::v1::ReprioritizeJobsRequest* request,
                                regatta::v1::ReprioritizeJobsResponse* response) override;
  grpc::Status PreemptJobs(grpc::ServerContext* call,
                           const regatta::v1::PreemptJobsRequest* request,
                           regatta::v1::PreemptJobsResponse* response) override;
  grpc::Status CancelQueue(grpc::ServerContext* call,
                           const regatta::v1::CancelQueueRequest* request,
                           regatta::v1::CancelQueueResponse* response) override;
  grpc::Status PreemptQueue(grpc::ServerContext* call,
                            const regatta::v1::PreemptQueueRequest* request,
                            regatta::v1::PreemptQueueResponse* response) override;
  grpc::Status CancelOnExecutor(grpc::ServerContext* call,
                                const regatta::v1::CancelOnExecutorRequest* request,
                                regatta::v1::CancelOnExecutorResponse* response) override;
  grpc::Status PreemptOnExecutor(grpc::ServerContext* call,
                                 const regatta::v1::PreemptOnExecutorRequest* request,
                                 regatta::v1::PreemptOnExecutorResponse* response) override;

  // The transport-neutral cores (also used by tests and benchmarks).
  // `wait` kVisible is for internal submitters that recover a lost submit themselves (the
  // pipeline engine): the jobs are visible at once and durable shortly after. `also`, from
  // internal submitters only, is appended after the jobs in the same atomic append (the
  // pipeline engine's progress rides on its step submits: one append per step, not two); it
  // is appended even if every item was a duplicate, and not at all if the submit fails.
  absl::StatusOr<regatta::v1::SubmitJobsResponse> Submit(
      const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request,
      eventlog::AppendWait wait = eventlog::AppendWait::kDurable,
      std::vector<regatta::v1::EventSequence> also = {});
  // Every check of Submit, publishing nothing.
  absl::StatusOr<regatta::v1::ValidateSubmitResponse> Validate(
      const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request);
  absl::StatusOr<regatta::v1::CancelJobsResponse> Cancel(
      const auth::Principal& principal, const regatta::v1::CancelJobsRequest& request);
  absl::Status CancelSet(const auth::Principal& principal,
                         const regatta::v1::CancelJobSetRequest& request);
  absl::StatusOr<regatta::v1::ReprioritizeJobsResponse> Reprioritize(
      const auth::Principal& principal, const regatta::v1::ReprioritizeJobsRequest& request);
  absl::StatusOr<regatta::v1::PreemptJobsResponse> Preempt(
      const auth::Principal& principal, const regatta::v1::PreemptJobsRequest& request);
  // Bulk: every non-terminal job of a queue (queue verb), or on an executor or node (global
  // permission, as it spans queues). Answer with how many jobs a request was published for.
  absl::StatusOr<regatta::v1::CancelQueueResponse> CancelAllInQueue(
      const auth::Principal& principal, const regatta::v1::CancelQueueRequest& request);
  absl::StatusOr<regatta::v1::PreemptQueueResponse> PreemptAllInQueue(
      const auth::Principal& principal, const regatta::v1::PreemptQueueRequest& request);
  absl::StatusOr<regatta::v1::CancelOnExecutorResponse> CancelAllOnExecutor(
      const auth::Principal& principal, const regatta::v1::CancelOnExecutorRequest& request);
  absl::StatusOr<regatta::v1::PreemptOnExecutorResponse> PreemptAllOnExecutor(
      const auth::Principal& principal, const regatta::v1::PreemptOnExecutorRequest& request);

  // Called with the new jobs of each submit of at most kMaxJobsHandedOver jobs once appended
  // (visible, or durable if the submitter waits for that), with the offset of their record:
  // the server hands them to its scheduler in process. Set before serving.
  // The hand-over saves a small submit the ingest's latency (~0.3-0.5 ms per pipeline step).
  // A big one is bound by throughput, where the copies and a second load of every job into the
  // scheduler cost more than they save: 1000-job submits went from 68 000 to 46 000 jobs/s.
  static constexpr int kMaxJobsHandedOver = 64;
  using SubmittedFn =
      std::function<void(int64_t offset, std::vector<std::shared_ptr<const regatta::v1::Job>>)>;
  void set_on_submitted(SubmittedFn callback) { on_submitted_ = std::move(callback); }

 private:
  // Loads the queue and checks the submit verb, that it is not cordoned and the request.
  absl::StatusOr<regatta::v1::Queue> CheckSubmit(const auth::Principal& principal,
                                                 const regatta::v1::SubmitJobsRequest& request);
  // Looks jobs up in the views (waiting for the views to catch up with the log once if some
  // are missing, so a cancel right after a submit finds the job). NOT_FOUND names missing ids;
  // INVALID_ARGUMENT if `queue`/`job_set` are given and a job is elsewhere.
  absl::StatusOr<std::vector<store::JobLocation>> ResolveJobs(const std::vector<std::string>& ids,
                                                              absl::string_view queue,
                                                              absl::string_view job_set);
  // Loads each distinct queue of `jobs` and checks `verb` on it.
  absl::Status AuthorizeJobs(const auth::Principal& principal,
                             const std::vector<store::JobLocation>& jobs, auth::QueueVerb verb);
  // Publishes one sequence per (queue, job set) of `jobs` (several for a huge job set), each
  // job's event made by `make`; all in one atomic append.
  absl::Status PublishPerJobSet(
      const auth::Principal& principal, absl::Span<const store::JobLocation> jobs,
      const std::function<void(const store::JobLocation&, regatta::v1::Event&)>& make);
  // INVALID_ARGUMENT "queue: required", NOT_FOUND for an unknown queue, PERMISSION_DENIED
  // without `verb` on it.
  absl::StatusOr<regatta::v1::Queue> LoadTargetQueue(const auth::Principal& principal,
                                                     absl::string_view name, auth::QueueVerb verb);
  enum class BulkAction { kCancel, kPreempt };
  // Waits for the views to hold the log so far, then publishes `action` for every job
  // `selector` finds, in appends of at most 100 000 jobs (a queue may hold a million); answers
  // once all are durable, with how many. A failure part way leaves the earlier appends: a retry
  // is harmless (requests on jobs already cancel- or preempt-requested change nothing).
  absl::StatusOr<int32_t> PublishForSelected(const auth::Principal& principal,
                                             const store::JobSelector& selector, BulkAction action,
                                             absl::string_view reason);
  absl::Mutex& DedupLock(absl::string_view queue);

  const ApiContext* ctx_;
  // Serializes lookup → publish → store of client ids per queue (striped by queue name).
  std::array<absl::Mutex, 64> dedup_locks_;
  SubmittedFn on_submitted_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_SUBMIT_SERVICE_H_
