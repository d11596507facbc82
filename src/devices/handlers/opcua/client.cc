#include "src/devices/handlers/opcua/client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/common/status_macros.h"

namespace regatta::devices::opcua {
namespace {

constexpr char kScheme[] = "opc.tcp://";
// Part 6: neither side may announce buffers smaller than this.
constexpr uint32_t kMinBufferSize = 8192;
constexpr uint32_t kRequestedLifetimeMs = 60000;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
};

int MillisLeft(absl::Time deadline) {
  const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
  return ms <= 0 ? 0 : static_cast<int>(std::min<int64_t>(ms, 60'000));
}

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};

absl::StatusOr<std::unique_ptr<addrinfo, AddrInfoDeleter>> Resolve(const OpcTcpUrl& url) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* result = nullptr;
  const std::string port = absl::StrCat(url.port);
  const int rc = getaddrinfo(url.host.c_str(), port.c_str(), &hints, &result);
  if (rc != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve '", url.host, "': ", gai_strerror(rc)));
  }
  return std::unique_ptr<addrinfo, AddrInfoDeleter>(result);
}

// A non-blocking socket connected to one of the URL's addresses before `deadline`.
absl::StatusOr<int> Connect(const OpcTcpUrl& url, absl::Time deadline) {
  ASSIGN_OR_RETURN(auto addresses, Resolve(url));
  std::string last_error = "no address";
  for (addrinfo* a = addresses.get(); a != nullptr; a = a->ai_next) {
    Fd fd(socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    if (connect(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      if (errno != EINPROGRESS) {
        last_error = std::strerror(errno);
        continue;
      }
      pollfd p{fd.get(), POLLOUT, 0};
      const int ready = poll(&p, 1, MillisLeft(deadline));
      if (ready <= 0) {
        last_error = ready == 0 ? "connection timed out" : std::strerror(errno);
        continue;
      }
      int error = 0;
      socklen_t length = sizeof(error);
      getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &length);
      if (error != 0) {
        last_error = std::strerror(error);
        continue;
      }
    }
    return fd.release();
  }
  return absl::UnavailableError(
      absl::StrCat("cannot connect to ", url.host, ":", url.port, ": ", last_error));
}

// One connection's exchange, all waits bounded by `deadline`.
class Connection {
 public:
  Connection(int fd, absl::Time deadline, const TcpClientOptions& options)
      : fd_(fd), deadline_(deadline), options_(options) {}

  absl::Status Send(absl::string_view bytes) {
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = send(fd_.get(), bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
        continue;
      }
      if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
      }
      RETURN_IF_ERROR(Wait(POLLOUT));
    }
    return absl::OkStatus();
  }

  // One whole chunk (header included). An ERR message becomes an error.
  absl::StatusOr<std::string> ReceiveChunk() {
    std::string chunk;
    RETURN_IF_ERROR(ReceiveExactly(kMessageHeaderSize, &chunk));
    ASSIGN_OR_RETURN(MessageHeader header, DecodeMessageHeader(chunk));
    if (header.size > options_.receive_buffer_size) {
      return absl::InvalidArgumentError(absl::StrCat("the server sent a ", header.size,
                                                     "-byte chunk; we announced at most ",
                                                     options_.receive_buffer_size));
    }
    RETURN_IF_ERROR(ReceiveExactly(header.size - kMessageHeaderSize, &chunk));
    if (header.type == "ERR") {
      ASSIGN_OR_RETURN(ErrorMessage error, DecodeError(chunk));
      return absl::UnavailableError(
          absl::StrCat("the server answered with an error: ", StatusCodeName(error.error),
                       error.reason.empty() ? "" : " ", error.reason));
    }
    return chunk;
  }

 private:
  absl::Status Wait(short events) {
    pollfd p{fd_.get(), events, 0};
    const int ready = poll(&p, 1, MillisLeft(deadline_));
    if (ready < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("poll: ", std::strerror(errno)));
    }
    if (ready == 0) return absl::DeadlineExceededError("the server did not answer in time");
    return absl::OkStatus();
  }

  absl::Status ReceiveExactly(size_t n, std::string* out) {
    const size_t target = out->size() + n;
    char buffer[16384];
    while (out->size() < target) {
      const size_t want = std::min(sizeof(buffer), target - out->size());
      const ssize_t got = recv(fd_.get(), buffer, want, 0);
      if (got > 0) {
        out->append(buffer, static_cast<size_t>(got));
        continue;
      }
      if (got == 0) return absl::UnavailableError("the server closed the connection");
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
      }
      RETURN_IF_ERROR(Wait(POLLIN));
    }
    return absl::OkStatus();
  }

  Fd fd_;
  const absl::Time deadline_;
  const TcpClientOptions& options_;
};

