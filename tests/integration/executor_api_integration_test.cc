// The executor API over real gRPC against the in-process platform (`regatta server` mode, so no
// embedded executor): the test plays the executor.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/api/executor_service.h"
#include "src/api/in_process_executor_api.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

class ExecutorApiTest : public PlatformTest {
 protected:
  void SetUp() override {
    PlatformTest::SetUp();
    executor_ = regatta::v1::ExecutorService::NewStub(channel_);
  }

  static regatta::v1::LeaseRequest Request(const std::string& cpu = "4") {
    regatta::v1::LeaseRequest request;
    request.set_executor_id("exec-1");
    request.set_pool("default");
    request.set_incarnation("one");
    request.set_max_runs_to_lease(100);
    regatta::v1::NodeInfo* node = request.add_nodes();
    node->set_id("node-1");
    (*node->mutable_allocatable_resources())["cpu"] = cpu;
    (*node->mutable_allocatable_resources())["memory"] = "8Gi";
    return request;
  }

  // Sends one lease request and reads until the end marker.
  std::vector<regatta::v1::LeaseStreamMessage> LeaseOnce(const regatta::v1::LeaseRequest& request,
                                                         grpc::Status* status = nullptr) {
    auto ctx = Alice();
    auto stream = executor_->LeaseJobRuns(ctx.get());
    std::vector<regatta::v1::LeaseStreamMessage> out;
    bool answered = false;
    if (stream->Write(request)) {
      regatta::v1::LeaseStreamMessage message;
      while (stream->Read(&message)) {
        if (message.has_end()) {
          answered = true;
          break;
        }
        out.push_back(message);
      }
    }
    stream->WritesDone();
    if (answered) ctx->TryCancel();  // the session would go on; a refused one has its status
    grpc::Status s = stream->Finish();
    if (status != nullptr) *status = s;
    return out;
  }

  // Asks for leases until one comes (the first request registers the executor); its run id,
  // or empty.
  std::string FirstLeasedRun() {
    for (int i = 0; i < 50; ++i) {
      for (const auto& m : LeaseOnce(Request())) {
        if (m.has_lease()) return m.lease().run_id();
      }
    }
    return "";
  }

  std::unique_ptr<regatta::v1::ExecutorService::Stub> executor_;
};

TEST_F(ExecutorApiTest, LeasesQueuedJobsOnReportedNodesAndTakesTheirRunEvents) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "s", 3), &submitted).ok());
  SyncViews();

  // The first request registers the executor; leases follow in a later answer.
  std::vector<regatta::v1::JobRunLease> leases;
  for (int i = 0; i < 50 && leases.size() < 3; ++i) {
    for (const auto& m : LeaseOnce(Request())) {
      if (m.has_lease()) leases.push_back(m.lease());
    }
  }
  ASSERT_EQ(leases.size(), 3u);
  for (const auto& lease : leases) {
    EXPECT_EQ(lease.node_id(), "node-1");
    EXPECT_EQ(lease.executor_id(), "exec-1");
    EXPECT_EQ(lease.job().queue(), "q");
    EXPECT_EQ(lease.job().task().command(0), "/bin/true");
  }

  // Report the first run's whole life; the queue and job set the executor gives are not trusted.
  regatta::v1::ReportEventsRequest report;
  report.set_executor_id("exec-1");
  auto* seq = report.add_sequences();
  seq->set_queue("some-other-queue");
  auto* e = seq->add_events();
  e->mutable_job_run_running()->set_job_id(leases[0].job().id());
  e->mutable_job_run_running()->set_run_id(leases[0].run_id());
  e = seq->add_events();
  e->mutable_job_run_succeeded()->set_job_id(leases[0].job().id());
  e->mutable_job_run_succeeded()->set_run_id(leases[0].run_id());
  e = seq->add_events();
  e->mutable_job_run_succeeded()->set_job_id("no-such-job");
  e->mutable_job_run_succeeded()->set_run_id("no-such-run");
  // Successes the report made durable are announced at once (the pipeline engine's fast path);
  // an ignored run is not.
  absl::Mutex announced_mu;
  std::vector<std::string> announced;
  platform_->executor_service()->set_on_runs_succeeded(
      [&](const std::vector<std::string>& job_ids) {
        absl::MutexLock lock(&announced_mu);
        announced.insert(announced.end(), job_ids.begin(), job_ids.end());
      });
  regatta::v1::ReportEventsResponse response;
  grpc::Status status = executor_->ReportEvents(Alice().get(), report, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(response.ignored_run_ids(), ::testing::ElementsAre("no-such-run"));
  {
    absl::MutexLock lock(&announced_mu);
    EXPECT_THAT(announced, ::testing::ElementsAre(leases[0].job().id()));
  }

  regatta::v1::GetJobStatusRequest req;
  req.add_job_ids(leases[0].job().id());
  for (int i = 0; i < 100; ++i) {
    regatta::v1::GetJobStatusResponse states;
    ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), req, &states).ok());
    if (states.states().at(leases[0].job().id()) == regatta::v1::JOB_STATE_SUCCEEDED) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  regatta::v1::GetJobStatusResponse states;
  ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), req, &states).ok());
  EXPECT_EQ(states.states().at(leases[0].job().id()), regatta::v1::JOB_STATE_SUCCEEDED);
}

