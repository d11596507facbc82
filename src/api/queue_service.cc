#include "src/api/queue_service.h"

#include "absl/strings/str_cat.h"
#include "src/api/serve.h"
#include "src/common/error_text.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

constexpr int kDefaultQueuePageSize = 1000;
constexpr int kMaxQueuePageSize = 10000;

absl::Status QueueNotFound(absl::string_view name) {
  return absl::NotFoundError(absl::StrCat("queue \"", Abbreviate(name), "\" does not exist"));
}

}  // namespace

absl::Status QueueService::CatchUp() {
  return ctx_->wait_for_views(ctx_->log->LastOffset(), absl::Now() + ctx_->view_wait_timeout);
}

absl::StatusOr<regatta::v1::Queue> QueueService::CheckedSpec(regatta::v1::Queue queue) const {
  RETURN_IF_ERROR(ValidateQueueSpec(queue, ctx_->policy));
  RETURN_IF_ERROR(auth::ValidateQueuePermissions(queue));
  if (queue.priority_factor() == 0) queue.set_priority_factor(1);
  // Output-only fields are the server's.
  queue.clear_create_time();
  queue.clear_update_time();
  return queue;
}

absl::Status QueueService::PublishAndWait(const auth::Principal& principal, absl::string_view queue,
                                          regatta::v1::Event event) {
  regatta::v1::EventSequence seq;
  seq.set_queue(std::string(queue));
  seq.set_user_id(principal.name);
  for (const std::string& g : principal.groups) seq.add_groups(g);
  SetTimestamp(ctx_->clock->Now(), event.mutable_created());
  *seq.add_events() = std::move(event);
  std::vector<regatta::v1::EventSequence> batch;
  batch.push_back(std::move(seq));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ctx_->log->Append(std::move(batch)));
  return ctx_->wait_for_views(offsets.back(), absl::Now() + ctx_->view_wait_timeout);
}

absl::StatusOr<regatta::v1::Queue> QueueService::Create(const auth::Principal& principal,
                                                        regatta::v1::Queue queue) {
  RETURN_IF_ERROR(ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kCreateQueue));
  ASSIGN_OR_RETURN(queue, CheckedSpec(std::move(queue)));
  queue.set_cordoned(false);
  if (queue.permissions().empty()) {
    // Like a creator-owned queue in Armada: whoever creates it may do everything on it.
    *queue.add_permissions() = auth::CreatorQueuePermission(principal);
  }
  absl::MutexLock lock(&admin_mu_);
  RETURN_IF_ERROR(CatchUp());
  absl::StatusOr<regatta::v1::Queue> existing = ctx_->store->GetQueue(queue.name());
  if (existing.ok()) {
    return absl::AlreadyExistsError(
        absl::StrCat("queue \"", Abbreviate(queue.name()), "\" already exists"));
  }
  if (!absl::IsNotFound(existing.status())) return existing.status();
  regatta::v1::Event event;
  *event.mutable_queue_created()->mutable_queue() = queue;
  RETURN_IF_ERROR(PublishAndWait(principal, queue.name(), std::move(event)));
  return ctx_->store->GetQueue(queue.name());
}

absl::StatusOr<regatta::v1::Queue> QueueService::Update(const auth::Principal& principal,
                                                        regatta::v1::Queue queue) {
  RETURN_IF_ERROR(ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kCreateQueue));
  ASSIGN_OR_RETURN(queue, CheckedSpec(std::move(queue)));
  absl::MutexLock lock(&admin_mu_);
  RETURN_IF_ERROR(CatchUp());
  absl::StatusOr<regatta::v1::Queue> existing = ctx_->store->GetQueue(queue.name());
  if (absl::IsNotFound(existing.status())) return QueueNotFound(queue.name());
  if (!existing.ok()) return existing.status();
  // Cordoning has its own calls; an update keeps the current state.
  queue.set_cordoned(existing->cordoned());
  regatta::v1::Event event;
  *event.mutable_queue_updated()->mutable_queue() = queue;
  RETURN_IF_ERROR(PublishAndWait(principal, queue.name(), std::move(event)));
  return ctx_->store->GetQueue(queue.name());
}

