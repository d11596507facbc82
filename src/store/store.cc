#include "src/store/store.h"

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

}  // namespace regatta::store
