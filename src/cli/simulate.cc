#include "src/cli/simulate.h"

#include <algorithm>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/cli/flags.h"
#include "src/cli/table.h"
#include "src/common/status_macros.h"
#include "src/scheduler/sim/spec.h"
#include "src/scheduler/sim/summary.h"

namespace regatta::cli {
namespace {

using scheduler::sim::Sample;
using scheduler::sim::Simulator;

constexpr absl::Duration kDefaultInterval = absl::Minutes(1);
constexpr int kUnschedulableShown = 10;

std::string Share(double share) { return absl::StrFormat("%.3f", share); }

// "0s", "1m30s", "250ms" (absl prints zero as "0").
std::string Time(absl::Duration d) {
  return d == absl::ZeroDuration() ? "0s" : absl::FormatDuration(d);
}

std::string Seconds(absl::Duration d) { return absl::StrFormat("%.3f", absl::ToDoubleSeconds(d)); }

std::string QueueTable(const Simulator& sim) {
  Table table({"TIME", "POOL", "QUEUE", "SHARE", "FAIR", "ADJUSTED", "RUNNING", "QUEUED"});
  for (const Sample& s : sim.samples()) {
    for (const auto& q : s.queues) {
      if (q.fair_share == 0 && q.running == 0) continue;  // not active in this pool
      table.AddRow({Time(s.time), sim.cluster().pools[q.pool].name,
                    sim.workload().queues[q.queue].name, Share(q.share), Share(q.fair_share),
                    Share(q.adjusted_fair_share), absl::StrCat(q.running), absl::StrCat(q.queued)});
    }
  }
  return table.Render();
}

std::string UtilisationTable(const Simulator& sim) {
  Table table({"TIME", "POOL", "UTILISATION"});
  for (const Sample& s : sim.samples()) {
    for (const auto& p : s.pools) {
      std::vector<std::string> parts;
      for (const auto& [resource, fraction] : p.utilisation) {
        parts.push_back(absl::StrCat(ResourceNames::Global().Name(resource), " ",
                                     absl::StrFormat("%.3f", fraction)));
      }
      table.AddRow({Time(s.time), sim.cluster().pools[p.pool].name, absl::StrJoin(parts, ", ")});
    }
  }
  return table.Render();
}

std::string SummaryText(const Simulator& sim) {
  const scheduler::sim::Summary summary = scheduler::sim::Summarize(sim);
  Table queues({"QUEUE", "SUBMITTED", "REJECTED", "LEASED", "SUCCEEDED", "PREEMPTED", "RUNNING",
                "QUEUED", "DELAY MEAN", "P50", "P95", "MAX"});
  for (const auto& q : summary.queues) {
    queues.AddRow({q.queue, absl::StrCat(q.submitted), absl::StrCat(q.rejected),
                   absl::StrCat(q.leased), absl::StrCat(q.succeeded), absl::StrCat(q.preempted),
                   absl::StrCat(q.running), absl::StrCat(q.queued),
                   Time(absl::Trunc(q.delay.mean, absl::Milliseconds(1))), Time(q.delay.p50),
                   Time(q.delay.p95), Time(q.delay.max)});
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, count] : summary.preemptions_by_kind) {
    kinds.push_back(absl::StrCat(kind, " ", count));
  }
  std::string text = absl::StrCat(
      "Summary at ", Time(sim.now()), " (", sim.cycles(), " cycles)\n", queues.Render(),
      "Preemptions: ", kinds.empty() ? "none" : absl::StrJoin(kinds, ", "), "\n");
  if (!summary.preemptions_by_cause.empty()) {
    Table causes({"QUEUE", "KIND", "FOR QUEUE", "PREEMPTED"});
    for (const auto& [key, count] : summary.preemptions_by_cause) {
      const auto& [queue, kind, cause] = key;
      causes.AddRow({queue, kind, cause, absl::StrCat(count)});
    }
    absl::StrAppend(&text, causes.Render());
  }
  std::vector<scheduler::sim::UnschedulableCount> reasons = sim.unschedulable();
  if (!reasons.empty()) {
    std::stable_sort(reasons.begin(), reasons.end(),
                     [](const auto& a, const auto& b) { return a.count > b.count; });
    Table table({"COUNT", "POOL", "QUEUE", "CODE", "LATEST REASON"});
    for (size_t i = 0; i < reasons.size() && i < kUnschedulableShown; ++i) {
      const auto& r = reasons[i];
      table.AddRow({absl::StrCat(r.count), sim.cluster().pools[r.pool].name, r.queue,
                    std::string(scheduler::sim::UnschedulableCodeName(r.code)), r.example_reason});
    }
    absl::StrAppend(&text, "Unschedulable (jobs x rounds, most frequent first):\n", table.Render());
  }
  return text;
}

absl::StatusOr<absl::Duration> DurationFlag(absl::string_view flag, const std::string& text) {
  auto d = ParseDurationFlag(text);
  if (!d.ok()) return UsageError(absl::StrCat(flag, " ", d.status().message()));
  return d;
}

}  // namespace

