#include "src/scheduler/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/common/status_macros.h"

namespace regatta::scheduler::sim {

absl::string_view SimJobStateName(SimJobState state) {
  switch (state) {
    case SimJobState::kUnsubmitted:
      return "UNSUBMITTED";
    case SimJobState::kQueued:
      return "QUEUED";
    case SimJobState::kRunning:
      return "RUNNING";
    case SimJobState::kSucceeded:
      return "SUCCEEDED";
    case SimJobState::kPreempted:
      return "PREEMPTED";
    case SimJobState::kRejected:
      return "REJECTED";
  }
  return "UNKNOWN";
}

absl::string_view PreemptionKindName(PreemptionKind kind) {
  switch (kind) {
    case PreemptionKind::kUrgency:
      return "urgency";
    case PreemptionKind::kFairShare:
      return "fair-share";
    case PreemptionKind::kGang:
      return "gang";
  }
  return "unknown";
}

absl::string_view UnschedulableCodeName(UnschedulableCode code) {
  switch (code) {
    case UnschedulableCode::kNoNodeMatches:
      return "NoNodeMatches";
    case UnschedulableCode::kNoRoom:
      return "NoRoom";
    case UnschedulableCode::kQueueFractionLimit:
      return "QueueFractionLimit";
    case UnschedulableCode::kRoundLimit:
      return "RoundLimit";
    case UnschedulableCode::kRateLimited:
      return "RateLimited";
    case UnschedulableCode::kGangIncomplete:
      return "GangIncomplete";
    case UnschedulableCode::kGangDoesNotFit:
      return "GangDoesNotFit";
    case UnschedulableCode::kQueueCordoned:
      return "QueueCordoned";
    case UnschedulableCode::kExecutorFull:
      return "ExecutorFull";
    case UnschedulableCode::kTimeBudget:
      return "TimeBudget";
  }
  return "Unknown";
}

// Walks one queue's queued jobs in queue order, skipping those no node of the pool could hold.
class Simulator::PoolQueueIterator final : public QueuedJobIterator {
 public:
  PoolQueueIterator(const Simulator& sim, int queue, int pool)
      : sim_(sim), it_(sim.queued_[queue].begin()), end_(sim.queued_[queue].end()), pool_(pool) {}
  const QueuedJob* Next() override {
    while (it_ != end_) {
      int job = std::get<4>(*it_++);
      if (sim_.template_fits_pool_[sim_.jobs_[job].template_index][pool_]) {
        return &sim_.queued_views_[job];
      }
    }
    return nullptr;
  }

