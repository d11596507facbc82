#ifndef REGATTA_SRC_EXECUTOR_DEVICE_DISCOVERY_H_
#define REGATTA_SRC_EXECUTOR_DEVICE_DISCOVERY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/devices/agent/agent.h"

namespace regatta::executor {

struct DeviceDiscoveryOptions {
  // The discovery directory the node's handlers register in.
  std::string dir;
  std::string executor_id;
  // The node the agent discovers for.
  std::string node_id;
  // "authorization" header for the server, or empty.
  std::string authorization;
  // How errors about `dir` name it (the configuration key or the flag that set it).
  std::string dir_field = "executor.discovery.dir";
  // Reconnecting the watch and retrying a report: from this, doubling up to max_backoff.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(5);
  // For this long after the start, a Configuration is not reported before its devices are known:
  // handlers register again within tens of milliseconds of a new agent, and a report saying
  // "no handler registered" before they do would drop the node's Instances (freeing the slots
  // runs hold) on every restart of the agent.
  absl::Duration registration_grace = absl::Seconds(2);
};

// Keeps a retry loop from logging every attempt: a failure is logged when it differs (code and
// message) from the last one logged, and the first success after logged failures once.
class RepeatedFailureFilter {
 public:
  // True when this failure should be logged.
  bool ShouldLogFailure(grpc::StatusCode code, absl::string_view message);
  // True when this success ends failures that were logged.
  bool ShouldLogRecovery();

 private:
  std::optional<std::pair<grpc::StatusCode, std::string>> last_logged_;
};

// The device agent of an executor's node, wired to the server (executor_service.proto):
//   * WatchDiscovery: each snapshot is diffed against what the agent runs (Agent::Apply for a
//     new or changed Configuration, Agent::Remove for a deleted one or one whose properties the
//     server could not resolve; that error becomes the node's status for it). The watch
//     reconnects with backoff;
//   * the agent's callbacks: the Configuration's device set and error are kept, and a full
//     snapshot of each changed Configuration goes to ReportDevices, retried until the server
//     takes it (FAILED_PRECONDITION, e.g. while the executor does not list the node yet, is
//     retried too). Right after the start, reports wait for the handlers to register again
//     (registration_grace), so a restart does not drop the node's Instances. After every
//     (re)connection of the watch everything is reported again, so a restarted server or an
//     executor declared lost gets the node's current state.
class DeviceDiscovery {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceDiscovery>> Start(
      DeviceDiscoveryOptions options, std::shared_ptr<grpc::Channel> channel);
  ~DeviceDiscovery();  // Stop()
  DeviceDiscovery(const DeviceDiscovery&) = delete;
  DeviceDiscovery& operator=(const DeviceDiscovery&) = delete;

  // Ends the watch, stops the agent (removing its socket) and drops unsent reports.
  void Stop();

  const std::string& registration_socket() const { return agent_->registration_socket(); }
  // Reports the server has taken so far.
  int64_t reports_sent() const;

 private:
  struct ConfigState {
    regatta::v1::DiscoveryConfiguration entry;  // as the server last sent it
    std::vector<devices::DiscoveredDevice> devices;
    std::string agent_error;
    bool heard = false;          // there is something to report
    bool devices_known = false;  // the agent has reported a device set
    bool dirty = false;          // the server has not taken the current state
    uint64_t dirty_order = 0;    // reports go out oldest change first
    uint64_t version = 0;        // bumps on every change
  };

  DeviceDiscovery(DeviceDiscoveryOptions options, std::shared_ptr<grpc::Channel> channel);
  void WatchLoop();
  void ReportLoop();
  void ApplySnapshot(const regatta::v1::DiscoverySnapshot& snapshot) ABSL_LOCKS_EXCLUDED(mu_);
  void OnDevices(const std::string& configuration,
                 const std::vector<devices::DiscoveredDevice>& devices) ABSL_LOCKS_EXCLUDED(mu_);
  void OnError(const std::string& configuration, const std::string& error) ABSL_LOCKS_EXCLUDED(mu_);
  void MarkDirtyLocked(ConfigState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  regatta::v1::ReportDevicesRequest BuildReportLocked(const std::string& configuration,
                                                      const ConfigState& state) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Waits `delay` unless stopping first; false when stopping.
  bool SleepUnlessStopping(absl::Duration delay) ABSL_LOCKS_EXCLUDED(mu_);

  // Within the registration grace a state whose devices are unknown waits (see the options).
  bool HeldLocked(const ConfigState& state, absl::Time now) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const DeviceDiscoveryOptions options_;
  const absl::Time grace_ends_;
  std::unique_ptr<regatta::v1::ExecutorService::Stub> stub_;
  std::unique_ptr<devices::Agent> agent_;

  mutable absl::Mutex mu_;
  std::map<std::string, ConfigState> configs_ ABSL_GUARDED_BY(mu_);
  uint64_t next_dirty_order_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t reports_sent_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  grpc::ClientContext* watch_context_ ABSL_GUARDED_BY(mu_) = nullptr;
  grpc::ClientContext* report_context_ ABSL_GUARDED_BY(mu_) = nullptr;

  std::thread watch_thread_;
  std::thread report_thread_;
};

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_DEVICE_DISCOVERY_H_
