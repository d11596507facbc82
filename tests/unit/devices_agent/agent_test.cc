// The device agent against real handlers over gRPC on Unix sockets, in this process.

#include "src/devices/agent/agent.h"

#include <memory>
#include <string>
#include <vector>

#include "akri/discovery/v0/discovery.grpc.pb.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"
#include "src/common/clock.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"
#include "src/devices/protocol/registrar.h"
#include "src/devices/protocol/sockets.h"
#include "tests/unit/devices_agent/test_util.h"

namespace regatta::devices {
namespace {

using testing::Eventually;
using testing::Recorder;
using testing::ScratchDir;
using testing::WriteFile;

constexpr char kNode[] = "node-a";

DiscoveryRequest EchoRequest(const std::string& configuration,
                             const std::string& details = "descriptions: [foo0, foo1]") {
  DiscoveryRequest request;
  request.configuration = configuration;
  request.handler = "debugEcho";
  request.discovery_details = details;
  return request;
}

// A debugEcho handler process, in-process: its finder and its server.
struct EchoHandler {
  std::unique_ptr<debug_echo::DebugEchoFinder> finder;
  std::unique_ptr<HandlerServer> server;
};

EchoHandler StartEcho(const std::string& dir, const std::string& availability_file,
                      const std::string& socket_path = "", bool shared = false) {
  EchoHandler handler;
  handler.finder = std::make_unique<debug_echo::DebugEchoFinder>(availability_file);
  HandlerServerOptions options;
  options.dir = dir;
  options.name = debug_echo::kHandlerName;
  options.shared = shared;
  options.socket_path = socket_path;
  auto server = HandlerServer::Start(options, handler.finder.get());
  EXPECT_TRUE(server.ok()) << server.status();
  if (server.ok()) handler.server = *std::move(server);
  return handler;
}

class AgentTest : public ::testing::Test {
 protected:
  std::unique_ptr<Agent> StartAgent(Clock* clock = nullptr) {
    AgentOptions options;
    options.dir = dir_.path();
    options.node_name = kNode;
    options.clock = clock;
    auto agent = Agent::Start(options, recorder_.Callbacks());
    EXPECT_TRUE(agent.ok()) << agent.status();
    return agent.ok() ? *std::move(agent) : nullptr;
  }

  ScratchDir dir_;
  Recorder recorder_;
};

TEST_F(AgentTest, DebugEchoRegistersAndItsDevicesReachTheListener) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"), "", /*shared=*/true);
  ASSERT_TRUE(echo.server->registrar().WaitForRegistrations(1, absl::Seconds(5)));
  EXPECT_EQ(echo.server->socket_path(), HandlerSocket(dir_.path(), "debugEcho"));
  ASSERT_EQ(agent->Endpoints("debugEcho").size(), 1u);

  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  std::vector<DiscoveredDevice> devices = recorder_.Devices("echo");
  EXPECT_EQ(devices[0].device.properties().at("DEBUG_ECHO_DESCRIPTION"), "foo0");
  EXPECT_EQ(devices[1].device.properties().at("DEBUG_ECHO_DESCRIPTION"), "foo1");
  EXPECT_TRUE(devices[0].shared);
  EXPECT_EQ(devices[0].endpoint, echo.server->socket_path());
}

TEST_F(AgentTest, ARequestWaitsForItsHandlerAndSaysSoMeanwhile) {
  std::unique_ptr<Agent> agent = StartAgent();
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForError(
      "echo", "no discovery handler named 'debugEcho' is registered on node 'node-a'"));

  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  EXPECT_TRUE(recorder_.WaitForError("echo", ""));
  EXPECT_FALSE(recorder_.Devices("echo")[0].shared);
}

TEST_F(AgentTest, OfflineEmptiesTheSetAndOnlineBringsItBack) {
  std::unique_ptr<Agent> agent = StartAgent();
  const std::string availability = dir_.File("availability");
  EchoHandler echo = StartEcho(dir_.path(), availability);
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));

  WriteFile(availability, "OFFLINE\n");
  ASSERT_TRUE(recorder_.WaitForIds("echo", {}));
  WriteFile(availability, "\n");
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
}

