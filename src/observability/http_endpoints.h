#ifndef REGATTA_SRC_OBSERVABILITY_HTTP_ENDPOINTS_H_
#define REGATTA_SRC_OBSERVABILITY_HTTP_ENDPOINTS_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "src/api/auth/authenticator.h"
#include "src/api/rest/http_message.h"
#include "src/api/rest/rest_server.h"
#include "src/common/clock.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/ingest/ingester.h"
#include "src/observability/metrics.h"
#include "src/scheduler/reports.h"

namespace regatta::observability {

// What GET /readyz checks. Pointers must outlive the endpoint.
struct ReadinessSources {
  eventlog::SqliteEventLog* log = nullptr;
  ingest::Ingester* ingester = nullptr;
  const scheduler::SchedulingReports* reports = nullptr;
  // True from the end of startup until shutdown begins.
  const std::atomic<bool>* serving = nullptr;
  const Clock* clock = nullptr;
  // Not ready while the oldest record the views have not applied is older than this.
  absl::Duration max_view_lag = absl::Seconds(30);
};

// One line per check, Kubernetes style ("[+]log ok", "[-]views failed: ..."), then the
// verdict. 200 when every check passes, else 503.
rest::HttpResponse Readiness(const ReadinessSources& sources);

struct MetricsEndpointOptions {
  const Metrics* metrics = nullptr;
  // With require_auth, a request must authenticate (any principal; anonymous when anonymous
  // access is on); else 401.
  bool require_auth = false;
  const auth::Authenticator* authenticator = nullptr;
};

// GET /metrics in the Prometheus text format.
rest::HttpResponse MetricsPage(const MetricsEndpointOptions& options,
                               const rest::HttpRequest& request);

// The /metrics and /readyz routes for RestOptions::plain_routes.
std::vector<rest::PlainRoute> ObservabilityRoutes(MetricsEndpointOptions metrics,
                                                  ReadinessSources readiness);

}  // namespace regatta::observability

#endif  // REGATTA_SRC_OBSERVABILITY_HTTP_ENDPOINTS_H_
