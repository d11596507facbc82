#ifndef REGATTA_SRC_API_EXECUTOR_SERVICE_H_
#define REGATTA_SRC_API_EXECUTOR_SERVICE_H_

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
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
  // The scheduler's executor timeout: StartNodeSweep drops, this long after it is called, the
  // Instance nodes no connected executor lists (their executors did not come back after a
  // server restart).
  absl::Duration executor_timeout = absl::Seconds(30);
  // The principal of the executor embedded in this process (`regatta up`), if any. Leases,
  // cancellations and preemptions reach every other executor only once they are durable in the
  // log; the embedded one gets them at commit, since a machine crash that could lose them also
  // ends its runs (and a process crash loses no commit).
  std::string in_process_principal;
  // Called with the executor's id for every lease request it sends (its heartbeat), on the
  // session's reader thread; must be quick (metrics).
  std::function<void(absl::string_view executor_id)> on_heartbeat;
};

// The server's end of a lease session, whatever carries it (a gRPC stream, or a pipe to the
// executor in this process). Read from one thread, Write from one other.
class LeaseSessionEnd {
 public:
  virtual ~LeaseSessionEnd() = default;
  // Waits for the executor's next request; false once it sends no more.
  virtual bool Read(regatta::v1::LeaseRequest* request) = 0;
  virtual bool Write(const regatta::v1::LeaseStreamMessage& message) = 0;
  virtual bool IsCancelled() = 0;
  // Ends the session; a Read waiting returns false.
  virtual void TryCancel() = 0;
};

// The principal that publishes the Instance events of a lost executor's nodes.
inline constexpr char kNodeLossUser[] = "regatta-node-loss";

// The executor API (see executor_service.proto): leases from the scheduler's JobDb, run events
// into the log; Configurations to discover out, device reports in as Instance events. Callers
// need the execute_jobs permission.
class ExecutorService final : public regatta::v1::ExecutorService::Service {
 public:
  ExecutorService(const ApiContext* ctx, scheduler::Scheduler* scheduler,
                  scheduler::ExecutorRegistry* registry, ExecutorServiceOptions options);
  ~ExecutorService() override;  // Shutdown()

  grpc::Status LeaseJobRuns(grpc::ServerContext* call,
                            grpc::ServerReaderWriter<regatta::v1::LeaseStreamMessage,
                                                     regatta::v1::LeaseRequest>* stream) override;
  grpc::Status ReportEvents(grpc::ServerContext* call,
                            const regatta::v1::ReportEventsRequest* request,
                            regatta::v1::ReportEventsResponse* response) override;
  grpc::Status WatchDiscovery(grpc::ServerContext* call,
                              const regatta::v1::WatchDiscoveryRequest* request,
                              grpc::ServerWriter<regatta::v1::DiscoverySnapshot>* writer) override;
  grpc::Status ReportDevices(grpc::ServerContext* call,
                             const regatta::v1::ReportDevicesRequest* request,
                             regatta::v1::ReportDevicesResponse* response) override;

  // The transport-neutral cores (tests call them directly).
  // Serves one lease session until either side ends it; the status is the session's outcome.
  absl::Status ServeLeases(const auth::Principal& principal, LeaseSessionEnd& session);
  absl::StatusOr<regatta::v1::ReportEventsResponse> Report(
      const auth::Principal& principal, const regatta::v1::ReportEventsRequest& request);
  // Opens the job's task.secret_env for the executor; a value that does not open stays sealed.
  void OpenSecretEnv(regatta::v1::Job& job) const;
  // What to send an executor now: leases of runs it does not hold yet, runs to cancel and to
  // preempt. Empty if nothing.
  std::vector<regatta::v1::LeaseStreamMessage> PendingFor(const scheduler::ExecutorState& state);
  // Adds the devices the run holds, with what the executor injects.
  absl::Status AddLeasedDevices(regatta::v1::JobRunLease& lease);
  // Every Configuration with its discovery properties resolved from the views' Secrets and
  // ConfigMaps (an unresolvable one carries the error instead).
  absl::StatusOr<regatta::v1::DiscoverySnapshot> CurrentDiscovery();
  // Checks the report (INVALID_ARGUMENT naming the field; FAILED_PRECONDITION when the node is
  // not the executor's, as its latest lease request says) and publishes the Instance and status
  // events it implies (src/devices/report). A deleted Configuration's report is skipped.
  absl::Status ReportDevicesCore(const auth::Principal& principal,
                                 const regatta::v1::ReportDevicesRequest& request);

  // A Configuration, Secret or ConfigMap changed in the views: discovery watchers send a new
  // snapshot. Quick; called by the ingester's observer.
  void NotifyDiscoveryChanged();
  // The scheduler declared the executor lost: a worker thread drops its nodes from every
  // Instance, then ends its discovery watch so that, should it return, it reports again.
  // Quick; called on the scheduler thread.
  void OnExecutorLost(const scheduler::ExecutorState& state);
  // Waits until the node losses queued so far are published (tests).
  void WaitForNodeLosses();
  // Starts the node-loss worker, which first waits one executor timeout and then drops every
  // node of an Instance that no connected executor lists: after a server restart, the nodes
  // of executors that never came back. Call once, after serving starts.
  void StartNodeSweep();

  // Ends open lease and discovery streams and the node-loss worker (shutdown).
  void Shutdown();

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

  void NodeLossLoop();
  // Publishes `events` (InstanceNodeLost) under the node-loss principal, retried until it
  // works; false if stopped first.
  bool PublishNodeLosses(
      const std::function<absl::StatusOr<std::vector<regatta::v1::Event>>()>& collect,
      absl::string_view what);

  // Serialises device reports and node losses: each diffs against views the previous one's
  // events are already in.
  absl::Mutex report_mu_;

  // Discovery watchers wait for the version to change; `kicks_` ends one executor's watches.
  absl::Mutex discovery_mu_;
  int64_t discovery_version_ ABSL_GUARDED_BY(discovery_mu_) = 0;
  std::map<std::string, int64_t> kicks_ ABSL_GUARDED_BY(discovery_mu_);

  absl::Mutex loss_mu_;
  std::deque<scheduler::ExecutorState> losses_ ABSL_GUARDED_BY(loss_mu_);
  int64_t losses_queued_ ABSL_GUARDED_BY(loss_mu_) = 0;
  int64_t losses_done_ ABSL_GUARDED_BY(loss_mu_) = 0;
  bool loss_stop_ ABSL_GUARDED_BY(loss_mu_) = false;
  bool sweep_pending_ ABSL_GUARDED_BY(loss_mu_) = false;
  std::thread loss_thread_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_EXECUTOR_SERVICE_H_
