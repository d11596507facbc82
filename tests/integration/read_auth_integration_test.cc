// Who may read what (docs/auth.md, "Reading"): every read of job-derived data needs the queue's
// `watch` verb or the global `watch_all_events`, as the event stream does. The whole platform
// in-process (with the embedded executor, so jobs and pipeline steps really run), each read
// route asked over gRPC and over REST by alice (admins: every permission), bob (watch on q-bob
// only) and ci-bot (group team-ci: watch on q-ci only).
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "regatta/v1/report_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
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

constexpr char kSecret[] = "s3cr3t-value";
const std::vector<std::string> kQueues = {"q-bob", "q-ci", "q-none"};

struct Caller {
  std::string name;
  std::string authorization;
  // The queues it may read (besides by owning a run).
  std::set<std::string> readable;
};

class ReadAuthTest : public PlatformTest {
 protected:
  void SetUp() override {
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    if (HasFatalFailure()) return;
    runs_ = pb::RunService::NewStub(channel_);
    catalog_ = pb::PipelineService::NewStub(channel_);
    reports_ = pb::SchedulingReportService::NewStub(channel_);
    devices_ = pb::DeviceService::NewStub(channel_);
    absl::string_view port_text = platform_->http_address();
    port_text = port_text.substr(port_text.rfind(':') + 1);
    ASSERT_TRUE(absl::SimpleAtoi(port_text, &http_port_));

    callers_ = {{"alice", Basic("alice", "alice-pw"), {kQueues.begin(), kQueues.end()}},
                {"bob", Basic("bob", "bob-pw"), {"q-bob"}},
                {"ci-bot", "Bearer ci-token", {"q-ci"}}};
    ASSERT_NO_FATAL_FAILURE(MakeQueue("q-bob", "user", "bob", {"watch"}));
    ASSERT_NO_FATAL_FAILURE(MakeQueue("q-ci", "group", "team-ci", {"submit", "watch"}));
    // bob may submit and cancel here, but not read.
    ASSERT_NO_FATAL_FAILURE(MakeQueue("q-none", "user", "bob", {"submit", "cancel"}));
    for (const std::string& queue : kQueues) {
      pb::SubmitJobsRequest request = Jobs(queue, "set", 1);
      pb::TaskSpec* task = request.mutable_items(0)->mutable_task();
      task->clear_command();
      for (const char* arg : {"/bin/sh", "-c", "echo log-of-$QUEUE_NAME"}) task->add_command(arg);
      (*task->mutable_env())["QUEUE_NAME"] = queue;
      (*task->mutable_env())["API_TOKEN"] = kSecret;
      pb::SubmitJobsResponse response;
      ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), request, &response).ok());
      jobs_by_queue_[queue] = response.items(0).job_id();
    }
    for (const std::string& queue : kQueues) {
      pb::CreateRunRequest request;
      request.set_spec(ReadTestPipeline("artifacts.yaml"));
      request.set_queue(queue);
      request.set_disable_cache(true);
      pb::PipelineRun run;
      grpc::Status status = runs_->CreateRun(Alice().get(), request, &run);
      ASSERT_TRUE(status.ok()) << status.error_message();
      runs_by_queue_[queue] = run.id();
    }
    for (const std::string& queue : kQueues) {
      ASSERT_NO_FATAL_FAILURE(WaitForJob(jobs_by_queue_[queue]));
      ASSERT_NO_FATAL_FAILURE(WaitForRun(runs_by_queue_[queue]));
      pb::ListArtifactsRequest request;
      request.set_run_id(runs_by_queue_[queue]);
      pb::ListArtifactsResponse artifacts;
      ASSERT_TRUE(catalog_->ListArtifacts(Alice().get(), request, &artifacts).ok());
      ASSERT_GT(artifacts.artifacts_size(), 0);
      artifacts_by_queue_[queue] = artifacts.artifacts(0).id();
    }
  }

  void MakeQueue(const std::string& name, const std::string& kind, const std::string& subject,
                 const std::vector<std::string>& verbs) {
    pb::CreateQueueRequest request;
    pb::Queue* queue = request.mutable_queue();
    queue->set_name(name);
    queue->set_priority_factor(1);
    pb::QueuePermission* permission = queue->add_permissions();
    pb::PermissionSubject* who = permission->add_subjects();
    who->set_kind(kind);
    who->set_name(subject);
    for (const std::string& verb : verbs) permission->add_verbs(verb);
    pb::Queue created;
    grpc::Status status = queues_->CreateQueue(Alice().get(), request, &created);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  void WaitForJob(const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      pb::GetJobStatusRequest request;
      request.add_job_ids(id);
      pb::GetJobStatusResponse response;
      ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), request, &response).ok());
      if (response.states().at(id) == pb::JOB_STATE_SUCCEEDED) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << "job " << id << " did not succeed";
  }

  void WaitForRun(const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    while (absl::Now() < deadline) {
      pb::GetRunRequest request;
      request.set_run_id(id);
      request.set_without_tasks(true);
      pb::PipelineRun run;
      ASSERT_TRUE(runs_->GetRun(Alice().get(), request, &run).ok());
      if (Ended(run.state())) {
        ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
        return;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    FAIL() << "run " << id << " did not end";
  }

  HttpReply Http(const Caller& caller, const std::string& method, const std::string& target,
                 const std::string& body = "") {
    return Fetch(http_port_, method, target, body, {{"Authorization", caller.authorization}});
  }

  // The `field` of each row of list `key` of GET `target`'s JSON answer (which must be 200).
  std::set<std::string> HttpList(const Caller& caller, const std::string& target,
                                 const std::string& key, const std::string& field) {
    HttpReply http = Http(caller, "GET", target);
    EXPECT_EQ(http.status, 200) << http.body;
    std::set<std::string> values;
    if (http.status != 200) return values;
    const nlohmann::json body = nlohmann::json::parse(http.body);
    for (const auto& row : body.value(key, nlohmann::json::array())) {
      values.insert(row[field].get<std::string>());
    }
    return values;
  }

  // A granted read answers OK (200); a denied one PERMISSION_DENIED (403) naming the verb, and
  // never the job's secret.
  static void ExpectGrpc(const Caller& caller, bool allowed, const grpc::Status& status,
                         const std::string& what) {
    if (allowed) {
      EXPECT_TRUE(status.ok()) << caller.name << " " << what << ": " << status.error_message();
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED)
          << caller.name << " " << what << ": " << status.error_message();
      EXPECT_THAT(status.error_message(), HasSubstr("watch")) << what;
    }
  }
  static void ExpectHttp(const Caller& caller, bool allowed, const HttpReply& reply,
                         const std::string& what) {
    EXPECT_EQ(reply.status, allowed ? 200 : 403)
        << caller.name << " " << what << ": " << reply.body;
    if (!allowed) {
      EXPECT_THAT(reply.body, Not(HasSubstr(kSecret))) << what;
    }
  }

  std::unique_ptr<pb::RunService::Stub> runs_;
  std::unique_ptr<pb::PipelineService::Stub> catalog_;
  std::unique_ptr<pb::SchedulingReportService::Stub> reports_;
  std::unique_ptr<pb::DeviceService::Stub> devices_;
  int http_port_ = 0;
  std::vector<Caller> callers_;
  std::map<std::string, std::string> jobs_by_queue_;
  std::map<std::string, std::string> runs_by_queue_;
  std::map<std::string, std::string> artifacts_by_queue_;
};

