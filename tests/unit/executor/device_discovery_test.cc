// DeviceDiscovery against a fake ExecutorService: what it reports right after it starts (the
// registration grace), and RepeatedFailureFilter (what its retry loops log).
#include "src/executor/device_discovery.h"

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"

namespace regatta::executor {
namespace {

using ::testing::HasSubstr;

// Serves one snapshot (Configuration "echo" for debugEcho) and records every report.
class FakeExecutorService final : public regatta::v1::ExecutorService::Service {
 public:
  struct Report {
    absl::Time at;
    regatta::v1::ReportDevicesRequest request;
  };

  grpc::Status WatchDiscovery(grpc::ServerContext* context,
                              const regatta::v1::WatchDiscoveryRequest*,
                              grpc::ServerWriter<regatta::v1::DiscoverySnapshot>* writer) override {
    regatta::v1::DiscoverySnapshot snapshot;
    regatta::v1::DiscoveryConfiguration* entry = snapshot.add_configurations();
    entry->set_configuration("echo");
    entry->set_handler(devices::debug_echo::kHandlerName);
    entry->set_discovery_details("descriptions: [foo0]");
    entry->set_generation(1);
    writer->Write(snapshot);
    while (!context->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status::CANCELLED;
  }

  grpc::Status ReportDevices(grpc::ServerContext*, const regatta::v1::ReportDevicesRequest* request,
                             regatta::v1::ReportDevicesResponse*) override {
    absl::MutexLock lock(&mu_);
    reports_.push_back({absl::Now(), *request});
    return grpc::Status::OK;
  }

  // Waits up to `timeout` for the first report.
  std::optional<Report> FirstReport(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto some = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !reports_.empty(); };
    if (!mu_.AwaitWithTimeout(absl::Condition(&some), timeout)) return std::nullopt;
    return reports_.front();
  }

 private:
  absl::Mutex mu_;
  std::vector<Report> reports_ ABSL_GUARDED_BY(mu_);
};

class DeviceDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rgdd.XXXXXX";
    dir_ = mkdtemp(pattern);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ =
        grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
  }

  void TearDown() override {
    discovery_.reset();
    handler_.reset();
    server_->Shutdown();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  void StartDiscovery(absl::Duration grace) {
    DeviceDiscoveryOptions options;
    options.dir = dir_;
    options.executor_id = "e1";
    options.node_id = "n1";
    options.registration_grace = grace;
    started_ = absl::Now();
    auto discovery = DeviceDiscovery::Start(options, channel_);
    ASSERT_TRUE(discovery.ok()) << discovery.status();
    discovery_ = *std::move(discovery);
  }

  void StartHandler() {
    finder_ = std::make_unique<devices::debug_echo::DebugEchoFinder>(dir_ + "/availability");
    devices::HandlerServerOptions options;
    options.dir = dir_;
    options.name = devices::debug_echo::kHandlerName;
    auto handler = devices::HandlerServer::Start(options, finder_.get());
    ASSERT_TRUE(handler.ok()) << handler.status();
    handler_ = *std::move(handler);
  }

  std::string dir_;
  FakeExecutorService service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<devices::debug_echo::DebugEchoFinder> finder_;
  std::unique_ptr<devices::HandlerServer> handler_;
  absl::Time started_;
  std::unique_ptr<DeviceDiscovery> discovery_;
};

TEST_F(DeviceDiscoveryTest, ARestartedAgentReportsTheDevicesNotThatNoHandlerIsRegistered) {
  // The handler was running before the agent (re)started: it registers again, and the first
  // report already lists its device instead of dropping the node's Instances first.
  ASSERT_NO_FATAL_FAILURE(StartHandler());
  ASSERT_NO_FATAL_FAILURE(StartDiscovery(absl::Seconds(5)));
  std::optional<FakeExecutorService::Report> first = service_.FirstReport(absl::Seconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->request.error(), "");
  ASSERT_EQ(first->request.devices_size(), 1);
  EXPECT_EQ(first->request.devices(0).device().id(), "foo0");
  EXPECT_LT(first->at - started_, absl::Seconds(5));  // not held for the whole grace
}

TEST_F(DeviceDiscoveryTest, AMissingHandlerIsReportedOnceTheGraceHasPassed) {
  const absl::Duration grace = absl::Milliseconds(500);
  ASSERT_NO_FATAL_FAILURE(StartDiscovery(grace));
  std::optional<FakeExecutorService::Report> first = service_.FirstReport(absl::Seconds(10));
  ASSERT_TRUE(first.has_value());
  EXPECT_GE(first->at - started_, grace);
  EXPECT_THAT(first->request.error(), HasSubstr("no discovery handler named 'debugEcho'"));
  EXPECT_EQ(first->request.devices_size(), 0);
  EXPECT_EQ(first->request.node_id(), "n1");
  EXPECT_EQ(first->request.executor_id(), "e1");
}

TEST(RepeatedFailureFilterTest, LogsAFailureOnceUntilItChangesOrSucceeds) {
  RepeatedFailureFilter filter;
  EXPECT_FALSE(filter.ShouldLogRecovery());  // nothing failed: a success says nothing
  const std::string not_connected = "executor_id: executor 'e' is not connected";
  EXPECT_TRUE(filter.ShouldLogFailure(grpc::StatusCode::FAILED_PRECONDITION, not_connected));
  for (int retry = 0; retry < 5; ++retry) {
    EXPECT_FALSE(filter.ShouldLogFailure(grpc::StatusCode::FAILED_PRECONDITION, not_connected));
  }
  // Another reason, or the same words with another code, is news.
  EXPECT_TRUE(filter.ShouldLogFailure(grpc::StatusCode::FAILED_PRECONDITION,
                                      "node_id: 'n' is not a node of executor 'e'"));
  EXPECT_TRUE(filter.ShouldLogFailure(grpc::StatusCode::UNAVAILABLE,
                                      "node_id: 'n' is not a node of executor 'e'"));
  EXPECT_TRUE(filter.ShouldLogFailure(grpc::StatusCode::FAILED_PRECONDITION, not_connected));
  // The first success after logged failures is logged, once; then the failure is news again.
  EXPECT_TRUE(filter.ShouldLogRecovery());
  EXPECT_FALSE(filter.ShouldLogRecovery());
  EXPECT_TRUE(filter.ShouldLogFailure(grpc::StatusCode::FAILED_PRECONDITION, not_connected));
}

}  // namespace
}  // namespace regatta::executor
