#include "src/store/store.h"

#include <algorithm>
#include <iterator>
#include <limits>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/pod/armada.h"
#include "src/common/status_macros.h"

namespace regatta::store {

absl::StatusOr<SchedulerDelta> Store::LoadSchedulerDelta(absl::string_view consumer,
                                                         int64_t after_offset) {
  SchedulerDelta all;
  RETURN_IF_ERROR(StreamSchedulerDelta(
      consumer, after_offset, std::numeric_limits<size_t>::max(), [&](SchedulerDelta& chunk) {
        all.offset = chunk.offset;
        all.jobs_in_load = std::max(all.jobs_in_load, chunk.jobs_in_load);
        auto append = [](auto& from, auto& to) {
          if (to.empty()) {
            to = std::move(from);
          } else {
            to.insert(to.end(), std::make_move_iterator(from.begin()),
                      std::make_move_iterator(from.end()));
          }
          from.clear();
        };
        append(chunk.queues, all.queues);
        append(chunk.jobs, all.jobs);
        append(chunk.runs, all.runs);
        all.templates.merge(chunk.templates);
        return absl::OkStatus();
      }));
  return all;
}

absl::StatusOr<std::vector<JobLocation>> Store::FindJobs(const JobSelector& selector) {
  std::vector<JobLocation> all;
  RETURN_IF_ERROR(StreamJobs(selector, std::numeric_limits<size_t>::max(),
                             [&](std::vector<JobLocation>& chunk) {
                               if (all.empty()) {
                                 all = std::move(chunk);
                               } else {
                                 all.insert(all.end(), std::make_move_iterator(chunk.begin()),
                                            std::make_move_iterator(chunk.end()));
                               }
                               return absl::OkStatus();
                             }));
  return all;
}

absl::Status StreamSchedulerDeltaAhead(
    Store& store, absl::string_view consumer, int64_t after_offset, size_t max_jobs_per_chunk,
    absl::FunctionRef<absl::Status(SchedulerDelta& chunk)> on_chunk) {
  // One hand-over slot between the reader and the caller; chunks are swapped, not copied, so
  // both sides keep reusing rows (and their strings' buffers).
  absl::Mutex mu;
  absl::CondVar changed;
  SchedulerDelta slot;
  bool slot_full = false;
  bool reader_done = false;
  bool caller_failed = false;
  absl::Status read_status;
  std::thread reader([&] {
    absl::Status status = store.StreamSchedulerDelta(
        consumer, after_offset, max_jobs_per_chunk, [&](SchedulerDelta& chunk) -> absl::Status {
          absl::MutexLock lock(&mu);
          while (slot_full && !caller_failed) changed.Wait(&mu);
          if (caller_failed) return absl::CancelledError("the caller stopped the load");
          std::swap(slot, chunk);
          slot_full = true;
          changed.SignalAll();
          return absl::OkStatus();
        });
    absl::MutexLock lock(&mu);
    read_status = std::move(status);
    reader_done = true;
    changed.SignalAll();
  });
  absl::Status apply_status;
  SchedulerDelta chunk;
  while (true) {
    {
      absl::MutexLock lock(&mu);
      while (!slot_full && !reader_done) changed.Wait(&mu);
      if (!slot_full) break;  // the reader is done and everything was handed over
      std::swap(slot, chunk);
      slot_full = false;
      changed.SignalAll();
    }
    apply_status = on_chunk(chunk);
    if (!apply_status.ok()) {
      absl::MutexLock lock(&mu);
      caller_failed = true;
      changed.SignalAll();
      break;
    }
  }
  reader.join();
  if (!apply_status.ok()) return apply_status;
  return read_status;
}

SchedulerJobRow SubmittedJobRow(const regatta::v1::Job& job) {
  SchedulerJobRow row;
  row.job_id = job.id();
  row.queue = job.queue();
  row.job_set = job.job_set();
  row.state = regatta::v1::JOB_STATE_QUEUED;
  row.priority = job.priority();
  row.priority_class = job.priority_class();
  row.submit_time = absl::FromUnixMicros(
      google::protobuf::util::TimeUtil::TimestampToMicroseconds(job.submit_time()));
  return row;
}

bool IsTerminal(regatta::v1::JobState state) {
  switch (state) {
    case regatta::v1::JOB_STATE_SUCCEEDED:
    case regatta::v1::JOB_STATE_FAILED:
    case regatta::v1::JOB_STATE_CANCELLED:
    case regatta::v1::JOB_STATE_PREEMPTED:
    case regatta::v1::JOB_STATE_REJECTED:
      return true;
    default:
      return false;
  }
}

bool IsTerminal(regatta::v1::RunState state) {
  switch (state) {
    case regatta::v1::RUN_STATE_SUCCEEDED:
    case regatta::v1::RUN_STATE_FAILED:
    case regatta::v1::RUN_STATE_PREEMPTED:
    case regatta::v1::RUN_STATE_CANCELLED:
    case regatta::v1::RUN_STATE_LEASE_EXPIRED:
    case regatta::v1::RUN_STATE_LEASE_RETURNED:
      return true;
    default:
      return false;
  }
}

bool IsTerminal(regatta::v1::PipelineRunState state) {
  switch (state) {
    case regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED:
    case regatta::v1::PIPELINE_RUN_STATE_SKIPPED:
    case regatta::v1::PIPELINE_RUN_STATE_FAILED:
    case regatta::v1::PIPELINE_RUN_STATE_CANCELED:
      return true;
    default:
      return false;
  }
}

bool IsTerminal(regatta::v1::PipelineTaskState state) {
  switch (state) {
    case regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED:
    case regatta::v1::PIPELINE_TASK_STATE_SKIPPED:
    case regatta::v1::PIPELINE_TASK_STATE_FAILED:
    case regatta::v1::PIPELINE_TASK_STATE_CANCELED:
    case regatta::v1::PIPELINE_TASK_STATE_CACHED:
    case regatta::v1::PIPELINE_TASK_STATE_NOT_TRIGGERED:
      return true;
    default:
      return false;
  }
}

regatta::v1::Job SchedulingSpec(const regatta::v1::Job& job) {
  regatta::v1::Job out;
  const regatta::v1::TaskSpec& task = job.task();
  regatta::v1::TaskSpec* t = out.mutable_task();
  *t->mutable_resources()->mutable_requests() = task.resources().requests();
  *t->mutable_node_selector() = task.node_selector();
  *t->mutable_tolerations() = task.tolerations();
  if (task.has_node_affinity()) *t->mutable_node_affinity() = task.node_affinity();
  if (task.has_active_deadline()) *t->mutable_active_deadline() = task.active_deadline();
  out.set_priority_class(job.priority_class());
  if (job.gang().cardinality() > 1 || !job.gang().node_uniformity_label().empty()) {
    out.mutable_gang()->set_cardinality(job.gang().cardinality());
    out.mutable_gang()->set_node_uniformity_label(job.gang().node_uniformity_label());
  }
  if (job.has_retry_policy()) *out.mutable_retry_policy() = job.retry_policy();
  if (pod::ArmadaFailFast(job.annotations())) {
    (*out.mutable_annotations())[std::string(pod::kArmadaFailFastAnnotation)] = "true";
  }
  return out;
}

std::string SerializeDeterministic(const google::protobuf::MessageLite& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

}  // namespace regatta::store
