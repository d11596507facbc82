#ifndef REGATTA_SRC_PIPELINES_SCHEDULE_UUID5_H_
#define REGATTA_SRC_PIPELINES_SCHEDULE_UUID5_H_

// Name-based UUIDs, version 5 (RFC 4122 §4.3): SHA-1 over the namespace UUID's 16 bytes then the
// name, first 16 bytes of the digest, version nibble 5 and RFC 4122 variant bits.

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::pipelines::schedule {

using UuidBytes = std::array<uint8_t, 16>;

// Parses "8-4-4-4-12" hex (either case).
absl::StatusOr<UuidBytes> ParseUuid(absl::string_view text);
// "8-4-4-4-12" lower-case hex.
std::string FormatUuid(const UuidBytes& uuid);
UuidBytes Uuid5(const UuidBytes& name_space, absl::string_view name);

}  // namespace regatta::pipelines::schedule

#endif  // REGATTA_SRC_PIPELINES_SCHEDULE_UUID5_H_
