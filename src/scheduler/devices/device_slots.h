#ifndef REGATTA_SRC_SCHEDULER_DEVICES_DEVICE_SLOTS_H_
#define REGATTA_SRC_SCHEDULER_DEVICES_DEVICE_SLOTS_H_

// Devices as schedulable resources (the Akri model: a pod asks for `akri.sh/<name>`).
//
// A job asks for a device in its resource requests:
//   regatta.dev/<instance>       a slot of that Instance ("cam-1a2b3c": 1)
//   regatta.dev/<configuration>  a slot of any Instance of that Configuration ("cam": 1)
// A name that is both an Instance and a Configuration means the Instance.
//
// Each cycle the scheduler builds a DeviceSlots from the Instance views and the slots it knows
// to be held, adds the device resources to the nodes (an Instance's capacity on every node that
// sees it; a Configuration's, the sum over its Instances there), lets the pool round place jobs
// as with any resource, and then claims concrete free slots for each lease. The round counts a
// shared Instance's slots on every node that sees it, so it may place more jobs on a shared
// device than it has free slots; the claim is the authority and a lease without slots is
// dropped (the job stays queued).

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/devices.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"

namespace regatta::scheduler {

// Whether any request of the list is a device.
bool RequestsDevices(const ResourceList& requests, const ResourceNames& names);

struct DeviceClaim {
  std::string instance;
  std::string slot;
  bool operator==(const DeviceClaim&) const = default;
};

class DeviceSlots {
 public:
  // `instances` as the views hold them; their device_usage is not read (see Hold).
  explicit DeviceSlots(std::vector<regatta::v1::Instance> instances);

  // Marks a slot as held by `holder`. Unknown slots are ignored (the Instance is gone).
  void Hold(absl::string_view slot, absl::string_view holder);

  // Adds to each node's allocatable the device resources it can offer.
  void AddAllocatable(std::vector<Node>& nodes, ResourceNames& names) const;

  // Takes free slots for every device request of `requests` (a quantity of n asks for n slots)
  // on Instances that `node` sees, for `holder`: all or none. Instances are tried in name
  // order, slots in index order. Nullopt if some request cannot be met now.
  std::optional<std::vector<DeviceClaim>> Claim(const ResourceList& requests,
                                                absl::string_view node, absl::string_view holder,
                                                const ResourceNames& names);
  // Frees slots taken by Claim (a gang that could not be claimed whole).
  void Unclaim(const std::vector<DeviceClaim>& claims);

  const regatta::v1::Instance* FindInstance(absl::string_view name) const;
  // Slot -> holder, for every held slot.
  const absl::flat_hash_map<std::string, std::string>& holders() const { return holders_; }

 private:
  struct Entry {
    regatta::v1::Instance instance;
    std::vector<std::string> slots;
    absl::flat_hash_set<std::string> nodes;
  };
  // Instances that may serve `name` on `node`, in name order.
  std::vector<Entry*> Candidates(absl::string_view name, absl::string_view node);

  std::vector<Entry> entries_;  // name order
  absl::flat_hash_map<std::string, size_t> by_instance_;
  absl::flat_hash_map<std::string, std::vector<size_t>> by_configuration_;
  absl::flat_hash_map<std::string, std::string> slot_instance_;
  absl::flat_hash_map<std::string, std::string> holders_;
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_DEVICES_DEVICE_SLOTS_H_
