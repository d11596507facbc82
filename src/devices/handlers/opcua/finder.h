#ifndef REGATTA_SRC_DEVICES_HANDLERS_OPCUA_FINDER_H_
#define REGATTA_SRC_DEVICES_HANDLERS_OPCUA_FINDER_H_

// The OPC UA handler behind the discovery protocol (`regatta dh opcua`): each Discover call
// validates its details once, then lists the servers again every relist interval of the
// HandlerServer (there is no event source: servers are polled, as in Akri), which sends the
// list only when it changed.

#include <memory>

#include "src/devices/handlers/opcua/client.h"
#include "src/devices/protocol/device_finder.h"

namespace regatta::devices::opcua {

class OpcuaFinder final : public DeviceFinder {
 public:
  // `client` outlives the finder and its queries, and may be used from several threads.
  explicit OpcuaFinder(DiscoveryClient* client) : client_(client) {}

  // INVALID_ARGUMENT naming the field when the discovery details are wrong.
  absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(const v0::DiscoverRequest& request) override;

 private:
  DiscoveryClient* const client_;
};

}  // namespace regatta::devices::opcua

#endif  // REGATTA_SRC_DEVICES_HANDLERS_OPCUA_FINDER_H_
