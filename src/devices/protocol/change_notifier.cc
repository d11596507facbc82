#include "src/devices/protocol/change_notifier.h"

namespace regatta::devices {

void ChangeNotifier::Notify() {
  absl::MutexLock lock(&mu_);
  ++generation_;
}

uint64_t ChangeNotifier::generation() const {
  absl::MutexLock lock(&mu_);
  return generation_;
}

uint64_t ChangeNotifier::WaitForChange(uint64_t seen, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto moved = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return generation_ != seen; };
  mu_.AwaitWithTimeout(absl::Condition(&moved), timeout);
  return generation_;
}

}  // namespace regatta::devices
