#include "src/observability/state_collector.h"

#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "src/common/resources.h"
#include "src/observability/metrics.h"
#include "src/store/list_all.h"

namespace regatta::observability {
namespace {

using Families = std::vector<prometheus::MetricFamily>;

double Seconds(absl::Time t) { return absl::ToDoubleSeconds(t - absl::UnixEpoch()); }

std::string JobStateLabel(regatta::v1::JobState state) {
  std::string name = regatta::v1::JobState_Name(state);
  constexpr absl::string_view kPrefix = "JOB_STATE_";
  if (absl::string_view(name).substr(0, kPrefix.size()) == kPrefix) name.erase(0, kPrefix.size());
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

// Quantities in base units (cores, bytes), as Prometheus expects.
void AddResources(prometheus::MetricFamily& family,
                  const std::vector<std::pair<std::string, std::string>>& labels,
                  const ResourceList& resources) {
  for (int i = 0; i < resources.size(); ++i) {
    const int64_t milli = resources.Get(i).milli();
    if (milli == 0) continue;
    auto with = labels;
    with.emplace_back("resource", ResourceNames::Global().Name(i));
    AddSample(family, std::move(with), static_cast<double>(milli) / 1000.0);
  }
}

void CollectQueues(const StateSources& s, Families& out) {
  // Every known queue shows, with 0 when it has nothing queued.
  std::vector<regatta::v1::Queue> queues;
  if (s.store != nullptr) {
    std::string after;
    while (true) {
      absl::StatusOr<std::vector<regatta::v1::Queue>> page = s.store->ListQueues(after, 500);
      if (!page.ok()) break;
      for (regatta::v1::Queue& q : *page) queues.push_back(std::move(q));
      if (page->size() < 500) break;
      after = queues.back().name();
    }
  }
  // (queue, priority class, state) -> jobs; (queue, pool) -> resources held; queue -> queued.
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> jobs;
  std::map<std::pair<std::string, std::string>, ResourceList> allocated;
  std::map<std::string, ResourceList> queued_resources;
  std::map<std::string, int64_t> queued;
  if (s.scheduler != nullptr) {
    const scheduler::JobDb& db = s.scheduler->job_db();
    // Counted into maps keyed by interned pointers under the lock; strings built after.
    absl::flat_hash_map<std::tuple<const std::string*, const std::string*, int>, int64_t> counts;
    absl::flat_hash_map<std::pair<const std::string*, std::string>, ResourceList> held;
    absl::flat_hash_map<const std::string*, ResourceList> waiting;
    {
      absl::ReaderMutexLock lock(&db.mutex());
      db.ForEachJob([&](const scheduler::JobRecord& job) {
        if (job.deleted || job.tmpl == nullptr) return;
        if (!job.terminal()) {
          ++counts[{job.queue_name, &job.tmpl->spec.priority_class(), job.state}];
          if (job.queued()) waiting[job.queue_name].Add(job.requests());
        }
        const scheduler::RunRecord* run = job.latest_run();
        if (run != nullptr && run->active()) held[{job.queue_name, run->pool}].Add(job.requests());
      });
    }
    for (const auto& [key, n] : counts) {
      const auto& [queue, priority_class, state] = key;
      const std::string label = JobStateLabel(static_cast<regatta::v1::JobState>(state));
      jobs[{*queue, *priority_class, label}] += n;
      if (state == regatta::v1::JOB_STATE_QUEUED) queued[*queue] += n;
    }
    for (auto& [key, resources] : held) allocated[{*key.first, key.second}].Add(resources);
    for (auto& [queue, resources] : waiting) queued_resources[*queue].Add(resources);
  }

  prometheus::MetricFamily size = GaugeFamily(
      "regatta_queue_size", "Queued jobs (waiting for a lease), by queue; 0 for an empty queue");
  prometheus::MetricFamily factor =
      GaugeFamily("regatta_queue_priority_factor", "The queue's priority factor (weight = 1/it)");
  prometheus::MetricFamily cordoned =
      GaugeFamily("regatta_queue_cordoned", "1 if the queue is cordoned (takes no new jobs)");
  for (const regatta::v1::Queue& q : queues) {
    auto it = queued.find(q.name());
    AddSample(size, {{"queue", q.name()}},
              it == queued.end() ? 0 : static_cast<double>(it->second));
    AddSample(factor, {{"queue", q.name()}}, q.priority_factor());
    AddSample(cordoned, {{"queue", q.name()}}, q.cordoned() ? 1 : 0);
    if (it != queued.end()) queued.erase(it);
  }
  // Jobs of a queue deleted meanwhile (being cancelled) still show.
  for (const auto& [queue, n] : queued) AddSample(size, {{"queue", queue}}, static_cast<double>(n));
  prometheus::MetricFamily by_state = GaugeFamily(
      "regatta_queue_jobs",
      "Jobs the scheduler holds that have not ended, by queue, priority class and state "
      "(queued, leased, pending, running)");
  for (const auto& [key, n] : jobs) {
    const auto& [queue, priority_class, state] = key;
    AddSample(by_state, {{"queue", queue}, {"priority_class", priority_class}, {"state", state}},
              static_cast<double>(n));
  }
  prometheus::MetricFamily resource_queued = GaugeFamily(
      "regatta_queue_resource_queued", "Resources requested by queued jobs, by queue and resource");
  for (const auto& [queue, resources] : queued_resources) {
    AddResources(resource_queued, {{"queue", queue}}, resources);
  }
  prometheus::MetricFamily resource_allocated =
      GaugeFamily("regatta_queue_resource_allocated",
                  "Resources held by the active runs of the queue's jobs, by queue, pool and "
                  "resource");
  for (const auto& [key, resources] : allocated) {
    AddResources(resource_allocated, {{"queue", key.first}, {"pool", key.second}}, resources);
  }
  for (auto* f : {&size, &factor, &cordoned, &by_state, &resource_queued, &resource_allocated}) {
    out.push_back(std::move(*f));
  }
}

void CollectShares(const StateSources& s, Families& out) {
  if (s.reports == nullptr) return;
  prometheus::MetricFamily fair = GaugeFamily(
      "regatta_scheduler_fair_share",
      "The queue's fair share of the pool (weight over the active queues' weights), as of the "
      "latest round");
  prometheus::MetricFamily adjusted =
      GaugeFamily("regatta_scheduler_adjusted_fair_share",
                  "The queue's fair share after the share queues with little demand leave unused");
  prometheus::MetricFamily actual =
      GaugeFamily("regatta_scheduler_actual_share",
                  "The queue's dominant resource share of the pool after the latest round");
  prometheus::MetricFamily demand = GaugeFamily(
      "regatta_scheduler_demand", "The queue's demand (running + queued) as a dominant share");
  for (const scheduler::QueueShareReport& q : s.reports->Queues()) {
    const std::vector<std::pair<std::string, std::string>> labels{{"pool", q.pool},
                                                                  {"queue", q.queue}};
    AddSample(fair, labels, q.fair_share);
    AddSample(adjusted, labels, q.adjusted_fair_share);
    AddSample(actual, labels, q.actual_share);
    AddSample(demand, labels, q.demand_share);
  }
  prometheus::MetricFamily ready = GaugeFamily(
      "regatta_scheduler_ready", "1 once the scheduler has completed a cycle as leader");
  AddSample(ready, {}, s.reports->ready() ? 1 : 0);
  for (auto* f : {&fair, &adjusted, &actual, &demand, &ready}) out.push_back(std::move(*f));
}

void CollectExecutors(const StateSources& s, Families& out) {
  if (s.executors == nullptr) return;
  const absl::Time now = s.clock != nullptr ? s.clock->Now() : absl::Now();
  prometheus::MetricFamily up = GaugeFamily(
      "regatta_executor_up", "1 if the executor was heard from within the executor timeout");
  prometheus::MetricFamily last =
      GaugeFamily("regatta_executor_last_heartbeat_timestamp_seconds",
                  "When the executor last sent a lease request (its heartbeat), Unix time");
  prometheus::MetricFamily nodes =
      GaugeFamily("regatta_executor_nodes", "Nodes the executor reported, by executor and pool");
  prometheus::MetricFamily runs =
      GaugeFamily("regatta_executor_runs", "Runs the executor said it holds");
  prometheus::MetricFamily pool_nodes =
      GaugeFamily("regatta_pool_nodes", "Schedulable nodes of live executors, by pool");
  prometheus::MetricFamily capacity = GaugeFamily(
      "regatta_pool_capacity", "Allocatable resources of live executors' nodes, by pool");
  std::map<std::string, int64_t> schedulable;
  std::map<std::string, ResourceList> allocatable;
  for (const scheduler::ExecutorState& e : s.executors->Snapshot()) {
    const bool live = now - e.last_seen <= s.executor_timeout;
    AddSample(up, {{"executor", e.id}}, live ? 1 : 0);
    AddSample(last, {{"executor", e.id}}, Seconds(e.last_seen));
    AddSample(runs, {{"executor", e.id}}, static_cast<double>(e.runs.size()));
    std::map<std::string, int64_t> by_pool;
    for (const scheduler::Node& node : e.nodes) {
      ++by_pool[node.pool];
      if (!live || node.unschedulable) continue;
      ++schedulable[node.pool];
      allocatable[node.pool].Add(node.allocatable);
    }
    for (const auto& [pool, n] : by_pool) {
      AddSample(nodes, {{"executor", e.id}, {"pool", pool}}, static_cast<double>(n));
    }
  }
  for (const auto& [pool, n] : schedulable) {
    AddSample(pool_nodes, {{"pool", pool}}, static_cast<double>(n));
  }
  for (const auto& [pool, resources] : allocatable) {
    AddResources(capacity, {{"pool", pool}}, resources);
  }
  for (auto* f : {&up, &last, &nodes, &runs, &pool_nodes, &capacity}) out.push_back(std::move(*f));
}

void CollectLog(const StateSources& s, Families& out) {
  if (s.log == nullptr) return;
  const eventlog::SqliteEventLog::Stats stats = s.log->GetStats();
  const int64_t last_offset = s.log->LastOffset();
  prometheus::MetricFamily last =
      GaugeFamily("regatta_eventlog_last_offset", "Offset of the event log's last visible record");
  AddSample(last, {}, static_cast<double>(last_offset));
  prometheus::MetricFamily durable = GaugeFamily("regatta_eventlog_durable_offset",
                                                 "Offset of the event log's last durable record");
  AddSample(durable, {}, static_cast<double>(s.log->DurableOffset()));
  prometheus::MetricFamily records =
      CounterFamily("regatta_eventlog_records_total", "Records (event sequences) appended");
  AddSample(records, {}, static_cast<double>(stats.records));
  prometheus::MetricFamily commits =
      CounterFamily("regatta_eventlog_commits_total", "Transactions the event log committed");
  AddSample(commits, {}, static_cast<double>(stats.commits));
  prometheus::MetricFamily syncs =
      CounterFamily("regatta_eventlog_syncs_total", "fdatasyncs that made records durable");
  AddSample(syncs, {}, static_cast<double>(stats.syncs));
  for (auto* f : {&last, &durable, &records, &commits, &syncs}) out.push_back(std::move(*f));

  if (s.ingester == nullptr) return;
  const int64_t ingested = s.ingester->IngestedOffset();
  prometheus::MetricFamily offset = GaugeFamily(
      "regatta_ingest_offset", "Offset of the last log record the views applied, by consumer");
  AddSample(offset, {{"consumer", s.consumer}}, static_cast<double>(ingested));
  out.push_back(std::move(offset));
  const absl::Time now = s.clock != nullptr ? s.clock->Now() : absl::Now();
  absl::StatusOr<ViewLag> lag = MeasureViewLag(s.log, ingested, now);
  if (!lag.ok()) return;
  prometheus::MetricFamily lag_records = GaugeFamily(
      "regatta_ingest_lag_records", "Log records the views have not applied yet, by consumer");
  AddSample(lag_records, {{"consumer", s.consumer}}, static_cast<double>(lag->records));
  prometheus::MetricFamily lag_seconds = GaugeFamily(
      "regatta_ingest_lag_seconds",
      "Age of the oldest log record the views have not applied (0 when caught up), by consumer");
  AddSample(lag_seconds, {{"consumer", s.consumer}}, absl::ToDoubleSeconds(lag->age));
  out.push_back(std::move(lag_records));
  out.push_back(std::move(lag_seconds));
}

void CollectPipelinesAndDevices(const StateSources& s, Families& out) {
  if (s.engine != nullptr) {
    prometheus::MetricFamily active = GaugeFamily(
        "regatta_pipeline_active_runs", "Pipeline runs the engine is driving (not yet ended)");
    AddSample(active, {}, s.engine->ActiveRunCount());
    out.push_back(std::move(active));
  }
  if (s.store == nullptr) return;
  absl::StatusOr<std::vector<regatta::v1::Instance>> instances =
      store::ListAll<regatta::v1::Instance>([&](const store::PageRequest& page) {
        store::InstanceFilter filter;
        filter.page = page;
        return s.store->ListInstances(filter);
      });
  if (!instances.ok()) return;
  std::map<std::string, int64_t> count;
  std::map<std::pair<std::string, std::string>, int64_t> slots;
  std::map<std::string, int64_t> unseen;
  for (const regatta::v1::Instance& instance : *instances) {
    const std::string& configuration = instance.configuration_name();
    ++count[configuration];
    if (instance.nodes().empty()) ++unseen[configuration];
    for (const auto& [slot, holder] : instance.device_usage()) {
      ++slots[{configuration, holder.empty() ? "free" : "used"}];
    }
  }
  prometheus::MetricFamily instances_family = GaugeFamily(
      "regatta_device_instances", "Device Instances (discovered devices), by Configuration");
  prometheus::MetricFamily unseen_family = GaugeFamily(
      "regatta_device_instances_unseen", "Instances no node sees now, by Configuration");
  prometheus::MetricFamily slots_family =
      GaugeFamily("regatta_device_instance_slots",
                  "Instance capacity slots, by Configuration and state "
                  "(free, used)");
  for (const auto& [configuration, n] : count) {
    AddSample(instances_family, {{"configuration", configuration}}, static_cast<double>(n));
    auto it = unseen.find(configuration);
    AddSample(unseen_family, {{"configuration", configuration}},
              it == unseen.end() ? 0 : static_cast<double>(it->second));
  }
  for (const auto& [key, n] : slots) {
    AddSample(slots_family, {{"configuration", key.first}, {"state", key.second}},
              static_cast<double>(n));
  }
  out.push_back(std::move(instances_family));
  out.push_back(std::move(unseen_family));
  out.push_back(std::move(slots_family));
}

}  // namespace

absl::StatusOr<ViewLag> MeasureViewLag(eventlog::EventLog* log, int64_t ingested_offset,
                                       absl::Time now) {
  ViewLag lag;
  lag.records = std::max<int64_t>(0, log->LastOffset() - ingested_offset);
  if (lag.records == 0) return lag;
  absl::StatusOr<std::vector<eventlog::LogRecord>> next = log->Read(ingested_offset, 1);
  if (!next.ok()) return next.status();
  if (next->empty() || next->front().sequence.events().empty()) return lag;
  const google::protobuf::Timestamp& created = next->front().sequence.events(0).created();
  const absl::Time at =
      absl::FromUnixSeconds(created.seconds()) + absl::Nanoseconds(created.nanos());
  lag.age = std::max(absl::ZeroDuration(), now - at);
  return lag;
}

std::vector<prometheus::MetricFamily> CollectState(const StateSources& sources) {
  Families out;
  CollectQueues(sources, out);
  CollectShares(sources, out);
  CollectExecutors(sources, out);
  CollectLog(sources, out);
  CollectPipelinesAndDevices(sources, out);
  return out;
}

}  // namespace regatta::observability