std::string SamplesCsv(const Simulator& sim) {
  std::string csv = "time_s,pool,subject,metric,value\n";
  for (const Sample& s : sim.samples()) {
    const std::string time = Seconds(s.time);
    for (const auto& q : s.queues) {
      const std::string prefix = absl::StrCat(time, ",", sim.cluster().pools[q.pool].name, ",",
                                              sim.workload().queues[q.queue].name, ",");
      absl::StrAppend(&csv, prefix, "share,", absl::StrFormat("%.6f", q.share), "\n", prefix,
                      "fair_share,", absl::StrFormat("%.6f", q.fair_share), "\n", prefix,
                      "adjusted_fair_share,", absl::StrFormat("%.6f", q.adjusted_fair_share), "\n",
                      prefix, "running,", q.running, "\n", prefix, "queued,", q.queued, "\n");
    }
    for (const auto& p : s.pools) {
      for (const auto& [resource, fraction] : p.utilisation) {
        absl::StrAppend(&csv, time, ",", sim.cluster().pools[p.pool].name, ",",
                        ResourceNames::Global().Name(resource), ",utilisation,",
                        absl::StrFormat("%.6f", fraction), "\n");
      }
    }
  }
  return csv;
}

absl::Status Simulate(const CommandEnv& env, const SimulateOptions& options,
                      const scheduler::sim::ScheduleFn& schedule) {
  if (options.cluster_file.empty() || options.workload_file.empty()) {
    return UsageError("--cluster and --workload are required");
  }
  scheduler::sim::SimOptions sim_options;
  if (!options.until.empty()) {
    ASSIGN_OR_RETURN(sim_options.until, DurationFlag("--until", options.until));
  }
  if (!options.interval.empty()) {
    ASSIGN_OR_RETURN(sim_options.sample_interval, DurationFlag("--interval", options.interval));
  }
  ASSIGN_OR_RETURN(scheduler::sim::ClusterSpec cluster,
                   scheduler::sim::LoadClusterFile(options.cluster_file));
  ASSIGN_OR_RETURN(scheduler::sim::WorkloadSpec workload,
                   scheduler::sim::LoadWorkloadFile(options.workload_file));
  if (sim_options.sample_interval == absl::ZeroDuration()) {
    sim_options.sample_interval = std::max(cluster.cycle_period, kDefaultInterval);
  }
  ASSIGN_OR_RETURN(
      std::unique_ptr<Simulator> sim,
      Simulator::Create(std::move(cluster), std::move(workload), schedule, options.workload_file));
  sim->Run(sim_options);

  std::ostream& out = *env.out;
  out << "Queues (share = dominant share of the pool held; fair and adjusted as the algorithm "
         "computed them)\n"
      << QueueTable(*sim) << "\nUtilisation\n"
      << UtilisationTable(*sim) << "\n"
      << SummaryText(*sim);
  if (!options.csv_file.empty()) {
    std::ofstream csv(options.csv_file, std::ios::binary | std::ios::trunc);
    csv << SamplesCsv(*sim);
    if (!csv.good()) {
      return absl::UnavailableError(absl::StrCat(options.csv_file, ": cannot write"));
    }
    out << "CSV: " << options.csv_file << "\n";
  }
  if (!sim->anomalies().empty()) {
    out << "Anomalies (decisions that broke an invariant):\n";
    for (const std::string& a : sim->anomalies()) out << "  " << a << "\n";
    return absl::InternalError(
        absl::StrCat("the algorithm broke ", sim->anomalies().size(), " invariant(s); see above"));
  }
  return absl::OkStatus();
}

}  // namespace regatta::cli
