// `regatta dh opcua` as its own process, against an agent in this process and two node-opcua
// servers on loopback ports. node-opcua-server comes from the npm registry through
// node_opcua.sh (cached outside the repository); without node, npm or the registry the server
// tests skip.

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "src/devices/agent/agent.h"
#include "tests/e2e/process.h"
#include "tests/unit/devices_agent/test_util.h"
#include "tests/unit/devices_opcua/test_ports.h"

#ifndef OPCUA_TEST_DIR
#error "OPCUA_TEST_DIR must name tests/unit/devices_opcua"
#endif

namespace regatta::devices {
namespace {

using devices::testing::Recorder;
using devices::testing::ScratchDir;
using regatta::testing::Child;
using regatta::testing::Slurp;

std::string ServerUrl(int port) { return absl::StrCat("opc.tcp://127.0.0.1:", port); }

std::string Details(const std::string& urls, const std::string& filter = "") {
  return absl::StrCat("opcuaDiscoveryMethod:\n  standard:\n    discoveryUrls: [", urls, "]\n",
                      filter);
}

class OpcuaE2eTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    scratch_ = new ScratchDir();
    regatta::testing::RunResult install = regatta::testing::RunProcess(
        {"/bin/sh", std::string(OPCUA_TEST_DIR) + "/node_opcua.sh"}, scratch_->path());
    if (install.exit_code != 0) {
      // The script's last line says why (npm's own report comes before it).
      absl::string_view why = absl::StripAsciiWhitespace(install.err);
      if (const size_t newline = why.rfind('\n'); newline != absl::string_view::npos) {
        why.remove_prefix(newline + 1);
      }
      skip_reason_ =
          new std::string(absl::StrCat("node-opcua-server is not available (node_opcua.sh exit ",
                                       install.exit_code, "): ", why));
      return;
    }
    const std::string cache(absl::StripAsciiWhitespace(install.out));
    // Both servers start at once: loading the standard address space takes node-opcua seconds.
    for (int i = 0; i < 2; ++i) {
      const std::string name = i == 0 ? "Server A" : "Server B";
      ports_[i] = opcua::testing::UnusedLoopbackPort();
      servers_[i] = new Child();
      servers_[i]->Start({"/usr/bin/env", "NODE_PATH=" + cache + "/node_modules", "node",
                          std::string(OPCUA_TEST_DIR) + "/opcua_test_server.js",
                          std::to_string(ports_[i]), name, cache + "/pki-" + std::to_string(i)},
                         scratch_->File("server" + std::to_string(i) + ".err"));
    }
    for (int i = 0; i < 2; ++i) {
      if (!servers_[i]->WaitForLine("listening", std::chrono::seconds(90))) {
        start_error_ = new std::string(
            absl::StrCat("node-opcua server ", i, " did not start: ", servers_[i]->output(),
                         Slurp(scratch_->File("server" + std::to_string(i) + ".err"))));
        return;
      }
    }
  }
  static void TearDownTestSuite() {
    for (Child*& server : servers_) {
      delete server;  // SIGKILL if still running
      server = nullptr;
    }
    delete scratch_;
    delete skip_reason_;
    delete start_error_;
    scratch_ = nullptr;
    skip_reason_ = start_error_ = nullptr;
  }

  // Starts the agent and `regatta dh opcua`; false (with a failure) if the handler did not come up.
  bool StartAgentAndHandler() {
    AgentOptions options;
    options.dir = dir_.path();
    options.node_name = "node-e2e";
    auto agent = Agent::Start(options, recorder_.Callbacks());
    if (!agent.ok()) {
      ADD_FAILURE() << agent.status();
      return false;
    }
    agent_ = *std::move(agent);
    if (!handler_.Start({regatta::testing::RegattaBinary(), "dh", "opcua", "--dir", dir_.path(),
                         "--discovery-interval", "200ms"},
                        dir_.File("dh.err")) ||
        !handler_.WaitForLine("Stop with Ctrl-C", std::chrono::seconds(20))) {
      ADD_FAILURE() << handler_.output() << Slurp(dir_.File("dh.err"));
      return false;
    }
    return true;
  }

  void Apply(const std::string& configuration, const std::string& details) {
    DiscoveryRequest request;
    request.configuration = configuration;
    request.handler = "opcua";
    request.discovery_details = details;
    ASSERT_TRUE(agent_->Apply(request).ok());
  }

