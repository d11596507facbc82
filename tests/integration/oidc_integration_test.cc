// OIDC bearer JWTs against the real server (in-process, port 0) with a JWKS file: the groups of a
// valid token grant exactly the queue verbs the queues give those groups, and expired, wrongly
// signed, wrong-audience and unsigned tokens are refused over gRPC and REST.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/platform_fixture.h"
#include "tests/testing/oidc/test_issuer.h"
#include "tests/testing/test_dir.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::testing {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;

constexpr char kIssuer[] = "https://issuer.test/realms/regatta";

class OidcIntegrationTest : public PlatformTest {
 protected:
  static void SetUpTestSuite() {
    keys_dir_ = new std::string(MakeTestDir("oidc-it-"));
    std::filesystem::create_directories(*keys_dir_ + "/forged");
    auto rsa = TestSigningKey::Generate(TestSigningKey::Kind::kRsa2048, "rsa-1", *keys_dir_);
    auto ec = TestSigningKey::Generate(TestSigningKey::Kind::kEcP256, "ec-1", *keys_dir_);
    auto forged =
        TestSigningKey::Generate(TestSigningKey::Kind::kRsa2048, "rsa-1", *keys_dir_ + "/forged");
    ASSERT_TRUE(rsa.ok() && ec.ok() && forged.ok());
    rsa_ = rsa->release();
    ec_ = ec->release();
    forged_ = forged->release();
    std::ofstream(*keys_dir_ + "/jwks.json") << JwksJson({rsa_, ec_});
  }

  void SetUp() override {
    extra_overrides_ = {absl::StrCat("auth.oidc.issuer=", kIssuer), "auth.oidc.audience=regatta",
                        absl::StrCat("auth.oidc.jwksFile=", *keys_dir_, "/jwks.json"),
                        "auth.permissionGroupMapping.create_queue=[admins, queue-makers]"};
    PlatformTest::SetUp();
  }

  static json Claims(const std::string& user, const json& groups) {
    const int64_t now = absl::ToUnixSeconds(absl::Now());
    return {{"iss", kIssuer},   {"aud", "regatta"}, {"sub", user},
            {"exp", now + 600}, {"iat", now - 5},   {"groups", groups}};
  }
  static std::string Bearer(const std::string& jwt) { return "Bearer " + jwt; }

  static regatta::v1::QueuePermission Grant(const std::string& group,
                                            std::vector<std::string> verbs) {
    regatta::v1::QueuePermission p;
    auto* subject = p.add_subjects();
    subject->set_kind("group");
    subject->set_name(group);
    for (const auto& v : verbs) p.add_verbs(v);
    return p;
  }

  void CreateQueueGranting(const std::string& name, const std::string& group,
                           std::vector<std::string> verbs) {
    regatta::v1::CreateQueueRequest req;
    req.mutable_queue()->set_name(name);
    *req.mutable_queue()->add_permissions() = Grant(group, std::move(verbs));
    regatta::v1::Queue q;
    grpc::Status s = queues_->CreateQueue(Alice().get(), req, &q);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }

  grpc::Status Submit(const std::string& authorization, const std::string& queue) {
    regatta::v1::SubmitJobsResponse resp;
    return submit_->SubmitJobs(As(authorization).get(), Jobs(queue, "set-1", 1), &resp);
  }

  static std::string* keys_dir_;
  static TestSigningKey* rsa_;
  static TestSigningKey* ec_;
  static TestSigningKey* forged_;
};

std::string* OidcIntegrationTest::keys_dir_ = nullptr;
TestSigningKey* OidcIntegrationTest::rsa_ = nullptr;
TestSigningKey* OidcIntegrationTest::ec_ = nullptr;
TestSigningKey* OidcIntegrationTest::forged_ = nullptr;

TEST_F(OidcIntegrationTest, GroupsGrantExactlyTheQueueVerbsConfigured) {
  CreateQueueGranting("q-a", "team-a", {"submit", "watch"});
  CreateQueueGranting("q-b", "team-b", {"submit", "cancel"});
  SyncViews();
  const std::string dana = Bearer(rsa_->Sign(Claims("dana", {"team-a"})));

  grpc::Status s = Submit(dana, "q-a");
  EXPECT_TRUE(s.ok()) << s.error_message();
  s = Submit(dana, "q-b");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("user \"dana\" may not submit to queue \"q-b\""));

  // team-a has no cancel verb on q-a.
  regatta::v1::CancelJobSetRequest cancel;
  cancel.set_queue("q-a");
  cancel.set_job_set("set-1");
  regatta::v1::CancelJobSetResponse cancelled;
  s = submit_->CancelJobSet(As(dana).get(), cancel, &cancelled);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();

  regatta::v1::CreateQueueRequest create;
  create.mutable_queue()->set_name("q-dana");
  regatta::v1::Queue q;
  s = queues_->CreateQueue(As(dana).get(), create, &q);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("lacks permission \"create_queue\""));

  // A group mapped to create_queue in the server config may; ES256 works the same way.
  const std::string erin = Bearer(ec_->Sign(Claims("erin", {"queue-makers"})));
  s = queues_->CreateQueue(As(erin).get(), create, &q);
  EXPECT_TRUE(s.ok()) << s.error_message();
  // ...but gets no queue verbs from that.
  s = Submit(erin, "q-a");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
}

TEST_F(OidcIntegrationTest, RefusedTokensAreRefusedOverGrpcAndRest) {
  CreateQueueGranting("q-a", "team-a", {"submit"});
  SyncViews();
  json expired = Claims("dana", {"team-a"});
  expired["exp"] = absl::ToUnixSeconds(absl::Now()) - 3600;
  json audience = Claims("dana", {"team-a"});
  audience["aud"] = "someone-else";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {rsa_->Sign(expired), "token expired at "},
      {rsa_->Sign(audience), "token audience [\"someone-else\"] is not \"regatta\""},
      {forged_->Sign(Claims("dana", {"team-a"})), "signature does not verify"},
      {UnsignedJwt(Claims("dana", {"team-a"})), "token algorithm \"none\" is not allowed"},
      {rsa_->Sign(Claims("dana", {"team-a"}), {{"kid", "who-knows"}}), "unknown key id"},
  };
  const int port = HttpPort();
  for (const auto& [token, why] : refused) {
    grpc::Status s = Submit(Bearer(token), "q-a");
    EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED) << why;
    EXPECT_THAT(s.error_message(), HasSubstr(why));

    rest::testing::HttpReply reply =
        rest::testing::Fetch(port, "GET", "/v1/queues", "", {{"Authorization", Bearer(token)}});
    EXPECT_EQ(reply.status, 401) << why << ": " << reply.body;
    EXPECT_THAT(reply.body, HasSubstr(json(why).dump().substr(1, why.size() - 2))) << why;
  }
  const std::string good = Bearer(ec_->Sign(Claims("dana", {"team-a"})));
  rest::testing::HttpReply reply =
      rest::testing::Fetch(port, "GET", "/v1/queues/q-a", "", {{"Authorization", good}});
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_TRUE(Submit(good, "q-a").ok());
  // The users file's static token still authenticates next to OIDC (ci-bot, group team-ci, has
  // no verb on q-a: authenticated, then denied).
  EXPECT_EQ(Submit("Bearer ci-token", "q-a").error_code(), grpc::StatusCode::PERMISSION_DENIED);
}

}  // namespace
}  // namespace regatta::testing
