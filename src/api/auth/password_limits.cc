#include "src/api/auth/password_limits.h"

#include <algorithm>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"

namespace regatta::auth {

namespace {

absl::Status CheckFailureLimit(const FailureLimit& limit, absl::string_view field) {
  if (limit.burst < 0) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".burst: must be >= 0 (0: no limit)"));
  }
  if (limit.burst > 0 && limit.refill <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ".refill: must be positive"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePasswordCheckLimits(const PasswordCheckLimits& limits,
                                         absl::string_view prefix) {
  if (limits.max_concurrent < 0) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".maxConcurrent: must be >= 0"));
  }
  if (limits.max_wait < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".maxWait: must be >= 0"));
  }
  if (limits.refusal_delay < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, ".refusalDelay: must be >= 0"));
  }
  RETURN_IF_ERROR(CheckFailureLimit(limits.per_source, absl::StrCat(prefix, ".failuresPerSource")));
  RETURN_IF_ERROR(CheckFailureLimit(limits.per_user, absl::StrCat(prefix, ".failuresPerUser")));
  if (limits.tracked_keys < 1 || limits.tracked_keys > 10'000'000) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, ".trackedKeys: must be between 1 and 10000000"));
  }
  return absl::OkStatus();
}

int EffectiveMaxConcurrent(int max_concurrent) {
  if (max_concurrent > 0) return max_concurrent;
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores / 2);
}

FailureLimiter::FailureLimiter(FailureLimit limit, size_t capacity, const Clock* clock)
    : limit_(limit), capacity_(std::max<size_t>(1, capacity)), clock_(clock) {}

void FailureLimiter::RefillLocked(Bucket& bucket, absl::Time now) const {
  if (now > bucket.updated && limit_.refill > absl::ZeroDuration()) {
    bucket.tokens = std::min<double>(
        limit_.burst, bucket.tokens + absl::FDivDuration(now - bucket.updated, limit_.refill));
  }
  bucket.updated = std::max(bucket.updated, now);
}

void FailureLimiter::EraseLocked(absl::string_view key) {
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return;
  lru_.erase(it->second.lru);
  buckets_.erase(it);
}

bool FailureLimiter::TryTake(absl::string_view key, absl::Duration* retry_after) {
  if (limit_.burst <= 0) return true;
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) {
    if (buckets_.size() >= capacity_) EraseLocked(lru_.back());
    lru_.emplace_front(key);
    it =
        buckets_.emplace(lru_.front(), Bucket{static_cast<double>(limit_.burst), now, lru_.begin()})
            .first;
  } else {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    RefillLocked(it->second, now);
  }
  Bucket& bucket = it->second;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return true;
  }
  if (retry_after != nullptr) *retry_after = (1 - bucket.tokens) * limit_.refill;
  return false;
}

void FailureLimiter::GiveBack(absl::string_view key) {
  if (limit_.burst <= 0) return;
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(key);
  if (it == buckets_.end()) return;  // forgotten meanwhile: it starts full again anyway
  RefillLocked(it->second, now);
  it->second.tokens += 1;
  if (it->second.tokens >= limit_.burst) EraseLocked(key);
}

size_t FailureLimiter::size() const {
  absl::MutexLock lock(&mu_);
  return buckets_.size();
}

ConcurrencyLimit::ConcurrencyLimit(int max) : max_(std::max(1, max)) {}

bool ConcurrencyLimit::Acquire(absl::Duration max_wait) {
  absl::MutexLock lock(&mu_);
  if (!mu_.AwaitWithTimeout(absl::Condition(this, &ConcurrencyLimit::HasRoom), max_wait)) {
    return false;
  }
  ++in_use_;
  return true;
}

void ConcurrencyLimit::Release() {
  absl::MutexLock lock(&mu_);
  --in_use_;
}

int ConcurrencyLimit::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

std::string NormalizeClientAddress(absl::string_view address) {
  absl::string_view v4;
  if (absl::StartsWithIgnoreCase(address, "::ffff:")) {
    v4 = address.substr(7);
    if (!v4.empty() && v4.find(':') == absl::string_view::npos &&
        v4.find('.') != absl::string_view::npos) {
      return std::string(v4);
    }
  }
  return std::string(address);
}

std::string ClientAddressFromPeer(absl::string_view peer) {
  if (absl::ConsumePrefix(&peer, "ipv4:")) {
    return std::string(peer.substr(0, peer.rfind(':')));
  }
  if (absl::ConsumePrefix(&peer, "ipv6:")) {
    // "[addr]:port" (percent-encoded zone ids stay as they are: they are part of the key).
    if (absl::ConsumePrefix(&peer, "[")) peer = peer.substr(0, peer.find(']'));
    return NormalizeClientAddress(peer);
  }
  return "";
}

}  // namespace regatta::auth
