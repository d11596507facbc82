#ifndef REGATTA_SRC_SCHEDULER_LEADER_H_
#define REGATTA_SRC_SCHEDULER_LEADER_H_

#include <cstdint>

#include "absl/time/time.h"

namespace regatta::scheduler {

// Who may schedule. Several server replicas may run a scheduler; only the leader's loop makes
// decisions. Each time a process becomes leader it gets a new term token (a fencing token);
// the loop treats a new token as a new term and runs the catch-up rule again (publish a
// partition marker, load the views up to it) before its first cycle, so it never decides on a
// state older than the previous leader's decisions. Backends: standalone (one replica, always
// leader) now; a lease row in PostgreSQL comes with the scale-out work, where the token is also
// checked in the transaction that appends decisions.
class LeaderElection {
 public:
  virtual ~LeaderElection() = default;
  // The current term's token while this process leads, 0 while it does not.
  virtual int64_t LeaderToken() const = 0;
  // Blocks until this process leads or the deadline passes; returns LeaderToken().
  virtual int64_t AwaitLeadership(absl::Time deadline) = 0;
};

// A single replica: always the leader, one term for the life of the process.
class StandaloneLeaderElection final : public LeaderElection {
 public:
  int64_t LeaderToken() const override { return 1; }
  int64_t AwaitLeadership(absl::Time) override { return 1; }
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_LEADER_H_
