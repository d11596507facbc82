#ifndef REGATTA_SRC_CLI_SIMULATE_H_
#define REGATTA_SRC_CLI_SIMULATE_H_

// `regatta simulate --cluster C.yaml --workload W.yaml`: runs the scheduling algorithm on a
// simulated cluster and clock (src/scheduler/sim) and prints per-queue share, utilisation and
// queueing delay over time, then a summary; optionally writes the series as CSV.

#include <string>

#include "absl/status/status.h"
#include "src/cli/commands.h"
#include "src/scheduler/sim/simulator.h"

namespace regatta::cli {

struct SimulateOptions {
  std::string cluster_file;
  std::string workload_file;
  std::string until;     // a duration; empty: until nothing more can change
  std::string interval;  // a duration between printed samples; empty: 1m (or the cycle)
  std::string csv_file;  // empty: none
  std::string scheduling_config_file;  // Armada's scheduling config; empty: none
  std::string jobs_csv_file;           // --out-jobs; empty: none
  std::string cycles_csv_file;         // --out-cycles; empty: none
};

// Runs the simulation with `schedule` as the algorithm (SchedulePool in the binary). Fails if
// the algorithm broke an invariant the simulator checks (the anomalies are printed).
absl::Status Simulate(const CommandEnv& env, const SimulateOptions& options,
                      const scheduler::sim::ScheduleFn& schedule);

// The long-format CSV of the samples: time_s,pool,subject,metric,value, where subject is a
// queue (metrics share, fair_share, adjusted_fair_share, running, queued) or a resource
// (metric utilisation).
std::string SamplesCsv(const scheduler::sim::Simulator& sim);

// One row per job: job_id,template,queue,job_set,priority_class,state,submit_s,lease_s,end_s,
// pool,node,preemption_kind,preempted_by_queue,reason (times empty when they did not happen).
std::string JobsCsv(const scheduler::sim::Simulator& sim);

// One row per cycle, pool and queue: cycle,time_s,pool,queue,share,fair_share,
// adjusted_fair_share,running,queued,leased,preempted (needs SimOptions::record_cycles).
std::string CyclesCsv(const scheduler::sim::Simulator& sim);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_SIMULATE_H_
