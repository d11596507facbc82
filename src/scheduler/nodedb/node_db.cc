#include "src/scheduler/nodedb/node_db.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace regatta::scheduler {
namespace {

using ::regatta::v1::NodeSelectorRequirement;
using ::regatta::v1::NodeSelectorTerm;
using ::regatta::v1::TaskSpec;

constexpr int64_t kMinFree = std::numeric_limits<int64_t>::min();

// What makes a node type: its taints (in order) and its values of the indexed labels.
std::string TypeKey(const Node& node, const std::vector<std::string>& indexed_labels) {
  std::string key;
  for (const Taint& taint : node.taints) {
    absl::StrAppend(&key, taint.key.size(), ":", taint.key, taint.value.size(), ":", taint.value,
                    taint.effect.size(), ":", taint.effect);
  }
  key.push_back('|');
  for (const std::string& label : indexed_labels) {
    auto it = node.labels.find(label);
    if (it == node.labels.end()) {
      key.push_back('-');
    } else {
      absl::StrAppend(&key, "+", it->second.size(), ":", it->second);
    }
  }
  return key;
}

}  // namespace

NodeDb::NodeDb(const std::vector<Node>& nodes, NodeDbConfig config)
    : nodes_(nodes), config_(std::move(config)) {
  num_indexed_ = std::min<int>(config_.indexed_resources.size(), kMaxIndexedResources);
  priorities_ = config_.priorities;
  std::sort(priorities_.begin(), priorities_.end());
  priorities_.erase(std::unique(priorities_.begin(), priorities_.end()), priorities_.end());
  num_levels_ = static_cast<int>(priorities_.size()) + 1;
  for (const Node& node : nodes_) width_ = std::max(width_, node.allocatable.size());
  const int n = num_nodes();
  free_.assign(static_cast<size_t>(n) * num_levels_ * width_, 0);
  node_type_.assign(n, -1);
  closed_.assign(n, false);
  absl::flat_hash_map<std::string, int> types;
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    for (int level = 0; level < num_levels_; ++level) {
      for (int r = 0; r < width_; ++r) free_[Slot(i, level) + r] = node.allocatable.Get(r).milli();
    }
    if (node.unschedulable) continue;
    total_.Add(node.allocatable);
    ++open_nodes_;
    auto [it, inserted] =
        types.try_emplace(TypeKey(node, config_.indexed_node_labels), type_nodes_.size());
    if (inserted) {
      type_nodes_.emplace_back();
      Node& view = type_view_.emplace_back();
      view.id = node.id;
      view.taints = node.taints;
      for (const std::string& label : config_.indexed_node_labels) {
        if (auto l = node.labels.find(label); l != node.labels.end()) view.labels.insert(*l);
      }
    }
    node_type_[i] = it->second;
    type_nodes_[it->second].push_back(i);
    Node& view = type_view_[it->second];
    for (int r = 0; r < node.allocatable.size(); ++r) {
      if (node.allocatable.Get(r) > view.allocatable.Get(r)) {
        view.allocatable.Set(r, node.allocatable.Get(r));
      }
    }
  }
  index_.resize(type_nodes_.size() * num_levels_);
  level_indexed_.assign(num_levels_, false);
}

int NodeDb::LevelOfPriority(int32_t priority) const {
  return static_cast<int>(std::lower_bound(priorities_.begin(), priorities_.end(), priority) -
                          priorities_.begin()) +
         1;
}

bool NodeDb::ToDense(const ResourceList& requests, std::vector<int64_t>* dense) const {
  dense->assign(width_, 0);
  bool fits = true;
  for (int r = 0; r < requests.size(); ++r) {
    const int64_t milli = requests.Get(r).milli();
    if (r < width_) {
      (*dense)[r] = milli;
    } else if (milli > 0) {
      fits = false;
    }
  }
  return fits;
}

bool NodeDb::FitsAt(int node, const int64_t* request, int level) const {
  const int64_t* free = &free_[Slot(node, level)];
  for (int r = 0; r < width_; ++r) {
    if (request[r] > 0 && request[r] > free[r]) return false;
  }
  return true;
}

NodeDb::IndexKey NodeDb::KeyOf(int node, int level) const {
  IndexKey key{};
  key.node = node;
  const int64_t* free = &free_[Slot(node, level)];
  for (int d = 0; d < num_indexed_; ++d) {
    const int r = config_.indexed_resources[d];
    key.free[d] = r < width_ ? free[r] : 0;
  }
  return key;
}

void NodeDb::EnsureIndexed(int level) {
  if (level_indexed_[level]) return;
  level_indexed_[level] = true;
  for (int t = 0; t < num_node_types(); ++t) {
    Index& index = IndexOf(t, level);
    for (int node : type_nodes_[t]) {
      if (!closed_[node]) index.insert(KeyOf(node, level));
    }
  }
}

void NodeDb::Apply(int node, const int64_t* request, int level, int sign, bool log,
                   int from_level) {
  const int top = std::min(level, num_levels_ - 1);
  const int type = node_type_[node];
  const bool indexed = type >= 0 && !closed_[node];
  for (int l = from_level; l <= top; ++l) {
    const bool in_index = indexed && level_indexed_[l];
    if (in_index) IndexOf(type, l).erase(KeyOf(node, l));
    int64_t* free = &free_[Slot(node, l)];
    for (int r = 0; r < width_; ++r) free[r] += sign * request[r];
    if (in_index) IndexOf(type, l).insert(KeyOf(node, l));
  }
  if (sign > 0) ++epoch_;
  if (log && logging_) {
    log_.push_back(UndoEntry{.node = node,
                             .level = level,
                             .sign = sign,
                             .request = std::vector<int64_t>(request, request + width_),
                             .from_level = from_level});
  }
}

