#ifndef REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_

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
#include "src/executor/local/process_supervisor.h"

namespace regatta::executor {

// One node the local executor offers. Without any configured node the executor offers the
// machine as one node named after the host.
struct LocalNodeConfig {
  std::string id;
  std::map<std::string, std::string> labels;
  std::vector<regatta::v1::Taint> taints;
  // Resource name -> quantity; cpu and memory default to the machine's.
  std::map<std::string, std::string> resources;
};

struct LocalExecutorOptions {
  std::string executor_id;  // default: the host name
  std::string pool = "default";
  std::vector<LocalNodeConfig> nodes;
  // Runs and their logs live under <data_dir>/runs.
  std::string data_dir;
  // "authorization" header for the server ("Bearer ...", "Basic ..."), or empty.
  std::string authorization;
  // Longest gap between lease requests (the server's lease wait usually answers sooner).
  absl::Duration heartbeat = absl::Seconds(2);
  // At most this many runs at once (0: only resources limit).
  int max_runs = 0;
  absl::Duration default_termination_grace = absl::Seconds(30);
  // Where to serve run logs to the server ("host:port", port 0 picks one); empty: nowhere.
  std::string logs_listen = "127.0.0.1:0";
  // Environment every run starts with (PATH, HOME, LANG, ... of the executor by default).
  std::vector<std::pair<std::string, std::string>> base_env;
  bool use_cgroups = true;
  // fsync run state files (see SupervisorOptions::sync_state); off by default: a crash of the
  // executor process loses nothing without it.
  bool sync_run_state = false;
};

// The local process executor: takes leases from the server's executor API, runs each as a
// process through the ProcessSupervisor, and reports run events back. Survives its own restart:
// runs found on disk are reported (finished ones with their result, the rest as lost).
class LocalExecutor {
 public:
  static absl::StatusOr<std::unique_ptr<LocalExecutor>> Start(
      LocalExecutorOptions options, std::shared_ptr<grpc::Channel> channel, const Clock* clock);
  ~LocalExecutor();

  // Stops taking leases, stops running processes (SIGTERM, then SIGKILL after `grace`),
  // reports what it can within `grace`, and joins its threads.
  void Stop(absl::Duration grace = absl::Seconds(5));

  const std::string& executor_id() const { return options_.executor_id; }
  // host:port of the log service, or empty.
  const std::string& logs_address() const { return logs_address_; }
  ProcessSupervisor& supervisor() { return *supervisor_; }
  // Runs held now (leased, running, or finished and not yet acknowledged by the server).
  int held_runs() const;

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

  LocalExecutor(LocalExecutorOptions options, std::shared_ptr<grpc::Channel> channel,
                const Clock* clock);
  absl::Status Init();
  void LeaseLoop();
  void ResultLoop();
  void ReportLoop();
  // Takes leases from lease_queue_ and starts them (kStarterThreads of these).
  void StartLoop();
  regatta::v1::LeaseRequest BuildRequest() ABSL_LOCKS_EXCLUDED(mu_);
  void HandleLease(const regatta::v1::JobRunLease& lease) ABSL_LOCKS_EXCLUDED(mu_);
  void HandleStop(const std::string& run_id, RunEnd why) ABSL_LOCKS_EXCLUDED(mu_);
  // Queues an event for the run (routed by its job set) and wakes the reporter.
  void Enqueue(const std::string& run_id, regatta::v1::Event event) ABSL_LOCKS_EXCLUDED(mu_);
  void EnqueueLocked(const std::string& run_id, regatta::v1::Event event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  regatta::v1::Event NewEvent() const;
  void RequestLeases() ABSL_LOCKS_EXCLUDED(mu_);

  LocalExecutorOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<regatta::v1::ExecutorService::Stub> stub_;
  const Clock* clock_;
  std::string incarnation_;
  std::unique_ptr<ProcessSupervisor> supervisor_;
  std::vector<regatta::v1::NodeInfo> nodes_;
  absl::flat_hash_map<std::string, ResourceList> node_allocatable_;

  std::unique_ptr<LogService> log_service_;
  std::unique_ptr<grpc::Server> log_server_;
  std::string logs_address_;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, HeldRun> held_ ABSL_GUARDED_BY(mu_);
  struct PendingEvent {
    std::string run_id;
    regatta::v1::Event event;
  };
  std::deque<PendingEvent> outbox_ ABSL_GUARDED_BY(mu_);
  // Leases received, not yet taken by a starter thread.
  std::deque<regatta::v1::JobRunLease> lease_queue_ ABSL_GUARDED_BY(mu_);
  // Runs whose end the server acknowledged, most recent last (bounded).
  absl::flat_hash_set<std::string> finished_ ABSL_GUARDED_BY(mu_);
  std::deque<std::string> finished_order_ ABSL_GUARDED_BY(mu_);
  // Results of runs that ended before their RUNNING event was queued (see HandleLease).
  absl::flat_hash_map<std::string, regatta::v1::Event> early_results_ ABSL_GUARDED_BY(mu_);
  bool want_request_ ABSL_GUARDED_BY(mu_) = true;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* stream_context_ ABSL_GUARDED_BY(mu_) = nullptr;

  std::thread lease_thread_;
  std::thread result_thread_;
  std::thread report_thread_;
  std::vector<std::thread> starter_threads_;
};

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_
