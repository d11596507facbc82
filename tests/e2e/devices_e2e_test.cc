// End to end with the built binary: `regatta up` without its executor, two
// `regatta executor --local` processes as two nodes (each with its own discovery directory and
// device agent) and `regatta dh debug-echo` handler processes on each. Instances are checked
// through `regatta instances list -o json` and statuses through `regatta config get -o json`.
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/devices/protocol/device_finder.h"
#include "src/devices/protocol/handler_server.h"
#include "tests/e2e/devices_fixture.h"

namespace regatta::testing {
namespace {

using json = nlohmann::json;

// Brokers print what they were given, then stay up.
constexpr char kResources[] = R"(kind: Configuration
metadata: {name: echo}
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |
      descriptions: [foo0, foo1]
  capacity: 2
  brokerSpec:
    brokerPodSpec:
      queue: devices
      job:
        task:
          command: [sh, -c, 'echo "svc=$REGATTA_INSTANCE_SERVICE port=$REGATTA_PORT_STREAM device=$REGATTA_DEVICE_INSTANCES desc=$DEBUG_ECHO_DESCRIPTION"; exec sleep 600']
          resources: {requests: {cpu: 10m, memory: 8Mi}}
  instanceServiceSpec:
    ports: [{name: stream, port: 8554}]
---
kind: Configuration
metadata: {name: cams}
spec:
  discoveryHandler:
    name: debugEchoShared
    discoveryDetails: |
      descriptions: [cam0]
  capacity: 2
  brokerSpec:
    brokerPodSpec:
      queue: devices
      job:
        task:
          command: [sleep, "600"]
          resources: {requests: {cpu: 10m, memory: 8Mi}}
---
kind: Configuration
metadata: {name: lonely}
spec:
  discoveryHandler:
    name: onvif
    discoveryDetails: "{}"
)";

struct NodeProcesses {
  std::string dir;                // discovery directory
  std::string availability_file;  // shared by both handlers of the node
  std::unique_ptr<Child> executor;
  std::unique_ptr<Child> local_handler;
  std::unique_ptr<Child> shared_handler;
};

class DevicesE2eTest : public DevicesFixture {
 protected:
  void TearDown() override {
    for (auto& [name, node] : nodes_) {
      // SIGTERM lets the handlers and executors remove their sockets.
      for (Child* c : {node.local_handler.get(), node.shared_handler.get(), node.executor.get()}) {
        if (c != nullptr) c->Kill(SIGTERM);
      }
    }
    nodes_.clear();
    DevicesFixture::TearDown();
  }

  void StartExecutor(const std::string& node) {
    NodeProcesses& n = nodes_[node];
    n.dir = absl::StrCat(scratch_, "/", node);
    n.availability_file = absl::StrCat(scratch_, "/", node, "-availability");
    n.executor = std::make_unique<Child>();
    ASSERT_TRUE(n.executor->Start(
        {RegattaBinary(), "--server", grpc_, "executor", "--local", "--data-dir",
         (dir_ / ("data-" + node)).string(), "--discovery-dir", n.dir, "--set",
         "executor.id=executor-" + node, "--set", "executor.nodes=[{name: " + node + "}]", "--set",
         "executor.heartbeat=200ms", "--set", "executor.cgroups=false"},
        Stderr("executor-" + node)));
    auto line = n.executor->WaitForLine("device discovery: ", std::chrono::seconds(30));
    ASSERT_TRUE(line.has_value()) << n.executor->output() << Slurp(Stderr("executor-" + node));
    EXPECT_NE(line->find(n.dir), std::string::npos) << *line;
  }

  void StartHandlers(const std::string& node) {
    NodeProcesses& n = nodes_[node];
    n.local_handler = std::make_unique<Child>();
    ASSERT_TRUE(n.local_handler->Start({RegattaBinary(), "dh", "debug-echo", "--dir", n.dir,
                                        "--availability-file", n.availability_file},
                                       Stderr("dh-local-" + node)));
    ASSERT_TRUE(n.local_handler->WaitForLine("serving on", std::chrono::seconds(10)));
    n.shared_handler = std::make_unique<Child>();
    ASSERT_TRUE(n.shared_handler->Start(
        {RegattaBinary(), "dh", "debug-echo", "--dir", n.dir, "--name", "debugEchoShared",
         "--shared", "--availability-file", n.availability_file},
        Stderr("dh-shared-" + node)));
    ASSERT_TRUE(n.shared_handler->WaitForLine("serving on", std::chrono::seconds(10)));
  }

