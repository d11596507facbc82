#ifndef REGATTA_SRC_EXECUTOR_EXECUTOR_H_
#define REGATTA_SRC_EXECUTOR_EXECUTOR_H_

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/common/clock.h"
#include "src/common/resources.h"
#include "src/common/tls/tls.h"
#include "src/executor/api/executor_api.h"
#include "src/executor/device_discovery.h"
#include "src/executor/run_backend.h"

namespace regatta::executor {

// One node an executor offers.
struct NodeConfig {
  std::string id;
  std::map<std::string, std::string> labels;
  std::vector<regatta::v1::Taint> taints;
  // Resource name -> quantity: what the node offers in total.
  std::map<std::string, std::string> resources;
};

// What every executor kind shares.
struct ExecutorOptions {
  std::string executor_id;  // default: the host name
  std::string pool = "default";
  // At least one; node ids are unique.
  std::vector<NodeConfig> nodes;
  // The configuration key of `nodes`, for errors ("executor.nodes[3].resources: ...").
  std::string nodes_key = "executor.nodes";
  // "authorization" header for the server ("Bearer ...", "Basic ..."), or empty.
  std::string authorization;
  // Longest gap between lease requests (the server's lease wait usually answers sooner).
  absl::Duration heartbeat = absl::Seconds(2);
  // A report holding only runs' starts (PENDING, RUNNING) waits up to this long for a run's
  // end, so a short run (a trivial pipeline step: 2-4 ms of process here) is reported in one
  // call and one durable append rather than two, the second waiting for the first's fsync.
  // 1 ms was too short for a real process: a 100-step chain took 0.46 s with it, 0.35 s with
  // 5 ms (medians of six paired runs). A run's start shows at most this much later.
  absl::Duration report_linger = absl::Milliseconds(5);
  // At most this many runs at once (0: only resources limit).
  int max_runs = 0;
  // Where to serve run logs to the server ("host:port", port 0 picks one); empty: nowhere.
  std::string logs_listen = "127.0.0.1:0";
  // TLS of the log service (the executor's certificate; the server's client certificate is
  // verified with its client CA); null: plain text.
  std::shared_ptr<tls::ServerTls> logs_tls;
  // The discovery directory of the device agent (executor.discovery.dir); empty: no agent. The
  // agent discovers for the first node (a local executor has one): a discovery directory is
  // one node's. Other nodes (simulated ones too) get theirs from `regatta agent` processes.
  std::string discovery_dir;
};

// An executor: takes leases from the server's executor API (LeaseJobRuns), admits each against
// its node's allocatable resources, runs it on a RunBackend and reports run events back
// (ReportEvents, retried until the server takes them). Runs the backend recovers from an
// earlier process are reported by their result.
class Executor {
 public:
  // `channel` reaches the server; leases and reports go through `api` when given (the executor
  // embedded in the server's process), else over the channel. The device agent always uses
  // the channel.
  static absl::StatusOr<std::unique_ptr<Executor>> Start(
      ExecutorOptions options, std::unique_ptr<RunBackend> backend,
      std::shared_ptr<grpc::Channel> channel, const Clock* clock,
      std::unique_ptr<ExecutorApi> api = nullptr);
  ~Executor();

  // Stops taking leases, stops the backend's runs (within `grace`), reports what it can within
  // `grace`, and joins its threads.
  void Stop(absl::Duration grace = absl::Seconds(5));

