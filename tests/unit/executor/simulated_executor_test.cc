// The simulated executor against a fake executor API server, on a fake clock: run events,
// durations, exit codes, cancel, preempt and admission against node capacity.
#include "src/executor/simulated_executor.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/common/clock.h"
#include "tests/unit/executor/test_nodes.h"

namespace regatta::executor {
namespace {

using regatta::v1::Event;
using regatta::v1::LeaseStreamMessage;

std::string RunIdOf(const Event& e) {
  switch (e.event_case()) {
    case Event::kJobRunPending:
      return e.job_run_pending().run_id();
    case Event::kJobRunRunning:
      return e.job_run_running().run_id();
    case Event::kJobRunSucceeded:
      return e.job_run_succeeded().run_id();
    case Event::kJobRunFailed:
      return e.job_run_failed().run_id();
    case Event::kJobRunCancelled:
      return e.job_run_cancelled().run_id();
    case Event::kJobRunPreempted:
      return e.job_run_preempted().run_id();
    case Event::kJobRunLeaseReturned:
      return e.job_run_lease_returned().run_id();
    default:
      return "";
  }
}

// Answers each lease request with what the test queued (waiting a little for it, like the
// server's lease wait) and an end marker; keeps every reported event.
class FakeExecutorService final : public regatta::v1::ExecutorService::Service {
 public:
  grpc::Status LeaseJobRuns(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<LeaseStreamMessage, regatta::v1::LeaseRequest>* stream) override {
    regatta::v1::LeaseRequest request;
    while (stream->Read(&request)) {
      std::vector<LeaseStreamMessage> out;
      {
        absl::MutexLock lock(&mu_);
        last_request_ = request;
        ++requests_;
        auto queued = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !to_send_.empty(); };
        mu_.AwaitWithTimeout(absl::Condition(&queued), absl::Milliseconds(20));
        out.swap(to_send_);
      }
      for (const LeaseStreamMessage& m : out) stream->Write(m);
      LeaseStreamMessage end;
      end.mutable_end();
      stream->Write(end);
    }
    return grpc::Status::OK;
  }

  grpc::Status ReportEvents(grpc::ServerContext*, const regatta::v1::ReportEventsRequest* request,
                            regatta::v1::ReportEventsResponse*) override {
    absl::MutexLock lock(&mu_);
    std::vector<Event::EventCase>& call = report_calls_.emplace_back();
    for (const auto& seq : request->sequences()) {
      for (const Event& e : seq.events()) {
        events_.push_back(e);
        call.push_back(e.event_case());
      }
    }
    return grpc::Status::OK;
  }

  // The kinds of events of each ReportEvents call, in call order.
  std::vector<std::vector<Event::EventCase>> ReportCalls() {
    absl::MutexLock lock(&mu_);
    return report_calls_;
  }

  void Send(LeaseStreamMessage message) {
    absl::MutexLock lock(&mu_);
    to_send_.push_back(std::move(message));
  }

  // The run's events so far, in report order.
  std::vector<Event> EventsOf(const std::string& run_id) {
    absl::MutexLock lock(&mu_);
    std::vector<Event> out;
    for (const Event& e : events_) {
      if (RunIdOf(e) == run_id) out.push_back(e);
    }
    return out;
  }

  // Waits (real time) until the run has reported an event of `kind`; that event or nothing.
  std::optional<Event> WaitForEvent(const std::string& run_id, Event::EventCase kind,
                                    absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      for (const Event& e : EventsOf(run_id)) {
        if (e.event_case() == kind) return e;
      }
      absl::SleepFor(absl::Milliseconds(5));
    }
    return std::nullopt;
  }

  // The latest lease request after two more have arrived (the first may have been built
  // before the caller's change).
  regatta::v1::LeaseRequest NextRequest() {
    absl::MutexLock lock(&mu_);
    const int seen = requests_;
    auto arrived = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return requests_ > seen + 1; };
    mu_.AwaitWithTimeout(absl::Condition(&arrived), absl::Seconds(10));
    return last_request_;
  }

 private:
  absl::Mutex mu_;
  std::vector<LeaseStreamMessage> to_send_ ABSL_GUARDED_BY(mu_);
  std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<Event::EventCase>> report_calls_ ABSL_GUARDED_BY(mu_);
  regatta::v1::LeaseRequest last_request_ ABSL_GUARDED_BY(mu_);
  int requests_ ABSL_GUARDED_BY(mu_) = 0;
};

class SimulatedExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }

  void TearDown() override {
    if (executor_ != nullptr) executor_->Stop(absl::ZeroDuration());
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  }

  // On TwoSmallNodesAndAGpuNode; runs last 10 minutes unless their job says otherwise.
  void StartExecutor(int max_runs = 0) {
    SimulatedExecutorOptions options;
    options.executor.max_runs = max_runs;
    options.executor.executor_id = "sim-executor";
    options.executor.pool = "simpool";
    options.executor.heartbeat = absl::Milliseconds(20);
    options.executor.logs_listen = "";
    options.executor.report_linger = report_linger_;
    options.node_groups = TwoSmallNodesAndAGpuNode();
    options.duration.kind = DurationDistribution::Kind::kConstant;
    options.duration.value = absl::Minutes(10);
    absl::StatusOr<std::unique_ptr<Executor>> executor = StartSimulatedExecutor(
        std::move(options), server_->InProcessChannel(grpc::ChannelArguments()), &clock_);
    ASSERT_TRUE(executor.ok()) << executor.status();
    executor_ = std::move(*executor);
  }

  void Lease(const std::string& run_id, const std::string& node, const std::string& cpu,
             std::map<std::string, std::string> annotations = {}) {
    LeaseStreamMessage m;
    regatta::v1::JobRunLease* lease = m.mutable_lease();
    lease->set_run_id(run_id);
    lease->set_executor_id("sim-executor");
    lease->set_node_id(node);
    regatta::v1::Job* job = lease->mutable_job();
    job->set_id("job-" + run_id);
    job->set_queue("q");
    job->set_job_set("s");
    (*job->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = cpu;
    job->mutable_annotations()->insert(annotations.begin(), annotations.end());
    service_.Send(std::move(m));
  }

  std::vector<Event::EventCase> Kinds(const std::string& run_id) {
    std::vector<Event::EventCase> kinds;
    for (const Event& e : service_.EventsOf(run_id)) kinds.push_back(e.event_case());
    return kinds;
  }

  absl::Duration report_linger_ = ExecutorOptions().report_linger;
  FakeClock clock_;
  FakeExecutorService service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Executor> executor_;
};

TEST_F(SimulatedExecutorTest, ReportsItsSimulatedNodesWithResourcesLabelsAndTaints) {
  StartExecutor();
  regatta::v1::LeaseRequest request = service_.NextRequest();
  EXPECT_EQ(request.executor_id(), "sim-executor");
  EXPECT_EQ(request.pool(), "simpool");
  EXPECT_TRUE(request.logs_address().empty());
  ASSERT_EQ(request.nodes_size(), 3);
  EXPECT_EQ(request.nodes(0).id(), "sim-0000");
  EXPECT_EQ(request.nodes(1).id(), "sim-0001");
  EXPECT_EQ(request.nodes(1).allocatable_resources().at("cpu"), "2");
  const regatta::v1::NodeInfo& gpu = request.nodes(2);
  EXPECT_EQ(gpu.id(), "gpu-0000");
  EXPECT_EQ(gpu.labels().at("accelerator"), "a100");
  EXPECT_EQ(gpu.labels().at("kubernetes.io/hostname"), "gpu-0000");
  ASSERT_EQ(gpu.taints_size(), 1);
  EXPECT_EQ(gpu.taints(0).key(), "gpu");
  EXPECT_EQ(gpu.allocatable_resources().at("nvidia.com/gpu"), "1");
}