  // Node → error of a Configuration's status ("" when discovery works there).
  std::map<std::string, std::string> Status(const std::string& configuration) {
    RunResult r = Cli({"config", "get", configuration, "-o", "json"});
    json doc = json::parse(r.out, nullptr, false);
    std::map<std::string, std::string> out;
    if (!doc.is_object() || !doc.contains("status")) return out;
    for (const json& n : doc["status"].value("nodes", json::array())) {
      out[n.value("node", "")] = n.value("error", "");
    }
    return out;
  }

  // "<instance's configuration>/<device id>@<node>" per RUNNING broker, sorted; the node is the
  // one its run is on.
  std::vector<std::string> RunningBrokers() {
    RunResult r = Cli({"jobs", "list", "--label", "regatta.dev/broker=true", "--state", "RUNNING",
                       "--all", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json doc = json::parse(r.out, nullptr, false);
    std::vector<std::string> out;
    if (!doc.is_object() || !doc.contains("jobs")) return out;
    std::map<std::string, std::string> device_of = InstanceDevices();
    for (const json& job : doc["jobs"]) {
      RunResult got = Cli({"jobs", "get", job.value("jobId", ""), "--spec", "-o", "json"});
      json details = json::parse(got.out, nullptr, false);
      if (!details.is_object()) continue;
      const json& labels = details["job"]["labels"];
      std::string node;
      if (details.contains("runs") && !details["runs"].empty()) {
        node = details["runs"].back().value("nodeId", "");
      }
      out.push_back(
          absl::StrCat(device_of[labels.value("regatta.dev/broker-instance", "")], "@", node));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Instance name -> "<configuration>/<device id>".
  std::map<std::string, std::string> InstanceDevices() {
    std::map<std::string, std::string> out;
    for (const json& i : InstancesJson()) {
      out[i.value("name", "")] =
          absl::StrCat(i.value("configurationName", ""), "/", i.value("deviceId", ""));
    }
    return out;
  }

  // "<configuration>/<device id>@<node>:<port>" per ready endpoint of every instance service,
  // sorted; the port is "3xxxx" when in the broker range.
  std::vector<std::string> ServiceEndpoints() {
    RunResult r = Cli({"services", "list", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json doc = json::parse(r.out, nullptr, false);
    std::vector<std::string> out;
    if (!doc.is_object() || !doc.contains("services")) return out;
    std::map<std::string, std::string> device_of = InstanceDevices();
    for (const json& service : doc["services"]) {
      const std::string instance = service.value("instanceName", "");
      if (instance.empty() || !service.contains("endpoints")) continue;
      EXPECT_EQ(service.value("name", ""), instance + "-svc");
      for (const json& endpoint : service["endpoints"]) {
        if (!endpoint.value("ready", false)) continue;
        const int port = endpoint["ports"].value("stream", 0);
        out.push_back(absl::StrCat(device_of[instance], "@", endpoint.value("node", ""), ":",
                                   port >= 30000 && port <= 32767 ? "3xxxx" : absl::StrCat(port)));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  bool WaitForServices(std::vector<std::string> expected) {
    return WaitForList([this] { return ServiceEndpoints(); }, std::move(expected),
                       "instance service endpoints", std::chrono::seconds(30),
                       std::chrono::milliseconds(100));
  }

  bool WaitForBrokers(std::vector<std::string> expected,
                      std::chrono::seconds timeout = std::chrono::seconds(30)) {
    return WaitForList([this] { return RunningBrokers(); }, std::move(expected), "running brokers",
                       timeout, std::chrono::milliseconds(100));
  }

  std::map<std::string, NodeProcesses> nodes_;
};

const std::vector<std::string> kEverything = {"cams/cam0@node-a,node-b", "echo/foo0@node-a",
                                              "echo/foo0@node-b", "echo/foo1@node-a",
                                              "echo/foo1@node-b"};
// A broker per local Instance on its node, one per node for the shared camera.
const std::vector<std::string> kEveryBroker = {"cams/cam0@node-a", "cams/cam0@node-b",
                                               "echo/foo0@node-a", "echo/foo0@node-b",
                                               "echo/foo1@node-a", "echo/foo1@node-b"};
// The echo Configuration's instance services: one per Instance, its broker ready.
const std::vector<std::string> kEveryService = {"echo/foo0@node-a:3xxxx", "echo/foo0@node-b:3xxxx",
                                                "echo/foo1@node-a:3xxxx", "echo/foo1@node-b:3xxxx"};
const std::vector<std::string> kNodeABrokers = {"cams/cam0@node-a", "echo/foo0@node-a",
                                                "echo/foo1@node-a"};

TEST_F(DevicesE2eTest, TwoNodesTheirInstancesBrokersAvailabilityDeletionAndExecutorLoss) {
  RunResult queue = Cli({"queue", "create", "devices"});
  ASSERT_EQ(queue.exit_code, 0) << queue.err;
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-b"));
  ASSERT_NO_FATAL_FAILURE(StartHandlers("node-a"));
  ASSERT_NO_FATAL_FAILURE(StartHandlers("node-b"));
  const std::string file = (dir_ / "scratch" / "devices.yaml").string();
  std::ofstream(file) << kResources;
  RunResult applied = Cli({"config", "apply", file});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;

  // Two local devices on two nodes: four Instances; one shared device: one Instance of both.
  ASSERT_TRUE(WaitForInstances(kEverything));
  RunResult one = Cli({"instances", "list", "--configuration", "echo", "-o", "json"});
  json echo = json::parse(one.out, nullptr, false);
  ASSERT_TRUE(echo.is_object()) << one.out;
  for (const json& i : echo["instances"]) {
    EXPECT_EQ(i["deviceUsage"].size(), 2u) << i.dump();  // capacity 2: two slots
  }
  // A handler no node has: each node says so in plain words.
  std::map<std::string, std::string> lonely;
  for (int i = 0; i < 200 && lonely.size() < 2; ++i) {
    lonely = Status("lonely");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(lonely.size(), 2u);
  EXPECT_THAT(lonely["node-a"], ::testing::HasSubstr("no discovery handler named 'onvif'"));
  EXPECT_THAT(lonely["node-b"], ::testing::HasSubstr("no discovery handler named 'onvif'"));
  EXPECT_EQ(Status("echo"), (std::map<std::string, std::string>{{"node-a", ""}, {"node-b", ""}}));

  // Brokers run next to their devices and get the device and their service port.
  ASSERT_TRUE(WaitForBrokers(kEveryBroker));
  ASSERT_TRUE(WaitForServices(kEveryService));
  RunResult foo = Cli({"jobs", "list", "--label", "regatta.dev/broker-node=node-a", "--state",
                       "RUNNING", "--all", "-o", "json"});
  json node_a = json::parse(foo.out, nullptr, false);
  ASSERT_TRUE(node_a.is_object()) << foo.out;
  bool found_echo_output = false;
  for (const json& job : node_a["jobs"]) {
    for (int i = 0; i < 50 && !found_echo_output; ++i) {
      RunResult logs = Cli({"logs", job.value("jobId", "")});
      if (logs.out.find("svc=echo-") != std::string::npos) {
        EXPECT_THAT(logs.out, ::testing::MatchesRegex(
                                  "svc=echo-[0-9a-f]{6}-svc port=3[0-9]{4} device=echo-[0-9a-f]{6} "
                                  "desc=foo[01]\\s*"));
        found_echo_output = true;
      } else if (logs.out.empty()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      } else {
        break;  // the shared camera's broker prints nothing
      }
    }
  }
  EXPECT_TRUE(found_echo_output);

  // OFFLINE on node-a: its Instances go and it leaves the shared one, and their brokers on
  // node-a stop; back online: they return.
  std::ofstream(nodes_["node-a"].availability_file) << "OFFLINE\n";
  ASSERT_TRUE(WaitForInstances({"cams/cam0@node-b", "echo/foo0@node-b", "echo/foo1@node-b"}));
  ASSERT_TRUE(WaitForBrokers({"cams/cam0@node-b", "echo/foo0@node-b", "echo/foo1@node-b"}));
  ASSERT_TRUE(WaitForServices({"echo/foo0@node-b:3xxxx", "echo/foo1@node-b:3xxxx"}));
  std::filesystem::remove(nodes_["node-a"].availability_file);
  ASSERT_TRUE(WaitForInstances(kEverything));
  ASSERT_TRUE(WaitForBrokers(kEveryBroker));
  ASSERT_TRUE(WaitForServices(kEveryService));

  // SIGKILL node-b's executor: after the executor timeout its node leaves every Instance, and
  // the brokers that ran there are gone too.
  nodes_["node-b"].executor->Kill(SIGKILL);
  ASSERT_TRUE(WaitForInstances({"cams/cam0@node-a", "echo/foo0@node-a", "echo/foo1@node-a"},
                               std::chrono::seconds(30)));
  ASSERT_TRUE(WaitForBrokers(kNodeABrokers));
  ASSERT_TRUE(WaitForServices({"echo/foo0@node-a:3xxxx", "echo/foo1@node-a:3xxxx"}));

  // Deleting the Configurations removes everything, brokers included.
  RunResult deleted = Cli({"config", "delete", file});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(Instances(), std::vector<std::string>());
  ASSERT_TRUE(WaitForBrokers({}));
  RunResult services = Cli({"services", "list", "-o", "json"});
  ASSERT_EQ(services.exit_code, 0) << services.err;
  json none = json::parse(services.out, nullptr, false);
  EXPECT_TRUE(!none.contains("services") || none["services"].empty()) << services.out;
}

constexpr char kUdev[] = R"(kind: Configuration
metadata: {name: null-device}
spec:
  discoveryHandler:
    name: udev
    discoveryDetails: |
      udevRules: ['KERNEL=="null", SUBSYSTEM=="mem"']
---
kind: Configuration
metadata: {name: bad-rules}
spec:
  discoveryHandler:
    name: udev
    discoveryDetails: |
      udevRules: ['KERNEL=="null", PROGRAM=="/bin/true"']
)";

TEST_F(DevicesE2eTest, UdevFindsDevNullAndUnsupportedRulesAreAPlainStatusError) {
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  NodeProcesses& node = nodes_["node-a"];
  node.local_handler = std::make_unique<Child>();
  ASSERT_TRUE(node.local_handler->Start({RegattaBinary(), "dh", "udev", "--dir", node.dir},
                                        Stderr("dh-udev")));
  ASSERT_TRUE(node.local_handler->WaitForLine("serving on", std::chrono::seconds(10)))
      << Slurp(Stderr("dh-udev"));
  const std::string file = (dir_ / "scratch" / "udev.yaml").string();
  std::ofstream(file) << kUdev;
  RunResult applied = Cli({"config", "apply", file});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;

  ASSERT_TRUE(WaitForInstances({"null-device//devices/virtual/mem/null@node-a"}));
  RunResult listed = Cli({"instances", "list", "--configuration", "null-device", "-o", "json"});
  json doc = json::parse(listed.out, nullptr, false);
  ASSERT_TRUE(doc.is_object() && doc.contains("instances")) << listed.out;
  ASSERT_EQ(doc["instances"].size(), 1u);
  const json& specs = doc["instances"][0]["deviceSpecs"];
  ASSERT_EQ(specs.size(), 1u) << doc.dump();
  EXPECT_EQ(specs[0].value("hostPath", ""), "/dev/null");

  std::map<std::string, std::string> bad;
  for (int i = 0; i < 200 && bad["node-a"].empty(); ++i) {
    bad = Status("bad-rules");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_THAT(bad["node-a"], ::testing::HasSubstr("udevRules[0]")) << bad["node-a"];
  EXPECT_THAT(bad["node-a"], ::testing::HasSubstr("PROGRAM")) << bad["node-a"];
}

constexpr char kOneSlot[] = R"(kind: Configuration
metadata: {name: one}
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |
      descriptions: [foo0]
  capacity: 1
)";

// Two jobs asking for any device of Configuration "one", each running `seconds`.
std::string DeviceJobs(const std::string& client_id, const std::string& seconds) {
  return absl::StrCat(R"(queue: q
jobSet: s
jobs:
  - clientId: )",
                      client_id, R"(
    count: 2
    command: [sleep, ")",
                      seconds, R"("]
    resources: {requests: {cpu: 10m, memory: 8Mi, regatta.dev/one: 1}}
)");
}

TEST_F(DevicesE2eTest, SlotContentionOneRunsTheOtherWaitsAndALostExecutorFreesTheSlot) {
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  ASSERT_NO_FATAL_FAILURE(StartHandlers("node-a"));
  const std::string config = (dir_ / "scratch" / "one.yaml").string();
  std::ofstream(config) << kOneSlot;
  ASSERT_EQ(Cli({"config", "apply", config}).exit_code, 0);
  ASSERT_TRUE(WaitForInstances({"one/foo0@node-a"}));

  // Capacity 1, two jobs: never both running; the second starts after the first ended.
  const std::string short_jobs = (dir_ / "scratch" / "short.yaml").string();
  std::ofstream(short_jobs) << DeviceJobs("short", "1");
  RunResult submitted = Cli({"submit", short_jobs, "-o", "json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  auto states = [&](const std::string& client_prefix) {
    std::map<std::string, std::string> out;  // job id -> state
    RunResult r = Cli({"jobs", "list", "--queue", "q", "--all", "-o", "json"});
    json doc = json::parse(r.out, nullptr, false);
    if (!doc.is_object() || !doc.contains("jobs")) return out;
    for (const json& job : doc["jobs"]) {
      if (job.value("clientId", "").rfind(client_prefix, 0) == 0) {
        out[job.value("jobId", "")] = job.value("state", "");
      }
    }
    return out;
  };
  int succeeded = 0;
  for (int i = 0; i < 300 && succeeded < 2; ++i) {
    int running = 0;
    succeeded = 0;
    for (const auto& [id, state] : states("short")) {
      running += state == "JOB_STATE_RUNNING" ? 1 : 0;
      succeeded += state == "JOB_STATE_SUCCEEDED" ? 1 : 0;
    }
    ASSERT_LE(running, 1) << "both jobs hold the one slot";
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(succeeded, 2);
  std::vector<std::pair<absl::Time, absl::Time>> spans;  // (started, finished)
  for (const auto& [id, state] : states("short")) {
    json details = json::parse(Cli({"jobs", "get", id, "-o", "json"}).out, nullptr, false);
    ASSERT_TRUE(details.is_object());
    const json& run = details["runs"].back();
    absl::Time started, finished;
    std::string error;
    ASSERT_TRUE(absl::ParseTime(absl::RFC3339_full, run.value("startedTime", ""), &started, &error))
        << error << run.dump();
    ASSERT_TRUE(
        absl::ParseTime(absl::RFC3339_full, run.value("finishedTime", ""), &finished, &error))
        << error << run.dump();
    spans.emplace_back(started, finished);
  }
  std::sort(spans.begin(), spans.end());
  EXPECT_GE(spans[1].first, spans[0].second) << "the second started before the first ended";

  // A long job holds the slot and another waits; the executor dies: its node is lost, the
  // slot is freed, and once the node is back the slot serves one of them again.
  const std::string long_jobs = (dir_ / "scratch" / "long.yaml").string();
  std::ofstream(long_jobs) << DeviceJobs("long", "600");
  ASSERT_EQ(Cli({"submit", long_jobs}).exit_code, 0);
  std::string holder;
  for (int i = 0; i < 200 && holder.empty(); ++i) {
    for (const auto& [id, state] : states("long")) {
      if (state == "JOB_STATE_RUNNING") holder = id;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(holder.empty());
  std::this_thread::sleep_for(std::chrono::seconds(1));
  int running = 0;
  for (const auto& [id, state] : states("long")) running += state == "JOB_STATE_RUNNING" ? 1 : 0;
  EXPECT_EQ(running, 1);

  nodes_["node-a"].executor->Kill(SIGKILL);
  ASSERT_TRUE(WaitForInstances({}, std::chrono::seconds(30)));
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  ASSERT_TRUE(WaitForInstances({"one/foo0@node-a"}));
  // One job runs on the slot again: the dead run's claim did not outlive it.
  std::string usage_holder;
  for (int i = 0; i < 300; ++i) {
    RunResult r = Cli({"instances", "list", "-o", "json"});
    json doc = json::parse(r.out, nullptr, false);
    usage_holder.clear();
    if (doc.is_object() && doc.contains("instances") && !doc["instances"].empty()) {
      for (const auto& [slot, run] : doc["instances"][0]["deviceUsage"].items()) {
        usage_holder = run.get<std::string>();
      }
    }
    running = 0;
    for (const auto& [id, state] : states("long")) {
      running += state == "JOB_STATE_RUNNING" ? 1 : 0;
    }
    if (!usage_holder.empty() && running == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(running, 1);
  EXPECT_FALSE(usage_holder.empty());
}

constexpr char kKmsgDevice[] = R"(kind: Configuration
metadata: {name: kmsg}
spec:
  discoveryHandler:
    name: udev
    discoveryDetails: |
      udevRules: ['KERNEL=="kmsg", SUBSYSTEM=="mem"']
  brokerProperties: {GREETING: hello-from-the-configuration}
  capacity: 1
)";

// Akri's agent gives a pod its device's specs, mounts and properties; a job with an image
// gets them in its container: /dev/kmsg is not among podman's default devices.
TEST_F(DevicesE2eTest, AContainerJobSeesItsClaimedDeviceNodeAndProperties) {
  if (std::system(absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh probe").c_str()) != 0) {
    GTEST_SKIP() << "this machine cannot run containers (scripts/test-images.sh probe says why)";
  }
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  NodeProcesses& node = nodes_["node-a"];
  node.local_handler = std::make_unique<Child>();
  ASSERT_TRUE(node.local_handler->Start({RegattaBinary(), "dh", "udev", "--dir", node.dir},
                                        Stderr("dh-udev")));
  ASSERT_TRUE(node.local_handler->WaitForLine("serving on", std::chrono::seconds(10)));
  const std::string config = (dir_ / "scratch" / "kmsg.yaml").string();
  std::ofstream(config) << kKmsgDevice;
  ASSERT_EQ(Cli({"config", "apply", config}).exit_code, 0);
  ASSERT_TRUE(WaitForInstances({"kmsg//devices/virtual/mem/kmsg@node-a"}));

  const std::string jobs = (dir_ / "scratch" / "jobs.yaml").string();
  std::ofstream(jobs) << R"(queue: q
jobSet: dev
jobs:
  - image: localhost/busybox:1.35
    command: [sh, -c, 'test -c /dev/kmsg && echo "node $REGATTA_DEVICE_NODES $GREETING"']
    resources: {requests: {cpu: 10m, memory: 16Mi, regatta.dev/kmsg: 1}}
  - image: localhost/busybox:1.35
    command: [sh, -c, 'test -e /dev/kmsg && echo visible || echo absent']
    resources: {requests: {cpu: 10m, memory: 16Mi}}
)";
  RunResult submitted = Cli({"submit", jobs, "-o", "json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  json doc = json::parse(submitted.out, nullptr, false);
  ASSERT_TRUE(doc.is_object() && doc.contains("items")) << submitted.out;
  const std::string with_device = doc["items"][0].value("jobId", "");
  const std::string without = doc["items"][1].value("jobId", "");
  for (const std::string& id : {with_device, without}) {
    EXPECT_EQ(
        WaitForState(id, {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, std::chrono::seconds(60)),
        "JOB_STATE_SUCCEEDED")
        << Cli({"logs", id}).out << Cli({"jobs", "get", id}).out;
  }
  EXPECT_EQ(Cli({"logs", with_device}).out, "node /dev/kmsg hello-from-the-configuration\n");
  EXPECT_EQ(Cli({"logs", without}).out, "absent\n");
}

// A discovery handler of the test's own, served in process as custom Akri handlers are: one
// device with a device node at another path in the container, a read-only mount and a property.
class SensorFinder : public devices::DeviceFinder {
 public:
  explicit SensorFinder(std::string host_dir) : host_dir_(std::move(host_dir)) {}

  absl::StatusOr<std::unique_ptr<devices::DeviceQuery>> Prepare(
      const v0::DiscoverRequest&) override {
    return std::make_unique<Query>(host_dir_);
  }

 private:
  class Query : public devices::DeviceQuery {
   public:
    explicit Query(std::string host_dir) : host_dir_(std::move(host_dir)) {}
    absl::StatusOr<std::vector<v0::Device>> ListDevices() override {
      v0::Device device;
      device.set_id("sensor-0");
      (*device.mutable_properties())["SENSOR_MODEL"] = "t-1000";
      v0::Mount* mount = device.add_mounts();
      mount->set_host_path(host_dir_);
      mount->set_container_path("/sensor");
      mount->set_read_only(true);
      v0::DeviceSpec* node = device.add_device_specs();
      node->set_host_path("/dev/kmsg");
      node->set_container_path("/dev/sensor0");
      node->set_permissions("r");
      return std::vector<v0::Device>{device};
    }
    bool WaitForPossibleChange(absl::Duration timeout) override {
      absl::SleepFor(std::min(timeout, absl::Milliseconds(100)));
      return false;
    }

   private:
    std::string host_dir_;
  };

  std::string host_dir_;
};

TEST_F(DevicesE2eTest, AContainerJobSeesItsDevicesMountNodeAtItsPathAndProperty) {
  if (std::system(absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh probe").c_str()) != 0) {
    GTEST_SKIP() << "this machine cannot run containers (scripts/test-images.sh probe says why)";
  }
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartExecutor("node-a"));
  const std::string readings = absl::StrCat(scratch_, "/readings");
  std::filesystem::create_directories(readings);
  std::ofstream(readings + "/latest") << "21.5\n";
  SensorFinder finder(readings);
  devices::HandlerServerOptions options;
  options.dir = nodes_["node-a"].dir;
  options.name = "sensor";
  options.relist_interval = absl::Milliseconds(200);
  auto handler = devices::HandlerServer::Start(options, &finder);
  ASSERT_TRUE(handler.ok()) << handler.status();
  const std::string config = (dir_ / "scratch" / "sensor.yaml").string();
  std::ofstream(config) << "kind: Configuration\nmetadata: {name: sensor}\nspec:\n"
                           "  discoveryHandler: {name: sensor, discoveryDetails: ''}\n"
                           "  capacity: 1\n";
  ASSERT_EQ(Cli({"config", "apply", config}).exit_code, 0);
  ASSERT_TRUE(WaitForInstances({"sensor/sensor-0@node-a"}));

  const std::string jobs = (dir_ / "scratch" / "jobs.yaml").string();
  std::ofstream(jobs) << R"(queue: q
jobSet: sensor
jobs:
  - image: localhost/busybox:1.35
    command: [sh, -c, 'test -c /dev/sensor0 && cat /sensor/latest && echo "$SENSOR_MODEL" &&
                       (touch /sensor/x 2> /dev/null && echo writable || echo read-only)']
    resources: {requests: {cpu: 10m, memory: 16Mi, regatta.dev/sensor: 1}}
)";
  RunResult submitted = Cli({"submit", jobs, "-o", "json"});
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  json doc = json::parse(submitted.out, nullptr, false);
  ASSERT_TRUE(doc.is_object() && doc.contains("items")) << submitted.out;
  const std::string id = doc["items"][0].value("jobId", "");
  EXPECT_EQ(WaitForState(id, {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, std::chrono::seconds(60)),
            "JOB_STATE_SUCCEEDED")
      << Cli({"logs", id}).out << Cli({"jobs", "get", id}).out;
  EXPECT_EQ(Cli({"logs", id}).out, "21.5\nt-1000\nread-only\n");
  (*handler)->Shutdown();
}

}  // namespace
}  // namespace regatta::testing
