#include "src/scheduler/policy/token_bucket.h"

#include <algorithm>
#include <cmath>

namespace regatta::scheduler {

TokenBucket::TokenBucket(double rate, int64_t burst, absl::Time now)
    : rate_(rate),
      burst_(static_cast<double>(std::max<int64_t>(burst, 1))),
      tokens_(burst_),
      refilled_(now) {}

int64_t TokenBucket::Available(absl::Time now) {
  if (unlimited()) return -1;
  if (now > refilled_) {
    tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - refilled_) * rate_);
    refilled_ = now;
  }
  return static_cast<int64_t>(std::floor(tokens_));
}

bool TokenBucket::Full(absl::Time now) const {
  if (unlimited()) return true;
  const double elapsed = now > refilled_ ? absl::ToDoubleSeconds(now - refilled_) : 0.0;
  return tokens_ + elapsed * rate_ >= burst_;
}

void TokenBucket::Take(int64_t n) {
  if (unlimited()) return;
  tokens_ = std::max(0.0, tokens_ - static_cast<double>(n));
}

}  // namespace regatta::scheduler
