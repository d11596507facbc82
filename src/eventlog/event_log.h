#ifndef REGATTA_SRC_EVENTLOG_EVENT_LOG_H_
#define REGATTA_SRC_EVENTLOG_EVENT_LOG_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/events.pb.h"

namespace regatta::eventlog {

// One durable entry of the log. Offsets start at 1 and increase by one per sequence.
struct LogRecord {
  int64_t offset = 0;
  regatta::v1::EventSequence sequence;
};

// What the caller of an append waits for: durability (EventLog::Append), or only visibility
// (EventLog::AppendVisible).
enum class AppendWait { kDurable, kVisible };

// The source of truth. Backends: SQLite (embedded), NATS JetStream (later). Every backend
// passes tests/conformance/event_log_conformance.h.
class EventLog {
 public:
  virtual ~EventLog() = default;

  // Appends `sequences` atomically and in order, and returns their offsets. Returns only once
  // the records are durable (fsync'd); concurrent callers are group-committed into one write.
  // INVALID_ARGUMENT if a sequence is larger than the backend's record limit.
  virtual absl::StatusOr<std::vector<int64_t>> Append(
      std::vector<regatta::v1::EventSequence> sequences) = 0;

  // As Append, but returns once the records are committed and visible to readers (Read,
  // LastOffset, WaitForAppend), which may be before they are durable. They become durable in
  // order: once a record is durable, so is every record before it. A process crash loses
  // nothing either way; a machine crash may lose such a tail. Use it where that loss is
  // recoverable, or call WaitDurable before telling anyone outside the process. Backends
  // without the distinction append durably.
  virtual absl::StatusOr<std::vector<int64_t>> AppendVisible(
      std::vector<regatta::v1::EventSequence> sequences) {
    return Append(std::move(sequences));
  }

  // Blocks until every record up to `offset` is durable. An error means the log can no longer
  // promise durability (e.g. fsync failed) or is closed.
  virtual absl::Status WaitDurable(int64_t /*offset*/) { return absl::OkStatus(); }

  // Up to `max_records` records with offset > `after`, in offset order.
  virtual absl::StatusOr<std::vector<LogRecord>> Read(int64_t after, int max_records) = 0;

  // As Read, but only records of one (queue, job set).
  virtual absl::StatusOr<std::vector<LogRecord>> ReadJobSet(absl::string_view queue,
                                                            absl::string_view job_set,
                                                            int64_t after, int max_records) = 0;

  // Offset of the last visible record (see AppendVisible); 0 when the log is empty.
  virtual int64_t LastOffset() = 0;

  // Blocks until LastOffset() > `after` or `deadline` passes; returns LastOffset().
  virtual int64_t WaitForAppend(int64_t after, absl::Time deadline) = 0;
};

}  // namespace regatta::eventlog

#endif  // REGATTA_SRC_EVENTLOG_EVENT_LOG_H_
