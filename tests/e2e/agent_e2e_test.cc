// End to end with the built binary: `regatta up` without its executor, `regatta executor
// --simulated --nodes 2`, and per simulated node a `regatta agent` process with its own
// discovery directory and a `regatta dh debug-echo` there. Simulated nodes then have devices:
// Instances per node, jobs asking for a device run on a node holding a slot, a stopped agent
// leaves its node's Instances alone, and a lost executor takes them all until it comes back.
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
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/devices_fixture.h"

namespace regatta::testing {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kExecutorId[] = "sim-e2e";
constexpr char kNode0[] = "sim-0000";
constexpr char kNode1[] = "sim-0001";

// Capacity 1 and one local device per node: one Instance with one slot on each node.
constexpr char kEcho[] = R"(kind: Configuration
metadata: {name: echo}
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |
      descriptions: [foo0]
  capacity: 1
)";

constexpr char kOther[] = R"(kind: Configuration
metadata: {name: other}
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |
      descriptions: [bar0]
)";

constexpr char kDeviceJob[] =
    "  - command: [/bin/true]\n"
    "    resources: {requests: {cpu: 100m, memory: 64Mi, regatta.dev/echo: 1}}\n"
    "    annotations: {regatta.io/simulated-duration: 1h}\n";

constexpr char kRefusedOnce[] = "the server does not take this node's device reports yet";

struct NodeProcesses {
  std::string dir;                // discovery directory
  std::string availability_file;  // of its debug-echo handler
  std::unique_ptr<Child> agent;
  std::unique_ptr<Child> handler;
};

class AgentE2eTest : public DevicesFixture {
 protected:
  void TearDown() override {
    for (auto& [name, node] : nodes_) {
      // SIGTERM lets the handlers and agents remove their sockets.
      for (Child* c : {node.handler.get(), node.agent.get()}) {
        if (c != nullptr) c->Kill(SIGTERM);
      }
    }
    nodes_.clear();
    if (executor_ != nullptr) executor_->Kill(SIGTERM);
    executor_.reset();
    DevicesFixture::TearDown();
  }

  void StartExecutor() {
    executor_ = std::make_unique<Child>();
    ASSERT_TRUE(executor_->Start(
        {RegattaBinary(), "--server", grpc_, "executor", "--simulated", "--nodes", "2", "--set",
         absl::StrCat("executor.id=", kExecutorId), "--set", "executor.heartbeat=200ms"},
        Stderr("executor")));
    ASSERT_TRUE(executor_->WaitForLine("executor is running", std::chrono::seconds(30)))
        << Slurp(Stderr("executor"));
  }

  void StartAgent(const std::string& node) {
    NodeProcesses& n = nodes_[node];
    n.dir = absl::StrCat(scratch_, "/", node);
    n.agent = std::make_unique<Child>();
    ASSERT_TRUE(n.agent->Start({RegattaBinary(), "--server", grpc_, "agent", "--executor-id",
                                kExecutorId, "--node", node, "--dir", n.dir},
                               Stderr("agent-" + node)));
    auto line = n.agent->WaitForLine("device discovery: ", std::chrono::seconds(30));
    ASSERT_TRUE(line.has_value()) << n.agent->output() << Slurp(Stderr("agent-" + node));
    EXPECT_THAT(*line, HasSubstr(n.dir));
  }

  void StartHandler(const std::string& node) {
    NodeProcesses& n = nodes_[node];
    n.availability_file = absl::StrCat(scratch_, "/", node, "-availability");
    n.handler = std::make_unique<Child>();
    // The directory as Akri's handlers take it: DISCOVERY_HANDLERS_DIRECTORY.
    ASSERT_TRUE(n.handler->Start(
        {"/usr/bin/env", absl::StrCat("DISCOVERY_HANDLERS_DIRECTORY=", n.dir), RegattaBinary(),
         "dh", "debug-echo", "--availability-file", n.availability_file},
        Stderr("dh-" + node)));
    ASSERT_TRUE(n.handler->WaitForLine("serving on", std::chrono::seconds(10)));
  }

  // The holders of the echo Instance's slots on `node` ("" for a free slot).
  std::vector<std::string> EchoSlotHolders(const std::string& node) {
    std::vector<std::string> holders;
    for (const json& i : InstancesJson({"--configuration", "echo", "--node", node})) {
      const json usage = i.value("deviceUsage", json::object());
      for (const auto& [slot, holder] : usage.items()) {
        holders.push_back(holder.is_string() ? holder.get<std::string>() : "");
      }
    }
    return holders;
  }

  json Job(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  // The node and run id of a job's latest run.
  std::pair<std::string, std::string> LatestRun(const std::string& id) {
    json job = Job(id);
    if (!job.is_object() || !job.contains("runs") || job["runs"].empty()) return {};
    const json& run = job["runs"].back();
    return {run.value("nodeId", ""), run.value("runId", "")};
  }

  // Waits until the jobs are in exactly these states (by count), e.g. 2 RUNNING and 1 QUEUED.
  bool WaitForStates(const std::vector<std::string>& ids, std::map<std::string, int> expected) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    std::map<std::string, int> seen;
    while (std::chrono::steady_clock::now() < deadline) {
      seen.clear();
      for (const std::string& id : ids) ++seen[JobState(id)];
      if (seen == expected) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "job states are " << ::testing::PrintToString(seen);
    return false;
  }

  int CountInFile(const std::string& path, const std::string& needle) {
    const std::string text = Slurp(path);
    int count = 0;
    for (size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size())) {
      ++count;
    }
    return count;
  }

