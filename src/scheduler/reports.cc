#include "src/scheduler/reports.h"

#include <algorithm>

namespace regatta::scheduler {

void SchedulingReports::SetPoolQueues(absl::string_view pool,
                                      std::vector<QueueShareReport> queues) {
  std::map<std::string, QueueShareReport> by_queue;
  for (QueueShareReport& q : queues) {
    std::string name = q.queue;
    by_queue[name] = std::move(q);
  }
  absl::MutexLock lock(&mu_);
  pools_[std::string(pool)] = std::move(by_queue);
}

void SchedulingReports::SetJobReason(absl::string_view job_id, JobReason reason) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = jobs_.try_emplace(job_id);
  if (inserted) order_.emplace_back(job_id);
  std::string pool = reason.pool;
  it->second[pool] = std::move(reason);
  // Bounded: forget the oldest entries. order_ also holds ids forgotten since; they are dropped
  // in one pass when they outnumber the live ones, so the bound costs O(1) amortized.
  while (jobs_.size() > max_jobs_) {
    jobs_.erase(order_.front());
    order_.pop_front();
  }
  if (order_.size() > 2 * max_jobs_ + 16) {
    std::erase_if(order_, [&](const std::string& id) { return !jobs_.contains(id); });
  }
}

void SchedulingReports::ForgetJob(absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  jobs_.erase(job_id);
}

void SchedulingReports::SetReady(bool ready) {
  absl::MutexLock lock(&mu_);
  ready_ = ready;
}

std::vector<JobReason> SchedulingReports::ReasonsFor(absl::string_view job_id) const {
  absl::MutexLock lock(&mu_);
  std::vector<JobReason> out;
  if (auto it = jobs_.find(job_id); it != jobs_.end()) {
    for (const auto& [pool, reason] : it->second) out.push_back(reason);
  }
  return out;
}

std::vector<QueueShareReport> SchedulingReports::Queues(absl::string_view queue) const {
  absl::MutexLock lock(&mu_);
  std::vector<QueueShareReport> out;
  for (const auto& [pool, queues] : pools_) {
    for (const auto& [name, share] : queues) {
      if (queue.empty() || name == queue) out.push_back(share);
    }
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const QueueShareReport& a, const QueueShareReport& b) { return a.queue < b.queue; });
  return out;
}

bool SchedulingReports::ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

}  // namespace regatta::scheduler
