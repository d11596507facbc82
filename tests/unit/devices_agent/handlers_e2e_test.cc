// `regatta dh debug-echo` and `regatta dh udev` as their own processes, against an agent in
// this process.

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/devices/agent/agent.h"
#include "src/devices/protocol/sockets.h"
#include "tests/e2e/process.h"
#include "tests/unit/devices_agent/test_util.h"

namespace regatta::devices {
namespace {

using devices::testing::Eventually;
using devices::testing::Recorder;
using devices::testing::ScratchDir;
using devices::testing::WriteFile;

absl::StatusOr<std::unique_ptr<Agent>> StartAgent(const ScratchDir& dir, Recorder& recorder) {
  AgentOptions options;
  options.dir = dir.path();
  options.node_name = "node-e2e";
  return Agent::Start(options, recorder.Callbacks());
}

TEST(DebugEchoE2eTest, TheHandlerProcessRegistersReportsFollowsItsFileAndStopsOnSigterm) {
  ScratchDir dir;
  const std::string availability = dir.File("availability");
  Recorder recorder;
  auto agent = StartAgent(dir, recorder);
  ASSERT_TRUE(agent.ok()) << agent.status();

  regatta::testing::Child handler;
  ASSERT_TRUE(handler.Start({regatta::testing::RegattaBinary(), "dh", "debug-echo", "--dir",
                             dir.path(), "--availability-file", availability, "--shared"},
                            dir.File("dh.err")));
  ASSERT_TRUE(handler.WaitForLine("Stop with Ctrl-C", std::chrono::seconds(20)))
      << handler.output() << regatta::testing::Slurp(dir.File("dh.err"));
  EXPECT_NE(handler.output().find(HandlerSocket(dir.path(), "debugEcho")), std::string::npos);

  DiscoveryRequest request;
  request.configuration = "echo";
  request.handler = "debugEcho";
  request.discovery_details = "descriptions: [foo0, foo1]";
  ASSERT_TRUE((*agent)->Apply(request).ok());
  ASSERT_TRUE(recorder.WaitForIds("echo", {"foo0", "foo1"}, absl::Seconds(10)))
      << regatta::testing::Slurp(dir.File("dh.err"));
  EXPECT_TRUE(recorder.Devices("echo")[0].shared);

  absl::Time written = absl::Now();
  WriteFile(availability, "OFFLINE");
  ASSERT_TRUE(recorder.WaitForIds("echo", {}));
  // Reported for the record (a benchmark measures the budget, not this test).
  std::printf("OFFLINE written -> empty set at the agent: %s\n",
              absl::FormatDuration(absl::Now() - written).c_str());
  std::remove(availability.c_str());
  ASSERT_TRUE(recorder.WaitForIds("echo", {"foo0", "foo1"}));

  handler.Kill(SIGTERM);
  EXPECT_EQ(handler.WaitFor(std::chrono::seconds(10)), 0);
  EXPECT_NE(access(HandlerSocket(dir.path(), "debugEcho").c_str(), F_OK), 0)
      << "the handler removes its socket";
  // The agent drops the handler that went away, and its devices with it.
  EXPECT_TRUE(recorder.WaitForIds("echo", {}));
  EXPECT_TRUE(recorder.WaitForError("echo", "no discovery handler named 'debugEcho'"));
}

TEST(UdevHandlerE2eTest, FindsDevNullOnThisHostAndNamesTheFieldOfABadRule) {
  ScratchDir dir;
  Recorder recorder;
  auto agent = StartAgent(dir, recorder);
  ASSERT_TRUE(agent.ok()) << agent.status();
  regatta::testing::Child handler;
  ASSERT_TRUE(handler.Start({regatta::testing::RegattaBinary(), "dh", "udev", "--dir", dir.path()},
                            dir.File("dh.err")));
  ASSERT_TRUE(handler.WaitForLine("Stop with Ctrl-C", std::chrono::seconds(20)))
      << handler.output() << regatta::testing::Slurp(dir.File("dh.err"));

  DiscoveryRequest request;
  request.configuration = "null-device";
  request.handler = "udev";
  request.discovery_details = "udevRules: ['KERNEL==\"null\", SUBSYSTEM==\"mem\"']";
  ASSERT_TRUE((*agent)->Apply(request).ok());
  ASSERT_TRUE(recorder.WaitForIds("null-device", {"/devices/virtual/mem/null"}, absl::Seconds(10)))
      << regatta::testing::Slurp(dir.File("dh.err"));
  const std::vector<DiscoveredDevice> devices = recorder.Devices("null-device");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(devices[0].shared);
  ASSERT_EQ(devices[0].device.device_specs_size(), 1);
  EXPECT_EQ(devices[0].device.device_specs(0).host_path(), "/dev/null");

  request.configuration = "bad-rule";
  request.discovery_details = "udevRules: ['PROGRAM==\"x\"']";
  ASSERT_TRUE((*agent)->Apply(request).ok());
  EXPECT_TRUE(recorder.WaitForError("bad-rule", "udevRules[0]"));

  handler.Kill(SIGTERM);
  EXPECT_EQ(handler.WaitFor(std::chrono::seconds(10)), 0);
}

TEST(DebugEchoE2eTest, ABadHandlerNameIsAClearError) {
  ScratchDir dir;
  regatta::testing::RunResult result = regatta::testing::RunProcess(
      {regatta::testing::RegattaBinary(), "dh", "debug-echo", "--dir", dir.path(), "--name", "a/b"},
      dir.path());
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("handler name: 'a/b' may hold only"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace regatta::devices
