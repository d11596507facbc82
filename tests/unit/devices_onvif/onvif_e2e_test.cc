// `regatta dh onvif` as its own process, simulated cameras on loopback (WS-Discovery multicast
// on 127.0.0.1, each camera's device service on its own 127.0.0.x address) and an agent in this
// process: cameras found, every filter honoured, a camera that stops answering disappears, bad
// details are a clear error.

#include <signal.h>

#include <chrono>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "src/devices/agent/agent.h"
#include "tests/e2e/process.h"
#include "tests/unit/devices_agent/test_util.h"
#include "tests/unit/devices_onvif/simulated_camera.h"

namespace regatta::devices::onvif {
namespace {

using devices::testing::Recorder;
using devices::testing::ScratchDir;
using testing::FreeUdpPort;
using testing::SimulatedCamera;
using testing::SimulatedCameraOptions;

std::string Id(const SimulatedCamera& camera) {
  return absl::StrCat(camera.service_url(), "-", camera.options().uuid);
}

class OnvifHandlerE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const int port = FreeUdpPort();
    gate_ = Start(
        {.uuid = "aaaa0001-0000-4000-8000-000000000001",
         .scopes = {"onvif://www.onvif.org/name/Gate", "onvif://www.onvif.org/location/north"},
         .http_host = "127.0.0.11",
         .mac = "00:00:5e:00:53:11",
         .port = port});
    yard_ = Start(
        {.uuid = "bbbb0002-0000-4000-8000-000000000002",
         .scopes = {"onvif://www.onvif.org/name/Yard", "onvif://www.onvif.org/location/north"},
         .http_host = "127.0.0.12",
         .mac = "00:00:5e:00:53:12",
         .username = "yard-admin",
         .password = "s3cret",
         .port = port});
    dock_ = Start({.uuid = "cccc0003-0000-4000-8000-000000000003",
                   .scopes = {"onvif://www.onvif.org/name/Dock"},
                   .http_host = "127.0.0.13",
                   .mac = "00:00:5e:00:53:13",
                   .port = port});
    ASSERT_TRUE(gate_ && yard_ && dock_);

    AgentOptions options;
    options.dir = dir_.path();
    options.node_name = "node-e2e";
    auto agent = Agent::Start(options, recorder_.Callbacks());
    ASSERT_TRUE(agent.ok()) << agent.status();
    agent_ = *std::move(agent);

    ASSERT_TRUE(
        handler_.Start({regatta::testing::RegattaBinary(), "dh", "onvif", "--dir", dir_.path(),
                        "--probe-address", absl::StrCat("239.255.255.250:", port), "--interface",
                        "127.0.0.1", "--rediscover-interval", "100ms"},
                       dir_.File("dh.err")));
    ASSERT_TRUE(handler_.WaitForLine("Stop with Ctrl-C", std::chrono::seconds(20)))
        << handler_.output() << Log();
  }

  std::unique_ptr<SimulatedCamera> Start(SimulatedCameraOptions options) {
    absl::StatusOr<std::unique_ptr<SimulatedCamera>> camera = SimulatedCamera::Start(options);
    EXPECT_TRUE(camera.ok()) << camera.status();
    return camera.ok() ? *std::move(camera) : nullptr;
  }

  void Apply(const std::string& configuration, const std::string& details,
             std::map<std::string, std::optional<std::string>> properties = {
                 {"username_bbbb0002_0000_4000_8000_000000000002", "yard-admin"},
                 {"password_bbbb0002_0000_4000_8000_000000000002", "s3cret"}}) {
    DiscoveryRequest request;
    request.configuration = configuration;
    request.handler = "onvif";
    request.discovery_details = details;
    request.discovery_properties = std::move(properties);
    ASSERT_TRUE(agent_->Apply(request).ok());
  }

  std::string Log() { return regatta::testing::Slurp(dir_.File("dh.err")); }

  ScratchDir dir_;
  Recorder recorder_;
  std::unique_ptr<SimulatedCamera> gate_, yard_, dock_;
  std::unique_ptr<Agent> agent_;
  regatta::testing::Child handler_;
};

