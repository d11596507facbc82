#include "src/api/rest/gateway.h"

#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "nlohmann/json.hpp"
#include "src/api/auth/principal.h"
#include "src/api/rest/errors.h"
#include "src/api/rest/proto_json.h"
#include "src/api/rest/router.h"

namespace regatta::rest {
namespace {

namespace v1 = regatta::v1;

HttpResponse JsonResponse(std::string body) {
  HttpResponse response;
  response.body = std::move(body);
  return response;
}

HttpResponse BadRequest(absl::string_view message) {
  return ErrorResponse(grpc::StatusCode::INVALID_ARGUMENT, message);
}

// Header values become gRPC metadata, which allows only printable ASCII.
bool IsValidMetadataValue(absl::string_view value) {
  for (char c : value) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

// Routes whose JSON body is the whole request take no query parameters: a parameter there is
// almost certainly a mistake, and typos should be errors.
absl::Status NoQuery(const QueryParams& query) {
  if (query.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("unexpected query parameter \"", query[0].first,
                                                 "\": this route takes its fields in the body"));
}

// Parses the body (a message of type Body) for a route whose path also names the resource: the
// body's name must be empty or equal to the path's.
absl::Status CheckPathName(const std::string& path_name, const std::string& body_name,
                           absl::string_view field = "name") {
  if (body_name.empty() || body_name == path_name) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, " \"", body_name, "\" in the body does not match \"", path_name, "\" in the path"));
}

// The client asked for a JSON array instead of an event stream.
bool WantsJsonEvents(absl::string_view accept) {
  return absl::StrContains(accept, "application/json") &&
         !absl::StrContains(accept, "text/event-stream");
}

}  // namespace

bool CallTracker::Register(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) {
    context->TryCancel();
    return false;
  }
  calls_.insert(context);
  return true;
}

void CallTracker::Unregister(grpc::ClientContext* context) {
  absl::MutexLock lock(&mu_);
  calls_.erase(context);
}

void CallTracker::CancelAll() {
  // Holding the lock keeps every context alive while it is cancelled.
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  for (grpc::ClientContext* context : calls_) context->TryCancel();
}

void ForwardCaller(grpc::ClientContext* context, const std::string& authorization,
                   const std::string& client_address) {
  if (!authorization.empty()) context->AddMetadata("authorization", authorization);
  if (!client_address.empty()) {
    context->AddMetadata(auth::kGatewayClientAddressMetadata, client_address);
  }
}

Gateway::Gateway(std::shared_ptr<grpc::Channel> channel, GatewayOptions options)
    : options_(std::move(options)),
      channel_(std::move(channel)),
      queues_(v1::QueueService::NewStub(channel_)),
      submit_(v1::SubmitService::NewStub(channel_)),
      jobs_(v1::JobService::NewStub(channel_)),
      events_(v1::EventService::NewStub(channel_)),
      reports_(v1::SchedulingReportService::NewStub(channel_)),
      pipelines_(v1::PipelineService::NewStub(channel_)),
      runs_(v1::RunService::NewStub(channel_)),
      devices_(v1::DeviceService::NewStub(channel_)) {}

std::unique_ptr<grpc::ClientReader<v1::JobSetEvent>> Gateway::OpenEventStream(
    grpc::ClientContext* context, const EventStreamPlan& plan) {
  ForwardCaller(context, plan.authorization, plan.client_address);
  return events_->GetJobSetEvents(context, plan.request);
}

std::unique_ptr<grpc::ClientReader<v1::LogChunk>> Gateway::OpenLogStream(
    grpc::ClientContext* context, const LogStreamPlan& plan) {
  ForwardCaller(context, plan.authorization, plan.client_address);
  return jobs_->GetJobLogs(context, plan.request);
}