TEST_F(ReadAuthTest, JobReadsNeedWatchOnTheQueue) {
  for (const Caller& caller : callers_) {
    for (const std::string& queue : kQueues) {
      SCOPED_TRACE(absl::StrCat(caller.name, " on ", queue));
      const bool allowed = caller.readable.contains(queue);
      const std::string& job = jobs_by_queue_[queue];

      pb::GetJobStatusRequest status_request;
      status_request.add_job_ids(job);
      pb::GetJobStatusResponse status;
      ExpectGrpc(caller, allowed,
                 jobs_->GetJobStatus(As(caller.authorization).get(), status_request, &status),
                 "GetJobStatus");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/jobs/", job, "/status")),
                 "GET status");
      ExpectHttp(
          caller, allowed,
          Http(caller, "POST", "/v1/jobs:status", absl::StrCat(R"({"jobIds":[")", job, R"("]})")),
          "POST jobs:status");

      pb::GetJobDetailsRequest details_request;
      details_request.add_job_ids(job);
      details_request.set_expand_spec(true);
      pb::GetJobDetailsResponse details;
      ExpectGrpc(caller, allowed,
                 jobs_->GetJobDetails(As(caller.authorization).get(), details_request, &details),
                 "GetJobDetails");
      if (allowed) {
        EXPECT_EQ(details.jobs().at(job).job().task().env().at("API_TOKEN"), kSecret);
      } else {
        EXPECT_EQ(details.jobs_size(), 0);
      }
      HttpReply got = Http(caller, "GET", absl::StrCat("/v1/jobs/", job, "?expandSpec=true"));
      ExpectHttp(caller, allowed, got, "GET job");
      if (allowed) {
        EXPECT_THAT(got.body, HasSubstr(kSecret));
      }
      ExpectHttp(caller, allowed,
                 Http(caller, "POST", "/v1/jobs:details",
                      absl::StrCat(R"({"jobIds":[")", job, R"("],"expandSpec":true})")),
                 "POST jobs:details");

      // A list of one queue is refused as a whole.
      pb::ListJobsRequest list_request;
      list_request.set_queue(queue);
      pb::ListJobsResponse list;
      ExpectGrpc(caller, allowed,
                 jobs_->ListJobs(As(caller.authorization).get(), list_request, &list),
                 "ListJobs of the queue");
      if (allowed) {
        EXPECT_GE(list.jobs_size(), 1);
      }
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/jobs?queue=", queue)),
                 "GET jobs?queue");
      ExpectHttp(
          caller, allowed,
          Http(caller, "POST", "/v1/jobs:list", absl::StrCat(R"({"queue":")", queue, R"("})")),
          "POST jobs:list");

      grpc::ClientContext logs_context;
      logs_context.AddMetadata("authorization", caller.authorization);
      pb::GetJobLogsRequest logs_request;
      logs_request.set_job_id(job);
      auto reader = jobs_->GetJobLogs(&logs_context, logs_request);
      std::string log;
      pb::LogChunk chunk;
      while (reader->Read(&chunk)) log += chunk.data();
      ExpectGrpc(caller, allowed, reader->Finish(), "GetJobLogs");
      EXPECT_EQ(log.find("log-of-" + queue) != std::string::npos, allowed) << log;
      HttpReply logs = Http(caller, "GET", absl::StrCat("/v1/jobs/", job, "/logs"));
      ExpectHttp(caller, allowed, logs, "GET logs");
      EXPECT_EQ(logs.body.find("log-of-" + queue) != std::string::npos, allowed) << logs.body;

      pb::GetJobReportRequest report_request;
      report_request.set_job_id(job);
      pb::JobReport report;
      ExpectGrpc(caller, allowed,
                 reports_->GetJobReport(As(caller.authorization).get(), report_request, &report),
                 "GetJobReport");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/jobs/", job, "/report")),
                 "GET report");
    }
  }
}

