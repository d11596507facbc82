#include "src/devices/services/services.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/devices/controller/broker_plan.h"
#include "src/store/store.h"

namespace regatta::devices {
namespace {

namespace pb = regatta::v1;

// A broker that can be listed, with its ports by name.
struct ReadableBroker {
  const ServiceBroker* job = nullptr;
  std::map<std::string, int> ports;
};

const std::string* Label(const ServiceBroker& broker, const char* key) {
  auto it = broker.labels.find(key);
  return it == broker.labels.end() || it->second.empty() ? nullptr : &it->second;
}

// The broker's ports, or why it cannot be read.
pb::ServiceEndpoint Endpoint(const ReadableBroker& broker, const std::string& instance,
                             const pb::ServiceSpec& spec,
                             const ExecutorAddressLookup& executor_logs_address) {
  const ServiceBroker& job = *broker.job;
  pb::ServiceEndpoint endpoint;
  endpoint.set_broker_job_id(job.job_id);
  endpoint.set_instance_name(instance);
  endpoint.set_run_id(job.run_id);
  endpoint.set_node(job.node);
  endpoint.set_executor_id(job.executor_id);
  if (!job.node.empty()) {
    const std::string logs = job.executor_id.empty() || !executor_logs_address
                                 ? std::string()
                                 : executor_logs_address(job.executor_id);
    endpoint.set_address(EndpointAddress(logs, job.node));
  }
  for (const pb::ServicePort& port : spec.ports()) {
    auto it = broker.ports.find(port.name());
    // A broker submitted before the port was in the spec has no port of that name.
    if (it != broker.ports.end()) (*endpoint.mutable_ports())[port.name()] = it->second;
  }
  endpoint.set_ready(job.state == pb::JOB_STATE_RUNNING);
  return endpoint;
}

void SortEndpoints(pb::Service& service) {
  auto* endpoints = service.mutable_endpoints();
  std::sort(endpoints->begin(), endpoints->end(),
            [](const pb::ServiceEndpoint& a, const pb::ServiceEndpoint& b) {
              return std::tie(a.instance_name(), a.node(), a.broker_job_id()) <
                     std::tie(b.instance_name(), b.node(), b.broker_job_id());
            });
}

}  // namespace

ServiceBroker ServiceBrokerFromDetails(const pb::JobDetails& details) {
  ServiceBroker broker;
  broker.job_id = details.summary().job_id();
  broker.state = details.summary().state();
  broker.labels.insert(details.job().labels().begin(), details.job().labels().end());
  broker.annotations.insert(details.job().annotations().begin(), details.job().annotations().end());
  if (!details.runs().empty() && !store::IsTerminal(details.runs().rbegin()->state())) {
    const pb::JobRunDetails& run = *details.runs().rbegin();  // runs are oldest first
    broker.run_id = run.run_id();
    broker.node = run.node_id();
    broker.executor_id = run.executor_id();
  }
  return broker;
}

std::string EndpointAddress(absl::string_view executor_logs_address, absl::string_view node) {
  absl::string_view host = executor_logs_address;
  if (absl::StartsWith(host, "[")) {
    const size_t close = host.find(']');
    host = close == absl::string_view::npos ? absl::string_view() : host.substr(1, close - 1);
  } else if (const size_t colon = host.rfind(':'); colon != absl::string_view::npos) {
    host = host.substr(0, colon);  // the executor writes "<listen host>:<port>"
  }
  if (host.empty() || host == "0.0.0.0" || host == "::" || host == "*") return std::string(node);
  return std::string(host);
}

ComputedServices ComputeServices(const std::vector<pb::Configuration>& configurations,
                                 const std::vector<pb::Instance>& instances,
                                 const std::vector<ServiceBroker>& brokers,
                                 const ExecutorAddressLookup& executor_logs_address) {
  ComputedServices out;
  absl::flat_hash_map<std::string, const pb::Configuration*> configuration_of;
  for (const pb::Configuration& c : configurations) configuration_of[c.name()] = &c;
  // Instances that exist, of a Configuration given.
  absl::flat_hash_map<std::string, const pb::Instance*> instance_of;
  std::map<std::string, std::vector<const pb::Instance*>> instances_by_configuration;
  for (const pb::Instance& i : instances) {
    if (!configuration_of.contains(i.configuration_name())) continue;
    instance_of[i.name()] = &i;
    instances_by_configuration[i.configuration_name()].push_back(&i);
  }

  // Active brokers by Instance.
  std::map<std::string, std::vector<ReadableBroker>> brokers_by_instance;
  for (const ServiceBroker& broker : brokers) {
    if (store::IsTerminal(broker.state)) continue;
    const std::string* configuration = Label(broker, kBrokerConfigurationLabel);
    const std::string* instance = Label(broker, kBrokerInstanceLabel);
    if (configuration == nullptr || instance == nullptr) {
      out.warnings.push_back(
          absl::StrCat("broker job ", broker.job_id, ": no ",
                       configuration == nullptr ? kBrokerConfigurationLabel : kBrokerInstanceLabel,
                       " label; left out of the services"));
      continue;
    }
    absl::StatusOr<std::map<std::string, int>> ports = BrokerPortsOf(broker.annotations);
    if (!ports.ok()) {
      out.warnings.push_back(absl::StrCat("broker job ", broker.job_id, ": ",
                                          ports.status().message(), "; left out of the services"));
      continue;
    }
    // A broker of an Instance that is gone is no endpoint (the controller cancels it).
    auto it = instance_of.find(*instance);
    if (it == instance_of.end() || it->second->configuration_name() != *configuration) continue;
    brokers_by_instance[*instance].push_back({&broker, *std::move(ports)});
  }

  std::map<std::string, pb::Service> by_name;
  auto add = [&](pb::Service service) {
    auto [it, inserted] = by_name.try_emplace(service.name(), service);
    if (inserted) return;
    // Only an instance service and a configuration service can share a name (a Configuration
    // named like another's Instance); the configuration service keeps it.
    pb::Service& kept = it->second;
    const pb::Service& of_instance = kept.kind() == pb::SERVICE_KIND_INSTANCE ? kept : service;
    out.warnings.push_back(absl::StrCat("service ", service.name(), ": Instance ",
                                        of_instance.instance_name(),
                                        " has the name of a configuration service; only the "
                                        "configuration service is listed"));
    if (kept.kind() == pb::SERVICE_KIND_INSTANCE) kept = std::move(service);
  };
  for (const pb::Configuration& c : configurations) {
    const std::vector<const pb::Instance*>& own = instances_by_configuration[c.name()];
    if (c.has_instance_service_spec()) {
      for (const pb::Instance* instance : own) {
        pb::Service service;
        service.set_name(InstanceServiceName(instance->name()));
        service.set_kind(pb::SERVICE_KIND_INSTANCE);
        service.set_configuration_name(c.name());
        service.set_instance_name(instance->name());
        *service.mutable_ports() = c.instance_service_spec().ports();
        for (const ReadableBroker& b : brokers_by_instance[instance->name()]) {
          *service.add_endpoints() =
              Endpoint(b, instance->name(), c.instance_service_spec(), executor_logs_address);
        }
        SortEndpoints(service);
        add(std::move(service));
      }
    }
    if (c.has_configuration_service_spec()) {
      pb::Service service;
      service.set_name(ConfigurationServiceName(c.name()));
      service.set_kind(pb::SERVICE_KIND_CONFIGURATION);
      service.set_configuration_name(c.name());
      *service.mutable_ports() = c.configuration_service_spec().ports();
      for (const pb::Instance* instance : own) {
        for (const ReadableBroker& b : brokers_by_instance[instance->name()]) {
          *service.add_endpoints() =
              Endpoint(b, instance->name(), c.configuration_service_spec(), executor_logs_address);
        }
      }
      SortEndpoints(service);
      add(std::move(service));
    }
  }
  for (auto& [name, service] : by_name) out.services.push_back(std::move(service));
  return out;
}

}  // namespace regatta::devices
