#include <atomic>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/device_service.pb.h"
#include "regatta/v1/pipelines.pb.h"
#include "regatta/v1/queue_service.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "src/common/logging.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/observability/audit.h"
#include "src/observability/http_endpoints.h"
#include "src/observability/metrics.h"
#include "src/observability/state_collector.h"
#include "src/store/pipeline_views.h"

namespace regatta::observability {
namespace {

namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;

TEST(AuditTest, OnlyWritingMethodsOfThePublicApi) {
  EXPECT_TRUE(IsAudited("/regatta.v1.SubmitService/SubmitJobs"));
  EXPECT_TRUE(IsAudited("/regatta.v1.SubmitService/CancelJobSet"));
  EXPECT_TRUE(IsAudited("/regatta.v1.QueueService/UncordonQueue"));
  EXPECT_TRUE(IsAudited("/regatta.v1.RunService/TerminateRun"));
  EXPECT_TRUE(IsAudited("/regatta.v1.RunService/DisableRecurringRun"));
  EXPECT_TRUE(IsAudited("/regatta.v1.PipelineService/PruneCache"));
  EXPECT_TRUE(IsAudited("/regatta.v1.DeviceService/ApplySecret"));
  EXPECT_FALSE(IsAudited("/regatta.v1.QueueService/GetQueue"));
  EXPECT_FALSE(IsAudited("/regatta.v1.QueueService/ListQueues"));
  EXPECT_FALSE(IsAudited("/regatta.v1.JobService/GetJobLogs"));
  EXPECT_FALSE(IsAudited("/regatta.v1.EventService/GetJobSetEvents"));
  // Executors' own traffic is counted, not audited.
  EXPECT_FALSE(IsAudited("/regatta.v1.ExecutorService/ReportEvents"));
  // A verb must end the word: "Cancellations" is not "Cancel".
  EXPECT_FALSE(IsAudited("/regatta.v1.JobService/CancellationsOf"));
  EXPECT_FALSE(IsAudited("/other.Service/SubmitJobs"));
}

TEST(AuditTest, TargetsNameWhatTheCallActsOnNeverTheSpec) {
  pb::SubmitJobsRequest submit;
  submit.set_queue("q");
  submit.set_job_set("set");
  for (int i = 0; i < 2; ++i) {
    auto* item = submit.add_items();
    item->mutable_task()->add_command("/bin/echo");
    (*item->mutable_task()->mutable_env())["PASSWORD"] = "hunter2";
  }
  EXPECT_THAT(AuditTargets(submit),
              ElementsAre(Pair("queue", "q"), Pair("job_set", "set"), Pair("jobs", "2")));

  pb::CancelJobsRequest cancel;
  cancel.set_queue("q");
  for (int i = 0; i < 25; ++i) cancel.add_job_ids(absl::StrCat("j", i));
  cancel.set_reason("because");
  AuditFields targets = AuditTargets(cancel);
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[1].first, "job_ids");
  EXPECT_THAT(targets[1].second, HasSubstr("j0,j1,"));
  EXPECT_THAT(targets[1].second, HasSubstr("j19,+5 more"));
  EXPECT_THAT(targets[1].second, Not(HasSubstr("j20")));

  pb::CreateQueueRequest create;
  create.mutable_queue()->set_name("team-a");
  create.mutable_queue()->set_priority_factor(2);
  EXPECT_THAT(AuditTargets(create), ElementsAre(Pair("queue", "team-a")));

  pb::ApplySecretRequest secret;
  secret.mutable_secret()->set_name("camera-creds");
  (*secret.mutable_secret()->mutable_data())["password"] = "hunter2";
  EXPECT_THAT(AuditTargets(secret), ElementsAre(Pair("secret", "camera-creds")));

  pb::PipelineRun run;
  run.set_id("run-1");
  run.set_display_name("nightly");
  EXPECT_THAT(AuditResult(run), ElementsAre(Pair("id", "run-1")));

  pb::CancelJobSetRequest long_name;
  long_name.set_queue(std::string(1000, 'x'));
  targets = AuditTargets(long_name);
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].second.size(), 259u);  // 256 bytes and "..."
}