TEST_F(ReadAuthTest, JobListsAcrossQueuesShowOnlyReadableQueues) {
  for (const Caller& caller : callers_) {
    SCOPED_TRACE(caller.name);
    pb::ListJobsRequest request;
    request.set_page_size(1000);
    pb::ListJobsResponse list;
    ASSERT_TRUE(jobs_->ListJobs(As(caller.authorization).get(), request, &list).ok());
    std::set<std::string> ids;
    for (const pb::JobSummary& job : list.jobs()) {
      EXPECT_TRUE(caller.readable.contains(job.queue())) << job.queue();
      ids.insert(job.job_id());
    }
    for (const std::string& queue : HttpList(caller, "/v1/jobs?pageSize=1000", "jobs", "queue")) {
      EXPECT_TRUE(caller.readable.contains(queue)) << queue;
    }
    EXPECT_EQ(HttpList(caller, "/v1/jobs?pageSize=1000", "jobs", "jobId"), ids);
    for (const std::string& queue : kQueues) {
      EXPECT_EQ(ids.contains(jobs_by_queue_[queue]), caller.readable.contains(queue)) << queue;
    }
  }
}

TEST_F(ReadAuthTest, PipelineRunReadsNeedWatchOnTheRunsQueue) {
  for (const Caller& caller : callers_) {
    for (const std::string& queue : kQueues) {
      SCOPED_TRACE(absl::StrCat(caller.name, " on ", queue));
      const bool allowed = caller.readable.contains(queue);
      const std::string& run = runs_by_queue_[queue];
      const std::string& artifact = artifacts_by_queue_[queue];

      pb::GetRunRequest get;
      get.set_run_id(run);
      pb::PipelineRun got;
      ExpectGrpc(caller, allowed, runs_->GetRun(As(caller.authorization).get(), get, &got),
                 "GetRun");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/runs/", run)), "GET run");

      pb::ListArtifactsRequest list;
      list.set_run_id(run);
      pb::ListArtifactsResponse artifacts;
      ExpectGrpc(caller, allowed,
                 catalog_->ListArtifacts(As(caller.authorization).get(), list, &artifacts),
                 "ListArtifacts");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/runs/", run, "/artifacts")),
                 "GET run artifacts");

      pb::GetArtifactRequest get_artifact;
      get_artifact.set_artifact_id(artifact);
      pb::PipelineArtifact one;
      ExpectGrpc(caller, allowed,
                 catalog_->GetArtifact(As(caller.authorization).get(), get_artifact, &one),
                 "GetArtifact");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/artifacts/", artifact)),
                 "GET artifact");
      pb::GetArtifactLineageRequest lineage_request;
      lineage_request.set_artifact_id(artifact);
      pb::ArtifactLineageResponse lineage;
      ExpectGrpc(
          caller, allowed,
          catalog_->GetArtifactLineage(As(caller.authorization).get(), lineage_request, &lineage),
          "GetArtifactLineage");
      ExpectHttp(caller, allowed,
                 Http(caller, "GET", absl::StrCat("/v1/artifacts/", artifact, ":lineage")),
                 "GET lineage");

      // The task's job is readable like the run.
      pb::GetJobDetailsRequest details_request;
      for (const pb::PipelineTask& task : got.tasks()) {
        for (const std::string& id : task.job_ids()) details_request.add_job_ids(id);
      }
      if (allowed) {
        ASSERT_GT(details_request.job_ids_size(), 0);
        pb::GetJobDetailsResponse details;
        EXPECT_TRUE(
            jobs_->GetJobDetails(As(caller.authorization).get(), details_request, &details).ok());
      }
    }
    // Lists leave out the runs of other queues.
    pb::ListRunsRequest list;
    list.set_page_size(100);
    pb::ListRunsResponse runs;
    ASSERT_TRUE(runs_->ListRuns(As(caller.authorization).get(), list, &runs).ok());
    std::set<std::string> ids;
    for (const pb::PipelineRun& run : runs.runs()) ids.insert(run.id());
    std::set<std::string> want;
    for (const std::string& queue : caller.readable) want.insert(runs_by_queue_[queue]);
    EXPECT_EQ(ids, want) << caller.name;
    EXPECT_EQ(HttpList(caller, "/v1/runs?pageSize=100", "runs", "id"), want) << caller.name;

    // The step cache serves every queue: only watch_all_events reads it.
    pb::ListCacheEntriesResponse cache;
    const bool all = caller.name == "alice";
    ExpectGrpc(caller, all, catalog_->ListCacheEntries(As(caller.authorization).get(), {}, &cache),
               "ListCacheEntries");
    ExpectHttp(caller, all, Http(caller, "GET", "/v1/cache"), "GET cache");
  }
}