TEST_F(OnvifHandlerE2eTest, FindsTheCamerasHonoursEveryFilterAndDropsASilentCamera) {
  const std::string gate = Id(*gate_), yard = Id(*yard_), dock = Id(*dock_);
  Apply("all", "");
  Apply("ip-include", "ipAddresses: {action: Include, items: [127.0.0.11, 127.0.0.13]}");
  Apply("ip-exclude", "ipAddresses: {action: Exclude, items: [127.0.0.11]}");
  Apply("mac-include", "macAddresses: {items: ['00:00:5E:00:53:12']}");
  Apply("mac-exclude", "macAddresses: {action: Exclude, items: ['00:00:5e:00:53:12']}");
  Apply("scope-include", "scopes: {items: [onvif://www.onvif.org/location/north]}");
  Apply("scope-exclude", "scopes: {action: Exclude, items: [onvif://www.onvif.org/name/Gate]}");
  Apply("uuid-include", "uuids: {items: [CCCC0003-0000-4000-8000-000000000003]}");
  Apply("uuid-exclude", "uuids: {action: Exclude, items: [cccc0003-0000-4000-8000-000000000003]}");
  // Without its credentials the yard camera keeps its addresses to itself: a MAC filter that
  // needs them drops it, as Akri does.
  Apply("no-credentials", "macAddresses: {action: Exclude, items: ['00:00:5e:00:53:99']}", {});

  const absl::Duration wait = absl::Seconds(15);
  ASSERT_TRUE(recorder_.WaitForIds("all", {gate, yard, dock}, wait)) << Log();
  EXPECT_TRUE(recorder_.WaitForIds("ip-include", {gate, dock}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("ip-exclude", {yard, dock}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("mac-include", {yard}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("mac-exclude", {gate, dock}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("scope-include", {gate, yard}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("scope-exclude", {yard, dock}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("uuid-include", {dock}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("uuid-exclude", {gate, yard}, wait));
  EXPECT_TRUE(recorder_.WaitForIds("no-credentials", {gate, dock}, wait));
  EXPECT_GT(yard_->authorized_calls(), 0);

  // What a broker of the yard camera gets, and that cameras are shared between nodes.
  std::vector<DiscoveredDevice> devices = recorder_.Devices("mac-include");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(devices[0].shared);
  const auto& properties = devices[0].device.properties();
  EXPECT_EQ(properties.at("ONVIF_DEVICE_SERVICE_URL"), yard_->service_url());
  EXPECT_EQ(properties.at("ONVIF_DEVICE_UUID"), "bbbb0002-0000-4000-8000-000000000002");
  EXPECT_EQ(properties.at("ONVIF_DEVICE_IP_ADDRESS"), "127.0.0.12");
  EXPECT_EQ(properties.at("ONVIF_DEVICE_MAC_ADDRESS"), "00:00:5e:00:53:12");

  // Liveness: still answering Probes but not GetSystemDateAndTime → gone; back when it answers.
  gate_->SetAnswering(false);
  EXPECT_TRUE(recorder_.WaitForIds("all", {yard, dock}, wait)) << Log();
  gate_->SetAnswering(true);
  EXPECT_TRUE(recorder_.WaitForIds("all", {gate, yard, dock}, wait)) << Log();
  // Off the network entirely (no ProbeMatch) → gone too.
  dock_->SetDiscoverable(false);
  EXPECT_TRUE(recorder_.WaitForIds("all", {gate, yard}, wait)) << Log();

  handler_.Kill(SIGTERM);
  EXPECT_EQ(handler_.Wait(), 0);
}

TEST_F(OnvifHandlerE2eTest, BadDetailsAndCredentialsAreClearErrorsNamingTheField) {
  Apply("bad-action", "scopes: {action: Only, items: [x]}");
  Apply("bad-key", "ipAdresses: {items: [10.0.0.1]}");
  Apply("bad-timeout", "discoveryTimeoutSeconds: 0");
  Apply("bad-credentials", "", {{"device_credential_list", "not json"}});
  EXPECT_TRUE(recorder_.WaitForError("bad-action",
                                     "discoveryDetails.scopes.action: must be Include or Exclude"));
  EXPECT_TRUE(recorder_.WaitForError("bad-key", "discoveryDetails.ipAdresses: unknown field"));
  EXPECT_TRUE(recorder_.WaitForError("bad-timeout", "discoveryDetails.discoveryTimeoutSeconds"));
  EXPECT_TRUE(recorder_.WaitForError("bad-credentials",
                                     "discoveryProperties.device_credential_list: not valid JSON"));
  EXPECT_TRUE(recorder_.Devices("bad-action").empty());
}

TEST(OnvifHandlerFlagsTest, ABadProbeAddressIsAClearError) {
  ScratchDir dir;
  regatta::testing::RunResult result =
      regatta::testing::RunProcess({regatta::testing::RegattaBinary(), "dh", "onvif", "--dir",
                                    dir.path(), "--probe-address", "239.255.255.250"},
                                   dir.path());
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--probe-address: '239.255.255.250' is not IPV4:PORT"),
            std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace regatta::devices::onvif
