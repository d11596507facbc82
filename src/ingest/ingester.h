#ifndef REGATTA_SRC_INGEST_INGESTER_H_
#define REGATTA_SRC_INGEST_INGESTER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/common/clock.h"
#include "src/eventlog/event_log.h"
#include "src/store/store.h"

namespace regatta::ingest {

// Turns one log record into the store mutations its events cause, in event order, each tagged
// with the record's offset. Pure: the same record always gives the same mutations (replay
// equality depends on it), so times come from the events, never from a clock. Events that
// cannot be converted (no event set, missing ids) are left out with a warning.
std::vector<store::OffsetMutation> ConvertSequence(const eventlog::LogRecord& record);
// The same, moving the record's jobs into the mutations instead of copying them.
std::vector<store::OffsetMutation> ConvertSequence(eventlog::LogRecord&& record);

struct IngesterOptions {
  // Records per store batch (one transaction)...
  int max_records_per_batch = 500;
  // ...and at most this many mutations per batch (but at least one record).
  int max_mutations_per_batch = 20000;
  // How long one wait for new records lasts; bounds how long Stop() takes.
  absl::Duration poll_timeout = absl::Milliseconds(200);
  // Retry delays after a log or store error: doubling from initial to max.
  absl::Duration initial_backoff = absl::Milliseconds(50);
  absl::Duration max_backoff = absl::Seconds(5);
  // Added to the ingest thread's nice value (0: none). Readers of the views tolerate a lag of
  // a few milliseconds; the threads on a pipeline step's path (engine, scheduler, executor) do
  // not, and on two busy cores an ingest that preempts them costs every step.
  int thread_nice = 0;
  // Group commit: records that come one at a time (a pipeline chain appends three per step)
  // wait up to this long for more before they are applied, so that one transaction applies
  // several. A record with a mutation `urgent` says yes ends the wait when it is read; none
  // starts while a WaitForOffset caller waits (one that comes during a wait waits at most
  // this much longer). Zero: every record is applied as it comes.
  absl::Duration linger = absl::ZeroDuration();
  // Without it, every record is urgent.
  std::function<bool(const store::OffsetMutation&)> urgent;
};

// The query ingester: the only writer of the query views. It reads the log from the
// consumer's stored offset and applies the events in batches, each batch together with the
// new offset in one store transaction, so a restart resumes exactly where it stopped.
// One thread reads about a batch's worth of records, converts them and applies them, in turn
// (a reader thread overlapping with the writer measured slower on two busy cores).
// A store or log error is logged and retried with backoff; an event that cannot be applied
// (e.g. for an unknown job) is skipped with a warning and never stalls the stream.
class Ingester {
 public:
  // `log`, `store` and `clock` must outlive the ingester. `clock` gives the time base of
  // WaitForOffset deadlines.
  Ingester(eventlog::EventLog* log, store::Store* store, const Clock* clock,
           std::string consumer = "query", IngesterOptions options = {});
  ~Ingester();  // Stops.
  Ingester(const Ingester&) = delete;
  Ingester& operator=(const Ingester&) = delete;

  // Called on the ingest thread after each batch is applied (the views then include it), in
  // log order; must be quick. Set before Start.
  using BatchObserver = std::function<void(const store::IngestBatch& batch)>;
  void AddObserver(BatchObserver observer);

  // Loads the consumer's stored offset (returning a store error as is) and starts the
  // thread. An ingester starts once: FAILED_PRECONDITION after a Start.
  absl::Status Start();
  // Stops and joins the thread (records read but not applied are read again on the next
  // start); WaitForOffset callers get UNAVAILABLE. Idempotent.
  void Stop();

  // Blocks until everything up to `offset` is applied (OK), `deadline` (in the clock's time)
  // passes (DEADLINE_EXCEEDED), or the ingester stops (UNAVAILABLE).
  absl::Status WaitForOffset(int64_t offset, absl::Time deadline);
  // The offset of the last record applied to the store.
  int64_t IngestedOffset() const;

  // Ingests on the caller's thread until the views include the log's last offset as of the
  // call (tools and tests; not after Start). Returns the first error without retrying.
  absl::Status CatchUp();

 private:
  struct PendingRecord {
    int64_t offset = 0;
    std::vector<store::OffsetMutation> mutations;
    bool urgent = true;  // see IngesterOptions::linger
  };

  void Run();
  // Reads and converts more records if there is room, then applies one batch (or retries the
  // one that failed). False if there was nothing to apply, or if `may_linger` and the queued
  // records wait for more (see IngesterOptions::linger).
  absl::StatusOr<bool> Step(bool may_linger);
  // Whether the queued records wait for more now; starts the wait when they begin to.
  bool LingerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reads up to `max_records` records after read_offset_ and converts them.
  absl::StatusOr<std::vector<PendingRecord>> ReadMore(int max_records);
  void Enqueue(std::vector<PendingRecord> records) ABSL_LOCKS_EXCLUDED(mu_);
  // How many records the reader may read now: 0 if the queue is full.
  int ReadRoom() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Moves queued records into batch_, as many as the batch limits allow.
  void FillBatch() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Applies batch_; on success publishes its offset and clears it (else keeps it to retry).
  absl::Status ApplyBatch();
  void Publish(int64_t offset) ABSL_LOCKS_EXCLUDED(mu_);
  // Sleeps for the backoff or until Stop; false if stopping.
  bool Backoff(absl::Duration& delay) ABSL_LOCKS_EXCLUDED(mu_);

  eventlog::EventLog* const log_;
  store::Store* const store_;
  const Clock* const clock_;
  const std::string consumer_;
  const IngesterOptions options_;

  // Only touched by the ingest thread (or CatchUp).
  int64_t read_offset_ = 0;  // last offset read from the log
  // Mutations per record in the last read, to size the next read; first guess: one submit
  // request of 1000 jobs.
  int mutations_per_record_ = 1000;
  std::optional<store::IngestBatch> batch_;  // built, not yet applied
  std::vector<BatchObserver> observers_;

  mutable absl::Mutex mu_;
  std::deque<PendingRecord> queue_ ABSL_GUARDED_BY(mu_);  // read and converted, not in a batch
  int64_t queued_mutations_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t ingested_ ABSL_GUARDED_BY(mu_) = 0;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // WaitForOffset callers waiting now: no linger starts meanwhile.
  int waiters_ ABSL_GUARDED_BY(mu_) = 0;
  // While queued records linger: until when (real time); InfinitePast otherwise.
  absl::Time linger_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread thread_;
};

}  // namespace regatta::ingest

#endif  // REGATTA_SRC_INGEST_INGESTER_H_
