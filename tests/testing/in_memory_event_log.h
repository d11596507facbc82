#ifndef REGATTA_TESTS_TESTING_IN_MEMORY_EVENT_LOG_H_
#define REGATTA_TESTS_TESTING_IN_MEMORY_EVENT_LOG_H_

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/eventlog/event_log.h"

namespace regatta::testing {

// A faithful in-memory EventLog for unit tests: offsets from 1, atomic in-order appends,
// thread-safe, WaitForAppend on a condition. Nothing is durable. Faults can be injected.
class InMemoryEventLog final : public eventlog::EventLog {
 public:
  // `max_record_bytes`: a larger sequence makes Append fail with INVALID_ARGUMENT.
  explicit InMemoryEventLog(size_t max_record_bytes = 4 << 20)
      : max_record_bytes_(max_record_bytes) {}

  absl::StatusOr<std::vector<int64_t>> Append(
      std::vector<regatta::v1::EventSequence> sequences) override;
  absl::StatusOr<std::vector<eventlog::LogRecord>> Read(int64_t after, int max_records) override;
  absl::StatusOr<std::vector<eventlog::LogRecord>> ReadJobSet(absl::string_view queue,
                                                              absl::string_view job_set,
                                                              int64_t after,
                                                              int max_records) override;
  int64_t LastOffset() override;
  int64_t WaitForAppend(int64_t after, absl::Time deadline) override;

  // The next `count` Read calls fail with `status`.
  void FailReads(int count, absl::Status status = absl::UnavailableError("injected read error"));
  // Number of Read calls so far (including failed ones).
  int read_calls() const;

 private:
  const size_t max_record_bytes_;
  mutable absl::Mutex mu_;
  std::vector<eventlog::LogRecord> records_ ABSL_GUARDED_BY(mu_);  // records_[i].offset == i+1
  int failing_reads_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status read_error_ ABSL_GUARDED_BY(mu_);
  int read_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_TESTING_IN_MEMORY_EVENT_LOG_H_
