#include "tests/testing/in_memory_event_log.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace regatta::testing {

absl::StatusOr<std::vector<int64_t>> InMemoryEventLog::Append(
    std::vector<regatta::v1::EventSequence> sequences) {
  // Validate everything first: an append is all or nothing.
  for (size_t i = 0; i < sequences.size(); ++i) {
    size_t size = sequences[i].ByteSizeLong();
    if (size > max_record_bytes_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "sequence ", i, " is ", size, " bytes, over the record limit of ", max_record_bytes_));
    }
  }
  absl::MutexLock lock(&mu_);
  std::vector<int64_t> offsets;
  offsets.reserve(sequences.size());
  for (auto& sequence : sequences) {
    eventlog::LogRecord record;
    record.offset = static_cast<int64_t>(records_.size()) + 1;
    record.sequence = std::move(sequence);
    offsets.push_back(record.offset);
    records_.push_back(std::move(record));
  }
  return offsets;
}

absl::StatusOr<std::vector<eventlog::LogRecord>> InMemoryEventLog::Read(int64_t after,
                                                                        int max_records) {
  absl::MutexLock lock(&mu_);
  ++read_calls_;
  if (failing_reads_ > 0) {
    --failing_reads_;
    return read_error_;
  }
  std::vector<eventlog::LogRecord> out;
  int64_t begin = std::max<int64_t>(after, 0);
  for (int64_t i = begin;
       i < static_cast<int64_t>(records_.size()) && static_cast<int>(out.size()) < max_records;
       ++i) {
    out.push_back(records_[i]);
  }
  return out;
}

absl::StatusOr<std::vector<eventlog::LogRecord>> InMemoryEventLog::ReadJobSet(
    absl::string_view queue, absl::string_view job_set, int64_t after, int max_records) {
  absl::MutexLock lock(&mu_);
  std::vector<eventlog::LogRecord> out;
  int64_t begin = std::max<int64_t>(after, 0);
  for (int64_t i = begin;
       i < static_cast<int64_t>(records_.size()) && static_cast<int>(out.size()) < max_records;
       ++i) {
    const auto& seq = records_[i].sequence;
    if (seq.queue() == queue && seq.job_set() == job_set) out.push_back(records_[i]);
  }
  return out;
}

int64_t InMemoryEventLog::LastOffset() {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(records_.size());
}

int64_t InMemoryEventLog::WaitForAppend(int64_t after, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto appended = [this, after]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return static_cast<int64_t>(records_.size()) > after;
  };
  mu_.AwaitWithDeadline(absl::Condition(&appended), deadline);
  return static_cast<int64_t>(records_.size());
}

void InMemoryEventLog::FailReads(int count, absl::Status status) {
  absl::MutexLock lock(&mu_);
  failing_reads_ = count;
  read_error_ = std::move(status);
}

int InMemoryEventLog::read_calls() const {
  absl::MutexLock lock(&mu_);
  return read_calls_;
}

}  // namespace regatta::testing