TEST_F(AgentTest, AHandlerStartedOfflineReportsAnEmptySet) {
  const std::string availability = dir_.File("availability");
  WriteFile(availability, "OFFLINE");
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), availability);
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(Eventually([&] { return recorder_.DeviceReports("echo") >= 1; }));
  EXPECT_TRUE(recorder_.Devices("echo").empty());
  std::remove(availability.c_str());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
}

TEST_F(AgentTest, TwoEndpointsOfOneNameServeOneRequestAndDuplicatesMerge) {
  std::unique_ptr<Agent> agent = StartAgent();
  const std::string availability_a = dir_.File("availability-a");
  const std::string availability_b = dir_.File("availability-b");
  EchoHandler a = StartEcho(dir_.path(), availability_a, dir_.File("echo-a.sock"));
  EchoHandler b = StartEcho(dir_.path(), availability_b, dir_.File("echo-b.sock"));
  ASSERT_TRUE(a.server->registrar().WaitForRegistrations(1, absl::Seconds(5)));
  ASSERT_TRUE(b.server->registrar().WaitForRegistrations(1, absl::Seconds(5)));
  ASSERT_EQ(agent->Endpoints("debugEcho").size(), 2u);

  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(Eventually([&] { return a.server->active_streams() == 1; }));
  ASSERT_TRUE(Eventually([&] { return b.server->active_streams() == 1; }));
  // Both report foo0 and foo1: one device each, from the first endpoint.
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  ASSERT_TRUE(Eventually([&] {
    std::vector<StreamInfo> streams = agent->Streams("echo");
    return streams.size() == 2 && streams[0].devices == 2 && streams[1].devices == 2;
  }));
  EXPECT_TRUE(Eventually([&] {
    std::vector<DiscoveredDevice> devices = recorder_.Devices("echo");
    return devices.size() == 2 && devices[0].endpoint == dir_.File("echo-a.sock") &&
           devices[1].endpoint == dir_.File("echo-a.sock");
  }));

  // With a offline the devices are still there, now from b.
  WriteFile(availability_a, "OFFLINE");
  ASSERT_TRUE(Eventually([&] {
    std::vector<DiscoveredDevice> devices = recorder_.Devices("echo");
    return devices.size() == 2 && devices[0].endpoint == dir_.File("echo-b.sock");
  }));
  WriteFile(availability_b, "OFFLINE");
  ASSERT_TRUE(recorder_.WaitForIds("echo", {}));
}

TEST_F(AgentTest, ALaterRegistrationJoinsARunningRequest) {
  std::unique_ptr<Agent> agent = StartAgent();
  const std::string availability_b = dir_.File("availability-b");
  WriteFile(availability_b, "OFFLINE");
  EchoHandler b = StartEcho(dir_.path(), availability_b, dir_.File("echo-b.sock"));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(Eventually([&] { return recorder_.DeviceReports("echo") >= 1; }));
  EXPECT_TRUE(recorder_.Devices("echo").empty());

  EchoHandler a = StartEcho(dir_.path(), dir_.File("availability-a"), dir_.File("echo-a.sock"));
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  EXPECT_EQ(agent->Streams("echo").size(), 2u);
}

TEST_F(AgentTest, AfterAnAgentRestartTheHandlerRegistersAgainAndDiscoveryResumes) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  const int64_t registrations = echo.server->registrar().registrations();

  agent.reset();
  ASSERT_TRUE(Eventually([&] { return echo.server->active_streams() == 0; }));
  Recorder second;
  AgentOptions options;
  options.dir = dir_.path();
  options.node_name = kNode;
  auto restarted = Agent::Start(options, second.Callbacks());
  ASSERT_TRUE(restarted.ok()) << restarted.status();
  absl::Time started = absl::Now();
  ASSERT_TRUE(echo.server->registrar().WaitForRegistrations(registrations + 1, absl::Seconds(5)));
  // Within a few check intervals (20 ms), not Akri's poll period.
  EXPECT_LT(absl::Now() - started, absl::Milliseconds(500));
  ASSERT_TRUE((*restarted)->Apply(EchoRequest("echo")).ok());
  EXPECT_TRUE(second.WaitForIds("echo", {"foo0", "foo1"}));
}

