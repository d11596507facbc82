// Devices end to end in one process: the platform on port 0, local executors as nodes, each
// running its device agent, and debugEcho handlers served in-process. Checks the Instances and
// Configuration statuses through DeviceService.

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/api/executor_service.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/naming/naming.h"
#include "src/devices/protocol/handler_server.h"
#include "src/executor/local_executor.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Waits (real time) for `condition`, checking every few milliseconds.
template <typename F>
bool Eventually(F condition, absl::Duration timeout = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(5));
  }
  return condition();
}

// One node: a local executor with its device agent, and the debugEcho handlers on its
// discovery directory.
struct Node {
  std::string name;
  std::string discovery_dir;
  std::string availability_file;
  std::unique_ptr<executor::Executor> executor;
  std::unique_ptr<devices::debug_echo::DebugEchoFinder> finder;
  std::vector<std::unique_ptr<devices::HandlerServer>> handlers;
};

class DevicesIntegrationTest : public PlatformTest {
 protected:
  void SetUp() override {
    // A short executor timeout so that a lost executor's nodes go within the test.
    extra_overrides_ = {"scheduling.executorTimeout=3s"};
    // Unix socket paths must stay short: the discovery directories live under /tmp.
    char pattern[] = "/tmp/rgdevit.XXXXXX";
    scratch_ = mkdtemp(pattern);
    PlatformTest::SetUp();
    devices_ = pb::DeviceService::NewStub(channel_);
    executor_api_ = pb::ExecutorService::NewStub(channel_);
  }

  void TearDown() override {
    for (auto& [name, node] : nodes_) StopNode(name);
    nodes_.clear();
    PlatformTest::TearDown();
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }

  Node& StartNode(const std::string& name) {
    Node& node = nodes_[name];
    node.name = name;
    node.discovery_dir = absl::StrCat(scratch_, "/", name);
    node.availability_file = absl::StrCat(scratch_, "/", name, "-availability");
    executor::LocalExecutorOptions options;
    options.executor.executor_id = absl::StrCat("executor-", name);
    executor::NodeConfig config;
    config.id = name;
    config.resources = {{"cpu", "1"}, {"memory", "1Gi"}};
    options.executor.nodes = {config};
    options.executor.authorization = Basic("alice", "alice-pw");
    options.executor.heartbeat = absl::Milliseconds(200);
    options.executor.logs_listen.clear();
    options.executor.discovery_dir = node.discovery_dir;
    options.data_dir = (dir_ / absl::StrCat("executor-", name)).string();
    options.use_cgroups = false;
    auto started = executor::StartLocalExecutor(
        std::move(options),
        grpc::CreateChannel(platform_->grpc_address(), grpc::InsecureChannelCredentials()),
        RealClock::Get());
    EXPECT_TRUE(started.ok()) << started.status();
    if (started.ok()) node.executor = *std::move(started);
    // A restarted executor keeps the node's running handlers (and their finder).
    if (node.finder == nullptr) {
      node.finder = std::make_unique<devices::debug_echo::DebugEchoFinder>(node.availability_file);
    }
    return node;
  }

  void AddHandler(Node& node, const std::string& handler, bool shared) {
    devices::HandlerServerOptions options;
    options.dir = node.discovery_dir;
    options.name = handler;
    options.shared = shared;
    auto server = devices::HandlerServer::Start(options, node.finder.get());
    ASSERT_TRUE(server.ok()) << server.status();
    node.handlers.push_back(*std::move(server));
  }

  void StopNode(const std::string& name) {
    Node& node = nodes_[name];
    for (auto& handler : node.handlers) handler->Shutdown();
    node.handlers.clear();
    if (node.executor != nullptr) node.executor->Stop(absl::ZeroDuration());
    node.executor.reset();
  }

  static void SetOffline(const Node& node, bool offline) {
    if (offline) {
      std::ofstream(node.availability_file, std::ios::trunc) << "OFFLINE\n";
    } else {
      std::filesystem::remove(node.availability_file);
    }
  }

  grpc::Status Apply(const std::string& name, const std::string& handler,
                     std::vector<std::string> descriptions, int capacity = 2,
                     pb::Configuration* out = nullptr) {
    pb::ApplyConfigurationRequest request;
    pb::Configuration* c = request.mutable_configuration();
    c->set_name(name);
    c->set_capacity(capacity);
    c->mutable_discovery_handler()->set_name(handler);
    std::string details = "descriptions: [";
    for (size_t i = 0; i < descriptions.size(); ++i) {
      absl::StrAppend(&details, i == 0 ? "" : ", ", descriptions[i]);
    }
    c->mutable_discovery_handler()->set_discovery_details(details + "]");
    if (out != nullptr) *out = *c;
    pb::Configuration response;
    return devices_->ApplyConfiguration(Alice().get(), request, &response);
  }