void NodeDb::Move(int node, const int64_t* request, int from_level, int to_level) {
  // Only the levels between the two change: (from, to] lose the room when moving up,
  // (to, from] get it back when moving down.
  if (to_level > from_level) {
    Apply(node, request, to_level, -1, true, from_level + 1);
  } else if (to_level < from_level) {
    Apply(node, request, from_level, 1, true, to_level + 1);
  }
}

void NodeDb::RollbackTo(size_t mark) {
  while (log_.size() > mark) {
    const UndoEntry& entry = log_.back();
    Apply(entry.node, entry.request.data(), entry.level, -entry.sign, /*log=*/false,
          entry.from_level);
    log_.pop_back();
  }
  ++epoch_;
}

void NodeDb::Close(int node) {
  if (closed_[node]) return;
  const int type = node_type_[node];
  if (type >= 0) {
    for (int l = 0; l < num_levels_; ++l) {
      if (level_indexed_[l]) IndexOf(type, l).erase(KeyOf(node, l));
    }
    --open_nodes_;
  }
  closed_[node] = true;
}

ShapeMatch NodeDb::MatchShape(const TaskSpec& task, const ResourceList& requests) const {
  ShapeMatch shape;
  auto indexed = [&](const std::string& key) {
    return std::find(config_.indexed_node_labels.begin(), config_.indexed_node_labels.end(), key) !=
           config_.indexed_node_labels.end();
  };
  // The type match sees only what is equal across a type; the rest is checked node by node.
  shape.indexed_task.mutable_tolerations()->CopyFrom(task.tolerations());
  for (const auto& [key, value] : task.node_selector()) {
    if (indexed(key)) {
      (*shape.indexed_task.mutable_node_selector())[key] = value;
    } else {
      shape.needs_node_check = true;
    }
  }
  bool affinity_indexed = true;
  for (const NodeSelectorTerm& term : task.node_affinity().required_terms()) {
    for (const NodeSelectorRequirement& r : term.match_expressions()) {
      affinity_indexed = affinity_indexed && indexed(r.key());
    }
  }
  if (affinity_indexed) {
    shape.indexed_task.mutable_node_affinity()->CopyFrom(task.node_affinity());
  } else {
    shape.needs_node_check = true;
  }

  absl::flat_hash_map<std::string, int> reasons;
  for (int t = 0; t < num_node_types(); ++t) {
    StaticMatch match = MatchNodeStatically(shape.indexed_task, requests, type_view_[t]);
    if (!match.matches && match.rule != MatchRule::kResources) {
      reasons[match.reason] += static_cast<int>(type_nodes_[t].size());
      continue;
    }
    // The largest allocatable may fit where a node's does not: check each node.
    bool any = false;
    for (int node : type_nodes_[t]) {
      const Node& n = nodes_[node];
      if (!shape.needs_node_check && requests.FitsIn(n.allocatable)) {
        any = true;
        ++shape.matching_nodes;
        continue;
      }
      StaticMatch node_match = MatchNodeStatically(task, requests, n);
      if (node_match.matches) {
        any = true;
        ++shape.matching_nodes;
      } else {
        ++reasons[node_match.reason];
      }
    }
    if (any) shape.types.push_back(t);
  }
  if (shape.matching_nodes == 0) {
    for (const Node& node : nodes_) {
      if (node.unschedulable) ++reasons["node is unschedulable"];
    }
    shape.no_match_reason = NoMatchSummary(num_nodes(), reasons);
  }
  return shape;
}

bool NodeDb::NodeMatches(const ShapeMatch& shape, const TaskSpec& task, int node) const {
  if (!shape.needs_node_check) return true;
  // Requests are checked by the fit test; only the label rules matter here.
  return MatchNodeStatically(task, ResourceList(), nodes_[node]).matches;
}

int NodeDb::BestFit(const ShapeMatch& shape, const int64_t* request, int level,
                    absl::FunctionRef<bool(int)> accept, int64_t* scanned) {
  EnsureIndexed(level);
  std::array<int64_t, kMaxIndexedResources> bound;
  bound.fill(kMinFree);
  for (int d = 0; d < num_indexed_; ++d) {
    const int r = config_.indexed_resources[d];
    const int64_t need = r < width_ ? request[r] : 0;
    if (need > 0) bound[d] = need;  // a zero request fits even an overcommitted node
  }
  int best = -1;
  IndexKey best_key{};
  int64_t looked = 0;
  for (int type : shape.types) {
    const Index& index = IndexOf(type, level);
    IndexKey seek{};
    seek.free.fill(kMinFree);
    seek.free[0] = bound[0];
    seek.node = std::numeric_limits<int>::min();
    auto it = index.lower_bound(seek);
    while (it != index.end()) {
      if (best >= 0 && !(*it < best_key)) break;  // nothing further in this type fits better
      ++looked;
      int failed = -1;
      for (int d = 1; d < num_indexed_; ++d) {
        if (it->free[d] < bound[d]) {
          failed = d;
          break;
        }
      }
      if (failed > 0) {
        // Skip the entries with this prefix whose dimension `failed` is too small.
        seek = *it;
        seek.free[failed] = bound[failed];
        for (int d = failed + 1; d < kMaxIndexedResources; ++d) seek.free[d] = kMinFree;
        seek.node = std::numeric_limits<int>::min();
        it = index.lower_bound(seek);
        continue;
      }
      const int node = it->node;
      if (FitsAt(node, request, level) && accept(node)) {
        best = node;
        best_key = *it;
        break;
      }
      ++it;
    }
  }
  if (scanned != nullptr) *scanned += looked;
  return best;
}

}  // namespace regatta::scheduler
