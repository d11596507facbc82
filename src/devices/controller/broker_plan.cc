#include "src/devices/controller/broker_plan.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "src/common/resources.h"

namespace regatta::devices {
namespace {

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

const regatta::v1::BrokerTemplate* TemplateOf(const regatta::v1::Configuration& config) {
  const regatta::v1::BrokerSpec& spec = config.broker_spec();
  if (spec.has_broker_pod_spec()) return &spec.broker_pod_spec();
  if (spec.has_broker_job_spec()) return &spec.broker_job_spec();
  return nullptr;
}

// The nodes an Instance's brokers run on ("" : any node, a job broker).
std::vector<std::string> BrokerNodes(const regatta::v1::Configuration& config,
                                     const regatta::v1::Instance& instance) {
  if (instance.nodes().empty()) return {};
  if (config.broker_spec().has_broker_job_spec()) return {""};
  if (!config.broker_spec().has_broker_pod_spec()) return {};
  if (instance.shared()) return {instance.nodes().begin(), instance.nodes().end()};
  return {instance.nodes(0)};
}

// Port name -> the targetPort a broker asks for (0: one from the range), over both specs.
std::map<std::string, int> ServicePorts(const regatta::v1::Configuration& config) {
  std::map<std::string, int> ports;
  for (const regatta::v1::ServiceSpec* spec :
       {&config.instance_service_spec(), &config.configuration_service_spec()}) {
    for (const regatta::v1::ServicePort& port : spec->ports()) {
      int& fixed = ports[port.name()];
      if (fixed == 0) fixed = port.target_port();
    }
  }
  return ports;
}

// Hands out broker ports. Brokers of one machine are processes sharing its ports, so a port is
// held per node: a Configuration's targetPort goes to the first broker on a node, and a second
// broker on that node gets a port of the options' range instead (the service lists each
// broker's own port). Range ports are unique among all active brokers. A job broker's node is
// known only once it runs, so its ports count as held on every node.
class PortAllocator {
 public:
  PortAllocator(const std::vector<BrokerJob>& brokers, const BrokerPlanOptions& options)
      : next_(options.first_port), last_(options.last_port) {
    for (const BrokerJob& job : brokers) {
      if (!job.active) continue;
      for (const auto& [name, port] : job.ports) Hold(job.node, port);
    }
  }

  // `target` if no broker on `node` holds it, else a free port of the range; 0 when the range
  // is used up.
  int Claim(int target, const std::string& node) {
    if (target != 0 && !HeldOn(node, target)) {
      Hold(node, target);
      return target;
    }
    for (; next_ <= last_; ++next_) {
      if (!range_used_.contains(next_) && !HeldOn(node, next_)) {
        Hold(node, next_);
        return next_++;
      }
    }
    return 0;
  }

 private:
  void Hold(const std::string& node, int port) {
    held_[node].insert(port);
    range_used_.insert(port);
  }
  bool HeldOn(const std::string& node, int port) const {
    if (node.empty()) {
      for (const auto& [any, ports] : held_) {
        if (ports.contains(port)) return true;
      }
      return false;
    }
    for (const std::string& holder : {node, std::string()}) {
      auto it = held_.find(holder);
      if (it != held_.end() && it->second.contains(port)) return true;
    }
    return false;
  }