 private:
  const Simulator& sim_;
  std::set<QueueKey>::const_iterator it_, end_;
  int pool_;
};

namespace {
// Simulated time as the absl::Time the token buckets count in.
absl::Time At(absl::Duration since_start) { return absl::UnixEpoch() + since_start; }
}  // namespace

Simulator::Simulator(ClusterSpec cluster, WorkloadSpec workload, ScheduleFn schedule)
    : cluster_(std::move(cluster)),
      workload_(std::move(workload)),
      schedule_(std::move(schedule)) {}

absl::StatusOr<std::unique_ptr<Simulator>> Simulator::Create(ClusterSpec cluster,
                                                             WorkloadSpec workload,
                                                             ScheduleFn schedule,
                                                             absl::string_view workload_file) {
  RETURN_IF_ERROR(ValidateWorkload(cluster, workload, workload_file));
  std::unique_ptr<Simulator> sim(
      new Simulator(std::move(cluster), std::move(workload), std::move(schedule)));
  RETURN_IF_ERROR(sim->Init(workload_file));
  return sim;
}

absl::Status Simulator::Init(absl::string_view workload_file) {
  const int num_pools = static_cast<int>(cluster_.pools.size());
  const int num_queues = static_cast<int>(workload_.queues.size());
  nodes_.resize(num_pools);
  pool_totals_.resize(num_pools);
  for (int p = 0; p < num_pools; ++p) {
    const PoolSpec& pool = cluster_.pools[p];
    for (const NodeGroupSpec& group : pool.node_groups) {
      for (int i = 0; i < group.count; ++i) {
        Node node;
        node.id = absl::StrCat(group.name_prefix, i);
        node.executor_id = group.executor_id;
        node.pool = pool.name;
        node.labels = group.labels;
        node.taints = group.taints;
        node.allocatable = group.resources;
        node.unschedulable = group.unschedulable;
        pool_totals_[p].Add(node.allocatable);
        nodes_[p].push_back(std::move(node));
      }
    }
  }

  // Every pool's classes come in the same (name) order; only their limits differ by pool.
  std::vector<std::string> class_names;
  for (const PoolSpec& pool : cluster_.pools) {
    PoolRoundConfig& config =
        pool_configs_.emplace_back(MakePoolRoundConfig(cluster_.policy, pool.name, &class_names));
    config.max_new_jobs = cluster_.max_leases_per_cycle;
  }
  absl::flat_hash_map<std::string, int> class_index, queue_index;
  for (size_t i = 0; i < class_names.size(); ++i) class_index[class_names[i]] = static_cast<int>(i);
  for (int q = 0; q < num_queues; ++q) queue_index[workload_.queues[q].name] = q;

  // Templates (the workload owns their task specs; it never moves after construction).
  for (const JobTemplateSpec& spec : workload_.jobs) {
    JobTemplate t;
    t.requests = spec.requests;
    t.task = &spec.task;
    t.priority_class = class_index.at(
        spec.priority_class.empty() ? cluster_.policy.default_priority_class : spec.priority_class);
    t.gang_cardinality = std::max<uint32_t>(1, spec.gang_cardinality);
    t.gang_node_uniformity_label = spec.gang_node_uniformity_label;
    templates_.push_back(std::move(t));
  }
  template_fits_pool_.assign(templates_.size(), std::vector<bool>(num_pools, false));
  for (size_t t = 0; t < templates_.size(); ++t) {
    bool fits_somewhere = false;
    for (int p = 0; p < num_pools; ++p) {
      for (const Node& node : nodes_[p]) {
        if (MatchNodeStatically(*templates_[t].task, templates_[t].requests, node).matches) {
          template_fits_pool_[t][p] = true;
          fits_somewhere = true;
          break;
        }
      }
    }
    rejection_reasons_.push_back(fits_somewhere ? "" : RejectionReason(static_cast<int>(t)));
  }

  // Jobs, their arrival times and durations (one draw per gang, so members end together).
  std::mt19937_64 rng(workload_.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto draw = [&](const DurationSpec& d) {
    switch (d.kind) {
      case DurationSpec::Kind::kConstant:
        return d.value;
      case DurationSpec::Kind::kUniform:
        return d.min + (d.max - d.min) * unit(rng);
      case DurationSpec::Kind::kExponential:
        return d.value * -std::log1p(-unit(rng));
      case DurationSpec::Kind::kShiftedExponential:
        return d.min + d.value * -std::log1p(-unit(rng));
    }
    return d.value;
  };
  int total = 0;
  for (const JobTemplateSpec& spec : workload_.jobs) total += spec.count;
  jobs_.reserve(total);
  absl::flat_hash_map<std::string, int> template_by_name;
  for (size_t t = 0; t < workload_.jobs.size(); ++t) {
    template_by_name[workload_.jobs[t].name] = static_cast<int>(t);
  }
  dependents_.resize(workload_.jobs.size());
  template_deps_left_.assign(workload_.jobs.size(), 0);
  for (size_t t = 0; t < workload_.jobs.size(); ++t) {
    absl::flat_hash_set<int> deps;
    for (const std::string& dep : workload_.jobs[t].dependencies) {
      deps.insert(template_by_name.at(dep));  // ValidateWorkload checked the names
    }
    for (int d : deps) dependents_[d].push_back(static_cast<int>(t));
    template_deps_left_[t] = static_cast<int>(deps.size());
  }
  for (size_t t = 0; t < workload_.jobs.size(); ++t) {
    const JobTemplateSpec& spec = workload_.jobs[t];
    template_first_job_.push_back(static_cast<int>(jobs_.size()));
    template_jobs_left_.push_back(spec.count);
    const int cardinality = static_cast<int>(templates_[t].gang_cardinality);
    absl::Duration duration;
    for (int i = 0; i < spec.count; ++i) {
      const int group = spec.gang_cardinality > 0 ? i / cardinality : i;
      if (i % cardinality == 0) duration = std::max(absl::Milliseconds(1), draw(spec.duration));
      SimJob job;
      job.id = absl::StrFormat("%s-%06d", spec.name, i);
      job.template_index = static_cast<int>(t);
      job.queue_index = queue_index.at(spec.queue);
      if (spec.gang_cardinality > 0) job.gang_id = absl::StrFormat("%s-g%06d", spec.name, group);
      job.submit_time = spec.submit_at + spec.submit_interval * group;
      job.duration = absl::Floor(duration, absl::Milliseconds(1));
      jobs_.push_back(std::move(job));
    }
  }
  queued_views_.resize(jobs_.size());
  for (size_t j = 0; j < jobs_.size(); ++j) {
    SimJob& job = jobs_[j];
    if (!job_by_id_.emplace(job.id, static_cast<int>(j)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(workload_file, ": job id ", job.id, " is not unique (rename a template)"));
    }
    if (!job.gang_id.empty()) gang_members_[job.gang_id].push_back(static_cast<int>(j));
    queued_views_[j] =
        QueuedJob{.id = job.id, .tmpl = &templates_[job.template_index], .gang_id = job.gang_id};
    if (template_deps_left_[job.template_index] == 0) {
      events_.push(Event{job.submit_time, event_seq_++, EventType::kSubmit, static_cast<int>(j)});
    } else {
      job.submit_time = absl::InfiniteDuration();  // set when its dependencies have ended
    }
  }

  queued_.resize(num_queues);
  queued_demand_.assign(num_queues, std::vector<ResourceList>(num_pools));
  running_.resize(num_pools);
  last_fair_share_.assign(num_pools, std::vector<double>(num_queues, 0));
  last_adjusted_share_ = last_fair_share_;
  const RateLimit& global = cluster_.policy.rate_limit;
  const RateLimit& per_queue = cluster_.policy.queue_rate_limit;
  global_bucket_.emplace(global.rate, global.burst, At(now_));
  queue_buckets_.assign(num_queues, TokenBucket(per_queue.rate, per_queue.burst, At(now_)));
  // Templates without jobs have ended at once (their dependents may start).
  for (size_t t = 0; t < workload_.jobs.size(); ++t) {
    if (template_deps_left_[t] == 0 && template_jobs_left_[t] == 0) {
      TemplateDone(static_cast<int>(t));
    }
  }
  return absl::OkStatus();
}

void Simulator::JobEnded(int job) {
  const int t = jobs_[job].template_index;
  if (--template_jobs_left_[t] == 0) TemplateDone(t);
}

void Simulator::TemplateDone(int template_index) {
  for (int d : dependents_[template_index]) {
    if (--template_deps_left_[d] == 0) ReleaseTemplate(d);
  }
}

// Its jobs arrive from the latest of submitAt and now + the delay after dependencies, one job
// (gang) every submitInterval as without dependencies.
void Simulator::ReleaseTemplate(int template_index) {
  const JobTemplateSpec& spec = workload_.jobs[template_index];
  if (spec.count == 0) {
    TemplateDone(template_index);
    return;
  }
  const absl::Duration start = std::max(spec.submit_at, now_ + spec.submit_after_dependencies);
  const int cardinality = static_cast<int>(templates_[template_index].gang_cardinality);
  for (int i = 0; i < spec.count; ++i) {
    const int j = template_first_job_[template_index] + i;
    const int group = spec.gang_cardinality > 0 ? i / cardinality : i;
    jobs_[j].submit_time = start + spec.submit_interval * group;
    events_.push(Event{jobs_[j].submit_time, event_seq_++, EventType::kSubmit, j});
  }
}

// "pool cpu: no node of 10 matches: node selector gpu=a100 does not match (10)"
std::string Simulator::RejectionReason(int template_index) const {
  const JobTemplate& t = templates_[template_index];
  std::vector<std::string> per_pool;
  for (size_t p = 0; p < nodes_.size(); ++p) {
    std::map<std::string, int> reasons;
    for (const Node& node : nodes_[p]) {
      ++reasons[MatchNodeStatically(*t.task, t.requests, node).reason];
    }
    std::vector<std::string> parts;
    for (const auto& [reason, count] : reasons)
      parts.push_back(absl::StrCat(reason, " (", count, ")"));
    per_pool.push_back(
        absl::StrCat("pool ", cluster_.pools[p].name, ": none of ", nodes_[p].size(),
                     " nodes match: ", parts.empty() ? "no nodes" : absl::StrJoin(parts, ", ")));
  }
  return absl::StrJoin(per_pool, "; ");
}

Simulator::QueueKey Simulator::KeyOf(int job) const {
  const SimJob& j = jobs_[job];
  const JobTemplate& t = templates_[j.template_index];
  return QueueKey(-pool_configs_.front().priority_classes[t.priority_class].priority,
                  workload_.jobs[j.template_index].priority, j.submit_time, j.id, job);
}

void Simulator::Submit(int job) {
  SimJob& j = jobs_[job];
  if (!rejection_reasons_[j.template_index].empty()) {
    j.state = SimJobState::kRejected;
    j.reason = rejection_reasons_[j.template_index];
    j.end_time = now_;
    JobEnded(job);
    return;
  }
  j.state = SimJobState::kQueued;
  queued_[j.queue_index].insert(KeyOf(job));
  for (size_t p = 0; p < nodes_.size(); ++p) {
    if (template_fits_pool_[j.template_index][p]) {
      queued_demand_[j.queue_index][p].Add(templates_[j.template_index].requests);
    }
  }
}

void Simulator::StopRunning(int job, SimJobState state) {
  SimJob& j = jobs_[job];
  j.state = state;
  j.end_time = now_;
  running_[j.pool].erase(job);
  nodes_[j.pool][j.node].allocated.Subtract(templates_[j.template_index].requests);
  JobEnded(job);
}

void Simulator::Finish(int job) {
  SimJob& j = jobs_[job];
  // A preempted job's completion event is stale.
  if (j.state != SimJobState::kRunning || j.lease_time + j.duration != now_) return;
  StopRunning(job, SimJobState::kSucceeded);
}

void Simulator::ProcessEventsUntil(absl::Duration time) {
  while (!events_.empty() && events_.top().time <= time) {
    Event e = events_.top();
    events_.pop();
    now_ = e.time;
    if (e.type == EventType::kSubmit) {
      Submit(e.job);
    } else {
      Finish(e.job);
    }
  }
  now_ = time;
}

void Simulator::Run(const SimOptions& options) {
  const absl::Duration interval = options.sample_interval > absl::ZeroDuration()
                                      ? options.sample_interval
                                      : cluster_.cycle_period;
  const absl::Duration until = std::min(options.until, options.max_time);
  bool recorded_last = false;
  while (next_cycle_ <= until) {
    ProcessEventsUntil(next_cycle_);
    last_cycle_leases_ = RunCycle(options.record_cycles);
    recorded_last = false;
    if (now_ >= next_sample_) {
      Record();
      recorded_last = true;
      while (next_sample_ <= now_) next_sample_ += interval;
    }
    next_cycle_ += cluster_.cycle_period;
    if (options.until == absl::InfiniteDuration() && Idle()) break;
  }
  if (!recorded_last) Record();
}

bool Simulator::Idle() const {
  if (!events_.empty()) return false;
  for (const auto& running : running_) {
    if (!running.empty()) return false;
  }
  bool any_queued = false;
  for (const auto& queue : queued_) any_queued = any_queued || !queue.empty();
  if (!any_queued) return true;
  // Queued jobs remain with nothing running: only refilling buckets could still change that.
  bool buckets_full = global_bucket_->Full(At(now_));
  for (const TokenBucket& b : queue_buckets_) buckets_full = buckets_full && b.Full(At(now_));
  return last_cycle_leases_ == 0 && buckets_full;
}

int Simulator::RunCycle(bool record) {
  ++cycles_;
  int leases = 0;
  for (size_t p = 0; p < nodes_.size(); ++p) {
    round_leased_.assign(workload_.queues.size(), 0);
    round_preempted_.assign(workload_.queues.size(), 0);
    std::vector<RunningJob> running;
    running.reserve(running_[p].size());
    for (int job : running_[p]) {
      const SimJob& j = jobs_[job];
      running.push_back(RunningJob{.id = j.id,
                                   .queue = workload_.queues[j.queue_index].name,
                                   .tmpl = &templates_[j.template_index],
                                   .gang_id = j.gang_id,
                                   .node_index = j.node,
                                   .leased_time = absl::UnixEpoch() + j.lease_time});
    }
    PoolRoundInput input;
    input.pool = cluster_.pools[p].name;
    input.nodes = &nodes_[p];
    input.running = &running;
    input.config = pool_configs_[p];
    input.config.global_tokens = global_bucket_->Available(At(now_));
    for (size_t q = 0; q < workload_.queues.size(); ++q) {
      const QueueSpec& spec = workload_.queues[q];
      QueueInput queue;
      queue.name = spec.name;
      queue.weight = spec.weight;
      queue.cordoned = spec.cordoned;
      queue.queued_demand = queued_demand_[q][p];
      queue.jobs =
          std::make_unique<PoolQueueIterator>(*this, static_cast<int>(q), static_cast<int>(p));
      if (!queue_buckets_[q].unlimited()) {
        input.config.queue_tokens[spec.name] = queue_buckets_[q].Available(At(now_));
      }
      input.queues.push_back(std::move(queue));
    }
    PoolRoundResult result = schedule_(std::move(input));
    leases += ApplyResult(static_cast<int>(p), result);
    if (record) RecordCycle(static_cast<int>(p));
  }
  return leases;
}

void Simulator::RecordCycle(int pool) {
  const int num_queues = static_cast<int>(workload_.queues.size());
  std::vector<ResourceList> held(num_queues);
  std::vector<int> running(num_queues, 0);
  for (int job : running_[pool]) {
    held[jobs_[job].queue_index].Add(templates_[jobs_[job].template_index].requests);
    ++running[jobs_[job].queue_index];
  }
  for (int q = 0; q < num_queues; ++q) {
    cycle_records_.push_back(CycleRecord{.cycle = cycles_,
                                         .time = now_,
                                         .pool = pool,
                                         .queue = q,
                                         .share = DominantShare(pool, held[q]),
                                         .fair_share = last_fair_share_[pool][q],
                                         .adjusted_fair_share = last_adjusted_share_[pool][q],
                                         .running = running[q],
                                         .queued = static_cast<int>(queued_[q].size()),
                                         .leased = round_leased_[q],
                                         .preempted = round_preempted_[q]});
  }
}

int Simulator::ApplyResult(int pool, const PoolRoundResult& result) {
  absl::flat_hash_set<std::string> gangs_touched;
  for (const Preemption& preemption : result.preemptions) {
    auto it = job_by_id_.find(preemption.job_id);
    if (it == job_by_id_.end() || jobs_[it->second].state != SimJobState::kRunning ||
        jobs_[it->second].pool != pool) {
      Anomaly(absl::StrCat("preemption of ", preemption.job_id, ", not running in pool ",
                           cluster_.pools[pool].name));
      continue;
    }
    SimJob& j = jobs_[it->second];
    StopRunning(it->second, SimJobState::kPreempted);
    ++round_preempted_[j.queue_index];
    j.reason = preemption.reason;
    j.preemption_kind = preemption.kind;
    j.preempted_by_job = preemption.caused_by_job;
    j.preempted_by_queue = preemption.caused_by_queue;
    if (!j.gang_id.empty()) gangs_touched.insert(j.gang_id);
    preemptions_.push_back(PreemptionEvent{now_, pool, preemption});
  }
  int leases = 0;
  for (const Lease& lease : result.leases) {
    auto it = job_by_id_.find(lease.job_id);
    if (it == job_by_id_.end() || lease.node_index < 0 ||
        lease.node_index >= static_cast<int>(nodes_[pool].size())) {
      Anomaly(absl::StrCat("lease of unknown job ", lease.job_id, " or node ", lease.node_index));
      continue;
    }
    const int job = it->second;
    SimJob& j = jobs_[job];
    if (j.state == SimJobState::kRunning && j.pool == pool && j.node == lease.node_index) {
      continue;  // evicted and placed again on its node: it keeps running
    }
    if (j.state != SimJobState::kQueued) {
      Anomaly(absl::StrCat("lease of ", j.id, " in state ", SimJobStateName(j.state)));
      continue;
    }
    const ResourceList& requests = templates_[j.template_index].requests;
    queued_[j.queue_index].erase(KeyOf(job));
    for (size_t p = 0; p < nodes_.size(); ++p) {
      if (template_fits_pool_[j.template_index][p]) {
        queued_demand_[j.queue_index][p].Subtract(requests);
      }
    }
    j.state = SimJobState::kRunning;
    j.pool = pool;
    j.node = lease.node_index;
    j.lease_time = now_;
    j.reason.clear();
    running_[pool].insert(job);
    nodes_[pool][j.node].allocated.Add(requests);
    events_.push(Event{now_ + j.duration, event_seq_++, EventType::kFinish, job});
    if (!j.gang_id.empty()) gangs_touched.insert(j.gang_id);
    // Invariant: no lease beyond what the rate limits allowed.
    if (global_bucket_->Available(At(now_)) == 0) {
      Anomaly("more leases than the global rate limit allowed");
    }
    if (queue_buckets_[j.queue_index].Available(At(now_)) == 0) {
      Anomaly(absl::StrCat("more leases than queue ", workload_.queues[j.queue_index].name,
                           "'s rate limit allowed"));
    }
    global_bucket_->Take(1);
    queue_buckets_[j.queue_index].Take(1);
    ++round_leased_[j.queue_index];
    ++leases;
  }
  // The algorithm may report every queued job it looked at, every round: runs of one queue and
  // code share one map entry, and each entry's example text is copied once.
  std::pair<int64_t, std::string>* entry = nullptr;
  const Unschedulable* entry_latest = nullptr;
  for (const Unschedulable& u : result.unschedulable) {
    if (entry == nullptr || u.code != entry_latest->code || u.queue != entry_latest->queue) {
      if (entry != nullptr) entry->second = std::string(entry_latest->reason);
      entry = &unschedulable_[{pool, std::string(u.queue), u.code}];
    }
    ++entry->first;
    entry_latest = &u;
    auto it = job_by_id_.find(u.job_id);
    if (it != job_by_id_.end() && jobs_[it->second].state == SimJobState::kQueued) {
      jobs_[it->second].reason.assign(u.reason.data(), u.reason.size());
    }
  }
  if (entry != nullptr) entry->second = std::string(entry_latest->reason);
  for (size_t q = 0; q < result.queues.size() && q < workload_.queues.size(); ++q) {
    last_fair_share_[pool][q] = result.queues[q].fair_share;
    last_adjusted_share_[pool][q] = result.queues[q].adjusted_fair_share;
  }

  // Invariants: no node over its allocatable, gangs all-or-nothing.
  for (const Node& node : nodes_[pool]) {
    if (!node.allocated.FitsIn(node.allocatable)) {
      Anomaly(absl::StrCat("node ", node.id, " is over its allocatable"));
    }
  }
  for (const std::string& gang : gangs_touched) {
    const std::vector<int>& members = gang_members_[gang];
    int running = 0;
    for (int job : members) running += jobs_[job].state == SimJobState::kRunning;
    if (running != 0 && running != static_cast<int>(members.size())) {
      Anomaly(absl::StrCat("gang ", gang, " has ", running, " of ", members.size(),
                           " members running"));
    }
  }
  return leases;
}

double Simulator::DominantShare(int pool, const ResourceList& requests) const {
  double share = 0;
  const ResourceList& total = pool_totals_[pool];
  for (int r = 0; r < total.size(); ++r) {
    if (total.Get(r).milli() <= 0) continue;
    const auto& multipliers = pool_configs_.front().resource_multipliers;
    auto m = multipliers.find(r);
    const double multiplier = m == multipliers.end() ? 1.0 : m->second;
    share = std::max(share, multiplier * static_cast<double>(requests.Get(r).milli()) /
                                static_cast<double>(total.Get(r).milli()));
  }
  return share;
}

void Simulator::Record() {
  Sample sample;
  sample.time = now_;
  const int num_queues = static_cast<int>(workload_.queues.size());
  std::vector<int> queued(num_queues, 0);
  for (int q = 0; q < num_queues; ++q) queued[q] = static_cast<int>(queued_[q].size());
  for (size_t p = 0; p < nodes_.size(); ++p) {
    std::vector<ResourceList> held(num_queues);
    std::vector<int> running(num_queues, 0);
    for (int job : running_[p]) {
      held[jobs_[job].queue_index].Add(templates_[jobs_[job].template_index].requests);
      ++running[jobs_[job].queue_index];
    }
    for (int q = 0; q < num_queues; ++q) {
      sample.queues.push_back(QueueSample{.pool = static_cast<int>(p),
                                          .queue = q,
                                          .share = DominantShare(static_cast<int>(p), held[q]),
                                          .fair_share = last_fair_share_[p][q],
                                          .adjusted_fair_share = last_adjusted_share_[p][q],
                                          .running = running[q],
                                          .queued = queued[q]});
    }
    ResourceList allocated;
    for (const Node& node : nodes_[p]) allocated.Add(node.allocated);
    PoolSample pool_sample{.pool = static_cast<int>(p)};
    const ResourceList& total = pool_totals_[p];
    for (int r = 0; r < total.size(); ++r) {
      if (total.Get(r).milli() <= 0) continue;
      pool_sample.utilisation.emplace_back(r, static_cast<double>(allocated.Get(r).milli()) /
                                                  static_cast<double>(total.Get(r).milli()));
    }
    sample.pools.push_back(std::move(pool_sample));
  }
  samples_.push_back(std::move(sample));
}

std::vector<UnschedulableCount> Simulator::unschedulable() const {
  std::vector<UnschedulableCount> out;
  for (const auto& [key, value] : unschedulable_) {
    const auto& [pool, queue, code] = key;
    out.push_back(UnschedulableCount{pool, queue, code, value.second, value.first});
  }
  return out;
}

void Simulator::Anomaly(std::string text) {
  anomalies_.push_back(absl::StrCat("t=", absl::FormatDuration(now_), ": ", std::move(text)));
}

}  // namespace regatta::scheduler::sim
