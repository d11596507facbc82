#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_WATCH_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_WATCH_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/common/clock.h"
#include "src/devices/handlers/udev/discovery.h"
#include "src/devices/handlers/udev/udev_device.h"

namespace regatta::devices::udev {

// Follows the device list of one Discover request, for a server that streams it. One thread
// uses a DeviceWatch at a time.
class DeviceWatch {
 public:
  struct Options {
    // Enumerate again this often even without udev events (containers often get none).
    absl::Duration rescan_interval = absl::Seconds(5);
  };

  // `udev`, `events` and `clock` outlive the watch.
  DeviceWatch(UdevDiscoveryDetails details, UdevSystem* udev, UdevEventSource* events,
              const Clock* clock, Options options);

  // Blocks until the device list may have changed: a udev event arrived, or the rescan interval
  // passed since the last enumeration or the last time this returned true. False when `timeout`
  // passed first.
  bool WaitForPossibleChange(absl::Duration timeout);

  // The first call returns the current list at once. Each later call returns the next list that
  // differs from the last one returned, or nullopt when `timeout` passes without a change (so a
  // server can check for cancellation and call again). Errors come from enumeration.
  absl::StatusOr<std::optional<std::vector<v0::Device>>> Next(absl::Duration timeout);

  // Every device the rules match now (restarts the rescan interval).
  absl::StatusOr<std::vector<v0::Device>> Enumerate();

 private:
  const UdevDiscoveryDetails details_;
  UdevSystem* const udev_;
  UdevEventSource* const events_;
  const Clock* const clock_;
  const Options options_;
  absl::Time next_rescan_;
  std::optional<std::vector<v0::Device>> last_;
};

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_WATCH_H_
