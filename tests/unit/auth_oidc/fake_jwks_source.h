#ifndef REGATTA_TESTS_UNIT_AUTH_OIDC_FAKE_JWKS_SOURCE_H_
#define REGATTA_TESTS_UNIT_AUTH_OIDC_FAKE_JWKS_SOURCE_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "src/api/auth/oidc/jwks_source.h"

namespace regatta::auth::oidc {

// Serves a document the test sets (or an error) and counts fetches.
struct FakeJwksState {
  absl::Mutex mu;
  std::string document;
  absl::Status error;  // returned instead of the document when not OK
  int fetches = 0;
};

class FakeJwksSource final : public JwksSource {
 public:
  explicit FakeJwksSource(std::shared_ptr<FakeJwksState> state) : state_(std::move(state)) {}
  const std::string& Describe() const override { return name_; }
  absl::StatusOr<std::optional<std::string>> Fetch() override {
    absl::MutexLock lock(&state_->mu);
    ++state_->fetches;
    if (!state_->error.ok()) return state_->error;
    return state_->document;
  }

 private:
  std::shared_ptr<FakeJwksState> state_;
  std::string name_ = "fake-jwks";
};

}  // namespace regatta::auth::oidc

#endif  // REGATTA_TESTS_UNIT_AUTH_OIDC_FAKE_JWKS_SOURCE_H_
