#ifndef REGATTA_SRC_SCHEDULER_EXECUTOR_REGISTRY_H_
#define REGATTA_SRC_SCHEDULER_EXECUTOR_REGISTRY_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/executor_service.pb.h"
#include "src/scheduler/nodedb/node.h"

namespace regatta::scheduler {

// What an executor said in its latest lease request.
struct ExecutorState {
  std::string id;
  std::string pool;
  std::string incarnation;
  std::string logs_address;
  std::vector<Node> nodes;  // `allocated` left empty: the scheduler fills it from its JobDb
  // Run id -> state as the executor holds it.
  absl::flat_hash_map<std::string, regatta::v1::RunState> runs;
  int max_runs_to_lease = 0;
  // Leases published for this executor since that request.
  int leased_since_report = 0;
  absl::Time last_seen;
  // When this incarnation (executor process) first reported.
  absl::Time incarnation_since;
};

// Checks a lease request and turns it into an ExecutorState. INVALID_ARGUMENT naming the field
// (e.g. "nodes[1].allocatable_resources[cpu]: invalid quantity").
absl::StatusOr<ExecutorState> ParseLeaseRequest(const regatta::v1::LeaseRequest& request,
                                                absl::Time now);

// The executors the scheduler knows, shared by the executor API (writes what executors report)
// and the scheduler (reads nodes, expires the silent). Thread-safe. In-memory: after a server
// restart executors re-register with their next request, and runs on executors not heard from
// within the timeout are expired.
class ExecutorRegistry {
 public:
  // Records the executor's latest request. True if it may give the scheduler room it did not
  // have: a new executor or process, other nodes or pool, or capacity where the last request's
  // was used up. An executor asks again after every answer; the rest of those requests change
  // nothing a cycle could act on.
  bool Report(ExecutorState state);
  // Any call from the executor proves it is alive.
  void Touch(absl::string_view executor_id, absl::Time now);
  std::vector<ExecutorState> Snapshot() const;
  std::optional<ExecutorState> Get(absl::string_view executor_id) const;
  void NoteLeased(absl::string_view executor_id, int runs);
  // The executor reported the run (an event or holding it): never send its lease to this
  // incarnation again.
  void MarkDelivered(absl::string_view executor_id, absl::string_view run_id);
  void Remove(absl::string_view executor_id);

  // Lease delivery: true if `run_id` should be sent to this incarnation now (never sent, or
  // sent more than `resend_after` ago and never reported by the executor); records the send.
  bool ClaimSend(absl::string_view executor_id, absl::string_view incarnation,
                 absl::string_view run_id, absl::Time now, absl::Duration resend_after);

 private:
  struct Entry {
    ExecutorState state;
    std::string sent_incarnation;
    absl::flat_hash_map<std::string, absl::Time> sent;
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> executors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_EXECUTOR_REGISTRY_H_
