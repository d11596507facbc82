#ifndef REGATTA_SRC_OBSERVABILITY_AUDIT_H_
#define REGATTA_SRC_OBSERVABILITY_AUDIT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"

namespace regatta::observability {

using AuditFields = std::vector<std::pair<std::string, std::string>>;

// Whether calls of `full_method` ("/regatta.v1.SubmitService/SubmitJobs") change state and are
// audited: the public API's methods whose name starts with a writing verb (Submit, Cancel,
// Create, Update, Delete, Reprioritize, Preempt, Terminate, Retry, Archive, Unarchive, Prune,
// Apply, Cordon, Uncordon, Enable, Disable). The executor API (executors' own lease and report
// traffic) is counted in the metrics but not audited.
bool IsAudited(absl::string_view full_method);

// What a request is about, for its audit line: the queue, job set, job ids, run, pipeline,
// experiment, executor, ... it names (top-level fields with those names, and the name of a
// Queue, Configuration, Secret, ConfigMap or RecurringRun it carries), and how many jobs a
// submit holds. Never specs, commands, environments, parameters or secret data. Values are
// capped in length; long id lists are cut with a count of the rest.
AuditFields AuditTargets(const google::protobuf::Message& request);

// What a successful call created, from its response: the top-level `id` (a run, experiment or
// recurring run), and the ids of a `pipeline` and `version` it returns (as pipeline_id,
// version_id).
AuditFields AuditResult(const google::protobuf::Message& response);

// The audit line's fields in order: principal, service, method, the request's targets, the
// response's ids, code, peer. `principal` is empty when the call was not authenticated.
AuditFields AuditLine(absl::string_view full_method, absl::string_view principal,
                      const AuditFields& targets, const AuditFields& result, absl::string_view code,
                      absl::string_view peer);

}  // namespace regatta::observability

#endif  // REGATTA_SRC_OBSERVABILITY_AUDIT_H_
