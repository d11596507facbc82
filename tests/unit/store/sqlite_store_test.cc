// SQLite specifics of the Store: migrations, corrupt rows, persistence, batch atomicity.
// Backend-neutral behaviour is in tests/conformance/store_conformance.h.
#include "src/store/sqlite/sqlite_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/clock.h"

namespace regatta::store {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string JobId(int i) { return absl::StrFormat("01HZZZZZZZZZZZZZ%010d", i); }

regatta::v1::Job MakeJob(int i) {
  regatta::v1::Job job;
  job.set_id(JobId(i));
  job.set_queue("q");
  job.set_job_set("set");
  job.set_owner("alice");
  (*job.mutable_labels())["app"] = "x";
  (*job.mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "1";
  job.mutable_submit_time()->set_seconds(1'700'000'000 + i);
  return job;
}

class SqliteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ =
        absl::StrCat((tmp != nullptr && *tmp) ? tmp : "/tmp", "/regatta_sqlite_store_XXXXXX");
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/store.db";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<SqliteStore> Open(SqliteStoreOptions options = {}) {
    options.clock = &clock_;
    absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  // Runs SQL on the file through a separate connection, as a broken disk or tool would.
  void RawExec(const std::string& sql) {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    EXPECT_EQ(rc, SQLITE_OK) << (error ? error : "") << " in " << sql;
    sqlite3_free(error);
    sqlite3_close(db);
  }

  std::string RawQuery(const std::string& sql) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
    std::string out;
    sqlite3_exec(
        db, sql.c_str(),
        [](void* arg, int n, char** values, char**) {
          auto* out = static_cast<std::string*>(arg);
          for (int i = 0; i < n; ++i) {
            absl::StrAppend(out, i ? "|" : "", values[i] ? values[i] : "NULL");
          }
          absl::StrAppend(out, "\n");
          return 0;
        },
        &out, nullptr);
    sqlite3_close(db);
    return out;
  }

  static std::vector<SqliteMigration> EmbeddedPlus(std::vector<SqliteMigration> extra) {
    absl::StatusOr<std::vector<SqliteMigration>> migrations = SqliteStore::EmbeddedMigrations();
    EXPECT_TRUE(migrations.ok()) << migrations.status();
    std::vector<SqliteMigration> out = *migrations;
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
  }

  absl::Status Apply(Store& store, int64_t to_offset, std::vector<Mutation> mutations) {
    IngestBatch batch;
    batch.consumer = "query";
    batch.to_offset = to_offset;
    for (auto& m : mutations) batch.mutations.push_back({to_offset, std::move(m)});
    return store.ApplyIngestBatch(batch).status();
  }

  FakeClock clock_;
  std::string dir_;
  std::string path_;
};

TEST_F(SqliteStoreTest, EmbeddedMigrationsAreNumberedInOrder) {
  absl::StatusOr<std::vector<SqliteMigration>> migrations = SqliteStore::EmbeddedMigrations();
  ASSERT_TRUE(migrations.ok()) << migrations.status();
  ASSERT_FALSE(migrations->empty());
  EXPECT_EQ((*migrations)[0].version, 1);
  EXPECT_EQ((*migrations)[0].name, "initial");
  EXPECT_THAT((*migrations)[0].sql, HasSubstr("CREATE TABLE jobs"));
  for (size_t i = 1; i < migrations->size(); ++i) {
    EXPECT_LT((*migrations)[i - 1].version, (*migrations)[i].version);
  }
}

TEST_F(SqliteStoreTest, MigrationsAppliedOnceAndRecorded) {
  {
    std::unique_ptr<SqliteStore> store = Open();
    ASSERT_NE(store, nullptr);
    absl::StatusOr<std::vector<int>> applied = store->AppliedMigrations();
    ASSERT_TRUE(applied.ok()) << applied.status();
    EXPECT_THAT(*applied, ElementsAre(1, 2, 3, 4, 5, 6, 7));
  }
  const int64_t now = absl::ToUnixMicros(clock_.Now());
  EXPECT_EQ(RawQuery("SELECT version, name, applied_at_us FROM schema_migrations"),
            absl::StrCat("1|initial|", now, "\n2|scheduler_delta|", now, "\n3|job_templates|", now,
                         "\n4|active_job_indexes|", now, "\n5|pipelines|", now, "\n6|devices|", now,
                         "\n7|job_namespace|", now, "\n"));
  clock_.Advance(absl::Hours(1));
  // Reopening applies nothing again (CREATE TABLE would fail if it did).
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM schema_migrations"), "7\n");
}

TEST_F(SqliteStoreTest, NewMigrationAppliedOnReopen) {
  ASSERT_NE(Open(), nullptr);
  SqliteStoreOptions options;
  options.migrations = EmbeddedPlus({{90, "extra", "CREATE TABLE extra (x INTEGER);"}});
  {
    std::unique_ptr<SqliteStore> store = Open(options);
    ASSERT_NE(store, nullptr);
    EXPECT_THAT(*store->AppliedMigrations(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 90));
  }
  std::unique_ptr<SqliteStore> store = Open(options);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery("SELECT name FROM schema_migrations ORDER BY version"),
            "initial\nscheduler_delta\njob_templates\nactive_job_indexes\npipelines\ndevices\n"
            "job_namespace\nextra\n");
}

