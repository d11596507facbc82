#ifndef REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_

// What a discovery handler implements; HandlerServer turns it into the DiscoveryHandler service
// (validate once, then stream the full list whenever it changes).

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/devices/protocol/change_notifier.h"

namespace regatta::devices {

// One validated Discover request.
class DeviceQuery {
 public:
  virtual ~DeviceQuery() = default;
  // Every device the request finds now (an empty list means none). An error ends the stream
  // with that status.
  virtual absl::StatusOr<std::vector<v0::Device>> ListDevices() = 0;
};

class DeviceFinder {
 public:
  virtual ~DeviceFinder() = default;
  // Validates the request's discovery details and properties: INVALID_ARGUMENT naming the field
  // on bad input (the agent reports it on the Configuration), else the query to list.
  virtual absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(
      const v0::DiscoverRequest& request) = 0;
  // Notified whenever the result of any query may have changed (a file written, a device
  // plugged in); the server then lists again and sends the list if it differs.
  virtual const ChangeNotifier& changes() const = 0;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_
