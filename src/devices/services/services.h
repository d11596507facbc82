#ifndef REGATTA_SRC_DEVICES_SERVICES_SERVICES_H_
#define REGATTA_SRC_DEVICES_SERVICES_SERVICES_H_

// Instance and configuration services (Akri deploys them as Kubernetes Services): a name ->
// endpoints registry that a Configuration's brokers join. Nothing is stored: the services are
// computed from what exists, so a service lives exactly as long as its Instance (or
// Configuration) and the Configuration's service spec.
//
//   "<instance>-svc"       one per Instance of a Configuration with instance_service_spec: the
//                          active brokers of that Instance.
//   "<configuration>-svc"  one per Configuration with configuration_service_spec: the active
//                          brokers of every Instance of the Configuration.
//
// A broker is a job labelled by the controller (src/devices/controller/broker_plan.h) with its
// Configuration and Instance; its port for each ServicePort name is the annotation
// "regatta.dev/broker-port-<name>". Only non-terminal broker jobs are endpoints, and only those
// of an Instance that exists; an endpoint is ready when its job is RUNNING.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/job_service.pb.h"

namespace regatta::devices {

// A broker job as the services read it (from the job views).
struct ServiceBroker {
  std::string job_id;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
  // The job's latest run if it is not terminal; empty while the job waits for one.
  std::string run_id;
  std::string node;
  std::string executor_id;
};

// From a job's details with its spec (GetJobDetails with expand_spec): labels, annotations,
// state and the latest run.
ServiceBroker ServiceBrokerFromDetails(const regatta::v1::JobDetails& details);

// What InstanceServiceName and ConfigurationServiceName (broker_plan.h) append to the
// Instance's or Configuration's name.
inline constexpr absl::string_view kServiceNameSuffix = "-svc";

// The host other machines reach a node at: the host part of its executor's logs address
// ("host:port", "[v6]:port"), or `node` when that is empty or a wildcard ("0.0.0.0", "::"):
// the local executor names its node after the machine's host name.
std::string EndpointAddress(absl::string_view executor_logs_address, absl::string_view node);

struct ComputedServices {
  // In name order.
  std::vector<regatta::v1::Service> services;
  // Broker jobs left out because they cannot be read (a missing label, a bad port
  // annotation) and names that collide, in plain words (the caller logs them).
  std::vector<std::string> warnings;
};

// Executor id -> its logs address ("" when unknown).
using ExecutorAddressLookup = std::function<std::string(absl::string_view executor_id)>;

// The services of `configurations`, from their `instances` and the `brokers` that exist (any
// state; terminal ones are left out). Brokers and Instances of other Configurations are
// ignored, so callers may pass a subset.
ComputedServices ComputeServices(const std::vector<regatta::v1::Configuration>& configurations,
                                 const std::vector<regatta::v1::Instance>& instances,
                                 const std::vector<ServiceBroker>& brokers,
                                 const ExecutorAddressLookup& executor_logs_address);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_SERVICES_SERVICES_H_