TEST_F(ReadAuthTest, ListRunsPagesThroughUnreadableRuns) {
  // bob reads one run of three; pages of one still reach it, and the listing ends.
  const Caller& bob = callers_[1];
  std::vector<std::string> seen;
  std::string token;
  for (int page = 0; page < 10; ++page) {
    pb::ListRunsRequest request;
    request.set_page_size(1);
    request.set_page_token(token);
    pb::ListRunsResponse response;
    ASSERT_TRUE(runs_->ListRuns(As(bob.authorization).get(), request, &response).ok());
    for (const pb::PipelineRun& run : response.runs()) seen.push_back(run.id());
    token = response.next_page_token();
    if (token.empty()) break;
  }
  EXPECT_TRUE(token.empty());
  EXPECT_EQ(seen, std::vector<std::string>{runs_by_queue_["q-bob"]});
}

TEST_F(ReadAuthTest, RunOwnersReadTheirRunsAndChangesOfOthersRunsNeedWatch) {
  const Caller& bob = callers_[1];
  // bob may submit to q-none but not watch it: his own run is readable, alice's is not.
  pb::CreateRunRequest create;
  create.set_spec(ReadTestPipeline("artifacts.yaml"));
  create.set_queue("q-none");
  pb::PipelineRun own;
  grpc::Status created = runs_->CreateRun(As(bob.authorization).get(), create, &own);
  ASSERT_TRUE(created.ok()) << created.error_message();
  pb::GetRunRequest get;
  get.set_run_id(own.id());
  pb::PipelineRun got;
  EXPECT_TRUE(runs_->GetRun(As(bob.authorization).get(), get, &got).ok());
  EXPECT_EQ(Http(bob, "GET", absl::StrCat("/v1/runs/", own.id())).status, 200);
  pb::ListRunsResponse listed;
  ASSERT_TRUE(runs_->ListRuns(As(bob.authorization).get(), {}, &listed).ok());
  std::set<std::string> ids;
  for (const pb::PipelineRun& run : listed.runs()) ids.insert(run.id());
  EXPECT_EQ(ids, (std::set<std::string>{own.id(), runs_by_queue_["q-bob"]}));

  // bob may cancel in q-none, but archiving alice's run would answer with it.
  pb::RunIdRequest archive;
  archive.set_run_id(runs_by_queue_["q-none"]);
  pb::PipelineRun archived;
  grpc::Status denied = runs_->ArchiveRun(As(bob.authorization).get(), archive, &archived);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED) << denied.error_message();
  EXPECT_THAT(denied.error_message(), HasSubstr("watch"));
  EXPECT_EQ(
      Http(bob, "POST", absl::StrCat("/v1/runs/", runs_by_queue_["q-none"], ":archive")).status,
      403);
  // Deleting answers nothing, so cancel is enough.
  pb::DeleteRunResponse deleted;
  grpc::Status deleting = runs_->DeleteRun(As(bob.authorization).get(), archive, &deleted);
  EXPECT_TRUE(deleting.ok()) << deleting.error_message();
}

