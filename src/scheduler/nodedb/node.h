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

  bool operator==(const Taint&) const = default;
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

// The rule a static match failed on, in the order they are checked.
enum class MatchRule {
  kNone,           // matches
  kUnschedulable,  // the node is cordoned/unschedulable
  kNodeSelector,
  kNodeAffinity,
  kTaint,
  kResources,  // a request exceeds the node's allocatable
};

// Whether a job may ever run on a node, ignoring free resources: the node is schedulable, the
// job's node selector and required node affinity match the labels, every NoSchedule/NoExecute
// taint is tolerated, and the job's requests fit in the node's allocatable. `reason` says why
// not, naming the first failing rule (e.g. "node selector gpu=a100 does not match",
// "taint dedicated=ml:NoSchedule is not tolerated", "needs 4 cpu, node allocatable is 2").
//
// Rules (Kubernetes semantics):
// * Node selector: every key=value must equal a label. Of several failing keys the reason
//   names the smallest (deterministic whatever the map order).
// * Required node affinity: no terms = no constraint; a node matches if ANY term matches; a
//   term matches if ALL its match_expressions hold, and an empty term matches no node (as in
//   Kubernetes). In / NotIn / Exists / DoesNotExist / Gt / Lt; NotIn and DoesNotExist hold
//   when the label is absent; Gt/Lt need exactly one value, and it and the label must parse as
//   int64, otherwise they do not hold; an unknown operator never holds.
// * Taints: every NoSchedule or NoExecute taint must be tolerated (PreferNoSchedule and
//   unknown effects never block). A toleration with an effect only tolerates that effect (empty:
//   all effects); operator "Equal" (or empty) needs the same key and value; "Exists" needs the
//   same key, or tolerates every taint when its key is empty.
// * Resources: every request <= the node's allocatable of that resource.
// Label and taint reasons do not depend on the node (so equal reasons can be counted across
// nodes); resource reasons name the node's allocatable.
struct StaticMatch {
  bool matches = false;
  std::string reason;
  MatchRule rule = MatchRule::kNone;
};
StaticMatch MatchNodeStatically(const regatta::v1::TaskSpec& task, const ResourceList& requests,
                                const Node& node);

// True if the requests fit in what is free on the node now (allocatable - allocated). A zero
// request always fits, even where the node is overcommitted.
bool FitsNow(const ResourceList& requests, const Node& node);

// "0 of 12 nodes match: node selector gpu=a100 does not match (10); node is unschedulable (2)":
// the most frequent failure reasons (reason -> node count), most frequent first.
std::string NoMatchSummary(int total_nodes, const absl::flat_hash_map<std::string, int>& counts);

// The pieces of MatchNodeStatically, for the node index and for tests.

// True if `toleration` tolerates `taint` (the toleration rules above, effect included).
bool Tolerates(const regatta::v1::Toleration& toleration, const Taint& taint);
// True if the affinity requirement holds for the labels (the operator rules above).
bool RequirementHolds(const regatta::v1::NodeSelectorRequirement& requirement,
                      const absl::flat_hash_map<std::string, std::string>& labels);
// True if the taint keeps jobs that do not tolerate it off the node (NoSchedule, NoExecute).
bool TaintBlocks(const Taint& taint);
// "dedicated=ml:NoSchedule", or "dedicated:NoSchedule" when the value is empty.
std::string TaintToString(const Taint& taint);
// "zone In (a, b)", "gpu Exists", "cores Gt 4".
std::string RequirementToString(const regatta::v1::NodeSelectorRequirement& requirement);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_NODEDB_NODE_H_