absl::StatusOr<std::vector<ApplicationDescription>> Exchange(Connection& connection,
                                                             absl::string_view discovery_url,
                                                             const TcpClientOptions& options) {
  HelloMessage hello;
  hello.receive_buffer_size = options.receive_buffer_size;
  hello.send_buffer_size = options.receive_buffer_size;
  hello.max_message_size = options.max_message_size;
  hello.max_chunk_count = options.max_chunk_count;
  hello.endpoint_url = std::string(discovery_url);
  RETURN_IF_ERROR(connection.Send(EncodeHello(hello)));
  ASSIGN_OR_RETURN(std::string ack_chunk, connection.ReceiveChunk());
  ASSIGN_OR_RETURN(AcknowledgeMessage ack, DecodeAcknowledge(ack_chunk));
  if (ack.receive_buffer_size < kMinBufferSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("ACK receiveBufferSize ", ack.receive_buffer_size, " is below 8192"));
  }
  const int64_t now = ToOpcUaDateTime(absl::Now());
  const auto timeout_hint =
      static_cast<uint32_t>(absl::ToInt64Milliseconds(options.exchange_timeout));

  OpenSecureChannelRequest open;
  open.frame.sequence_number = 1;
  open.frame.request_id = 1;
  open.header = {now, 1, timeout_hint};
  open.requested_lifetime_ms = kRequestedLifetimeMs;
  // Our requests are far below the 8192-byte minimum every server accepts.
  RETURN_IF_ERROR(connection.Send(EncodeOpenSecureChannelRequest(open)));
  ASSIGN_OR_RETURN(std::string opn_chunk, connection.ReceiveChunk());
  ASSIGN_OR_RETURN(OpenSecureChannelResponse opened, DecodeOpenSecureChannelResponse(opn_chunk));
  if (opened.frame.request_id != open.frame.request_id) {
    return absl::InvalidArgumentError("OpenSecureChannel: the response answers another request");
  }

  MessageChunk find;
  find.frame.secure_channel_id = opened.channel_id;
  find.frame.token_id = opened.token_id;
  find.frame.sequence_number = 2;
  find.frame.request_id = 2;
  FindServersRequest find_request;
  find_request.header = {now, 2, timeout_hint};
  find_request.endpoint_url = std::string(discovery_url);
  find.body = EncodeFindServersRequest(find_request);
  RETURN_IF_ERROR(connection.Send(EncodeMessageChunk(find)));

  std::string body;
  for (uint32_t chunks = 1;; ++chunks) {
    ASSIGN_OR_RETURN(std::string raw, connection.ReceiveChunk());
    ASSIGN_OR_RETURN(MessageChunk chunk, DecodeMessageChunk(raw));
    if (chunk.frame.request_id != find.frame.request_id) {
      return absl::InvalidArgumentError("FindServers: the response answers another request");
    }
    if (chunk.frame.chunk_type == 'A') {
      return absl::UnavailableError("FindServers: the server aborted the response");
    }
    body += chunk.body;
    if (body.size() > options.max_message_size || chunks > options.max_chunk_count) {
      return absl::InvalidArgumentError(
          "FindServers: the response exceeds the message size or chunk count we announced");
    }
    if (chunk.frame.chunk_type == 'F') break;
  }
  ASSIGN_OR_RETURN(FindServersResponse response, DecodeFindServersResponse(body));

  CloseSecureChannelRequest close_request;
  close_request.frame = find.frame;
  close_request.frame.sequence_number = 3;
  close_request.frame.request_id = 3;
  close_request.header = {now, 3, timeout_hint};
  // The server answers CLO by closing the socket; a failure here changes nothing.
  (void)connection.Send(EncodeCloseSecureChannelRequest(close_request));
  return std::move(response.servers);
}

}  // namespace

absl::StatusOr<OpcTcpUrl> ParseOpcTcpUrl(absl::string_view url) {
  // It travels in HEL, whose endpointUrl Part 6 caps at 4096 bytes.
  if (url.size() > 4096) return absl::InvalidArgumentError("URL longer than 4096 bytes");
  if (!absl::StartsWithIgnoreCase(url, kScheme)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", url, "' is not an opc.tcp:// URL (e.g. opc.tcp://10.0.0.5:4840/)"));
  }
  absl::string_view rest = url.substr(sizeof(kScheme) - 1);
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  OpcTcpUrl out;
  out.path = slash == absl::string_view::npos ? "" : std::string(rest.substr(slash));
  if (absl::StrContains(authority, '@')) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "': user information is not allowed"));
  }
  absl::string_view port_text;
  if (absl::StartsWith(authority, "[")) {
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos || close + 1 >= authority.size() ||
        authority[close + 1] != ':') {
      return absl::InvalidArgumentError(absl::StrCat("'", url, "': missing port"));
    }
    out.host = std::string(authority.substr(1, close - 1));
    port_text = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    if (colon == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", url, "': missing port"));
    }
    out.host = std::string(authority.substr(0, colon));
    port_text = authority.substr(colon + 1);
  }
  if (out.host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "': missing host"));
  }
  uint32_t port = 0;
  if (port_text.empty() || !absl::c_all_of(port_text, absl::ascii_isdigit) ||
      !absl::SimpleAtoi(port_text, &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "': bad port '", port_text, "'"));
  }
  out.port = static_cast<uint16_t>(port);
  return out;
}

absl::StatusOr<std::vector<ApplicationDescription>> TcpDiscoveryClient::FindServers(
    absl::string_view discovery_url) {
  ASSIGN_OR_RETURN(OpcTcpUrl url, ParseOpcTcpUrl(discovery_url));
  ASSIGN_OR_RETURN(int fd, Connect(url, absl::Now() + options_.connect_timeout));
  Connection connection(fd, absl::Now() + options_.exchange_timeout, options_);
  return Exchange(connection, discovery_url, options_);
}

bool TcpDiscoveryClient::Reachable(absl::string_view discovery_url) {
  absl::StatusOr<OpcTcpUrl> url = ParseOpcTcpUrl(discovery_url);
  if (!url.ok()) return false;
  absl::StatusOr<int> fd = Connect(*url, absl::Now() + options_.connect_timeout);
  if (!fd.ok()) return false;
  close(*fd);
  return true;
}

bool TcpDiscoveryClient::Resolves(absl::string_view host) {
  OpcTcpUrl url;
  url.host = std::string(host);
  url.port = 4840;
  return Resolve(url).ok();
}

}  // namespace regatta::devices::opcua
