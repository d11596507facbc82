#ifndef REGATTA_SRC_API_AUTH_PASSWORD_LIMITS_H_
#define REGATTA_SRC_API_AUTH_PASSWORD_LIMITS_H_

// What keeps a flood of wrong passwords from costing the server its memory and CPU: each argon2id
// check takes tens of milliseconds and (with interactive limits) 64 MiB, and anyone who can
// reach the API may ask for one.

#include <cstddef>
#include <list>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/common/clock.h"

namespace regatta::auth {

// Failed password checks allowed for one key (a client address or a user name): `burst` at
// once, then one more every `refill`. burst 0: no limit.
struct FailureLimit {
  int burst = 0;
  absl::Duration refill = absl::Seconds(1);
};

struct PasswordCheckLimits {
  // argon2id checks running at once; 0: half the machine's cores, at least 1.
  int max_concurrent = 0;
  // How long a check waits for a free slot before it is refused as UNAVAILABLE.
  absl::Duration max_wait = absl::Seconds(1);
  // A check refused by a failure limit is answered after this long (or its retry-after, if
  // shorter), so that clients retrying in a loop cannot keep the server busy with refusals. At
  // most kMaxDelayedRefusals wait at once; the rest are answered at once.
  absl::Duration refusal_delay = absl::Seconds(1);
  FailureLimit per_source{20, absl::Seconds(3)};
  FailureLimit per_user{10, absl::Seconds(6)};
  // Client addresses (and, separately, user names) remembered for the failure limits; the least
  // recently used are forgotten first.
  size_t tracked_keys = 10'000;
};

inline constexpr int kMaxDelayedRefusals = 256;

// INVALID_ARGUMENT naming the field under `prefix` (e.g. "auth.passwordChecks.maxWait") for a
// negative count, wait or delay, a burst without a positive refill, or tracked_keys
// outside 1..10^7.
absl::Status ValidatePasswordCheckLimits(const PasswordCheckLimits& limits,
                                         absl::string_view prefix);

// max_concurrent as configured, or its default for this machine.
int EffectiveMaxConcurrent(int max_concurrent);

// Token buckets of failure allowances by key, in a bounded least-recently-used table. A key
// whose bucket is full carries no information and is dropped. Thread-safe.
class FailureLimiter {
 public:
  FailureLimiter(FailureLimit limit, size_t capacity, const Clock* clock);

  // Takes one allowance for `key` (before a check that may fail). False, taking nothing, if none
  // is left; `retry_after` (may be null) is then how long until one is.
  bool TryTake(absl::string_view key, absl::Duration* retry_after = nullptr);
  // Returns the allowance a successful check took.
  void GiveBack(absl::string_view key);

  size_t size() const;

  FailureLimiter(const FailureLimiter&) = delete;
  FailureLimiter& operator=(const FailureLimiter&) = delete;

 private:
  struct Bucket {
    double tokens = 0;
    absl::Time updated;
    std::list<std::string>::iterator lru;  // position in lru_ (front: most recent)
  };

  // Tokens of `bucket` refilled up to `now`.
  void RefillLocked(Bucket& bucket, absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EraseLocked(absl::string_view key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const FailureLimit limit_;
  const size_t capacity_;
  const Clock* const clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
  std::list<std::string> lru_ ABSL_GUARDED_BY(mu_);
};

// A counting semaphore whose Acquire gives up after a bounded wait (real time). Thread-safe.
class ConcurrencyLimit {
 public:
  explicit ConcurrencyLimit(int max);

  // False if no slot freed up within `max_wait`.
  bool Acquire(absl::Duration max_wait);
  void Release();

  int in_use() const;

 private:
  bool HasRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_use_ < max_; }

  const int max_;
  mutable absl::Mutex mu_;
  int in_use_ ABSL_GUARDED_BY(mu_) = 0;
};

// The address part of a gRPC peer string ("ipv4:10.0.0.1:5000" -> "10.0.0.1", "ipv6:[::1]:5000"
// -> "::1"), with an IPv4-mapped IPv6 address written as IPv4; "" if it names no network address
// (in-process, Unix socket).
std::string ClientAddressFromPeer(absl::string_view peer);

// A bare IP address as a key: IPv4-mapped IPv6 written as IPv4, otherwise unchanged.
std::string NormalizeClientAddress(absl::string_view address);

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_PASSWORD_LIMITS_H_
