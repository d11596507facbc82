// Key sets from a file (reloaded when it changes) and from a URL (a tiny HTTP server on
// loopback), end to end through the verifier.
#include "src/api/auth/oidc/jwks_source.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/oidc/verifier.h"
#include "src/common/clock.h"
#include "tests/testing/oidc/test_issuer.h"
#include "tests/testing/test_dir.h"

namespace regatta::auth::oidc {
namespace {

using ::regatta::testing::TestSigningKey;
using ::testing::HasSubstr;

// Answers every request with the current status and body, one connection at a time.
class TinyHttpServer {
 public:
  TinyHttpServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    listen(fd_, 8);
    socklen_t len = sizeof(addr);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~TinyHttpServer() {
    stopping_ = true;
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
  }
  std::string Url() const { return absl::StrCat("http://127.0.0.1:", port_, "/certs"); }
  void Set(int status, std::string body) {
    absl::MutexLock lock(&mu_);
    status_ = status;
    body_ = std::move(body);
  }
  int requests() const { return requests_.load(); }

 private:
  void Serve() {
    while (!stopping_) {
      int client = accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      char buffer[4096];
      std::string request;
      while (request.find("\r\n\r\n") == std::string::npos) {
        ssize_t n = read(client, buffer, sizeof(buffer));
        if (n <= 0) break;
        request.append(buffer, n);
      }
      ++requests_;
      std::string response;
      {
        absl::MutexLock lock(&mu_);
        response =
            absl::StrCat("HTTP/1.1 ", status_, " X\r\nContent-Type: application/json\r\n",
                         "Content-Length: ", body_.size(), "\r\nConnection: close\r\n\r\n", body_);
      }
      (void)write(client, response.data(), response.size());
      close(client);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> requests_{0};
  absl::Mutex mu_;
  int status_ = 200;
  std::string body_;
  std::thread thread_;
};

class JwksSourceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string(regatta::testing::MakeTestDir("oidc-src-"));
    auto a = TestSigningKey::Generate(TestSigningKey::Kind::kEcP256, "ec-a", *dir_);
    auto b = TestSigningKey::Generate(TestSigningKey::Kind::kEcP256, "ec-b", *dir_);
    ASSERT_TRUE(a.ok() && b.ok());
    a_ = a->release();
    b_ = b->release();
  }

  void SetUp() override {
    options_.rules.issuer = "https://issuer";
    options_.rules.audience = "regatta";
    options_.clock = &clock_;
    options_.refresh_interval = absl::Seconds(1);
    options_.min_refresh_interval = absl::Seconds(1);
  }

  nlohmann::json Claims() const {
    const int64_t now = absl::ToUnixSeconds(clock_.Now());
    return {{"iss", "https://issuer"}, {"aud", "regatta"}, {"sub", "u"}, {"exp", now + 600}};
  }

  static std::string* dir_;
  static TestSigningKey* a_;
  static TestSigningKey* b_;
  FakeClock clock_;
  VerifierOptions options_;
};

std::string* JwksSourceTest::dir_ = nullptr;
TestSigningKey* JwksSourceTest::a_ = nullptr;
TestSigningKey* JwksSourceTest::b_ = nullptr;

TEST_F(JwksSourceTest, FileIsReloadedWhenItChanges) {
  const std::string path = *dir_ + "/jwks.json";
  std::ofstream(path) << regatta::testing::JwksJson({a_});
  auto verifier = OidcVerifier::Create(options_, NewFileJwksSource(path), /*require_keys=*/true);
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  EXPECT_TRUE((*verifier)->Verify(a_->Sign(Claims())).ok());
  EXPECT_THAT((*verifier)->Verify(b_->Sign(Claims())).status().message(),
              HasSubstr("unknown key id \"ec-b\""));

  // Replaced the way Kubernetes updates a mounted secret: a new file renamed over the old one.
  std::ofstream(path + ".new") << regatta::testing::JwksJson({b_});
  std::filesystem::rename(path + ".new", path);
  clock_.Advance(absl::Seconds(2));
  absl::StatusOr<Principal> p = (*verifier)->Verify(b_->Sign(Claims()));
  EXPECT_TRUE(p.ok()) << p.status();

  // A broken edit keeps the last good keys.
  std::ofstream(path) << "{ not json";
  clock_.Advance(absl::Seconds(2));
  EXPECT_TRUE((*verifier)->Verify(b_->Sign(nlohmann::json(Claims()))).ok());
  EXPECT_GE((*verifier)->GetStats().key_fetch_failures, 1u);
}

TEST_F(JwksSourceTest, MissingFileIsAStartupError) {
  auto verifier = OidcVerifier::Create(options_, NewFileJwksSource(*dir_ + "/nope.json"),
                                       /*require_keys=*/true);
  ASSERT_FALSE(verifier.ok());
  EXPECT_THAT(verifier.status().message(), HasSubstr("nope.json"));
}

TEST_F(JwksSourceTest, UrlIsFetchedCachedAndRefetched) {
  TinyHttpServer server;
  server.Set(200, regatta::testing::JwksJson({a_}));
  options_.refresh_interval = absl::Minutes(5);
  options_.min_refresh_interval = absl::Seconds(30);
  auto verifier = OidcVerifier::Create(options_, NewUrlJwksSource(server.Url(), {}),
                                       /*require_keys=*/false);
  ASSERT_TRUE(verifier.ok()) << verifier.status();
  for (int i = 0; i < 3; ++i) {
    nlohmann::json claims = Claims();
    claims["sub"] = absl::StrCat("u", i);
    absl::StatusOr<Principal> p = (*verifier)->Verify(a_->Sign(claims));
    ASSERT_TRUE(p.ok()) << p.status();
  }
  EXPECT_EQ(server.requests(), 1);

  // The issuer fails: the last good keys stay in use.
  server.Set(500, "oops");
  clock_.Advance(absl::Minutes(6));
  EXPECT_TRUE((*verifier)->Verify(a_->Sign(Claims())).ok());
  EXPECT_EQ(server.requests(), 2);

  // Rotation: an unknown kid fetches again (once the minimum interval has passed).
  server.Set(200, regatta::testing::JwksJson({b_}));
  clock_.Advance(absl::Seconds(31));
  absl::StatusOr<Principal> p = (*verifier)->Verify(b_->Sign(Claims()));
  EXPECT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(server.requests(), 3);
}

TEST_F(JwksSourceTest, UrlErrorsSayWhatFailed) {
  TinyHttpServer server;
  server.Set(404, "not here");
  auto source = NewUrlJwksSource(server.Url(), {});
  absl::StatusOr<std::optional<std::string>> fetched = source->Fetch();
  ASSERT_FALSE(fetched.ok());
  EXPECT_THAT(fetched.status().message(), HasSubstr("HTTP status 404"));
  auto refused = NewUrlJwksSource("file:///etc/passwd", {});
  EXPECT_FALSE(refused->Fetch().ok());
}

}  // namespace
}  // namespace regatta::auth::oidc