TEST_F(SqliteStoreTest, FailingMigrationRollsBackAndIsNotRecorded) {
  SqliteStoreOptions options;
  options.migrations =
      EmbeddedPlus({{90, "broken", "CREATE TABLE half (x INTEGER); THIS IS NOT SQL;"}});
  options.clock = &clock_;
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path_, options);
  ASSERT_FALSE(store.ok());
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("90_broken"));
  // The embedded migrations stay; nothing of migration 90 does.
  EXPECT_EQ(RawQuery("SELECT version FROM schema_migrations"), "1\n2\n3\n4\n5\n6\n7\n");
  EXPECT_EQ(RawQuery("SELECT COUNT(*) FROM sqlite_master WHERE name = 'half'"), "0\n");
  ASSERT_NE(Open(), nullptr);
}

TEST_F(SqliteStoreTest, JobsStoredBeforeTemplatesLoadWithoutOne) {
  // A job stored before migration 3 has the columns' defaults after it: no template (the
  // scheduler reads its full spec), while other jobs have one.
  auto insert = [](SqliteStore& store, const std::string& id, int64_t offset) {
    IngestBatch batch;
    batch.consumer = "query";
    batch.to_offset = offset;
    regatta::v1::Job job;
    job.set_id(id);
    job.set_queue("q");
    job.set_job_set("s");
    (*job.mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "1";
    batch.mutations.push_back({offset, JobInsert{job}});
    ASSERT_TRUE(store.ApplyIngestBatch(batch).ok());
  };
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  insert(*store, "old-job", 1);
  insert(*store, "new-job", 2);
  RawExec("UPDATE jobs SET template_id = 0 WHERE job_id = 'old-job'");
  absl::StatusOr<SchedulerDelta> delta = store->LoadSchedulerDelta("query", 0);
  ASSERT_TRUE(delta.ok()) << delta.status();
  ASSERT_EQ(delta->jobs.size(), 2u);
  for (const SchedulerJobRow& row : delta->jobs) {
    if (row.job_id == "old-job") {
      EXPECT_EQ(row.template_id, 0);
    } else {
      EXPECT_NE(row.template_id, 0);
      EXPECT_TRUE(delta->templates.contains(row.template_id));
    }
  }
  EXPECT_EQ(delta->templates.size(), 1u);
}

TEST_F(SqliteStoreTest, NewerSchemaIsRefused) {
  ASSERT_NE(Open(), nullptr);
  RawExec("INSERT INTO schema_migrations VALUES (999, 'future', 0)");
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(path_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("999"));
}

TEST_F(SqliteStoreTest, UsesWalMode) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery("PRAGMA journal_mode"), "wal\n");
}

TEST_F(SqliteStoreTest, OpenInMissingDirectoryFails) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store =
      SqliteStore::Open(dir_ + "/no/such/dir/store.db");
  EXPECT_FALSE(store.ok());
}

TEST_F(SqliteStoreTest, CorruptSpecBlobIsDataLossNamingTheJob) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(Apply(*store, 1, {JobInsert{MakeJob(1)}, JobInsert{MakeJob(2)}}).ok());
  // 0x0A 0x7F: field 1, 127 bytes long, then nothing.
  RawExec(
      absl::StrCat("UPDATE job_specs SET spec = x'0A7F' WHERE seq = "
                   "(SELECT seq FROM jobs WHERE job_id = '",
                   JobId(1), "')"));

  absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
      store->GetJobDetails({JobId(1)}, /*expand_spec=*/true);
  ASSERT_EQ(details.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(details.status().message()), HasSubstr(JobId(1)));
  EXPECT_THAT(std::string(details.status().message()), HasSubstr("spec"));
  // The listing columns are intact, and so is the other job.
  EXPECT_TRUE(store->GetJobDetails({JobId(1)}, /*expand_spec=*/false).ok());
  EXPECT_TRUE(store->GetJobDetails({JobId(2)}, /*expand_spec=*/true).ok());
}

