// Devices as schedulable resources against the in-process platform (`regatta server` mode): the
// test publishes a Configuration and the Instances an agent would, and plays the executor.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/devices/naming/naming.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

class DeviceSchedulingTest : public PlatformTest {
 protected:
  void SetUp() override {
    extra_overrides_.push_back("scheduling.executorTimeout=2s");
    PlatformTest::SetUp();
    executor_ = regatta::v1::ExecutorService::NewStub(channel_);
    ASSERT_TRUE(CreateQueue("q").ok());
  }

  void Publish(std::vector<regatta::v1::Event> events) {
    regatta::v1::EventSequence sequence;
    sequence.set_user_id("test-agent");
    for (regatta::v1::Event& event : events) *sequence.add_events() = std::move(event);
    std::vector<regatta::v1::EventSequence> batch;
    batch.push_back(std::move(sequence));
    ASSERT_TRUE(platform_->log()->Append(std::move(batch)).ok());
    SyncViews();
  }

  static regatta::v1::Configuration Camera(int capacity) {
    regatta::v1::Configuration config;
    config.set_name("cam");
    config.mutable_discovery_handler()->set_name("debugEcho");
    config.set_capacity(capacity);
    (*config.mutable_broker_properties())["STREAM"] = "rtsp";
    return config;
  }

  // Configuration "cam" of capacity `capacity` (or `config`) and one local camera seen by
  // node-1.
  std::string AddCamera(int capacity, std::optional<regatta::v1::Configuration> config_or = {}) {
    regatta::v1::Event applied;
    regatta::v1::Configuration* config =
        applied.mutable_configuration_applied()->mutable_configuration();
    *config = config_or.has_value() ? *config_or : Camera(capacity);
    regatta::v1::Event seen;
    seen.mutable_instance_node_seen()->set_node("node-1");
    regatta::v1::Instance* instance = seen.mutable_instance_node_seen()->mutable_instance();
    instance->set_name(devices::InstanceName("cam", "cam-0", "node-1", /*shared=*/false));
    instance->set_configuration_name("cam");
    instance->set_device_id("cam-0");
    instance->set_capacity(capacity);
    (*instance->mutable_properties())["DEVICE_PATH"] = "/dev/video0";
    instance->add_device_specs()->set_host_path("/dev/video0");
    Publish({applied, seen});
    return instance->name();
  }

  static regatta::v1::LeaseRequest Request(const std::vector<std::string>& holding = {}) {
    regatta::v1::LeaseRequest request;
    request.set_executor_id("exec-1");
    request.set_pool("default");
    request.set_incarnation("one");
    request.set_max_runs_to_lease(100);
    regatta::v1::NodeInfo* node = request.add_nodes();
    node->set_id("node-1");
    (*node->mutable_allocatable_resources())["cpu"] = "4";
    (*node->mutable_allocatable_resources())["memory"] = "8Gi";
    for (const std::string& run : holding) {
      (*node->mutable_run_states())[run] = regatta::v1::RUN_STATE_RUNNING;
    }
    return request;
  }