  static ScratchDir* scratch_;
  static std::string* skip_reason_;
  static std::string* start_error_;
  static Child* servers_[2];
  static int ports_[2];

  ScratchDir dir_;
  Recorder recorder_;
  std::unique_ptr<Agent> agent_;
  Child handler_;
};

ScratchDir* OpcuaE2eTest::scratch_ = nullptr;
std::string* OpcuaE2eTest::skip_reason_ = nullptr;
std::string* OpcuaE2eTest::start_error_ = nullptr;
Child* OpcuaE2eTest::servers_[2] = {nullptr, nullptr};
int OpcuaE2eTest::ports_[2] = {0, 0};

TEST_F(OpcuaE2eTest, FindsServersHonoursTheNameFilterAndDropsAServerThatStops) {
  if (skip_reason_ != nullptr) GTEST_SKIP() << *skip_reason_;
  ASSERT_EQ(start_error_, nullptr) << *start_error_;
  ASSERT_TRUE(StartAgentAndHandler());
  const std::string a = ServerUrl(ports_[0]);
  const std::string b = ServerUrl(ports_[1]);
  const std::string both = absl::StrCat("'", a, "', '", b, "/'");

  Apply("all", Details(both));
  Apply("only-a", Details(both, "applicationNames:\n  action: Include\n  items: [Server A]\n"));
  Apply("not-a", Details(both, "applicationNames:\n  action: Exclude\n  items: [Server A]\n"));
  // The servers announce their own discovery URLs: the ids are those, whatever was asked.
  ASSERT_TRUE(recorder_.WaitForIds("all", {a, b}, absl::Seconds(15)))
      << "error: " << recorder_.Error("all") << "\n"
      << Slurp(dir_.File("dh.err"));
  const std::vector<DiscoveredDevice> devices = recorder_.Devices("all");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_TRUE(devices[0].shared);
  EXPECT_EQ(devices[0].device.properties().at("OPCUA_DISCOVERY_URL"), devices[0].device.id());
  EXPECT_TRUE(recorder_.WaitForIds("only-a", {a}));
  EXPECT_TRUE(recorder_.WaitForIds("not-a", {b}));

  // Server B stops: it leaves every list within a few discovery intervals.
  servers_[1]->Kill(SIGTERM);
  EXPECT_NE(servers_[1]->WaitFor(std::chrono::seconds(10)), -2);
  EXPECT_TRUE(recorder_.WaitForIds("all", {a}, absl::Seconds(10))) << Slurp(dir_.File("dh.err"));
  EXPECT_TRUE(recorder_.WaitForIds("not-a", {}));
  EXPECT_TRUE(recorder_.WaitForIds("only-a", {a}));

  handler_.Kill(SIGTERM);
  EXPECT_EQ(handler_.WaitFor(std::chrono::seconds(10)), 0);
}

// Needs no OPC UA server: the details are refused before any discovery.
TEST_F(OpcuaE2eTest, BadDetailsAreAClearErrorNamingTheField) {
  ASSERT_TRUE(StartAgentAndHandler());
  Apply("bad-action",
        Details("'opc.tcp://127.0.0.1:4840'", "applicationNames: {action: Maybe, items: [x]}\n"));
  Apply("bad-url", Details("'http://127.0.0.1:4840'"));
  EXPECT_TRUE(recorder_.WaitForError(
      "bad-action", "discoveryDetails.applicationNames.action: must be Include or Exclude"))
      << recorder_.Error("bad-action");
  EXPECT_TRUE(recorder_.WaitForError(
      "bad-url", "discoveryDetails.opcuaDiscoveryMethod.standard.discoveryUrls[0]"))
      << recorder_.Error("bad-url");
  EXPECT_TRUE(recorder_.Devices("bad-url").empty());

  regatta::testing::RunResult bad_flag =
      regatta::testing::RunProcess({regatta::testing::RegattaBinary(), "dh", "opcua", "--dir",
                                    dir_.path(), "--discovery-interval", "soon"},
                                   dir_.path());
  EXPECT_EQ(bad_flag.exit_code, 1);
  EXPECT_NE(bad_flag.err.find("--discovery-interval"), std::string::npos) << bad_flag.err;
}

}  // namespace
}  // namespace regatta::devices
