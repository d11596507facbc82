#include "src/devices/handlers/onvif/ws_discovery.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <openssl/rand.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "src/common/logging.h"

namespace regatta::devices::onvif {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::UnavailableError(absl::StrCat(what, ": ", std::strerror(errno)));
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::string NewMessageId() {
  unsigned char b[16];
  RAND_bytes(b, sizeof(b));
  b[6] = (b[6] & 0x0f) | 0x40;  // version 4
  b[8] = (b[8] & 0x3f) | 0x80;  // RFC 4122 variant
  return absl::StrFormat(
      "urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
      b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

absl::Status ParseProbeAddress(absl::string_view flag, absl::string_view text,
                               ProbeOptions& options) {
  size_t colon = text.rfind(':');
  int port = 0;
  in_addr ignored;
  const std::string address(text.substr(0, colon));
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(text.substr(colon + 1), &port) ||
      port < 1 || port > 65535 || inet_pton(AF_INET, address.c_str(), &ignored) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(flag, ": '", text, "' is not IPV4:PORT, e.g. ",
                                                   kWsDiscoveryGroup, ":", kWsDiscoveryPort));
  }
  options.address = address;
  options.port = port;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ProbeMatch>> ProbeCameras(const ProbeOptions& options,
                                                     absl::Duration timeout) {
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(options.port));
  if (inet_pton(AF_INET, options.address.c_str(), &target.sin_addr) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("probe address '", options.address, "' is not an IPv4 address"));
  }
  Fd socket_fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (socket_fd.get() < 0) return Errno("WS-Discovery socket");
  const int fd = socket_fd.get();
  if (!options.interface.empty()) {
    in_addr interface {};
    if (inet_pton(AF_INET, options.interface.c_str(), &interface) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("interface '", options.interface, "' is not an IPv4 address"));
    }
    if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &interface, sizeof(interface)) != 0) {
      return Errno(absl::StrCat("IP_MULTICAST_IF ", options.interface));
    }
  }
  // Cameras on this host (and the tests' simulated ones) must hear the Probe too.
  const unsigned char loop = 1;
  setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof(loop));
  const unsigned char ttl = 1;  // WS-Discovery stays on the local link
  setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof(ttl));

  const std::string message_id = NewMessageId();
  const std::string probe = ProbeMessage(message_id);
  if (sendto(fd, probe.data(), probe.size(), 0, reinterpret_cast<const sockaddr*>(&target),
             sizeof(target)) < 0) {
    return Errno(
        absl::StrCat("send the WS-Discovery Probe to ", options.address, ":", options.port));
  }

  std::vector<ProbeMatch> found;
  const absl::Time deadline = absl::Now() + timeout;
  std::string buffer(64 * 1024, '\0');
  while (true) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) break;
    pollfd ready{fd, POLLIN, 0};
    int polled = poll(&ready, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (polled < 0 && errno == EINTR) continue;
    if (polled < 0) return Errno("wait for ProbeMatches");
    if (polled == 0) continue;  // the loop ends at the deadline
    sockaddr_in from{};
    socklen_t from_length = sizeof(from);
    ssize_t length = recvfrom(fd, buffer.data(), buffer.size(), 0,
                              reinterpret_cast<sockaddr*>(&from), &from_length);
    if (length < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Errno("receive ProbeMatches");
    }
    char sender[INET_ADDRSTRLEN] = "";
    inet_ntop(AF_INET, &from.sin_addr, sender, sizeof(sender));
    absl::StatusOr<ProbeMatches> matches =
        ParseProbeMatches(absl::string_view(buffer.data(), static_cast<size_t>(length)));
    if (!matches.ok()) {
      LOG_INFO("skipped a WS-Discovery reply", "from", sender, "error", matches.status().message());
      continue;
    }
    if (!matches->relates_to.empty() && matches->relates_to != message_id) continue;
    for (ProbeMatch& match : matches->matches) found.push_back(std::move(match));
  }
  return found;
}

}  // namespace regatta::devices::onvif