TEST(AuditTest, LineIsStructuredJsonWithLoggingFormatJson) {
  InitLogging("info", "json");  // once per process: it names the logger
  const std::string line =
      LogLineOf("audit", AuditLine("/regatta.v1.SubmitService/CancelJobs", "bob",
                                   {{"queue", "q \"1\""}, {"job_ids", "a,b"}}, {},
                                   "PERMISSION_DENIED", "ipv4:127.0.0.1:5555"));
  // The logger's pattern wraps the fields in braces (see InitLogging).
  nlohmann::json json = nlohmann::json::parse("{" + line + "}");
  EXPECT_EQ(json["msg"], "audit");
  EXPECT_EQ(json["principal"], "bob");
  EXPECT_EQ(json["service"], "regatta.v1.SubmitService");
  EXPECT_EQ(json["method"], "CancelJobs");
  EXPECT_EQ(json["queue"], "q \"1\"");
  EXPECT_EQ(json["job_ids"], "a,b");
  EXPECT_EQ(json["code"], "PERMISSION_DENIED");
  EXPECT_EQ(json["peer"], "ipv4:127.0.0.1:5555");
}

TEST(MetricsTest, CycleReportsBecomeCounters) {
  Metrics metrics;
  scheduler::CycleReport report;
  report.duration = absl::Milliseconds(3);
  report.rounds = {{"cpu", 7}};
  report.published = {{"q", "cpu", "leased", 3},
                      {"q", "", "succeeded", 2},
                      {"q", "", "preempted", 1},
                      {"r", "", "failed", 1}};
  metrics.ObserveCycle(report);
  metrics.ObserveCycle(report);
  scheduler::CycleReport failed;
  failed.ok = false;
  metrics.ObserveCycle(failed);
  const std::string text = metrics.Render();
  EXPECT_THAT(text,
              HasSubstr("regatta_scheduler_scheduled_jobs_total{pool=\"cpu\",queue=\"q\"} 6"));
  EXPECT_THAT(
      text, HasSubstr("regatta_scheduler_job_outcomes_total{outcome=\"succeeded\",queue=\"q\"} 4"));
  EXPECT_THAT(text,
              HasSubstr("regatta_scheduler_job_outcomes_total{outcome=\"failed\",queue=\"r\"} 2"));
  EXPECT_THAT(text, HasSubstr("regatta_scheduler_preempted_jobs_total{queue=\"q\"} 2"));
  EXPECT_THAT(text, HasSubstr("regatta_scheduler_considered_jobs_total{pool=\"cpu\"} 14"));
  EXPECT_THAT(text, HasSubstr("regatta_scheduler_cycles_total{result=\"ok\"} 2"));
  EXPECT_THAT(text, HasSubstr("regatta_scheduler_cycles_total{result=\"error\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_scheduler_cycle_seconds_count 2"));
}

TEST(MetricsTest, RequestsByMethodAndCode) {
  Metrics metrics;
  static const char kSubmit[] = "/regatta.v1.SubmitService/SubmitJobs";
  static const char kWatch[] = "/regatta.v1.EventService/GetJobSetEvents";
  metrics.ObserveRequest(kSubmit, grpc::StatusCode::OK, true, absl::Milliseconds(2));
  metrics.ObserveRequest(kSubmit, grpc::StatusCode::OK, true, absl::Milliseconds(4));
  metrics.ObserveRequest(kSubmit, grpc::StatusCode::PERMISSION_DENIED, true, absl::Milliseconds(1));
  metrics.ObserveRequest(kWatch, grpc::StatusCode::CANCELLED, false, absl::Minutes(5));
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("regatta_api_requests_total{code=\"OK\",method=\"SubmitJobs\","
                              "service=\"regatta.v1.SubmitService\"} 2"));
  EXPECT_THAT(text, HasSubstr("regatta_api_requests_total{code=\"PERMISSION_DENIED\","
                              "method=\"SubmitJobs\",service=\"regatta.v1.SubmitService\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_api_request_duration_seconds_count{code=\"OK\","
                              "method=\"SubmitJobs\",service=\"regatta.v1.SubmitService\"} 2"));
  // A stream's lifetime is not a request latency.
  EXPECT_THAT(text, HasSubstr("method=\"GetJobSetEvents\",service=\"regatta.v1.EventService\"} 1"));
  EXPECT_THAT(text,
              Not(HasSubstr("regatta_api_request_duration_seconds_count{code=\"CANCELLED\"")));
}

store::IngestBatch PipelineBatch(std::vector<pb::Event> events) {
  store::IngestBatch batch;
  for (pb::Event& e : events) {
    batch.mutations.push_back({0, store::PipelineChange{std::move(e)}});
  }
  return batch;
}

pb::Event RunCreated(const std::string& id) {
  pb::Event e;
  e.mutable_pipeline_run_created()->mutable_run()->set_id(id);
  e.mutable_pipeline_run_created()->mutable_run()->set_state(pb::PIPELINE_RUN_STATE_PENDING);
  return e;
}

pb::Event RunUpdated(const std::string& id, pb::PipelineRunState state) {
  pb::Event e;
  e.mutable_pipeline_run_updated()->set_run_id(id);
  e.mutable_pipeline_run_updated()->set_state(state);
  return e;
}

