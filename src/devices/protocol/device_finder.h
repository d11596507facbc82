#ifndef REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_

// What a discovery handler implements; HandlerServer turns it into the DiscoveryHandler service
// (validate once, then stream the full list whenever it changes).

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
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
  // Blocks until the list may have changed since this last returned (true; the server lists
  // again and sends the list if it differs) or `timeout` passes (false). A spurious true is
  // harmless; a missed change is not. Queries with their own event source (a udev monitor per
  // call) implement it directly; others derive from NotifiedDeviceQuery.
  virtual bool WaitForPossibleChange(absl::Duration timeout) = 0;
};

// A query woken by a ChangeNotifier that its finder shares between all its queries (a watched
// file, a periodic probe).
class NotifiedDeviceQuery : public DeviceQuery {
 public:
  // `changes` outlives the query.
  explicit NotifiedDeviceQuery(const ChangeNotifier& changes)
      : changes_(changes), seen_(changes.generation()) {}
  bool WaitForPossibleChange(absl::Duration timeout) override {
    uint64_t now = changes_.WaitForChange(seen_, timeout);
    bool changed = now != seen_;
    seen_ = now;
    return changed;
  }

 private:
  const ChangeNotifier& changes_;
  uint64_t seen_;  // the generation the last wait returned (or the one at creation)
};

class DeviceFinder {
 public:
  virtual ~DeviceFinder() = default;
  // Validates the request's discovery details and properties: INVALID_ARGUMENT naming the field
  // on bad input (the agent reports it on the Configuration), else the query to list.
  virtual absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(
      const v0::DiscoverRequest& request) = 0;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_DEVICE_FINDER_H_
