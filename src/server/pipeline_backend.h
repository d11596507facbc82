#ifndef REGATTA_SRC_SERVER_PIPELINE_BACKEND_H_
#define REGATTA_SRC_SERVER_PIPELINE_BACKEND_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "src/api/api_context.h"
#include "src/api/submit_service.h"
#include "src/pipelines/engine/engine.h"
#include "src/store/store.h"

namespace regatta::server {

// The pipeline engine's view of the platform: the event log, the submit path (steps are
// submitted as the run's owner, with the groups it had when it created the run) and the views
// (read once they include the log so far, so the engine never acts on stale rows; cache
// lookups instead add what the engine published since the views' offset).
class PlatformPipelineBackend final : public pipelines::engine::EngineBackend {
 public:
  PlatformPipelineBackend(const api::ApiContext* ctx, api::SubmitService* submit)
      : ctx_(ctx), submit_(submit) {}

  absl::Status Publish(std::vector<regatta::v1::EventSequence> sequences) override;
  absl::StatusOr<regatta::v1::SubmitJobsResponse> Submit(
      absl::string_view owner, const regatta::v1::SubmitJobsRequest& request,
      std::vector<regatta::v1::EventSequence> progress) override;
  absl::Status Cancel(absl::string_view owner,
                      const regatta::v1::CancelJobsRequest& request) override;
  absl::StatusOr<regatta::v1::PipelineRun> GetRun(absl::string_view run_id) override;
  absl::StatusOr<std::vector<regatta::v1::PipelineRun>> ActiveRuns() override;
  absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>> LookupCache(
      const std::vector<std::string>& fingerprints, absl::Time now) override;
  absl::StatusOr<std::map<std::string, std::string>> SecretData(absl::string_view owner,
                                                                absl::string_view run_id,
                                                                absl::string_view name) override;
  absl::StatusOr<std::map<std::string, std::string>> ConfigMapData(absl::string_view name) override;
  absl::StatusOr<absl::flat_hash_map<std::string, pipelines::engine::JobOutcome>> EndedJobs(
      const std::vector<std::string>& job_ids) override;

 private:
  // Waits until the views include the log up to `offset`.
  absl::Status WaitForViews(int64_t offset);
  absl::Status CatchUpViews();
  // The owner and groups a run's steps are submitted as.
  auth::Principal OwnerOf(absl::string_view owner, const std::string& job_set);
  // Remembers the cache entries `sequences` carry, appended at or before `offset`, until the
  // views hold that offset.
  void RememberCacheEntries(const std::vector<regatta::v1::CacheEntry>& entries, int64_t offset);

  const api::ApiContext* ctx_;
  api::SubmitService* submit_;
  // Cache entries the engine published that the views may not hold yet, by fingerprint: a
  // lookup sees them at once (a step whose twin just succeeded is CACHED) without waiting for
  // an ingest, which would sit on the path of every chain step.
  struct RecentCacheEntry {
    regatta::v1::CacheEntry entry;
    int64_t offset = 0;  // the views hold it from this offset on
  };
  absl::Mutex recent_mu_;
  absl::flat_hash_map<std::string, RecentCacheEntry> recent_cache_entries_
      ABSL_GUARDED_BY(recent_mu_);
  // (offset, fingerprint) in publish order, so offsets never decrease: a lookup drops what the
  // views hold from the front, asking the views once per entry dropped, not once per entry.
  std::deque<std::pair<int64_t, std::string>> recent_order_ ABSL_GUARDED_BY(recent_mu_);
  absl::Mutex mu_;
  // Run job set -> groups of its owner (read once per run from the views).
  absl::flat_hash_map<std::string, std::vector<std::string>> groups_ ABSL_GUARDED_BY(mu_);
};

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_PIPELINE_BACKEND_H_
