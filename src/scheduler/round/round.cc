#include "src/scheduler/round/round.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "src/scheduler/fairness/cost.h"
#include "src/scheduler/fairness/queue_heap.h"
#include "src/scheduler/nodedb/shape.h"

namespace regatta::scheduler {
namespace {

using ::regatta::v1::TaskSpec;

// The clock is read once per this many jobs looked at (only when there is a time budget).
constexpr int kClockCheckInterval = 32;
// Cap on node indices held by the per-shape static-match cache (two lists per shape): 16 MiB.
// Shapes seen after the cap is reached are matched per job instead.
constexpr size_t kMaxCachedNodeRefs = size_t{1} << 21;

const TaskSpec& TaskOf(const RoundJob& job) {
  return job.task != nullptr ? *job.task : TaskSpec::default_instance();
}

// What the round knows about one job shape (requests + node selector + affinity +
// tolerations, see nodedb/shape.h). Free space only shrinks during a round (no preemption or
// completions are applied), so anything learnt about a shape stays true until the round ends.
struct Shape {
  // Whether `matches`/`open` are kept (false once the cache cap is reached).
  bool cached = false;
  // Nodes that statically match, ascending.
  std::vector<int> matches;
  // `matches` minus the nodes found too full for this shape or whose executor reached its
  // capacity; ascending.
  std::vector<int> open;
  // A job of this shape, with no node avoided, found no node: so will every later one.
  bool failed = false;
  std::string failed_reason;
};

struct QueueState {
  double weight = 1.0;
  ResourceList allocated;
  const RoundJob* head = nullptr;
  double share_before = 0;
  int assigned = 0;
};

class Round {
 public:
  explicit Round(RoundInput input);
  RoundResult Run();

 private:
  bool ExecutorClosed(int node) const {
    int slot = executor_slot_[node];
    return slot >= 0 && executor_remaining_[slot] <= 0;
  }
  int64_t FreeOf(int node, int resource) const {
    return resource < width_ ? free_[static_cast<size_t>(node) * width_ + resource] : 0;
  }
  const RoundJob* NextJob(int queue);
  void Consider(int queue, const RoundJob& job);
  // The job's shape, created (and matched over all nodes) on first sight; `fresh` is set when
  // it was just created, in which case scratch_matches_ holds its static matches.
  Shape& ShapeFor(const RoundJob& job, bool* fresh);
  // Static matches of the job over all nodes; `reason` gets the summary when none match.
  void MatchAll(const RoundJob& job, std::vector<int>* matches, std::string* reason);
  std::string NoRoomReason(const RoundJob& job, const std::vector<int>& matches,
                           const std::vector<int>* avoided) const;
  int NodeIndex(absl::string_view id);
  void RecordUnschedulable(int queue, const RoundJob& job, const std::string& reason);

  RoundInput input_;
  const std::vector<Node>& nodes_;
  // Free room (allocatable - allocated, round-local) as a dense nodes x width_ matrix of milli
  // values: the scan over nodes is the hot loop.
  int width_ = 0;
  std::vector<int64_t> free_;
  // Per resource: multiplier / pool total (0 for ignored resources), width_ entries. Best fit
  // picks the node whose leftover free room has the lowest DRF share: max(left x scale).
  std::vector<double> scale_;
  std::vector<int64_t> request_;  // the job being placed, dense, width_ entries
  DominantResourceCost cost_;
  std::vector<QueueState> queues_;
  std::vector<absl::string_view> queue_names_;
  QueueHeap heap_;

  std::vector<int> executor_slot_;       // node -> slot, -1: no capacity limit
  std::vector<int> executor_remaining_;  // slot -> runs still accepted this round
  std::vector<int> executor_nodes_;      // slot -> schedulable nodes of that executor
  int schedulable_nodes_ = 0;
  int open_nodes_ = 0;  // schedulable nodes whose executor accepts more runs

  absl::flat_hash_map<ShapeKey, int, ShapeKeyHash, ShapeKeyEq> shape_index_;
  std::vector<Shape> shapes_;
  size_t cached_node_refs_ = 0;
  absl::flat_hash_map<absl::string_view, int> node_index_;  // built on first avoid_nodes
  std::vector<int> scratch_matches_;
  std::vector<int> scratch_open_;
  std::vector<int> avoided_;