  // Waits until `needle` is in the file at least `count` times.
  bool WaitForInFile(const std::string& path, const std::string& needle, int count) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      if (CountInFile(path, needle) >= count) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no \"" << needle << "\" in " << path << ":\n" << Slurp(path);
    return false;
  }

  std::string ApplyFile(const std::string& name, const std::string& text) {
    const std::string file = (dir_ / "scratch" / name).string();
    std::ofstream(file) << text;
    RunResult applied = Cli({"config", "apply", file});
    EXPECT_EQ(applied.exit_code, 0) << applied.err;
    return file;
  }

  std::unique_ptr<Child> executor_;
  std::map<std::string, NodeProcesses> nodes_;
};

TEST_F(AgentE2eTest, AnAgentPerSimulatedNodeGivesItDevicesThatJobsUse) {
  ASSERT_NO_FATAL_FAILURE(StartExecutor());
  for (const char* node : {kNode0, kNode1}) {
    ASSERT_NO_FATAL_FAILURE(StartAgent(node));
    ASSERT_NO_FATAL_FAILURE(StartHandler(node));
  }
  ASSERT_EQ(Cli({"queue", "create", "devs"}).exit_code, 0);
  ApplyFile("echo.yaml", kEcho);
  ASSERT_TRUE(WaitForInstances({"echo/foo0@sim-0000", "echo/foo0@sim-0001"}));

  // Three jobs for two slots (one per node): two run, each on the node whose slot it holds.
  std::vector<std::string> jobs;
  for (int i = 0; i < 3; ++i) jobs.push_back(Submit("devs", kDeviceJob));
  ASSERT_TRUE(WaitForStates(jobs, {{"JOB_STATE_RUNNING", 2}, {"JOB_STATE_QUEUED", 1}}));
  std::map<std::string, std::string> job_on_node;  // node -> job
  std::string waiting;
  for (const std::string& id : jobs) {
    if (JobState(id) != "JOB_STATE_RUNNING") {
      waiting = id;
      continue;
    }
    auto [node, run] = LatestRun(id);
    EXPECT_EQ(EchoSlotHolders(node), std::vector<std::string>{run}) << node;
    job_on_node[node] = id;
  }
  ASSERT_EQ(job_on_node.size(), 2u);  // one per node

  // The slot freed by a cancelled job goes to the waiting job, on that node.
  ASSERT_EQ(Cli({"cancel", job_on_node[kNode0]}).exit_code, 0);
  EXPECT_EQ(WaitForState(waiting, {"JOB_STATE_RUNNING"}, std::chrono::seconds(15)),
            "JOB_STATE_RUNNING");
  auto [waiting_node, waiting_run] = LatestRun(waiting);
  EXPECT_EQ(waiting_node, kNode0);
  EXPECT_EQ(EchoSlotHolders(kNode0), std::vector<std::string>{waiting_run});
  const std::string node1_run = LatestRun(job_on_node[kNode1]).second;

  // A stopped agent deletes nothing: sim-0001 keeps its Instance (and its job its slot) while
  // sim-0000's handler going OFFLINE is seen at once.
  nodes_[kNode1].agent->Kill(SIGTERM);
  EXPECT_EQ(nodes_[kNode1].agent->Wait(), 0);
  std::ofstream(nodes_[kNode0].availability_file) << "OFFLINE\n";
  ASSERT_TRUE(WaitForInstances({"echo/foo0@sim-0001"}));
  EXPECT_EQ(EchoSlotHolders(kNode1), std::vector<std::string>{node1_run});
  std::filesystem::remove(nodes_[kNode0].availability_file);
  ASSERT_TRUE(WaitForInstances({"echo/foo0@sim-0000", "echo/foo0@sim-0001"}));

  // A restarted agent takes over without dropping the node's Instance: its handler registers
  // again, and a new Configuration shows the agent reports.
  ASSERT_NO_FATAL_FAILURE(StartAgent(kNode1));
  ApplyFile("other.yaml", kOther);
  ASSERT_TRUE(WaitForInstances(
      {"echo/foo0@sim-0000", "echo/foo0@sim-0001", "other/bar0@sim-0000", "other/bar0@sim-0001"}));
  EXPECT_EQ(EchoSlotHolders(kNode1), std::vector<std::string>{node1_run});

  // The executor lost: its nodes leave every Instance though the agents still run; their
  // reports are refused (logged once) until it is back, then everything returns.
  const std::string agent0_log = Stderr(std::string("agent-") + kNode0);
  const int refused_before = CountInFile(agent0_log, kRefusedOnce);  // e.g. at its start
  executor_->Kill(SIGKILL);
  ASSERT_TRUE(WaitForInstances({}, std::chrono::seconds(15)));
  ASSERT_TRUE(WaitForInFile(agent0_log, kRefusedOnce, refused_before + 1));
  ASSERT_NO_FATAL_FAILURE(StartExecutor());
  ASSERT_TRUE(WaitForInstances(
      {"echo/foo0@sim-0000", "echo/foo0@sim-0001", "other/bar0@sim-0000", "other/bar0@sim-0001"}));
  EXPECT_EQ(CountInFile(agent0_log, kRefusedOnce), refused_before + 1) << Slurp(agent0_log);
  EXPECT_THAT(Slurp(agent0_log), HasSubstr("the server takes this node's device reports again"));
}

}  // namespace
}  // namespace regatta::testing