  int next_;
  int last_;
  std::map<std::string, std::set<int>> held_;  // node ("" : a job broker's) -> ports
  std::set<int> range_used_;
};

regatta::v1::JobSubmitRequestItem BrokerItem(const regatta::v1::BrokerTemplate& tmpl,
                                             const regatta::v1::Configuration& configuration,
                                             const regatta::v1::Instance& instance,
                                             const std::string& node, int attempt,
                                             const std::map<std::string, int>& ports) {
  regatta::v1::JobSubmitRequestItem item = tmpl.job();
  item.set_client_id(
      absl::StrCat("broker-", instance.name(), "-", node.empty() ? "job" : node, "-", attempt));
  auto& labels = *item.mutable_labels();
  labels[kBrokerLabel] = "true";
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
  auto& env = *task.mutable_env();
  if (configuration.has_instance_service_spec()) {
    env["REGATTA_INSTANCE_SERVICE"] = InstanceServiceName(instance.name());
  }
  if (configuration.has_configuration_service_spec()) {
    env["REGATTA_CONFIGURATION_SERVICE"] = ConfigurationServiceName(configuration.name());
  }
  for (const auto& [name, port] : ports) {
    env[BrokerPortVariable(name)] = absl::StrCat(port);
    (*item.mutable_annotations())[absl::StrCat(kBrokerPortAnnotationPrefix, name)] =
        absl::StrCat(port);
  }
  return item;
}

}  // namespace

std::string DefaultBrokerJobSet(absl::string_view configuration) {
  return absl::StrCat("broker-", configuration);
}

std::string InstanceServiceName(absl::string_view instance) {
  return absl::StrCat(instance, "-svc");
}

std::string ConfigurationServiceName(absl::string_view configuration) {
  return absl::StrCat(configuration, "-svc");
}

std::string BrokerPortVariable(absl::string_view port_name) {
  std::string name = absl::StrCat("REGATTA_PORT_", port_name);
  for (char& c : name) c = absl::ascii_isalnum(c) ? absl::ascii_toupper(c) : '_';
  return name;
}

std::vector<BrokerKey> DesiredBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                                      const std::vector<regatta::v1::Instance>& instances) {
  absl::flat_hash_map<std::string, const regatta::v1::Configuration*> by_name;
  for (const regatta::v1::Configuration& c : configurations) by_name[c.name()] = &c;
  std::vector<BrokerKey> keys;
  for (const regatta::v1::Instance& instance : instances) {
    auto config = by_name.find(instance.configuration_name());
    if (config == by_name.end()) continue;
    for (std::string& node : BrokerNodes(*config->second, instance)) {
      keys.push_back({instance.name(), std::move(node)});
    }
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

BrokerPlan PlanBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                       const std::vector<regatta::v1::Instance>& instances,
                       const std::vector<BrokerJob>& brokers, absl::Time now,
                       const BrokerPlanOptions& options) {
  absl::flat_hash_map<std::string, const regatta::v1::Configuration*> config_of;
  for (const regatta::v1::Configuration& c : configurations) config_of[c.name()] = &c;
  absl::flat_hash_map<std::string, const regatta::v1::Instance*> instance_of;
  for (const regatta::v1::Instance& instance : instances) instance_of[instance.name()] = &instance;
  std::map<BrokerKey, std::vector<const BrokerJob*>> existing;
  for (const BrokerJob& job : brokers) existing[{job.instance, job.node}].push_back(&job);
  PortAllocator ports(brokers, options);

  BrokerPlan plan;
  std::map<std::pair<std::string, std::string>, size_t> request_of;  // (queue, job set)
  const std::vector<BrokerKey> desired = DesiredBrokers(configurations, instances);
  for (const BrokerKey& key : desired) {
    const regatta::v1::Instance& instance = *instance_of.at(key.instance);
    const regatta::v1::Configuration& config = *config_of.at(instance.configuration_name());
    const regatta::v1::BrokerTemplate& tmpl = *TemplateOf(config);
    const std::vector<const BrokerJob*>& jobs = existing[key];
    if (std::any_of(jobs.begin(), jobs.end(), [](const BrokerJob* j) { return j->active; })) {
      continue;
    }
    // Attempts count over the key's whole history (client ids stay unique); back-off and
    // "a job broker runs once" only over this life of the Instance.
    int attempt = 0;
    const absl::Time born = instance.has_create_time()
                                ? absl::FromUnixSeconds(instance.create_time().seconds()) +
                                      absl::Nanoseconds(instance.create_time().nanos())
                                : absl::InfinitePast();
    std::vector<const BrokerJob*> this_life;
    absl::Time last_ended = absl::InfinitePast();
    for (const BrokerJob* job : jobs) {
      attempt = std::max(attempt, job->attempt + 1);
      if (job->submitted < born) continue;
      this_life.push_back(job);
      last_ended = std::max(last_ended, job->ended);
    }
    if (!this_life.empty()) {
      if (key.node.empty()) continue;  // a job broker runs once per Instance
      const absl::Time ready = last_ended + RestartDelay(this_life, options);
      if (now < ready) {
        plan.next_plan = plan.next_plan ? std::min(*plan.next_plan, ready) : ready;
        continue;
      }
    }
    std::map<std::string, int> broker_ports = ServicePorts(config);
    bool ports_ok = true;
    for (auto& [name, port] : broker_ports) {
      port = ports.Claim(port, key.node);
      if (port == 0) {
        plan.errors.push_back(
            {config.name(),
             absl::StrCat("broker of Instance '", instance.name(), "'",
                          key.node.empty() ? "" : absl::StrCat(" on node '", key.node, "'"),
                          ": no free port left in ", options.first_port, "..", options.last_port,
                          " for port '", name, "'")});
        ports_ok = false;
        break;
      }
    }
    if (!ports_ok) continue;
    const std::string job_set =
        tmpl.job_set().empty() ? DefaultBrokerJobSet(config.name()) : tmpl.job_set();
    auto [it, inserted] = request_of.try_emplace({tmpl.queue(), job_set}, plan.submits.size());
    if (inserted) {
      regatta::v1::SubmitJobsRequest& request = plan.submits.emplace_back();
      request.set_queue(tmpl.queue());
      request.set_job_set(job_set);
    }
    *plan.submits[it->second].add_items() =
        BrokerItem(tmpl, config, instance, key.node, attempt, broker_ports);
  }
  const std::set<BrokerKey> wanted(desired.begin(), desired.end());
  for (const auto& [key, jobs] : existing) {
    if (wanted.contains(key)) continue;
    for (const BrokerJob* job : jobs) {
      if (job->active) plan.cancels.push_back(job->job_id);
    }
  }
  std::sort(plan.cancels.begin(), plan.cancels.end());
  return plan;
}

}  // namespace regatta::devices
