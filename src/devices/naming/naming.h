#ifndef REGATTA_SRC_DEVICES_NAMING_NAMING_H_
#define REGATTA_SRC_DEVICES_NAMING_NAMING_H_

// The names of discovered devices, as Akri gives them so that names agree across agents:
//   Instance  "<configuration>-<6 hex>", the hex being BLAKE2b with a 3-byte digest (the digest
//             length is a parameter of the hash, not a truncation) of the device id for a shared
//             device, or of the id followed directly by the node name for a local one (so the
//             same USB id on two nodes gives two Instances);
//   CDI name  "regatta.dev/<configuration>=<6 hex>";
//   slot      "<instance>-<i>" for i < capacity.

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::devices {

// The 6 lowercase hex chars that end an Instance name.
std::string InstanceDigest(absl::string_view device_id, absl::string_view node, bool shared);

std::string InstanceName(absl::string_view configuration, absl::string_view device_id,
                         absl::string_view node, bool shared);

std::string CdiName(absl::string_view configuration, absl::string_view device_id,
                    absl::string_view node, bool shared);

std::string SlotName(absl::string_view instance, int index);

// The index of a slot of `instance`: INVALID_ARGUMENT unless `slot` is "<instance>-<i>" with i a
// decimal number without sign or leading zeros.
absl::StatusOr<int> SlotIndex(absl::string_view instance, absl::string_view slot);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_NAMING_NAMING_H_
