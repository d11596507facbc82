#include "src/server/device_controller_backend.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/store/list_all.h"

namespace regatta::server {

namespace pb = regatta::v1;

namespace {

constexpr size_t kMaxCachedBrokers = 10'000;

auth::Principal ControllerPrincipal() {
  auth::Principal principal;
  principal.name = kDeviceControllerUser;
  return principal;
}

// The broker a job's details describe; NOT_FOUND when it lacks the broker labels.
absl::StatusOr<devices::BrokerJob> BrokerFromDetails(const pb::JobDetails& details) {
  const auto& labels = details.job().labels();
  devices::BrokerJob broker;
  broker.job_id = details.summary().job_id();
  auto label = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = labels.find(key);
    if (it == labels.end()) return absl::NotFoundError(absl::StrCat("label ", key, " missing"));
    return it->second;
  };
  ASSIGN_OR_RETURN(broker.configuration, label(devices::kBrokerConfigurationLabel));
  ASSIGN_OR_RETURN(broker.instance, label(devices::kBrokerInstanceLabel));
  ASSIGN_OR_RETURN(broker.node, label(devices::kBrokerNodeLabel));
  ASSIGN_OR_RETURN(std::string attempt, label(devices::kBrokerAttemptLabel));
  if (!absl::SimpleAtoi(attempt, &broker.attempt) || broker.attempt < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("label ", devices::kBrokerAttemptLabel, ": not a count: '", attempt, "'"));
  }
  ASSIGN_OR_RETURN(broker.ports, devices::BrokerPortsOf(details.job().annotations()));
  broker.submitted = api::FromTimestamp(details.summary().submit_time());
  broker.active = !store::IsTerminal(details.summary().state());
  if (!broker.active) {
    if (!details.runs().empty() && details.runs().rbegin()->has_started_time()) {
      broker.started = api::FromTimestamp(details.runs().rbegin()->started_time());
    }
    broker.ended = api::FromTimestamp(details.summary().last_transition_time());
  }
  return broker;
}

}  // namespace

absl::StatusOr<std::vector<pb::Configuration>> PlatformBrokerBackend::ListConfigurations() {
  RETURN_IF_ERROR(
      ctx_->wait_for_views(ctx_->log->LastOffset(), ctx_->clock->Now() + ctx_->view_wait_timeout));
  store::Store* store = ctx_->store;
  return store::ListAll<pb::Configuration>(
      [store](const store::PageRequest& page) { return store->ListConfigurations(page); });
}

absl::StatusOr<std::vector<pb::Instance>> PlatformBrokerBackend::ListInstances() {
  store::Store* store = ctx_->store;
  return store::ListAll<pb::Instance>([store](const store::PageRequest& page) {
    store::InstanceFilter filter;
    filter.page = page;
    return store->ListInstances(filter);
  });
}

absl::StatusOr<std::vector<devices::BrokerJob>> PlatformBrokerBackend::ActiveBrokers() {
  store::JobFilter filter;
  filter.labels = {{devices::kBrokerLabel, "true"}};
  filter.states = {pb::JOB_STATE_SUBMITTED, pb::JOB_STATE_QUEUED, pb::JOB_STATE_LEASED,
                   pb::JOB_STATE_PENDING, pb::JOB_STATE_RUNNING};
  filter.limit = 1000;
  std::vector<pb::JobSummary> summaries;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<pb::JobSummary> page, ctx_->store->ListJobs(filter));
    const bool last = static_cast<int>(page.size()) < filter.limit;
    if (!page.empty()) filter.after_job_id = page.back().job_id();
    for (pb::JobSummary& summary : page) summaries.push_back(std::move(summary));
    if (last) break;
  }
  return ToBrokers(summaries);
}

absl::StatusOr<std::vector<devices::BrokerJob>> PlatformBrokerBackend::RecentBrokers(
    const devices::BrokerKey& key, int limit) {
  store::JobFilter filter;
  filter.labels = {{devices::kBrokerInstanceLabel, key.instance},
                   {devices::kBrokerNodeLabel, key.node}};
  filter.newest_first = true;
  filter.limit = limit;
  ASSIGN_OR_RETURN(std::vector<pb::JobSummary> summaries, ctx_->store->ListJobs(filter));
  return ToBrokers(summaries);
}

absl::StatusOr<std::vector<devices::BrokerJob>> PlatformBrokerBackend::ToBrokers(
    const std::vector<pb::JobSummary>& summaries) {
  std::vector<devices::BrokerJob> brokers;
  std::vector<std::string> unknown;
  {
    absl::MutexLock lock(&mu_);
    for (const pb::JobSummary& summary : summaries) {
      const bool ended = store::IsTerminal(summary.state());
      if (auto it = ended_.find(summary.job_id()); it != ended_.end()) {
        brokers.push_back(it->second);
      } else if (auto known = labels_.find(summary.job_id()); known != labels_.end() && !ended) {
        brokers.push_back(known->second);
      } else {
        unknown.push_back(summary.job_id());
      }
    }
  }
  if (unknown.empty()) return brokers;
  ASSIGN_OR_RETURN(std::vector<pb::JobDetails> details,
                   ctx_->store->GetJobDetails(unknown, /*expand_spec=*/true));
  absl::MutexLock lock(&mu_);
  if (ended_.size() > kMaxCachedBrokers) ended_.clear();
  if (labels_.size() > kMaxCachedBrokers) labels_.clear();
  for (const pb::JobDetails& job : details) {
    absl::StatusOr<devices::BrokerJob> broker = BrokerFromDetails(job);
    if (!broker.ok()) {
      LOG_WARN("device controller: skipping a job labelled as a broker", "job",
               job.summary().job_id(), "error", broker.status().message());
      continue;
    }
    if (broker->active) {
      labels_[broker->job_id] = *broker;
    } else {
      labels_.erase(broker->job_id);
      ended_[broker->job_id] = *broker;
    }
    brokers.push_back(*std::move(broker));
  }
  return brokers;
}

absl::StatusOr<std::vector<std::string>> PlatformBrokerBackend::Submit(
    const pb::SubmitJobsRequest& request) {
  ASSIGN_OR_RETURN(pb::SubmitJobsResponse response,
                   submit_->Submit(ControllerPrincipal(), request));
  std::vector<std::string> ids;
  for (const auto& item : response.items()) ids.push_back(item.job_id());
  return ids;
}

absl::Status PlatformBrokerBackend::Cancel(const std::vector<std::string>& job_ids,
                                           absl::string_view reason) {
  pb::CancelJobsRequest request;
  for (const std::string& id : job_ids) request.add_job_ids(id);
  request.set_reason(std::string(reason));
  return submit_->Cancel(ControllerPrincipal(), request).status();
}

}  // namespace regatta::server