  grpc::Status ApplyConfiguration(const pb::Configuration& configuration) {
    pb::ApplyConfigurationRequest request;
    *request.mutable_configuration() = configuration;
    pb::Configuration response;
    return devices_->ApplyConfiguration(Alice().get(), request, &response);
  }

  std::vector<pb::Instance> Instances(const std::string& configuration = "") {
    pb::ListInstancesRequest request;
    request.set_configuration_name(configuration);
    pb::ListInstancesResponse response;
    grpc::Status status = devices_->ListInstances(Alice().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return {response.instances().begin(), response.instances().end()};
  }

  // "name: node1,node2" per Instance, for readable expectations.
  std::vector<std::string> Summary(const std::string& configuration = "") {
    std::vector<std::string> out;
    for (const pb::Instance& i : Instances(configuration)) {
      std::string nodes;
      for (const std::string& n : i.nodes()) absl::StrAppend(&nodes, nodes.empty() ? "" : ",", n);
      out.push_back(absl::StrCat(i.device_id(), "@", nodes));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  bool WaitForSummary(const std::vector<std::string>& expected, const std::string& configuration,
                      absl::Duration timeout = absl::Seconds(10)) {
    std::vector<std::string> sorted = expected;
    std::sort(sorted.begin(), sorted.end());
    const bool ok = Eventually([&] { return Summary(configuration) == sorted; }, timeout);
    if (!ok) ADD_FAILURE() << "instances are " << ::testing::PrintToString(Summary(configuration));
    return ok;
  }

  // Node → error of the Configuration's status.
  std::map<std::string, std::string> Status(const std::string& configuration) {
    pb::GetConfigurationRequest request;
    request.set_name(configuration);
    pb::Configuration response;
    std::map<std::string, std::string> out;
    if (!devices_->GetConfiguration(Alice().get(), request, &response).ok()) return out;
    for (const auto& node : response.status().nodes()) out[node.node()] = node.error();
    return out;
  }

  std::string scratch_;
  std::map<std::string, Node> nodes_;
  std::unique_ptr<pb::DeviceService::Stub> devices_;
  std::unique_ptr<pb::ExecutorService::Stub> executor_api_;
};

TEST_F(DevicesIntegrationTest, LocalDevicesAreInstancesPerNodeAndFollowAvailability) {
  Node& a = StartNode("node-a");
  Node& b = StartNode("node-b");
  AddHandler(a, "debugEcho", false);
  AddHandler(b, "debugEcho", false);
  ASSERT_TRUE(Apply("echo", "debugEcho", {"foo0", "foo1"}, /*capacity=*/2).ok());
  ASSERT_TRUE(WaitForSummary({"foo0@node-a", "foo1@node-a", "foo0@node-b", "foo1@node-b"}, "echo"));
  for (const pb::Instance& instance : Instances("echo")) {
    EXPECT_EQ(instance.name(),
              devices::InstanceName("echo", instance.device_id(), instance.nodes(0), false));
    EXPECT_EQ(instance.capacity(), 2);
    EXPECT_EQ(instance.device_usage_size(), 2);
    EXPECT_EQ(instance.properties().at("DEBUG_ECHO_DESCRIPTION"), instance.device_id());
  }
  EXPECT_TRUE(Eventually([&] {
    return Status("echo") == std::map<std::string, std::string>{{"node-a", ""}, {"node-b", ""}};
  }));

  SetOffline(a, true);
  ASSERT_TRUE(WaitForSummary({"foo0@node-b", "foo1@node-b"}, "echo"));
  SetOffline(a, false);
  ASSERT_TRUE(WaitForSummary({"foo0@node-a", "foo1@node-a", "foo0@node-b", "foo1@node-b"}, "echo"));

  // A new capacity reaches the Instances although what to discover did not change.
  ASSERT_TRUE(Apply("echo", "debugEcho", {"foo0", "foo1"}, /*capacity=*/3).ok());
  EXPECT_TRUE(Eventually([&] {
    std::vector<pb::Instance> all = Instances("echo");
    return all.size() == 4 && std::all_of(all.begin(), all.end(), [](const pb::Instance& i) {
             return i.capacity() == 3 && i.device_usage_size() == 3;
           });
  }));

  pb::DeleteConfigurationRequest del;
  del.set_name("echo");
  pb::DeleteConfigurationResponse deleted;
  ASSERT_TRUE(devices_->DeleteConfiguration(Alice().get(), del, &deleted).ok());
  EXPECT_THAT(Instances(), IsEmpty());
  // The agents stop: re-creating with other descriptions finds only those.
  ASSERT_TRUE(Apply("echo", "debugEcho", {"bar"}).ok());
  ASSERT_TRUE(WaitForSummary({"bar@node-a", "bar@node-b"}, "echo"));
}

TEST_F(DevicesIntegrationTest, SharedDeviceIsOneInstanceOfBothNodesAndLosesALostExecutor) {
  Node& a = StartNode("node-a");
  Node& b = StartNode("node-b");
  AddHandler(a, "debugEchoShared", true);
  AddHandler(b, "debugEchoShared", true);
  ASSERT_TRUE(Apply("cams", "debugEchoShared", {"cam0"}, /*capacity=*/2).ok());
  ASSERT_TRUE(WaitForSummary({"cam0@node-a,node-b"}, "cams"));
  const pb::Instance shared = Instances("cams").at(0);
  EXPECT_TRUE(shared.shared());
  EXPECT_EQ(shared.name(), devices::InstanceName("cams", "cam0", "", true));

  SetOffline(a, true);
  ASSERT_TRUE(WaitForSummary({"cam0@node-b"}, "cams"));
  SetOffline(a, false);
  ASSERT_TRUE(WaitForSummary({"cam0@node-a,node-b"}, "cams"));

  // node-b's executor goes silent (its handler keeps running): after the executor timeout the
  // server drops node-b from the Instance.
  b.executor->Stop(absl::ZeroDuration());
  b.executor.reset();
  ASSERT_TRUE(WaitForSummary({"cam0@node-a"}, "cams", absl::Seconds(15)));
  platform_->executor_service()->WaitForNodeLosses();

  // It comes back: its agent reports again.
  StopNode("node-b");
  Node& back = StartNode("node-b");
  AddHandler(back, "debugEchoShared", true);
  ASSERT_TRUE(WaitForSummary({"cam0@node-a,node-b"}, "cams"));
}

TEST_F(DevicesIntegrationTest, NodesOfExecutorsThatDoNotReturnAfterARestartAreDropped) {
  Node& a = StartNode("node-a");
  Node& b = StartNode("node-b");
  AddHandler(a, "debugEcho", false);
  AddHandler(b, "debugEcho", false);
  ASSERT_TRUE(Apply("echo", "debugEcho", {"foo0"}).ok());
  ASSERT_TRUE(WaitForSummary({"foo0@node-a", "foo0@node-b"}, "echo"));
  // Both executors stop with the server (their handlers keep running); only node-a's comes
  // back, and its handler registers with the new agent.
  for (Node* node : {&a, &b}) {
    node->executor->Stop(absl::ZeroDuration());
    node->executor.reset();
  }
  Restart();
  devices_ = pb::DeviceService::NewStub(channel_);
  EXPECT_THAT(Summary("echo"), UnorderedElementsAre("foo0@node-a", "foo0@node-b"));
  StartNode("node-a");
  // One executor timeout (3 s) after the start, node-b is dropped; node-a stays.
  ASSERT_TRUE(WaitForSummary({"foo0@node-a"}, "echo", absl::Seconds(15)));
}

TEST_F(DevicesIntegrationTest, StatusSaysWhatIsWrongInPlainWords) {
  Node& a = StartNode("node-a");
  AddHandler(a, "debugEcho", false);
  ASSERT_TRUE(Apply("nohandler", "onvif", {"x"}).ok());
  EXPECT_TRUE(Eventually([&] {
    return Status("nohandler")["node-a"].find("no discovery handler named 'onvif'") !=
           std::string::npos;
  })) << ::testing::PrintToString(Status("nohandler"));

  // A property from a Secret that does not exist: the server cannot resolve it.
  pb::Configuration c;
  c.set_name("secretive");
  c.set_capacity(1);
  c.mutable_discovery_handler()->set_name("debugEcho");
  c.mutable_discovery_handler()->set_discovery_details("descriptions: [s0]");
  pb::DiscoveryProperty* p = c.mutable_discovery_handler()->add_discovery_properties();
  p->set_name("password");
  p->mutable_value_from()->mutable_secret_key_ref()->set_name("creds");
  p->mutable_value_from()->mutable_secret_key_ref()->set_key("password");
  ASSERT_TRUE(ApplyConfiguration(c).ok());
  EXPECT_TRUE(Eventually([&] {
    return Status("secretive")["node-a"].find("creds") != std::string::npos;
  })) << ::testing::PrintToString(Status("secretive"));
  EXPECT_THAT(Instances("secretive"), IsEmpty());

  // The Secret appears: the watch resends, discovery starts and the error clears.
  pb::ApplySecretRequest secret;
  secret.mutable_secret()->set_name("creds");
  (*secret.mutable_secret()->mutable_data())["password"] = "s3cr3t";
  pb::Secret applied;
  ASSERT_TRUE(devices_->ApplySecret(Alice().get(), secret, &applied).ok());
  ASSERT_TRUE(WaitForSummary({"s0@node-a"}, "secretive"));
  EXPECT_TRUE(Eventually([&] { return Status("secretive")["node-a"].empty(); }));
}

TEST_F(DevicesIntegrationTest, ReportDevicesChecksTheReport) {
  Node& a = StartNode("node-a");
  ASSERT_TRUE(Apply("echo", "debugEcho", {"foo0"}).ok());
  // Wait until the executor is known (its agent reports the missing handler).
  ASSERT_TRUE(Eventually([&] { return !Status("echo")["node-a"].empty(); }));
  const int64_t before = platform_->log()->LastOffset();

  pb::ReportDevicesRequest report;
  report.set_executor_id("executor-node-a");
  report.set_node_id("node-a");
  report.set_configuration("echo");
  report.add_devices()->mutable_device()->set_id("ok");
  report.add_devices()->mutable_device()->set_id("");
  pb::ReportDevicesResponse response;
  grpc::Status status = executor_api_->ReportDevices(Alice().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("devices[1].device.id: must not be empty"));

  report.mutable_devices()->RemoveLast();
  report.set_node_id("node-z");
  status = executor_api_->ReportDevices(Alice().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(status.error_message(), HasSubstr("'node-z' is not a node of executor"));

  report.set_node_id("node-a");
  status = executor_api_->ReportDevices(Bob().get(), report, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(platform_->log()->LastOffset(), before);  // nothing published

  // A good report lands; repeating it publishes nothing more.
  status = executor_api_->ReportDevices(Alice().get(), report, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(Summary("echo"), ElementsAre("ok@node-a"));
  const int64_t after = platform_->log()->LastOffset();
  ASSERT_TRUE(executor_api_->ReportDevices(Alice().get(), report, &response).ok());
  EXPECT_EQ(platform_->log()->LastOffset(), after);
  (void)a;
}

TEST_F(DevicesIntegrationTest, WatchDiscoverySendsResolvedConfigurations) {
  pb::ApplyConfigMapRequest map;
  map.mutable_config_map()->set_name("endpoints");
  (*map.mutable_config_map()->mutable_data())["url"] = "opc.tcp://10.0.0.5:4840";
  pb::ConfigMap applied_map;
  ASSERT_TRUE(devices_->ApplyConfigMap(Alice().get(), map, &applied_map).ok());
  pb::Configuration c;
  c.set_name("opc");
  c.mutable_discovery_handler()->set_name("opcua");
  c.mutable_discovery_handler()->set_discovery_details("x: 1");
  pb::DiscoveryProperty* p = c.mutable_discovery_handler()->add_discovery_properties();
  p->set_name("endpoint");
  p->mutable_value_from()->mutable_config_map_key_ref()->set_name("endpoints");
  p->mutable_value_from()->mutable_config_map_key_ref()->set_key("url");
  ASSERT_TRUE(ApplyConfiguration(c).ok());

  auto context = Alice();
  pb::WatchDiscoveryRequest request;
  request.set_executor_id("watcher");
  auto reader = executor_api_->WatchDiscovery(context.get(), request);
  pb::DiscoverySnapshot snapshot;
  ASSERT_TRUE(reader->Read(&snapshot));
  ASSERT_EQ(snapshot.configurations_size(), 1);
  EXPECT_EQ(snapshot.configurations(0).configuration(), "opc");
  EXPECT_EQ(snapshot.configurations(0).handler(), "opcua");
  EXPECT_EQ(snapshot.configurations(0).discovery_details(), "x: 1");
  EXPECT_EQ(snapshot.configurations(0).discovery_properties().at("endpoint"),
            "opc.tcp://10.0.0.5:4840");
  EXPECT_EQ(snapshot.configurations(0).error(), "");
  EXPECT_EQ(snapshot.configurations(0).generation(), 1);

  // A ConfigMap change is a new snapshot.
  (*map.mutable_config_map()->mutable_data())["url"] = "opc.tcp://10.0.0.6:4840";
  ASSERT_TRUE(devices_->ApplyConfigMap(Alice().get(), map, &applied_map).ok());
  ASSERT_TRUE(reader->Read(&snapshot));
  EXPECT_EQ(snapshot.configurations(0).discovery_properties().at("endpoint"),
            "opc.tcp://10.0.0.6:4840");

  // Its deletion is an error on that Configuration.
  pb::DeleteConfigMapRequest del;
  del.set_name("endpoints");
  pb::DeleteConfigMapResponse deleted;
  ASSERT_TRUE(devices_->DeleteConfigMap(Alice().get(), del, &deleted).ok());
  ASSERT_TRUE(reader->Read(&snapshot));
  EXPECT_THAT(snapshot.configurations(0).error(), HasSubstr("endpoints"));
  context->TryCancel();

  // Without execute_jobs: refused.
  auto bob = Bob();
  auto refused = executor_api_->WatchDiscovery(bob.get(), request);
  EXPECT_FALSE(refused->Read(&snapshot));
  EXPECT_EQ(refused->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace regatta::testing