// The scheduler only commits a lease. An executor of another process gets it once it is
// durable, so a machine crash cannot lose the lease of a run that is already running elsewhere.
TEST_F(ExecutorApiTest, ALeaseReachesAnotherProcesssExecutorOnlyOnceItIsDurable) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "s", 1), &submitted).ok());
  SyncViews();
  const std::string run_id = FirstLeasedRun();
  ASSERT_FALSE(run_id.empty());
  auto* log = dynamic_cast<eventlog::SqliteEventLog*>(platform_->log());
  ASSERT_NE(log, nullptr);
  const int64_t durable = log->DurableOffset();
  int64_t leased_at = 0;
  absl::StatusOr<std::vector<eventlog::LogRecord>> records = log->Read(0, 10'000);
  ASSERT_TRUE(records.ok()) << records.status();
  for (const eventlog::LogRecord& record : *records) {
    for (const regatta::v1::Event& e : record.sequence.events()) {
      if (e.has_job_run_leased() && e.job_run_leased().run_id() == run_id) {
        leased_at = record.offset;
      }
    }
  }
  ASSERT_GT(leased_at, 0);
  EXPECT_GE(durable, leased_at);
}

TEST_F(ExecutorApiTest, CancelOfARunningJobIsSentToItsExecutor) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "s", 1), &submitted).ok());
  SyncViews();
  const std::string run_id = FirstLeasedRun();
  ASSERT_FALSE(run_id.empty());
  regatta::v1::CancelJobsRequest cancel;
  cancel.add_job_ids(submitted.items(0).job_id());
  regatta::v1::CancelJobsResponse cancelled;
  ASSERT_TRUE(submit_->CancelJobs(Alice().get(), cancel, &cancelled).ok());

  // The executor says it runs the run; the answer tells it to cancel it.
  regatta::v1::LeaseRequest holding = Request();
  (*holding.mutable_nodes(0)->mutable_run_states())[run_id] = regatta::v1::RUN_STATE_RUNNING;
  bool told = false;
  for (int i = 0; i < 50 && !told; ++i) {
    for (const auto& m : LeaseOnce(holding)) {
      if (m.has_cancel_runs()) {
        EXPECT_THAT(m.cancel_runs().run_ids(), ::testing::ElementsAre(run_id));
        told = true;
      }
    }
  }
  EXPECT_TRUE(told);
}