TEST_F(SimulatedExecutorTest, ARunGoesPendingRunningAndSucceedsWhenItsDurationHasPassed) {
  StartExecutor();
  const absl::Time start = clock_.Now();
  Lease("r1", "sim-0000", "1", {{kSimulatedDurationAnnotation, "90s"}});
  ASSERT_TRUE(service_.WaitForEvent("r1", Event::kJobRunRunning).has_value());
  EXPECT_EQ(service_.NextRequest().nodes(0).run_states().at("r1"), regatta::v1::RUN_STATE_RUNNING);
  clock_.Advance(absl::Seconds(89));
  EXPECT_FALSE(service_.WaitForEvent("r1", Event::kJobRunSucceeded, absl::Milliseconds(400)));
  clock_.Advance(absl::Seconds(1));
  std::optional<Event> succeeded = service_.WaitForEvent("r1", Event::kJobRunSucceeded);
  ASSERT_TRUE(succeeded.has_value());
  EXPECT_EQ(succeeded->created().seconds(), absl::ToUnixSeconds(start + absl::Seconds(90)));
  EXPECT_EQ(Kinds("r1"),
            (std::vector<Event::EventCase>{Event::kJobRunPending, Event::kJobRunRunning,
                                           Event::kJobRunSucceeded}));
}

// The report of a run's start waits (report_linger) for its end: one call, so one durable
// append on the server, for a run that ends at once. A long linger makes it deterministic.
TEST_F(SimulatedExecutorTest, ARunThatEndsAtOnceIsReportedInOneCall) {
  report_linger_ = absl::Seconds(30);
  StartExecutor();
  Lease("r1", "sim-0000", "1", {{kSimulatedDurationAnnotation, "0s"}});
  ASSERT_TRUE(service_.WaitForEvent("r1", Event::kJobRunSucceeded).has_value());
  EXPECT_THAT(service_.ReportCalls(),
              ::testing::ElementsAre(::testing::ElementsAre(
                  Event::kJobRunPending, Event::kJobRunRunning, Event::kJobRunSucceeded)));
}

// A run that goes on is reported running after the linger, without waiting for its end.
TEST_F(SimulatedExecutorTest, ARunningRunIsReportedOnceTheLingerHasPassed) {
  report_linger_ = absl::Milliseconds(50);
  StartExecutor();
  const absl::Time leased = absl::Now();
  Lease("r1", "sim-0000", "1", {{kSimulatedDurationAnnotation, "90s"}});
  ASSERT_TRUE(service_.WaitForEvent("r1", Event::kJobRunRunning).has_value());
  EXPECT_GE(absl::Now() - leased, absl::Milliseconds(50));
  EXPECT_THAT(service_.ReportCalls(), ::testing::ElementsAre(::testing::ElementsAre(
                                          Event::kJobRunPending, Event::kJobRunRunning)));
}

TEST_F(SimulatedExecutorTest, WithoutAnnotationTheRunLastsTheConfiguredDuration) {
  StartExecutor();
  Lease("r1", "sim-0000", "1");
  ASSERT_TRUE(service_.WaitForEvent("r1", Event::kJobRunRunning).has_value());
  clock_.Advance(absl::Minutes(9));
  EXPECT_FALSE(service_.WaitForEvent("r1", Event::kJobRunSucceeded, absl::Milliseconds(400)));
  clock_.Advance(absl::Minutes(1));
  EXPECT_TRUE(service_.WaitForEvent("r1", Event::kJobRunSucceeded).has_value());
}

TEST_F(SimulatedExecutorTest, TheExitCodeAnnotationFailsTheRunWithAContainerError) {
  StartExecutor();
  Lease("r1", "sim-0000", "1",
        {{kSimulatedDurationAnnotation, "0s"}, {kSimulatedExitCodeAnnotation, "2"}});
  std::optional<Event> failed = service_.WaitForEvent("r1", Event::kJobRunFailed);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->job_run_failed().error().reason(), regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  EXPECT_EQ(failed->job_run_failed().error().exit_code(), 2);
  EXPECT_EQ(Kinds("r1"), (std::vector<Event::EventCase>{
                             Event::kJobRunPending, Event::kJobRunRunning, Event::kJobRunFailed}));
}

