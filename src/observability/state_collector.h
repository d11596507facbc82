#ifndef REGATTA_SRC_OBSERVABILITY_STATE_COLLECTOR_H_
#define REGATTA_SRC_OBSERVABILITY_STATE_COLLECTOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "prometheus/metric_family.h"
#include "src/common/clock.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/ingest/ingester.h"
#include "src/pipelines/engine/engine.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/reports.h"
#include "src/scheduler/scheduler.h"
#include "src/store/store.h"

namespace regatta::observability {

// What the scrape-time gauges read. Every pointer must outlive the collector's use (the
// platform stops serving /metrics before it tears these down); a null one leaves its
// families out.
struct StateSources {
  scheduler::Scheduler* scheduler = nullptr;  // its JobDb: jobs per queue, class and state
  const scheduler::SchedulingReports* reports = nullptr;  // shares per pool and queue
  const scheduler::ExecutorRegistry* executors = nullptr;
  store::Store* store = nullptr;  // queues, Instances
  eventlog::SqliteEventLog* log = nullptr;
  ingest::Ingester* ingester = nullptr;  // the views' ingester
  std::string consumer = "query";
  pipelines::engine::PipelineEngine* engine = nullptr;
  const Clock* clock = nullptr;
  // Executors silent for longer count as down.
  absl::Duration executor_timeout = absl::Seconds(30);
};

// How far the views are behind the log: records not yet applied, and the age of the oldest of
// them (from its first event's creation time; zero when caught up).
struct ViewLag {
  int64_t records = 0;
  absl::Duration age;
};
absl::StatusOr<ViewLag> MeasureViewLag(eventlog::EventLog* log, int64_t ingested_offset,
                                       absl::Time now);

// The gauges (and counters kept by the sources themselves) describing the platform's state
// now: queues, jobs, shares, executors and nodes, the log and the views, pipelines, devices.
// A source that cannot be read (the store failing) leaves its families out.
std::vector<prometheus::MetricFamily> CollectState(const StateSources& sources);

}  // namespace regatta::observability

#endif  // REGATTA_SRC_OBSERVABILITY_STATE_COLLECTOR_H_
