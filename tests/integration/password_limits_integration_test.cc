// Password checks against the real server in-process: failed checks are counted per client
// address (the REST gateway passes on its HTTP client's, and nobody else can choose one).

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/password_limits_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(PasswordLimitsTest, RestFailuresCountAgainstTheHttpClientsAddress) {
  Start(auth::PasswordHashParams::Minimum(),
        {"auth.passwordChecks.failuresPerSource={burst: 5, refill: 1h}",
         "auth.passwordChecks.refusalDelay=0s"});
  // Different (unknown) user names, so only the per-address limit can apply.
  for (int i = 0; i < 5; ++i) {
    EXPECT_THAT(HttpFrom("127.0.0.2", http_port_, Basic(absl::StrCat("u", i), "x")),
                HasSubstr("401 "))
        << i;
  }
  EXPECT_THAT(HttpFrom("127.0.0.2", http_port_, Basic("u-next", "x")),
              HasSubstr("too many failed password checks from this address"));
  EXPECT_THAT(HttpFrom("127.0.0.2", http_port_, Basic("u-next", "x")), HasSubstr("429 "));
  // Another HTTP client is its own source, and bearer tokens are not limited.
  EXPECT_THAT(HttpFrom("127.0.0.3", http_port_, Basic("u-other", "x")), HasSubstr("401 "));
  EXPECT_THAT(HttpFrom("127.0.0.2", http_port_, "Bearer ci-token"), HasSubstr("200 "));
}

TEST_F(PasswordLimitsTest, GrpcCallersCannotChooseTheirAddress) {
  Start(auth::PasswordHashParams::Minimum(),
        {"auth.passwordChecks.failuresPerSource={burst: 3, refill: 1h}",
         "auth.passwordChecks.refusalDelay=0s"});
  auto stub = regatta::v1::QueueService::NewStub(NewChannel());
  for (int i = 0; i < 3; ++i) {
    // A different claimed address each time: ignored, the peer 127.0.0.1 is counted.
    grpc::Status status =
        ListQueues(*stub, Basic(absl::StrCat("g", i), "x"), absl::StrCat("10.0.0.", i));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED) << status.error_message();
  }
  grpc::Status status = ListQueues(*stub, Basic("g-next", "x"), "10.0.0.200");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("from this address"));
  EXPECT_TRUE(ListQueues(*stub, "Bearer ci-token").ok());
}

}  // namespace
}  // namespace regatta::testing
