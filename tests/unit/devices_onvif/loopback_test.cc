// WS-Discovery and SOAP against simulated cameras on loopback (multicast on 127.0.0.1).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/devices/handlers/onvif/discovery.h"
#include "src/devices/handlers/onvif/http_client.h"
#include "src/devices/handlers/onvif/ws_discovery.h"
#include "tests/unit/devices_onvif/simulated_camera.h"

namespace regatta::devices::onvif {
namespace {

using testing::FreeUdpPort;
using ::testing::HasSubstr;
using testing::SimulatedCamera;
using testing::SimulatedCameraOptions;
using ::testing::UnorderedElementsAre;

std::unique_ptr<SimulatedCamera> StartCamera(SimulatedCameraOptions options) {
  absl::StatusOr<std::unique_ptr<SimulatedCamera>> camera = SimulatedCamera::Start(options);
  EXPECT_TRUE(camera.ok()) << camera.status();
  return camera.ok() ? *std::move(camera) : nullptr;
}

ProbeOptions LoopbackProbe(int port) {
  ProbeOptions probe;
  probe.port = port;
  probe.interface = "127.0.0.1";
  return probe;
}

TEST(OnvifLoopbackTest, AProbeFindsEveryDiscoverableCameraOnTheGroup) {
  const int port = FreeUdpPort();
  auto a = StartCamera({.uuid = "3fa1fe68-b915-4053-a3e1-a8294833fe3c",
                        .scopes = {"onvif://www.onvif.org/name/A"},
                        .http_host = "127.0.0.2",
                        .port = port});
  auto b = StartCamera({.uuid = "C0FFEE00-0000-4000-8000-000000000002",
                        .scopes = {"onvif://www.onvif.org/name/B"},
                        .http_host = "127.0.0.3",
                        .port = port});
  auto hidden = StartCamera(
      {.uuid = "dead0000-0000-4000-8000-000000000003", .http_host = "127.0.0.4", .port = port});
  ASSERT_TRUE(a && b && hidden);
  hidden->SetDiscoverable(false);

  absl::StatusOr<std::vector<ProbeMatch>> matches =
      ProbeCameras(LoopbackProbe(port), absl::Milliseconds(500));
  ASSERT_TRUE(matches.ok()) << matches.status();
  std::vector<std::string> found;
  for (const ProbeMatch& match : *matches) {
    ASSERT_EQ(match.xaddrs.size(), 1u);
    found.push_back(match.uuid + " " + match.xaddrs[0] + " " + match.scopes.at(0));
  }
  EXPECT_THAT(found, UnorderedElementsAre("3fa1fe68-b915-4053-a3e1-a8294833fe3c " +
                                              a->service_url() + " onvif://www.onvif.org/name/A",
                                          "c0ffee00-0000-4000-8000-000000000002 " +
                                              b->service_url() + " onvif://www.onvif.org/name/B"));
  EXPECT_EQ(hidden->probes_answered(), 0);
}

TEST(OnvifLoopbackTest, NoCameraNoMatchesAfterTheTimeout) {
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<ProbeMatch>> matches =
      ProbeCameras(LoopbackProbe(FreeUdpPort()), absl::Milliseconds(200));
  ASSERT_TRUE(matches.ok()) << matches.status();
  EXPECT_TRUE(matches->empty());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
}

TEST(OnvifLoopbackTest, LivenessAndAddressesOverHttpWithAUsernameToken) {
  auto camera = StartCamera({.uuid = "3fa1fe68-b915-4053-a3e1-a8294833fe3c",
                             .http_host = "127.0.0.5",
                             .ip = "192.168.7.5",
                             .mac = "00:0f:7c:aa:bb:cc",
                             .username = "admin",
                             .password = "s3cret",
                             .port = FreeUdpPort()});
  ASSERT_TRUE(camera);
  FakeClock clock;
  NetworkOptions options;
  options.http_timeout = absl::Seconds(2);
  UdpHttpNetwork network(options, &clock);

  EXPECT_TRUE(network.CheckResponding(camera->service_url()).ok());
  absl::StatusOr<IpAndMac> addresses =
      network.GetIpAndMac(camera->service_url(), Credential{"admin", "s3cret"});
  ASSERT_TRUE(addresses.ok()) << addresses.status();
  EXPECT_EQ(addresses->ip, "192.168.7.5");
  EXPECT_EQ(addresses->mac, "00:0f:7c:aa:bb:cc");
  EXPECT_EQ(camera->authorized_calls(), 1);

  absl::Status wrong =
      network.GetIpAndMac(camera->service_url(), Credential{"admin", "guess"}).status();
  EXPECT_THAT(wrong.message(), HasSubstr("NotAuthorized"));
  EXPECT_FALSE(network.GetIpAndMac(camera->service_url(), std::nullopt).ok());
  EXPECT_EQ(camera->rejected_calls(), 2);

  camera->SetAnswering(false);
  absl::Status silent = network.CheckResponding(camera->service_url());
  EXPECT_EQ(silent.code(), absl::StatusCode::kUnavailable) << silent;
  camera->SetAnswering(true);
  EXPECT_TRUE(network.CheckResponding(camera->service_url()).ok());
}

TEST(OnvifLoopbackTest, ACameraThatAcceptsButNeverRepliesTimesOut) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &address.sin_addr);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  ASSERT_EQ(listen(fd, 4), 0);  // the kernel completes connections nobody reads
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  const std::string url = "http://127.0.0.1:" + std::to_string(ntohs(address.sin_port)) + "/";
  const absl::Time start = absl::Now();
  absl::StatusOr<std::string> reply =
      PostSoap(url, DeviceAction(kGetSystemDateAndTime), DeviceRequest(kGetSystemDateAndTime),
               absl::Milliseconds(300));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(), HasSubstr("no reply within 300ms"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(2));
  close(fd);
}

TEST(OnvifLoopbackTest, NobodyListeningIsUnavailable) {
  absl::StatusOr<std::string> reply =
      PostSoap("http://127.0.0.1:1/onvif/device_service", "a", "<x/>", absl::Seconds(1));
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(reply.status().message(), HasSubstr("could not connect"));
}

}  // namespace
}  // namespace regatta::devices::onvif