absl::Status QueueService::Delete(const auth::Principal& principal, absl::string_view name) {
  RETURN_IF_ERROR(ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kDeleteQueue));
  absl::MutexLock lock(&admin_mu_);
  RETURN_IF_ERROR(CatchUp());
  absl::StatusOr<regatta::v1::Queue> existing = ctx_->store->GetQueue(name);
  if (absl::IsNotFound(existing.status())) return QueueNotFound(name);
  if (!existing.ok()) return existing.status();
  store::JobFilter active;
  active.queue = std::string(name);
  active.states = {regatta::v1::JOB_STATE_SUBMITTED, regatta::v1::JOB_STATE_QUEUED,
                   regatta::v1::JOB_STATE_LEASED, regatta::v1::JOB_STATE_PENDING,
                   regatta::v1::JOB_STATE_RUNNING};
  active.limit = 1;
  ASSIGN_OR_RETURN(auto jobs, ctx_->store->ListJobs(active));
  if (!jobs.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("queue \"", name, "\" still has active jobs (e.g. ", jobs[0].job_id(),
                     "); cancel them first, e.g. regatta cancel --queue ", name, " --job-set ",
                     jobs[0].job_set()));
  }
  regatta::v1::Event event;
  event.mutable_queue_deleted()->set_name(std::string(name));
  return PublishAndWait(principal, name, std::move(event));
}

absl::StatusOr<regatta::v1::ListQueuesResponse> QueueService::List(
    const regatta::v1::ListQueuesRequest& request) {
  if (request.page_size() < 0 || request.page_size() > kMaxQueuePageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: must be between 0 and ", kMaxQueuePageSize));
  }
  const int limit = request.page_size() == 0 ? kDefaultQueuePageSize : request.page_size();
  ASSIGN_OR_RETURN(auto queues, ctx_->store->ListQueues(request.page_token(), limit + 1));
  regatta::v1::ListQueuesResponse response;
  for (int i = 0; i < static_cast<int>(queues.size()) && i < limit; ++i) {
    *response.add_queues() = std::move(queues[i]);
  }
  if (static_cast<int>(queues.size()) > limit) {
    response.set_next_page_token(response.queues(limit - 1).name());
  }
  return response;
}

absl::StatusOr<regatta::v1::Queue> QueueService::SetCordoned(const auth::Principal& principal,
                                                             absl::string_view name,
                                                             bool cordoned) {
  RETURN_IF_ERROR(ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kCordonQueue));
  absl::MutexLock lock(&admin_mu_);
  RETURN_IF_ERROR(CatchUp());
  absl::StatusOr<regatta::v1::Queue> existing = ctx_->store->GetQueue(name);
  if (absl::IsNotFound(existing.status())) return QueueNotFound(name);
  if (!existing.ok()) return existing.status();
  regatta::v1::Event event;
  event.mutable_queue_cordoned()->set_name(std::string(name));
  event.mutable_queue_cordoned()->set_cordoned(cordoned);
  RETURN_IF_ERROR(PublishAndWait(principal, name, std::move(event)));
  return ctx_->store->GetQueue(name);
}

grpc::Status QueueService::CreateQueue(grpc::ServerContext* call,
                                       const regatta::v1::CreateQueueRequest* request,
                                       regatta::v1::Queue* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Create(p, request->queue()); });
}

grpc::Status QueueService::UpdateQueue(grpc::ServerContext* call,
                                       const regatta::v1::UpdateQueueRequest* request,
                                       regatta::v1::Queue* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Update(p, request->queue()); });
}

grpc::Status QueueService::DeleteQueue(grpc::ServerContext* call,
                                       const regatta::v1::DeleteQueueRequest* request,
                                       regatta::v1::DeleteQueueResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Delete(p, request->name()); });
}

grpc::Status QueueService::GetQueue(grpc::ServerContext* call,
                                    const regatta::v1::GetQueueRequest* request,
                                    regatta::v1::Queue* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) -> absl::StatusOr<regatta::v1::Queue> {
                 if (request->name().empty()) return absl::InvalidArgumentError("name: required");
                 absl::StatusOr<regatta::v1::Queue> q = ctx_->store->GetQueue(request->name());
                 if (absl::IsNotFound(q.status())) return QueueNotFound(request->name());
                 return q;
               });
}

grpc::Status QueueService::ListQueues(grpc::ServerContext* call,
                                      const regatta::v1::ListQueuesRequest* request,
                                      regatta::v1::ListQueuesResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) { return List(*request); });
}

grpc::Status QueueService::CordonQueue(grpc::ServerContext* call,
                                       const regatta::v1::CordonQueueRequest* request,
                                       regatta::v1::Queue* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return SetCordoned(p, request->name(), true); });
}

grpc::Status QueueService::UncordonQueue(grpc::ServerContext* call,
                                         const regatta::v1::CordonQueueRequest* request,
                                         regatta::v1::Queue* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return SetCordoned(p, request->name(), false); });
}

}  // namespace regatta::api