TEST_F(ExecutorApiTest, BulkCancelAndPreemptByQueueExecutorNodeAndClass) {
  ASSERT_TRUE(CreateQueue("a").ok());
  ASSERT_TRUE(CreateQueue("b").ok());
  // Room for three 100m jobs: a0, a1 (default class, first in queue a's order) and b0 are
  // leased on exec-1/node-1; a2 (preemptible, so last) stays queued.
  regatta::v1::SubmitJobsRequest in_a = Jobs("a", "s", 3);
  in_a.mutable_items(2)->set_priority_class("preemptible");
  regatta::v1::SubmitJobsResponse a, b;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), in_a, &a).ok());
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("b", "s", 1), &b).ok());
  SyncViews();
  std::set<std::string> leased;
  for (int i = 0; i < 50 && leased.size() < 3; ++i) {
    for (const auto& m : LeaseOnce(Request("300m"))) {
      if (m.has_lease()) leased.insert(m.lease().job().id());
    }
  }
  const std::string a0 = a.items(0).job_id(), a1 = a.items(1).job_id();
  const std::string a2 = a.items(2).job_id(), b0 = b.items(0).job_id();
  ASSERT_EQ(leased, (std::set<std::string>{a0, a1, b0}));

  // Field errors name the field; an unknown queue is NOT_FOUND.
  regatta::v1::CancelOnExecutorRequest on_executor;
  regatta::v1::CancelOnExecutorResponse on_executor_resp;
  grpc::Status s = submit_->CancelOnExecutor(Alice().get(), on_executor, &on_executor_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "executor_id: required");
  regatta::v1::CancelQueueRequest cancel_queue;
  regatta::v1::CancelQueueResponse cancel_queue_resp;
  s = submit_->CancelQueue(Alice().get(), cancel_queue, &cancel_queue_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "queue: required");
  cancel_queue.set_queue("nope");
  s = submit_->CancelQueue(Alice().get(), cancel_queue, &cancel_queue_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "queue: queue \"nope\" does not exist");
  cancel_queue.set_queue("a");
  cancel_queue.add_states(regatta::v1::JOB_STATE_SUCCEEDED);
  s = submit_->CancelQueue(Alice().get(), cancel_queue, &cancel_queue_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::StartsWith("states[0]: "));
  regatta::v1::PreemptQueueRequest preempt_queue;
  regatta::v1::PreemptQueueResponse preempt_queue_resp;
  preempt_queue.set_queue("a");
  preempt_queue.add_priority_classes("bogus");
  s = submit_->PreemptQueue(Alice().get(), preempt_queue, &preempt_queue_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::StartsWith("priority_classes[0]: unknown"));

  // A queue's verbs allow the queue's bulk calls; an executor spans queues, so only the global
  // permission does.
  s = submit_->PreemptQueue(Bob().get(), preempt_queue, &preempt_queue_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  regatta::v1::CreateQueueRequest shared;
  shared.mutable_queue()->set_name("shared");
  auto* perm = shared.mutable_queue()->add_permissions();
  perm->add_subjects()->set_kind("group");
  perm->mutable_subjects(0)->set_name("team-ci");
  perm->add_verbs("cancel");
  perm->add_verbs("preempt");
  regatta::v1::Queue created;
  ASSERT_TRUE(queues_->CreateQueue(Alice().get(), shared, &created).ok());
  regatta::v1::CancelQueueRequest cancel_shared;
  cancel_shared.set_queue("shared");
  s = submit_->CancelQueue(As("Bearer ci-token").get(), cancel_shared, &cancel_queue_resp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(cancel_queue_resp.cancel_requested_count(), 0);
  on_executor.set_executor_id("exec-1");
  s = submit_->CancelOnExecutor(As("Bearer ci-token").get(), on_executor, &on_executor_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("cancel_any_jobs"));
  regatta::v1::PreemptOnExecutorRequest preempt_executor;
  regatta::v1::PreemptOnExecutorResponse preempt_executor_resp;
  preempt_executor.set_executor_id("exec-1");
  s = submit_->PreemptOnExecutor(As("Bearer ci-token").get(), preempt_executor,
                                 &preempt_executor_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("preempt_any_jobs"));

  // An unknown executor or node matches nothing.
  on_executor.set_executor_id("exec-9");
  ASSERT_TRUE(submit_->CancelOnExecutor(Alice().get(), on_executor, &on_executor_resp).ok());
  EXPECT_EQ(on_executor_resp.cancel_requested_count(), 0);
  on_executor.set_executor_id("exec-1");
  on_executor.set_node_id("node-9");
  ASSERT_TRUE(submit_->CancelOnExecutor(Alice().get(), on_executor, &on_executor_resp).ok());
  EXPECT_EQ(on_executor_resp.cancel_requested_count(), 0);

  // Each call below selects its jobs only; the others stay untouched.
  cancel_queue.clear_states();
  cancel_queue.add_states(regatta::v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(submit_->CancelQueue(Alice().get(), cancel_queue, &cancel_queue_resp).ok());
  EXPECT_EQ(cancel_queue_resp.cancel_requested_count(), 1);  // a2
  // Queued a2 has no run: preempting the queue's preemptible class takes nothing.
  preempt_queue.set_priority_classes(0, "preemptible");
  ASSERT_TRUE(submit_->PreemptQueue(Alice().get(), preempt_queue, &preempt_queue_resp).ok());
  EXPECT_EQ(preempt_queue_resp.preempt_requested_count(), 0);
  preempt_executor.add_queues("a");
  preempt_executor.add_priority_classes("default");
  ASSERT_TRUE(
      submit_->PreemptOnExecutor(Alice().get(), preempt_executor, &preempt_executor_resp).ok());
  EXPECT_EQ(preempt_executor_resp.preempt_requested_count(), 2);  // a0, a1
  on_executor.set_node_id("node-1");
  on_executor.add_queues("b");
  ASSERT_TRUE(submit_->CancelOnExecutor(Alice().get(), on_executor, &on_executor_resp).ok());
  EXPECT_EQ(on_executor_resp.cancel_requested_count(), 1);  // b0

  SyncViews();
  regatta::v1::GetJobDetailsRequest details_req;
  for (const std::string& id : {a0, a1, a2, b0}) details_req.add_job_ids(id);
  regatta::v1::GetJobDetailsResponse details;
  ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details_req, &details).ok());
  auto summary = [&](const std::string& id) { return details.jobs().at(id).summary(); };
  for (const std::string& id : {a0, a1}) {
    EXPECT_TRUE(summary(id).preempt_requested()) << id;
    EXPECT_FALSE(summary(id).cancel_requested()) << id;
  }
  for (const std::string& id : {a2, b0}) {
    EXPECT_TRUE(summary(id).cancel_requested()) << id;
    EXPECT_FALSE(summary(id).preempt_requested()) << id;
  }
}