TEST_F(SqliteStoreTest, BadListingColumnsAreDataLossNamingTheRow) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  QueueUpsert queue;
  queue.queue.set_name("broken-queue");
  ASSERT_TRUE(Apply(*store, 1, {JobInsert{MakeJob(1)}, JobInsert{MakeJob(2)}, queue}).ok());

  RawExec(absl::StrCat("UPDATE jobs SET requests = x'0A7F' WHERE job_id = '", JobId(1), "'"));
  absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs = store->ListJobs({});
  ASSERT_EQ(jobs.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(jobs.status().message()), HasSubstr(JobId(1)));

  RawExec(absl::StrCat("UPDATE jobs SET state = 99 WHERE job_id = '", JobId(2), "'"));
  absl::StatusOr<std::vector<JobLocation>> locations = store->GetJobLocations({JobId(2)});
  ASSERT_EQ(locations.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(locations.status().message()), HasSubstr(JobId(2)));
  EXPECT_THAT(std::string(locations.status().message()), HasSubstr("99"));

  RawExec("UPDATE queues SET spec = x'0A7F'");
  absl::StatusOr<regatta::v1::Queue> q = store->GetQueue("broken-queue");
  ASSERT_EQ(q.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(q.status().message()), HasSubstr("broken-queue"));
}

TEST_F(SqliteStoreTest, BadPipelineBlobsAreDataLossOnReadAndSkippedAtIngest) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  regatta::v1::Event created;
  created.mutable_pipeline_run_created()->mutable_run()->set_id("run-1");
  regatta::v1::Event task;
  task.mutable_pipeline_task_updated()->set_run_id("run-1");
  task.mutable_pipeline_task_updated()->mutable_task()->set_path("train");
  task.mutable_pipeline_task_updated()->mutable_task()->set_state(
      regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  ASSERT_TRUE(Apply(*store, 1, {PipelineChange{created}, PipelineChange{task}}).ok());

  RawExec("UPDATE pipeline_tasks SET body = x'0A7F'");
  absl::StatusOr<regatta::v1::PipelineRun> run = store->GetPipelineRun("run-1", true);
  ASSERT_EQ(run.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(run.status().message()), HasSubstr("pipeline_tasks row run_id=run-1"));
  EXPECT_TRUE(store->GetPipelineRun("run-1", false).ok());  // the run's own row is fine
  EXPECT_EQ(store->ListActivePipelineRuns().status().code(), absl::StatusCode::kDataLoss);

  // A change to a damaged run is reported and left out; the batch goes on.
  RawExec("UPDATE pipeline_runs SET body = x'0A7F'");
  regatta::v1::Event updated;
  updated.mutable_pipeline_run_updated()->set_run_id("run-1");
  updated.mutable_pipeline_run_updated()->set_state(regatta::v1::PIPELINE_RUN_STATE_RUNNING);
  regatta::v1::Event other;
  other.mutable_pipeline_run_created()->mutable_run()->set_id("run-2");
  IngestBatch batch;
  batch.consumer = "query";
  batch.to_offset = 2;
  batch.mutations = {{2, PipelineChange{updated}}, {2, PipelineChange{other}}};
  absl::StatusOr<IngestResult> result = store->ApplyIngestBatch(batch);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->skipped.size(), 1u);
  EXPECT_THAT(result->skipped[0], HasSubstr("offset 2: PipelineRunUpdated run_id=run-1"));
  EXPECT_THAT(result->skipped[0], HasSubstr("does not parse"));
  EXPECT_TRUE(store->GetPipelineRun("run-2", false).ok());
  EXPECT_EQ(store->GetPipelineRun("run-1", false).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(SqliteStoreTest, FailedBatchAppliesNothing) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(Apply(*store, 1, {JobInsert{MakeJob(1)}}).ok());
  RawExec(absl::StrCat("UPDATE jobs SET state = 99 WHERE job_id = '", JobId(1), "'"));

  JobSetState state;
  state.job_id = JobId(1);
  state.state = regatta::v1::JOB_STATE_RUNNING;
  absl::Status status = Apply(*store, 2, {JobInsert{MakeJob(2)}, state});
  ASSERT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr(JobId(1)));
  EXPECT_THAT(std::string(status.message()), HasSubstr("offset 2"));
  // Neither the insert before the failure nor the offset was kept.
  EXPECT_EQ(*store->GetConsumerOffset("query"), 1);
  EXPECT_TRUE(store->GetJobDetails({JobId(2)}, false)->empty());
  // The writer is usable afterwards.
  ASSERT_TRUE(Apply(*store, 3, {JobInsert{MakeJob(3)}}).ok());
  EXPECT_EQ(*store->GetConsumerOffset("query"), 3);
}

