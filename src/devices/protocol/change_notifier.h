#ifndef REGATTA_SRC_DEVICES_PROTOCOL_CHANGE_NOTIFIER_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_CHANGE_NOTIFIER_H_

#include <cstdint>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace regatta::devices {

// A generation counter that waiters block on: whoever learns that something may have changed
// calls Notify; a waiter remembers the generation it last acted on and wakes when it moves.
// Nothing is lost between a waiter's check and its wait.
class ChangeNotifier {
 public:
  void Notify();
  uint64_t generation() const;
  // Blocks until the generation differs from `seen` or `timeout` passes; returns the current
  // generation (equal to `seen` on timeout).
  uint64_t WaitForChange(uint64_t seen, absl::Duration timeout) const;

 private:
  mutable absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_CHANGE_NOTIFIER_H_
