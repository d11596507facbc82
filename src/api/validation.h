#ifndef REGATTA_SRC_API_VALIDATION_H_
#define REGATTA_SRC_API_VALIDATION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "regatta/v1/types.pb.h"

namespace regatta::api {

// Bounds on what clients send, so that nothing reaches arithmetic, a C string or an SQL
// statement out of range (listed for operators in docs/configuration.md, "Input limits").
// Armada requires a priority factor of at least 1; Regatta also takes factors down to 0.001.
inline constexpr double kMinPriorityFactor = 0.001;
inline constexpr double kMaxPriorityFactor = 1e6;
// Per resource of one job: 100T (10^14 units, e.g. 100 TB of memory); sums of many stay far
// from the int64 milli-unit range.
inline constexpr int64_t kMaxJobQuantityMilli = int64_t{100'000'000'000'000} * 1000;
inline constexpr int64_t kMaxActiveDeadlineSeconds = int64_t{366} * 24 * 3600;
inline constexpr int64_t kMaxTerminationGraceSeconds = 3600;
inline constexpr uint32_t kMaxRetries = 1000;
inline constexpr int kMaxRetryExitCodes = 256;
// A label key: an optional DNS-subdomain prefix (253), '/', a name (63).
inline constexpr size_t kMaxLabelKeyBytes = 317;
inline constexpr size_t kMaxLabelValueBytes = 1024;
inline constexpr size_t kMaxIdBytes = 256;     // client ids, gang ids
inline constexpr size_t kMaxPathBytes = 4096;  // image, working dir, program
inline constexpr int kMaxLabelFilters = 32;
inline constexpr int kMaxStateFilters = 16;
inline constexpr size_t kMaxFilterBytes = 1024;  // queue, job set, owner, page token filters

struct PriorityClass {
  int32_t priority = 0;
  bool preemptible = false;
};

// What submit validation needs to know about the installation.
struct SubmitPolicy {
  std::map<std::string, PriorityClass> priority_classes;
  std::string default_priority_class = "default";
  // Applied to jobs that request no resources at all.
  std::map<std::string, std::string> default_resources = {{"cpu", "100m"}, {"memory", "64Mi"}};
  int max_jobs_per_request = 10000;
  // Serialized size of one job item.
  int64_t max_job_spec_bytes = 256 * 1024;
  int max_client_id_length = 256;
  int max_job_set_length = 1024;
};

// Checks a SubmitJobsRequest against every rule. The first violation is returned as
// INVALID_ARGUMENT whose message starts with the field path, e.g.
//   "items[3].task.resources.requests[cpu]: invalid quantity "abc": expected a number".
// Queue existence and permissions are checked by the caller before this.
absl::Status ValidateSubmitRequest(const regatta::v1::SubmitJobsRequest& request,
                                   const SubmitPolicy& policy);

// Fills what the server defaults: requests = limits when only one side is given (in canonical
// quantity notation), default resources, default priority class. A pod-spec task first gets
// what the scheduler reads from its pod spec: resources = the pod's effective request (the
// larger of the containers' sum and each init container's), node selector, tolerations, node
// affinity, deadline, grace period and priority class where the pod sets them; the pod spec is
// kept whole. A job without a gang gets the one its Armada annotations declare
// (armadaproject.io/gangId, gangCardinality, gangNodeUniformityLabel). Call after validation.
void NormalizeSubmitItem(regatta::v1::JobSubmitRequestItem& item, const SubmitPolicy& policy);
// The same for a job built from a request item (the submit path copies each item once, into
// its job, and normalizes there).
void NormalizeJob(regatta::v1::Job& job, const SubmitPolicy& policy);

// Checks a queue spec for create/update (name, priority factor, resource limits). Permission
// entries are checked by the auth library.
// A bulk request's priority class filter: INVALID_ARGUMENT "priority_classes[i]: unknown
// priority class ..." (a typo would otherwise match nothing, silently).
absl::Status ValidatePriorityClassFilter(
    const google::protobuf::RepeatedPtrField<std::string>& priority_classes,
    const SubmitPolicy& policy);

absl::Status ValidateQueueSpec(const regatta::v1::Queue& queue, const SubmitPolicy& policy);

// A job listing's filters: at most kMaxLabelFilters labels and kMaxStateFilters states, bounded
// lengths, no control characters in labels. INVALID_ARGUMENT naming the field.
absl::Status ValidateListJobsRequest(const regatta::v1::ListJobsRequest& request);

// Queue and job-set names: 1-63 characters of [a-z0-9._-] (queue), starting alphanumeric.
bool IsValidQueueName(absl::string_view name);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_VALIDATION_H_
