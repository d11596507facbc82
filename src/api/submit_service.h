#ifndef REGATTA_SRC_API_SUBMIT_SERVICE_H_
#define REGATTA_SRC_API_SUBMIT_SERVICE_H_

#include <array>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
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

  // The transport-neutral cores (also used by tests and benchmarks).
  absl::StatusOr<regatta::v1::SubmitJobsResponse> Submit(
      const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request);
  absl::StatusOr<regatta::v1::CancelJobsResponse> Cancel(
      const auth::Principal& principal, const regatta::v1::CancelJobsRequest& request);
  absl::Status CancelSet(const auth::Principal& principal,
                         const regatta::v1::CancelJobSetRequest& request);
  absl::StatusOr<regatta::v1::ReprioritizeJobsResponse> Reprioritize(
      const auth::Principal& principal, const regatta::v1::ReprioritizeJobsRequest& request);
  absl::StatusOr<regatta::v1::PreemptJobsResponse> Preempt(
      const auth::Principal& principal, const regatta::v1::PreemptJobsRequest& request);

 private:
  // Looks jobs up in the views (waiting for the views to catch up with the log once if some
  // are missing, so a cancel right after a submit finds the job). NOT_FOUND names missing ids;
  // INVALID_ARGUMENT if `queue`/`job_set` are given and a job is elsewhere.
  absl::StatusOr<std::vector<store::JobLocation>> ResolveJobs(const std::vector<std::string>& ids,
                                                              absl::string_view queue,
                                                              absl::string_view job_set);
  // Loads each distinct queue of `jobs` and checks `verb` on it.
  absl::Status AuthorizeJobs(const auth::Principal& principal,
                             const std::vector<store::JobLocation>& jobs, auth::QueueVerb verb);
  // Publishes one sequence per (queue, job set) of `jobs`, each job's event made by `make`.
  absl::Status PublishPerJobSet(
      const auth::Principal& principal, const std::vector<store::JobLocation>& jobs,
      const std::function<void(const store::JobLocation&, regatta::v1::Event&)>& make);
  absl::Mutex& DedupLock(absl::string_view queue);

  const ApiContext* ctx_;
  // Serializes lookup → publish → store of client ids per queue (striped by queue name).
  std::array<absl::Mutex, 64> dedup_locks_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_SUBMIT_SERVICE_H_