pb::Event TaskUpdated(const std::string& run, const std::string& path,
                      pb::PipelineTaskState state) {
  pb::Event e;
  e.mutable_pipeline_task_updated()->set_run_id(run);
  e.mutable_pipeline_task_updated()->mutable_task()->set_path(path);
  e.mutable_pipeline_task_updated()->mutable_task()->set_state(state);
  return e;
}

TEST(MetricsTest, PipelineTransitionsCountOncePerState) {
  Metrics metrics;
  metrics.ObserveIngestBatch(PipelineBatch({
      RunCreated("r1"),
      RunUpdated("r1", pb::PIPELINE_RUN_STATE_RUNNING),
      TaskUpdated("r1", "a", pb::PIPELINE_TASK_STATE_RUNNING),
      // Progress updates repeat a state: not a transition.
      TaskUpdated("r1", "a", pb::PIPELINE_TASK_STATE_RUNNING),
      RunUpdated("r1", pb::PIPELINE_RUN_STATE_RUNNING),
      TaskUpdated("r1", "b", pb::PIPELINE_TASK_STATE_CACHED),
      TaskUpdated("r1", "a", pb::PIPELINE_TASK_STATE_SUCCEEDED),
  }));
  metrics.ObserveIngestBatch(PipelineBatch({RunUpdated("r1", pb::PIPELINE_RUN_STATE_SUCCEEDED)}));
  const std::string text = metrics.Render();
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_runs_total{state=\"PENDING\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_runs_total{state=\"RUNNING\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_runs_total{state=\"SUCCEEDED\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_tasks_total{state=\"RUNNING\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_tasks_total{state=\"CACHED\"} 1"));
  EXPECT_THAT(text, HasSubstr("regatta_pipeline_tasks_total{state=\"SUCCEEDED\"} 1"));
}

class ReadinessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-readyz-", reinterpret_cast<uintptr_t>(this));
    std::filesystem::create_directories(dir_);
    absl::StatusOr<std::unique_ptr<eventlog::SqliteEventLog>> log =
        eventlog::SqliteEventLog::Open((dir_ / "log.db").string());
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = *std::move(log);
  }
  void TearDown() override {
    log_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Append(absl::Time created) {
    pb::EventSequence sequence;
    sequence.set_queue("q");
    *sequence.add_events()->mutable_created() =
        google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(created));
    ASSERT_TRUE(log_->Append({sequence}).ok());
  }

  std::filesystem::path dir_;
  std::unique_ptr<eventlog::SqliteEventLog> log_;
};

TEST_F(ReadinessTest, EachCheckSaysWhyItFails) {
  std::atomic<bool> serving{false};
  ReadinessSources sources;
  sources.log = log_.get();
  sources.serving = &serving;
  rest::HttpResponse starting = Readiness(sources);
  EXPECT_EQ(starting.status, 503);
  EXPECT_THAT(starting.body, HasSubstr("[+]log ok"));
  EXPECT_THAT(starting.body, HasSubstr("[-]api failed: not serving"));
  EXPECT_THAT(starting.body, HasSubstr("readyz check failed"));

  serving = true;
  rest::HttpResponse ready = Readiness(sources);
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_THAT(ready.body, HasSubstr("readyz check passed"));

  log_->Close();
  rest::HttpResponse closed = Readiness(sources);
  EXPECT_EQ(closed.status, 503);
  EXPECT_THAT(closed.body, HasSubstr("[-]log failed:"));
  EXPECT_THAT(closed.body, HasSubstr("is closed"));
}

TEST_F(ReadinessTest, ViewsBehindTheLogForTooLongAreNotReady) {
  Append(absl::Now() - absl::Minutes(5));
  Append(absl::Now());
  // The views applied nothing: the oldest unapplied record is five minutes old.
  absl::StatusOr<ViewLag> lag = MeasureViewLag(log_.get(), 0, absl::Now());
  ASSERT_TRUE(lag.ok()) << lag.status();
  EXPECT_EQ(lag->records, 2);
  EXPECT_GE(lag->age, absl::Minutes(5));
  // Caught up to the first: the second is fresh.
  lag = MeasureViewLag(log_.get(), 1, absl::Now());
  ASSERT_TRUE(lag.ok());
  EXPECT_EQ(lag->records, 1);
  EXPECT_LT(lag->age, absl::Minutes(1));
  lag = MeasureViewLag(log_.get(), 2, absl::Now());
  ASSERT_TRUE(lag.ok());
  EXPECT_EQ(lag->records, 0);
  EXPECT_EQ(lag->age, absl::ZeroDuration());
}

}  // namespace
}  // namespace regatta::observability
