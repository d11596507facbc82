#include "src/devices/handlers/udev/watch.h"

#include <algorithm>
#include <utility>

#include "src/common/status_macros.h"

namespace regatta::devices::udev {

DeviceWatch::DeviceWatch(UdevDiscoveryDetails details, UdevSystem* udev, UdevEventSource* events,
                         const Clock* clock, Options options)
    : details_(std::move(details)),
      udev_(udev),
      events_(events),
      clock_(clock),
      options_(options),
      next_rescan_(clock->Now() + options.rescan_interval) {}

bool DeviceWatch::WaitForPossibleChange(absl::Duration timeout) {
  const absl::Time deadline = clock_->Now() + timeout;
  while (true) {
    const absl::Time now = clock_->Now();
    if (now >= next_rescan_) {
      next_rescan_ = now + options_.rescan_interval;
      return true;
    }
    if (now >= deadline) return false;
    if (events_->WaitForEvents(std::min(next_rescan_, deadline) - now)) {
      next_rescan_ = clock_->Now() + options_.rescan_interval;
      return true;
    }
  }
}

absl::StatusOr<std::vector<v0::Device>> DeviceWatch::Enumerate() {
  absl::StatusOr<std::vector<v0::Device>> devices = FindUdevDevices(details_, *udev_);
  // Counted from the end of the enumeration, so a slow one never makes the next one due at once.
  next_rescan_ = clock_->Now() + options_.rescan_interval;
  return devices;
}

absl::StatusOr<std::optional<std::vector<v0::Device>>> DeviceWatch::Next(absl::Duration timeout) {
  if (!last_.has_value()) {
    ASSIGN_OR_RETURN(std::vector<v0::Device> devices, Enumerate());
    last_ = devices;
    return devices;
  }
  const absl::Time deadline = clock_->Now() + timeout;
  while (clock_->Now() < deadline && WaitForPossibleChange(deadline - clock_->Now())) {
    ASSIGN_OR_RETURN(std::vector<v0::Device> devices, Enumerate());
    if (!SameDevices(devices, *last_)) {
      last_ = devices;
      return devices;
    }
  }
  return std::nullopt;
}

}  // namespace regatta::devices::udev
