#ifndef REGATTA_SRC_OBSERVABILITY_METRICS_H_
#define REGATTA_SRC_OBSERVABILITY_METRICS_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/support/status.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "src/eventlog/event_log.h"
#include "src/scheduler/scheduler.h"
#include "src/store/store.h"

namespace regatta::observability {

// Scrape-time families, computed from the platform's state when /metrics is read.
using Collector = std::function<std::vector<prometheus::MetricFamily>()>;

// The process's metrics (docs/metrics.md lists every one). Events (cycles, appends, requests,
// heartbeats, pipeline transitions) are counted here as they happen, once per cycle, append,
// request or ingest batch, never per job; gauges that describe state come from collectors at
// scrape time. Thread-safe.
class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // ---- Events ----
  void ObserveCycle(const scheduler::CycleReport& report);
  void ObserveAppend(eventlog::AppendWait wait, absl::Duration elapsed, bool ok);
  // One finished gRPC call; `method` is the full name ("/regatta.v1.SubmitService/SubmitJobs")
  // at a stable address (gRPC's registered name). Durations are kept for unary calls only: a
  // stream lasts as long as its watcher.
  void ObserveRequest(const char* method, grpc::StatusCode code, bool unary,
                      absl::Duration elapsed);
  void ObserveHeartbeat(absl::string_view executor_id);
  // Pipeline run and task state changes in an ingested batch (the ingest thread).
  void ObserveIngestBatch(const store::IngestBatch& batch);

  // Adds families computed at every Render.
  void AddCollector(Collector collector);
  // Everything in the Prometheus text exposition format (version 0.0.4).
  std::string Render() const;

 private:
  struct RequestSeries {
    prometheus::Counter* requests = nullptr;
    prometheus::Histogram* duration = nullptr;
  };
  RequestSeries& SeriesFor(const char* method, grpc::StatusCode code, bool unary);

  std::shared_ptr<prometheus::Registry> registry_;
  const absl::Time start_time_;

  prometheus::Family<prometheus::Histogram>& cycle_seconds_;
  prometheus::Family<prometheus::Counter>& cycles_;
  prometheus::Family<prometheus::Counter>& considered_;
  prometheus::Family<prometheus::Counter>& scheduled_;
  prometheus::Family<prometheus::Counter>& preempted_;
  prometheus::Family<prometheus::Counter>& outcomes_;
  prometheus::Family<prometheus::Histogram>& append_seconds_;
  prometheus::Family<prometheus::Counter>& append_errors_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Counter>& heartbeats_;
  prometheus::Family<prometheus::Counter>& pipeline_runs_;
  prometheus::Family<prometheus::Counter>& pipeline_tasks_;
  prometheus::Counter* cycles_ok_;
  prometheus::Counter* cycles_failed_;
  prometheus::Histogram* cycle_histogram_;
  prometheus::Histogram* durable_append_;
  prometheus::Histogram* visible_append_;

  // (method, code) -> series, so a request costs one map lookup, no label building.
  absl::Mutex series_mu_;
  absl::flat_hash_map<std::pair<const char*, int>, RequestSeries> series_
      ABSL_GUARDED_BY(series_mu_);

  // The state each pipeline run and task was last seen in (runs not yet ended), so a repeated
  // update of the same state is not counted again. Only the ingest thread touches it.
  struct RunStates {
    int state = 0;
    absl::flat_hash_map<std::string, int> tasks;  // task path -> state
  };
  absl::flat_hash_map<std::string, RunStates> runs_;

  mutable absl::Mutex collectors_mu_;
  std::vector<Collector> collectors_ ABSL_GUARDED_BY(collectors_mu_);
};

// Helpers for collectors: a family, and one sample of it.
prometheus::MetricFamily GaugeFamily(std::string name, std::string help);
prometheus::MetricFamily CounterFamily(std::string name, std::string help);
void AddSample(prometheus::MetricFamily& family,
               std::vector<std::pair<std::string, std::string>> labels, double value);

}  // namespace regatta::observability

#endif  // REGATTA_SRC_OBSERVABILITY_METRICS_H_
