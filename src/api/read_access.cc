#include "src/api/read_access.h"

#include "absl/strings/str_cat.h"
#include "src/api/auth/permissions.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

constexpr auth::QueueVerb kReadVerb = auth::QueueVerb::kWatch;
constexpr auth::GlobalPermission kReadAll = auth::GlobalPermission::kWatchAllEvents;
// Queues per store read while collecting the readable ones.
constexpr int kQueuesPerRead = 1000;

}  // namespace

ReadAccess::ReadAccess(const ApiContext& ctx, const auth::Principal& principal)
    : ctx_(ctx), principal_(principal), all_(ctx.authorizer->HasGlobal(principal, kReadAll)) {}

absl::StatusOr<ReadAccess::Decision> ReadAccess::Decide(absl::string_view queue) {
  if (auto it = decisions_.find(queue); it != decisions_.end()) return it->second;
  Decision decision;
  absl::StatusOr<regatta::v1::Queue> found = ctx_.store->GetQueue(queue);
  if (found.ok()) {
    decision.exists = true;
    decision.readable = ctx_.authorizer->HasQueueVerb(principal_, *found, kReadVerb);
  } else if (absl::IsNotFound(found.status())) {
    decision.readable = All();
  } else {
    return found.status();
  }
  decisions_.emplace(queue, decision);
  return decision;
}

absl::StatusOr<bool> ReadAccess::MayRead(absl::string_view queue) {
  if (All()) return true;
  ASSIGN_OR_RETURN(Decision decision, Decide(queue));
  return decision.readable;
}

absl::Status ReadAccess::Check(absl::string_view queue, absl::string_view what) {
  if (All()) return absl::OkStatus();
  ASSIGN_OR_RETURN(Decision decision, Decide(queue));
  if (decision.readable) return absl::OkStatus();
  const std::string of_queue = absl::StrCat(what, " of queue \"", queue, "\"");
  if (!decision.exists) return CheckAll(of_queue, "the queue does not exist");
  return absl::PermissionDeniedError(
      absl::StrCat("user \"", principal_.name, "\" may not read ", of_queue, " (needs verb \"",
                   auth::QueueVerbName(kReadVerb), "\" on the queue or permission \"",
                   auth::GlobalPermissionName(kReadAll), "\")"));
}

absl::StatusOr<bool> ReadAccess::MayReadOwned(absl::string_view queue, absl::string_view owner) {
  if (!principal_.anonymous && owner == principal_.name) return true;
  return MayRead(queue);
}

absl::Status ReadAccess::CheckOwned(absl::string_view queue, absl::string_view owner,
                                    absl::string_view what) {
  if (!principal_.anonymous && owner == principal_.name) return absl::OkStatus();
  return Check(queue, what);
}

absl::StatusOr<const std::pair<std::string, std::string>*> ReadAccess::RunOf(
    absl::string_view run_id) {
  auto it = runs_.find(run_id);
  if (it == runs_.end()) {
    std::pair<std::string, std::string> queue_and_owner;
    absl::StatusOr<regatta::v1::PipelineRun> run = ctx_.store->GetPipelineRun(run_id, false);
    if (run.ok()) {
      queue_and_owner = {run->queue(), run->owner()};
    } else if (!absl::IsNotFound(run.status())) {
      return run.status();
    }
    it = runs_.emplace(run_id, std::move(queue_and_owner)).first;
  }
  return &it->second;
}

absl::StatusOr<bool> ReadAccess::MayReadRun(absl::string_view run_id) {
  if (All()) return true;
  ASSIGN_OR_RETURN(const auto* run, RunOf(run_id));
  if (run->first.empty()) return false;
  return MayReadOwned(run->first, run->second);
}

absl::Status ReadAccess::CheckRun(absl::string_view run_id, absl::string_view what) {
  if (All()) return absl::OkStatus();
  ASSIGN_OR_RETURN(const auto* run, RunOf(run_id));
  if (run->first.empty()) {
    return CheckAll(what, absl::StrCat("its pipeline run \"", run_id, "\" does not exist"));
  }
  return CheckOwned(run->first, run->second, what);
}

absl::Status ReadAccess::CheckAll(absl::string_view what, absl::string_view why) const {
  if (All()) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat("user \"", principal_.name, "\" may not read ",
                                                  what, " (", why, "; needs permission \"",
                                                  auth::GlobalPermissionName(kReadAll), "\")"));
}

absl::StatusOr<std::vector<std::string>> ReadAccess::ReadableQueues() {
  std::vector<std::string> readable;
  std::string after;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<regatta::v1::Queue> queues,
                     ctx_.store->ListQueues(after, kQueuesPerRead));
    for (const regatta::v1::Queue& queue : queues) {
      const bool may = ctx_.authorizer->HasQueueVerb(principal_, queue, kReadVerb);
      decisions_.insert_or_assign(queue.name(), Decision{true, may});
      if (may) readable.push_back(queue.name());
    }
    if (static_cast<int>(queues.size()) < kQueuesPerRead) return readable;
    after = queues.back().name();
  }
}

}  // namespace regatta::api
