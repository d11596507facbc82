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

// RFC 4180: quoted when it holds a comma, quote or line break.
std::string CsvField(absl::string_view text) {
  if (text.find_first_of(",\"\r\n") == absl::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string OptionalSeconds(absl::Duration d) {
  return d == absl::InfiniteDuration() ? "" : Seconds(d);
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file.good()) return absl::UnavailableError(absl::StrCat(path, ": cannot write"));
  return absl::OkStatus();
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

std::string JobsCsv(const Simulator& sim) {
  std::string csv =
      "job_id,template,queue,job_set,priority_class,state,submit_s,lease_s,end_s,pool,node,"
      "preemption_kind,preempted_by_queue,reason\n";
  const auto& pools = sim.cluster().pools;
  for (const scheduler::sim::SimJob& j : sim.jobs()) {
    const scheduler::sim::JobTemplateSpec& t = sim.workload().jobs[j.template_index];
    const bool preempted = j.state == scheduler::sim::SimJobState::kPreempted;
    const bool placed = j.pool >= 0 && j.node >= 0;
    const std::string priority_class =
        t.priority_class.empty() ? sim.cluster().policy.default_priority_class : t.priority_class;
    absl::StrAppend(
        &csv, CsvField(j.id), ",", CsvField(t.name), ",", CsvField(t.queue), ",",
        CsvField(t.job_set), ",", CsvField(priority_class), ",",
        scheduler::sim::SimJobStateName(j.state), ",",
        j.state == scheduler::sim::SimJobState::kUnsubmitted ? "" : OptionalSeconds(j.submit_time),
        ",", OptionalSeconds(j.lease_time), ",", OptionalSeconds(j.end_time), ",",
        placed ? CsvField(pools[j.pool].name) : "", ",",
        placed ? CsvField(sim.pool_nodes()[j.pool][j.node].id) : "", ",",
        preempted ? scheduler::sim::PreemptionKindName(j.preemption_kind) : "", ",",
        preempted ? CsvField(j.preempted_by_queue) : "", ",", CsvField(j.reason), "\n");
  }
  return csv;
}

std::string CyclesCsv(const Simulator& sim) {
  std::string csv =
      "cycle,time_s,pool,queue,share,fair_share,adjusted_fair_share,running,queued,leased,"
      "preempted\n";
  for (const scheduler::sim::CycleRecord& r : sim.cycle_records()) {
    absl::StrAppend(&csv, r.cycle, ",", Seconds(r.time), ",",
                    CsvField(sim.cluster().pools[r.pool].name), ",",
                    CsvField(sim.workload().queues[r.queue].name), ",",
                    absl::StrFormat("%.6f,%.6f,%.6f", r.share, r.fair_share, r.adjusted_fair_share),
                    ",", r.running, ",", r.queued, ",", r.leased, ",", r.preempted, "\n");
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
  if (!options.scheduling_config_file.empty()) {
    RETURN_IF_ERROR(
        scheduler::sim::LoadArmadaSchedulingConfigFile(options.scheduling_config_file, cluster));
  }
  sim_options.record_cycles = !options.cycles_csv_file.empty();
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
  const std::pair<const std::string*, std::string (*)(const Simulator&)> outputs[] = {
      {&options.csv_file, SamplesCsv},
      {&options.jobs_csv_file, JobsCsv},
      {&options.cycles_csv_file, CyclesCsv}};
  for (const auto& [path, render] : outputs) {
    if (path->empty()) continue;
    RETURN_IF_ERROR(WriteFile(*path, render(*sim)));
    out << "CSV: " << *path << "\n";
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
