// TcpDiscoveryClient against a scripted OPC UA server on a loopback socket (the codec plays the
// server), so the exchange, chunking, errors and timeouts are checked without node-opcua.

#include "src/devices/handlers/opcua/client.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/devices_opcua/test_ports.h"

namespace regatta::devices::opcua {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Reads one chunk from `fd` (blocking); "" when the peer closed.
std::string ReadChunk(int fd) {
  std::string chunk(kMessageHeaderSize, '\0');
  size_t have = 0;
  auto fill = [&](size_t target) {
    while (have < target) {
      const ssize_t n = recv(fd, chunk.data() + have, target - have, 0);
      if (n <= 0) return false;
      have += static_cast<size_t>(n);
    }
    return true;
  };
  if (!fill(kMessageHeaderSize)) return "";
  absl::StatusOr<MessageHeader> header = DecodeMessageHeader(chunk);
  if (!header.ok()) return "";
  chunk.resize(header->size);
  if (!fill(header->size)) return "";
  return chunk;
}

void Write(int fd, const std::string& bytes) {
  (void)send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
}

// Accepts one connection on 127.0.0.1 and runs `script` on it.
class ScriptedServer {
 public:
  explicit ScriptedServer(std::function<void(int fd, ScriptedServer& self)> script) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    socklen_t length = sizeof(addr);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &length);
    port_ = ntohs(addr.sin_port);
    listen(listen_fd_, 4);
    thread_ = std::thread([this, script = std::move(script)] {
      const int fd = accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) return;
      script(fd, *this);
      // Hold the connection until the client is done with it.
      done_.WaitForNotificationWithTimeout(absl::Seconds(10));
      close(fd);
    });
  }
  ~ScriptedServer() {
    done_.Notify();
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  std::string url() const { return absl::StrCat("opc.tcp://127.0.0.1:", port_, "/"); }
  // What the script saw, in order.
  void Record(absl::string_view event) {
    absl::MutexLock lock(&mu_);
    absl::StrAppend(&seen_, event, ";");
  }
  // Waits until `part` was recorded; returns everything recorded.
  std::string WaitForSeen(absl::string_view part) {
    absl::MutexLock lock(&mu_);
    auto has = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return absl::StrContains(seen_, part); };
    mu_.AwaitWithTimeout(absl::Condition(&has), absl::Seconds(5));
    return seen_;
  }

 private:
  absl::Mutex mu_;
  std::string seen_ ABSL_GUARDED_BY(mu_);
  int listen_fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  absl::Notification done_;
};

ApplicationDescription App(const std::string& name, const std::string& url) {
  ApplicationDescription app;
  app.application_name.text = name;
  app.discovery_urls = {url};
  return app;
}

// Answers HEL and OPN as a server would; returns the FindServers request's MSG chunk.
MessageChunk Handshake(int fd, ScriptedServer& server) {
  absl::StatusOr<HelloMessage> hello = DecodeHello(ReadChunk(fd));
  if (hello.ok()) server.Record(absl::StrCat("HEL ", hello->endpoint_url));
  AcknowledgeMessage ack;
  ack.receive_buffer_size = 65536;
  ack.send_buffer_size = 65536;
  Write(fd, EncodeAcknowledge(ack));
  absl::StatusOr<OpenSecureChannelRequest> open = DecodeOpenSecureChannelRequest(ReadChunk(fd));
  if (open.ok()) server.Record(absl::StrCat("OPN mode ", open->security_mode));
  OpenSecureChannelResponse opened;
  opened.frame.secure_channel_id = 77;
  opened.frame.sequence_number = 1;
  opened.frame.request_id = open.ok() ? open->frame.request_id : 0;
  opened.channel_id = 77;
  opened.token_id = 5;
  Write(fd, EncodeOpenSecureChannelResponse(opened));
  absl::StatusOr<MessageChunk> msg = DecodeMessageChunk(ReadChunk(fd));
  if (!msg.ok()) return {};
  absl::StatusOr<FindServersRequest> find = DecodeFindServersRequest(msg->body);
  server.Record(absl::StrCat("MSG channel ", msg->frame.secure_channel_id, " token ",
                             msg->frame.token_id, " ", find.ok() ? find->endpoint_url : "?"));
  return *msg;
}

