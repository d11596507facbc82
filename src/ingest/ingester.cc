#include "src/ingest/ingester.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"

namespace regatta::ingest {
namespace {

using regatta::v1::Event;
using store::OffsetMutation;

absl::Time EventTime(const Event& event) {
  return absl::FromUnixSeconds(event.created().seconds()) +
         absl::Nanoseconds(event.created().nanos());
}

regatta::v1::Error MakeError(regatta::v1::ErrorReason reason, std::string message,
                             absl::string_view category, bool terminal) {
  regatta::v1::Error error;
  error.set_reason(reason);
  error.set_message(std::move(message));
  error.set_category(std::string(category));
  error.set_terminal(terminal);
  return error;
}

// Collects the mutations of one record; every mutation carries the record's offset.
class Converter {
 public:
  // With `owned`, the record's jobs are moved into the mutations instead of copied.
  Converter(const eventlog::LogRecord& record, eventlog::LogRecord* owned)
      : record_(record), owned_(owned) {}

  std::vector<OffsetMutation> Convert() {
    const auto& events = record_.sequence.events();
    for (int i = 0; i < events.size(); ++i) ConvertEvent(i, events[i]);
    return std::move(out_);
  }

 private:
  void Add(store::Mutation mutation) {
    out_.push_back(OffsetMutation{record_.offset, std::move(mutation)});
  }

  // The event itself, moved out of an owned record, else copied (pipeline and device events
  // are their own mutations).
  void TakeEvent(int index, const Event& event, Event& out) {
    if (owned_ != nullptr) {
      out.Swap(owned_->sequence.mutable_events(index));
    } else {
      out = event;
    }
  }

  void Warn(int index, absl::string_view why) {
    LOG_WARN("skipping a log event", "offset", record_.offset, "event", index, "queue",
             record_.sequence.queue(), "job_set", record_.sequence.job_set(), "reason", why);
  }

  // False (with a warning) if an event lacks the job id every job event needs.
  bool HasJobId(int index, absl::string_view job_id) {
    if (!job_id.empty()) return true;
    Warn(index, "the event has no job id");
    return false;
  }
  bool HasRunIds(int index, absl::string_view job_id, absl::string_view run_id) {
    if (!job_id.empty() && !run_id.empty()) return true;
    Warn(index, "the event has no job id or run id");
    return false;
  }

  void SetJobState(const std::string& job_id, regatta::v1::JobState state, absl::Time time,
                   std::string run_id = "", std::optional<regatta::v1::Error> error = {},
                   std::string reason = "") {
    store::JobSetState m;
    m.job_id = job_id;
    m.state = state;
    m.time = time;
    m.run_id = std::move(run_id);
    m.error = std::move(error);
    m.reason = std::move(reason);
    Add(std::move(m));
  }

  void SetRunState(const std::string& run_id, regatta::v1::RunState state, absl::Time time,
                   std::optional<regatta::v1::Error> error = {}) {
    store::RunSetState m;
    m.run_id = run_id;
    m.state = state;
    m.time = time;
    m.error = std::move(error);
    Add(std::move(m));
  }

  void Queue(int index, const regatta::v1::Queue& queue, const Event& event) {
    store::QueueUpsert m;
    m.queue = queue;
    if (m.queue.name().empty()) m.queue.set_name(record_.sequence.queue());
    if (m.queue.name().empty()) return Warn(index, "the queue event names no queue");
    // The store keeps the create_time of an existing queue.
    *m.queue.mutable_create_time() = event.created();
    *m.queue.mutable_update_time() = event.created();
    Add(std::move(m));
  }