HttpResponse Gateway::EventsAsJson(const HttpRequest& request,
                                   const v1::JobSetEventsRequest& events_request) {
  grpc::ClientContext context;
  ForwardCaller(&context, request.authorization, request.client_address);
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(options_.call_timeout));
  if (!tracker_.Register(&context)) {
    return ErrorResponse(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  }
  std::unique_ptr<grpc::ClientReader<v1::JobSetEvent>> reader =
      events_->GetJobSetEvents(&context, events_request);
  std::string body = "[";
  v1::JobSetEvent event;
  bool first = true;
  while (reader->Read(&event)) {
    if (!first) body.push_back(',');
    first = false;
    body += ProtoToJson(event);
  }
  const grpc::Status status = reader->Finish();
  tracker_.Unregister(&context);
  if (!status.ok()) return ErrorResponse(status);
  body.push_back(']');
  return JsonResponse(std::move(body));
}

GatewayResult Gateway::Handle(const HttpRequest& request) {
  const absl::string_view target = request.target;
  const size_t question = target.find('?');
  const absl::string_view path = target.substr(0, question);
  const absl::string_view raw_query =
      question == absl::string_view::npos ? absl::string_view() : target.substr(question + 1);

  absl::StatusOr<RouteResult> route = MatchRoute(request.method, path);
  if (!route.ok()) return BadRequest(route.status().message());
  if (route->kind == RouteResult::Kind::kNotFound) {
    return ErrorResponse(404, grpc::StatusCode::NOT_FOUND,
                         absl::StrCat("no route for ", request.method, " ", path));
  }
  if (route->kind == RouteResult::Kind::kMethodNotAllowed) {
    HttpResponse response =
        ErrorResponse(405, grpc::StatusCode::UNIMPLEMENTED,
                      absl::StrCat("method ", request.method, " is not allowed on ", path,
                                   "; allowed: ", route->allowed));
    response.headers.emplace_back("Allow", route->allowed);
    return response;
  }
  absl::StatusOr<QueryParams> query = ParseQuery(raw_query);
  if (!query.ok()) return BadRequest(query.status().message());
  if (!IsValidMetadataValue(request.authorization)) {
    return BadRequest("the Authorization header may contain only printable ASCII");
  }
  const auto& vars = route->match.vars;
  auto var = [&](const char* name) -> std::string {
    auto it = vars.find(name);
    return it == vars.end() ? std::string() : it->second;
  };
  // Parses the JSON body into `message` for a route that takes no query parameters.
  auto body_into = [&](google::protobuf::Message* message) -> absl::Status {
    if (absl::Status s = NoQuery(*query); !s.ok()) return s;
    return JsonToProto(request.body, message);
  };
  // The submit routes: the body is the request message, one SubmitService method answers.
  auto submit_call =
      [&]<typename Req, typename Resp>(grpc::Status (v1::SubmitService::Stub::*method)(
          grpc::ClientContext*, const Req&, Resp*)) -> HttpResponse {
    Req rpc;
    if (absl::Status s = body_into(&rpc); !s.ok()) return ErrorResponse(s);
    return Unary<Resp>(request, [&](grpc::ClientContext* c, Resp* out) {
      return (submit_.get()->*method)(c, rpc, out);
    });
  };
  // The bulk routes: as submit_call, with the target (queue or executor) named by the path; a
  // body naming it too must agree.
  auto target_submit_call =
      [&]<typename Req, typename Resp, typename Field>(
          grpc::Status (v1::SubmitService::Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
          const char* path_var, absl::string_view field_name, Field field) -> HttpResponse {
    Req rpc;
    if (absl::Status s = body_into(&rpc); !s.ok()) return ErrorResponse(s);
    std::string* target = field(rpc);
    if (absl::Status s = CheckPathName(var(path_var), *target, field_name); !s.ok()) {
      return ErrorResponse(s);
    }
    *target = var(path_var);
    return Unary<Resp>(request, [&](grpc::ClientContext* c, Resp* out) {
      return (submit_.get()->*method)(c, rpc, out);
    });
  };
  auto query_into = [&](google::protobuf::Message* message, QueryMapping mapping) -> absl::Status {
    return ApplyQueryParams(*query, mapping, message);
  };
  // Status and details: job ids in the body (POST) or one job id in the path (GET).
  auto job_ids_call = [&]<typename Req, typename Resp>(grpc::Status (v1::JobService::Stub::*method)(
                                                           grpc::ClientContext*, const Req&, Resp*),
                                                       bool from_body) -> HttpResponse {
    Req rpc;
    if (from_body) {
      if (absl::Status s = body_into(&rpc); !s.ok()) return ErrorResponse(s);
    } else {
      if (absl::Status s = query_into(&rpc, {{}, {"job_ids"}}); !s.ok()) return ErrorResponse(s);
      rpc.add_job_ids(var("id"));
    }
    return Unary<Resp>(request, [&](grpc::ClientContext* c, Resp* out) {
      return (jobs_.get()->*method)(c, rpc, out);
    });
  };

  switch (route->match.id) {
    case RouteId::kHealthz: {
      HttpResponse response;
      response.content_type = "text/plain; charset=utf-8";
      response.body = "ok";
      return response;
    }
    case RouteId::kVersion: {
      nlohmann::json body = {{"version", options_.version}, {"api", "regatta.v1"}};
      return JsonResponse(body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }

    // ---- Queues ------------------------------------------------------------------------------
    case RouteId::kCreateQueue: {
      v1::CreateQueueRequest rpc;
      if (absl::Status s = body_into(rpc.mutable_queue()); !s.ok()) return ErrorResponse(s);
      return Unary<v1::Queue>(request, [&](grpc::ClientContext* c, v1::Queue* out) {
        return queues_->CreateQueue(c, rpc, out);
      });
    }
    case RouteId::kListQueues: {
      v1::ListQueuesRequest rpc;
      if (absl::Status s = query_into(&rpc, {}); !s.ok()) return ErrorResponse(s);
      return Unary<v1::ListQueuesResponse>(
          request, [&](grpc::ClientContext* c, v1::ListQueuesResponse* out) {
            return queues_->ListQueues(c, rpc, out);
          });
    }
    case RouteId::kGetQueue: {
      v1::GetQueueRequest rpc;
      if (absl::Status s = query_into(&rpc, {{}, {"name"}}); !s.ok()) return ErrorResponse(s);
      rpc.set_name(var("name"));
      return Unary<v1::Queue>(request, [&](grpc::ClientContext* c, v1::Queue* out) {
        return queues_->GetQueue(c, rpc, out);
      });
    }
    case RouteId::kUpdateQueue: {
      v1::UpdateQueueRequest rpc;
      if (absl::Status s = body_into(rpc.mutable_queue()); !s.ok()) return ErrorResponse(s);
      if (absl::Status s = CheckPathName(var("name"), rpc.queue().name()); !s.ok()) {
        return ErrorResponse(s);
      }
      rpc.mutable_queue()->set_name(var("name"));
      return Unary<v1::Queue>(request, [&](grpc::ClientContext* c, v1::Queue* out) {
        return queues_->UpdateQueue(c, rpc, out);
      });
    }
    case RouteId::kDeleteQueue: {
      v1::DeleteQueueRequest rpc;
      if (absl::Status s = query_into(&rpc, {{}, {"name"}}); !s.ok()) return ErrorResponse(s);
      rpc.set_name(var("name"));
      return Unary<v1::DeleteQueueResponse>(
          request, [&](grpc::ClientContext* c, v1::DeleteQueueResponse* out) {
            return queues_->DeleteQueue(c, rpc, out);
          });
    }
    case RouteId::kCordonQueue:
    case RouteId::kUncordonQueue: {
      v1::CordonQueueRequest rpc;
      if (absl::Status s = body_into(&rpc); !s.ok()) return ErrorResponse(s);
      if (absl::Status s = CheckPathName(var("name"), rpc.name()); !s.ok()) {
        return ErrorResponse(s);
      }
      rpc.set_name(var("name"));
      const bool cordon = route->match.id == RouteId::kCordonQueue;
      return Unary<v1::Queue>(request, [&](grpc::ClientContext* c, v1::Queue* out) {
        return cordon ? queues_->CordonQueue(c, rpc, out) : queues_->UncordonQueue(c, rpc, out);
      });
    }

    // ---- Submit ------------------------------------------------------------------------------
    case RouteId::kSubmitJobs:
      return submit_call(&v1::SubmitService::Stub::SubmitJobs);
    case RouteId::kCancelJobs:
      return submit_call(&v1::SubmitService::Stub::CancelJobs);
    case RouteId::kCancelJobSet:
      return submit_call(&v1::SubmitService::Stub::CancelJobSet);
    case RouteId::kReprioritizeJobs:
      return submit_call(&v1::SubmitService::Stub::ReprioritizeJobs);
    case RouteId::kPreemptJobs:
      return submit_call(&v1::SubmitService::Stub::PreemptJobs);
    case RouteId::kCancelQueueJobs:
      return target_submit_call(&v1::SubmitService::Stub::CancelQueue, "name", "queue",
                                [](v1::CancelQueueRequest& r) { return r.mutable_queue(); });
    case RouteId::kPreemptQueueJobs:
      return target_submit_call(&v1::SubmitService::Stub::PreemptQueue, "name", "queue",
                                [](v1::PreemptQueueRequest& r) { return r.mutable_queue(); });
    case RouteId::kCancelExecutorJobs:
      return target_submit_call(
          &v1::SubmitService::Stub::CancelOnExecutor, "id", "executorId",
          [](v1::CancelOnExecutorRequest& r) { return r.mutable_executor_id(); });
    case RouteId::kPreemptExecutorJobs:
      return target_submit_call(
          &v1::SubmitService::Stub::PreemptOnExecutor, "id", "executorId",
          [](v1::PreemptOnExecutorRequest& r) { return r.mutable_executor_id(); });

    // ---- Jobs --------------------------------------------------------------------------------
    case RouteId::kJobStatus:
    case RouteId::kGetJobStatus:
      return job_ids_call(&v1::JobService::Stub::GetJobStatus,
                          route->match.id == RouteId::kJobStatus);
    case RouteId::kJobDetails:
    case RouteId::kGetJobDetails:
      return job_ids_call(&v1::JobService::Stub::GetJobDetails,
                          route->match.id == RouteId::kJobDetails);
    case RouteId::kListJobs:
    case RouteId::kGetListJobs: {
      v1::ListJobsRequest rpc;
      if (route->match.id == RouteId::kListJobs) {
        if (absl::Status s = body_into(&rpc); !s.ok()) return ErrorResponse(s);
      } else {
        QueryMapping mapping;
        mapping.aliases = {{"state", "states"}, {"label", "labels"}};
        if (absl::Status s = query_into(&rpc, mapping); !s.ok()) return ErrorResponse(s);
      }
      return Unary<v1::ListJobsResponse>(request,
                                         [&](grpc::ClientContext* c, v1::ListJobsResponse* out) {
                                           return jobs_->ListJobs(c, rpc, out);
                                         });
    }

    case RouteId::kGetJobReport: {
      v1::GetJobReportRequest rpc;
      if (absl::Status s = query_into(&rpc, {{}, {"job_id"}}); !s.ok()) return ErrorResponse(s);
      rpc.set_job_id(var("id"));
      return Unary<v1::JobReport>(request, [&](grpc::ClientContext* c, v1::JobReport* out) {
        return reports_->GetJobReport(c, rpc, out);
      });
    }
    case RouteId::kQueueReport: {
      v1::GetQueueReportRequest rpc;
      if (absl::Status s = query_into(&rpc, {}); !s.ok()) return ErrorResponse(s);
      return Unary<v1::QueueReportResponse>(
          request, [&](grpc::ClientContext* c, v1::QueueReportResponse* out) {
            return reports_->GetQueueReport(c, rpc, out);
          });
    }
    case RouteId::kGetJobLogs: {
      LogStreamPlan plan;
      plan.authorization = request.authorization;
      plan.client_address = request.client_address;
      if (absl::Status s = query_into(&plan.request, {{}, {"job_id"}}); !s.ok()) {
        return ErrorResponse(s);
      }
      plan.request.set_job_id(var("id"));
      return plan;
    }

    // ---- Events ------------------------------------------------------------------------------
    case RouteId::kJobSetEvents: {
      EventStreamPlan plan;
      plan.authorization = request.authorization;
      plan.client_address = request.client_address;
      if (absl::Status s = query_into(&plan.request, {{}, {"queue", "job_set"}}); !s.ok()) {
        return ErrorResponse(s);
      }
      plan.request.set_queue(var("queue"));
      plan.request.set_job_set(var("jobSet"));
      // EventSource resends the id of the last event it saw when it reconnects.
      if (!request.last_event_id.empty()) {
        if (!IsValidUtf8(request.last_event_id)) {
          return BadRequest("the Last-Event-ID header is not valid UTF-8");
        }
        plan.request.set_from_id(request.last_event_id);
      }
      if (WantsJsonEvents(request.accept)) {
        if (plan.request.watch()) {
          return BadRequest("watch=true streams: ask for Accept: text/event-stream");
        }
        return EventsAsJson(request, plan.request);
      }
      return plan;
    }

    // ---- Pipelines ---------------------------------------------------------------------------
    case RouteId::kCreatePipeline:
    case RouteId::kListPipelines:
    case RouteId::kGetPipeline:
    case RouteId::kDeletePipeline:
    case RouteId::kCreatePipelineVersion:
    case RouteId::kListPipelineVersions:
    case RouteId::kGetPipelineVersion:
    case RouteId::kDeletePipelineVersion:
    case RouteId::kCreateExperiment:
    case RouteId::kListExperiments:
    case RouteId::kGetExperiment:
    case RouteId::kDeleteExperiment:
    case RouteId::kArchiveExperiment:
    case RouteId::kUnarchiveExperiment:
    case RouteId::kGetArtifact:
    case RouteId::kGetArtifactLineage:
    case RouteId::kListRunArtifacts:
    case RouteId::kListCacheEntries:
    case RouteId::kPruneCache:
    case RouteId::kCreateRun:
    case RouteId::kListRuns:
    case RouteId::kGetRun:
    case RouteId::kDeleteRun:
    case RouteId::kTerminateRun:
    case RouteId::kRetryRun:
    case RouteId::kArchiveRun:
    case RouteId::kUnarchiveRun:
    case RouteId::kCreateRecurringRun:
    case RouteId::kListRecurringRuns:
    case RouteId::kGetRecurringRun:
    case RouteId::kDeleteRecurringRun:
    case RouteId::kEnableRecurringRun:
    case RouteId::kDisableRecurringRun:
      return HandlePipelineRoute(request, route->match, *query);

    // ---- Devices -----------------------------------------------------------------------------
    case RouteId::kApplyConfiguration:
    case RouteId::kListConfigurations:
    case RouteId::kGetConfiguration:
    case RouteId::kDeleteConfiguration:
    case RouteId::kListInstances:
    case RouteId::kGetInstance:
    case RouteId::kListServices:
    case RouteId::kGetService:
    case RouteId::kApplySecret:
    case RouteId::kListSecrets:
    case RouteId::kGetSecret:
    case RouteId::kDeleteSecret:
    case RouteId::kApplyConfigMap:
    case RouteId::kListConfigMaps:
    case RouteId::kGetConfigMap:
    case RouteId::kDeleteConfigMap:
      return HandleDeviceRoute(request, route->match, *query);
  }
  return ErrorResponse(grpc::StatusCode::INTERNAL, "unhandled route");
}

absl::Status BindPathField(absl::string_view field, const std::string& value,
                           google::protobuf::Message* message) {
  const google::protobuf::FieldDescriptor* descriptor =
      message->GetDescriptor()->FindFieldByName(std::string(field));
  const google::protobuf::Reflection* reflection = message->GetReflection();
  const std::string given = reflection->GetString(*message, descriptor);
  if (!given.empty() && given != value) {
    return absl::InvalidArgumentError(absl::StrCat(descriptor->json_name(), " \"", given,
                                                   "\" in the body does not match \"", value,
                                                   "\" in the path"));
  }
  reflection->SetString(message, descriptor, value);
  return absl::OkStatus();
}

}  // namespace regatta::rest
