#ifndef REGATTA_TESTS_UNIT_AUTH_TEST_UTIL_H_
#define REGATTA_TESTS_UNIT_AUTH_TEST_UTIL_H_

#include <memory>
#include <utility>

#include "gtest/gtest.h"
#include "src/api/auth/authenticator.h"

namespace regatta::auth::testing {

// The Authenticator for `config`, or null (with a test failure) if Create refuses it.
inline std::unique_ptr<Authenticator> MakeAuthenticator(AuthConfig config) {
  absl::StatusOr<std::unique_ptr<Authenticator>> authenticator =
      Authenticator::Create(std::move(config));
  EXPECT_TRUE(authenticator.ok()) << authenticator.status();
  return authenticator.ok() ? std::move(*authenticator) : nullptr;
}

}  // namespace regatta::auth::testing

#endif  // REGATTA_TESTS_UNIT_AUTH_TEST_UTIL_H_