  // Asks for work (holding `holding`) until `want` new leases came, at most `attempts` times
  // (each answered within the server's lease wait, 500 ms; the call's deadline is longer so that
  // it never cuts off a lease being sent, which the server would resend only after 10 s).
  std::vector<regatta::v1::JobRunLease> Leases(size_t want,
                                               const std::vector<std::string>& holding = {},
                                               int attempts = 25) {
    std::vector<regatta::v1::JobRunLease> out;
    for (int i = 0; i < attempts && out.size() < want; ++i) {
      auto ctx = Alice();
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(3));
      auto stream = executor_->LeaseJobRuns(ctx.get());
      if (stream->Write(Request(holding))) {
        regatta::v1::LeaseStreamMessage message;
        while (stream->Read(&message)) {
          if (message.has_end()) break;
          if (message.has_lease()) out.push_back(message.lease());
        }
      }
      ctx->TryCancel();
      (void)stream->Finish();
    }
    return out;
  }

  void ReportSucceeded(const regatta::v1::JobRunLease& lease) {
    regatta::v1::ReportEventsRequest report;
    report.set_executor_id("exec-1");
    auto* seq = report.add_sequences();
    auto* e = seq->add_events();
    e->mutable_job_run_running()->set_job_id(lease.job().id());
    e->mutable_job_run_running()->set_run_id(lease.run_id());
    e = seq->add_events();
    e->mutable_job_run_succeeded()->set_job_id(lease.job().id());
    e->mutable_job_run_succeeded()->set_run_id(lease.run_id());
    regatta::v1::ReportEventsResponse response;
    grpc::Status status = executor_->ReportEvents(Alice().get(), report, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }

  regatta::v1::SubmitJobsResponse SubmitDeviceJobs(const std::string& device, int n) {
    regatta::v1::SubmitJobsRequest request = Jobs("q", "s", n);
    for (auto& item : *request.mutable_items()) {
      (*item.mutable_task()->mutable_resources()->mutable_requests())[absl::StrCat("regatta.dev/",
                                                                                   device)] = "1";
    }
    regatta::v1::SubmitJobsResponse response;
    EXPECT_TRUE(submit_->SubmitJobs(Alice().get(), request, &response).ok());
    return response;
  }

  // The Instance's slot -> holder, once the views show `expect_held` slots held.
  std::map<std::string, std::string> Usage(const std::string& instance, int expect_held) {
    std::map<std::string, std::string> usage;
    for (int i = 0; i < 100; ++i) {
      SyncViews();
      absl::StatusOr<regatta::v1::Instance> found = platform_->store()->GetInstance(instance);
      EXPECT_TRUE(found.ok()) << found.status();
      if (!found.ok()) return usage;
      usage = {found->device_usage().begin(), found->device_usage().end()};
      int held = 0;
      for (const auto& [slot, holder] : usage) held += holder.empty() ? 0 : 1;
      if (held == expect_held) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return usage;
  }

  std::unique_ptr<regatta::v1::ExecutorService::Stub> executor_;
};

TEST_F(DeviceSchedulingTest, OneSlotTwoJobsRunOneAfterTheOther) {
  const std::string camera = AddCamera(/*capacity=*/1);
  regatta::v1::SubmitJobsResponse submitted = SubmitDeviceJobs(camera, 2);
  SyncViews();

  std::vector<regatta::v1::JobRunLease> first = Leases(1);
  ASSERT_EQ(first.size(), 1u);
  // The lease carries the device to inject; the claim is recorded in the Instance.
  ASSERT_EQ(first[0].devices_size(), 1);
  EXPECT_EQ(first[0].devices(0).instance_name(), camera);
  EXPECT_EQ(first[0].devices(0).slot(), camera + "-0");
  EXPECT_THAT(first[0].devices(0).properties(),
              UnorderedElementsAre(Pair("STREAM", "rtsp"), Pair("DEVICE_PATH", "/dev/video0")));
  ASSERT_EQ(first[0].devices(0).device_specs_size(), 1);
  EXPECT_EQ(first[0].devices(0).device_specs(0).host_path(), "/dev/video0");
  EXPECT_THAT(Usage(camera, 1), ElementsAre(Pair(camera + "-0", first[0].run_id())));
  // The other job waits: the one slot is taken, although cpu is plenty.
  EXPECT_TRUE(Leases(1, {first[0].run_id()}, /*attempts=*/4).empty());

  // The first run ends: its slot goes to the second job.
  ReportSucceeded(first[0]);
  std::vector<regatta::v1::JobRunLease> second = Leases(1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_NE(second[0].job().id(), first[0].job().id());
  EXPECT_EQ(second[0].devices(0).slot(), camera + "-0");
  EXPECT_THAT(Usage(camera, 1), ElementsAre(Pair(camera + "-0", second[0].run_id())));
}

TEST_F(DeviceSchedulingTest, ConfigurationRequestTakesAnyDeviceAndWaitsForOne) {
  // No Instance yet: the job waits instead of being rejected as unschedulable.
  regatta::v1::SubmitJobsResponse submitted = SubmitDeviceJobs("cam", 1);
  SyncViews();
  EXPECT_TRUE(Leases(1, {}, /*attempts=*/4).empty());
  regatta::v1::GetJobStatusRequest status_request;
  status_request.add_job_ids(submitted.items(0).job_id());
  regatta::v1::GetJobStatusResponse states;
  ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), status_request, &states).ok());
  EXPECT_EQ(states.states().at(submitted.items(0).job_id()), regatta::v1::JOB_STATE_QUEUED);

  const std::string camera = AddCamera(/*capacity=*/2);
  std::vector<regatta::v1::JobRunLease> leases = Leases(1);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].devices(0).instance_name(), camera);
}

