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
// Every job is a JobSubmitRequestItem in YAML (lowerCamelCase or snake_case names; keys also
// match ignoring case, as armadactl's). A file may hold several YAML documents, each with its
// own queue and job set.
//
// armadactl's job files are read unchanged:
//
//   queue: team-a
//   jobSetId: nightly          # Armada's name for jobSet
//   jobs:
//     - priority: 0
//       namespace: research    # kept, shown and filtered on
//       annotations: {armadaproject.io/gangId: g, armadaproject.io/gangCardinality: "2"}
//       podSpecs: [{containers: [...]}]   # or podSpec; exactly one pod
//       services: [{type: NodePort, ports: [8080]}]
//
// A file whose first document is Armada's (it has jobSetId, or a job with podSpecs) is read as
// armadactl reads it: that document only (warnings() says what was left out). Armada's
// annotations become the gang and failFast on the server.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/submit_service.pb.h"
#include "yaml-cpp/yaml.h"

namespace regatta::cli {

inline constexpr int kDefaultSubmitBatchSize = 1000;
// Guards against a typo such as `count: 10000000` filling memory.
inline constexpr int64_t kMaxJobsPerFile = 1'000'000;

// A parsed job file: its SubmitJobs requests in file order, and where every item came from, so
// that an error about one (found here, or by the server as "items[i]...") names the file
// position: "jobs.yaml:42:5: document 2: jobs[7].task.resources.requests[cpu]: ...".
class JobFile {
 public:
  // Requests of at most `batch_size` items (more only to keep a run of consecutive members of
  // one gang together, as the server wants a gang whole in one request). Errors are
  // INVALID_ARGUMENT "NAME:LINE:COLUMN: [document N: ]PATH: problem", e.g.
  // "jobs.yaml:9:5: jobs[3].task.command: expected a list, got a string"; the document is named
  // from the second on. With an empty `name` errors start at "[document N: ]PATH".
  static absl::StatusOr<JobFile> Parse(absl::string_view text, absl::string_view name,
                                       int batch_size = kDefaultSubmitBatchSize);

  const std::vector<regatta::v1::SubmitJobsRequest>& requests() const { return requests_; }
  // What the parse left out and the user should hear of: "NAME:L:C: ignored ..." for the
  // documents after the first of an Armada job file.
  const std::vector<std::string>& warnings() const { return warnings_; }
  int64_t job_count() const { return job_count_; }
  // The document (0-based, counting every document of the file) request `r` came from.
  int DocumentOf(size_t r) const { return documents_[batches_[r].document].number - 1; }
  // Items of the file before request `r` (after count expansion).
  int64_t ItemsBefore(size_t r) const { return batches_[r].items_before; }

  // `error`, the server's answer to request `r`, rewritten to name the place in the file: for
  // "items[i].PATH: problem" the job (and copy, for count > 1) and the line of PATH in it; for
  // "queue: ..." and "job_set: ..." that key; otherwise the document's queue. The code is kept.
  absl::Status Attribute(const absl::Status& error, size_t r) const;

 private:
  // One entry of a document's `jobs` list: `count` items from `first_item` on.
  struct Entry {
    int64_t first_item = 0;
    int64_t count = 1;
    YAML::Node node;
  };
  struct Document {
    int number = 1;  // 1-based, counting empty documents too
    YAML::Node node;
    std::vector<Entry> entries;
  };
  struct Batch {
    size_t document = 0;
    int64_t first_item = 0;    // within the document
    int64_t items_before = 0;  // within the file
  };

  // "NAME:L:C: " for `mark` (without the position when it is unknown), "" without a name.
  std::string Where(const YAML::Mark& mark) const;
  // "document N: " from the second document on.
  static std::string DocumentPrefix(const Document& doc);

  std::string name_;
  std::vector<Document> documents_;
  std::vector<regatta::v1::SubmitJobsRequest> requests_;
  std::vector<Batch> batches_;
  std::vector<std::string> warnings_;
  int64_t job_count_ = 0;
};

// JobFile::Parse without a file name: the requests alone.
absl::StatusOr<std::vector<regatta::v1::SubmitJobsRequest>> ParseJobFile(
    absl::string_view text, int batch_size = kDefaultSubmitBatchSize);

// Splits one request into requests of at most `batch_size` items (same queue and job set), in
// order. A run of consecutive items of one gang is not split: the batch ends before it, or
// takes the whole run when the run alone is longer than `batch_size`.
std::vector<regatta::v1::SubmitJobsRequest> SplitIntoBatches(
    const regatta::v1::SubmitJobsRequest& request, int batch_size);

// The place `path` ("jobs[3].task.command", or a server's "task.resources.requests[cpu]")
// names below `node`, as far as the YAML has it: the mark of the deepest key or list element
// found. Names match ignoring case and '_' (the server says node_selector, files nodeSelector);
// a missing "task" is skipped, since task fields may sit on the job.
YAML::Mark LocatePath(const YAML::Node& node, absl::string_view path);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_JOB_FILE_H_