  const std::string& executor_id() const { return options_.executor_id; }
  // host:port of the log service, or empty.
  const std::string& logs_address() const { return logs_address_; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  // Runs held now (leased, running, or finished and not yet acknowledged by the server).
  int held_runs() const;
  // The device agent's registration socket, or empty when it runs no agent.
  std::string discovery_socket() const;
  const std::string& first_node_id() const { return options_.nodes.front().id; }

 private:
  struct HeldRun {
    std::string job_id;
    std::string queue;
    std::string job_set;
    std::string node_id;
    ResourceList requests;
    regatta::v1::RunState state = regatta::v1::RUN_STATE_LEASED;
  };
  class LogService;

  Executor(ExecutorOptions options, std::unique_ptr<RunBackend> backend,
           std::shared_ptr<grpc::Channel> channel, const Clock* clock,
           std::unique_ptr<ExecutorApi> api);
  absl::Status Init();
  absl::Status AddNodes();
  void LeaseLoop();
  void ResultLoop();
  void ReportLoop();
  // Takes leases from lease_queue_ and starts them (kStarterThreads of these). A lease that
  // comes alone in an answer is started by LeaseLoop itself.
  void StartLoop();
  regatta::v1::LeaseRequest BuildRequest() ABSL_LOCKS_EXCLUDED(mu_);
  void HandleLease(const regatta::v1::JobRunLease& lease) ABSL_LOCKS_EXCLUDED(mu_);
  void HandleStop(const std::string& run_id, RunEnd why) ABSL_LOCKS_EXCLUDED(mu_);
  // Holds the run (active runs count against their node and max_runs).
  void HoldLocked(const std::string& run_id, HeldRun held) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Queues an event for the run (routed by its job set) and wakes the reporter.
  void Enqueue(const std::string& run_id, regatta::v1::Event event) ABSL_LOCKS_EXCLUDED(mu_);
  void EnqueueLocked(const std::string& run_id, regatta::v1::Event event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Drops the oldest event of outbox_, keeping outbox_ends_ true.
  void PopOutboxLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  regatta::v1::Event NewEvent() const;
  void RequestLeases() ABSL_LOCKS_EXCLUDED(mu_);

  ExecutorOptions options_;
  std::unique_ptr<RunBackend> backend_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<ExecutorApi> api_;
  const Clock* clock_;
  std::string incarnation_;
  std::vector<regatta::v1::NodeInfo> nodes_;
  absl::flat_hash_map<std::string, ResourceList> node_allocatable_;

  std::unique_ptr<DeviceDiscovery> discovery_;
  std::unique_ptr<LogService> log_service_;
  std::unique_ptr<grpc::Server> log_server_;
  std::string logs_address_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, HeldRun> held_ ABSL_GUARDED_BY(mu_);
  // Requests of the active (leased, pending, running) held runs by node, and their number.
  absl::flat_hash_map<std::string, ResourceList> node_used_ ABSL_GUARDED_BY(mu_);
  int active_runs_ ABSL_GUARDED_BY(mu_) = 0;
  struct PendingEvent {
    std::string run_id;
    regatta::v1::Event event;
  };
  std::deque<PendingEvent> outbox_ ABSL_GUARDED_BY(mu_);
  // How many events in outbox_ end a run.
  int outbox_ends_ ABSL_GUARDED_BY(mu_) = 0;
  // Leases received, not yet taken by a starter thread.
  std::deque<regatta::v1::JobRunLease> lease_queue_ ABSL_GUARDED_BY(mu_);
  // Runs whose end the server acknowledged, most recent last (bounded).
  absl::flat_hash_set<std::string> finished_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> finished_order_ ABSL_GUARDED_BY(mu_);
  // Results of runs that ended before their RUNNING event was queued (see HandleLease).
  absl::flat_hash_map<std::string, regatta::v1::Event> early_results_ ABSL_GUARDED_BY(mu_);
  bool want_request_ ABSL_GUARDED_BY(mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  LeaseSession* session_ ABSL_GUARDED_BY(mu_) = nullptr;

  std::thread lease_thread_;
  std::thread result_thread_;
  std::thread report_thread_;
  std::vector<std::thread> starter_threads_;
};

// The machine's host name ("localhost" if it has none).
std::string HostName();

// The job's resource requests (nothing if they do not parse; the server checked them).
ResourceList RequestsOf(const regatta::v1::Job& job);

// The environment a run gets for the devices of its lease: each device's properties (the first
// device's value wins a name two devices share) and REGATTA_DEVICE_INSTANCES, _SLOTS,
// _CDI_NAMES, _NODES (host paths of the device nodes) and _MOUNTS ("host:container[:ro]"),
// each comma-separated in lease order. Names the job's own env sets are left to the job.
std::vector<std::pair<std::string, std::string>> LeasedDeviceEnvironment(
    const regatta::v1::JobRunLease& lease);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_EXECUTOR_H_
