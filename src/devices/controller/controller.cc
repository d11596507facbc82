#include "src/devices/controller/controller.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"

namespace regatta::devices {

DeviceController::DeviceController(const Clock* clock, BrokerBackend* backend,
                                   DeviceControllerOptions options)
    : clock_(clock), backend_(backend), options_(std::move(options)) {}

DeviceController::~DeviceController() { Stop(); }

absl::StatusOr<DeviceController::PassResult> DeviceController::Reconcile() {
  absl::MutexLock pass_lock(&pass_mu_);
  ASSIGN_OR_RETURN(std::vector<regatta::v1::Configuration> configurations,
                   backend_->ListConfigurations());
  ASSIGN_OR_RETURN(std::vector<regatta::v1::Instance> instances, backend_->ListInstances());
  ASSIGN_OR_RETURN(std::vector<BrokerJob> brokers, backend_->ActiveBrokers());
  absl::flat_hash_set<std::string> active;
  std::set<BrokerKey> has_active;
  for (const BrokerJob& job : brokers) {
    active.insert(job.job_id);
    has_active.insert({job.instance, job.node});
  }
  // Only keys without an active broker need their history (attempt numbers, back-off).
  for (const BrokerKey& key : DesiredBrokers(configurations, instances)) {
    if (has_active.contains(key)) continue;
    ASSIGN_OR_RETURN(std::vector<BrokerJob> recent,
                     backend_->RecentBrokers(key, options_.history_limit));
    for (BrokerJob& job : recent) {
      if (!job.active) brokers.push_back(std::move(job));
    }
  }

  const absl::Time now = clock_->Now();
  BrokerPlan plan = PlanBrokers(configurations, instances, brokers, now, options_.plan);
  PassResult result;
  result.next_plan = plan.next_plan;
  result.errors = std::move(plan.errors);
  for (const regatta::v1::SubmitJobsRequest& request : plan.submits) {
    absl::StatusOr<std::vector<std::string>> ids = backend_->Submit(request);
    if (!ids.ok()) {
      // One error per Configuration of the request's brokers.
      std::map<std::string, std::vector<std::string>> client_ids;
      for (const auto& item : request.items()) {
        client_ids[item.labels().at(kBrokerConfigurationLabel)].push_back(item.client_id());
      }
      for (const auto& [configuration, ids_of_config] : client_ids) {
        result.errors.push_back(
            {configuration,
             absl::StrCat("cannot submit brokers ", absl::StrJoin(ids_of_config, ", "),
                          " to queue '", request.queue(), "': ", ids.status().message())});
      }
      continue;
    }
    result.submitted += static_cast<int>(ids->size());
    active.insert(ids->begin(), ids->end());
  }
  if (!plan.cancels.empty()) {
    absl::Status cancelled = backend_->Cancel(
        plan.cancels, "device controller: its Instance, node or broker spec is gone");
    if (cancelled.ok()) {
      result.cancelled = static_cast<int>(plan.cancels.size());
    } else {
      result.errors.push_back(
          {"", absl::StrCat("cannot cancel brokers ", absl::StrJoin(plan.cancels, ", "), ": ",
                            cancelled.message())});
    }
  }
  absl::flat_hash_map<std::string, std::string> by_configuration;
  for (const BrokerError& error : result.errors) {
    LOG_WARN("device controller", "configuration", error.configuration, "error", error.message);
    if (error.configuration.empty()) continue;
    std::string& joined = by_configuration[error.configuration];
    absl::StrAppend(&joined, joined.empty() ? "" : "; ", error.message);
  }
  absl::MutexLock lock(&state_mu_);
  active_brokers_ = std::move(active);
  broker_errors_ = std::move(by_configuration);
  ++passes_;
  return result;
}

void DeviceController::Start() {
  absl::MutexLock lock(&loop_mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] {
    SetThreadName("rg-devices");
    Loop();
  });
}

void DeviceController::Stop() {
  {
    absl::MutexLock lock(&loop_mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void DeviceController::Wake() {
  absl::MutexLock lock(&loop_mu_);
  woken_ = true;
}

bool DeviceController::IsActiveBroker(absl::string_view job_id) const {
  absl::MutexLock lock(&state_mu_);
  return active_brokers_.contains(job_id);
}

std::string DeviceController::BrokerErrors(absl::string_view configuration) const {
  absl::MutexLock lock(&state_mu_);
  auto it = broker_errors_.find(configuration);
  return it == broker_errors_.end() ? "" : it->second;
}

int64_t DeviceController::passes() const {
  absl::MutexLock lock(&state_mu_);
  return passes_;
}

void DeviceController::Loop() {
  while (true) {
    {
      absl::MutexLock lock(&loop_mu_);
      woken_ = false;  // this pass reads everything a wake before it asked for
    }
    absl::StatusOr<PassResult> result = Reconcile();
    absl::Duration sleep = options_.resync_interval;
    if (!result.ok()) {
      LOG_WARN("device controller pass failed", "error", result.status().ToString());
      sleep = options_.retry_delay;
    } else {
      if (!result->errors.empty()) sleep = std::min(sleep, options_.retry_delay);
      if (result->next_plan) {
        sleep = std::min(sleep, std::max(absl::ZeroDuration(), *result->next_plan - clock_->Now()));
      }
    }
    absl::MutexLock lock(&loop_mu_);
    auto stop_or_wake = [this]()
                            ABSL_SHARED_LOCKS_REQUIRED(loop_mu_) { return stopping_ || woken_; };
    loop_mu_.AwaitWithTimeout(absl::Condition(&stop_or_wake), sleep);
    if (stopping_) return;
  }
}

}  // namespace regatta::devices
