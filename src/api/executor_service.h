#ifndef REGATTA_SRC_API_EXECUTOR_SERVICE_H_
#define REGATTA_SRC_API_EXECUTOR_SERVICE_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/api/api_context.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/scheduler.h"

namespace regatta::api {

struct ExecutorServiceOptions {
  // With nothing to send, a lease request is answered after at most this long (or as soon as
  // there is something), so executors learn of new leases without polling.
  absl::Duration lease_wait = absl::Milliseconds(500);
  // A lease the executor does not list as held after this long is sent again.
  absl::Duration lease_resend_after = absl::Seconds(10);
  // Most events accepted in one ReportEvents call.
  int max_events_per_report = 100000;
};

// The executor API (see executor_service.proto): leases from the scheduler's JobDb, run events
// into the log. Callers need the execute_jobs permission.
class ExecutorService final : public regatta::v1::ExecutorService::Service {
 public:
  ExecutorService(const ApiContext* ctx, scheduler::Scheduler* scheduler,
                  scheduler::ExecutorRegistry* registry, ExecutorServiceOptions options);

  grpc::Status LeaseJobRuns(grpc::ServerContext* call,
                            grpc::ServerReaderWriter<regatta::v1::LeaseStreamMessage,
                                                     regatta::v1::LeaseRequest>* stream) override;
  grpc::Status ReportEvents(grpc::ServerContext* call,
                            const regatta::v1::ReportEventsRequest* request,
                            regatta::v1::ReportEventsResponse* response) override;

  // The transport-neutral cores (tests call them directly).
  absl::StatusOr<regatta::v1::ReportEventsResponse> Report(
      const auth::Principal& principal, const regatta::v1::ReportEventsRequest& request);
  // What to send an executor now: leases of runs it does not hold yet, runs to cancel and to
  // preempt. Empty if nothing.
  std::vector<regatta::v1::LeaseStreamMessage> PendingFor(const scheduler::ExecutorState& state);
  // Adds the devices the run holds, with what the executor injects.
  absl::Status AddLeasedDevices(regatta::v1::JobRunLease& lease);

  // Ends open lease streams (shutdown).
  void Shutdown() { shutting_down_ = true; }

  // Called with the job ids of runs whose success a report made durable, right after the
  // append and before the views ingest it: the pipeline engine starts a chain's next step one
  // ingest earlier. Set before serving.
  void set_on_runs_succeeded(std::function<void(const std::vector<std::string>&)> callback) {
    on_runs_succeeded_ = std::move(callback);
  }

 private:
  const ApiContext* ctx_;
  scheduler::Scheduler* scheduler_;
  scheduler::ExecutorRegistry* registry_;
  const ExecutorServiceOptions options_;
  std::atomic<bool> shutting_down_{false};
  std::function<void(const std::vector<std::string>&)> on_runs_succeeded_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_EXECUTOR_SERVICE_H_
