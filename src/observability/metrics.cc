#include "src/observability/metrics.h"

#include <variant>

#include "prometheus/text_serializer.h"
#include "regatta/v1/pipelines.pb.h"
#include "src/api/rest/errors.h"
#include "src/store/pipeline_views.h"

#ifndef REGATTA_VERSION
#define REGATTA_VERSION "unknown"
#endif

namespace regatta::observability {
namespace {

using prometheus::BuildCounter;
using prometheus::BuildHistogram;

// Seconds, 100 µs to 10 s: cycles and appends take a few milliseconds when all is well.
const prometheus::Histogram::BucketBoundaries& FastBuckets() {
  static const auto* kBuckets = new prometheus::Histogram::BucketBoundaries{
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
  return *kBuckets;
}

// Seconds, 500 µs to 60 s: API calls include waiting for the log and the views.
const prometheus::Histogram::BucketBoundaries& RequestBuckets() {
  static const auto* kBuckets = new prometheus::Histogram::BucketBoundaries{
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};
  return *kBuckets;
}

// "/regatta.v1.SubmitService/SubmitJobs" -> ("regatta.v1.SubmitService", "SubmitJobs").
std::pair<std::string, std::string> SplitMethod(absl::string_view full) {
  if (!full.empty() && full.front() == '/') full.remove_prefix(1);
  const size_t slash = full.rfind('/');
  if (slash == absl::string_view::npos) return {"", std::string(full)};
  return {std::string(full.substr(0, slash)), std::string(full.substr(slash + 1))};
}

std::string RunStateLabel(int state) {
  std::string name = regatta::v1::PipelineRunState_Name(state);
  constexpr absl::string_view kPrefix = "PIPELINE_RUN_STATE_";
  if (absl::string_view(name).substr(0, kPrefix.size()) == kPrefix) name.erase(0, kPrefix.size());
  return name;
}

std::string TaskStateLabel(int state) {
  std::string name = regatta::v1::PipelineTaskState_Name(state);
  constexpr absl::string_view kPrefix = "PIPELINE_TASK_STATE_";
  if (absl::string_view(name).substr(0, kPrefix.size()) == kPrefix) name.erase(0, kPrefix.size());
  return name;
}

bool RunEnded(int state) {
  return state == regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED ||
         state == regatta::v1::PIPELINE_RUN_STATE_SKIPPED ||
         state == regatta::v1::PIPELINE_RUN_STATE_FAILED ||
         state == regatta::v1::PIPELINE_RUN_STATE_CANCELED;
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      start_time_(absl::Now()),
      cycle_seconds_(BuildHistogram()
                         .Name("regatta_scheduler_cycle_seconds")
                         .Help("Wall time of each scheduling cycle (load, decide, place, publish)")
                         .Register(*registry_)),
      cycles_(BuildCounter()
                  .Name("regatta_scheduler_cycles_total")
                  .Help("Scheduling cycles run, by result (ok, error)")
                  .Register(*registry_)),
      considered_(BuildCounter()
                      .Name("regatta_scheduler_considered_jobs_total")
                      .Help("Queued jobs the scheduling rounds looked at, by pool")
                      .Register(*registry_)),
      scheduled_(BuildCounter()
                     .Name("regatta_scheduler_scheduled_jobs_total")
                     .Help("Jobs leased to a node, by pool and queue")
                     .Register(*registry_)),
      preempted_(BuildCounter()
                     .Name("regatta_scheduler_preempted_jobs_total")
                     .Help("Jobs preempted (urgency, fair share or on request), by queue")
                     .Register(*registry_)),
      outcomes_(BuildCounter()
                    .Name("regatta_scheduler_job_outcomes_total")
                    .Help("Job outcomes the scheduler published, by queue and outcome "
                          "(succeeded, failed, cancelled, rejected, requeued, lease_expired)")
                    .Register(*registry_)),
      append_seconds_(BuildHistogram()
                          .Name("regatta_eventlog_append_seconds")
                          .Help("Time an append to the event log took, by wait (durable: "
                                "until fsync'd; visible: until committed)")
                          .Register(*registry_)),
      append_errors_(BuildCounter()
                         .Name("regatta_eventlog_append_errors_total")
                         .Help("Appends to the event log that failed, by wait")
                         .Register(*registry_)),
      requests_(BuildCounter()
                    .Name("regatta_api_requests_total")
                    .Help("gRPC calls handled (REST calls included), by service, method and code")
                    .Register(*registry_)),
      request_seconds_(BuildHistogram()
                           .Name("regatta_api_request_duration_seconds")
                           .Help("Time to answer a unary gRPC call (REST calls included), by "
                                 "service, method and code")
                           .Register(*registry_)),
      heartbeats_(BuildCounter()
                      .Name("regatta_executor_heartbeats_total")
                      .Help("Lease requests (heartbeats) received, by executor")
                      .Register(*registry_)),
      pipeline_runs_(BuildCounter()
                         .Name("regatta_pipeline_runs_total")
                         .Help("Pipeline runs that entered a state, by state")
                         .Register(*registry_)),
      pipeline_tasks_(BuildCounter()
                          .Name("regatta_pipeline_tasks_total")
                          .Help("Pipeline tasks that entered a state, by state")
                          .Register(*registry_)),
      cycles_ok_(&cycles_.Add({{"result", "ok"}})),
      cycles_failed_(&cycles_.Add({{"result", "error"}})),
      cycle_histogram_(&cycle_seconds_.Add({}, FastBuckets())),
      durable_append_(&append_seconds_.Add({{"wait", "durable"}}, FastBuckets())),
      visible_append_(&append_seconds_.Add({{"wait", "visible"}}, FastBuckets())) {
  // Shown at 0 from the start, so an error rate reads 0 rather than missing.
  append_errors_.Add({{"wait", "durable"}});
  append_errors_.Add({{"wait", "visible"}});
}

Metrics::~Metrics() = default;

void Metrics::ObserveCycle(const scheduler::CycleReport& report) {
  (report.ok ? cycles_ok_ : cycles_failed_)->Increment();
  if (!report.ok) return;
  cycle_histogram_->Observe(absl::ToDoubleSeconds(report.duration));
  for (const scheduler::CycleReport::Round& round : report.rounds) {
    considered_.Add({{"pool", round.pool}}).Increment(round.jobs_considered);
  }
  for (const scheduler::CycleReport::Published& p : report.published) {
    const double n = static_cast<double>(p.count);
    const absl::string_view event = p.event;
    if (event == "leased") {
      scheduled_.Add({{"pool", p.pool}, {"queue", p.queue}}).Increment(n);
    } else if (event == "preempted") {
      preempted_.Add({{"queue", p.queue}}).Increment(n);
    } else {
      outcomes_.Add({{"queue", p.queue}, {"outcome", p.event}}).Increment(n);
    }
  }
}

void Metrics::ObserveAppend(eventlog::AppendWait wait, absl::Duration elapsed, bool ok) {
  const bool durable = wait == eventlog::AppendWait::kDurable;
  if (!ok) {
    append_errors_.Add({{"wait", durable ? "durable" : "visible"}}).Increment();
    return;
  }
  (durable ? durable_append_ : visible_append_)->Observe(absl::ToDoubleSeconds(elapsed));
}

Metrics::RequestSeries& Metrics::SeriesFor(const char* method, grpc::StatusCode code, bool unary) {
  const std::pair<const char*, int> key(method, static_cast<int>(code));
  absl::MutexLock lock(&series_mu_);
  auto [it, inserted] = series_.try_emplace(key);
  if (inserted) {
    auto [service, name] = SplitMethod(method);
    const prometheus::Labels labels{
        {"service", service}, {"method", name}, {"code", std::string(rest::GrpcCodeName(code))}};
    it->second.requests = &requests_.Add(labels);
    if (unary) it->second.duration = &request_seconds_.Add(labels, RequestBuckets());
  }
  return it->second;
}

void Metrics::ObserveRequest(const char* method, grpc::StatusCode code, bool unary,
                             absl::Duration elapsed) {
  RequestSeries& series = SeriesFor(method, code, unary);
  series.requests->Increment();
  if (series.duration != nullptr) series.duration->Observe(absl::ToDoubleSeconds(elapsed));
}

void Metrics::ObserveHeartbeat(absl::string_view executor_id) {
  heartbeats_.Add({{"executor", std::string(executor_id)}}).Increment();
}

void Metrics::ObserveIngestBatch(const store::IngestBatch& batch) {
  for (const store::OffsetMutation& m : batch.mutations) {
    const auto* change = std::get_if<store::PipelineChange>(&m.mutation);
    if (change == nullptr) continue;
    const regatta::v1::Event& event = change->event;
    switch (event.event_case()) {
      case regatta::v1::Event::kPipelineRunCreated: {
        const regatta::v1::PipelineRun& run = event.pipeline_run_created().run();
        const int state = run.state() == regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED
                              ? regatta::v1::PIPELINE_RUN_STATE_PENDING
                              : run.state();
        auto [it, inserted] = runs_.try_emplace(run.id());
        if (!inserted && it->second.state == state) break;
        it->second.state = state;
        pipeline_runs_.Add({{"state", RunStateLabel(state)}}).Increment();
        break;
      }
      case regatta::v1::Event::kPipelineRunUpdated: {
        const regatta::v1::PipelineRunUpdated& update = event.pipeline_run_updated();
        const int state = update.state();
        if (state == regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED) break;
        auto it = runs_.find(update.run_id());
        const bool same = it != runs_.end() && it->second.state == state;
        if (!same) pipeline_runs_.Add({{"state", RunStateLabel(state)}}).Increment();
        if (RunEnded(state)) {
          if (it != runs_.end()) runs_.erase(it);
        } else if (it == runs_.end()) {
          runs_[update.run_id()].state = state;
        } else {
          it->second.state = state;
        }
        break;
      }
      case regatta::v1::Event::kPipelineTaskUpdated: {
        const regatta::v1::PipelineTaskUpdated& update = event.pipeline_task_updated();
        const int state = update.task().state();
        if (state == regatta::v1::PIPELINE_TASK_STATE_UNSPECIFIED) break;
        // A task update after its run ended (late progress) counts once; the run is not
        // remembered again.
        auto run = runs_.find(update.run_id());
        if (run == runs_.end()) {
          pipeline_tasks_.Add({{"state", TaskStateLabel(state)}}).Increment();
          break;
        }
        auto [task, inserted] = run->second.tasks.try_emplace(update.task().path(), state);
        if (!inserted && task->second == state) break;
        task->second = state;
        pipeline_tasks_.Add({{"state", TaskStateLabel(state)}}).Increment();
        break;
      }
      case regatta::v1::Event::kPipelineRunDeleted:
        runs_.erase(event.pipeline_run_deleted().run_id());
        break;
      default:
        break;
    }
  }
}

void Metrics::AddCollector(Collector collector) {
  absl::MutexLock lock(&collectors_mu_);
  collectors_.push_back(std::move(collector));
}

std::string Metrics::Render() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  prometheus::MetricFamily build = GaugeFamily(
      "regatta_build_info", "Always 1; the version label says which Regatta is running");
  AddSample(build, {{"version", REGATTA_VERSION}}, 1);
  families.push_back(std::move(build));
  prometheus::MetricFamily start = GaugeFamily(
      "process_start_time_seconds", "Start time of the process since the Unix epoch in seconds");
  AddSample(start, {}, absl::ToDoubleSeconds(start_time_ - absl::UnixEpoch()));
  families.push_back(std::move(start));
  {
    absl::MutexLock lock(&collectors_mu_);
    for (const Collector& collect : collectors_) {
      std::vector<prometheus::MetricFamily> more = collect();
      families.insert(families.end(), std::make_move_iterator(more.begin()),
                      std::make_move_iterator(more.end()));
    }
  }
  return prometheus::TextSerializer().Serialize(families);
}

prometheus::MetricFamily GaugeFamily(std::string name, std::string help) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Gauge;
  return family;
}

prometheus::MetricFamily CounterFamily(std::string name, std::string help) {
  prometheus::MetricFamily family = GaugeFamily(std::move(name), std::move(help));
  family.type = prometheus::MetricType::Counter;
  return family;
}

void AddSample(prometheus::MetricFamily& family,
               std::vector<std::pair<std::string, std::string>> labels, double value) {
  prometheus::ClientMetric metric;
  for (auto& [name, label_value] : labels) {
    metric.label.push_back({std::move(name), std::move(label_value)});
  }
  if (family.type == prometheus::MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

}  // namespace regatta::observability
