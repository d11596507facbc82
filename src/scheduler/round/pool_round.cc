#include "src/scheduler/round/pool_round.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "src/scheduler/fairness/cost.h"
#include "src/scheduler/fairness/fair_share.h"
#include "src/scheduler/fairness/queue_heap.h"
#include "src/scheduler/nodedb/node_db.h"
#include "src/scheduler/nodedb/shape.h"

namespace regatta::scheduler {
namespace {

using ::regatta::v1::TaskSpec;

// The clock is read once per this many steps (only when there is a time budget).
constexpr int kClockCheckInterval = 32;
// Jobs of the lowest class bind here; the room at this level excludes only evicted jobs.
constexpr int kLowestClassLevel = 1;
// Share comparisons tolerate rounding.
constexpr double kShareEpsilon = 1e-9;

const TaskSpec& TaskOf(const JobTemplate& tmpl) {
  return tmpl.task != nullptr ? *tmpl.task : TaskSpec::default_instance();
}

std::string Share(double share) { return absl::StrFormat("%.2f", share); }

std::string DescribeRequests(const ResourceList& requests) {
  std::vector<std::string> parts;
  for (const auto& [name, quantity] : requests.ToStrings()) {
    parts.push_back(absl::StrCat(quantity, " ", name));
  }
  return parts.empty() ? "nothing" : absl::StrJoin(parts, ", ");
}

// A scheduling shape (nodedb/shape.h) resolved against the node database.
struct Shape {
  const JobTemplate* tmpl = nullptr;  // the first template of this shape
  ShapeMatch match;
  std::vector<int64_t> dense;  // requests, NodeDb::width() entries
};

// A shape in one priority class: what placement decides on, and what a failure is cached by.
struct SchedKey {
  int shape = 0;
  int cls = 0;
  int64_t failed_epoch = -1;  // the NodeDb epoch at which a job of this key found no room
  UnschedulableCode failed_code = UnschedulableCode::kNoRoom;
  std::string failed_reason;
};

enum class BoundState { kRunning, kEvicted, kNew, kPreempted, kUnplaced };

// A job holding room on a node: running at the start of the round or placed by it.
struct BoundJob {
  absl::string_view id;
  absl::string_view queue_name;
  int queue = -1;  // index into the input queues, -1 for a queue not in the input
  const JobTemplate* tmpl = nullptr;
  absl::string_view gang_id;
  int node = -1;
  int level = 0;                               // bind level
  int key = 0;                                 // SchedKey
  absl::Time leased = absl::InfiniteFuture();  // new jobs are the youngest
  BoundState state = BoundState::kRunning;
  int lease = -1;  // index into the result's leases (new jobs)
};

struct ClassInfo {
  int scan_level = kLowestClassLevel;  // the level of its priority: the room it may preempt into
  int bind_level = kLowestClassLevel;  // scan_level, or above all levels if not preemptible
};

struct QueueState {
  double weight = 1.0;
  bool cordoned = false;
  ResourceList held;       // held now (evicted jobs excluded)
  ResourceList scheduled;  // newly scheduled this round
  std::vector<ResourceList> by_class;
  std::vector<int> evicted;  // bound jobs evicted in step 2, oldest leased first
  size_t evicted_next = 0;
  std::deque<const QueuedJob*> buffer;  // read from the iterator, not yet dealt with
  bool iterator_done = false;
  int64_t tokens = -1;  // -1: no limit
  absl::flat_hash_set<absl::string_view> gangs_done;
};

enum class LimitOutcome { kOk, kSkipJob, kStopQueue, kEndRound };

class PoolRound {
 public:
  explicit PoolRound(PoolRoundInput input);
  PoolRoundResult Run();

 private:
  // Setup.
  void ReserveResults();
  int KeyFor(const JobTemplate* tmpl);
  void BindRunning();
  void ComputeShares();
  void EvictOverShareQueues();

  // Filling.
  const QueuedJob* Head(int q);
  void UpdateHeap(int q);
  void StopQueue(int q, absl::string_view reason);
  void EndRound(absl::string_view reason);
  void Step(int q);
  void PlaceEvictedAgain(int q, int bound);
  LimitOutcome CheckLimits(int q, const QueuedJob& job, int count, const ResourceList& requests);
  void PlaceSingle(int q, const QueuedJob& job);
  void PlaceGang(int q, const QueuedJob& first);
  // Tries to place every member; all or none (rolled back). `nodes` gets their nodes.
  // Finds a node for every member (free room, then evicted room, then — with `allow_urgency` —
  // room held by lower classes; urgent[i] says member i needs preemptions). Leaves no binding.
  bool PlaceMembers(const std::vector<const QueuedJob*>& members, absl::string_view label,
                    const std::string* value, bool allow_urgency, std::vector<int>* nodes,
                    std::vector<bool>* urgent, bool* took_evicted_room);
  // Whether jobs of classes below `scan_level` hold room in the pool (urgency could free some).
  bool LowerClassesHoldRoom(int scan_level) const;
  std::vector<std::string> UniformityValues(const Shape& shape, const JobTemplate& tmpl,
                                            const std::string& label) const;
  int RecordLease(int q, const QueuedJob& job, int key, int node, bool preempted_others);
  void PreemptForUrgency(int node, int taker);
  void Unbind(BoundJob& job);
  void Preempt(int bound, PreemptionKind kind, int cause, std::string reason);
  // Takes back a lease of this round (its job stays queued; no event).
  void Unplace(int bound, absl::string_view reason);
  void Unschedule(int q, const QueuedJob& job, UnschedulableCode code, absl::string_view reason);
  // Records a job the round did not place; job_id views the caller's id.
  void AddUnschedulable(absl::string_view job_id, int q, UnschedulableCode code,
                        absl::string_view reason);
  bool ExecutorOpen(int node, int pending) const;
  void NoteExecutorUse(int node);
  void AvoidedNodes(const QueuedJob& job, const Shape& shape, std::vector<int>* avoided);
  int NodeIndex(absl::string_view id);
  std::string NoRoomReason(const Shape& shape, const JobTemplate& tmpl,
                           UnschedulableCode* code) const;

  // Finishing.
  void SettleEvicted();
  void PreemptGangs();
  std::string FairShareReason(const BoundJob& victim, int cause) const;

  const std::vector<Node>& NodesOrEmpty() const;

  PoolRoundInput input_;
  const PoolRoundConfig& config_;
  const std::vector<Node>& nodes_;
  NodeDb db_;
  DominantResourceCost cost_;
  std::vector<ClassInfo> classes_;
  bool has_class_limits_ = false;