TEST_F(ExecutorApiTest, BadReportsAreRefusedNamingTheFieldAndPublishNothing) {
  const int64_t before = platform_->log()->LastOffset();
  regatta::v1::ReportEventsRequest report;
  report.set_executor_id("exec-1");
  auto* e = report.add_sequences()->add_events();
  e->mutable_submit_job()->mutable_job()->set_id("sneaky");
  regatta::v1::ReportEventsResponse response;
  grpc::Status status = executor_->ReportEvents(Alice().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("sequences[0].events[0]"));

  report.mutable_sequences(0)->mutable_events(0)->mutable_job_run_running()->set_job_id("j");
  status = executor_->ReportEvents(Alice().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("run_id"));

  report.clear_executor_id();
  status = executor_->ReportEvents(Alice().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("executor_id"));
  EXPECT_EQ(platform_->log()->LastOffset(), before);

  // A lease request naming a bad quantity is refused naming the node's field.
  grpc::Status lease_status;
  LeaseOnce(Request("lots"), &lease_status);
  EXPECT_EQ(lease_status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(lease_status.error_message(), HasSubstr("nodes[0].allocatable_resources"));
}

TEST_F(ExecutorApiTest, OnlyPrincipalsWithExecuteJobsMayActAsExecutors) {
  regatta::v1::ReportEventsRequest report;
  report.set_executor_id("exec-1");
  regatta::v1::ReportEventsResponse response;
  grpc::Status status = executor_->ReportEvents(Bob().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(status.error_message(), HasSubstr("execute_jobs"));

  auto ctx = Bob();
  auto stream = executor_->LeaseJobRuns(ctx.get());
  stream->Write(Request());
  stream->WritesDone();
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);

  ctx = As("");
  stream = executor_->LeaseJobRuns(ctx.get());
  status = stream->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

// A request that comes while nothing is pending refreshes what the server knows of the
// executor; it is not answered with an empty answer (which would make the executor ask again).
TEST_F(ExecutorApiTest, ARequestWhileNothingIsPendingIsNotAnsweredAtOnce) {
  auto ctx = Alice();
  auto stream = executor_->LeaseJobRuns(ctx.get());
  ASSERT_TRUE(stream->Write(Request()));
  regatta::v1::LeaseStreamMessage message;
  ASSERT_TRUE(stream->Read(&message));  // nothing to lease: an end after the lease wait
  ASSERT_TRUE(message.has_end());
  const absl::Time asked = absl::Now();
  ASSERT_TRUE(stream->Write(Request()));
  absl::SleepFor(absl::Milliseconds(20));
  ASSERT_TRUE(stream->Write(Request("8")));  // a second one while the first waits
  ASSERT_TRUE(stream->Read(&message));
  EXPECT_TRUE(message.has_end());
  // The server's lease wait is 500 ms; before, the second request got an end at once.
  EXPECT_GE(absl::Now() - asked, absl::Milliseconds(400));
  ctx->TryCancel();
  stream->WritesDone();
  stream->Finish();
}

// The embedded executor's path: the same service, called directly, with the same checks.
TEST_F(ExecutorApiTest, TheInProcessApiLeasesAndTakesReportsWithTheSameChecks) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "s", 1), &submitted).ok());
  SyncViews();
  std::unique_ptr<executor::ExecutorApi> api = api::NewInProcessExecutorApi(
      platform_->executor_service(), auth::Principal{.name = "alice", .groups = {"admins"}});

  // One session: the first request registers the executor; the lease comes in a later answer,
  // asked for after each end as an executor does.
  std::unique_ptr<executor::LeaseSession> session = api->OpenLeaseSession();
  ASSERT_TRUE(session->Write(Request()));
  std::optional<regatta::v1::JobRunLease> lease;
  regatta::v1::LeaseStreamMessage message;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (!lease.has_value() && absl::Now() < deadline && session->Read(&message)) {
    if (message.has_lease()) lease = message.lease();
    if (message.has_end()) {
      ASSERT_TRUE(session->Write(Request()));
    }
  }
  ASSERT_TRUE(lease.has_value());
  EXPECT_EQ(lease->executor_id(), "exec-1");
  EXPECT_EQ(lease->job().id(), submitted.items(0).job_id());

  regatta::v1::ReportEventsRequest report;
  report.set_executor_id("exec-1");
  auto* e = report.add_sequences()->add_events();
  e->mutable_job_run_succeeded()->set_job_id(lease->job().id());
  e->mutable_job_run_succeeded()->set_run_id(lease->run_id());
  e = report.mutable_sequences(0)->add_events();
  e->mutable_job_run_succeeded()->set_job_id("no-such-job");
  e->mutable_job_run_succeeded()->set_run_id("no-such-run");
  absl::StatusOr<regatta::v1::ReportEventsResponse> response =
      api->ReportEvents(report, absl::Seconds(10));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->ignored_run_ids(), ::testing::ElementsAre("no-such-run"));

  // Cancelling ends the executor's reads; the session's outcome says so.
  session->Cancel();
  EXPECT_FALSE(session->Read(&message));
  EXPECT_EQ(session->Finish().code(), absl::StatusCode::kCancelled);

  // Bad input gets the gRPC path's errors, naming the field.
  report.clear_executor_id();
  response = api->ReportEvents(report, absl::Seconds(10));
  EXPECT_EQ(response.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(response.status().message(), HasSubstr("executor_id"));
  session = api->OpenLeaseSession();
  ASSERT_TRUE(session->Write(Request("lots")));
  while (session->Read(&message)) {
  }
  absl::Status ended = session->Finish();
  EXPECT_EQ(ended.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(ended.message(), HasSubstr("nodes[0].allocatable_resources"));

  // A principal without execute_jobs may do neither.
  std::unique_ptr<executor::ExecutorApi> bob =
      api::NewInProcessExecutorApi(platform_->executor_service(), auth::Principal{.name = "bob"});
  report.set_executor_id("exec-1");
  EXPECT_EQ(bob->ReportEvents(report, absl::Seconds(10)).status().code(),
            absl::StatusCode::kPermissionDenied);
  session = bob->OpenLeaseSession();
  session->Write(Request());
  session->WritesDone();
  while (session->Read(&message)) {
  }
  EXPECT_EQ(session->Finish().code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace regatta::testing
