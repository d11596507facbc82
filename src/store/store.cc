#include "src/store/store.h"

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace regatta::store {

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
