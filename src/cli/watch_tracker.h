#ifndef REGATTA_SRC_CLI_WATCH_TRACKER_H_
#define REGATTA_SRC_CLI_WATCH_TRACKER_H_

// Decides when `regatta watch` is done: every job it has seen reached a terminal event.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "regatta/v1/event_service.pb.h"

namespace regatta::cli {

class WatchTracker {
 public:
  // Exit codes of `regatta watch`.
  static constexpr int kAllSucceeded = 0;
  static constexpr int kSomeUnsuccessful = 1;
  static constexpr int kTimedOut = 2;

  // Every job the stream mentions is tracked, not only those whose SUBMITTED event was seen, so
  // a watch resumed with --from still ends. Events after a terminal one change nothing.
  void Observe(const regatta::v1::JobSetEvent& event);

  // True once at least one job was seen and every seen job is terminal.
  bool Finished() const { return !jobs_.empty() && open_ == 0; }
  // kAllSucceeded if no job ended failed/cancelled/preempted/rejected, else kSomeUnsuccessful.
  int ExitCode() const { return unsuccessful_ == 0 ? kAllSucceeded : kSomeUnsuccessful; }

  int seen() const { return static_cast<int>(jobs_.size()); }
  int open() const { return open_; }
  int succeeded() const { return succeeded_; }
  int unsuccessful() const { return unsuccessful_; }
  // "3 jobs: 2 succeeded, 1 unsuccessful, 0 unfinished".
  std::string Summary() const;

  static bool IsTerminal(regatta::v1::JobEventType type);

 private:
  enum class Outcome { kOpen, kSucceeded, kUnsuccessful };
  absl::flat_hash_map<std::string, Outcome> jobs_;
  int open_ = 0;
  int succeeded_ = 0;
  int unsuccessful_ = 0;
};

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_WATCH_TRACKER_H_