TEST_F(AgentTest, BadDetailsReachTheErrorCallbackNamingTheField) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(echo.server->registrar().WaitForRegistrations(1, absl::Seconds(5)));
  ASSERT_TRUE(agent->Apply(EchoRequest("typo", "descriptoins: [foo0]")).ok());
  ASSERT_TRUE(recorder_.WaitForError("typo", "rejected the discovery details"));
  EXPECT_NE(recorder_.Error("typo").find("discoveryDetails.descriptoins"), std::string::npos)
      << recorder_.Error("typo");
  ASSERT_TRUE(agent->Apply(EchoRequest("scalar", "descriptions: foo0")).ok());
  ASSERT_TRUE(recorder_.WaitForError("scalar", "discoveryDetails.descriptions: must be a list"));

  // Fixing the details clears the error.
  ASSERT_TRUE(agent->Apply(EchoRequest("typo", "descriptions: [foo0]")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("typo", {"foo0"}));
  EXPECT_TRUE(recorder_.WaitForError("typo", ""));
}

TEST_F(AgentTest, ApplyRejectsARequestWithoutNames) {
  std::unique_ptr<Agent> agent = StartAgent();
  DiscoveryRequest request = EchoRequest("");
  EXPECT_EQ(agent->Apply(request).code(), absl::StatusCode::kInvalidArgument);
  request = EchoRequest("echo");
  request.handler = "";
  absl::Status status = agent->Apply(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("discoveryHandler.name"), std::string::npos);
}

TEST_F(AgentTest, RemoveStopsTheStreams) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  ASSERT_EQ(echo.server->active_streams(), 1);

  agent->Remove("echo");
  EXPECT_TRUE(agent->Streams("echo").empty());
  ASSERT_TRUE(Eventually([&] { return echo.server->active_streams() == 0; }));
  // The handler is still registered for the next request.
  EXPECT_EQ(agent->Endpoints("debugEcho").size(), 1u);
}

TEST_F(AgentTest, AChangedRequestRestartsItsStreamsAndAnUnchangedOneDoesNot) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  EXPECT_EQ(agent->Streams("echo").at(0).attempts, 1);

  ASSERT_TRUE(agent->Apply(EchoRequest("echo", "descriptions: [bar]")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"bar"}));
}

TEST_F(AgentTest, AHandlerThatGoesAwayIsDroppedWithItsDevices) {
  std::unique_ptr<Agent> agent = StartAgent();
  EchoHandler echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(agent->Apply(EchoRequest("echo")).ok());
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));

  echo.server.reset();
  ASSERT_TRUE(recorder_.WaitForIds("echo", {}));
  EXPECT_TRUE(agent->Endpoints("debugEcho").empty());
  EXPECT_TRUE(recorder_.WaitForError("echo", "no discovery handler named 'debugEcho'"));

  // It comes back: registers at start and joins the request.
  echo = StartEcho(dir_.path(), dir_.File("availability"));
  ASSERT_TRUE(recorder_.WaitForIds("echo", {"foo0", "foo1"}));
}

TEST_F(AgentTest, RegistrationsThatCannotBeServedAreRejected) {
  std::unique_ptr<Agent> agent = StartAgent();
  v0::RegisterDiscoveryHandlerRequest request;
  request.set_name("x");
  request.set_endpoint("relative.sock");
  absl::Status status = HandlerRegistry::Validate(request);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("endpoint"), std::string::npos);
  request.set_endpoint_type(v0::RegisterDiscoveryHandlerRequest::NETWORK);
  request.set_endpoint("http://10.0.0.1:1234");
  EXPECT_TRUE(HandlerRegistry::Validate(request).ok());
  request.set_name("");
  EXPECT_NE(HandlerRegistry::Validate(request).message().find("name"), std::string::npos);
}

// A scripted DiscoveryHandler: fails every call, or answers once and ends normally.
class ScriptedHandler final : public v0::DiscoveryHandler::Service {
 public:
  explicit ScriptedHandler(bool fail) : fail_(fail) {}
  grpc::Status Discover(grpc::ServerContext*, const v0::DiscoverRequest*,
                        grpc::ServerWriter<v0::DiscoverResponse>* writer) override {
    ++calls_;
    if (fail_) return grpc::Status(grpc::StatusCode::INTERNAL, "camera bus on fire");
    v0::DiscoverResponse response;
    response.add_devices()->set_id("once");
    writer->Write(response);
    return grpc::Status::OK;
  }
  int calls() const { return calls_; }

