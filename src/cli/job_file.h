#ifndef REGATTA_SRC_CLI_JOB_FILE_H_
#define REGATTA_SRC_CLI_JOB_FILE_H_

// The job file of `regatta submit`:
//
//   queue: team-a
//   jobSet: nightly
//   jobs:
//     - clientId: train        # optional; with count, copies get train-0, train-1, ...
//       count: 3               # optional, default 1: submit this many copies
//       priority: 1
//       task:                  # a TaskSpec; its fields may also sit directly on the job
//         command: [python, train.py]
//         resources: {requests: {cpu: "1", memory: 1Gi}}
//         activeDeadline: 30m
//
// Every job is a JobSubmitRequestItem in YAML (lowerCamelCase or snake_case names). A file may
// hold several YAML documents, each with its own queue and job set.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/submit_service.pb.h"

namespace regatta::cli {

inline constexpr int kDefaultSubmitBatchSize = 1000;
// Guards against a typo such as `count: 10000000` filling memory.
inline constexpr int64_t kMaxJobsPerFile = 1'000'000;

// Parses a job file into SubmitJobs requests of at most `batch_size` items each, in file order.
// Errors are INVALID_ARGUMENT naming the place: "jobs[3].task.command: expected a list, got a
// string" (prefixed with "document N: " for the second and later documents).
absl::StatusOr<std::vector<regatta::v1::SubmitJobsRequest>> ParseJobFile(
    absl::string_view text, int batch_size = kDefaultSubmitBatchSize);

// Splits one request into requests of at most `batch_size` items (same queue and job set).
std::vector<regatta::v1::SubmitJobsRequest> SplitIntoBatches(
    const regatta::v1::SubmitJobsRequest& request, int batch_size);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_JOB_FILE_H_