  void ConvertEvent(int index, const Event& event) {
    const auto& seq = record_.sequence;
    const absl::Time time = EventTime(event);
    switch (event.event_case()) {
      // ---- Requests ----
      case Event::kSubmitJob: {
        const regatta::v1::Job& job = event.submit_job().job();
        if (!HasJobId(index, job.id())) return;
        store::JobInsert m;
        if (owned_ != nullptr) {
          m.job.Swap(owned_->sequence.mutable_events(index)->mutable_submit_job()->mutable_job());
        } else {
          m.job = job;
        }
        // The sequence routes the job; fill what an older writer may have left out.
        if (m.job.queue().empty()) m.job.set_queue(seq.queue());
        if (m.job.job_set().empty()) m.job.set_job_set(seq.job_set());
        if (m.job.owner().empty()) m.job.set_owner(seq.user_id());
        if (!m.job.has_submit_time()) *m.job.mutable_submit_time() = event.created();
        Add(std::move(m));
        return;
      }
      case Event::kCancelJob: {
        const auto& e = event.cancel_job();
        if (!HasJobId(index, e.job_id())) return;
        Add(store::JobCancelRequested{e.job_id(), e.reason(), seq.user_id()});
        return;
      }
      case Event::kCancelJobSet: {
        const auto& e = event.cancel_job_set();
        store::JobSetCancelRequested m;
        m.queue = seq.queue();
        m.job_set = seq.job_set();
        for (int s : e.states()) m.states.push_back(static_cast<regatta::v1::JobState>(s));
        m.reason = e.reason();
        m.user = seq.user_id();
        Add(std::move(m));
        return;
      }
      case Event::kReprioritizeJob: {
        // Needs no decision: the views apply the request at once.
        const auto& e = event.reprioritize_job();
        if (!HasJobId(index, e.job_id())) return;
        Add(store::JobSetPriority{e.job_id(), e.new_priority()});
        return;
      }
      case Event::kPreemptJob: {
        const auto& e = event.preempt_job();
        if (!HasJobId(index, e.job_id())) return;
        Add(store::JobPreemptRequested{e.job_id(), e.reason()});
        return;
      }
      case Event::kQueueCreated:
        return Queue(index, event.queue_created().queue(), event);
      case Event::kQueueUpdated:
        return Queue(index, event.queue_updated().queue(), event);
      case Event::kQueueDeleted: {
        std::string name = event.queue_deleted().name();
        if (name.empty()) name = seq.queue();
        if (name.empty()) return Warn(index, "the queue event names no queue");
        Add(store::QueueDelete{std::move(name)});
        return;
      }
      case Event::kQueueCordoned: {
        std::string name = event.queue_cordoned().name();
        if (name.empty()) name = seq.queue();
        if (name.empty()) return Warn(index, "the queue event names no queue");
        Add(store::QueueSetCordoned{std::move(name), event.queue_cordoned().cordoned(), time});
        return;
      }

      // ---- Scheduler outcomes ----
      case Event::kJobRunLeased: {
        const auto& e = event.job_run_leased();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        store::RunInsert m;
        m.run.set_run_id(e.run_id());
        m.run.set_job_id(e.job_id());
        m.run.set_executor_id(e.executor_id());
        m.run.set_node_id(e.node_id());
        m.run.set_pool(e.pool());
        m.run.set_state(regatta::v1::RUN_STATE_LEASED);
        *m.run.mutable_leased_time() = event.created();
        Add(std::move(m));
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_LEASED, time, e.run_id());
        return;
      }
      case Event::kJobRequeued: {
        const auto& e = event.job_requeued();
        if (!HasJobId(index, e.job_id())) return;
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_QUEUED, time);
        return;
      }
      case Event::kJobSucceeded: {
        const auto& e = event.job_succeeded();
        if (!HasJobId(index, e.job_id())) return;
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_SUCCEEDED, time);
        return;
      }
      case Event::kJobFailed: {
        const auto& e = event.job_failed();
        if (!HasJobId(index, e.job_id())) return;
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_FAILED, time, "", e.error());
        return;
      }
      case Event::kJobCancelled: {
        const auto& e = event.job_cancelled();
        if (!HasJobId(index, e.job_id())) return;
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_CANCELLED, time, "", std::nullopt,
                    e.reason());
        return;
      }
      case Event::kJobPreempted: {
        const auto& e = event.job_preempted();
        if (!HasJobId(index, e.job_id())) return;
        std::string message = e.reason();
        if (!e.preempting_job_id().empty()) {
          absl::StrAppend(&message, message.empty() ? "" : "; ", "preempted by job ",
                          e.preempting_job_id(), " of queue ", e.preempting_queue());
        }
        if (message.empty()) message = "preempted";
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_PREEMPTED, time, "",
                    MakeError(regatta::v1::ERROR_REASON_PREEMPTED, message, "Preemption", true),
                    e.reason());
        return;
      }
      case Event::kJobRejected: {
        const auto& e = event.job_rejected();
        if (!HasJobId(index, e.job_id())) return;
        std::string message = e.message();
        // Sorted, so the same event always gives the same error.
        std::map<std::string, std::string> pools(e.reasons_by_pool().begin(),
                                                 e.reasons_by_pool().end());
        for (const auto& [pool, reason] : pools) {
          absl::StrAppend(&message, message.empty() ? "" : "; ", "pool ", pool, ": ", reason);
        }
        if (message.empty()) message = "the job can never be scheduled";
        SetJobState(
            e.job_id(), regatta::v1::JOB_STATE_REJECTED, time, "",
            MakeError(regatta::v1::ERROR_REASON_UNSCHEDULABLE, message, "Unschedulable", true),
            e.message());
        return;
      }
      case Event::kJobReprioritized: {
        const auto& e = event.job_reprioritized();
        if (!HasJobId(index, e.job_id())) return;
        Add(store::JobSetPriority{e.job_id(), e.new_priority()});
        return;
      }
      case Event::kJobRunLeaseExpired: {
        const auto& e = event.job_run_lease_expired();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_LEASE_EXPIRED, time,
                    MakeError(regatta::v1::ERROR_REASON_LEASE_EXPIRED,
                              "the executor stopped reporting the run", "Infrastructure", false));
        return;
      }
      case Event::kPartitionMarker:
        return;  // for the scheduler's leader hand-over only

      // ---- Executor outcomes ----
      case Event::kJobRunPending: {
        const auto& e = event.job_run_pending();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_PENDING, time);
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_PENDING, time, e.run_id());
        return;
      }
      case Event::kJobRunRunning: {
        const auto& e = event.job_run_running();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_RUNNING, time);
        SetJobState(e.job_id(), regatta::v1::JOB_STATE_RUNNING, time, e.run_id());
        return;
      }
      case Event::kJobRunSucceeded: {
        const auto& e = event.job_run_succeeded();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_SUCCEEDED, time);
        return;
      }
      case Event::kJobRunFailed: {
        const auto& e = event.job_run_failed();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_FAILED, time, e.error());
        return;
      }
      case Event::kJobRunCancelled: {
        const auto& e = event.job_run_cancelled();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_CANCELLED, time);
        return;
      }
      case Event::kJobRunPreempted: {
        const auto& e = event.job_run_preempted();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_PREEMPTED, time);
        return;
      }
      case Event::kJobRunLeaseReturned: {
        const auto& e = event.job_run_lease_returned();
        if (!HasRunIds(index, e.job_id(), e.run_id())) return;
        SetRunState(e.run_id(), regatta::v1::RUN_STATE_LEASE_RETURNED, time,
                    MakeError(regatta::v1::ERROR_REASON_LEASE_RETURNED,
                              e.reason().empty() ? "the executor returned the lease" : e.reason(),
                              "Infrastructure", false));
        return;
      }
      // ---- Pipelines (API server and pipeline engine) ----
      // Each is its own mutation; its times are the event's own fields.
      case Event::kPipelineCreated:
      case Event::kPipelineDeleted:
      case Event::kPipelineVersionCreated:
      case Event::kPipelineVersionDeleted:
      case Event::kExperimentUpserted:
      case Event::kExperimentDeleted:
      case Event::kPipelineRunCreated:
      case Event::kPipelineRunUpdated:
      case Event::kPipelineRunArchived:
      case Event::kPipelineRunDeleted:
      case Event::kPipelineTaskUpdated:
      case Event::kCacheEntryCreated:
      case Event::kCacheEntriesDeleted:
      case Event::kRecurringRunUpserted:
      case Event::kRecurringRunDeleted: {
        store::PipelineChange m;
        TakeEvent(index, event, m.event);
        Add(std::move(m));
        return;
      }
      // ---- Devices (API server, device agents, scheduler) ----
      // Each is its own mutation, like the pipeline events.
      case Event::kConfigurationApplied:
      case Event::kConfigurationDeleted:
      case Event::kConfigurationStatusUpdated:
      case Event::kInstanceNodeSeen:
      case Event::kInstanceNodeLost:
      case Event::kDeviceSlotClaimed:
      case Event::kDeviceSlotReleased:
      case Event::kSecretApplied:
      case Event::kSecretDeleted:
      case Event::kConfigMapApplied:
      case Event::kConfigMapDeleted: {
        store::DeviceChange m;
        TakeEvent(index, event, m.event);
        Add(std::move(m));
        return;
      }

      case Event::EVENT_NOT_SET:
        return Warn(index, "the event has no payload (written by a newer version?)");
    }
    Warn(index, absl::StrCat("unknown event case ", static_cast<int>(event.event_case())));
  }

  const eventlog::LogRecord& record_;
  eventlog::LogRecord* owned_;
  std::vector<OffsetMutation> out_;
};

