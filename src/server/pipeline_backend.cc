#include "src/server/pipeline_backend.h"

#include <algorithm>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"

namespace regatta::server {

namespace pb = regatta::v1;
using pipelines::engine::JobOutcome;

namespace {

std::vector<pb::CacheEntry> CacheEntriesOf(const std::vector<pb::EventSequence>& sequences) {
  std::vector<pb::CacheEntry> entries;
  for (const pb::EventSequence& sequence : sequences) {
    for (const pb::Event& event : sequence.events()) {
      if (event.has_cache_entry_created()) entries.push_back(event.cache_entry_created().entry());
    }
  }
  return entries;
}

}  // namespace

void PlatformPipelineBackend::RememberCacheEntries(const std::vector<pb::CacheEntry>& entries,
                                                   int64_t offset) {
  absl::MutexLock lock(&recent_mu_);
  for (const pb::CacheEntry& entry : entries) {
    recent_cache_entries_.insert_or_assign(entry.fingerprint(), RecentCacheEntry{entry, offset});
    recent_order_.emplace_back(offset, entry.fingerprint());
  }
}

absl::Status PlatformPipelineBackend::Publish(std::vector<pb::EventSequence> sequences) {
  std::vector<pb::CacheEntry> entries = CacheEntriesOf(sequences);
  // The engine's progress is recoverable (it is derived again from the runs' jobs after a
  // restart), so it need not wait for the log to sync.
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ctx_->log->AppendVisible(std::move(sequences)));
  if (!entries.empty() && !offsets.empty()) {
    RememberCacheEntries(entries, *std::max_element(offsets.begin(), offsets.end()));
  }
  return absl::OkStatus();
}

auth::Principal PlatformPipelineBackend::OwnerOf(absl::string_view owner,
                                                 const std::string& job_set) {
  auth::Principal principal;
  principal.name = std::string(owner);
  absl::MutexLock lock(&mu_);
  auto it = groups_.find(job_set);
  if (it != groups_.end()) principal.groups = it->second;
  return principal;
}

absl::StatusOr<pb::SubmitJobsResponse> PlatformPipelineBackend::Submit(
    absl::string_view owner, const pb::SubmitJobsRequest& request,
    std::vector<pb::EventSequence> progress) {
  std::vector<pb::CacheEntry> entries = CacheEntriesOf(progress);
  // A launch lost in a machine crash is launched again after the restart (the engine derives
  // what to launch from the durable log), so the step need not wait for the log to sync.
  ASSIGN_OR_RETURN(pb::SubmitJobsResponse response,
                   submit_->Submit(OwnerOf(owner, request.job_set()), request,
                                   eventlog::AppendWait::kVisible, std::move(progress)));
  // The entries' offset is not returned; the log's last offset now is at or after it.
  if (!entries.empty()) RememberCacheEntries(entries, ctx_->log->LastOffset());
  return response;
}

absl::Status PlatformPipelineBackend::Cancel(absl::string_view owner,
                                             const pb::CancelJobsRequest& request) {
  return submit_->Cancel(OwnerOf(owner, request.job_set()), request).status();
}

absl::Status PlatformPipelineBackend::WaitForViews(int64_t offset) {
  return ctx_->wait_for_views(offset, ctx_->clock->Now() + ctx_->view_wait_timeout);
}

absl::Status PlatformPipelineBackend::CatchUpViews() {
  return WaitForViews(ctx_->log->LastOffset());
}

absl::StatusOr<pb::PipelineRun> PlatformPipelineBackend::GetRun(absl::string_view run_id) {
  RETURN_IF_ERROR(CatchUpViews());
  ASSIGN_OR_RETURN(pb::PipelineRun run, ctx_->store->GetPipelineRun(run_id, /*with_tasks=*/true));
  absl::MutexLock lock(&mu_);
  groups_[pipelines::engine::RunJobSet(run.id())].assign(run.owner_groups().begin(),
                                                         run.owner_groups().end());
  return run;
}

absl::StatusOr<std::vector<pb::PipelineRun>> PlatformPipelineBackend::ActiveRuns() {
  RETURN_IF_ERROR(CatchUpViews());
  ASSIGN_OR_RETURN(std::vector<pb::PipelineRun> runs, ctx_->store->ListActivePipelineRuns());
  absl::MutexLock lock(&mu_);
  for (const pb::PipelineRun& run : runs) {
    groups_[pipelines::engine::RunJobSet(run.id())].assign(run.owner_groups().begin(),
                                                           run.owner_groups().end());
  }
  return runs;
}

