#include "tests/unit/devices_onvif/simulated_camera.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/devices/handlers/onvif/soap.h"
#include "src/devices/handlers/onvif/ws_discovery.h"
#include "src/devices/handlers/onvif/xml.h"

namespace regatta::devices::onvif::testing {
namespace {

absl::Status Errno(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

std::string Envelope(absl::string_view body) {
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<env:Envelope xmlns:env=\"http://www.w3.org/2003/05/soap-envelope\" "
      "xmlns:tds=\"http://www.onvif.org/ver10/device/wsdl\" "
      "xmlns:tt=\"http://www.onvif.org/ver10/schema\" "
      "xmlns:ter=\"http://www.onvif.org/ver10/error\"><env:Body>",
      body, "</env:Body></env:Envelope>");
}

std::string Fault(absl::string_view subcode, absl::string_view reason) {
  return Envelope(absl::StrCat(
      "<env:Fault><env:Code><env:Value>env:Sender</env:Value><env:Subcode><env:Value>", subcode,
      "</env:Value></env:Subcode></env:Code><env:Reason><env:Text xml:lang=\"en\">", reason,
      "</env:Text></env:Reason></env:Fault>"));
}

// Waits up to 50 ms for `fd` to be readable, so loops notice a stop.
bool Readable(int fd) {
  pollfd ready{fd, POLLIN, 0};
  return poll(&ready, 1, 50) > 0;
}

// Reads one HTTP request (headers and a Content-Length body); false on a broken request.
bool ReadRequest(int fd, std::string& body) {
  std::string data;
  char chunk[4096];
  size_t header_end = std::string::npos;
  size_t content_length = 0;
  for (int idle = 0; idle < 40;) {  // up to ~2 s without data
    if (header_end != std::string::npos && data.size() >= header_end + 4 + content_length) break;
    if (!Readable(fd)) {
      ++idle;
      continue;
    }
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    data.append(chunk, static_cast<size_t>(n));
    if (header_end == std::string::npos) {
      header_end = data.find("\r\n\r\n");
      if (header_end != std::string::npos) {
        std::string headers = absl::AsciiStrToLower(data.substr(0, header_end));
        size_t at = headers.find("content-length:");
        if (at != std::string::npos) {
          size_t end = headers.find("\r\n", at);
          absl::SimpleAtoi(absl::StripAsciiWhitespace(headers.substr(at + 15, end - at - 15)),
                           &content_length);
        }
      }
    }
  }
  if (header_end == std::string::npos || data.size() < header_end + 4 + content_length) {
    return false;
  }
  body = data.substr(header_end + 4, content_length);
  return true;
}

void WriteAll(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace

int FreeUdpPort() {
  int fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  close(fd);
  return ntohs(address.sin_port);
}

absl::StatusOr<std::unique_ptr<SimulatedCamera>> SimulatedCamera::Start(
    SimulatedCameraOptions options) {
  if (options.ip.empty()) options.ip = options.http_host;
  std::unique_ptr<SimulatedCamera> camera(new SimulatedCamera(std::move(options)));
  const SimulatedCameraOptions& o = camera->options_;

  // WS-Discovery: the group's port on every address, member of the group on loopback.
  camera->udp_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (camera->udp_fd_ < 0) return Errno("udp socket");
  const int on = 1;
  setsockopt(camera->udp_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(static_cast<uint16_t>(o.port));
  any.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(camera->udp_fd_, reinterpret_cast<sockaddr*>(&any), sizeof(any)) != 0) {
    return Errno(absl::StrCat("bind udp port ", o.port));
  }
  ip_mreq membership{};
  inet_pton(AF_INET, o.group.c_str(), &membership.imr_multiaddr);
  inet_pton(AF_INET, "127.0.0.1", &membership.imr_interface);
  if (setsockopt(camera->udp_fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &membership, sizeof(membership)) !=
      0) {
    return Errno(absl::StrCat("join ", o.group, " on 127.0.0.1"));
  }

  // The device service.
  camera->tcp_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (camera->tcp_fd_ < 0) return Errno("tcp socket");
  setsockopt(camera->tcp_fd_, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
  sockaddr_in http{};
  http.sin_family = AF_INET;
  if (inet_pton(AF_INET, o.http_host.c_str(), &http.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("http_host '", o.http_host, "'"));
  }
  if (bind(camera->tcp_fd_, reinterpret_cast<sockaddr*>(&http), sizeof(http)) != 0 ||
      listen(camera->tcp_fd_, 64) != 0) {
    return Errno(absl::StrCat("listen on ", o.http_host));
  }
  socklen_t length = sizeof(http);
  getsockname(camera->tcp_fd_, reinterpret_cast<sockaddr*>(&http), &length);
  camera->service_url_ =
      absl::StrCat("http://", o.http_host, ":", ntohs(http.sin_port), "/onvif/device_service");

  camera->udp_thread_ = std::thread([c = camera.get()] { c->ServeProbes(); });
  camera->http_thread_ = std::thread([c = camera.get()] { c->ServeHttp(); });
  return camera;
}

SimulatedCamera::~SimulatedCamera() {
  stop_ = true;
  if (udp_thread_.joinable()) udp_thread_.join();
  if (http_thread_.joinable()) http_thread_.join();
  if (udp_fd_ >= 0) close(udp_fd_);
  if (tcp_fd_ >= 0) close(tcp_fd_);
}

void SimulatedCamera::ServeProbes() {
  std::string buffer(64 * 1024, '\0');
  while (!stop_) {
    if (!Readable(udp_fd_)) continue;
    sockaddr_in from{};
    socklen_t from_length = sizeof(from);
    ssize_t n = recvfrom(udp_fd_, buffer.data(), buffer.size(), 0,
                         reinterpret_cast<sockaddr*>(&from), &from_length);
    if (n <= 0 || !discoverable_) continue;
    absl::StatusOr<Probe> probe = ParseProbe(absl::string_view(buffer.data(), n));
    if (!probe.ok()) continue;
    bool wanted = probe->types.empty();
    for (const std::string& type : probe->types) wanted |= type == kNetworkVideoTransmitter;
    if (!wanted) continue;
    ProbeMatch match;
    match.endpoint_address = absl::StrCat("urn:uuid:", options_.uuid);
    match.scopes = options_.scopes;
    match.xaddrs = {service_url_};
    const std::string reply = ProbeMatchesMessage(NewMessageId(), probe->message_id, match);
    sendto(udp_fd_, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), from_length);
    ++probes_answered_;
  }
}

void SimulatedCamera::ServeHttp() {
  while (!stop_) {
    if (!Readable(tcp_fd_)) continue;
    int client = accept4(tcp_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::string body;
    if (answering_ && ReadRequest(client, body) && answering_) {
      int status = 200;
      const std::string reply = Respond(body, status);
      WriteAll(client, absl::StrCat("HTTP/1.1 ", status, status == 200 ? " OK" : " Bad Request",
                                    "\r\nContent-Type: application/soap+xml; charset=utf-8"
                                    "\r\nContent-Length: ",
                                    reply.size(), "\r\nConnection: close\r\n\r\n", reply));
    }
    close(client);
  }
}

std::string SimulatedCamera::Respond(const std::string& body, int& status) {
  status = 400;
  absl::StatusOr<XmlDocument> doc = XmlDocument::Parse(body);
  if (!doc.ok()) return Fault("ter:WellFormed", "not XML");
  std::optional<XmlElement> soap_body = doc->Root().Child("Body");
  std::vector<XmlElement> operations;
  if (soap_body.has_value()) {
    for (absl::string_view name : {kGetSystemDateAndTime, kGetNetworkInterfaces}) {
      for (XmlElement& e : soap_body->Children(name)) operations.push_back(e);
    }
  }
  if (operations.empty()) return Fault("ter:ActionNotSupported", "unknown operation");
  const std::string operation = operations[0].LocalName();
  if (operation == kGetSystemDateAndTime) {
    status = 200;
    return Envelope(
        "<tds:GetSystemDateAndTimeResponse><tds:SystemDateAndTime>"
        "<tt:DateTimeType>NTP</tt:DateTimeType><tt:DaylightSavings>false</tt:DaylightSavings>"
        "<tt:UTCDateTime><tt:Time><tt:Hour>2</tt:Hour><tt:Minute>0</tt:Minute>"
        "<tt:Second>0</tt:Second></tt:Time><tt:Date><tt:Year>2026</tt:Year><tt:Month>11"
        "</tt:Month><tt:Day>30</tt:Day></tt:Date></tt:UTCDateTime>"
        "</tds:SystemDateAndTime></tds:GetSystemDateAndTimeResponse>");
  }
  // GetNetworkInterfaces: authenticated when the camera has a user.
  if (!options_.username.empty()) {
    std::vector<XmlElement> tokens = doc->Root().Descendants("UsernameToken");
    bool ok = false;
    if (!tokens.empty()) {
      auto text = [&](absl::string_view name) {
        std::optional<XmlElement> e = tokens[0].Child(name);
        return e.has_value() ? std::string(absl::StripAsciiWhitespace(e->Text())) : "";
      };
      std::string nonce;
      ok = text("Username") == options_.username && absl::Base64Unescape(text("Nonce"), &nonce) &&
           PasswordDigest(nonce, text("Created"), options_.password) == text("Password");
    }
    if (!ok) {
      ++rejected_calls_;
      return Fault("ter:NotAuthorized", "Sender not Authorized");
    }
    ++authorized_calls_;
  }
  status = 200;
  return Envelope(absl::StrCat(
      "<tds:GetNetworkInterfacesResponse><tds:NetworkInterfaces token=\"eth0\">"
      "<tt:Enabled>true</tt:Enabled><tt:Info><tt:Name>eth0</tt:Name><tt:HwAddress>",
      options_.mac,
      "</tt:HwAddress><tt:MTU>1500</tt:MTU></tt:Info><tt:IPv4><tt:Enabled>true</tt:Enabled>"
      "<tt:Config><tt:Manual><tt:Address>",
      options_.ip,
      "</tt:Address><tt:PrefixLength>24</tt:PrefixLength></tt:Manual><tt:DHCP>false</tt:DHCP>"
      "</tt:Config></tt:IPv4></tds:NetworkInterfaces></tds:GetNetworkInterfacesResponse>"));
}

}  // namespace regatta::devices::onvif::testing