TEST_F(SqliteStoreTest, ReopenKeepsData) {
  std::string dump;
  {
    std::unique_ptr<SqliteStore> store = Open();
    ASSERT_NE(store, nullptr);
    QueueUpsert queue;
    queue.queue.set_name("q");
    queue.queue.mutable_create_time()->set_seconds(1'700'000'000);
    std::vector<Mutation> mutations = {queue};
    for (int i = 0; i < 100; ++i) mutations.push_back(JobInsert{MakeJob(i)});
    ASSERT_TRUE(Apply(*store, 42, std::move(mutations)).ok());
    ASSERT_TRUE(store->StoreClientIds("q", {{"c1", JobId(1)}}).ok());
    dump = *store->DumpViews();
  }
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(*store->DumpViews(), dump);
  EXPECT_EQ(*store->GetConsumerOffset("query"), 42);
  EXPECT_EQ(store->LookupClientIds("q", {"c1"})->at("c1"), JobId(1));
  EXPECT_TRUE(store->GetQueue("q").ok());
  EXPECT_EQ(store->ListJobs({.limit = 1000})->size(), 100u);
}

TEST_F(SqliteStoreTest, ManyReadersBeyondTheIdlePool) {
  SqliteStoreOptions options;
  options.max_idle_readers = 1;
  std::unique_ptr<SqliteStore> store = Open(options);
  ASSERT_NE(store, nullptr);
  ASSERT_TRUE(Apply(*store, 1, {JobInsert{MakeJob(1)}}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        absl::StatusOr<std::vector<JobLocation>> locations = store->GetJobLocations({JobId(1)});
        ASSERT_TRUE(locations.ok()) << locations.status();
        ASSERT_EQ(locations->size(), 1u);
      }
    });
  }
  for (auto& t : threads) t.join();
}

TEST_F(SqliteStoreTest, JobsListWithTheirNamespaceAndFilterOnIt) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  regatta::v1::Job research = MakeJob(1);
  research.set_namespace_("research");
  regatta::v1::Job web = MakeJob(2);
  web.set_namespace_("web");
  ASSERT_TRUE(Apply(*store, 1, {JobInsert{research}, JobInsert{web}, JobInsert{MakeJob(3)}}).ok());

  absl::StatusOr<std::vector<regatta::v1::JobSummary>> all = store->ListJobs({});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].namespace_(), "research");
  EXPECT_EQ((*all)[1].namespace_(), "web");
  EXPECT_EQ((*all)[2].namespace_(), "");

  JobFilter filter;
  filter.namespace_ = "web";
  absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs = store->ListJobs(filter);
  ASSERT_TRUE(jobs.ok()) << jobs.status();
  ASSERT_EQ(jobs->size(), 1u);
  EXPECT_EQ((*jobs)[0].job_id(), JobId(2));
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
      store->GetJobDetails({JobId(1)}, /*expand_spec=*/false);
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->front().summary().namespace_(), "research");
}

// Issue 21: store errors may reach clients, so they carry no SQL (the log has it).
TEST_F(SqliteStoreTest, ErrorsCarryNoSql) {
  std::unique_ptr<SqliteStore> store = Open();
  ASSERT_NE(store, nullptr);
  JobFilter filter;
  // 1001 label terms: deeper than SQLite's expression tree allows.
  for (int i = 0; i < 1001; ++i) filter.labels.emplace_back(absl::StrCat("k", i), "v");
  absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs = store->ListJobs(filter);
  ASSERT_FALSE(jobs.ok());
  const std::string message(jobs.status().message());
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("SELECT")));
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("instr(")));
  EXPECT_THAT(message, ::testing::HasSubstr("sqlite store: prepare"));
}

}  // namespace
}  // namespace regatta::store
