#ifndef REGATTA_SRC_SCHEDULER_NODEDB_NODE_H_
#define REGATTA_SRC_SCHEDULER_NODEDB_NODE_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"

namespace regatta::scheduler {

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // "NoSchedule", "PreferNoSchedule", "NoExecute"
};

// A node as the scheduler sees it: built from the executor's latest report plus the runs the
// scheduler has placed there.
struct Node {
  std::string id;
  std::string executor_id;
  std::string pool;
  absl::flat_hash_map<std::string, std::string> labels;
  std::vector<Taint> taints;
  // What Regatta may use on the node.
  ResourceList allocatable;
  // What the node's active runs (leased, pending, running) hold.
  ResourceList allocated;
  bool unschedulable = false;
};

// Whether a job may ever run on a node, ignoring free resources: the node is schedulable, the
// job's node selector and required node affinity match the labels, every NoSchedule/NoExecute
// taint is tolerated, and the job's requests fit in the node's allocatable. `reason` says why
// not, naming the first failing rule (e.g. "node selector gpu=a100 does not match",
// "taint dedicated=ml:NoSchedule is not tolerated", "needs 4 cpu, node has 2").
struct StaticMatch {
  bool matches = false;
  std::string reason;
};
StaticMatch MatchNodeStatically(const regatta::v1::TaskSpec& task, const ResourceList& requests,
                                const Node& node);

// True if the requests fit in what is free on the node now (allocatable - allocated).
bool FitsNow(const ResourceList& requests, const Node& node);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_NODEDB_NODE_H_
