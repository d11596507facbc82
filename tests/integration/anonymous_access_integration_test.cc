// Anonymous access of the real server in-process: convenient on loopback, refused on a network
// address unless forced, and loud when forced.

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta {
namespace {

using ::testing::HasSubstr;

class AnonymousAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-anon-", ::getpid(), "-", reinterpret_cast<uintptr_t>(this));
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    platform_.reset();
    std::filesystem::remove_all(dir_);
  }

  absl::Status Start(server::Mode mode, const std::string& host,
                     std::vector<std::string> overrides) {
    server::UpFlags flags;
    flags.data_dir = (dir_ / "data").string();
    flags.grpc_listen = host + ":0";
    flags.http_listen = "127.0.0.1:0";
    flags.overrides = std::move(overrides);
    flags.overrides.push_back("executor.embedded=false");
    absl::StatusOr<server::ServerConfig> config = server::LoadServerConfig(flags, {});
    if (!config.ok()) return config.status();
    absl::StatusOr<std::unique_ptr<server::Platform>> platform =
        server::Platform::Start(*config, mode);
    if (!platform.ok()) return platform.status();
    platform_ = std::move(*platform);
    return absl::OkStatus();
  }

  // CreateQueue without credentials, through the gRPC listener.
  grpc::Status CreateQueueAnonymously(const std::string& name) {
    std::string address = platform_->grpc_address();
    address = absl::StrCat("127.0.0.1", address.substr(address.rfind(':')));
    auto stub = regatta::v1::QueueService::NewStub(
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    regatta::v1::CreateQueueRequest request;
    request.mutable_queue()->set_name(name);
    regatta::v1::Queue queue;
    return stub->CreateQueue(&context, request, &queue);
  }

  std::filesystem::path dir_;
  std::unique_ptr<server::Platform> platform_;
};

TEST_F(AnonymousAccessTest, UpOnLoopbackNeedsNoCredentials) {
  ASSERT_TRUE(Start(server::Mode::kUp, "127.0.0.1", {}).ok());
  EXPECT_TRUE(platform_->anonymous_enabled());
  EXPECT_EQ(platform_->anonymous_warning(), "");
  grpc::Status status = CreateQueueAnonymously("q1");
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST_F(AnonymousAccessTest, TrueOnAllInterfacesIsRefusedAtStartup) {
  absl::Status status = Start(server::Mode::kServer, "0.0.0.0", {"auth.anonymous=true"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_THAT(status.message(), HasSubstr("auth.anonymous is true but api.grpcListen (0.0.0.0:0)"));
  EXPECT_THAT(status.message(), HasSubstr("auth.allowAnonymousOnNetwork=true"));
  EXPECT_EQ(platform_, nullptr);
}

TEST_F(AnonymousAccessTest, ForcedOnAllInterfacesWarnsAndGrantsOnlyTheNamedGroups) {
  ASSERT_TRUE(Start(server::Mode::kServer, "0.0.0.0",
                    {"auth.anonymous=true", "auth.allowAnonymousOnNetwork=true"})
                  .ok());
  EXPECT_TRUE(platform_->anonymous_enabled());
  EXPECT_THAT(platform_->anonymous_warning(), HasSubstr("ANONYMOUS ACCESS FROM THE NETWORK"));
  EXPECT_THAT(platform_->anonymous_warning(), HasSubstr("api.grpcListen (0.0.0.0:0)"));
  // Let in, but without groups it is no administrator.
  grpc::Status status = CreateQueueAnonymously("q1");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("\"anonymous\""));
}

TEST_F(AnonymousAccessTest, AutoOnAllInterfacesIsOff) {
  ASSERT_TRUE(Start(server::Mode::kUp, "0.0.0.0", {}).ok());
  EXPECT_FALSE(platform_->anonymous_enabled());
  EXPECT_EQ(CreateQueueAnonymously("q1").error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

}  // namespace
}  // namespace regatta
