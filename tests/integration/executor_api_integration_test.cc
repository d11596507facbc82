// The executor API over real gRPC against the in-process platform (`regatta server` mode, so no
// embedded executor): the test plays the executor.
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/executor_service.grpc.pb.h"
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
  regatta::v1::ReportEventsResponse response;
  grpc::Status status = executor_->ReportEvents(Alice().get(), report, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(response.ignored_run_ids(), ::testing::ElementsAre("no-such-run"));

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

TEST_F(ExecutorApiTest, CancelOfARunningJobIsSentToItsExecutor) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "s", 1), &submitted).ok());
  SyncViews();
  std::string run_id;
  for (int i = 0; i < 50 && run_id.empty(); ++i) {
    for (const auto& m : LeaseOnce(Request())) {
      if (m.has_lease()) run_id = m.lease().run_id();
    }
  }
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

}  // namespace
}  // namespace regatta::testing
