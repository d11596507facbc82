#ifndef REGATTA_SRC_DEVICES_CONTROLLER_BROKER_PLAN_H_
#define REGATTA_SRC_DEVICES_CONTROLLER_BROKER_PLAN_H_

// What the device controller does about brokers (Akri's controller), as a pure function.
//
// For every Instance whose Configuration has a broker spec, the desired brokers are:
//   * brokerPodSpec (long-running): one per node that sees a shared Instance, one for a local
//     Instance (on its node); each pinned to its node (node selector kubernetes.io/hostname);
//   * brokerJobSpec (run to completion): one per Instance, on any node that sees it.
// Each broker is a Regatta job made from the spec's job template, asking for one slot of the
// Instance (`regatta.dev/<instance>: 1`), so the scheduler claims the device for it and the
// executor injects the device's properties; it is labelled with its Configuration, Instance,
// node and attempt, and its client id is made of those, so a controller that restarts or runs
// twice submits each broker once.
//
// A long-running broker that ended is restarted (a new attempt) after a back-off that doubles
// from `restart_delay` up to `max_restart_delay` for brokers that ran less than
// `reset_after`, like a pod under a controller in CrashLoopBackOff. A job broker that ended is
// not run again (its own retry policy retries it) while its Instance lives. Brokers no longer
// desired (the Instance or the node went, the Configuration was deleted or lost its broker spec)
// are cancelled.

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/submit_service.pb.h"

namespace regatta::devices {

// Labels of broker jobs.
inline constexpr char kBrokerConfigurationLabel[] = "regatta.dev/broker-configuration";
inline constexpr char kBrokerInstanceLabel[] = "regatta.dev/broker-instance";
inline constexpr char kBrokerNodeLabel[] = "regatta.dev/broker-node";  // "" for a job broker
inline constexpr char kBrokerAttemptLabel[] = "regatta.dev/broker-attempt";
// Every broker has it ("true"): the controller finds all brokers with one label filter.
inline constexpr char kBrokerLabel[] = "regatta.dev/broker";
inline constexpr char kNodeHostnameLabel[] = "kubernetes.io/hostname";
// Annotation "regatta.dev/broker-port-<port name>" = the broker's port (decimal) for that name
// of the Configuration's service specs.
inline constexpr char kBrokerPortAnnotationPrefix[] = "regatta.dev/broker-port-";
// Service names (Akri's): "<instance>-svc" and "<configuration>-svc".
std::string InstanceServiceName(absl::string_view instance);
std::string ConfigurationServiceName(absl::string_view configuration);
// The environment variable a broker finds its port of `port_name` in: REGATTA_PORT_<NAME>.
std::string BrokerPortVariable(absl::string_view port_name);

// A broker's ports (port name -> port) from its job's annotations (any map of strings);
// INVALID_ARGUMENT naming the annotation when one is not a port.
template <typename Annotations>
absl::StatusOr<std::map<std::string, int>> BrokerPortsOf(const Annotations& annotations) {
  std::map<std::string, int> ports;
  for (const auto& [key, value] : annotations) {
    if (!absl::StartsWith(key, kBrokerPortAnnotationPrefix)) continue;
    int port = 0;
    if (!absl::SimpleAtoi(value, &port) || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("annotation ", key, ": '", value, "' is not a port (1..65535)"));
    }
    ports[std::string(absl::string_view(key).substr(sizeof(kBrokerPortAnnotationPrefix) - 1))] =
        port;
  }
  return ports;
}

// A broker job that exists (from the job views, by its labels).
struct BrokerJob {
  std::string job_id;
  std::string configuration;
  std::string instance;
  std::string node;
  int attempt = 0;
  bool active = false;  // not in a terminal state
  // For an ended broker: when it started running (unset: never) and when it ended.
  std::optional<absl::Time> started;
  absl::Time ended;
  // When it was submitted: brokers from before their Instance's create time (an earlier life of
  // the Instance) count for attempt numbers only.
  absl::Time submitted = absl::InfinitePast();
  // Its ports (port name -> port), from its annotations.
  std::map<std::string, int> ports;
};

// One broker the Configurations and Instances ask for: (instance, node), node "" for a job
// broker.
struct BrokerKey {
  std::string instance;
  std::string node;
  friend bool operator<(const BrokerKey& a, const BrokerKey& b) {
    return std::tie(a.instance, a.node) < std::tie(b.instance, b.node);
  }
  friend bool operator==(const BrokerKey& a, const BrokerKey& b) {
    return a.instance == b.instance && a.node == b.node;
  }
};

// Why a Configuration's brokers cannot run, in plain words.
struct BrokerError {
  std::string configuration;
  std::string message;
};

struct BrokerPlanOptions {
  absl::Duration restart_delay = absl::Seconds(10);
  absl::Duration max_restart_delay = absl::Minutes(5);
  absl::Duration reset_after = absl::Minutes(10);
  // Ports brokers get for service ports without a target port (like Kubernetes' NodePorts):
  // unique among active brokers, so brokers of one machine never share one.
  int first_port = 30000;
  int last_port = 32767;
};

struct BrokerPlan {
  // One request per (queue, job set), items in Instance and node order.
  std::vector<regatta::v1::SubmitJobsRequest> submits;
  // Active brokers no longer desired.
  std::vector<std::string> cancels;
  // The earliest time a back-off ends (plan again then); unset: nothing waits.
  std::optional<absl::Time> next_plan;
  // Brokers that could not be planned (no free port), in plain words.
  std::vector<BrokerError> errors;
};

// The brokers the Configurations and Instances ask for, in key order.
std::vector<BrokerKey> DesiredBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                                      const std::vector<regatta::v1::Instance>& instances);

// The job set of a Configuration's brokers when its template names none.
std::string DefaultBrokerJobSet(absl::string_view configuration);

BrokerPlan PlanBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                       const std::vector<regatta::v1::Instance>& instances,
                       const std::vector<BrokerJob>& brokers, absl::Time now,
                       const BrokerPlanOptions& options = {});

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_CONTROLLER_BROKER_PLAN_H_
