#ifndef REGATTA_SRC_SCHEDULER_NODEDB_NODE_DB_H_
#define REGATTA_SRC_SCHEDULER_NODEDB_NODE_DB_H_

// The node database of one scheduling round: free room per node and priority level, node types,
// and an ordered index per (node type, level) for best-fit placement in O(log nodes).
//
// Priority levels (Armada's trick): level 0 is the "evicted" level, levels 1..k are the distinct
// priorities of the priority classes in ascending order. A job is bound at one level; the room a
// job of level L sees on a node is allocatable - the requests of jobs bound at levels >= L
// (jobs below L could be preempted to make room). Jobs of non-preemptible classes bind at
// kUnpreemptibleLevel, above every stored level, so they count everywhere and are never victims.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/functional/function_ref.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"

namespace regatta::scheduler {

struct NodeDbConfig {
  // Resources the index orders nodes by, most significant first; at most kMaxIndexedResources
  // are used.
  std::vector<int> indexed_resources = {ResourceNames::kCpu, ResourceNames::kMemory};
  // Label keys that, with the taints, make node types.
  std::vector<std::string> indexed_node_labels;
  // The priorities of the priority classes (any order, duplicates allowed).
  std::vector<int32_t> priorities;
};

// A job shape resolved against the node database once (see nodedb/shape.h for shapes).
struct ShapeMatch {
  // Node types whose taints, indexed labels and largest allocatable match the job, ascending.
  std::vector<int> types;
  // The job has selector or affinity terms on labels that are not indexed: each candidate node
  // needs NodeDb::NodeMatches.
  bool needs_node_check = false;
  // The job's selector/affinity restricted to indexed labels (used for the type match).
  regatta::v1::TaskSpec indexed_task;
  // Schedulable nodes that statically match (full checks), and when there are none, why:
  // "0 of 12 nodes match: node selector gpu=a100 does not match (12)".
  int matching_nodes = 0;
  std::string no_match_reason;
};

class NodeDb {
 public:
  static constexpr int kEvictedLevel = 0;
  static constexpr int kMaxIndexedResources = 4;
  // Binding at this level counts at every stored level.
  static constexpr int kUnpreemptibleLevel = 1 << 20;

  // `nodes` must outlive the NodeDb. Node::allocated is ignored: bind what holds room.
  NodeDb(const std::vector<Node>& nodes, NodeDbConfig config);

  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int index) const { return nodes_[index]; }
  // Stored levels: 0 (evicted) .. num_levels() - 1.
  int num_levels() const { return num_levels_; }
  // The level of a priority (must be one of config.priorities).
  int LevelOfPriority(int32_t priority) const;
  // Dense width of resource vectors (largest allocatable size of any node).
  int width() const { return width_; }
  // The pool's capacity: the sum of the schedulable nodes' allocatable.
  const ResourceList& total() const { return total_; }

  // Dense milli request vector of `width()` entries; false if the job requests a resource no
  // node has (it then fits nowhere).
  bool ToDense(const ResourceList& requests, std::vector<int64_t>* dense) const;

  int64_t FreeAt(int node, int level, int resource) const {
    return free_[Slot(node, level) + resource];
  }
  // True if every positive request fits in the room at `level` (a zero request always fits).
  bool FitsAt(int node, const int64_t* request, int level) const;

  // Binding changes the room of levels <= `level` and keeps the index in step.
  void Bind(int node, const int64_t* request, int level) { Apply(node, request, level, -1, true); }
  void Unbind(int node, const int64_t* request, int level) { Apply(node, request, level, 1, true); }
  // Rebinds a job at another level (evicting it, or placing an evicted job again). Moving up
  // only takes room (the epoch stays); moving down frees room at the levels in between.
  void Move(int node, const int64_t* request, int from_level, int to_level);

  // Node types: equal taints and equal values of the indexed labels.
  int num_node_types() const { return static_cast<int>(type_nodes_.size()); }
  int TypeOf(int node) const { return node_type_[node]; }

  // Matches a shape against every node type (once per type) and counts its matching nodes.
  ShapeMatch MatchShape(const regatta::v1::TaskSpec& task, const ResourceList& requests) const;
  // The per-node part of a match: selector/affinity on labels that are not indexed.
  bool NodeMatches(const ShapeMatch& shape, const regatta::v1::TaskSpec& task, int node) const;

  // Best fit at `level` among open nodes of the shape's types: least free of the first indexed
  // resource that still fits, then of the next, ..., then the lowest node index. `accept` is
  // asked for each candidate that fits (non-indexed labels, avoided nodes, ...). -1: none.
  // `scanned` (if not null) is increased by the index entries looked at.
  int BestFit(const ShapeMatch& shape, const int64_t* request, int level,
              absl::FunctionRef<bool(int)> accept, int64_t* scanned = nullptr);

  // Takes a node out of the index for the rest of the round (its executor is full); binding
  // still updates its room.
  void Close(int node);
  bool closed(int node) const { return closed_[node]; }
  int open_nodes() const { return open_nodes_; }

  // Increases whenever room grows (unbind, rollback): a shape that found no room at epoch e
  // finds none while the epoch is still e.
  int64_t epoch() const { return epoch_; }

  // Undo log for all-or-nothing attempts: binds after Mark() are undone by RollbackTo(mark)
  // or kept by Commit() (which ends logging).
  size_t Mark() {
    logging_ = true;
    return log_.size();
  }
  void RollbackTo(size_t mark);
  void Commit() {
    logging_ = false;
    log_.clear();
  }

 private:
  struct IndexKey {
    std::array<int64_t, kMaxIndexedResources> free;
    int node;
    friend bool operator<(const IndexKey& a, const IndexKey& b) {
      for (int d = 0; d < kMaxIndexedResources; ++d) {
        if (a.free[d] != b.free[d]) return a.free[d] < b.free[d];
      }
      return a.node < b.node;
    }
  };
  using Index = absl::btree_set<IndexKey>;
  struct UndoEntry {
    int node;
    int level;
    int sign;
    std::vector<int64_t> request;
    int from_level;
  };

  size_t Slot(int node, int level) const {
    return (static_cast<size_t>(node) * num_levels_ + level) * width_;
  }
  IndexKey KeyOf(int node, int level) const;
  Index& IndexOf(int type, int level) { return index_[type * num_levels_ + level]; }
  // Builds the index of a level on first use: levels never scanned cost nothing.
  void EnsureIndexed(int level);
  // Adds sign x request to the room of levels [from_level, level].
  void Apply(int node, const int64_t* request, int level, int sign, bool log, int from_level = 0);

  const std::vector<Node>& nodes_;
  NodeDbConfig config_;
  int num_indexed_ = 0;
  std::vector<int32_t> priorities_;  // ascending, distinct; level = position + 1
  int num_levels_ = 1;
  int width_ = 0;
  ResourceList total_;
  std::vector<int64_t> free_;  // node x level x resource

  std::vector<int> node_type_;
  std::vector<std::vector<int>> type_nodes_;  // schedulable nodes per type, ascending
  std::vector<Node> type_view_;  // per type: indexed labels, taints, largest allocatable
  std::vector<Index> index_;     // type x level
  std::vector<bool> level_indexed_;
  std::vector<bool> closed_;
  int open_nodes_ = 0;
  int64_t epoch_ = 0;

  bool logging_ = false;
  std::vector<UndoEntry> log_;
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_NODEDB_NODE_DB_H_
