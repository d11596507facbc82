#ifndef REGATTA_SRC_SCHEDULER_POLICY_TOKEN_BUCKET_H_
#define REGATTA_SRC_SCHEDULER_POLICY_TOKEN_BUCKET_H_

#include <cstdint>

#include "absl/time/time.h"

namespace regatta::scheduler {

// Rate limiting of new jobs: `rate` tokens per second accumulate up to `burst`; each new job
// takes one. The clock is the caller's (real in the scheduler, simulated in the simulator).
class TokenBucket {
 public:
  // rate <= 0: no limit. Starts full.
  TokenBucket(double rate, int64_t burst, absl::Time now);

  bool unlimited() const { return rate_ <= 0; }
  // Whole tokens available at `now` (-1 when unlimited). Time going backwards adds nothing.
  int64_t Available(absl::Time now);
  // Whether the bucket is full at `now` (waiting longer adds nothing); true when unlimited.
  bool Full(absl::Time now) const;
  // Takes `n` tokens (never below zero; a no-op when unlimited).
  void Take(int64_t n);

 private:
  double rate_;
  double burst_;
  double tokens_;
  absl::Time refilled_;
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_POLICY_TOKEN_BUCKET_H_
