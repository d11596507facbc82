// End to end with the built binary: `regatta up` without its executor, one
// `regatta executor --local` node with its device agent and a `regatta dh debug-echo` handler.
// The broker controller runs a broker per device; the services list them as endpoints
// (`regatta services get -o json`, `GET /v1/services`) and go with the Configuration.
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using json = nlohmann::json;

// Two devices, a long-running broker each; an instance service on a fixed target port and a
// configuration service on a port the controller allocates.
constexpr char kResources[] = R"(kind: Configuration
metadata: {name: echo}
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |
      descriptions: [foo0, foo1]
  brokerSpec:
    brokerPodSpec:
      queue: devices
      job:
        task:
          command: [sleep, "600"]
          resources: {requests: {cpu: 10m, memory: 8Mi}}
  instanceServiceSpec:
    ports: [{name: stream, port: 554, targetPort: 9554}]
  configurationServiceSpec:
    ports: [{name: web, port: 80}]
)";

class ServicesE2eTest : public UpFixture {
 protected:
  std::vector<std::string> ExtraUpArgs() const override {
    return {"--set", "executor.embedded=false"};
  }

  void SetUp() override {
    // Unix socket paths must stay short: the discovery directory lives under /tmp.
    char pattern[] = "/tmp/rgsvce2e.XXXXXX";
    scratch_ = mkdtemp(pattern);
    UpFixture::SetUp();
  }

  void TearDown() override {
    // SIGTERM lets the handler and the executor remove their sockets and stop their runs.
    for (Child* c : {handler_.get(), executor_.get()}) {
      if (c != nullptr) c->Kill(SIGTERM);
    }
    handler_.reset();
    executor_.reset();
    UpFixture::TearDown();
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }

  std::string Stderr(const std::string& name) const { return (dir_ / (name + ".stderr")).string(); }

  void StartNode() {
    const std::string discovery = absl::StrCat(scratch_, "/node-a");
    executor_ = std::make_unique<Child>();
    ASSERT_TRUE(
        executor_->Start({RegattaBinary(), "--server", grpc_, "executor", "--local", "--data-dir",
                          (dir_ / "data-node-a").string(), "--discovery-dir", discovery, "--set",
                          "executor.id=executor-node-a", "--set", "executor.nodes=[{name: node-a}]",
                          "--set", "executor.heartbeat=200ms", "--set", "executor.cgroups=false"},
                         Stderr("executor")));
    ASSERT_TRUE(executor_->WaitForLine("device discovery: ", std::chrono::seconds(30)))
        << executor_->output() << Slurp(Stderr("executor"));
    handler_ = std::make_unique<Child>();
    ASSERT_TRUE(
        handler_->Start({RegattaBinary(), "dh", "debug-echo", "--dir", discovery}, Stderr("dh")));
    ASSERT_TRUE(handler_->WaitForLine("serving on", std::chrono::seconds(10)));
  }

  json Service(const std::string& name) {
    RunResult r = Cli({"services", "get", name, "-o", "json"});
    return json::parse(r.out, nullptr, false);
  }

  // Polls until the service has `count` endpoints, all ready; returns it (null on timeout).
  json WaitForReadyEndpoints(const std::string& name, size_t count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(40);
    json seen;
    while (std::chrono::steady_clock::now() < deadline) {
      seen = Service(name);
      if (seen.is_object() && seen.contains("endpoints") && seen["endpoints"].size() == count) {
        bool ready = true;
        for (const json& e : seen["endpoints"]) ready = ready && e.value("ready", false);
        if (ready) return seen;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << name << " is " << seen.dump();
    return json();
  }

  std::string scratch_;
  std::unique_ptr<Child> executor_;
  std::unique_ptr<Child> handler_;
};

TEST_F(ServicesE2eTest, BrokersAreTheEndpointsOfTheirServicesUntilTheConfigurationGoes) {
  RunResult queue = Cli({"queue", "create", "devices"});
  ASSERT_EQ(queue.exit_code, 0) << queue.err;
  ASSERT_NO_FATAL_FAILURE(StartNode());
  const std::string file = (dir_ / "scratch" / "echo.yaml").string();
  std::ofstream(file) << kResources;
  RunResult applied = Cli({"config", "apply", file});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;

  // The configuration service: both brokers, each on its own allocated port for "web".
  json configuration = WaitForReadyEndpoints("echo-svc", 2);
  ASSERT_TRUE(configuration.is_object());
  EXPECT_EQ(configuration["kind"], "SERVICE_KIND_CONFIGURATION");
  std::set<int> web_ports;
  std::set<std::string> instances;
  for (const json& e : configuration["endpoints"]) {
    EXPECT_EQ(e["node"], "node-a");
    EXPECT_EQ(e["executorId"], "executor-node-a");
    EXPECT_EQ(e["address"], "127.0.0.1");  // the executor's logs address (default loopback)
    ASSERT_TRUE(e["ports"].contains("web")) << e.dump();
    EXPECT_FALSE(e["ports"].contains("stream")) << e.dump();  // not a port of this service
    const int port = e["ports"]["web"].get<int>();
    EXPECT_GE(port, 30000);
    EXPECT_LE(port, 32767);
    web_ports.insert(port);
    instances.insert(e.value("instanceName", ""));
  }
  EXPECT_EQ(web_ports.size(), 2u);
  ASSERT_EQ(instances.size(), 2u);

  // Each Instance's service: its own broker. Both run on node-a, so only one of them can
  // listen on the target port; the other gets its own port from the range.
  std::set<int> stream_ports;
  for (const std::string& instance : instances) {
    json own = WaitForReadyEndpoints(instance + "-svc", 1);
    ASSERT_TRUE(own.is_object());
    EXPECT_EQ(own["kind"], "SERVICE_KIND_INSTANCE");
    EXPECT_EQ(own["instanceName"], instance);
    stream_ports.insert(own["endpoints"][0]["ports"]["stream"].get<int>());
  }
  ASSERT_EQ(stream_ports.size(), 2u);
  EXPECT_EQ(*stream_ports.begin(), 9554);
  EXPECT_GE(*stream_ports.rbegin(), 30000);
  EXPECT_LE(*stream_ports.rbegin(), 32767);
  EXPECT_EQ(web_ports.count(*stream_ports.rbegin()), 0u);
  RunResult table = Cli({"services", "list", "--configuration", "echo"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::HasSubstr("127.0.0.1:9554"));
  HttpAnswer rest = Get("/v1/services?configurationName=echo");
  ASSERT_EQ(rest.status, 200) << rest.body;
  json listed = json::parse(rest.body, nullptr, false);
  ASSERT_TRUE(listed.is_object()) << rest.body;
  EXPECT_EQ(listed["services"].size(), 3u);  // two instance services and the configuration's

  // The services go with the Configuration.
  RunResult deleted = Cli({"config", "delete", file});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  RunResult after = Cli({"services", "list"});
  EXPECT_EQ(after.out, "No services found.\n");
  RunResult missing = Cli({"services", "get", "echo-svc"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, ::testing::HasSubstr("service echo-svc not found"));
}

}  // namespace
}  // namespace regatta::testing