 private:
  const bool fail_;
  std::atomic<int> calls_ = 0;
};

class ScriptedAgentTest : public AgentTest {
 protected:
  void StartScripted(bool fail) {
    handler_ = std::make_unique<ScriptedHandler>(fail);
    grpc::ServerBuilder builder;
    builder.AddListeningPort(UdsAddress(dir_.File("scripted.sock")),
                             grpc::InsecureServerCredentials());
    builder.RegisterService(handler_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    agent_ = StartAgent(&clock_);
    RegistrarOptions options;
    options.agent_socket = agent_->registration_socket();
    options.request.set_name("scripted");
    options.request.set_endpoint(dir_.File("scripted.sock"));
    registrar_ = std::make_unique<Registrar>(options);
    registrar_->Start();
    ASSERT_TRUE(registrar_->WaitForRegistrations(1, absl::Seconds(5)));
    DiscoveryRequest request;
    request.configuration = "scripted";
    request.handler = "scripted";
    ASSERT_TRUE(agent_->Apply(request).ok());
  }
  void TearDown() override {
    registrar_.reset();
    agent_.reset();
    if (server_ != nullptr) server_->Shutdown();
  }

  // Waits until the stream has finished its `attempts`-th call; returns its state.
  StreamInfo WaitForEndedCall(int64_t attempts) {
    StreamInfo info;
    EXPECT_TRUE(Eventually([&] {
      std::vector<StreamInfo> streams = agent_->Streams("scripted");
      if (streams.size() != 1) return false;
      info = streams[0];
      return info.attempts == attempts && !info.in_call;
    })) << "attempts "
        << info.attempts;
    return info;
  }

  // Whether another call starts within a short real-time window (it must not).
  bool NoCallStartsSoon(int64_t attempts) {
    return !Eventually([&] { return agent_->Streams("scripted").at(0).attempts > attempts; },
                       absl::Milliseconds(150));
  }

  FakeClock clock_;
  std::unique_ptr<ScriptedHandler> handler_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Agent> agent_;
  std::unique_ptr<Registrar> registrar_;
};

TEST_F(ScriptedAgentTest, FailuresBackOffFrom500msDoublingUpToFiveMinutes) {
  StartScripted(/*fail=*/true);
  ASSERT_TRUE(recorder_.WaitForError("scripted", "camera bus on fire"));
  std::vector<absl::Duration> expected = {
      absl::Milliseconds(500), absl::Seconds(1),   absl::Seconds(2),  absl::Seconds(4),
      absl::Seconds(8),        absl::Seconds(16),  absl::Seconds(32), absl::Seconds(64),
      absl::Seconds(128),      absl::Seconds(256), absl::Minutes(5),  absl::Minutes(5)};
  for (size_t i = 0; i < expected.size(); ++i) {
    StreamInfo info = WaitForEndedCall(static_cast<int64_t>(i) + 1);
    ASSERT_EQ(info.next_attempt, clock_.Now() + expected[i]) << "after failure " << i + 1;
    clock_.Advance(expected[i] - absl::Milliseconds(1));
    if (i < 2) {
      ASSERT_TRUE(NoCallStartsSoon(info.attempts));
    }
    clock_.Advance(absl::Milliseconds(1));
  }
  EXPECT_GE(handler_->calls(), static_cast<int>(expected.size()));
}

TEST_F(ScriptedAgentTest, ANormalEndIsAskedAgainAfter600sKeepingItsDevices) {
  StartScripted(/*fail=*/false);
  ASSERT_TRUE(recorder_.WaitForIds("scripted", {"once"}));
  StreamInfo info = WaitForEndedCall(1);
  EXPECT_EQ(info.next_attempt, clock_.Now() + absl::Seconds(600));
  EXPECT_TRUE(info.error.empty());
  clock_.Advance(absl::Seconds(599));
  EXPECT_TRUE(NoCallStartsSoon(1));
  EXPECT_EQ(recorder_.Devices("scripted").size(), 1u);
  clock_.Advance(absl::Seconds(1));
  WaitForEndedCall(2);
  EXPECT_EQ(handler_->calls(), 2);
  EXPECT_EQ(recorder_.DeviceReports("scripted"), 1);  // the same set: not reported again
}

}  // namespace
}  // namespace regatta::devices
