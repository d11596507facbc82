// /metrics, /readyz and the audit log through the whole platform in-process (`regatta up` mode:
// the embedded local executor runs the jobs). The exposition is parsed by the Prometheus
// client's own parser (Debian's python3-prometheus-client) and checked against what the test
// did.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/run_service.grpc.pb.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"
#include "src/api/api_context.h"
#include "tests/integration/pipeline_test_util.h"
#include "tests/integration/platform_fixture.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using rest::testing::Fetch;
using rest::testing::HttpReply;
using ::testing::HasSubstr;
using ::testing::Not;

// Keeps every log line's message (the structured payload, no time or level).
class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mutex_);
    return lines_;
  }
  // Lines of audit records ("audit principal=... method=...").
  std::vector<std::string> AuditLines() {
    std::vector<std::string> out;
    for (const std::string& line : Lines()) {
      if (absl::StartsWith(line, "audit ")) out.push_back(line);
    }
    return out;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

// One sample of the parsed exposition.
struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

class ObservabilityTest : public PlatformTest {
 protected:
  void SetUp() override {
    sink_ = std::make_shared<CaptureSink>();
    spdlog::default_logger()->sinks().push_back(sink_);
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    runs_ = pb::RunService::NewStub(channel_);
  }

  void TearDown() override {
    PlatformTest::TearDown();
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }

  // GET /metrics, parsed by prometheus_client; fails the test if it does not parse.
  std::vector<Sample> Scrape() {
    HttpReply reply = Fetch(HttpPort(), "GET", "/metrics");
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_THAT(reply.header("content-type"), HasSubstr("text/plain; version=0.0.4"));
    const std::string file = (dir_ / "metrics.txt").string();
    std::ofstream(file) << reply.body;
    const std::string command = absl::StrCat("/usr/bin/python3 ", REGATTA_SOURCE_DIR,
                                             "/tests/integration/parse_metrics.py ", file);
    FILE* pipe = popen(command.c_str(), "r");
    EXPECT_NE(pipe, nullptr);
    std::string out;
    char buffer[4096];
    while (pipe != nullptr) {
      size_t n = fread(buffer, 1, sizeof buffer, pipe);
      if (n == 0) break;
      out.append(buffer, n);
    }
    const int status = pipe == nullptr ? -1 : pclose(pipe);
    EXPECT_EQ(status, 0) << "parse_metrics.py failed on:\n" << reply.body;
    std::vector<Sample> samples;
    if (status != 0) return samples;
    nlohmann::json parsed = nlohmann::json::parse(out);
    families_ = parsed["families"];
    for (const auto& s : parsed["samples"]) {
      Sample sample;
      sample.name = s[0];
      for (const auto& [k, v] : s[1].items()) sample.labels[k] = v;
      sample.value = s[2].is_number() ? s[2].get<double>() : 0;
      samples.push_back(std::move(sample));
    }
    return samples;
  }

  // The sum of the samples named `name` whose labels include `labels`; -1 if there is none.
  static double Value(const std::vector<Sample>& samples, const std::string& name,
                      const std::map<std::string, std::string>& labels = {}) {
    double sum = 0;
    bool found = false;
    for (const Sample& s : samples) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = s.labels.find(k);
        match = match && it != s.labels.end() && it->second == v;
      }
      if (!match) continue;
      sum += s.value;
      found = true;
    }
    return found ? sum : -1;
  }

  // Scrapes until `ready(samples)` holds (events reach the metrics a moment after the views).
  std::vector<Sample> ScrapeUntil(const std::function<bool(const std::vector<Sample>&)>& ready) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    std::vector<Sample> samples;
    while (absl::Now() < deadline) {
      samples = Scrape();
      if (samples.empty() || ready(samples)) return samples;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return samples;
  }

  void WaitForJobs(const pb::SubmitJobsResponse& submitted, pb::JobState state) {
    pb::GetJobStatusRequest request;
    for (const auto& item : submitted.items()) request.add_job_ids(item.job_id());
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      pb::GetJobStatusResponse response;
      ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), request, &response).ok());
      bool all = true;
      for (const auto& [id, s] : response.states()) all = all && s == state;
      if (all) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << "jobs did not reach " << pb::JobState_Name(state);
  }

  std::shared_ptr<CaptureSink> sink_;
  nlohmann::json families_;
  std::unique_ptr<pb::RunService::Stub> runs_;
};