  RoundResult result_;
  int assigned_ = 0;
};

ResourceList PoolTotal(const std::vector<Node>& nodes) {
  ResourceList total;
  for (const Node& node : nodes) {
    if (!node.unschedulable) total.Add(node.allocatable);
  }
  return total;
}

const std::vector<Node>& NodesOf(const RoundInput& input) {
  static const std::vector<Node>* const kNoNodes = new std::vector<Node>();
  return input.nodes != nullptr ? *input.nodes : *kNoNodes;
}

std::vector<absl::string_view> NamesOf(const std::vector<RoundQueue>& queues) {
  std::vector<absl::string_view> names;
  names.reserve(queues.size());
  for (const RoundQueue& q : queues) names.push_back(q.name);
  return names;
}

Round::Round(RoundInput input)
    : input_(std::move(input)),
      nodes_(NodesOf(input_)),
      cost_(PoolTotal(nodes_), input_.config.resource_multipliers),
      queue_names_(NamesOf(input_.queues)),
      heap_(queue_names_) {
  const int n = static_cast<int>(nodes_.size());
  for (const Node& node : nodes_) {
    width_ = std::max({width_, node.allocatable.size(), node.allocated.size()});
  }
  free_.assign(static_cast<size_t>(n) * width_, 0);
  scale_ = cost_.scale();
  scale_.resize(width_, 0.0);
  request_.assign(width_, 0);
  executor_slot_.assign(n, -1);
  absl::flat_hash_map<absl::string_view, int> slots;
  for (int i = 0; i < n; ++i) {
    const Node& node = nodes_[i];
    for (int r = 0; r < width_; ++r) {
      free_[static_cast<size_t>(i) * width_ + r] =
          node.allocatable.Get(r).milli() - node.allocated.Get(r).milli();
    }
    auto cap = input_.config.executor_capacity.find(node.executor_id);
    if (cap != input_.config.executor_capacity.end()) {
      auto [it, inserted] = slots.try_emplace(node.executor_id, slots.size());
      if (inserted) {
        executor_remaining_.push_back(cap->second);
        executor_nodes_.push_back(0);
      }
      executor_slot_[i] = it->second;
    }
    if (node.unschedulable) continue;
    ++schedulable_nodes_;
    if (executor_slot_[i] >= 0) ++executor_nodes_[executor_slot_[i]];
    if (!ExecutorClosed(i)) ++open_nodes_;
  }

  queues_.resize(input_.queues.size());
  for (int q = 0; q < static_cast<int>(queues_.size()); ++q) {
    QueueState& state = queues_[q];
    const RoundQueue& queue = input_.queues[q];
    state.weight = queue.weight > 0 ? queue.weight : 1.0;
    state.allocated = queue.allocated;
    state.share_before = cost_.Cost(state.allocated, state.weight);
    state.head = NextJob(q);
    if (state.head != nullptr) {
      heap_.Set(q, cost_.CostWith(state.allocated, state.head->requests, state.weight));
    }
  }
}

const RoundJob* Round::NextJob(int queue) {
  RoundJobIterator* jobs = input_.queues[queue].jobs.get();
  return jobs != nullptr ? jobs->Next() : nullptr;
}

RoundResult Round::Run() {
  const absl::Duration budget = input_.config.time_budget;
  const absl::Time start = budget > absl::ZeroDuration() ? absl::Now() : absl::InfinitePast();
  const int max_assignments = input_.config.max_assignments;
  int looked_at = 0;
  while (!heap_.empty()) {
    if (max_assignments > 0 && assigned_ >= max_assignments) break;
    if (schedulable_nodes_ > 0 && open_nodes_ == 0) break;  // every executor is at capacity
    if (budget > absl::ZeroDuration() && looked_at > 0 && looked_at % kClockCheckInterval == 0 &&
        absl::Now() - start >= budget) {
      break;
    }
    const int q = heap_.Top();
    QueueState& state = queues_[q];
    ++looked_at;
    ++result_.stats.jobs_considered;
    Consider(q, *state.head);
    state.head = NextJob(q);
    if (state.head == nullptr) {
      heap_.Remove(q);  // exhausted queues leave the heap
    } else {
      heap_.Set(q, cost_.CostWith(state.allocated, state.head->requests, state.weight));
    }
  }
  result_.limited = !heap_.empty();
  result_.stats.shapes = static_cast<int>(shapes_.size());
  for (int q = 0; q < static_cast<int>(queues_.size()); ++q) {
    const QueueState& state = queues_[q];
    result_.shares.push_back(QueueShare{.queue = input_.queues[q].name,
                                        .share_before = state.share_before,
                                        .share_after = cost_.Cost(state.allocated, state.weight),
                                        .assigned = state.assigned});
  }
  return std::move(result_);
}

void Round::MatchAll(const RoundJob& job, std::vector<int>* matches, std::string* reason) {
  matches->clear();
  absl::flat_hash_map<std::string, int> counts;
  const TaskSpec& task = TaskOf(job);
  result_.stats.static_matches += static_cast<int64_t>(nodes_.size());
  for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
    StaticMatch match = MatchNodeStatically(task, job.requests, nodes_[i]);
    if (match.matches) {
      matches->push_back(i);
    } else {
      ++counts[match.reason];
    }
  }
  if (matches->empty()) *reason = NoMatchSummary(static_cast<int>(nodes_.size()), counts);
}

Shape& Round::ShapeFor(const RoundJob& job, bool* fresh) {
  const ShapeKey key = ShapeKey::Of(TaskOf(job), job.requests);
  auto [it, inserted] = shape_index_.try_emplace(key, static_cast<int>(shapes_.size()));
  *fresh = inserted;
  if (!inserted) return shapes_[it->second];
  Shape& shape = shapes_.emplace_back();
  std::string reason;
  MatchAll(job, &scratch_matches_, &reason);
  if (scratch_matches_.empty()) {
    shape.failed = true;
    shape.failed_reason = std::move(reason);
  } else if (cached_node_refs_ + 2 * scratch_matches_.size() <= kMaxCachedNodeRefs) {
    cached_node_refs_ += 2 * scratch_matches_.size();
    shape.cached = true;
    shape.matches = scratch_matches_;
    shape.open = scratch_matches_;
  }
  return shape;
}

int Round::NodeIndex(absl::string_view id) {
  if (node_index_.empty()) {
    for (int i = 0; i < static_cast<int>(nodes_.size()); ++i) {
      node_index_.try_emplace(nodes_[i].id, i);
    }
  }
  auto it = node_index_.find(id);
  return it == node_index_.end() ? -1 : it->second;
}

void Round::RecordUnschedulable(int queue, const RoundJob& job, const std::string& reason) {
  result_.unschedulable.push_back(
      RoundUnschedulable{.job_id = job.id, .queue = input_.queues[queue].name, .reason = reason});
}

void Round::Consider(int queue, const RoundJob& job) {
  bool fresh = false;
  Shape& shape = ShapeFor(job, &fresh);
  if (shape.failed) {
    RecordUnschedulable(queue, job, shape.failed_reason);
    return;
  }
  std::vector<int>* matches = &shape.matches;
  std::vector<int>* open = &shape.open;
  if (!shape.cached) {  // over the cache cap: match this job on its own
    std::string unused;
    // Not empty: a shape without matches is marked failed when created.
    if (!fresh) MatchAll(job, &scratch_matches_, &unused);
    scratch_open_ = scratch_matches_;
    matches = &scratch_matches_;
    open = &scratch_open_;
  }

  // Avoid the job's avoid_nodes only while some other statically matching node remains.
  bool avoiding = false;
  if (!job.avoid_nodes.empty()) {
    avoided_.clear();
    for (const std::string& id : job.avoid_nodes) {
      int index = NodeIndex(id);
      if (index >= 0 && std::binary_search(matches->begin(), matches->end(), index)) {
        avoided_.push_back(index);
      }
    }
    std::sort(avoided_.begin(), avoided_.end());
    avoided_.erase(std::unique(avoided_.begin(), avoided_.end()), avoided_.end());
    avoiding = !avoided_.empty() && avoided_.size() < matches->size();
  }

  // Best fit over the open nodes, in node order (so ties go to the lowest index); nodes that no
  // longer fit this shape, or whose executor is at capacity, are dropped from `open` for good.
  // A static match means every request fits some node's allocatable, so no request lies
  // beyond width_.
  const ResourceList& requests = job.requests;
  for (int r = 0; r < width_; ++r) request_[r] = requests.Get(r).milli();
  const int64_t* const request = request_.data();
  const double* const scale = scale_.data();
  const int width = width_;
  int best = -1;
  double best_score = std::numeric_limits<double>::infinity();
  size_t write = 0;
  size_t read = 0;
  for (; read < open->size(); ++read) {
    const int node = (*open)[read];
    if (ExecutorClosed(node)) continue;
    const int64_t* const free = &free_[static_cast<size_t>(node) * width];
    bool fits = true;
    double score = 0;  // DRF share of what the node would have left free
    for (int r = 0; r < width; ++r) {
      const int64_t left = free[r] - request[r];
      if (left < 0 && request[r] > 0) {  // a zero request fits even an overcommitted node
        fits = false;
        break;
      }
      score = std::max(score, static_cast<double>(left) * scale[r]);
    }
    if (!fits) continue;
    (*open)[write++] = node;
    if (avoiding && std::binary_search(avoided_.begin(), avoided_.end(), node)) continue;
    if (score < best_score) {
      best = node;
      best_score = score;
      if (score <= 0) {  // the node would be exactly full: nothing can fit better
        ++read;
        break;
      }
    }
  }
  result_.stats.fit_checks += static_cast<int64_t>(read);
  for (; read < open->size(); ++read) (*open)[write++] = (*open)[read];
  open->resize(write);

  if (best < 0) {
    std::string reason = NoRoomReason(job, *matches, avoiding ? &avoided_ : nullptr);
    if (!avoiding) {
      shape.failed = true;
      shape.failed_reason = reason;
    }
    RecordUnschedulable(queue, job, reason);
    return;
  }

  for (int r = 0; r < width; ++r) free_[static_cast<size_t>(best) * width + r] -= request[r];
  QueueState& state = queues_[queue];
  state.allocated.Add(requests);
  ++state.assigned;
  ++assigned_;
  if (int slot = executor_slot_[best]; slot >= 0 && --executor_remaining_[slot] == 0) {
    open_nodes_ -= executor_nodes_[slot];
  }
  result_.assignments.push_back(
      Assignment{.job_id = job.id, .queue = input_.queues[queue].name, .node_index = best});
}

std::string Round::NoRoomReason(const RoundJob& job, const std::vector<int>& matches,
                                const std::vector<int>* avoided) const {
  std::vector<int> considered;
  int closed = 0;
  for (int node : matches) {
    if (avoided != nullptr && std::binary_search(avoided->begin(), avoided->end(), node)) continue;
    if (ExecutorClosed(node)) {
      ++closed;
    } else {
      considered.push_back(node);
    }
  }
  std::string reason;
  if (considered.empty()) {
    reason = absl::StrCat("no node has room: the executors of all ", closed,
                          " matching nodes have no capacity left this round");
  } else {
    const ResourceList& requests = job.requests;
    for (int r = 0; r < requests.size() && reason.empty(); ++r) {
      const Quantity need = requests.Get(r);
      if (need <= Quantity()) continue;
      int most_node = considered.front();
      for (int node : considered) {
        if (FreeOf(node, r) > FreeOf(most_node, r)) most_node = node;
      }
      const Quantity most = Quantity::FromMilli(std::max<int64_t>(FreeOf(most_node, r), 0));
      if (need > most) {
        reason = absl::StrCat("no node has room: needs ", need.ToString(), " ",
                              ResourceNames::Global().Name(r), ", most free is ", most.ToString(),
                              " on ", nodes_[most_node].id);
      }
    }
    if (reason.empty()) {
      std::vector<std::string> parts;
      for (const auto& [name, quantity] : requests.ToStrings()) {
        parts.push_back(absl::StrCat(quantity, " ", name));
      }
      reason = absl::StrCat("no node has room: needs ", absl::StrJoin(parts, ", "),
                            ", no node has all of it free");
    }
  }
  std::vector<std::string> notes;
  if (matches.size() < nodes_.size()) {
    notes.push_back(absl::StrCat(matches.size(), " of ", nodes_.size(), " nodes match"));
  }
  if (closed > 0 && !considered.empty()) {
    notes.push_back(absl::StrCat(closed, " skipped: executor at capacity"));
  }
  if (avoided != nullptr) {
    notes.push_back(absl::StrCat("avoiding ", avoided->size(), " where earlier runs failed"));
  }
  if (!notes.empty()) absl::StrAppend(&reason, " (", absl::StrJoin(notes, "; "), ")");
  return reason;
}

}  // namespace

RoundResult ScheduleRound(RoundInput input) { return Round(std::move(input)).Run(); }

}  // namespace regatta::scheduler
