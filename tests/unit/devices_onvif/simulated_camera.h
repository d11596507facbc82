#ifndef REGATTA_TESTS_UNIT_DEVICES_ONVIF_SIMULATED_CAMERA_H_
#define REGATTA_TESTS_UNIT_DEVICES_ONVIF_SIMULATED_CAMERA_H_

// A simulated ONVIF camera for tests, on loopback: it joins the WS-Discovery group on
// 127.0.0.1 and answers Probes for NetworkVideoTransmitters with a ProbeMatch, and serves a
// device service over HTTP (GetSystemDateAndTime; GetNetworkInterfaces, behind a
// WS-UsernameToken when a username is set). It can stop answering HTTP (liveness) or Probes.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"

namespace regatta::devices::onvif::testing {

struct SimulatedCameraOptions {
  std::string uuid;  // EndpointReference urn:uuid:<uuid>
  std::vector<std::string> scopes;
  // The device service binds here (any 127.x.y.z address is this host's loopback), so cameras
  // differ by IP; GetNetworkInterfaces reports `ip` (default: this address) and `mac`.
  std::string http_host = "127.0.0.1";
  std::string ip;
  std::string mac = "00:00:5e:00:53:01";
  // When set, GetNetworkInterfaces requires a UsernameToken with this user and password.
  std::string username;
  std::string password;
  // The WS-Discovery group and port to join (tests pick a free port so runs do not mix).
  std::string group = "239.255.255.250";
  int port = 3702;
};

class SimulatedCamera {
 public:
  static absl::StatusOr<std::unique_ptr<SimulatedCamera>> Start(SimulatedCameraOptions options);
  ~SimulatedCamera();

  // http://<http_host>:<port>/onvif/device_service
  const std::string& service_url() const { return service_url_; }
  const SimulatedCameraOptions& options() const { return options_; }

  // While false, HTTP connections are closed without a reply (Probes are still answered).
  void SetAnswering(bool answering) { answering_ = answering; }
  // While false, Probes are ignored.
  void SetDiscoverable(bool discoverable) { discoverable_ = discoverable; }

  int probes_answered() const { return probes_answered_; }
  int authorized_calls() const { return authorized_calls_; }
  int rejected_calls() const { return rejected_calls_; }

 private:
  explicit SimulatedCamera(SimulatedCameraOptions options) : options_(std::move(options)) {}
  void ServeProbes();
  void ServeHttp();
  std::string Respond(const std::string& body, int& status);

  SimulatedCameraOptions options_;
  std::string service_url_;
  int udp_fd_ = -1;
  int tcp_fd_ = -1;
  std::atomic<bool> stop_ = false;
  std::atomic<bool> answering_ = true;
  std::atomic<bool> discoverable_ = true;
  std::atomic<int> probes_answered_ = 0;
  std::atomic<int> authorized_calls_ = 0;
  std::atomic<int> rejected_calls_ = 0;
  std::thread udp_thread_;
  std::thread http_thread_;
};

// A UDP port free on this host now, for a test's WS-Discovery group.
int FreeUdpPort();

}  // namespace regatta::devices::onvif::testing

#endif  // REGATTA_TESTS_UNIT_DEVICES_ONVIF_SIMULATED_CAMERA_H_
