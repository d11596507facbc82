#ifndef REGATTA_SRC_CLI_TABLE_H_
#define REGATTA_SRC_CLI_TABLE_H_

// Plain-text tables and the short names and times the human output uses.

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "regatta/v1/event_service.pb.h"
#include "regatta/v1/types.pb.h"

namespace regatta::cli {

// Left-aligned columns separated by three spaces, like kubectl; no trailing spaces.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  // Missing cells are empty; extra cells are an invariant violation and are dropped.
  void AddRow(std::vector<std::string> cells);
  size_t rows() const { return rows_.size(); }
  // Header line then one line per row, each ending in '\n'.
  std::string Render() const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Key/value lines ("Queue:     team-a") with the values aligned.
class Details {
 public:
  void Add(std::string key, std::string value) {
    rows_.push_back({std::move(key), std::move(value)});
  }
  std::string Render() const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

// Enum names without their type prefix: "QUEUED", "LEASE_EXPIRED", "CONTAINER_ERROR".
std::string JobStateName(regatta::v1::JobState state);
std::string RunStateName(regatta::v1::RunState state);
std::string EventTypeName(regatta::v1::JobEventType type);
std::string ErrorReasonName(regatta::v1::ErrorReason reason);

// Where and when the output is rendered (injected so tests are deterministic).
struct RenderContext {
  absl::Time now = absl::Now();
  absl::TimeZone zone = absl::LocalTimeZone();
};

bool IsSet(const google::protobuf::Timestamp& ts);
absl::Time ToAbslTime(const google::protobuf::Timestamp& ts);
// RFC 3339 in the context's zone, e.g. "2024-05-01T10:00:00+02:00"; "" when unset.
std::string FormatTime(const google::protobuf::Timestamp& ts, const RenderContext& ctx);
// RFC 3339 with milliseconds, for event lines.
std::string FormatTimeMillis(const google::protobuf::Timestamp& ts, const RenderContext& ctx);
// Age as kubectl prints it: "45s", "12m", "3h", "5d"; "" when unset.
std::string FormatAge(const google::protobuf::Timestamp& ts, const RenderContext& ctx);
// "2024-05-01T10:00:00+02:00 (12m ago)"; "" when unset.
std::string FormatTimeWithAge(const google::protobuf::Timestamp& ts, const RenderContext& ctx);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_TABLE_H_
