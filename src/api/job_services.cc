#include "src/api/job_services.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/controller/broker_plan.h"

namespace regatta::api {
namespace {

namespace pb = regatta::v1;

// How many serving jobs one read of the job views asks for.
constexpr int kJobReadBatch = 500;

// The containerPorts of the pod, in container then port order (the first of a duplicate wins).
std::vector<const pb::ContainerPort*> ContainerPorts(const pb::TaskSpec& task) {
  std::vector<const pb::ContainerPort*> ports;
  for (const pb::Container& container : task.pod_spec().containers()) {
    for (const pb::ContainerPort& port : container.ports()) {
      const bool seen = std::any_of(ports.begin(), ports.end(), [&](const pb::ContainerPort* p) {
        return p->container_port() == port.container_port() && p->protocol() == port.protocol();
      });
      if (!seen) ports.push_back(&port);
    }
  }
  return ports;
}

// The key of a port in an endpoint's `ports` map: its name, or its number when it has none.
std::string PortKey(const pb::ServicePort& port) {
  return port.name().empty() ? absl::StrCat(port.port()) : port.name();
}

pb::ServicePort ServicePortOf(const pb::ContainerPort& port) {
  pb::ServicePort out;
  out.set_name(port.name());
  out.set_port(port.container_port());
  out.set_target_port(port.container_port());
  out.set_protocol(port.protocol().empty() ? "TCP" : port.protocol());
  return out;
}

// One of Armada's services: each listed port, named after the containerPort it is (validation
// made sure every port is one).
pb::ServicePort ServicePortOf(uint32_t number, const std::vector<const pb::ContainerPort*>& pod) {
  for (const pb::ContainerPort* port : pod) {
    if (port->container_port() == static_cast<int32_t>(number)) return ServicePortOf(*port);
  }
  pb::ServicePort out;
  out.set_port(static_cast<int32_t>(number));
  out.set_target_port(static_cast<int32_t>(number));
  out.set_protocol("TCP");
  return out;
}

std::string ServiceName(const pb::JobDetails& job, int index) {
  const pb::Job& spec = job.job();
  if (index < spec.services_size() && !spec.services(index).name().empty()) {
    return spec.services(index).name();
  }
  std::string name = absl::StrCat(job.summary().job_id(), devices::kServiceNameSuffix);
  if (index > 0) absl::StrAppend(&name, "-", index);
  return name;
}

}  // namespace

bool OffersPorts(const pb::TaskSpec& task,
                 const google::protobuf::RepeatedPtrField<pb::ServiceConfig>& services) {
  return !services.empty() || !ContainerPorts(task).empty();
}

std::vector<pb::Service> JobServicesOf(const pb::JobDetails& job,
                                       const devices::ExecutorAddressLookup& executor_address) {
  const pb::Job& spec = job.job();
  if (store::IsTerminal(job.summary().state()) ||
      spec.labels().contains(devices::kBrokerConfigurationLabel)) {
    return {};
  }
  const std::vector<const pb::ContainerPort*> pod_ports = ContainerPorts(spec.task());
  // The ports of each service: Armada's services, or one of every containerPort.
  std::vector<std::vector<pb::ServicePort>> port_sets;
  if (spec.services().empty()) {
    if (pod_ports.empty()) return {};
    std::vector<pb::ServicePort>& ports = port_sets.emplace_back();
    for (const pb::ContainerPort* port : pod_ports) ports.push_back(ServicePortOf(*port));
  } else {
    for (const pb::ServiceConfig& config : spec.services()) {
      std::vector<pb::ServicePort>& ports = port_sets.emplace_back();
      for (uint32_t number : config.ports()) ports.push_back(ServicePortOf(number, pod_ports));
    }
  }
  const devices::ServiceBroker running = devices::ServiceBrokerFromDetails(job);
  std::vector<pb::Service> services;
  for (int i = 0; i < static_cast<int>(port_sets.size()); ++i) {
    pb::Service& service = services.emplace_back();
    service.set_name(ServiceName(job, i));
    service.set_kind(pb::SERVICE_KIND_JOB);
    service.set_job_id(job.summary().job_id());
    service.set_queue(job.summary().queue());
    for (pb::ServicePort& port : port_sets[i]) *service.add_ports() = std::move(port);
    if (running.run_id.empty()) continue;  // queued, or waiting for a retry
    pb::ServiceEndpoint* endpoint = service.add_endpoints();
    endpoint->set_broker_job_id(job.summary().job_id());
    endpoint->set_run_id(running.run_id);
    endpoint->set_node(running.node);
    endpoint->set_executor_id(running.executor_id);
    endpoint->set_address(
        devices::EndpointAddress(executor_address(running.executor_id), running.node));
    for (const pb::ServicePort& port : service.ports()) {
      (*endpoint->mutable_ports())[PortKey(port)] = port.target_port();
    }
    endpoint->set_ready(running.state == pb::JOB_STATE_RUNNING);
  }
  return services;
}

absl::StatusOr<std::vector<pb::JobDetails>> ActiveJobsLabelled(
    store::Store& store, const std::vector<std::string>& queues, absl::string_view label,
    absl::string_view value) {
  store::JobFilter filter;
  filter.queues = queues;
  filter.labels.emplace_back(std::string(label), std::string(value));
  filter.states = {pb::JOB_STATE_SUBMITTED, pb::JOB_STATE_QUEUED, pb::JOB_STATE_LEASED,
                   pb::JOB_STATE_PENDING, pb::JOB_STATE_RUNNING};
  filter.limit = kJobReadBatch;
  std::vector<pb::JobDetails> jobs;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<pb::JobSummary> page, store.ListJobs(filter));
    std::vector<std::string> ids;
    for (const pb::JobSummary& job : page) ids.push_back(job.job_id());
    ASSIGN_OR_RETURN(std::vector<pb::JobDetails> details, DetailsWithSpecs(store, ids));
    std::move(details.begin(), details.end(), std::back_inserter(jobs));
    if (static_cast<int>(page.size()) < filter.limit) return jobs;
    filter.after_job_id = page.back().job_id();
  }
}