TEST_F(DeviceSchedulingTest, ALostExecutorReleasesItsSlots) {
  const std::string camera = AddCamera(/*capacity=*/1);
  SubmitDeviceJobs(camera, 1);
  SyncViews();
  std::vector<regatta::v1::JobRunLease> leases = Leases(1);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_THAT(Usage(camera, 1), ElementsAre(Pair(camera + "-0", leases[0].run_id())));
  // The executor goes silent past scheduling.executorTimeout (2 s): its run expires and the
  // slot is free again — released, or gone with the Instance once the lost node no longer sees
  // it.
  absl::SleepFor(absl::Seconds(2.5));
  bool freed = false;
  for (int i = 0; i < 100 && !freed; ++i) {
    SyncViews();
    absl::StatusOr<regatta::v1::Instance> found = platform_->store()->GetInstance(camera);
    if (absl::IsNotFound(found.status())) {
      freed = true;
    } else {
      ASSERT_TRUE(found.ok()) << found.status();
      freed = found->device_usage().at(camera + "-0").empty();
    }
    if (!freed) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_TRUE(freed);
}

// The device controller: brokers as jobs (Akri's brokerPodSpec / brokerJobSpec).
class BrokerControllerTest : public DeviceSchedulingTest {
 protected:
  void SetUp() override {
    extra_overrides_ = {"devices.brokers.restartDelay=400ms", "devices.brokers.firstPort=31000"};
    DeviceSchedulingTest::SetUp();
  }

  static regatta::v1::Configuration WithBroker(bool long_running) {
    regatta::v1::Configuration config = Camera(/*capacity=*/2);
    regatta::v1::BrokerTemplate* tmpl =
        long_running ? config.mutable_broker_spec()->mutable_broker_pod_spec()
                     : config.mutable_broker_spec()->mutable_broker_job_spec();
    tmpl->set_queue("q");
    tmpl->mutable_job()->mutable_task()->add_command("./broker");
    (*tmpl->mutable_job()->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "100m";
    regatta::v1::ServicePort* port = config.mutable_instance_service_spec()->add_ports();
    port->set_name("stream");
    port->set_port(8554);
    return config;
  }

  // The broker jobs in `states` (empty: any), oldest first, once there are `want` of them.
  std::vector<regatta::v1::JobSummary> Brokers(size_t want,
                                               std::vector<regatta::v1::JobState> states = {},
                                               int attempts = 100) {
    std::vector<regatta::v1::JobSummary> found;
    for (int i = 0; i < attempts; ++i) {
      SyncViews();
      store::JobFilter filter;
      filter.labels = {{"regatta.dev/broker", "true"}};
      filter.states = states;
      absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs =
          platform_->store()->ListJobs(filter);
      EXPECT_TRUE(jobs.ok()) << jobs.status();
      if (jobs.ok()) found = *jobs;
      if (found.size() == want) break;
      absl::SleepFor(absl::Milliseconds(50));
    }
    return found;
  }

  static constexpr std::initializer_list<regatta::v1::JobState> kActive = {
      regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_LEASED, regatta::v1::JOB_STATE_RUNNING};
};

TEST_F(BrokerControllerTest, ABrokerRunsNextToItsDeviceAndGoesWithIt) {
  const std::string camera = AddCamera(2, WithBroker(/*long_running=*/true));
  std::vector<regatta::v1::JobSummary> brokers = Brokers(1);
  ASSERT_EQ(brokers.size(), 1u);
  EXPECT_EQ(brokers[0].queue(), "q");
  EXPECT_EQ(brokers[0].job_set(), "broker-cam");
  EXPECT_EQ(brokers[0].client_id(), absl::StrCat("broker-", camera, "-node-1-0"));

  // Leased to the Instance's node with a slot of the device, its service name and a port.
  std::vector<regatta::v1::JobRunLease> leases = Leases(1);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].job().id(), brokers[0].job_id());
  ASSERT_EQ(leases[0].devices_size(), 1);
  EXPECT_EQ(leases[0].devices(0).instance_name(), camera);
  EXPECT_THAT(leases[0].job().task().node_selector(),
              ElementsAre(Pair("kubernetes.io/hostname", "node-1")));
  EXPECT_THAT(leases[0].job().task().env(),
              UnorderedElementsAre(Pair("REGATTA_INSTANCE_SERVICE", camera + "-svc"),
                                   Pair("REGATTA_PORT_STREAM", "31000")));
  EXPECT_EQ(leases[0].job().annotations().at("regatta.dev/broker-port-stream"), "31000");

  // The node no longer sees the device: the Instance goes, and its broker is cancelled.
  regatta::v1::Event lost;
  lost.mutable_instance_node_lost()->set_node("node-1");
  lost.mutable_instance_node_lost()->set_instance_name(camera);
  Publish({lost});
  EXPECT_THAT(Brokers(0, kActive), ::testing::IsEmpty());
}