TEST_F(ReadAuthTest, RecurringRunReadsNeedWatchOnTheirQueue) {
  pb::CreatePipelineRequest upload;
  upload.set_name("counting");
  upload.set_spec(ReadTestPipeline("artifacts.yaml"));
  pb::CreatePipelineResponse uploaded;
  ASSERT_TRUE(catalog_->CreatePipeline(Alice().get(), upload, &uploaded).ok());
  std::map<std::string, std::string> recurring_by_queue;
  for (const std::string& queue : kQueues) {
    pb::CreateRecurringRunRequest request;
    request.set_pipeline("counting");
    pb::RecurringRun* rr = request.mutable_recurring_run();
    rr->set_display_name(absl::StrCat("nightly-", queue));
    rr->set_queue(queue);
    rr->mutable_periodic()->mutable_interval()->set_seconds(86400);
    pb::RecurringRun created;
    grpc::Status status = runs_->CreateRecurringRun(Alice().get(), request, &created);
    ASSERT_TRUE(status.ok()) << status.error_message();
    recurring_by_queue[queue] = created.id();
  }
  for (const Caller& caller : callers_) {
    std::set<std::string> want;
    for (const std::string& queue : kQueues) {
      SCOPED_TRACE(absl::StrCat(caller.name, " on ", queue));
      const bool allowed = caller.readable.contains(queue);
      if (allowed) want.insert(recurring_by_queue[queue]);
      pb::RecurringRunIdRequest get;
      get.set_recurring_run_id(recurring_by_queue[queue]);
      pb::RecurringRun got;
      ExpectGrpc(caller, allowed, runs_->GetRecurringRun(As(caller.authorization).get(), get, &got),
                 "GetRecurringRun");
      ExpectHttp(caller, allowed,
                 Http(caller, "GET", absl::StrCat("/v1/recurringruns/", recurring_by_queue[queue])),
                 "GET recurring run");
    }
    pb::ListRecurringRunsResponse listed;
    ASSERT_TRUE(runs_->ListRecurringRuns(As(caller.authorization).get(), {}, &listed).ok());
    std::set<std::string> ids;
    for (const pb::RecurringRun& rr : listed.recurring_runs()) ids.insert(rr.id());
    EXPECT_EQ(ids, want) << caller.name;
    EXPECT_EQ(HttpList(caller, "/v1/recurringruns", "recurringRuns", "id"), want) << caller.name;
  }
}

