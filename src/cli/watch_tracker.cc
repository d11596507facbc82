#include "src/cli/watch_tracker.h"

#include "absl/strings/str_cat.h"

namespace regatta::cli {

using regatta::v1::JobEventType;

bool WatchTracker::IsTerminal(JobEventType type) {
  switch (type) {
    case regatta::v1::JOB_EVENT_TYPE_SUCCEEDED:
    case regatta::v1::JOB_EVENT_TYPE_FAILED:
    case regatta::v1::JOB_EVENT_TYPE_CANCELLED:
    case regatta::v1::JOB_EVENT_TYPE_PREEMPTED:
    case regatta::v1::JOB_EVENT_TYPE_REJECTED:
      return true;
    default:
      return false;
  }
}

void WatchTracker::Observe(const regatta::v1::JobSetEvent& event) {
  if (event.job_id().empty()) return;  // job-set level events, e.g. CANCEL_JOB_SET
  auto [it, inserted] = jobs_.try_emplace(event.job_id(), Outcome::kOpen);
  if (inserted) ++open_;
  if (it->second != Outcome::kOpen || !IsTerminal(event.type())) return;
  --open_;
  if (event.type() == regatta::v1::JOB_EVENT_TYPE_SUCCEEDED) {
    it->second = Outcome::kSucceeded;
    ++succeeded_;
  } else {
    it->second = Outcome::kUnsuccessful;
    ++unsuccessful_;
  }
}

std::string WatchTracker::Summary() const {
  return absl::StrCat(seen(), seen() == 1 ? " job: " : " jobs: ", succeeded_, " succeeded, ",
                      unsuccessful_, " unsuccessful, ", open_, " unfinished");
}

}  // namespace regatta::cli