  std::vector<Shape> shapes_;
  absl::flat_hash_map<ShapeKey, int, ShapeKeyHash, ShapeKeyEq> shape_index_;
  std::vector<SchedKey> keys_;
  absl::flat_hash_map<const JobTemplate*, int> key_of_template_;

  std::vector<BoundJob> bound_;
  // Bound jobs per node as intrusive lists (no allocation per placement): node -> first job,
  // job -> next job on the same node, -1 ends.
  std::vector<int> node_first_job_;
  std::vector<int> next_on_node_;
  void AddToNode(int node, int id) {
    next_on_node_.resize(bound_.size(), -1);
    next_on_node_[id] = node_first_job_[node];
    node_first_job_[node] = id;
  }
  std::vector<int> first_taker_;     // node -> first new job that took evicted room
  std::vector<int> bound_at_level_;  // preemptible jobs bound per level
  int evicted_bound_ = 0;            // evicted jobs still bound at level 0
  // (queue, gang id) -> its bound members, running and new.
  absl::flat_hash_map<std::pair<int, absl::string_view>, std::vector<int>> gangs_;

  std::vector<QueueState> queues_;
  std::vector<absl::string_view> queue_names_;
  QueueHeap heap_;

  std::vector<int> executor_slot_;  // node -> slot, -1: no limit
  std::vector<int> executor_left_;  // slot -> runs still accepted
  std::vector<std::vector<int>> executor_nodes_;
  std::vector<int> gang_pending_;  // slot -> members of the gang being placed
  bool executor_closed_any_ = false;

  absl::flat_hash_map<absl::string_view, int> node_index_;
  std::vector<int> scratch_avoided_;
  std::vector<int> scratch_victims_;