// Device objects belong to no queue: readable with watch_all_events or create_queue, or with
// watch on the queue the Configuration's brokers run in.
TEST_F(ReadAuthTest, DeviceReadsFollowTheBrokerQueue) {
  for (const char* name : {"cams", "plain"}) {
    pb::ApplyConfigurationRequest apply;
    pb::Configuration* c = apply.mutable_configuration();
    c->set_name(name);
    c->mutable_discovery_handler()->set_name("debugEcho");
    c->mutable_discovery_handler()->set_discovery_details("descriptions: [foo0]");
    if (std::string(name) == "cams") {
      pb::BrokerTemplate* broker = c->mutable_broker_spec()->mutable_broker_job_spec();
      broker->set_queue("q-bob");
      broker->mutable_job()->mutable_task()->add_command("/bin/true");
    }
    pb::Configuration applied;
    grpc::Status status = devices_->ApplyConfiguration(Alice().get(), apply, &applied);
    ASSERT_TRUE(status.ok()) << status.error_message();
    // An Instance as an agent would report it (on a node no executor has).
    pb::EventSequence sequence;
    pb::Instance* instance =
        sequence.add_events()->mutable_instance_node_seen()->mutable_instance();
    sequence.mutable_events(0)->mutable_instance_node_seen()->set_node("elsewhere");
    instance->set_name(absl::StrCat(name, "-aaaaaa"));
    instance->set_configuration_name(name);
    instance->set_capacity(1);
    ASSERT_TRUE(platform_->log()->Append({sequence}).ok());
  }
  SyncViews();
  for (const Caller& caller : callers_) {
    std::set<std::string> readable;
    for (const std::string name : {"cams", "plain"}) {
      SCOPED_TRACE(absl::StrCat(caller.name, " on ", name));
      const bool allowed = caller.name == "alice" || (caller.name == "bob" && name == "cams");
      if (allowed) readable.insert(name);
      pb::GetConfigurationRequest get;
      get.set_name(name);
      pb::Configuration c;
      ExpectGrpc(caller, allowed,
                 devices_->GetConfiguration(As(caller.authorization).get(), get, &c),
                 "GetConfiguration");
      ExpectHttp(caller, allowed, Http(caller, "GET", absl::StrCat("/v1/configurations/", name)),
                 "GET configuration");
      pb::GetInstanceRequest get_instance;
      get_instance.set_name(name + "-aaaaaa");
      pb::Instance instance;
      grpc::Status status =
          devices_->GetInstance(As(caller.authorization).get(), get_instance, &instance);
      EXPECT_EQ(status.error_code(),
                allowed ? grpc::StatusCode::OK : grpc::StatusCode::PERMISSION_DENIED)
          << status.error_message();
      ExpectHttp(caller, allowed,
                 Http(caller, "GET", absl::StrCat("/v1/instances/", name, "-aaaaaa")),
                 "GET instance");
    }
    pb::ListConfigurationsResponse configurations;
    ASSERT_TRUE(
        devices_->ListConfigurations(As(caller.authorization).get(), {}, &configurations).ok());
    std::set<std::string> names;
    for (const pb::Configuration& c : configurations.configurations()) names.insert(c.name());
    EXPECT_EQ(names, readable) << caller.name;
    pb::ListInstancesResponse instances;
    ASSERT_TRUE(devices_->ListInstances(As(caller.authorization).get(), {}, &instances).ok());
    names.clear();
    for (const pb::Instance& i : instances.instances()) names.insert(i.configuration_name());
    EXPECT_EQ(names, readable) << caller.name;
    EXPECT_EQ(HttpList(caller, "/v1/instances", "instances", "configurationName"), readable)
        << caller.name;
  }
}

// Queues themselves stay readable by anyone authenticated.
TEST_F(ReadAuthTest, QueuesNeedOnlyAuthentication) {
  for (const Caller& caller : callers_) {
    pb::ListQueuesResponse queues;
    ASSERT_TRUE(queues_->ListQueues(As(caller.authorization).get(), {}, &queues).ok());
    EXPECT_GE(queues.queues_size(), 3) << caller.name;
    EXPECT_EQ(Http(caller, "GET", "/v1/queues/q-none").status, 200) << caller.name;
  }
}

}  // namespace
}  // namespace regatta::testing
