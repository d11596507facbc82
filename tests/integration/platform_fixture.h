#ifndef REGATTA_TESTS_INTEGRATION_PLATFORM_FIXTURE_H_
#define REGATTA_TESTS_INTEGRATION_PLATFORM_FIXTURE_H_

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/event_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"
#include "src/api/auth/crypto.h"
#include "src/api/auth/password.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::testing {

// Starts the whole platform in-process on port 0 listeners with a users file:
//   alice / alice-pw  (group admins: every global permission)
//   bob / bob-pw      (no groups: only what queue permissions grant)
//   token "ci-token"  → principal ci-bot, group team-ci
class PlatformTest : public ::testing::Test {
 public:
  static std::string Basic(const std::string& user, const std::string& password) {
    return "Basic " + absl::Base64Escape(user + ":" + password);
  }

 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-it-", ::testing::UnitTest::GetInstance()->random_seed(), "-",
                        reinterpret_cast<uintptr_t>(this));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    WriteUsersFile();
    Start();
  }

  void TearDown() override {
    platform_.reset();
    std::filesystem::remove_all(dir_);
  }

  void Start() {
    server::UpFlags flags;
    flags.data_dir = (dir_ / "data").string();
    flags.grpc_listen = "127.0.0.1:0";
    flags.http_listen = "127.0.0.1:0";
    flags.overrides = {absl::StrCat("auth.usersFile=", (dir_ / "users.yaml").string()),
                       "auth.anonymous=false", "api.maxRequestBytes=4194304"};
    for (const auto& o : extra_overrides_) flags.overrides.push_back(o);
    absl::StatusOr<server::ServerConfig> config = server::LoadServerConfig(flags, {});
    ASSERT_TRUE(config.ok()) << config.status();
    auto platform = server::Platform::Start(*config, mode_);
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = std::move(*platform);
    channel_ = grpc::CreateChannel(platform_->grpc_address(), grpc::InsecureChannelCredentials());
    queues_ = regatta::v1::QueueService::NewStub(channel_);
    submit_ = regatta::v1::SubmitService::NewStub(channel_);
    jobs_ = regatta::v1::JobService::NewStub(channel_);
    events_ = regatta::v1::EventService::NewStub(channel_);
  }

  // The port of the HTTP listener (REST, /metrics), which listens on port 0.
  int HttpPort() const {
    const std::string& address = platform_->http_address();
    int port = 0;
    EXPECT_TRUE(absl::SimpleAtoi(address.substr(address.rfind(':') + 1), &port)) << address;
    return port;
  }

  void Restart() {
    platform_.reset();
    Start();
  }

  // A client context carrying `authorization` (empty: no credentials).
  static std::unique_ptr<grpc::ClientContext> As(const std::string& authorization) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!authorization.empty()) ctx->AddMetadata("authorization", authorization);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
    return ctx;
  }
  static std::unique_ptr<grpc::ClientContext> Alice() { return As(Basic("alice", "alice-pw")); }
  static std::unique_ptr<grpc::ClientContext> Bob() { return As(Basic("bob", "bob-pw")); }

  grpc::Status CreateQueue(const std::string& name, regatta::v1::Queue* out = nullptr) {
    regatta::v1::CreateQueueRequest req;
    req.mutable_queue()->set_name(name);
    regatta::v1::Queue q;
    grpc::Status s = queues_->CreateQueue(Alice().get(), req, &q);
    if (out != nullptr) *out = q;
    return s;
  }

  static regatta::v1::SubmitJobsRequest Jobs(const std::string& queue, const std::string& job_set,
                                             int n, const std::string& client_prefix = "") {
    regatta::v1::SubmitJobsRequest req;
    req.set_queue(queue);
    req.set_job_set(job_set);
    for (int i = 0; i < n; ++i) {
      auto* item = req.add_items();
      item->mutable_task()->add_command("/bin/true");
      (*item->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "100m";
      (*item->mutable_labels())["batch"] = "b";
      if (!client_prefix.empty()) item->set_client_id(absl::StrCat(client_prefix, i));
    }
    return req;
  }

  // Waits until the views have ingested everything logged so far.
  void SyncViews() {
    ASSERT_TRUE(
        platform_->WaitForViews(platform_->log()->LastOffset(), absl::Now() + absl::Seconds(30))
            .ok());
  }

  std::filesystem::path dir_;
  std::vector<std::string> extra_overrides_;
  // kUp also runs the embedded local executor (real processes).
  server::Mode mode_ = server::Mode::kServer;
  std::unique_ptr<server::Platform> platform_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<regatta::v1::QueueService::Stub> queues_;
  std::unique_ptr<regatta::v1::SubmitService::Stub> submit_;
  std::unique_ptr<regatta::v1::JobService::Stub> jobs_;
  std::unique_ptr<regatta::v1::EventService::Stub> events_;

 private:
  void WriteUsersFile() {
    auto hash = [](const char* pw) {
      absl::StatusOr<std::string> h = auth::HashPassword(pw, auth::PasswordHashParams::Minimum());
      EXPECT_TRUE(h.ok());
      return h.ok() ? *h : std::string();
    };
    std::ofstream(dir_ / "users.yaml")
        << "users:\n"
        << "  - name: alice\n    passwordHash: \"" << hash("alice-pw")
        << "\"\n    groups: [admins]\n"
        << "  - name: bob\n    passwordHash: \"" << hash("bob-pw") << "\"\n    groups: []\n"
        << "tokens:\n  - name: ci-bot\n    tokenSha256: \"" << auth::HashToken("ci-token")
        << "\"\n    groups: [team-ci]\n";
  }
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_INTEGRATION_PLATFORM_FIXTURE_H_
