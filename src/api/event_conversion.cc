#include "src/api/event_conversion.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace regatta::api {
namespace {

using regatta::v1::Event;
using regatta::v1::JobSetEvent;
using T = regatta::v1::JobEventType;

}  // namespace

std::string FormatEventId(const EventPosition& pos) {
  return absl::StrCat(pos.offset, "-", pos.index, "-", pos.sub);
}

std::optional<EventPosition> ParseEventId(absl::string_view id) {
  std::vector<absl::string_view> parts = absl::StrSplit(id, '-');
  EventPosition pos;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &pos.offset) ||
      !absl::SimpleAtoi(parts[1], &pos.index) || !absl::SimpleAtoi(parts[2], &pos.sub) ||
      pos.offset < 0 || pos.index < 0 || pos.sub < 0) {
    return std::nullopt;
  }
  return pos;
}

void ConvertRecord(const eventlog::LogRecord& record, std::vector<JobSetEvent>* out) {
  const auto& seq = record.sequence;
  for (int i = 0; i < seq.events_size(); ++i) {
    const Event& e = seq.events(i);
    int sub = 0;
    auto add = [&](T type, const std::string& job_id) -> JobSetEvent& {
      JobSetEvent& ev = out->emplace_back();
      ev.set_id(FormatEventId({record.offset, i, sub++}));
      *ev.mutable_created() = e.created();
      ev.set_queue(seq.queue());
      ev.set_job_set(seq.job_set());
      ev.set_user_id(seq.user_id());
      ev.set_job_id(job_id);
      ev.set_type(type);
      return ev;
    };
    switch (e.event_case()) {
      case Event::kSubmitJob:
        add(T::JOB_EVENT_TYPE_SUBMITTED, e.submit_job().job().id());
        add(T::JOB_EVENT_TYPE_QUEUED, e.submit_job().job().id());
        break;
      case Event::kCancelJob:
        add(T::JOB_EVENT_TYPE_CANCELLING, e.cancel_job().job_id())
            .set_reason(e.cancel_job().reason());
        break;
      case Event::kCancelJobSet: {
        JobSetEvent& ev = add(T::JOB_EVENT_TYPE_CANCEL_JOB_SET, "");
        *ev.mutable_states() = e.cancel_job_set().states();
        ev.set_reason(e.cancel_job_set().reason());
        break;
      }
      case Event::kReprioritizeJob:
        add(T::JOB_EVENT_TYPE_REPRIORITIZED, e.reprioritize_job().job_id())
            .set_new_priority(e.reprioritize_job().new_priority());
        break;
      case Event::kPreemptJob:
        add(T::JOB_EVENT_TYPE_PREEMPTING, e.preempt_job().job_id())
            .set_reason(e.preempt_job().reason());
        break;
      case Event::kJobRunLeased: {
        const auto& l = e.job_run_leased();
        JobSetEvent& ev = add(T::JOB_EVENT_TYPE_LEASED, l.job_id());
        ev.set_run_id(l.run_id());
        ev.set_node_id(l.node_id());
        ev.set_executor_id(l.executor_id());
        break;
      }
      case Event::kJobRequeued:
        add(T::JOB_EVENT_TYPE_REQUEUED, e.job_requeued().job_id());
        break;
      case Event::kJobSucceeded:
        add(T::JOB_EVENT_TYPE_SUCCEEDED, e.job_succeeded().job_id());
        break;
      case Event::kJobFailed:
        *add(T::JOB_EVENT_TYPE_FAILED, e.job_failed().job_id()).mutable_error() =
            e.job_failed().error();
        break;
      case Event::kJobCancelled:
        add(T::JOB_EVENT_TYPE_CANCELLED, e.job_cancelled().job_id())
            .set_reason(e.job_cancelled().reason());
        break;
      case Event::kJobPreempted: {
        const auto& p = e.job_preempted();
        JobSetEvent& ev = add(T::JOB_EVENT_TYPE_PREEMPTED, p.job_id());
        ev.set_run_id(p.run_id());
        ev.set_reason(p.reason());
        break;
      }
      case Event::kJobRejected:
        add(T::JOB_EVENT_TYPE_REJECTED, e.job_rejected().job_id())
            .set_reason(e.job_rejected().message());
        break;
      case Event::kJobReprioritized:
        add(T::JOB_EVENT_TYPE_REPRIORITIZED, e.job_reprioritized().job_id())
            .set_new_priority(e.job_reprioritized().new_priority());
        break;
      case Event::kJobRunLeaseExpired:
        add(T::JOB_EVENT_TYPE_LEASE_EXPIRED, e.job_run_lease_expired().job_id())
            .set_run_id(e.job_run_lease_expired().run_id());
        break;
      case Event::kJobRunPending:
        add(T::JOB_EVENT_TYPE_PENDING, e.job_run_pending().job_id())
            .set_run_id(e.job_run_pending().run_id());
        break;
      case Event::kJobRunRunning:
        add(T::JOB_EVENT_TYPE_RUNNING, e.job_run_running().job_id())
            .set_run_id(e.job_run_running().run_id());
        break;
      case Event::kJobRunSucceeded:
        add(T::JOB_EVENT_TYPE_RUN_SUCCEEDED, e.job_run_succeeded().job_id())
            .set_run_id(e.job_run_succeeded().run_id());
        break;
      case Event::kJobRunFailed: {
        JobSetEvent& ev = add(T::JOB_EVENT_TYPE_RUN_FAILED, e.job_run_failed().job_id());
        ev.set_run_id(e.job_run_failed().run_id());
        *ev.mutable_error() = e.job_run_failed().error();
        break;
      }
      case Event::kJobRunLeaseReturned: {
        JobSetEvent& ev =
            add(T::JOB_EVENT_TYPE_LEASE_RETURNED, e.job_run_lease_returned().job_id());
        ev.set_run_id(e.job_run_lease_returned().run_id());
        ev.set_reason(e.job_run_lease_returned().reason());
        break;
      }
      // Run-level cancel/preempt are followed by the job-level outcome; queue administration,
      // markers and the pipeline layer's events are not job events.
      case Event::kJobRunCancelled:
      case Event::kJobRunPreempted:
      case Event::kQueueCreated:
      case Event::kQueueUpdated:
      case Event::kQueueDeleted:
      case Event::kQueueCordoned:
      case Event::kPartitionMarker:
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
      case Event::kRecurringRunDeleted:
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
      case Event::kConfigMapDeleted:
      case Event::EVENT_NOT_SET:
        break;
    }
  }
}

}  // namespace regatta::api