// Warnings per batch beyond this are counted, not logged one by one.
constexpr int kMaxSkipWarningsPerBatch = 10;

}  // namespace

std::vector<OffsetMutation> ConvertSequence(const eventlog::LogRecord& record) {
  return Converter(record, nullptr).Convert();
}

std::vector<OffsetMutation> ConvertSequence(eventlog::LogRecord&& record) {
  return Converter(record, &record).Convert();
}

Ingester::Ingester(eventlog::EventLog* log, store::Store* store, const Clock* clock,
                   std::string consumer, IngesterOptions options)
    : log_(log),
      store_(store),
      clock_(clock),
      consumer_(std::move(consumer)),
      options_(std::move(options)) {}

Ingester::~Ingester() { Stop(); }

void Ingester::AddObserver(BatchObserver observer) { observers_.push_back(std::move(observer)); }

absl::Status Ingester::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("the ingester was already started");
    started_ = true;
  }
  absl::StatusOr<int64_t> offset = store_->GetConsumerOffset(consumer_);
  if (!offset.ok()) {
    absl::MutexLock lock(&mu_);
    started_ = false;
    return offset.status();
  }
  read_offset_ = *offset;
  batch_.reset();
  {
    absl::MutexLock lock(&mu_);
    queue_.clear();
    queued_mutations_ = 0;
    ingested_ = *offset;
  }
  LOG_INFO("ingester starting", "consumer", consumer_, "offset", *offset);
  thread_ = std::thread([this] {
    SetThreadName("rg-ingest");
    // Per thread on Linux; raising one's own nice value needs no privilege.
    if (options_.thread_nice != 0 &&
        ::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), options_.thread_nice) != 0) {
      LOG_WARN("cannot lower the ingest thread's priority", "nice", options_.thread_nice, "error",
               std::strerror(errno));
    }
    Run();
  });
  return absl::OkStatus();
}