absl::StatusOr<absl::flat_hash_map<std::string, pb::CacheEntry>>
PlatformPipelineBackend::LookupCache(const std::vector<std::string>& fingerprints, absl::Time now) {
  // Entries the engine published that the views do not hold yet are taken from memory; known
  // before the views are read, so an entry ingested meanwhile is found in one or the other.
  // An entry the views hold is theirs to answer for (a later delete or prune included).
  absl::flat_hash_map<std::string, pb::CacheEntry> pending;
  {
    absl::MutexLock lock(&recent_mu_);
    while (!recent_order_.empty() &&
           ctx_->wait_for_views(recent_order_.front().first, absl::InfinitePast()).ok()) {
      const auto& [offset, fingerprint] = recent_order_.front();
      auto it = recent_cache_entries_.find(fingerprint);
      // A newer entry for the fingerprint stays until the views hold it too.
      if (it != recent_cache_entries_.end() && it->second.offset <= offset) {
        recent_cache_entries_.erase(it);
      }
      recent_order_.pop_front();
    }
    for (const std::string& fingerprint : fingerprints) {
      auto it = recent_cache_entries_.find(fingerprint);
      if (it == recent_cache_entries_.end()) continue;
      const pb::CacheEntry& entry = it->second.entry;
      if (entry.has_expire_time() && api::FromTimestamp(entry.expire_time()) <= now) continue;
      pending.emplace(fingerprint, entry);
    }
  }
  ASSIGN_OR_RETURN(auto found, ctx_->store->LookupCacheEntries(fingerprints, now));
  for (auto& [fingerprint, entry] : pending) found.insert_or_assign(fingerprint, std::move(entry));
  return found;
}

absl::StatusOr<std::map<std::string, std::string>> PlatformPipelineBackend::SecretData(
    absl::string_view owner, absl::string_view run_id, absl::string_view name) {
  // Changing Secrets is what a user needs to see their values (the API shows only keys), so
  // only such a user's step may have them.
  const auth::Principal principal = OwnerOf(owner, pipelines::engine::RunJobSet(run_id));
  if (!ctx_->authorizer->HasGlobal(principal, auth::GlobalPermission::kCreateQueue)) {
    return absl::PermissionDeniedError(absl::StrCat(
        "user \"", principal.name, "\" may not read Secrets into a step (needs permission \"",
        auth::GlobalPermissionName(auth::GlobalPermission::kCreateQueue), "\")"));
  }
  RETURN_IF_ERROR(CatchUpViews());
  ASSIGN_OR_RETURN(pb::Secret secret, ctx_->store->GetSecret(name));
  std::map<std::string, std::string> data;
  for (const auto& [key, value] : secret.data()) {
    if (!secrets::IsSealed(value)) {  // applied before values were sealed
      data[key] = value;
      continue;
    }
    if (ctx_->sealer == nullptr) {
      return absl::FailedPreconditionError("the server has no secrets key");
    }
    ASSIGN_OR_RETURN(data[key], ctx_->sealer->Open(value, api::SecretDataContext(name, key)));
  }
  return data;
}

absl::StatusOr<std::map<std::string, std::string>> PlatformPipelineBackend::ConfigMapData(
    absl::string_view name) {
  RETURN_IF_ERROR(CatchUpViews());
  ASSIGN_OR_RETURN(pb::ConfigMap config_map, ctx_->store->GetConfigMap(name));
  return std::map<std::string, std::string>(config_map.data().begin(), config_map.data().end());
}

absl::StatusOr<absl::flat_hash_map<std::string, JobOutcome>> PlatformPipelineBackend::EndedJobs(
    const std::vector<std::string>& job_ids) {
  RETURN_IF_ERROR(CatchUpViews());
  ASSIGN_OR_RETURN(std::vector<pb::JobDetails> details,
                   ctx_->store->GetJobDetails(job_ids, /*expand_spec=*/false));
  absl::flat_hash_map<std::string, JobOutcome> ended;
  for (const pb::JobDetails& job : details) {
    const pb::JobState state = job.summary().state();
    if (!store::IsTerminal(state)) continue;
    JobOutcome outcome;
    outcome.succeeded = state == pb::JOB_STATE_SUCCEEDED;
    if (!outcome.succeeded) {
      absl::string_view name = pb::JobState_Name(state);
      absl::ConsumePrefix(&name, "JOB_STATE_");
      outcome.error = job.error().message().empty()
                          ? absl::StrCat("job ", name, job.cancel_reason().empty() ? "" : ": ",
                                         job.cancel_reason())
                          : job.error().message();
    }
    ended[job.summary().job_id()] = std::move(outcome);
  }
  return ended;
}

}  // namespace regatta::server