TEST(OpcuaClientTest, FindServersRunsTheWholeExchangeAndClosesTheChannel) {
  ScriptedServer server([](int fd, ScriptedServer& self) {
    MessageChunk request = Handshake(fd, self);
    FindServersResponse response;
    response.servers = {App("Boiler", "opc.tcp://127.0.0.1:4855/"),
                        App("Pump", "opc.tcp://127.0.0.1:4856/")};
    MessageChunk reply;
    reply.frame = {'F', 77, 5, 2, request.frame.request_id};
    reply.body = EncodeFindServersResponse(response);
    Write(fd, EncodeMessageChunk(reply));
    absl::StatusOr<CloseSecureChannelRequest> close =
        DecodeCloseSecureChannelRequest(ReadChunk(fd));
    if (close.ok()) self.Record("CLO");
  });
  TcpDiscoveryClient client;
  absl::StatusOr<std::vector<ApplicationDescription>> found = client.FindServers(server.url());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 2u);
  EXPECT_EQ((*found)[1].application_name.text, "Pump");
  EXPECT_THAT((*found)[1].discovery_urls, ElementsAre("opc.tcp://127.0.0.1:4856/"));
  // The CLO arrives after FindServers returned.
  EXPECT_EQ(server.WaitForSeen("CLO;"),
            absl::StrCat("HEL ", server.url(), ";OPN mode 1;MSG channel 77 token 5 ", server.url(),
                         ";CLO;"));
}

TEST(OpcuaClientTest, ReassemblesAResponseSentInSeveralChunks) {
  ScriptedServer server([](int fd, ScriptedServer& self) {
    MessageChunk request = Handshake(fd, self);
    FindServersResponse response;
    response.servers = {App("Boiler", "opc.tcp://127.0.0.1:4855/")};
    const std::string body = EncodeFindServersResponse(response);
    const size_t half = body.size() / 2;
    Write(fd,
          EncodeMessageChunk({{'C', 77, 5, 2, request.frame.request_id}, body.substr(0, half)}));
    Write(fd, EncodeMessageChunk({{'F', 77, 5, 3, request.frame.request_id}, body.substr(half)}));
  });
  TcpDiscoveryClient client;
  absl::StatusOr<std::vector<ApplicationDescription>> found = client.FindServers(server.url());
  ASSERT_TRUE(found.ok()) << found.status();
  ASSERT_EQ(found->size(), 1u);
  EXPECT_EQ((*found)[0].application_name.text, "Boiler");
}

TEST(OpcuaClientTest, AnErrMessageBecomesAnErrorWithItsCodeAndReason) {
  ScriptedServer server([](int fd, ScriptedServer&) {
    (void)ReadChunk(fd);
    Write(fd, EncodeError({0x80830000, "no such endpoint"}));
  });
  TcpDiscoveryClient client;
  absl::Status status = client.FindServers(server.url()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(),
              HasSubstr("BadTcpEndpointUrlInvalid (0x80830000) no such endpoint"));
}

TEST(OpcuaClientTest, ASilentServerTimesOutAndAnOversizedChunkIsRefused) {
  {
    ScriptedServer server([](int fd, ScriptedServer&) { (void)ReadChunk(fd); });
    TcpDiscoveryClient client({.exchange_timeout = absl::Milliseconds(200)});
    const absl::Time start = absl::Now();
    absl::Status status = client.FindServers(server.url()).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
    EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  }
  {
    ScriptedServer server([](int fd, ScriptedServer&) {
      (void)ReadChunk(fd);
      std::string ack = EncodeAcknowledge({});
      ack[4] = 0;
      ack[5] = 0;
      ack[6] = 0x10;  // announces a 1 MiB chunk
      Write(fd, ack);
    });
    TcpDiscoveryClient client;
    EXPECT_THAT(client.FindServers(server.url()).status().message(),
                HasSubstr("1048576-byte chunk"));
  }
  {
    ScriptedServer server([](int fd, ScriptedServer&) {
      (void)ReadChunk(fd);
      Write(fd, "garbage!garbage!");
    });
    TcpDiscoveryClient client;
    EXPECT_THAT(client.FindServers(server.url()).status().message(),
                HasSubstr("unknown message type"));
  }
}

TEST(OpcuaClientTest, NothingListeningIsUnavailableAndUnreachable) {
  const std::string url = absl::StrCat("opc.tcp://127.0.0.1:", testing::UnusedLoopbackPort());
  TcpDiscoveryClient client;
  absl::Status status = client.FindServers(url).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("cannot connect"));
  EXPECT_FALSE(client.Reachable(url));
  EXPECT_TRUE(client.Resolves("localhost"));
  EXPECT_FALSE(client.Resolves("no-such-host.invalid"));
}

}  // namespace
}  // namespace regatta::devices::opcua
