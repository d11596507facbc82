#include "src/api/event_service.h"

#include "absl/strings/str_cat.h"
#include "src/api/event_conversion.h"
#include "src/api/grpc_status.h"

namespace regatta::api {
namespace {
constexpr int kRecordsPerRead = 256;
// How often a watch wakes up without new records to notice a cancelled call or shutdown.
constexpr absl::Duration kWatchPoll = absl::Milliseconds(250);
}  // namespace

grpc::Status EventService::GetJobSetEvents(grpc::ServerContext* call,
                                           const regatta::v1::JobSetEventsRequest* request,
                                           grpc::ServerWriter<regatta::v1::JobSetEvent>* writer) {
  absl::StatusOr<auth::Principal> principal = AuthenticateCall(*ctx_, call);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (request->queue().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("queue: required"));
  }
  if (request->job_set().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("job_set: required"));
  }
  absl::StatusOr<regatta::v1::Queue> queue = ctx_->store->GetQueue(request->queue());
  if (absl::IsNotFound(queue.status())) {
    return ToGrpcStatus(
        absl::NotFoundError(absl::StrCat("queue \"", request->queue(), "\" does not exist")));
  }
  if (!queue.ok()) return ToGrpcStatus(queue.status());
  absl::Status allowed =
      ctx_->authorizer->CheckQueueVerb(*principal, *queue, auth::QueueVerb::kWatch);
  if (!allowed.ok()) return ToGrpcStatus(allowed);

  EventPosition resume_after{0, -1, -1};
  if (!request->from_id().empty()) {
    std::optional<EventPosition> pos = ParseEventId(request->from_id());
    if (!pos) {
      return ToGrpcStatus(absl::InvalidArgumentError(absl::StrCat(
          "from_id: \"", request->from_id(), "\" is not an event id (offset-index-sub)")));
    }
    resume_after = *pos;
  }
  // Records at resume_after.offset may hold events after the resume point, so start there.
  int64_t after = resume_after.offset > 0 ? resume_after.offset - 1 : 0;
  std::vector<regatta::v1::JobSetEvent> events;
  while (!call->IsCancelled() && !stopping_) {
    // Note the log's end before reading, so an append racing with the read is not missed.
    const int64_t log_end = ctx_->log->LastOffset();
    absl::StatusOr<std::vector<eventlog::LogRecord>> records =
        ctx_->log->ReadJobSet(request->queue(), request->job_set(), after, kRecordsPerRead);
    if (!records.ok()) return ToGrpcStatus(records.status());
    // Clients see only durable events (AppendVisible ones may still be syncing).
    if (!records->empty()) {
      if (absl::Status durable = ctx_->log->WaitDurable(records->back().offset); !durable.ok()) {
        return ToGrpcStatus(durable);
      }
    }
    for (const auto& record : *records) {
      events.clear();
      ConvertRecord(record, &events);
      for (const auto& ev : events) {
        std::optional<EventPosition> pos = ParseEventId(ev.id());
        if (pos && *pos <= resume_after) continue;
        if (!writer->Write(ev)) return grpc::Status::OK;  // the client went away
      }
      after = record.offset;
    }
    if (static_cast<int>(records->size()) == kRecordsPerRead) continue;
    if (!request->watch()) break;
    // Everything up to log_end is read; wait for anything newer.
    after = std::max(after, log_end);
    ctx_->log->WaitForAppend(after, absl::Now() + kWatchPoll);
  }
  return grpc::Status::OK;
}

}  // namespace regatta::api
