#ifndef REGATTA_TESTS_INTEGRATION_PASSWORD_LIMITS_FIXTURE_H_
#define REGATTA_TESTS_INTEGRATION_PASSWORD_LIMITS_FIXTURE_H_

// The server in-process with one user whose password hash has the cost the test picks, and
// a helper to call it over HTTP from a chosen loopback address.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/api/auth/password.h"
#include "src/api/auth/principal.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::testing {

inline std::string Basic(const std::string& user, const std::string& password) {
  return "Basic " + absl::Base64Escape(user + ":" + password);
}

// One HTTP/1.1 request from local address `from` (any 127.x.y.z works on Linux loopback) on a
// fresh connection; returns "<status> <body>", or "" if the exchange failed.
inline std::string HttpFrom(const std::string& from, int port, const std::string& authorization) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return "";
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, from.c_str(), &local.sin_addr);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &server.sin_addr);
  std::string response;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof(local)) == 0 &&
      ::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof(server)) == 0) {
    const std::string request =
        absl::StrCat("GET /v1/queues HTTP/1.1\r\nHost: x\r\nAuthorization: ", authorization,
                     "\r\nConnection: close\r\n\r\n");
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
        static_cast<ssize_t>(request.size())) {
      char buf[4096];
      ssize_t n;
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0) response.append(buf, n);
    }
  }
  ::close(fd);
  // "HTTP/1.1 401 Unauthorized\r\n...\r\n\r\n{body}"
  const size_t space = response.find(' ');
  const size_t body = response.find("\r\n\r\n");
  if (space == std::string::npos || body == std::string::npos) return "";
  return absl::StrCat(response.substr(space + 1, 3), " ", response.substr(body + 4));
}

class PasswordLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-pwlimits-", ::getpid(), "-", reinterpret_cast<uintptr_t>(this));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    platform_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Start(auth::PasswordHashParams params, const std::vector<std::string>& overrides = {}) {
    absl::StatusOr<std::string> hash = auth::HashPassword("alice-pw", params);
    ASSERT_TRUE(hash.ok()) << hash.status();
    std::ofstream(dir_ / "users.yaml")
        << "users:\n  - name: alice\n    passwordHash: \"" << *hash << "\"\n    groups: [admins]\n"
        << "tokens:\n  - name: ci-bot\n    tokenSha256: \"" << auth::HashToken("ci-token")
        << "\"\n    groups: [team-ci]\n";
    server::UpFlags flags;
    flags.data_dir = (dir_ / "data").string();
    flags.grpc_listen = "127.0.0.1:0";
    flags.http_listen = "127.0.0.1:0";
    flags.overrides = {absl::StrCat("auth.usersFile=", (dir_ / "users.yaml").string()),
                       "auth.anonymous=false"};
    flags.overrides.insert(flags.overrides.end(), overrides.begin(), overrides.end());
    absl::StatusOr<server::ServerConfig> config = server::LoadServerConfig(flags, {});
    ASSERT_TRUE(config.ok()) << config.status();
    auto platform = server::Platform::Start(*config, server::Mode::kServer);
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = std::move(*platform);
    http_port_ =
        std::stoi(platform_->http_address().substr(platform_->http_address().rfind(':') + 1));
  }

  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection of its own
    return grpc::CreateCustomChannel(platform_->grpc_address(), grpc::InsecureChannelCredentials(),
                                     args);
  }

  static grpc::Status ListQueues(regatta::v1::QueueService::Stub& stub,
                                 const std::string& authorization,
                                 const std::string& spoofed_address = "") {
    grpc::ClientContext context;
    context.AddMetadata("authorization", authorization);
    if (!spoofed_address.empty()) {
      context.AddMetadata(auth::kGatewayClientAddressMetadata, spoofed_address);
    }
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    regatta::v1::ListQueuesRequest request;
    regatta::v1::ListQueuesResponse response;
    return stub.ListQueues(&context, request, &response);
  }

  std::filesystem::path dir_;
  std::unique_ptr<server::Platform> platform_;
  int http_port_ = 0;
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_INTEGRATION_PASSWORD_LIMITS_FIXTURE_H_
