#ifndef REGATTA_SRC_DEVICES_CONTROLLER_CONTROLLER_H_
#define REGATTA_SRC_DEVICES_CONTROLLER_CONTROLLER_H_

// The device controller (Akri's controller): keeps every Instance's brokers running as Regatta
// jobs. Each pass reads the Configurations, Instances and broker jobs, plans (PlanBrokers) and
// submits or cancels; passes run when the views change (Wake), when a back-off ends, and once
// a minute in any case. One controller per cluster: it runs next to the scheduler.

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "src/common/clock.h"
#include "src/devices/controller/broker_plan.h"

namespace regatta::devices {

// What the controller reads and does; the server implements it on its views and submit path.
class BrokerBackend {
 public:
  virtual ~BrokerBackend() = default;
  // Configurations and Instances, as of everything the log held when called.
  virtual absl::StatusOr<std::vector<regatta::v1::Configuration>> ListConfigurations() = 0;
  virtual absl::StatusOr<std::vector<regatta::v1::Instance>> ListInstances() = 0;
  // Every broker job not in a terminal state.
  virtual absl::StatusOr<std::vector<BrokerJob>> ActiveBrokers() = 0;
  // The newest broker jobs of one key (any state), newest first, at most `limit`.
  virtual absl::StatusOr<std::vector<BrokerJob>> RecentBrokers(const BrokerKey& key, int limit) = 0;
  // Returns the ids of the jobs submitted (or found by their client ids).
  virtual absl::StatusOr<std::vector<std::string>> Submit(
      const regatta::v1::SubmitJobsRequest& request) = 0;
  virtual absl::Status Cancel(const std::vector<std::string>& job_ids,
                              absl::string_view reason) = 0;
};

struct DeviceControllerOptions {
  BrokerPlanOptions plan;
  // The longest a controller sleeps between passes.
  absl::Duration resync_interval = absl::Minutes(1);
  // After a failed pass (e.g. the broker's queue does not exist), the next one.
  absl::Duration retry_delay = absl::Seconds(5);
  // How much of a key's history a pass reads (enough for the longest back-off).
  int history_limit = 16;
};

class DeviceController {
 public:
  struct PassResult {
    int submitted = 0;
    int cancelled = 0;
    std::optional<absl::Time> next_plan;
    // Brokers that could not be submitted or planned, in plain words.
    std::vector<std::string> errors;
  };

  DeviceController(const Clock* clock, BrokerBackend* backend,
                   DeviceControllerOptions options = {});
  ~DeviceController();
  DeviceController(const DeviceController&) = delete;
  DeviceController& operator=(const DeviceController&) = delete;

  // One pass: read, plan, submit, cancel. Errors of one submit leave the others unaffected;
  // the status is the backend's reads'.
  absl::StatusOr<PassResult> Reconcile();

  // Runs passes in a background thread until Stop (idempotent; Stop returns promptly).
  void Start();
  void Stop();
  // A pass soon: the Configurations or Instances changed, or a broker ended.
  void Wake();
  // Whether `job_id` is a broker the last pass saw active (its end should wake the controller).
  bool IsActiveBroker(absl::string_view job_id) const;
  // Passes run so far (for tests and benchmarks).
  int64_t passes() const;

 private:
  void Loop();

  const Clock* clock_;
  BrokerBackend* backend_;
  DeviceControllerOptions options_;

  absl::Mutex pass_mu_;  // one pass at a time

  mutable absl::Mutex state_mu_;
  absl::flat_hash_set<std::string> active_brokers_ ABSL_GUARDED_BY(state_mu_);
  int64_t passes_ ABSL_GUARDED_BY(state_mu_) = 0;

  absl::Mutex loop_mu_;
  bool woken_ ABSL_GUARDED_BY(loop_mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(loop_mu_) = false;
  std::thread thread_;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_CONTROLLER_CONTROLLER_H_
