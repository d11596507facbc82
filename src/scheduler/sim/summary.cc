#include "src/scheduler/sim/summary.h"

#include <algorithm>
#include <cmath>

namespace regatta::scheduler::sim {

absl::Duration Percentile(const std::vector<absl::Duration>& sorted, double p) {
  if (sorted.empty()) return absl::ZeroDuration();
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

Summary Summarize(const Simulator& sim) {
  Summary summary;
  const auto& queues = sim.workload().queues;
  std::vector<std::vector<absl::Duration>> delays(queues.size());
  for (const auto& q : queues) summary.queues.push_back(QueueSummary{.queue = q.name});
  for (const SimJob& job : sim.jobs()) {
    QueueSummary& q = summary.queues[job.queue_index];
    if (job.state == SimJobState::kUnsubmitted) continue;
    ++q.submitted;
    q.rejected += job.state == SimJobState::kRejected;
    q.succeeded += job.state == SimJobState::kSucceeded;
    q.preempted += job.state == SimJobState::kPreempted;
    q.running += job.state == SimJobState::kRunning;
    q.queued += job.state == SimJobState::kQueued;
    if (job.lease_time != absl::InfiniteDuration()) {
      ++q.leased;
      delays[job.queue_index].push_back(job.lease_time - job.submit_time);
    }
  }
  for (size_t i = 0; i < queues.size(); ++i) {
    std::vector<absl::Duration>& d = delays[i];
    std::sort(d.begin(), d.end());
    DelayStats& stats = summary.queues[i].delay;
    stats.count = static_cast<int64_t>(d.size());
    if (d.empty()) continue;
    absl::Duration sum;
    for (absl::Duration x : d) sum += x;
    stats.mean = sum / static_cast<int64_t>(d.size());
    stats.p50 = Percentile(d, 50);
    stats.p95 = Percentile(d, 95);
    stats.max = d.back();
  }
  for (const PreemptionEvent& e : sim.preemptions()) {
    std::string kind(PreemptionKindName(e.preemption.kind));
    ++summary.preemptions_by_cause[{e.preemption.queue, kind, e.preemption.caused_by_queue}];
    ++summary.preemptions_by_kind[std::move(kind)];
  }
  return summary;
}

}  // namespace regatta::scheduler::sim
