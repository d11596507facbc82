#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_FINDER_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_FINDER_H_

// The udev handler behind the discovery protocol (`regatta dh udev`): each Discover call gets its
// own HostDeviceWatch (a udev monitor's events are consumed by whoever reads them, so calls must
// not share one), listing the devices its rules match and waking on udev events or the rescan.

#include <memory>

#include "src/common/clock.h"
#include "src/devices/protocol/device_finder.h"

namespace regatta::devices::udev {

class UdevFinder final : public DeviceFinder {
 public:
  // `clock` outlives the finder and its queries.
  explicit UdevFinder(const Clock* clock) : clock_(clock) {}

  // INVALID_ARGUMENT naming the field when the udev rules are wrong.
  absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(const v0::DiscoverRequest& request) override;

 private:
  const Clock* const clock_;
};

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_FINDER_H_
