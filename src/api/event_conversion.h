#ifndef REGATTA_SRC_API_EVENT_CONVERSION_H_
#define REGATTA_SRC_API_EVENT_CONVERSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "regatta/v1/event_service.pb.h"
#include "src/eventlog/event_log.h"

namespace regatta::api {

// Position of a user-facing event: (log offset, index in the sequence, index among the events
// one log event turns into). Written as "offset-index-sub".
struct EventPosition {
  int64_t offset = 0;
  int32_t index = 0;
  int32_t sub = 0;
  auto operator<=>(const EventPosition&) const = default;
};

std::string FormatEventId(const EventPosition& pos);
// std::nullopt if `id` is not of the form "offset-index-sub".
std::optional<EventPosition> ParseEventId(absl::string_view id);

// Converts one log record into the user-facing events of its job set, statelessly: requests
// become *-ING events (CANCELLING, PREEMPTING), outcomes become their states. SubmitJob yields
// SUBMITTED then QUEUED.
void ConvertRecord(const eventlog::LogRecord& record, std::vector<regatta::v1::JobSetEvent>* out);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_EVENT_CONVERSION_H_