void Ingester::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) {
    thread_.join();
    LOG_INFO("ingester stopped", "consumer", consumer_, "offset", IngestedOffset());
  }
}

absl::Status Ingester::WaitForOffset(int64_t offset, absl::Time deadline) {
  // The deadline is in the injected clock's time; waiting itself takes real time.
  absl::Duration timeout = deadline - clock_->Now();
  absl::MutexLock lock(&mu_);
  auto reached = [this, offset]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return ingested_ >= offset || stopping_;
  };
  if (!reached() && timeout > absl::ZeroDuration()) {
    ++waiters_;  // no linger starts while someone waits for the views
    mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
    --waiters_;
  }
  if (ingested_ >= offset) return absl::OkStatus();
  if (stopping_) {
    return absl::UnavailableError(absl::StrCat("the ingester stopped at offset ", ingested_,
                                               " before reaching offset ", offset));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("the views are at log offset ", ingested_, ", still short of offset ", offset));
}

int64_t Ingester::IngestedOffset() const {
  absl::MutexLock lock(&mu_);
  return ingested_;
}

absl::Status Ingester::CatchUp() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("CatchUp after Start");
    queue_.clear();
    queued_mutations_ = 0;
  }
  ASSIGN_OR_RETURN(int64_t offset, store_->GetConsumerOffset(consumer_));
  read_offset_ = offset;
  batch_.reset();
  Publish(offset);
  const int64_t target = log_->LastOffset();
  while (IngestedOffset() < target) {
    ASSIGN_OR_RETURN(bool applied, Step(/*may_linger=*/false));
    if (!applied) break;  // the log holds less than it said
  }
  return absl::OkStatus();
}

