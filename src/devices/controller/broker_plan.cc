#include "src/devices/controller/broker_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/common/resources.h"

namespace regatta::devices {
namespace {

using Key = std::pair<std::string, std::string>;  // instance, node ("" for a job broker)

// How long a long-running broker that ended waits before its next attempt: the back-off doubles
// for every attempt in a row that ran less than `reset_after`.
absl::Duration RestartDelay(std::vector<const BrokerJob*> ended, const BrokerPlanOptions& options) {
  std::sort(ended.begin(), ended.end(),
            [](const BrokerJob* a, const BrokerJob* b) { return a->attempt > b->attempt; });
  int short_lived = 0;
  for (const BrokerJob* job : ended) {
    if (job->started && job->ended - *job->started >= options.reset_after) break;
    ++short_lived;
  }
  if (short_lived == 0) return absl::ZeroDuration();
  absl::Duration delay = options.restart_delay;
  for (int i = 1; i < short_lived && delay < options.max_restart_delay; ++i) delay *= 2;
  return std::min(delay, options.max_restart_delay);
}

regatta::v1::JobSubmitRequestItem BrokerItem(const regatta::v1::BrokerTemplate& tmpl,
                                             const regatta::v1::Configuration& configuration,
                                             const regatta::v1::Instance& instance,
                                             const std::string& node, int attempt) {
  regatta::v1::JobSubmitRequestItem item = tmpl.job();
  item.set_client_id(
      absl::StrCat("broker-", instance.name(), "-", node.empty() ? "job" : node, "-", attempt));
  auto& labels = *item.mutable_labels();
  labels[kBrokerConfigurationLabel] = configuration.name();
  labels[kBrokerInstanceLabel] = instance.name();
  labels[kBrokerNodeLabel] = node;
  labels[kBrokerAttemptLabel] = absl::StrCat(attempt);
  regatta::v1::TaskSpec& task = *item.mutable_task();
  // The broker holds one slot of its device (the scheduler claims it; the executor injects it).
  (*task.mutable_resources()
        ->mutable_requests())[absl::StrCat(kDeviceResourcePrefix, instance.name())] = "1";
  if (!task.resources().limits().empty()) {
    (*task.mutable_resources()
          ->mutable_limits())[absl::StrCat(kDeviceResourcePrefix, instance.name())] = "1";
  }
  if (!node.empty()) (*task.mutable_node_selector())[kNodeHostnameLabel] = node;
  return item;
}

}  // namespace

std::string DefaultBrokerJobSet(absl::string_view configuration) {
  return absl::StrCat("broker-", configuration);
}

BrokerPlan PlanBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                       const std::vector<regatta::v1::Instance>& instances,
                       const std::vector<BrokerJob>& brokers, absl::Time now,
                       const BrokerPlanOptions& options) {
  absl::flat_hash_map<std::string, const regatta::v1::Configuration*> by_name;
  for (const regatta::v1::Configuration& c : configurations) by_name[c.name()] = &c;
  std::map<Key, std::vector<const BrokerJob*>> existing;
  for (const BrokerJob& job : brokers) existing[{job.instance, job.node}].push_back(&job);
  std::vector<const regatta::v1::Instance*> ordered;
  for (const regatta::v1::Instance& instance : instances) ordered.push_back(&instance);
  std::sort(ordered.begin(), ordered.end(),
            [](const auto* a, const auto* b) { return a->name() < b->name(); });

  BrokerPlan plan;
  std::set<Key> desired;
  std::map<std::pair<std::string, std::string>, size_t> request_of;  // (queue, job set)
  for (const regatta::v1::Instance* instance : ordered) {
    auto config = by_name.find(instance->configuration_name());
    if (config == by_name.end() || instance->nodes().empty()) continue;
    const regatta::v1::BrokerSpec& spec = config->second->broker_spec();
    const bool long_running = spec.has_broker_pod_spec();
    if (!long_running && !spec.has_broker_job_spec()) continue;
    const regatta::v1::BrokerTemplate& tmpl =
        long_running ? spec.broker_pod_spec() : spec.broker_job_spec();
    std::vector<std::string> nodes;
    if (!long_running) {
      nodes.push_back("");
    } else if (instance->shared()) {
      nodes.assign(instance->nodes().begin(), instance->nodes().end());
    } else {
      nodes.push_back(instance->nodes(0));
    }
    for (const std::string& node : nodes) {
      const Key key{instance->name(), node};
      desired.insert(key);
      const std::vector<const BrokerJob*>& jobs = existing[key];
      if (std::any_of(jobs.begin(), jobs.end(), [](const BrokerJob* j) { return j->active; })) {
        continue;
      }
      int attempt = 0;
      absl::Time last_ended = absl::InfinitePast();
      for (const BrokerJob* job : jobs) {
        attempt = std::max(attempt, job->attempt + 1);
        last_ended = std::max(last_ended, job->ended);
      }
      if (!jobs.empty()) {
        if (!long_running) continue;  // a job broker runs once per Instance
        const absl::Time ready = last_ended + RestartDelay(jobs, options);
        if (now < ready) {
          plan.next_plan = plan.next_plan ? std::min(*plan.next_plan, ready) : ready;
          continue;
        }
      }
      const std::string job_set =
          tmpl.job_set().empty() ? DefaultBrokerJobSet(config->second->name()) : tmpl.job_set();
      auto [it, inserted] = request_of.try_emplace({tmpl.queue(), job_set}, plan.submits.size());
      if (inserted) {
        regatta::v1::SubmitJobsRequest& request = plan.submits.emplace_back();
        request.set_queue(tmpl.queue());
        request.set_job_set(job_set);
      }
      *plan.submits[it->second].add_items() =
          BrokerItem(tmpl, *config->second, *instance, node, attempt);
    }
  }
  for (const auto& [key, jobs] : existing) {
    if (desired.contains(key)) continue;
    for (const BrokerJob* job : jobs) {
      if (job->active) plan.cancels.push_back(job->job_id);
    }
  }
  std::sort(plan.cancels.begin(), plan.cancels.end());
  return plan;
}

}  // namespace regatta::devices
