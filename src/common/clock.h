#ifndef REGATTA_SRC_COMMON_CLOCK_H_
#define REGATTA_SRC_COMMON_CLOCK_H_

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace regatta {

// Injected everywhere time matters, so tests advance a fake clock instead of sleeping.
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  // A process-wide instance for the composition root.
  static RealClock* Get() {
    static auto* clock = new RealClock();
    return clock;
  }
};

class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time start = absl::FromUnixSeconds(1'700'000'000)) : now_(start) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration d) {
    absl::MutexLock lock(&mu_);
    now_ += d;
  }
  void Set(absl::Time t) {
    absl::MutexLock lock(&mu_);
    now_ = t;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_;
};

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_CLOCK_H_
