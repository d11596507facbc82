// `regatta submit FILE`: the whole file or nothing (see SubmitOptions in commands.h).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/cli/commands.h"
#include "src/cli/job_file.h"
#include "src/cli/render.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;

std::string Jobs(int64_t count) { return absl::StrCat(count, count == 1 ? " job" : " jobs"); }

// What the server said of the whole file.
struct Checked {
  int64_t new_jobs = 0;
  int64_t duplicates = 0;
};

// Has the server check every request of `file`. An error names the place in the file (see
// JobFile::Attribute); UNIMPLEMENTED from a server older than ValidateSubmit is returned as it
// is, so the caller can tell.
absl::StatusOr<Checked> ValidateAll(Client& client, const JobFile& file) {
  Checked checked;
  for (size_t r = 0; r < file.requests().size(); ++r) {
    absl::StatusOr<v1::ValidateSubmitResponse> response = CallUnary(
        client, client.submit(), &v1::SubmitService::Stub::ValidateSubmit, file.requests()[r]);
    if (absl::IsUnimplemented(response.status())) return response.status();
    if (!response.ok()) return file.Attribute(response.status(), r);
    checked.new_jobs += response->new_jobs();
    checked.duplicates += response->duplicates();
  }
  return checked;
}

// A server that cannot be asked: not there (or not answering in time), or too old to validate.
bool ServerCannotCheck(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status) ||
         absl::IsUnimplemented(status);
}

absl::Status DryRun(const CommandEnv& env, const SubmitOptions& options, const JobFile& file) {
  std::optional<Checked> checked;
  if (!options.local) {
    ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
    absl::StatusOr<Checked> result = ValidateAll(*client, file);
    if (result.ok()) {
      checked = *result;
    } else if (ServerCannotCheck(result.status())) {
      *env.err << "regatta: submit: warning: the server at " << env.client.server
               << " could not check the file (" << absl::StatusCodeToString(result.status().code())
               << ": " << result.status().message() << "); checked here only\n";
    } else {
      return result.status();
    }
  }
  const auto& requests = file.requests();
  if (env.output != OutputFormat::kTable) {
    OrderedJson out;
    OrderedJson list = OrderedJson::array();
    for (const auto& b : requests) list.push_back(MessageToJsonValue(b));
    out["requests"] = std::move(list);
    out["checkedBy"] = checked ? "server" : "local";
    if (checked) {
      out["newJobs"] = checked->new_jobs;
      out["duplicates"] = checked->duplicates;
    }
    PrintJson(env, out);
    return absl::OkStatus();
  }
  // One row per document.
  Table table({"QUEUE", "JOB SET", "JOBS", "REQUESTS"});
  for (size_t r = 0; r < requests.size();) {
    size_t next = r;
    int64_t jobs = 0;
    while (next < requests.size() && file.DocumentOf(next) == file.DocumentOf(r)) {
      jobs += requests[next++].items_size();
    }
    table.AddRow(
        {requests[r].queue(), requests[r].job_set(), absl::StrCat(jobs), absl::StrCat(next - r)});
    r = next;
  }
  std::string how = "checked here only";
  if (checked) {
    how = "checked by the server";
    if (checked->duplicates > 0) {
      absl::StrAppend(&how, "; ", Jobs(checked->duplicates),
                      " would be duplicates of jobs submitted before");
    }
  }
  *env.out << table.Render() << "dry run: " << Jobs(file.job_count()) << " valid (" << how
           << "), nothing submitted\n";
  return absl::OkStatus();
}

// Whether the server surely refused the call: then nothing of it was submitted. A timeout or
// a lost connection may come after the server committed it.
bool Refused(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kUnimplemented:
      return true;
    default:
      return false;
  }
}

// What a failed SubmitJobs of request `r` leaves in the queue, for the end of the error.
std::string SubmitOutcome(const absl::Status& error, const JobFile& file, size_t r) {
  const size_t n = file.requests().size();
  if (r == 0 && Refused(error)) return "(nothing was submitted)";
  std::string text = Refused(error) ? absl::StrCat("(request ", r + 1, " of ", n, " failed")
                                    : absl::StrCat("(request ", r + 1, " of ", n,
                                                   " may or may not have been submitted");
  if (r > 0) {
    absl::StrAppend(&text, "; the ", Jobs(file.ItemsBefore(r)),
                    " of the file before it were submitted");
  }
  return absl::StrCat(text, "; client ids make a retry safe)");
}

}  // namespace

absl::Status Submit(const CommandEnv& env, const SubmitOptions& options) {
  if (options.batch_size < 1) return UsageError("--batch-size must be at least 1");
  if (options.local && !options.dry_run) return UsageError("--local goes with --dry-run");
  ASSIGN_OR_RETURN(std::string text, ReadInput(env, options.file));
  const std::string name = options.file == "-" ? "stdin" : options.file;
  ASSIGN_OR_RETURN(JobFile file, JobFile::Parse(text, name, options.batch_size));
  for (const std::string& warning : file.warnings()) {
    *env.err << "regatta: submit: warning: " << warning << "\n";
  }
  if (options.dry_run) return DryRun(env, options, file);

  const auto& requests = file.requests();
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  if (requests.size() > 1) {
    // One request is all or nothing on the server; several are checked first, every one.
    absl::StatusOr<Checked> checked = ValidateAll(*client, file);
    if (absl::IsUnimplemented(checked.status())) {
      *env.err << "regatta: submit: warning: the server predates ValidateSubmit and cannot "
                  "check the file ahead; submitting request by request\n";
    } else if (!checked.ok()) {
      return absl::Status(checked.status().code(),
                          absl::StrCat(checked.status().message(), " (nothing was submitted)"));
    }
  }
  v1::SubmitJobsResponse all;
  for (size_t r = 0; r < requests.size(); ++r) {
    absl::StatusOr<v1::SubmitJobsResponse> response =
        CallUnary(*client, client->submit(), &v1::SubmitService::Stub::SubmitJobs, requests[r]);
    if (!response.ok()) {
      // Earlier requests are in (the server changed since the check, or failed): show them, so
      // a retry can skip them (or rely on client ids).
      if (r > 0) PrintMessage(env, all, RenderSubmitResults(all));
      absl::Status error = file.Attribute(response.status(), r);
      return absl::Status(error.code(),
                          absl::StrCat(error.message(), " ", SubmitOutcome(error, file, r)));
    }
    for (auto& item : *response->mutable_items()) *all.add_items() = std::move(item);
  }
  PrintMessage(env, all, RenderSubmitResults(all));
  return absl::OkStatus();
}

}  // namespace regatta::cli
