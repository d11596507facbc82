#ifndef REGATTA_SRC_STORE_SQLITE_SQLITE_STORE_H_
#define REGATTA_SRC_STORE_SQLITE_SQLITE_STORE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/common/clock.h"
#include "src/store/store.h"

namespace regatta::store {

namespace sqlite_internal {
class Connection;
}  // namespace sqlite_internal

// One numbered schema migration: file "0001_initial.sql" is version 1, name "initial".
struct SqliteMigration {
  int version = 0;
  std::string name;
  std::string sql;
};

struct SqliteStoreOptions {
  // Stamps schema_migrations.applied_at.
  const Clock* clock = RealClock::Get();
  // Migrations to apply instead of the embedded ones (tests).
  std::optional<std::vector<SqliteMigration>> migrations;
  // Reader connections kept open between calls; more are opened under load.
  int max_idle_readers = 8;
  absl::Duration busy_timeout = absl::Seconds(10);
};

// The embedded Store: one SQLite database in WAL mode. One writer connection (ingest batches
// and the dedup table, serialized by a mutex, synchronous=FULL) and a pool of read-only
// connections, so readers never wait for an ingest transaction.
class SqliteStore final : public Store {
 public:
  // Opens or creates the database at `path` (its directory must exist) and applies the
  // migrations not yet recorded in schema_migrations, each once, in its own transaction.
  static absl::StatusOr<std::unique_ptr<SqliteStore>> Open(absl::string_view path,
                                                           SqliteStoreOptions options = {});

  // The migrations compiled into the binary (src/store/migrations/sqlite), in version order.
  static absl::StatusOr<std::vector<SqliteMigration>> EmbeddedMigrations();

  ~SqliteStore() override;
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  absl::StatusOr<IngestResult> ApplyIngestBatch(const IngestBatch& batch) override;
  absl::StatusOr<int64_t> GetConsumerOffset(absl::string_view consumer) override;

  absl::StatusOr<regatta::v1::Queue> GetQueue(absl::string_view name) override;
  absl::StatusOr<std::vector<regatta::v1::Queue>> ListQueues(absl::string_view after_name,
                                                             int limit) override;

  absl::StatusOr<std::vector<JobLocation>> GetJobLocations(
      const std::vector<std::string>& job_ids) override;
  absl::StatusOr<std::vector<JobLocation>> GetJobSetJobs(
      absl::string_view queue, absl::string_view job_set,
      const std::vector<regatta::v1::JobState>& states) override;
  absl::StatusOr<std::vector<regatta::v1::JobSummary>> ListJobs(const JobFilter& filter) override;
  absl::Status StreamJobs(
      const JobSelector& selector, size_t max_per_chunk,
      absl::FunctionRef<absl::Status(std::vector<JobLocation>& chunk)> on_chunk) override;
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> GetJobDetails(
      const std::vector<std::string>& job_ids, bool expand_spec) override;

  absl::Status StreamSchedulerDelta(
      absl::string_view consumer, int64_t after_offset, size_t max_jobs_per_chunk,
      absl::FunctionRef<absl::Status(SchedulerDelta& chunk)> on_chunk) override;
  absl::StatusOr<std::vector<regatta::v1::Job>> GetJobSpecs(
      const std::vector<std::string>& job_ids) override;

  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> LookupClientIds(
      absl::string_view queue, const std::vector<std::string>& client_ids) override;
  absl::Status StoreClientIds(
      absl::string_view queue,
      const std::vector<std::pair<std::string, std::string>>& client_to_job) override;

  absl::StatusOr<std::string> DumpViews() override;

  // PipelineViews (sqlite_pipeline_views.cc).
  absl::StatusOr<regatta::v1::Pipeline> GetPipeline(absl::string_view id) override;
  absl::StatusOr<regatta::v1::Pipeline> GetPipelineByName(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::Pipeline>> ListPipelines(const PageRequest& page) override;
  absl::StatusOr<regatta::v1::PipelineVersion> GetPipelineVersion(absl::string_view id) override;
  absl::StatusOr<Page<regatta::v1::PipelineVersion>> ListPipelineVersions(
      absl::string_view pipeline_id, const PageRequest& page, bool with_spec) override;
  absl::StatusOr<regatta::v1::Experiment> GetExperiment(absl::string_view id) override;
  absl::StatusOr<regatta::v1::Experiment> GetExperimentByName(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::Experiment>> ListExperiments(const PageRequest& page,
                                                                bool include_archived) override;
  absl::StatusOr<regatta::v1::PipelineRun> GetPipelineRun(absl::string_view id,
                                                          bool with_tasks) override;
  absl::StatusOr<Page<regatta::v1::PipelineRun>> ListPipelineRuns(
      const PipelineRunFilter& filter) override;
  absl::StatusOr<std::vector<regatta::v1::PipelineRun>> ListActivePipelineRuns() override;
  absl::StatusOr<regatta::v1::PipelineArtifact> GetArtifact(absl::string_view id) override;
  absl::StatusOr<std::vector<regatta::v1::PipelineArtifact>> ListRunArtifacts(
      absl::string_view run_id) override;
  absl::StatusOr<ArtifactLineage> GetArtifactLineage(absl::string_view artifact_id) override;
  absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>> LookupCacheEntries(
      const std::vector<std::string>& fingerprints, absl::Time now) override;
  absl::StatusOr<Page<regatta::v1::CacheEntry>> ListCacheEntries(const PageRequest& page) override;
  absl::StatusOr<regatta::v1::RecurringRun> GetRecurringRun(absl::string_view id) override;
  absl::StatusOr<Page<regatta::v1::RecurringRun>> ListRecurringRuns(
      const PageRequest& page) override;

  // DeviceViews (sqlite_device_views.cc).
  absl::StatusOr<regatta::v1::Configuration> GetConfiguration(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::Configuration>> ListConfigurations(
      const PageRequest& page) override;
  absl::StatusOr<regatta::v1::Instance> GetInstance(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::Instance>> ListInstances(const InstanceFilter& filter) override;
  absl::StatusOr<regatta::v1::Secret> GetSecret(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::Secret>> ListSecrets(const PageRequest& page) override;
  absl::StatusOr<regatta::v1::ConfigMap> GetConfigMap(absl::string_view name) override;
  absl::StatusOr<Page<regatta::v1::ConfigMap>> ListConfigMaps(const PageRequest& page) override;

  // Versions recorded in schema_migrations, ascending (tests and `regatta` diagnostics).
  absl::StatusOr<std::vector<int>> AppliedMigrations();

 private:
  class ReaderLease;

  SqliteStore(std::string path, SqliteStoreOptions options,
              std::unique_ptr<sqlite_internal::Connection> writer);

  absl::StatusOr<ReaderLease> AcquireReader();
  void ReleaseReader(std::unique_ptr<sqlite_internal::Connection> conn);

  const std::string path_;
  const SqliteStoreOptions options_;

  absl::Mutex writer_mu_;
  std::unique_ptr<sqlite_internal::Connection> writer_ ABSL_GUARDED_BY(writer_mu_);

  absl::Mutex readers_mu_;
  std::vector<std::unique_ptr<sqlite_internal::Connection>> idle_readers_
      ABSL_GUARDED_BY(readers_mu_);
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_SQLITE_SQLITE_STORE_H_