void Ingester::Run() {
  absl::Duration backoff = options_.initial_backoff;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) break;
    }
    absl::StatusOr<bool> applied = Step(/*may_linger=*/true);
    if (!applied.ok()) {
      LOG_ERROR("ingest failed; retrying", "consumer", consumer_, "offset", IngestedOffset(),
                "retry_in", absl::FormatDuration(backoff), "error", applied.status().ToString());
      if (!Backoff(backoff)) break;
      continue;
    }
    backoff = options_.initial_backoff;
    if (*applied) continue;
    // Real time: the log's wait is a real-time wait, whatever clock the process runs on.
    // Lingering, the next record (read and weighed by the next Step) or the linger's end
    // comes first.
    absl::Time until = absl::Now() + options_.poll_timeout;
    {
      absl::MutexLock lock(&mu_);
      if (linger_until_ != absl::InfinitePast()) until = std::min(until, linger_until_);
    }
    log_->WaitForAppend(read_offset_, until);
  }
}

absl::StatusOr<bool> Ingester::Step(bool may_linger) {
  if (!batch_.has_value()) {
    int room;
    {
      absl::MutexLock lock(&mu_);
      room = ReadRoom();
    }
    if (room > 0) {
      ASSIGN_OR_RETURN(std::vector<PendingRecord> records, ReadMore(room));
      Enqueue(std::move(records));
    }
    absl::MutexLock lock(&mu_);
    if (queue_.empty()) return false;
    if (may_linger && LingerLocked()) return false;
    linger_until_ = absl::InfinitePast();
    FillBatch();
  }
  RETURN_IF_ERROR(ApplyBatch());
  return true;
}

bool Ingester::LingerLocked() {
  if (options_.linger <= absl::ZeroDuration() || waiters_ > 0 || stopping_ ||
      static_cast<int>(queue_.size()) >= options_.max_records_per_batch) {
    return false;
  }
  for (const PendingRecord& record : queue_) {
    if (record.urgent) return false;
  }
  const absl::Time now = absl::Now();
  if (linger_until_ == absl::InfinitePast()) linger_until_ = now + options_.linger;
  return now < linger_until_;
}