TEST_F(SimulatedExecutorTest, AnUnreadableDurationAnnotationFailsTheRunAsCannotExecute) {
  StartExecutor();
  Lease("r1", "sim-0000", "1", {{kSimulatedDurationAnnotation, "a while"}});
  std::optional<Event> failed = service_.WaitForEvent("r1", Event::kJobRunFailed);
  ASSERT_TRUE(failed.has_value());
  EXPECT_EQ(failed->job_run_failed().error().reason(), regatta::v1::ERROR_REASON_CANNOT_EXECUTE);
}

TEST_F(SimulatedExecutorTest, CancelAndPreemptEndRunsAtOnce) {
  StartExecutor();
  Lease("c", "sim-0000", "1");
  Lease("p", "sim-0001", "1");
  ASSERT_TRUE(service_.WaitForEvent("c", Event::kJobRunRunning).has_value());
  ASSERT_TRUE(service_.WaitForEvent("p", Event::kJobRunRunning).has_value());
  LeaseStreamMessage cancel;
  cancel.mutable_cancel_runs()->add_run_ids("c");
  service_.Send(cancel);
  LeaseStreamMessage preempt;
  preempt.mutable_preempt_runs()->add_run_ids("p");
  service_.Send(preempt);
  EXPECT_TRUE(service_.WaitForEvent("c", Event::kJobRunCancelled).has_value());
  EXPECT_TRUE(service_.WaitForEvent("p", Event::kJobRunPreempted).has_value());
  clock_.Advance(absl::Hours(1));  // their own ends are never reported
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(Kinds("c"), (std::vector<Event::EventCase>{Event::kJobRunPending, Event::kJobRunRunning,
                                                       Event::kJobRunCancelled}));
  EXPECT_EQ(Kinds("p").back(), Event::kJobRunPreempted);
}

TEST_F(SimulatedExecutorTest, ALeaseThatDoesNotFitItsNodeIsReturnedAndFitsOnceRoomIsFree) {
  StartExecutor();
  Lease("a", "sim-0000", "1500m");
  ASSERT_TRUE(service_.WaitForEvent("a", Event::kJobRunRunning).has_value());
  Lease("b", "sim-0000", "1");  // 2.5 of 2 cpu
  std::optional<Event> returned = service_.WaitForEvent("b", Event::kJobRunLeaseReturned);
  ASSERT_TRUE(returned.has_value());
  EXPECT_NE(returned->job_run_lease_returned().reason().find("does not fit on node sim-0000"),
            std::string::npos)
      << returned->job_run_lease_returned().reason();
  Lease("elsewhere", "sim-0001", "1");  // another node has its own room
  EXPECT_TRUE(service_.WaitForEvent("elsewhere", Event::kJobRunRunning).has_value());
  Lease("nowhere", "sim-9999", "1");
  returned = service_.WaitForEvent("nowhere", Event::kJobRunLeaseReturned);
  ASSERT_TRUE(returned.has_value());
  EXPECT_NE(returned->job_run_lease_returned().reason().find("not one of executor sim-executor"),
            std::string::npos);

  clock_.Advance(absl::Minutes(10));  // a ends; its room is free again
  ASSERT_TRUE(service_.WaitForEvent("a", Event::kJobRunSucceeded).has_value());
  Lease("c", "sim-0000", "2");
  EXPECT_TRUE(service_.WaitForEvent("c", Event::kJobRunRunning).has_value());
}

TEST_F(SimulatedExecutorTest, MaxRunsLimitsTheRunsAtOnceAcrossNodes) {
  StartExecutor(/*max_runs=*/1);
  EXPECT_EQ(service_.NextRequest().max_runs_to_lease(), 1u);
  Lease("a", "sim-0000", "1");
  ASSERT_TRUE(service_.WaitForEvent("a", Event::kJobRunRunning).has_value());
  EXPECT_EQ(service_.NextRequest().max_runs_to_lease(), 0u);
  Lease("b", "sim-0001", "1");
  std::optional<Event> returned = service_.WaitForEvent("b", Event::kJobRunLeaseReturned);
  ASSERT_TRUE(returned.has_value());
  EXPECT_NE(returned->job_run_lease_returned().reason().find("maximum of 1"), std::string::npos);
}

}  // namespace
}  // namespace regatta::executor
