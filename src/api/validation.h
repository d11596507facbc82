#ifndef REGATTA_SRC_API_VALIDATION_H_
#define REGATTA_SRC_API_VALIDATION_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/submit_service.pb.h"
#include "regatta/v1/types.pb.h"

namespace regatta::api {

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
// quantity notation), default resources, default priority class. Call after validation.
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

// Queue and job-set names: 1-63 characters of [a-z0-9._-] (queue), starting alphanumeric.
bool IsValidQueueName(absl::string_view name);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_VALIDATION_H_
