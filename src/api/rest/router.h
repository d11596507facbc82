#ifndef REGATTA_SRC_API_REST_ROUTER_H_
#define REGATTA_SRC_API_REST_ROUTER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::rest {

// Every route of the REST mapping.
enum class RouteId {
  kHealthz,
  kVersion,
  kCreateQueue,
  kListQueues,
  kGetQueue,
  kUpdateQueue,
  kDeleteQueue,
  kCordonQueue,
  kUncordonQueue,
  kSubmitJobs,
  kCancelJobs,
  kCancelJobSet,
  kReprioritizeJobs,
  kPreemptJobs,
  kCancelQueueJobs,      // POST /v1/queues/{name}:cancel
  kPreemptQueueJobs,     // POST /v1/queues/{name}:preempt
  kCancelExecutorJobs,   // POST /v1/executors/{id}:cancel
  kPreemptExecutorJobs,  // POST /v1/executors/{id}:preempt
  kJobStatus,            // POST /v1/jobs:status
  kGetJobStatus,         // GET /v1/jobs/{id}/status
  kJobDetails,           // POST /v1/jobs:details
  kGetJobDetails,        // GET /v1/jobs/{id}
  kListJobs,             // POST /v1/jobs:list
  kGetListJobs,          // GET /v1/jobs
  kGetJobLogs,           // GET /v1/jobs/{id}/logs
  kGetJobReport,         // GET /v1/jobs/{id}/report
  kQueueReport,          // GET /v1/reports/queues
  kJobSetEvents,
  // Pipelines (PipelineService and RunService; gateway_pipelines.cc).
  kCreatePipeline,         // POST /v1/pipelines
  kListPipelines,          // GET /v1/pipelines
  kGetPipeline,            // GET /v1/pipelines/{id}
  kDeletePipeline,         // DELETE /v1/pipelines/{id}
  kCreatePipelineVersion,  // POST /v1/pipelines/{id}/versions
  kListPipelineVersions,   // GET /v1/pipelines/{id}/versions
  kGetPipelineVersion,     // GET /v1/pipeline_versions/{id}
  kDeletePipelineVersion,  // DELETE /v1/pipeline_versions/{id}
  kCreateExperiment,       // POST /v1/experiments
  kListExperiments,        // GET /v1/experiments
  kGetExperiment,          // GET /v1/experiments/{id}
  kDeleteExperiment,       // DELETE /v1/experiments/{id}
  kArchiveExperiment,      // POST /v1/experiments/{id}:archive
  kUnarchiveExperiment,    // POST /v1/experiments/{id}:unarchive
  kGetArtifact,            // GET /v1/artifacts/{id}
  kGetArtifactLineage,     // GET /v1/artifacts/{id}:lineage
  kListRunArtifacts,       // GET /v1/runs/{id}/artifacts
  kListCacheEntries,       // GET /v1/cache
  kPruneCache,             // POST /v1/cache:prune
  kCreateRun,              // POST /v1/runs
  kListRuns,               // GET /v1/runs
  kGetRun,                 // GET /v1/runs/{id}
  kDeleteRun,              // DELETE /v1/runs/{id}
  kTerminateRun,           // POST /v1/runs/{id}:terminate
  kRetryRun,               // POST /v1/runs/{id}:retry
  kArchiveRun,             // POST /v1/runs/{id}:archive
  kUnarchiveRun,           // POST /v1/runs/{id}:unarchive
  kCreateRecurringRun,     // POST /v1/recurringruns
  kListRecurringRuns,      // GET /v1/recurringruns
  kGetRecurringRun,        // GET /v1/recurringruns/{id}
  kDeleteRecurringRun,     // DELETE /v1/recurringruns/{id}
  kEnableRecurringRun,     // POST /v1/recurringruns/{id}:enable
  kDisableRecurringRun,    // POST /v1/recurringruns/{id}:disable
  // Devices (DeviceService; gateway_devices.cc).
  kApplyConfiguration,   // POST /v1/configurations
  kListConfigurations,   // GET /v1/configurations
  kGetConfiguration,     // GET /v1/configurations/{id}
  kDeleteConfiguration,  // DELETE /v1/configurations/{id}
  kListInstances,        // GET /v1/instances
  kGetInstance,          // GET /v1/instances/{id}
  kListServices,         // GET /v1/services
  kGetService,           // GET /v1/services/{id}
  kApplySecret,          // POST /v1/secrets
  kListSecrets,          // GET /v1/secrets
  kGetSecret,            // GET /v1/secrets/{id}
  kDeleteSecret,         // DELETE /v1/secrets/{id}
  kApplyConfigMap,       // POST /v1/configmaps
  kListConfigMaps,       // GET /v1/configmaps
  kGetConfigMap,         // GET /v1/configmaps/{id}
  kDeleteConfigMap,      // DELETE /v1/configmaps/{id}
};

using QueryParams = std::vector<std::pair<std::string, std::string>>;

struct RouteMatch {
  RouteId id = RouteId::kHealthz;
  // Path variables ("name", "id", "queue", "jobSet"), percent-decoded.
  absl::flat_hash_map<std::string, std::string> vars;
};

struct RouteResult {
  enum class Kind { kFound, kNotFound, kMethodNotAllowed };
  Kind kind = Kind::kNotFound;
  RouteMatch match;
  // For kMethodNotAllowed: the methods the path does accept, e.g. "GET, PUT".
  std::string allowed;
};

// Decodes %XX escapes; with `plus_is_space` (query strings) '+' is a space. Malformed escapes
// and decoded text that is not valid UTF-8 are INVALID_ARGUMENT errors.
absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space);

// Parses "a=1&b=x%20y&b=z" into decoded (key, value) pairs in order; "a" alone has an empty value.
absl::StatusOr<QueryParams> ParseQuery(absl::string_view query);

bool IsValidUtf8(absl::string_view text);

// Matches a path (no query) against the route table. A trailing ":verb" on the last segment is
// a custom method (grpc-gateway style) and is split before percent-decoding, so a name may still
// carry a ':' as %3A. A path that matches a route's custom method is that route: with another
// method it is kMethodNotAllowed. An invalid escape in the path is an INVALID_ARGUMENT error.
absl::StatusOr<RouteResult> MatchRoute(absl::string_view method, absl::string_view path);

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_ROUTER_H_