TEST_F(BrokerControllerTest, AnExitedBrokerIsRestartedAfterItsBackOff) {
  const std::string camera = AddCamera(2, WithBroker(/*long_running=*/true));
  std::vector<regatta::v1::JobRunLease> first = Leases(1);
  ASSERT_EQ(first.size(), 1u);
  const absl::Time ended = absl::Now();
  ReportSucceeded(first[0]);
  // It ran for less than resetAfter: the next attempt waits restartDelay (400 ms).
  std::vector<regatta::v1::JobRunLease> second = Leases(1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_GE(absl::Now() - ended, absl::Milliseconds(400));
  EXPECT_EQ(second[0].job().client_id(), absl::StrCat("broker-", camera, "-node-1-1"));
  EXPECT_EQ(second[0].job().labels().at("regatta.dev/broker-attempt"), "1");
}

TEST_F(BrokerControllerTest, AJobBrokerRunsOnceAndDeletingTheConfigurationCancelsBrokers) {
  const std::string camera = AddCamera(2, WithBroker(/*long_running=*/false));
  std::vector<regatta::v1::JobRunLease> leases = Leases(1);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_THAT(leases[0].job().task().node_selector(), ::testing::IsEmpty());
  ReportSucceeded(leases[0]);
  absl::SleepFor(absl::Seconds(1));  // more than the restart delay: nothing comes
  EXPECT_EQ(Brokers(1).size(), 1u);
  EXPECT_THAT(Brokers(0, kActive), ::testing::IsEmpty());

  // A long-running broker, then the Configuration goes: the broker is cancelled.
  regatta::v1::Configuration config = WithBroker(/*long_running=*/true);
  config.set_name("cam2");
  regatta::v1::Event applied;
  *applied.mutable_configuration_applied()->mutable_configuration() = config;
  regatta::v1::Event seen;
  seen.mutable_instance_node_seen()->set_node("node-1");
  regatta::v1::Instance* instance = seen.mutable_instance_node_seen()->mutable_instance();
  instance->set_name(devices::InstanceName("cam2", "cam-9", "node-1", /*shared=*/false));
  instance->set_configuration_name("cam2");
  instance->set_device_id("cam-9");
  instance->set_capacity(1);
  Publish({applied, seen});
  ASSERT_EQ(Brokers(1, kActive).size(), 1u);
  regatta::v1::Event deleted;
  deleted.mutable_configuration_deleted()->set_name("cam2");
  Publish({deleted});
  EXPECT_THAT(Brokers(0, kActive), ::testing::IsEmpty());
}

TEST_F(BrokerControllerTest, AConfigurationSaysWhyItsBrokersCannotRun) {
  regatta::v1::Configuration config = WithBroker(/*long_running=*/true);
  config.mutable_broker_spec()->mutable_broker_pod_spec()->set_queue("no-such-queue");
  AddCamera(2, config);
  ASSERT_TRUE(Leases(1, {}, /*attempts=*/1).empty());  // registers node-1's executor
  auto devices = regatta::v1::DeviceService::NewStub(channel_);
  std::string error;
  for (int i = 0; i < 100 && error.empty(); ++i) {
    regatta::v1::GetConfigurationRequest request;
    request.set_name("cam");
    regatta::v1::Configuration got;
    grpc::Status status = devices->GetConfiguration(Alice().get(), request, &got);
    ASSERT_TRUE(status.ok()) << status.error_message();
    error = got.status().broker_error();
    if (error.empty()) absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_THAT(error, ::testing::HasSubstr("no-such-queue"));
  EXPECT_THAT(error, ::testing::HasSubstr("broker-cam-"));
  // The queue is made: the broker is submitted at the next retry (within 5 s) and the error
  // goes. (Asking for leases meanwhile keeps node-1's executor alive.)
  ASSERT_TRUE(CreateQueue("no-such-queue").ok());
  std::vector<regatta::v1::JobRunLease> leases = Leases(1);
  ASSERT_EQ(leases.size(), 1u);
  EXPECT_EQ(leases[0].job().labels().at("regatta.dev/broker-configuration"), "cam");
  regatta::v1::ListConfigurationsRequest list_request;
  regatta::v1::ListConfigurationsResponse listed;
  ASSERT_TRUE(devices->ListConfigurations(Alice().get(), list_request, &listed).ok());
  ASSERT_EQ(listed.configurations_size(), 1);
  EXPECT_EQ(listed.configurations(0).status().broker_error(), "");
}

}  // namespace
}  // namespace regatta::testing