  ResourceList round_scheduled_;
  int new_jobs_ = 0;
  int64_t global_tokens_ = -1;
  bool ended_ = false;
  std::vector<bool> lease_removed_;
  PoolRoundResult result_;
  std::vector<absl::string_view> result_queue_names_;  // kept by result_
  absl::string_view last_reason_;                      // kept by result_: most jobs repeat it
};

const std::vector<Node>& NodesOf(const PoolRoundInput& input) {
  static const std::vector<Node>* const kNoNodes = new std::vector<Node>();
  return input.nodes != nullptr ? *input.nodes : *kNoNodes;
}

NodeDbConfig DbConfigOf(const PoolRoundConfig& config) {
  NodeDbConfig db;
  db.indexed_resources = config.indexed_resources;
  db.indexed_node_labels = config.indexed_node_labels;
  for (const PriorityClass& c : config.priority_classes) db.priorities.push_back(c.priority);
  if (db.priorities.empty()) db.priorities.push_back(0);
  return db;
}

ResourceList PoolTotal(const std::vector<Node>& nodes) {
  ResourceList total;
  for (const Node& node : nodes) {
    if (!node.unschedulable) total.Add(node.allocatable);
  }
  return total;
}

std::vector<absl::string_view> NamesOf(const std::vector<QueueInput>& queues) {
  std::vector<absl::string_view> names;
  names.reserve(queues.size());
  for (const QueueInput& q : queues) names.push_back(q.name);
  return names;
}

ResourceList Scaled(const ResourceList& requests, int64_t factor) {
  ResourceList out;
  for (int r = 0; r < requests.size(); ++r) {
    out.Set(r, Quantity::FromMilli(requests.Get(r).milli() * factor));
  }
  return out;
}

PoolRound::PoolRound(PoolRoundInput input)
    : input_(std::move(input)),
      config_(input_.config),
      nodes_(NodesOf(input_)),
      db_(nodes_, DbConfigOf(config_)),
      cost_(PoolTotal(nodes_), config_.resource_multipliers),
      queue_names_(NamesOf(input_.queues)),
      heap_(queue_names_) {
  for (const PriorityClass& c : config_.priority_classes) {
    ClassInfo& info = classes_.emplace_back();
    info.scan_level = db_.LevelOfPriority(c.priority);
    info.bind_level = c.preemptible ? info.scan_level : NodeDb::kUnpreemptibleLevel;
    has_class_limits_ = has_class_limits_ || !c.max_fraction_per_queue.empty();
  }
  for (const QueueInput& q : input_.queues) {
    has_class_limits_ = has_class_limits_ || !q.max_fraction_by_class.empty();
  }
  if (classes_.empty()) classes_.emplace_back();
  result_queue_names_.reserve(input_.queues.size());
  for (const QueueInput& q : input_.queues) result_queue_names_.push_back(result_.Keep(q.name));
  const int n = db_.num_nodes();
  node_first_job_.assign(n, -1);
  first_taker_.assign(n, -1);
  bound_at_level_.assign(db_.num_levels(), 0);
  executor_slot_.assign(n, -1);
  absl::flat_hash_map<absl::string_view, int> slots;
  for (int i = 0; i < n; ++i) {
    auto cap = config_.executor_capacity.find(nodes_[i].executor_id);
    if (cap == config_.executor_capacity.end()) continue;
    auto [it, inserted] = slots.try_emplace(nodes_[i].executor_id, slots.size());
    if (inserted) {
      executor_left_.push_back(cap->second);
      executor_nodes_.emplace_back();
    }
    executor_slot_[i] = it->second;
    executor_nodes_[it->second].push_back(i);
  }
  gang_pending_.assign(executor_left_.size(), 0);
  for (size_t slot = 0; slot < executor_left_.size(); ++slot) {
    if (executor_left_[slot] <= 0) {
      for (int node : executor_nodes_[slot]) db_.Close(node);
      executor_closed_any_ = true;
    }
  }
  global_tokens_ = config_.global_tokens;
  queues_.resize(input_.queues.size());
  for (size_t q = 0; q < queues_.size(); ++q) {
    const QueueInput& in = input_.queues[q];
    QueueState& state = queues_[q];
    // Bounded so that no cost is infinite or NaN whatever the input says.
    state.weight = in.weight > 0 ? SaneWeight(in.weight) : 1.0;
    state.cordoned = in.cordoned;
    if (has_class_limits_) state.by_class.resize(classes_.size());
    if (auto it = config_.queue_tokens.find(in.name); it != config_.queue_tokens.end()) {
      state.tokens = it->second;
    }
    QueueReport& report = result_.queues.emplace_back();
    report.queue = in.name;
    report.weight = state.weight;
  }
}

int PoolRound::KeyFor(const JobTemplate* tmpl) {
  auto found = key_of_template_.find(tmpl);
  if (found != key_of_template_.end()) return found->second;
  const TaskSpec& task = TaskOf(*tmpl);
  auto [it, inserted] = shape_index_.try_emplace(ShapeKey::Of(task, tmpl->requests),
                                                 static_cast<int>(shapes_.size()));
  if (inserted) {
    Shape& shape = shapes_.emplace_back();
    shape.tmpl = tmpl;
    shape.match = db_.MatchShape(task, tmpl->requests);
    result_.stats.node_type_matches += db_.num_node_types();
    db_.ToDense(tmpl->requests, &shape.dense);
  }
  const int cls =
      tmpl->priority_class >= 0 && tmpl->priority_class < static_cast<int>(classes_.size())
          ? tmpl->priority_class
          : 0;
  int key = -1;
  for (size_t k = 0; k < keys_.size(); ++k) {  // few keys per shape: a short scan
    if (keys_[k].shape == it->second && keys_[k].cls == cls) key = static_cast<int>(k);
  }
  if (key < 0) {
    key = static_cast<int>(keys_.size());
    keys_.push_back(SchedKey{.shape = it->second, .cls = cls});
  }
  key_of_template_.emplace(tmpl, key);
  return key;
}

void PoolRound::ReserveResults() {
  // Growing vectors of a million entries element by element costs more than the placements
  // (copies into fresh pages); reserved but unused capacity is never touched.
  int64_t queued = 0;
  for (const QueueInput& q : input_.queues) queued += std::max<int64_t>(q.queued_count, 0);
  const int64_t running = input_.running != nullptr ? input_.running->size() : 0;
  result_.leases.reserve(queued);
  result_.unschedulable.reserve(queued);
  bound_.reserve(running + queued);
  next_on_node_.reserve(running + queued);
}

void PoolRound::BindRunning() {
  absl::flat_hash_map<absl::string_view, int> queue_index;
  for (size_t q = 0; q < input_.queues.size(); ++q) queue_index.try_emplace(queue_names_[q], q);
  if (input_.running == nullptr) return;
  for (const RunningJob& run : *input_.running) {
    if (run.tmpl == nullptr || run.node_index < 0 || run.node_index >= db_.num_nodes()) continue;
    BoundJob& job = bound_.emplace_back();
    const int id = static_cast<int>(bound_.size()) - 1;
    job.id = run.id;
    job.queue_name = run.queue;
    auto q = queue_index.find(run.queue);
    job.queue = q == queue_index.end() ? -1 : q->second;
    job.tmpl = run.tmpl;
    job.gang_id = run.gang_id;
    job.node = run.node_index;
    job.key = KeyFor(run.tmpl);
    // A job already on its way out holds its room until its run ends but is no victim again.
    job.level = run.leaving ? NodeDb::kUnpreemptibleLevel : classes_[keys_[job.key].cls].bind_level;
    job.leased = run.leased_time;
    db_.Bind(job.node, shapes_[keys_[job.key].shape].dense.data(), job.level);
    AddToNode(job.node, id);
    if (job.level < db_.num_levels()) ++bound_at_level_[job.level];
    if (job.queue >= 0) {
      QueueState& state = queues_[job.queue];
      state.held.Add(run.tmpl->requests);
      if (has_class_limits_) state.by_class[keys_[job.key].cls].Add(run.tmpl->requests);
    }
    if (!job.gang_id.empty()) gangs_[{job.queue, job.gang_id}].push_back(id);
  }
}

void PoolRound::ComputeShares() {
  const size_t n = queues_.size();
  std::vector<double> weights(n, 0.0);
  std::vector<double> demands(n, 0.0);
  for (size_t q = 0; q < n; ++q) {
    const QueueState& state = queues_[q];
    const ResourceList& queued = input_.queues[q].queued_demand;
    QueueReport& report = result_.queues[q];
    report.share_before = cost_.DominantShare(state.held);
    report.demand_share = cost_.DominantShareWith(state.held, queued);
    const bool active = !state.held.IsZero() || !queued.IsZero();
    weights[q] = active ? state.weight : 0;
    demands[q] = report.demand_share;
  }
  std::vector<double> fair = FairShares(weights);
  std::vector<double> adjusted = AdjustedFairShares(weights, demands);
  for (size_t q = 0; q < n; ++q) {
    result_.queues[q].fair_share = fair[q];
    result_.queues[q].adjusted_fair_share = adjusted[q];
  }
}

void PoolRound::EvictOverShareQueues() {
  if (!config_.enable_fair_share_preemption) return;
  std::vector<bool> over(queues_.size(), false);
  for (size_t q = 0; q < queues_.size(); ++q) {
    const QueueReport& report = result_.queues[q];
    over[q] =
        !queues_[q].cordoned &&
        report.share_before >
            config_.protected_fraction_of_fair_share * report.adjusted_fair_share + kShareEpsilon;
  }
  auto evictable = [&](const BoundJob& job) {
    return job.queue >= 0 && over[job.queue] && job.level < db_.num_levels();
  };
  for (int id = 0; id < static_cast<int>(bound_.size()); ++id) {
    BoundJob& job = bound_[id];
    if (!evictable(job)) continue;
    if (!job.gang_id.empty()) {  // a gang is evicted whole or not at all
      bool all = true;
      for (int member : gangs_[{job.queue, job.gang_id}]) {
        all = all && evictable(bound_[member]);
      }
      if (!all) continue;
    }
    const int64_t* dense = shapes_[keys_[job.key].shape].dense.data();
    db_.Move(job.node, dense, job.level, NodeDb::kEvictedLevel);
    --bound_at_level_[job.level];
    ++evicted_bound_;
    job.state = BoundState::kEvicted;
    QueueState& state = queues_[job.queue];
    state.held.Subtract(job.tmpl->requests);
    if (has_class_limits_) state.by_class[keys_[job.key].cls].Subtract(job.tmpl->requests);
    state.evicted.push_back(id);
    ++result_.queues[job.queue].evicted;
    ++result_.stats.evicted;
  }
  for (QueueState& state : queues_) {
    std::stable_sort(state.evicted.begin(), state.evicted.end(), [&](int a, int b) {
      if (bound_[a].leased != bound_[b].leased) return bound_[a].leased < bound_[b].leased;
      return bound_[a].id < bound_[b].id;
    });
  }
}

const QueuedJob* PoolRound::Head(int q) {
  QueueState& state = queues_[q];
  if (state.buffer.empty() && !state.iterator_done) {
    QueuedJobIterator* jobs = input_.queues[q].jobs.get();
    const QueuedJob* next = jobs != nullptr ? jobs->Next() : nullptr;
    if (next == nullptr) {
      state.iterator_done = true;
    } else {
      state.buffer.push_back(next);
    }
  }
  return state.buffer.empty() ? nullptr : state.buffer.front();
}

void PoolRound::UpdateHeap(int q) {
  QueueState& state = queues_[q];
  if (state.evicted_next < state.evicted.size()) {
    const BoundJob& next = bound_[state.evicted[state.evicted_next]];
    heap_.Set(q, cost_.CostWith(state.held, next.tmpl->requests, state.weight));
    return;
  }
  const QueuedJob* head = Head(q);
  if (head == nullptr) {
    StopQueue(q, "no more queued jobs");
    return;
  }
  const JobTemplate& tmpl = *head->tmpl;
  if (tmpl.gang_cardinality > 1) {
    heap_.Set(
        q, cost_.CostWith(state.held, Scaled(tmpl.requests, tmpl.gang_cardinality), state.weight));
  } else {
    heap_.Set(q, cost_.CostWith(state.held, tmpl.requests, state.weight));
  }
}

void PoolRound::StopQueue(int q, absl::string_view reason) {
  heap_.Remove(q);
  if (result_.queues[q].stop_reason.empty()) result_.queues[q].stop_reason = std::string(reason);
}

void PoolRound::EndRound(absl::string_view reason) {
  ended_ = true;
  result_.limited = true;
  for (int q = 0; q < static_cast<int>(queues_.size()); ++q) {
    if (heap_.Contains(q)) StopQueue(q, reason);
  }
}

PoolRoundResult PoolRound::Run() {
  const absl::Duration budget = config_.time_budget;
  const bool timed = budget > absl::ZeroDuration();
  const absl::Time start = timed ? absl::Now() : absl::InfinitePast();
  ReserveResults();
  BindRunning();
  ComputeShares();
  EvictOverShareQueues();
  for (int q = 0; q < static_cast<int>(queues_.size()); ++q) UpdateHeap(q);
  if (db_.num_nodes() == 0) {
    for (int q = 0; q < static_cast<int>(queues_.size()); ++q) {
      if (heap_.Contains(q)) StopQueue(q, "the pool has no nodes");
    }
  }
  int steps = 0;
  while (!heap_.empty() && !ended_) {
    if (timed && ++steps % kClockCheckInterval == 0 && absl::Now() - start >= budget) {
      EndRound("time budget");
      break;
    }
    if (executor_closed_any_ && db_.open_nodes() == 0 &&
        queues_[heap_.Top()].evicted_next >= queues_[heap_.Top()].evicted.size()) {
      // Nothing new can be placed; evicted jobs keep their room unless it was taken.
      EndRound("every executor is full");
      break;
    }
    const int q = heap_.Top();
    Step(q);
    if (heap_.Contains(q)) UpdateHeap(q);
  }
  SettleEvicted();
  PreemptGangs();

  for (size_t q = 0; q < queues_.size(); ++q) {
    QueueReport& report = result_.queues[q];
    report.share_after = cost_.DominantShare(queues_[q].held);
  }
  if (!lease_removed_.empty()) {
    lease_removed_.resize(result_.leases.size(), false);
    std::vector<Lease> kept;
    for (size_t i = 0; i < result_.leases.size(); ++i) {
      if (!lease_removed_[i]) kept.push_back(std::move(result_.leases[i]));
    }
    result_.leases = std::move(kept);
  }
  if (timed) result_.stats.elapsed = absl::Now() - start;
  return std::move(result_);
}

void PoolRound::Step(int q) {
  QueueState& state = queues_[q];
  if (state.evicted_next < state.evicted.size()) {
    PlaceEvictedAgain(q, state.evicted[state.evicted_next++]);
    return;
  }
  const QueuedJob* job = Head(q);
  state.buffer.pop_front();
  ++result_.stats.jobs_considered;
  if (state.cordoned) {
    Unschedule(q, *job, UnschedulableCode::kQueueCordoned,
               absl::StrCat("queue ", input_.queues[q].name, " is cordoned"));
    StopQueue(q, "queue cordoned");
    return;
  }
  if (!job->gang_id.empty()) {
    PlaceGang(q, *job);
  } else {
    PlaceSingle(q, *job);
  }
}

void PoolRound::PlaceEvictedAgain(int q, int id) {
  BoundJob& job = bound_[id];
  const int64_t* dense = shapes_[keys_[job.key].shape].dense.data();
  // Its own node only, and only into room no running job holds.
  if (!db_.FitsAt(job.node, dense, kLowestClassLevel)) return;
  db_.Move(job.node, dense, NodeDb::kEvictedLevel, job.level);
  --evicted_bound_;
  ++bound_at_level_[job.level];
  job.state = BoundState::kRunning;
  QueueState& state = queues_[q];
  state.held.Add(job.tmpl->requests);
  if (has_class_limits_) state.by_class[keys_[job.key].cls].Add(job.tmpl->requests);
}

LimitOutcome PoolRound::CheckLimits(int q, const QueuedJob& job, int count,
                                    const ResourceList& requests) {
  QueueState& state = queues_[q];
  const ResourceList& total = db_.total();
  auto over = [&](const absl::flat_hash_map<int, double>& limits, const ResourceList& held,
                  std::string* what) {
    for (const auto& [r, fraction] : limits) {
      const double limit = fraction * static_cast<double>(total.Get(r).milli());
      const double after = static_cast<double>(held.Get(r).milli() + requests.Get(r).milli());
      if (requests.Get(r).milli() > 0 && after > limit + 0.5) {
        *what =
            absl::StrCat(Share(after / std::max<double>(total.Get(r).milli(), 1)), " of ",
                         ResourceNames::Global().Name(r), ", above its limit ", Share(fraction));
        return true;
      }
    }
    return false;
  };
  std::string what;
  if (global_tokens_ >= 0 && global_tokens_ < count) {
    Unschedule(q, job, UnschedulableCode::kRateLimited, "rate limited: no tokens left this round");
    EndRound("rate limited");
    return LimitOutcome::kEndRound;
  }
  if (config_.max_new_jobs > 0 && new_jobs_ + count > config_.max_new_jobs) {
    Unschedule(q, job, UnschedulableCode::kRoundLimit,
               absl::StrCat("round limit: at most ", config_.max_new_jobs, " new jobs per round"));
    EndRound("round limit");
    return LimitOutcome::kEndRound;
  }
  if (over(config_.max_fraction_to_schedule, round_scheduled_, &what)) {
    Unschedule(q, job, UnschedulableCode::kRoundLimit,
               absl::StrCat("round limit: the round would schedule ", what));
    EndRound("round limit");
    return LimitOutcome::kEndRound;
  }
  if (state.tokens >= 0 && state.tokens < count) {
    Unschedule(q, job, UnschedulableCode::kRateLimited,
               absl::StrCat("rate limited: queue ", input_.queues[q].name,
                            " has no tokens left this round"));
    StopQueue(q, "rate limited");
    return LimitOutcome::kStopQueue;
  }
  if (over(config_.max_fraction_to_schedule_per_queue, state.scheduled, &what)) {
    Unschedule(q, job, UnschedulableCode::kRoundLimit,
               absl::StrCat("round limit: queue ", input_.queues[q].name, " would schedule ", what,
                            " this round"));
    StopQueue(q, "round limit (queue)");
    return LimitOutcome::kStopQueue;
  }
  if (has_class_limits_) {
    const int cls = keys_[KeyFor(job.tmpl)].cls;
    const PriorityClass& pc = config_.priority_classes[cls];
    const auto& own = input_.queues[q].max_fraction_by_class;
    const auto queue_limit = own.find(cls);
    if (over(queue_limit != own.end() ? queue_limit->second : pc.max_fraction_per_queue,
             state.by_class[cls], &what)) {
      Unschedule(q, job, UnschedulableCode::kQueueFractionLimit,
                 absl::StrCat("queue ", input_.queues[q].name, " would hold ", what, " in class ",
                              pc.name));
      return LimitOutcome::kSkipJob;
    }
  }
  return LimitOutcome::kOk;
}

bool PoolRound::ExecutorOpen(int node, int pending) const {
  const int slot = executor_slot_[node];
  return slot < 0 || executor_left_[slot] - pending > 0;
}

void PoolRound::NoteExecutorUse(int node) {
  const int slot = executor_slot_[node];
  if (slot < 0) return;
  if (--executor_left_[slot] <= 0) {
    for (int n : executor_nodes_[slot]) db_.Close(n);
    executor_closed_any_ = true;
  }
}

int PoolRound::NodeIndex(absl::string_view id) {
  if (node_index_.empty()) {
    for (int i = 0; i < db_.num_nodes(); ++i) node_index_.try_emplace(nodes_[i].id, i);
  }
  auto it = node_index_.find(id);
  return it == node_index_.end() ? -1 : it->second;
}

// The job's avoided nodes that could hold it, sorted; empty when avoiding them would leave no
// node that could ever hold it (then it may go back to them).
void PoolRound::AvoidedNodes(const QueuedJob& job, const Shape& shape, std::vector<int>* avoided) {
  avoided->clear();
  if (job.avoid_nodes == nullptr) return;
  for (const std::string& id : *job.avoid_nodes) {
    const int node = NodeIndex(id);
    if (node < 0 || nodes_[node].unschedulable) continue;
    const int type = db_.TypeOf(node);
    if (!std::binary_search(shape.match.types.begin(), shape.match.types.end(), type)) continue;
    if (!MatchNodeStatically(TaskOf(*job.tmpl), job.tmpl->requests, nodes_[node]).matches) {
      continue;
    }
    avoided->push_back(node);
  }
  std::sort(avoided->begin(), avoided->end());
  avoided->erase(std::unique(avoided->begin(), avoided->end()), avoided->end());
  if (static_cast<int>(avoided->size()) >= shape.match.matching_nodes) avoided->clear();
}

void PoolRound::PlaceSingle(int q, const QueuedJob& job) {
  const int key_index = KeyFor(job.tmpl);
  const SchedKey& key = keys_[key_index];
  const Shape& shape = shapes_[key.shape];
  if (shape.match.matching_nodes == 0) {
    Unschedule(q, job, UnschedulableCode::kNoNodeMatches, shape.match.no_match_reason);
    return;
  }
  AvoidedNodes(job, shape, &scratch_avoided_);
  const bool avoiding = !scratch_avoided_.empty();
  if (!avoiding && key.failed_epoch == db_.epoch()) {
    Unschedule(q, job, key.failed_code, key.failed_reason);
    return;
  }
  if (CheckLimits(q, job, 1, job.tmpl->requests) != LimitOutcome::kOk) return;
  const TaskSpec& task = TaskOf(*job.tmpl);
  auto accept = [&](int node) {
    return db_.NodeMatches(shape.match, task, node) &&
           (!avoiding ||
            !std::binary_search(scratch_avoided_.begin(), scratch_avoided_.end(), node));
  };
  const int64_t* dense = shape.dense.data();
  int64_t* scanned = &result_.stats.nodes_scanned;
  // Free room first, then evicted jobs' room, then (urgency) room of lower classes.
  int node = db_.BestFit(shape.match, dense, NodeDb::kEvictedLevel, accept, scanned);
  bool took_evicted_room = false;
  bool urgent = false;
  if (node < 0 && evicted_bound_ > 0) {
    node = db_.BestFit(shape.match, dense, kLowestClassLevel, accept, scanned);
    took_evicted_room = node >= 0;
  }
  const ClassInfo& cls = classes_[key.cls];
  if (node < 0 && LowerClassesHoldRoom(cls.scan_level)) {
    node = db_.BestFit(shape.match, dense, cls.scan_level, accept, scanned);
    urgent = node >= 0;
  }
  if (node < 0) {
    UnschedulableCode code = UnschedulableCode::kNoRoom;
    std::string reason = NoRoomReason(shape, *job.tmpl, &code);
    if (avoiding) {
      absl::StrAppend(&reason, " (avoiding ", scratch_avoided_.size(),
                      " nodes where earlier runs failed)");
    } else {
      SchedKey& cached = keys_[key_index];
      cached.failed_epoch = db_.epoch();
      cached.failed_code = code;
      cached.failed_reason = reason;
    }
    Unschedule(q, job, code, reason);
    return;
  }
  const int id = RecordLease(q, job, key_index, node, urgent);
  if ((took_evicted_room || urgent) && first_taker_[node] < 0) first_taker_[node] = id;
  if (urgent) PreemptForUrgency(node, id);
}

bool PoolRound::LowerClassesHoldRoom(int scan_level) const {
  for (int l = kLowestClassLevel; l < scan_level; ++l) {
    if (bound_at_level_[l] > 0) return true;
  }
  return false;
}

int PoolRound::RecordLease(int q, const QueuedJob& job, int key, int node, bool preempted_others) {
  const int64_t* dense = shapes_[keys_[key].shape].dense.data();
  const int level = classes_[keys_[key].cls].bind_level;
  db_.Bind(node, dense, level);
  const int id = static_cast<int>(bound_.size());
  BoundJob& bound = bound_.emplace_back();
  bound.id = job.id;
  bound.queue_name = queue_names_[q];
  bound.queue = q;
  bound.tmpl = job.tmpl;
  bound.gang_id = job.gang_id;
  bound.node = node;
  bound.level = level;
  bound.key = key;
  bound.state = BoundState::kNew;
  bound.lease = static_cast<int>(result_.leases.size());
  AddToNode(node, id);
  if (level < db_.num_levels()) ++bound_at_level_[level];
  if (!job.gang_id.empty()) gangs_[{q, job.gang_id}].push_back(id);
  Lease& lease = result_.leases.emplace_back();
  lease.job_id = job.id;
  lease.queue = result_queue_names_[q];
  lease.node_index = node;
  lease.preempted_others = preempted_others;
  QueueState& state = queues_[q];
  const ResourceList& requests = job.tmpl->requests;
  state.held.Add(requests);
  state.scheduled.Add(requests);
  if (has_class_limits_) state.by_class[keys_[key].cls].Add(requests);
  round_scheduled_.Add(requests);
  ++new_jobs_;
  if (global_tokens_ > 0) --global_tokens_;
  if (state.tokens > 0) --state.tokens;
  ++result_.queues[q].leased;
  NoteExecutorUse(node);
  return id;
}

void PoolRound::Unbind(BoundJob& job) {
  const int level = job.state == BoundState::kEvicted ? NodeDb::kEvictedLevel : job.level;
  db_.Unbind(job.node, shapes_[keys_[job.key].shape].dense.data(), level);
  if (job.state == BoundState::kEvicted) {
    --evicted_bound_;
    return;
  }
  if (level < db_.num_levels()) --bound_at_level_[level];
  if (job.queue < 0) return;
  QueueState& state = queues_[job.queue];
  state.held.Subtract(job.tmpl->requests);
  if (has_class_limits_) state.by_class[keys_[job.key].cls].Subtract(job.tmpl->requests);
}

void PoolRound::Preempt(int id, PreemptionKind kind, int cause, std::string reason) {
  BoundJob& job = bound_[id];
  Unbind(job);
  job.state = BoundState::kPreempted;
  Preemption& p = result_.preemptions.emplace_back();
  p.job_id = std::string(job.id);
  p.queue = std::string(job.queue_name);
  p.node_index = job.node;
  p.kind = kind;
  if (cause >= 0) {
    p.caused_by_job = std::string(bound_[cause].id);
    p.caused_by_queue = std::string(bound_[cause].queue_name);
  }
  p.reason = std::move(reason);
  if (job.queue >= 0) ++result_.queues[job.queue].preempted;
}

void PoolRound::PreemptForUrgency(int node, int taker) {
  const BoundJob& winner = bound_[taker];
  const int scan_level = classes_[keys_[winner.key].cls].scan_level;
  std::vector<int>& victims = scratch_victims_;
  victims.clear();
  for (int id = node_first_job_[node]; id >= 0; id = next_on_node_[id]) {
    const BoundJob& job = bound_[id];
    const bool holding = job.state == BoundState::kRunning || job.state == BoundState::kNew;
    if (holding && job.level >= kLowestClassLevel && job.level < scan_level) victims.push_back(id);
  }
  // Lowest class first, then the youngest (new jobs are the youngest), then by id.
  std::sort(victims.begin(), victims.end(), [&](int a, int b) {
    const BoundJob& x = bound_[a];
    const BoundJob& y = bound_[b];
    if (x.level != y.level) return x.level < y.level;
    if (x.leased != y.leased) return x.leased > y.leased;
    return x.id < y.id;
  });
  const int64_t* need = shapes_[keys_[winner.key].shape].dense.data();
  const PriorityClass& winner_class = config_.priority_classes[keys_[winner.key].cls];
  for (int id : victims) {
    const int64_t* held = shapes_[keys_[bound_[id].key].shape].dense.data();
    bool short_of_any = false;
    bool helps = false;
    for (int r = 0; r < db_.width(); ++r) {
      if (need[r] > 0 && db_.FreeAt(node, kLowestClassLevel, r) < 0) {
        short_of_any = true;
        helps = helps || held[r] > 0;
      }
    }
    if (!short_of_any) break;
    if (!helps) continue;
    BoundJob& victim = bound_[id];
    const PriorityClass& victim_class = config_.priority_classes[keys_[victim.key].cls];
    std::string reason =
        absl::StrCat("urgency: job ", winner.id, " of queue ", winner.queue_name, " (class ",
                     winner_class.name, ", priority ", winner_class.priority, ") needed ",
                     DescribeRequests(winner.tmpl->requests), " on ", nodes_[node].id,
                     "; this job's class ", victim_class.name, " has ", victim_class.priority);
    if (victim.state == BoundState::kNew) {
      // Placed earlier in this round: un-place it instead (it stays queued, no event), and
      // the rest of its gang with it.
      const std::string displaced = absl::StrCat("placed, then displaced by ", reason);
      if (victim.gang_id.empty()) {
        Unplace(id, displaced);
      } else {
        for (int member : gangs_[{victim.queue, victim.gang_id}]) {
          if (bound_[member].state == BoundState::kNew) Unplace(member, displaced);
        }
      }
      continue;
    }
    Preempt(id, PreemptionKind::kUrgency, taker, std::move(reason));
  }
}

void PoolRound::Unplace(int id, absl::string_view reason) {
  BoundJob& job = bound_[id];
  Unbind(job);
  job.state = BoundState::kUnplaced;
  lease_removed_.resize(result_.leases.size(), false);
  lease_removed_[job.lease] = true;
  QueueState& state = queues_[job.queue];
  state.scheduled.Subtract(job.tmpl->requests);
  round_scheduled_.Subtract(job.tmpl->requests);
  --new_jobs_;
  if (global_tokens_ >= 0) ++global_tokens_;
  if (state.tokens >= 0) ++state.tokens;
  if (int slot = executor_slot_[job.node]; slot >= 0) ++executor_left_[slot];
  --result_.queues[job.queue].leased;
  AddUnschedulable(job.id, job.queue, UnschedulableCode::kNoRoom, reason);
}

void PoolRound::Unschedule(int q, const QueuedJob& job, UnschedulableCode code,
                           absl::string_view reason) {
  AddUnschedulable(job.id, q, code, reason);
}

void PoolRound::AddUnschedulable(absl::string_view job_id, int q, UnschedulableCode code,
                                 absl::string_view reason) {
  // A saturated round records hundreds of thousands of these, mostly with the reason of the
  // previous one: compare before hashing it into the result's texts.
  if (reason != last_reason_) last_reason_ = result_.Keep(reason);
  result_.unschedulable.push_back(Unschedulable{
      .job_id = job_id, .queue = result_queue_names_[q], .code = code, .reason = last_reason_});
}

std::string PoolRound::NoRoomReason(const Shape& shape, const JobTemplate& tmpl,
                                    UnschedulableCode* code) const {
  const TaskSpec& task = TaskOf(tmpl);
  const int width = db_.width();
  const int64_t* need = shape.dense.data();
  int open = 0;
  int closed = 0;
  std::vector<int> most(width, -1);  // per resource: the open node with most free
  const std::vector<int>& types = shape.match.types;
  for (int node = 0; node < db_.num_nodes(); ++node) {
    const int type = db_.TypeOf(node);
    if (type < 0 || !std::binary_search(types.begin(), types.end(), type) ||
        !db_.NodeMatches(shape.match, task, node) ||
        !tmpl.requests.FitsIn(nodes_[node].allocatable)) {
      continue;
    }
    if (db_.closed(node)) {
      ++closed;
      continue;
    }
    ++open;
    for (int r = 0; r < width; ++r) {
      if (most[r] < 0 || db_.FreeAt(node, NodeDb::kEvictedLevel, r) >
                             db_.FreeAt(most[r], NodeDb::kEvictedLevel, r)) {
        most[r] = node;
      }
    }
  }
  if (open == 0) {
    *code = UnschedulableCode::kExecutorFull;
    return absl::StrCat("no node has room: the executors of all ", closed,
                        " matching nodes take no more runs this round");
  }
  *code = UnschedulableCode::kNoRoom;
  std::string reason;
  for (int r = 0; r < width && reason.empty(); ++r) {
    const int64_t free = std::max<int64_t>(db_.FreeAt(most[r], NodeDb::kEvictedLevel, r), 0);
    if (need[r] > free) {
      reason = absl::StrCat("no node has room: needs ", Quantity::FromMilli(need[r]).ToString(),
                            " ", ResourceNames::Global().Name(r), ", most free is ",
                            Quantity::FromMilli(free).ToString(), " (", nodes_[most[r]].id, ")");
    }
  }
  if (reason.empty()) {
    reason = absl::StrCat("no node has room: needs ", DescribeRequests(tmpl.requests),
                          ", no node has all of it free");
  }
  std::vector<std::string> notes;
  if (shape.match.matching_nodes < db_.num_nodes()) {
    notes.push_back(
        absl::StrCat(shape.match.matching_nodes, " of ", db_.num_nodes(), " nodes match"));
  }
  if (closed > 0) notes.push_back(absl::StrCat(closed, " skipped: executor full"));
  if (!notes.empty()) absl::StrAppend(&reason, " (", absl::StrJoin(notes, "; "), ")");
  return reason;
}

void PoolRound::PlaceGang(int q, const QueuedJob& first) {
  QueueState& state = queues_[q];
  const JobTemplate& tmpl = *first.tmpl;
  const absl::string_view gang = first.gang_id;
  if (!state.gangs_done.insert(gang).second) {
    Unschedule(q, first, UnschedulableCode::kGangIncomplete,
               absl::StrCat("gang ", gang,
                            " was already dealt with this round (more members "
                            "queued than its cardinality ",
                            tmpl.gang_cardinality, "?)"));
    return;
  }
  const int cardinality = std::max<int>(1, tmpl.gang_cardinality);
  std::vector<const QueuedJob*> members = {&first};
  // Members already read past, then further into the queue up to the lookahead.
  for (auto it = state.buffer.begin();
       it != state.buffer.end() && static_cast<int>(members.size()) < cardinality;) {
    if ((*it)->gang_id == gang) {
      members.push_back(*it);
      it = state.buffer.erase(it);
    } else {
      ++it;
    }
  }
  int looked = 0;
  QueuedJobIterator* jobs = input_.queues[q].jobs.get();
  while (static_cast<int>(members.size()) < cardinality && !state.iterator_done &&
         looked < config_.gang_lookahead) {
    const QueuedJob* next = jobs != nullptr ? jobs->Next() : nullptr;
    if (next == nullptr) {
      state.iterator_done = true;
      break;
    }
    ++looked;
    if (next->gang_id == gang) {
      members.push_back(next);
    } else {
      state.buffer.push_back(next);
    }
  }
  result_.stats.jobs_considered += static_cast<int>(members.size()) - 1;
  auto fail_all = [&](UnschedulableCode code, const std::string& reason) {
    for (const QueuedJob* m : members) Unschedule(q, *m, code, reason);
  };
  if (static_cast<int>(members.size()) < cardinality) {
    fail_all(UnschedulableCode::kGangIncomplete,
             absl::StrCat("gang ", gang, " incomplete: ", members.size(), " of ", cardinality,
                          " members queued"));
    return;
  }
  ++result_.stats.gangs_considered;
  ResourceList total;
  for (const QueuedJob* m : members) total.Add(m->tmpl->requests);
  if (CheckLimits(q, first, cardinality, total) != LimitOutcome::kOk) {
    // The first member got the reason; the others share it.
    const Unschedulable last = result_.unschedulable.back();
    for (size_t i = 1; i < members.size(); ++i) Unschedule(q, *members[i], last.code, last.reason);
    return;
  }
  for (const QueuedJob* m : members) {
    const Shape& shape = shapes_[keys_[KeyFor(m->tmpl)].shape];
    if (shape.match.matching_nodes == 0) {
      fail_all(UnschedulableCode::kNoNodeMatches,
               absl::StrCat("gang ", gang, ": member ", m->id, ": ", shape.match.no_match_reason));
      return;
    }
  }
  std::vector<int> nodes;
  std::vector<bool> urgent;
  bool took_evicted_room = false;
  bool placed = false;
  const std::string& label = tmpl.gang_node_uniformity_label;
  std::vector<std::string> values;
  if (!label.empty()) values = UniformityValues(shapes_[keys_[KeyFor(&tmpl)].shape], tmpl, label);
  // Without preempting anyone anywhere first; only then into lower classes' room.
  const bool may_preempt = LowerClassesHoldRoom(classes_[keys_[KeyFor(&tmpl)].cls].scan_level);
  for (const bool allow_urgency : {false, true}) {
    if (allow_urgency && !may_preempt) break;
    if (label.empty()) {
      placed =
          PlaceMembers(members, label, nullptr, allow_urgency, &nodes, &urgent, &took_evicted_room);
    } else {
      for (const std::string& value : values) {
        placed = PlaceMembers(members, label, &value, allow_urgency, &nodes, &urgent,
                              &took_evicted_room);
        if (placed) break;
      }
    }
    if (placed) break;
  }
  if (!placed) {
    std::string reason =
        absl::StrCat("gang ", gang, " (", cardinality, " members) does not fit together");
    if (!label.empty()) {
      absl::StrAppend(&reason, " on nodes of one value of ", label, " (", values.size(),
                      " values tried)");
    }
    fail_all(UnschedulableCode::kGangDoesNotFit, reason);
    return;
  }
  std::vector<int> ids;
  for (size_t i = 0; i < members.size(); ++i) {
    const int id = RecordLease(q, *members[i], KeyFor(members[i]->tmpl), nodes[i], urgent[i]);
    if ((took_evicted_room || urgent[i]) && first_taker_[nodes[i]] < 0) first_taker_[nodes[i]] = id;
    ids.push_back(id);
  }
  // Every member holds its room before any preemption, so each node loses only what the
  // members on it need together.
  for (size_t i = 0; i < members.size(); ++i) {
    if (urgent[i]) PreemptForUrgency(nodes[i], ids[i]);
  }
}

std::vector<std::string> PoolRound::UniformityValues(const Shape& shape, const JobTemplate& tmpl,
                                                     const std::string& label) const {
  // Most free room first (the first indexed resource, then the value), so a gang goes where
  // it most likely fits.
  const int resource = config_.indexed_resources.empty() ? 0 : config_.indexed_resources[0];
  absl::flat_hash_map<std::string, int64_t> room;
  const TaskSpec& task = TaskOf(tmpl);
  for (int node = 0; node < db_.num_nodes(); ++node) {
    const int type = db_.TypeOf(node);
    if (type < 0 || db_.closed(node) ||
        !std::binary_search(shape.match.types.begin(), shape.match.types.end(), type) ||
        !db_.NodeMatches(shape.match, task, node)) {
      continue;
    }
    auto it = nodes_[node].labels.find(label);
    if (it == nodes_[node].labels.end()) continue;
    const int64_t free = resource < db_.width() ? db_.FreeAt(node, kLowestClassLevel, resource) : 0;
    room[it->second] += std::max<int64_t>(free, 0);
  }
  std::vector<std::pair<std::string, int64_t>> sorted(room.begin(), room.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> values;
  for (auto& [value, unused] : sorted) values.push_back(value);
  return values;
}

bool PoolRound::PlaceMembers(const std::vector<const QueuedJob*>& members, absl::string_view label,
                             const std::string* value, bool allow_urgency, std::vector<int>* nodes,
                             std::vector<bool>* urgent, bool* took_evicted_room) {
  nodes->clear();
  urgent->assign(members.size(), false);
  *took_evicted_room = false;
  const size_t mark = db_.Mark();
  std::fill(gang_pending_.begin(), gang_pending_.end(), 0);
  for (const QueuedJob* member : members) {
    const SchedKey& key = keys_[KeyFor(member->tmpl)];
    const Shape& shape = shapes_[key.shape];
    const TaskSpec& task = TaskOf(*member->tmpl);
    auto accept = [&](int node) {
      if (!ExecutorOpen(node, executor_slot_[node] < 0 ? 0 : gang_pending_[executor_slot_[node]]))
        return false;
      if (value != nullptr) {
        auto it = nodes_[node].labels.find(label);
        if (it == nodes_[node].labels.end() || it->second != *value) return false;
      }
      return db_.NodeMatches(shape.match, task, node);
    };
    int64_t* scanned = &result_.stats.nodes_scanned;
    int node = db_.BestFit(shape.match, shape.dense.data(), NodeDb::kEvictedLevel, accept, scanned);
    if (node < 0 && evicted_bound_ > 0) {
      node = db_.BestFit(shape.match, shape.dense.data(), kLowestClassLevel, accept, scanned);
      *took_evicted_room = *took_evicted_room || node >= 0;
    }
    if (node < 0 && allow_urgency) {
      node = db_.BestFit(shape.match, shape.dense.data(), classes_[key.cls].scan_level, accept,
                         scanned);
      (*urgent)[nodes->size()] = node >= 0;
    }
    if (node < 0) {
      db_.RollbackTo(mark);
      db_.Commit();
      return false;
    }
    db_.Bind(node, shape.dense.data(), classes_[key.cls].bind_level);
    if (executor_slot_[node] >= 0) ++gang_pending_[executor_slot_[node]];
    nodes->push_back(node);
  }
  // Keep the room bookkeeping for RecordLease, which binds again.
  db_.RollbackTo(mark);
  db_.Commit();
  return true;
}

std::string PoolRound::FairShareReason(const BoundJob& victim, int cause) const {
  const QueueReport& own = result_.queues[victim.queue];
  std::string reason =
      absl::StrCat("fair share: queue ", victim.queue_name, " holds ", Share(own.share_before),
                   " of the pool, above ", Share(config_.protected_fraction_of_fair_share),
                   " x its adjusted fair share ", Share(own.adjusted_fair_share), "; ");
  if (cause < 0) {
    absl::StrAppend(&reason, "its room on ", nodes_[victim.node].id, " was taken");
    return reason;
  }
  const BoundJob& taker = bound_[cause];
  const QueueReport& other = result_.queues[taker.queue];
  absl::StrAppend(&reason, "job ", taker.id, " of queue ", taker.queue_name, " (",
                  Share(other.share_before), " of ", Share(other.adjusted_fair_share),
                  ") took its room on ", nodes_[victim.node].id);
  return reason;
}

void PoolRound::SettleEvicted() {
  // Evicted jobs not placed again keep running where their room is still free; the others
  // were displaced by whoever took the room.
  for (QueueState& state : queues_) {
    for (int id : state.evicted) {
      BoundJob& job = bound_[id];
      if (job.state != BoundState::kEvicted) continue;
      const int64_t* dense = shapes_[keys_[job.key].shape].dense.data();
      if (db_.FitsAt(job.node, dense, kLowestClassLevel)) {
        PlaceEvictedAgain(job.queue, id);
        continue;
      }
      Preempt(id, PreemptionKind::kFairShare, first_taker_[job.node],
              FairShareReason(job, first_taker_[job.node]));
    }
  }
}

void PoolRound::PreemptGangs() {
  // A gang runs whole or not at all: take down the running members of preempted members' gangs.
  for (size_t p = 0; p < result_.preemptions.size(); ++p) {
    const Preemption preempted = result_.preemptions[p];
    // Find the bound job of this preemption (by node and id; preemptions are few).
    for (int id = node_first_job_[preempted.node_index]; id >= 0; id = next_on_node_[id]) {
      const BoundJob& job = bound_[id];
      if (job.id != preempted.job_id || job.gang_id.empty()) continue;
      auto gang = gangs_.find({job.queue, job.gang_id});
      if (gang == gangs_.end()) break;
      for (int member : gang->second) {
        const BoundState s = bound_[member].state;
        if (s != BoundState::kRunning && s != BoundState::kEvicted) continue;
        Preempt(member, PreemptionKind::kGang, id,
                absl::StrCat("gang: member ", job.id, " of gang ", job.gang_id, " was preempted (",
                             preempted.reason, ")"));
      }
      break;
    }
  }
}

}  // namespace

absl::string_view PoolRoundResult::Keep(absl::string_view text) {
  if (auto it = text_index_.find(text); it != text_index_.end()) return *it;
  const absl::string_view kept = texts_.emplace_back(text);
  text_index_.insert(kept);
  return kept;
}

PoolRoundResult SchedulePool(PoolRoundInput input) { return PoolRound(std::move(input)).Run(); }

}  // namespace regatta::scheduler
