#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_FINDER_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_FINDER_H_

// The ONVIF handler behind the discovery protocol (`regatta dh onvif`): each Discover call
// validates its details and credentials once, then every listing is one discovery pass
// (DiscoverCameras). HandlerServer lists again every rediscovery interval and streams the list
// only when it changed.

#include <functional>
#include <memory>

#include "src/common/clock.h"
#include "src/devices/handlers/onvif/discovery.h"
#include "src/devices/protocol/device_finder.h"

namespace regatta::devices::onvif {

// ONVIF cameras are reached over the network, so several nodes may see one (as in Akri).
inline constexpr bool kSharedDevices = true;

class OnvifFinder final : public DeviceFinder {
 public:
  // A network per Discover call; `clock` outlives the finder and its queries.
  using NetworkFactory = std::function<std::unique_ptr<OnvifNetwork>()>;
  explicit OnvifFinder(NetworkFactory networks) : networks_(std::move(networks)) {}
  // The real network with these options.
  OnvifFinder(NetworkOptions options, const Clock* clock);

  // INVALID_ARGUMENT naming the field of bad details or credential properties.
  absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(const v0::DiscoverRequest& request) override;

 private:
  NetworkFactory networks_;
};

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_FINDER_H_
