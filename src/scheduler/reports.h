#ifndef REGATTA_SRC_SCHEDULER_REPORTS_H_
#define REGATTA_SRC_SCHEDULER_REPORTS_H_

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace regatta::scheduler {

// What the scheduler said about a queued job in one pool in its latest cycle there.
struct JobReason {
  std::string pool;
  std::string code;  // e.g. "NO_ROOM" (see report_service.proto)
  std::string reason;
  absl::Time time;
};

// One queue in one pool after the latest cycle there.
struct QueueShareReport {
  std::string queue;
  std::string pool;
  double weight = 1.0;
  double fair_share = 0;
  double adjusted_fair_share = 0;
  double demand_share = 0;
  double actual_share = 0;
  int leased = 0;
  int preempted = 0;
  std::string stop_reason;
  absl::Time time;
};

// The scheduler's answers to "why is my job not running?" and "how is the pool shared?", kept
// from its latest cycles for the report API. The scheduler loop writes; API threads read.
// Job reasons are bounded (oldest forgotten first) so a flood of unschedulable jobs cannot grow
// memory without limit; a job that is leased or leaves the queue is forgotten.
class SchedulingReports {
 public:
  explicit SchedulingReports(size_t max_jobs = 200000) : max_jobs_(max_jobs) {}

  // ---- The scheduler loop ----
  // Replaces what was known about the pool's queues (a queue absent from `queues` had nothing
  // to do in the pool).
  void SetPoolQueues(absl::string_view pool, std::vector<QueueShareReport> queues);
  void SetJobReason(absl::string_view job_id, JobReason reason);
  // The job left the queue (leased, cancelled, ...): its reasons no longer apply.
  void ForgetJob(absl::string_view job_id);
  void SetReady(bool ready);

  // ---- Readers ----
  std::vector<JobReason> ReasonsFor(absl::string_view job_id) const;
  // Every queue in every pool (queue, then pool order); only `queue` if not empty.
  std::vector<QueueShareReport> Queues(absl::string_view queue = "") const;
  // True once the scheduler has completed a cycle as leader.
  bool ready() const;

 private:
  size_t max_jobs_;
  mutable absl::Mutex mu_;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  // pool -> queue -> share
  std::map<std::string, std::map<std::string, QueueShareReport>> pools_ ABSL_GUARDED_BY(mu_);
  // job id -> pool -> reason
  absl::flat_hash_map<std::string, std::map<std::string, JobReason>> jobs_ ABSL_GUARDED_BY(mu_);
  // Insertion order of jobs_ keys, for the bound (may hold ids already forgotten).
  std::deque<std::string> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_REPORTS_H_
