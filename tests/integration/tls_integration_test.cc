// TLS on the platform's listeners, with certificates the test makes with openssl: gRPC clients
// must verify the server with its CA; with a client CA, clients without a certificate it
// verifies are refused (require) or only strangers are (request); HTTPS the same through curl;
// bad files are refused at start naming the key; a reload serves new files to new connections.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/common/tls/tls.h"
#include "src/server/config.h"
#include "src/server/platform.h"
#include "tests/integration/tls_certs.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(absl::StrCat(::testing::TempDir(), "/regatta-tls-it-", getpid()));
    std::filesystem::remove_all(*dir_);
    std::filesystem::create_directories(*dir_);
    certs_ = new TestCerts();
    made_ = certs_->Make(*dir_);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(*dir_); }

  void SetUp() override { ASSERT_TRUE(made_) << "openssl could not make the test certificates"; }
  void TearDown() override { platform_.reset(); }

  static absl::StatusOr<server::ServerConfig> Config(std::vector<std::string> overrides) {
    server::UpFlags flags;
    flags.data_dir = absl::StrCat(*dir_, "/data-", counter_++);
    flags.grpc_listen = "127.0.0.1:0";
    flags.http_listen = "127.0.0.1:0";
    flags.overrides = {"auth.anonymous=true", "executor.embedded=false"};
    for (std::string& o : overrides) flags.overrides.push_back(std::move(o));
    return server::LoadServerConfig(flags, {});
  }

  // Starts the platform serving `cert` with the given extra settings.
  void Start(const std::string& cert, std::vector<std::string> overrides = {}) {
    overrides.push_back("tls.certFile=" + certs_->crt(cert));
    overrides.push_back("tls.keyFile=" + certs_->key(cert));
    absl::StatusOr<server::ServerConfig> config = Config(std::move(overrides));
    ASSERT_TRUE(config.ok()) << config.status();
    auto platform = server::Platform::Start(*config, server::Mode::kServer);
    ASSERT_TRUE(platform.ok()) << platform.status();
    platform_ = std::move(*platform);
  }

  int GrpcPort() const {
    const std::string& a = platform_->grpc_address();
    return std::stoi(a.substr(a.rfind(':') + 1));
  }
  int HttpPort() const {
    const std::string& a = platform_->http_address();
    return std::stoi(a.substr(a.rfind(':') + 1));
  }

  // ListQueues over a new channel with these client settings.
  grpc::Status Call(const tls::ClientTlsOptions& options) {
    grpc::ChannelArguments args;
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        tls::ClientCredentials(options, &args);
    if (!credentials.ok()) return grpc::Status(grpc::StatusCode::INTERNAL, "bad client options");
    auto stub = regatta::v1::QueueService::NewStub(
        grpc::CreateCustomChannel(platform_->grpc_address(), *credentials, args));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    regatta::v1::ListQueuesResponse response;
    return stub->ListQueues(&context, regatta::v1::ListQueuesRequest(), &response);
  }

  static tls::ClientTlsOptions Verifying(const std::string& ca) {
    tls::ClientTlsOptions o;
    o.ca_file = certs_->crt(ca);
    return o;
  }
  static tls::ClientTlsOptions WithCert(const std::string& ca, const std::string& cert) {
    tls::ClientTlsOptions o = Verifying(ca);
    o.cert_file = certs_->crt(cert);
    o.key_file = certs_->key(cert);
    return o;
  }

  // curl's exit code for GET /v1/version over HTTPS with `flags` (0: a 200 answer).
  int Curl(const std::string& scheme, const std::string& flags) const {
    const std::string command =
        absl::StrCat("curl -sS -f -o /dev/null --max-time 10 ", flags, " ", scheme,
                     "://127.0.0.1:", HttpPort(), "/v1/version 2>/dev/null");
    const int rc = std::system(command.c_str());
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  static std::string* dir_;
  static TestCerts* certs_;
  static bool made_;
  static int counter_;
  std::unique_ptr<server::Platform> platform_;
};

std::string* TlsTest::dir_ = nullptr;
TestCerts* TlsTest::certs_ = nullptr;
bool TlsTest::made_ = false;
int TlsTest::counter_ = 0;

TEST_F(TlsTest, OnlyClientsThatVerifyTheServerWithItsCaGetIn) {
  ASSERT_NO_FATAL_FAILURE(Start("server"));
  EXPECT_TRUE(Call(Verifying("ca")).ok()) << Call(Verifying("ca")).error_message();
  // Plain text, the system's CAs, and the wrong CA are all refused.
  EXPECT_EQ(Call(tls::ClientTlsOptions()).error_code(), grpc::StatusCode::UNAVAILABLE);
  tls::ClientTlsOptions system_roots;
  system_roots.enabled = true;
  EXPECT_EQ(Call(system_roots).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Call(Verifying("other-ca")).error_code(), grpc::StatusCode::UNAVAILABLE);
  // A client certificate is not asked for, and does no harm.
  EXPECT_TRUE(Call(WithCert("ca", "client")).ok());
}

