#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_HOST_WATCH_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_HOST_WATCH_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/common/clock.h"
#include "src/devices/handlers/udev/udev_device.h"
#include "src/devices/handlers/udev/watch.h"

namespace regatta::devices::udev {

// Everything one Discover call needs on this host: the parsed details, libudev, and its own udev
// monitor (whoever reads a monitor consumes its events, so concurrent calls must not share one),
// or the timer-only fallback where no monitor can be opened.
class HostDeviceWatch {
 public:
  // InvalidArgument naming the field when the details are wrong (for the Configuration's
  // status); `clock` outlives the watch.
  static absl::StatusOr<std::unique_ptr<HostDeviceWatch>> Create(
      absl::string_view discovery_details, const Clock* clock, DeviceWatch::Options options = {});

  DeviceWatch& watch() { return *watch_; }
  // False when udev events are unavailable and only the periodic rescan finds changes.
  bool monitoring() const { return monitoring_; }

 private:
  HostDeviceWatch() = default;

  std::unique_ptr<UdevSystem> system_;
  std::unique_ptr<UdevEventSource> events_;
  bool monitoring_ = false;
  std::optional<DeviceWatch> watch_;
};

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_HOST_WATCH_H_
