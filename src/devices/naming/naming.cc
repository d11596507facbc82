#include "src/devices/naming/naming.h"

#include <blake2.h>

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace regatta::devices {

std::string InstanceDigest(absl::string_view device_id, absl::string_view node, bool shared) {
  constexpr size_t kDigestBytes = 3;
  blake2b_state state;
  // blake2b_init only fails for a digest length outside 1..64.
  blake2b_init(&state, kDigestBytes);
  blake2b_update(&state, reinterpret_cast<const uint8_t*>(device_id.data()), device_id.size());
  if (!shared) blake2b_update(&state, reinterpret_cast<const uint8_t*>(node.data()), node.size());
  uint8_t digest[kDigestBytes];
  blake2b_final(&state, digest, kDigestBytes);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), kDigestBytes));
}

std::string InstanceName(absl::string_view configuration, absl::string_view device_id,
                         absl::string_view node, bool shared) {
  return absl::StrCat(configuration, "-", InstanceDigest(device_id, node, shared));
}

std::string CdiName(absl::string_view configuration, absl::string_view device_id,
                    absl::string_view node, bool shared) {
  return absl::StrCat("akri.sh/", configuration, "=", InstanceDigest(device_id, node, shared));
}

std::string SlotName(absl::string_view instance, int index) {
  return absl::StrCat(instance, "-", index);
}

absl::StatusOr<int> SlotIndex(absl::string_view instance, absl::string_view slot) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat("slot '", slot, "' is not a slot of instance ",
                                                   instance, " (", instance, "-<index>)"));
  };
  if (slot.size() <= instance.size() + 1 || !absl::StartsWith(slot, instance) ||
      slot[instance.size()] != '-') {
    return invalid();
  }
  absl::string_view digits = slot.substr(instance.size() + 1);
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return invalid();
  }
  if (digits.size() > 1 && digits[0] == '0') return invalid();
  int index = 0;
  if (!absl::SimpleAtoi(digits, &index)) return invalid();
  return index;
}

}  // namespace regatta::devices