TEST_F(TlsTest, ARequiredClientCertificateMustChainToTheClientCa) {
  // clientAuth auto: require, since a client CA is set.
  ASSERT_NO_FATAL_FAILURE(Start("server", {"tls.clientCaFile=" + certs_->crt("ca")}));
  grpc::Status with_cert = Call(WithCert("ca", "client"));
  EXPECT_TRUE(with_cert.ok()) << with_cert.error_message();
  EXPECT_EQ(Call(Verifying("ca")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Call(WithCert("ca", "stranger")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, ARequestedClientCertificateIsVerifiedWhenSent) {
  ASSERT_NO_FATAL_FAILURE(
      Start("server", {"tls.clientCaFile=" + certs_->crt("ca"), "tls.clientAuth=request"}));
  EXPECT_TRUE(Call(Verifying("ca")).ok());
  EXPECT_TRUE(Call(WithCert("ca", "client")).ok());
  EXPECT_EQ(Call(WithCert("ca", "stranger")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, BadSettingsAndFilesAreRefusedNamingTheKey) {
  auto start_error = [](std::vector<std::string> overrides) -> std::string {
    absl::StatusOr<server::ServerConfig> config = Config(std::move(overrides));
    if (!config.ok()) return std::string(config.status().message());
    auto platform = server::Platform::Start(*config, server::Mode::kServer);
    return platform.ok() ? "" : std::string(platform.status().message());
  };
  const std::string cert = "tls.certFile=" + certs_->crt("server");
  const std::string key = "tls.keyFile=" + certs_->key("server");
  EXPECT_THAT(start_error({cert}), HasSubstr("tls.keyFile: required"));
  EXPECT_THAT(start_error({cert, "tls.keyFile=" + *dir_ + "/missing.key"}),
              HasSubstr("tls.keyFile: cannot read"));
  EXPECT_THAT(start_error({cert, "tls.keyFile=" + certs_->key("client")}),
              HasSubstr("tls.keyFile: " + certs_->key("client") + " does not match"));
  EXPECT_THAT(start_error({"tls.certFile=" + certs_->key("server"), key}),
              HasSubstr("tls.certFile: " + certs_->key("server") + " holds no PEM certificate"));
  EXPECT_THAT(start_error({cert, key, "tls.clientAuth=require"}),
              HasSubstr("tls.clientCaFile: required"));
  EXPECT_THAT(start_error({cert, key, "tls.clientAuth=always"}), HasSubstr("tls.clientAuth"));
  EXPECT_THAT(start_error({cert, key, "tls.clientCaFile=" + *dir_ + "/missing.crt"}),
              HasSubstr("tls.clientCaFile: cannot read"));
  EXPECT_EQ(start_error({cert, key}), "");
}

TEST_F(TlsTest, HttpsAnswersCurlWithTheCaOnly) {
  ASSERT_NO_FATAL_FAILURE(Start("server"));
  EXPECT_EQ(Curl("https", "--cacert " + certs_->crt("ca")), 0);
  EXPECT_EQ(Curl("https", ""), 60);  // the peer's certificate cannot be verified
  EXPECT_EQ(Curl("https", "--cacert " + certs_->crt("other-ca")), 60);
  EXPECT_NE(Curl("http", ""), 0);  // no plain text on the HTTPS port
  // The listener still serves after those failed handshakes.
  EXPECT_EQ(Curl("https", "--cacert " + certs_->crt("ca")), 0);
}

TEST_F(TlsTest, HttpsWithARequiredClientCertificate) {
  ASSERT_NO_FATAL_FAILURE(Start("server", {"tls.clientCaFile=" + certs_->crt("ca")}));
  const std::string ca = "--cacert " + certs_->crt("ca");
  EXPECT_EQ(Curl("https", absl::StrCat(ca, " --cert ", certs_->crt("client"), " --key ",
                                       certs_->key("client"))),
            0);
  EXPECT_NE(Curl("https", ca), 0);
  EXPECT_NE(Curl("https", absl::StrCat(ca, " --cert ", certs_->crt("stranger"), " --key ",
                                       certs_->key("stranger"))),
            0);
}

TEST_F(TlsTest, AReloadServesTheNewCertificateToNewConnections) {
  ASSERT_TRUE(certs_->MakeLeaf("rotating", "ca", 5001));
  ASSERT_NO_FATAL_FAILURE(
      Start("rotating", {"tls.clientCaFile=" + certs_->crt("ca"), "tls.clientAuth=request"}));
  EXPECT_EQ(certs_->ServedSerial(GrpcPort()), "5001");
  EXPECT_EQ(certs_->ServedSerial(HttpPort()), "5001");

  ASSERT_TRUE(certs_->MakeLeaf("rotating", "ca", 5002));
  ASSERT_TRUE(platform_->ReloadTls().ok());
  EXPECT_EQ(certs_->ServedSerial(GrpcPort()), "5002");
  EXPECT_EQ(certs_->ServedSerial(HttpPort()), "5002");
  EXPECT_TRUE(Call(Verifying("ca")).ok());
  EXPECT_EQ(Curl("https", "--cacert " + certs_->crt("ca")), 0);

  // A broken key is refused; the last good files stay in use.
  std::ofstream(certs_->key("rotating")) << "not a key\n";
  absl::Status bad = platform_->ReloadTls();
  EXPECT_THAT(std::string(bad.message()), HasSubstr("tls.keyFile"));
  EXPECT_EQ(certs_->ServedSerial(GrpcPort()), "5002");
  EXPECT_EQ(certs_->ServedSerial(HttpPort()), "5002");
  EXPECT_TRUE(Call(Verifying("ca")).ok());
}

TEST_F(TlsTest, ReloadWithoutTlsSaysSo) {
  absl::StatusOr<server::ServerConfig> config = Config({});
  ASSERT_TRUE(config.ok());
  auto platform = server::Platform::Start(*config, server::Mode::kServer);
  ASSERT_TRUE(platform.ok()) << platform.status();
  EXPECT_EQ((*platform)->ReloadTls().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace regatta::testing