absl::StatusOr<std::vector<pb::Service>> ListJobServices(
    store::Store& store, const std::vector<std::string>& queues,
    const devices::ExecutorAddressLookup& executor_address) {
  ASSIGN_OR_RETURN(std::vector<pb::JobDetails> jobs,
                   ActiveJobsLabelled(store, queues, kServesPortsLabel, "true"));
  std::vector<pb::Service> services;
  for (const pb::JobDetails& job : jobs) {
    for (pb::Service& service : JobServicesOf(job, executor_address)) {
      services.push_back(std::move(service));
    }
  }
  std::sort(services.begin(), services.end(),
            [](const pb::Service& a, const pb::Service& b) { return a.name() < b.name(); });
  return services;
}

absl::StatusOr<std::vector<pb::JobDetails>> DetailsWithSpecs(store::Store& store,
                                                             const std::vector<std::string>& ids) {
  absl::StatusOr<std::vector<pb::JobDetails>> all = store.GetJobDetails(ids, true);
  if (all.ok() || all.status().code() != absl::StatusCode::kDataLoss) return all;
  std::vector<pb::JobDetails> readable;
  for (const std::string& id : ids) {
    absl::StatusOr<std::vector<pb::JobDetails>> one = store.GetJobDetails({id}, true);
    if (!one.ok()) {
      if (one.status().code() != absl::StatusCode::kDataLoss) return one.status();
      LOG_WARN("job left out of the services", "job", id, "error", one.status().message());
      continue;
    }
    for (pb::JobDetails& d : *one) readable.push_back(std::move(d));
  }
  return readable;
}

}  // namespace regatta::api
