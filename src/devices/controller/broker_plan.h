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
// not run again (its own retry policy retries it). Brokers no longer desired (the Instance or
// the node went, the Configuration was deleted or lost its broker spec) are cancelled.

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/submit_service.pb.h"

namespace regatta::devices {

// Labels of broker jobs.
inline constexpr char kBrokerConfigurationLabel[] = "regatta.dev/broker-configuration";
inline constexpr char kBrokerInstanceLabel[] = "regatta.dev/broker-instance";
inline constexpr char kBrokerNodeLabel[] = "regatta.dev/broker-node";  // "" for a job broker
inline constexpr char kBrokerAttemptLabel[] = "regatta.dev/broker-attempt";
inline constexpr char kNodeHostnameLabel[] = "kubernetes.io/hostname";

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
};

struct BrokerPlanOptions {
  absl::Duration restart_delay = absl::Seconds(10);
  absl::Duration max_restart_delay = absl::Minutes(5);
  absl::Duration reset_after = absl::Minutes(10);
};

struct BrokerPlan {
  // One request per (queue, job set), items in Instance and node order.
  std::vector<regatta::v1::SubmitJobsRequest> submits;
  // Active brokers no longer desired.
  std::vector<std::string> cancels;
  // The earliest time a back-off ends (plan again then); unset: nothing waits.
  std::optional<absl::Time> next_plan;
};

// The job set of a Configuration's brokers when its template names none.
std::string DefaultBrokerJobSet(absl::string_view configuration);

BrokerPlan PlanBrokers(const std::vector<regatta::v1::Configuration>& configurations,
                       const std::vector<regatta::v1::Instance>& instances,
                       const std::vector<BrokerJob>& brokers, absl::Time now,
                       const BrokerPlanOptions& options = {});

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_CONTROLLER_BROKER_PLAN_H_
