#ifndef REGATTA_SRC_STORE_DEVICE_VIEWS_H_
#define REGATTA_SRC_STORE_DEVICE_VIEWS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/events.pb.h"
#include "src/store/pipeline_views.h"

namespace regatta::store {

// ---- Ingest mutation ------------------------------------------------------------------------
// One device event of the log (any of the device cases of regatta.v1.Event; see devices.proto,
// whose header states the rules). The event is its own mutation: the backend applies it by its
// case. Rules the backends keep (the conformance suite checks them):
//   * ConfigurationApplied creates or replaces by name: generation 1, then +1 per replacement;
//     create_time kept from the first; update_time the event's `created`; the output-only
//     status is never stored. ConfigurationDeleted deletes the Configuration, its node
//     statuses and its Instances with their slots;
//   * ConfigurationStatusUpdated replaces the (configuration, node) entry; one of an unknown
//     Configuration is skipped;
//   * InstanceNodeSeen creates the Instance (create_time the event's) or replaces its device
//     fields, and adds the node (seen time the event's). Slots follow the capacity: a new
//     Instance gets `capacity` free slots; a larger capacity adds free ones, a smaller drops
//     the slots past it. Skipped: an empty name or node, a capacity < 1, an unknown
//     Configuration, an Instance of another Configuration of that name;
//   * InstanceNodeLost removes the node and frees the slots claimed on it; without nodes left
//     the Instance and its slots are deleted. Unknown instance or node: ignored;
//   * DeviceSlotClaimed sets the slot's holder and node if it is free (same holder: no-op);
//     skipped for an unknown instance or slot, an empty holder, or a slot held by another;
//   * DeviceSlotReleased frees the slot if `holder` (or anyone, when empty) holds it;
//   * Secret/ConfigMap Applied replace by name (create_time kept from the first, update_time
//     the event's); Deleted removes. A Secret's output-only `keys` is never stored.
// What cannot be applied goes to IngestResult::skipped naming offset, event kind and row.
struct DeviceChange {
  regatta::v1::Event event;
};

// ---- Queries --------------------------------------------------------------------------------

struct InstanceFilter {
  std::string configuration_name;  // empty: any
  std::string node;                // empty: any; else Instances this node sees
  PageRequest page;
};

// The views of the device layer, kept by the same ingester and in the same transactions as the
// other views. Thread-safe. Listings are in name order and paged as PageRequest says. Errors:
// NOT_FOUND naming the kind and name; DATA_LOSS naming the row if a stored blob does not parse.
class DeviceViews {
 public:
  virtual ~DeviceViews() = default;

  // With status (node statuses in node order, instance count).
  virtual absl::StatusOr<regatta::v1::Configuration> GetConfiguration(absl::string_view name) = 0;
  virtual absl::StatusOr<Page<regatta::v1::Configuration>> ListConfigurations(
      const PageRequest& page) = 0;

  // With nodes (in name order) and device_usage.
  virtual absl::StatusOr<regatta::v1::Instance> GetInstance(absl::string_view name) = 0;
  virtual absl::StatusOr<Page<regatta::v1::Instance>> ListInstances(
      const InstanceFilter& filter) = 0;

  // With its values and keys (for the agents resolving discovery properties; the API strips
  // the values).
  virtual absl::StatusOr<regatta::v1::Secret> GetSecret(absl::string_view name) = 0;
  // Keys only: data is empty.
  virtual absl::StatusOr<Page<regatta::v1::Secret>> ListSecrets(const PageRequest& page) = 0;

  virtual absl::StatusOr<regatta::v1::ConfigMap> GetConfigMap(absl::string_view name) = 0;
  virtual absl::StatusOr<Page<regatta::v1::ConfigMap>> ListConfigMaps(const PageRequest& page) = 0;
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_DEVICE_VIEWS_H_
