#ifndef REGATTA_SRC_SERVER_DEVICE_CONTROLLER_BACKEND_H_
#define REGATTA_SRC_SERVER_DEVICE_CONTROLLER_BACKEND_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "src/api/api_context.h"
#include "src/api/submit_service.h"
#include "src/devices/controller/controller.h"

namespace regatta::server {

// The user the device controller submits and cancels brokers as (the platform grants it
// submit_any_jobs and cancel_any_jobs; it never authenticates from outside).
inline constexpr char kDeviceControllerUser[] = "regatta-device-controller";

// The device controller's view of the platform: reads the views once they include the log so
// far (a pass never plans on stale rows), submits and cancels through the submit path.
class PlatformBrokerBackend final : public devices::BrokerBackend {
 public:
  PlatformBrokerBackend(const api::ApiContext* ctx, api::SubmitService* submit)
      : ctx_(ctx), submit_(submit) {}

  absl::StatusOr<std::vector<regatta::v1::Configuration>> ListConfigurations() override;
  absl::StatusOr<std::vector<regatta::v1::Instance>> ListInstances() override;
  absl::StatusOr<std::vector<devices::BrokerJob>> ActiveBrokers() override;
  absl::StatusOr<std::vector<devices::BrokerJob>> RecentBrokers(const devices::BrokerKey& key,
                                                                int limit) override;
  absl::StatusOr<std::vector<std::string>> Submit(
      const regatta::v1::SubmitJobsRequest& request) override;
  absl::Status Cancel(const std::vector<std::string>& job_ids, absl::string_view reason) override;

 private:
  // Broker jobs of `summaries` (labels and runs read once per job and kept: a job's labels and
  // annotations never change, and an ended job's runs neither). Rows without broker labels are
  // skipped with a warning.
  absl::StatusOr<std::vector<devices::BrokerJob>> ToBrokers(
      const std::vector<regatta::v1::JobSummary>& summaries);

  const api::ApiContext* ctx_;
  api::SubmitService* submit_;
  absl::Mutex mu_;
  // Job id -> the broker as last read, for jobs whose details cannot change any more (ended)
  // and, for active ones, their labels (state and runs are refreshed).
  absl::flat_hash_map<std::string, devices::BrokerJob> ended_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, devices::BrokerJob> labels_ ABSL_GUARDED_BY(mu_);
};

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_DEVICE_CONTROLLER_BACKEND_H_
