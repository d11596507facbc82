#ifndef REGATTA_SRC_DEVICES_CONFIG_FIELD_ERROR_H_
#define REGATTA_SRC_DEVICES_CONFIG_FIELD_ERROR_H_

// Internal to src/devices/config: the one shape of its errors.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace regatta::devices {

// INVALID_ARGUMENT "<path>: <problem>", the path spelled as files spell it
// ("discoveryHandler.discoveryProperties[1].valueFrom").
inline absl::Status FieldError(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_CONFIG_FIELD_ERROR_H_