TEST_F(ObservabilityTest, MetricsParseAndCountWhatHappened) {
  // scripts/install-deps.sh installs Debian's python3-prometheus-client; without it there is no
  // independent parser to check the exposition with.
  if (std::system("/usr/bin/python3 -c 'import prometheus_client' 2>/dev/null") != 0) {
    GTEST_SKIP() << "/usr/bin/python3 has no prometheus_client: run scripts/install-deps.sh "
                    "(python3-prometheus-client)";
  }
  ASSERT_TRUE(CreateQueue("metrics-a").ok());
  ASSERT_TRUE(CreateQueue("metrics-b").ok());
  // A third queue through REST: the REST gateway's calls pass the same interceptor.
  HttpReply created = Fetch(HttpPort(), "POST", "/v1/queues", R"({"name":"metrics-rest"})",
                            {{"Authorization", Basic("alice", "alice-pw")}});
  ASSERT_EQ(created.status, 200) << created.body;

  // Three jobs that run and succeed; two that wait for a device no node has (they stay queued).
  pb::SubmitJobsResponse ran;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("metrics-a", "s1", 3), &ran).ok());
  pb::SubmitJobsRequest waiting = Jobs("metrics-b", "s2", 2);
  for (auto& item : *waiting.mutable_items()) {
    (*item.mutable_task()->mutable_resources()->mutable_requests())["regatta.dev/absent"] = "1";
  }
  pb::SubmitJobsResponse queued;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), waiting, &queued).ok());
  // Bob may not submit to metrics-a.
  pb::SubmitJobsResponse denied;
  EXPECT_EQ(submit_->SubmitJobs(Bob().get(), Jobs("metrics-a", "s3", 1), &denied).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  WaitForJobs(ran, pb::JOB_STATE_SUCCEEDED);

  // A job that runs until it is preempted: running per queue, then one preemption.
  ASSERT_TRUE(CreateQueue("metrics-p").ok());
  pb::SubmitJobsRequest sleeper = Jobs("metrics-p", "s4", 1);
  sleeper.mutable_items(0)->mutable_task()->clear_command();
  sleeper.mutable_items(0)->mutable_task()->add_command("/bin/sleep");
  sleeper.mutable_items(0)->mutable_task()->add_command("60");
  pb::SubmitJobsResponse sleeping;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), sleeper, &sleeping).ok());
  WaitForJobs(sleeping, pb::JOB_STATE_RUNNING);
  std::vector<Sample> running = ScrapeUntil([](const std::vector<Sample>& s) {
    return Value(s, "regatta_queue_jobs", {{"queue", "metrics-p"}, {"state", "running"}}) == 1;
  });
  EXPECT_EQ(Value(running, "regatta_queue_jobs", {{"queue", "metrics-p"}, {"state", "running"}}),
            1);
  EXPECT_DOUBLE_EQ(Value(running, "regatta_queue_resource_allocated",
                         {{"queue", "metrics-p"}, {"resource", "cpu"}}),
                   0.1);
  pb::PreemptJobsRequest preempt;
  preempt.set_queue("metrics-p");
  preempt.add_job_ids(sleeping.items(0).job_id());
  pb::PreemptJobsResponse preempted;
  ASSERT_TRUE(submit_->PreemptJobs(Alice().get(), preempt, &preempted).ok());
  WaitForJobs(sleeping, pb::JOB_STATE_PREEMPTED);

  // A small pipeline: two steps.
  pb::CreateRunRequest run_request;
  run_request.set_spec(ReadTestPipeline("params.yaml"));
  (*run_request.mutable_parameters())["base"] = "3";
  pb::PipelineRun run;
  ASSERT_TRUE(runs_->CreateRun(Alice().get(), run_request, &run).ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (!Ended(run.state()) && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
    pb::GetRunRequest get;
    get.set_run_id(run.id());
    ASSERT_TRUE(runs_->GetRun(Alice().get(), get, &run).ok());
  }
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  bool audited_run = false;
  for (const std::string& line : sink_->AuditLines()) {
    audited_run |=
        absl::StrContains(line, absl::StrCat("method=CreateRun id=", run.id(), " code=OK"));
  }
  EXPECT_TRUE(audited_run) << ::testing::PrintToString(sink_->AuditLines());

  std::vector<Sample> m = ScrapeUntil([](const std::vector<Sample>& s) {
    return Value(s, "regatta_scheduler_job_outcomes_total",
                 {{"queue", "metrics-a"}, {"outcome", "succeeded"}}) == 3 &&
           Value(s, "regatta_pipeline_runs_total", {{"state", "SUCCEEDED"}}) == 1 &&
           Value(s, "regatta_scheduler_preempted_jobs_total", {{"queue", "metrics-p"}}) == 1;
  });
  ASSERT_FALSE(m.empty());
  // Types as declared.
  EXPECT_EQ(families_["regatta_api_requests"], "counter");
  EXPECT_EQ(families_["regatta_api_request_duration_seconds"], "histogram");
  EXPECT_EQ(families_["regatta_queue_size"], "gauge");
  EXPECT_EQ(families_["regatta_scheduler_cycle_seconds"], "histogram");

  // Scheduler: the three jobs were leased and succeeded; the two device jobs wait.
  EXPECT_EQ(Value(m, "regatta_scheduler_job_outcomes_total",
                  {{"queue", "metrics-a"}, {"outcome", "succeeded"}}),
            3);
  EXPECT_EQ(Value(m, "regatta_scheduler_scheduled_jobs_total", {{"queue", "metrics-a"}}), 3);
  EXPECT_EQ(Value(m, "regatta_scheduler_scheduled_jobs_total", {{"queue", "metrics-b"}}), -1);
  EXPECT_EQ(Value(m, "regatta_scheduler_preempted_jobs_total", {{"queue", "metrics-p"}}), 1);
  EXPECT_EQ(Value(m, "regatta_queue_jobs", {{"queue", "metrics-p"}}), -1);
  EXPECT_EQ(Value(m, "regatta_eventlog_append_errors_total"), 0);
  EXPECT_GE(Value(m, "regatta_scheduler_considered_jobs_total"), 3);
  EXPECT_GT(Value(m, "regatta_scheduler_cycle_seconds_count"), 0);
  EXPECT_GT(Value(m, "regatta_scheduler_cycles_total", {{"result", "ok"}}), 0);
  EXPECT_EQ(Value(m, "regatta_scheduler_ready"), 1);
  // Queues: every known queue shows its queued jobs, 0 included.
  EXPECT_EQ(Value(m, "regatta_queue_size", {{"queue", "metrics-b"}}), 2);
  EXPECT_EQ(Value(m, "regatta_queue_size", {{"queue", "metrics-a"}}), 0);
  EXPECT_EQ(Value(m, "regatta_queue_size", {{"queue", "metrics-rest"}}), 0);
  EXPECT_EQ(Value(m, "regatta_queue_jobs", {{"queue", "metrics-b"}, {"state", "queued"}}), 2);
  EXPECT_EQ(Value(m, "regatta_queue_jobs", {{"queue", "metrics-a"}}), -1);
  EXPECT_DOUBLE_EQ(
      Value(m, "regatta_queue_resource_queued", {{"queue", "metrics-b"}, {"resource", "cpu"}}),
      0.2);
  EXPECT_EQ(Value(m, "regatta_queue_priority_factor", {{"queue", "metrics-a"}}), 1);
  EXPECT_GT(Value(m, "regatta_scheduler_fair_share", {{"queue", "metrics-b"}}), 0);
  // API: calls by method and code, REST included.
  const std::map<std::string, std::string> submit_ok{
      {"service", "regatta.v1.SubmitService"}, {"method", "SubmitJobs"}, {"code", "OK"}};
  EXPECT_GE(Value(m, "regatta_api_requests_total", submit_ok), 2);
  EXPECT_GE(Value(m, "regatta_api_request_duration_seconds_count", submit_ok), 2);
  EXPECT_EQ(Value(m, "regatta_api_requests_total",
                  {{"method", "SubmitJobs"}, {"code", "PERMISSION_DENIED"}}),
            1);
  // Three over gRPC, one over REST.
  EXPECT_EQ(Value(m, "regatta_api_requests_total", {{"method", "CreateQueue"}, {"code", "OK"}}), 4);
  EXPECT_EQ(Value(m, "regatta_api_requests_total", {{"method", "CreateRun"}, {"code", "OK"}}), 1);
  // The log: queue changes and submits are durable appends; the scheduler's are visible ones.
  EXPECT_GE(Value(m, "regatta_eventlog_append_seconds_count", {{"wait", "durable"}}), 5);
  EXPECT_GT(Value(m, "regatta_eventlog_append_seconds_count", {{"wait", "visible"}}), 0);
  EXPECT_GT(Value(m, "regatta_eventlog_last_offset"), 0);
  EXPECT_GE(Value(m, "regatta_ingest_lag_records", {{"consumer", "query"}}), 0);
  EXPECT_GE(Value(m, "regatta_ingest_lag_seconds", {{"consumer", "query"}}), 0);
  // The embedded executor: alive, heartbeating, with its node.
  EXPECT_GT(Value(m, "regatta_executor_heartbeats_total"), 0);
  EXPECT_EQ(Value(m, "regatta_executor_up"), 1);
  EXPECT_GE(Value(m, "regatta_executor_nodes"), 1);
  EXPECT_GE(Value(m, "regatta_pool_nodes"), 1);
  EXPECT_GT(Value(m, "regatta_pool_capacity", {{"resource", "cpu"}}), 0);
  // Pipelines: one run through pending, running, succeeded; its two steps succeeded.
  EXPECT_EQ(Value(m, "regatta_pipeline_runs_total", {{"state", "PENDING"}}), 1);
  EXPECT_EQ(Value(m, "regatta_pipeline_runs_total", {{"state", "RUNNING"}}), 1);
  EXPECT_EQ(Value(m, "regatta_pipeline_runs_total", {{"state", "SUCCEEDED"}}), 1);
  EXPECT_GE(Value(m, "regatta_pipeline_tasks_total", {{"state", "SUCCEEDED"}}), 2);
  EXPECT_EQ(Value(m, "regatta_pipeline_active_runs"), 0);
  EXPECT_EQ(Value(m, "regatta_build_info"), 1);
  // docs/metrics.md is true: every metric it lists is exposed (a family, maybe without samples).
  std::ifstream doc(absl::StrCat(REGATTA_SOURCE_DIR, "/docs/metrics.md"));
  std::string line;
  int documented = 0;
  while (std::getline(doc, line)) {
    if (!absl::StartsWith(line, "| `regatta_") && !absl::StartsWith(line, "| `process_")) continue;
    std::string name = line.substr(3, line.find('`', 3) - 3);
    ++documented;
    // The parser names a counter's family without "_total".
    if (absl::EndsWith(name, "_total")) name.resize(name.size() - 6);
    EXPECT_TRUE(families_.contains(name)) << name << " is documented but not exposed";
  }
  EXPECT_GT(documented, 40);

  // Health: alive and ready once the scheduler has cycled.
  HttpReply health = Fetch(HttpPort(), "GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  HttpReply ready = Fetch(HttpPort(), "GET", "/readyz");
  EXPECT_EQ(ready.status, 200) << ready.body;
  EXPECT_THAT(ready.body, HasSubstr("[+]log ok"));
  EXPECT_THAT(ready.body, HasSubstr("[+]views ok"));
  EXPECT_THAT(ready.body, HasSubstr("[+]scheduler ok"));
  EXPECT_THAT(ready.body, HasSubstr("readyz check passed"));
  // Only GET.
  HttpReply post = Fetch(HttpPort(), "POST", "/metrics", "{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET");
}

TEST_F(ObservabilityTest, AuditsStateChangingCallsOnly) {
  ASSERT_TRUE(CreateQueue("audited").ok());
  std::vector<std::string> lines = sink_->AuditLines();
  ASSERT_EQ(lines.size(), 1u) << ::testing::PrintToString(sink_->Lines());
  EXPECT_THAT(lines[0], HasSubstr("principal=alice"));
  EXPECT_THAT(lines[0], HasSubstr("service=regatta.v1.QueueService method=CreateQueue"));
  EXPECT_THAT(lines[0], HasSubstr("queue=audited"));
  EXPECT_THAT(lines[0], HasSubstr("code=OK"));

  // Reads are not audited.
  pb::GetQueueRequest get;
  get.set_name("audited");
  pb::Queue queue;
  ASSERT_TRUE(queues_->GetQueue(Alice().get(), get, &queue).ok());
  pb::ListQueuesRequest list;
  pb::ListQueuesResponse listed;
  ASSERT_TRUE(queues_->ListQueues(Alice().get(), list, &listed).ok());
  EXPECT_EQ(sink_->AuditLines().size(), 1u);

  // A submit with a secret in its environment: the target is logged, never the spec.
  pb::SubmitJobsRequest secret = Jobs("audited", "set-1", 2);
  (*secret.mutable_items(0)->mutable_task()->mutable_env())["TOKEN"] = "hunter2";
  pb::SubmitJobsResponse submitted;
  auto context = Alice();
  ASSERT_TRUE(submit_->SubmitJobs(context.get(), secret, &submitted).ok());
  // The principal handed to the interceptor never reaches the client.
  EXPECT_EQ(context->GetServerTrailingMetadata().count(api::kPrincipalTrailer), 0u);
  lines = sink_->AuditLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[1], HasSubstr("principal=alice"));
  EXPECT_THAT(lines[1], HasSubstr("method=SubmitJobs queue=audited job_set=set-1 jobs=2 code=OK"));
  EXPECT_THAT(lines[1], Not(HasSubstr("hunter2")));

  // Refused calls are audited with their code: by authorization, and by authentication.
  pb::CancelJobsRequest cancel;
  cancel.set_queue("audited");
  cancel.add_job_ids(submitted.items(0).job_id());
  pb::CancelJobsResponse cancelled;
  EXPECT_EQ(submit_->CancelJobs(Bob().get(), cancel, &cancelled).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(submit_->CancelJobs(As(Basic("alice", "wrong")).get(), cancel, &cancelled).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  lines = sink_->AuditLines();
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_THAT(lines[2], HasSubstr("principal=bob"));
  EXPECT_THAT(lines[2], HasSubstr(absl::StrCat("method=CancelJobs queue=audited job_ids=",
                                               submitted.items(0).job_id())));
  EXPECT_THAT(lines[2], HasSubstr("code=PERMISSION_DENIED"));
  EXPECT_THAT(lines[3], HasSubstr("principal=\"\""));
  EXPECT_THAT(lines[3], HasSubstr("code=UNAUTHENTICATED"));
  EXPECT_THAT(lines[3], Not(HasSubstr("wrong")));

  // Through REST too.
  HttpReply cordoned = Fetch(HttpPort(), "POST", "/v1/queues/audited:cordon", "{}",
                             {{"Authorization", Basic("alice", "alice-pw")}});
  ASSERT_EQ(cordoned.status, 200) << cordoned.body;
  lines = sink_->AuditLines();
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_THAT(lines[4], HasSubstr("principal=alice"));
  EXPECT_THAT(lines[4], HasSubstr("method=CordonQueue name=audited code=OK"));
  // The HTTP client's address, not the in-process channel's "unknown".
  EXPECT_THAT(lines[4], HasSubstr("peer=rest:127.0.0.1"));
  EXPECT_THAT(lines[0], HasSubstr("peer=ipv4:127.0.0.1:"));
}

class MetricsAuthTest : public ObservabilityTest {
 protected:
  void SetUp() override {
    extra_overrides_ = {"metrics.requireAuth=true"};
    ObservabilityTest::SetUp();
  }
};

TEST_F(MetricsAuthTest, MetricsNeedCredentialsWhenConfigured) {
  HttpReply anonymous = Fetch(HttpPort(), "GET", "/metrics");
  EXPECT_EQ(anonymous.status, 401) << anonymous.body;
  HttpReply wrong =
      Fetch(HttpPort(), "GET", "/metrics", "", {{"Authorization", Basic("alice", "nope")}});
  EXPECT_EQ(wrong.status, 401);
  HttpReply token =
      Fetch(HttpPort(), "GET", "/metrics", "", {{"Authorization", "Bearer ci-token"}});
  EXPECT_EQ(token.status, 200);
  EXPECT_THAT(token.body, HasSubstr("regatta_build_info"));
  // Health stays open for probes.
  EXPECT_EQ(Fetch(HttpPort(), "GET", "/healthz").status, 200);
  EXPECT_NE(Fetch(HttpPort(), "GET", "/readyz").status, 401);
}

}  // namespace
}  // namespace regatta::testing