absl::StatusOr<std::vector<Ingester::PendingRecord>> Ingester::ReadMore(int max_records) {
  ASSIGN_OR_RETURN(std::vector<eventlog::LogRecord> records,
                   log_->Read(read_offset_, std::max(1, max_records)));
  std::vector<PendingRecord> out;
  out.reserve(records.size());
  size_t mutations = 0;
  for (eventlog::LogRecord& record : records) {
    if (record.offset <= read_offset_) continue;  // never apply a record twice
    read_offset_ = record.offset;
    int64_t offset = record.offset;
    out.push_back(PendingRecord{offset, ConvertSequence(std::move(record))});
    PendingRecord& pending = out.back();
    mutations += pending.mutations.size();
    if (options_.linger > absl::ZeroDuration() && options_.urgent) {
      pending.urgent =
          std::any_of(pending.mutations.begin(), pending.mutations.end(), options_.urgent);
    }
  }
  if (!out.empty()) {
    mutations_per_record_ = std::max<int>(1, static_cast<int>(mutations / out.size()));
  }
  return out;
}

void Ingester::Enqueue(std::vector<PendingRecord> records) {
  absl::MutexLock lock(&mu_);
  for (PendingRecord& record : records) {
    queued_mutations_ += static_cast<int64_t>(record.mutations.size());
    queue_.push_back(std::move(record));
  }
}

int Ingester::ReadRoom() const {
  // The queue holds up to two batches' worth, in records and in mutations (a record can hold
  // thousands of jobs), and one read brings about one batch, so memory stays bounded.
  const int max_records = std::max(1, options_.max_records_per_batch);
  const int64_t max_mutations = std::max(1, options_.max_mutations_per_batch);
  const int records_room = 2 * max_records - static_cast<int>(queue_.size());
  const int64_t mutations_room = 2 * max_mutations - queued_mutations_;
  if (records_room <= 0 || mutations_room <= 0) return 0;
  const int64_t per_read = std::max<int64_t>(1, max_mutations / mutations_per_record_);
  const int64_t by_room = std::max<int64_t>(1, mutations_room / mutations_per_record_);
  return static_cast<int>(std::min<int64_t>({records_room, max_records, per_read, by_room}));
}

void Ingester::FillBatch() {
  const int max_records = std::max(1, options_.max_records_per_batch);
  const size_t max_mutations = static_cast<size_t>(std::max(1, options_.max_mutations_per_batch));
  batch_.emplace();
  batch_->consumer = consumer_;
  int records = 0;
  while (!queue_.empty() && records < max_records) {
    PendingRecord& record = queue_.front();
    if (records > 0 && batch_->mutations.size() + record.mutations.size() > max_mutations) break;
    queued_mutations_ -= static_cast<int64_t>(record.mutations.size());
    batch_->mutations.insert(batch_->mutations.end(),
                             std::make_move_iterator(record.mutations.begin()),
                             std::make_move_iterator(record.mutations.end()));
    batch_->to_offset = record.offset;
    ++records;
    queue_.pop_front();
  }
}

absl::Status Ingester::ApplyBatch() {
  ASSIGN_OR_RETURN(store::IngestResult result, store_->ApplyIngestBatch(*batch_));
  for (size_t i = 0; i < result.skipped.size() && i < kMaxSkipWarningsPerBatch; ++i) {
    LOG_WARN("skipped an event the views cannot apply", "consumer", consumer_, "detail",
             result.skipped[i]);
  }
  if (result.skipped.size() > kMaxSkipWarningsPerBatch) {
    LOG_WARN("skipped more events the views cannot apply", "consumer", consumer_, "count",
             result.skipped.size() - kMaxSkipWarningsPerBatch, "to_offset", batch_->to_offset);
  }
  for (const BatchObserver& observer : observers_) observer(*batch_);
  int64_t to_offset = batch_->to_offset;
  batch_.reset();
  Publish(to_offset);
  return absl::OkStatus();
}

void Ingester::Publish(int64_t offset) {
  absl::MutexLock lock(&mu_);
  ingested_ = std::max(ingested_, offset);
}

bool Ingester::Backoff(absl::Duration& delay) {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopping_), delay);
  delay = std::min(delay * 2, options_.max_backoff);
  return !stopping_;
}

}  // namespace regatta::ingest
