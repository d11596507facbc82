#ifndef REGATTA_SRC_API_REST_GATEWAY_H_
#define REGATTA_SRC_API_REST_GATEWAY_H_

#include <chrono>
#include <memory>
#include <string>
#include <variant>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "grpcpp/client_context.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/event_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/report_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"
#include "src/api/rest/errors.h"
#include "src/api/rest/http_message.h"
#include "src/api/rest/proto_json.h"
#include "src/api/rest/router.h"

namespace regatta::rest {

// The gRPC calls in flight, so Shutdown can cancel them instead of waiting for them.
class CallTracker {
 public:
  // False if shutting down; the context is then already cancelled.
  bool Register(grpc::ClientContext* context);
  void Unregister(grpc::ClientContext* context);
  // Cancels every registered call and every call registered from now on.
  void CancelAll();

 private:
  absl::Mutex mu_;
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_set<grpc::ClientContext*> calls_ ABSL_GUARDED_BY(mu_);
};

// A request for a server-sent event stream; the server runs it on its own thread because a
// watch can last for hours.
struct EventStreamPlan {
  regatta::v1::JobSetEventsRequest request;
  std::string authorization;
  std::string client_address;
};

// A request for a job's log (GET /v1/jobs/{id}/logs); the server runs it on its own thread
// because following a run lasts as long as the run. The body is the raw log bytes.
struct LogStreamPlan {
  regatta::v1::GetJobLogsRequest request;
  std::string authorization;
  std::string client_address;
};

// Passes the HTTP client's credentials and address on to the gRPC call.
void ForwardCaller(grpc::ClientContext* context, const std::string& authorization,
                   const std::string& client_address);

using GatewayResult = std::variant<HttpResponse, EventStreamPlan, LogStreamPlan>;

struct GatewayOptions {
  // Deadline of each unary call (and of a non-watching JSON event read).
  absl::Duration call_timeout = absl::Seconds(60);
  // Reported by GET /v1/version.
  std::string version;
};

// Maps HTTP requests onto the gRPC services behind `channel` (grpc-gateway style). Blocking and
// thread-safe: unary routes are answered by calling the service synchronously.
class Gateway {
 public:
  Gateway(std::shared_ptr<grpc::Channel> channel, GatewayOptions options);

  // Answers `request`, or for a streamed response (server-sent events, a job's log) returns the
  // plan the server runs on a stream thread.
  GatewayResult Handle(const HttpRequest& request);

  // Starts the streaming call of `plan` on `context` (forwarding the authorization), which the
  // caller has registered with tracker(). No deadline: a watch lasts until cancelled.
  std::unique_ptr<grpc::ClientReader<regatta::v1::JobSetEvent>> OpenEventStream(
      grpc::ClientContext* context, const EventStreamPlan& plan);

  // Starts JobService.GetJobLogs for `plan` on `context`, like OpenEventStream.
  std::unique_ptr<grpc::ClientReader<regatta::v1::LogChunk>> OpenLogStream(
      grpc::ClientContext* context, const LogStreamPlan& plan);

  CallTracker& tracker() { return tracker_; }

 private:
  template <typename Response, typename Invoke>
  HttpResponse Unary(const HttpRequest& request, Invoke invoke);

  // The routes of PipelineService and RunService (gateway_pipelines.cc).
  HttpResponse HandlePipelineRoute(const HttpRequest& request, const RouteMatch& match,
                                   const QueryParams& query);
  // The routes of DeviceService (gateway_devices.cc).
  HttpResponse HandleDeviceRoute(const HttpRequest& request, const RouteMatch& match,
                                 const QueryParams& query);
  // One unary call of `stub`: the request from the JSON body (`from_body`) or the query, with
  // `path_field` (a string field; may be null) set from the path's {id}.
  template <typename Stub, typename Req, typename Resp>
  HttpResponse Forward(const HttpRequest& request, const RouteMatch& match,
                       const QueryParams& query, Stub* stub,
                       grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                       bool from_body, const char* path_field);

  HttpResponse EventsAsJson(const HttpRequest& request,
                            const regatta::v1::JobSetEventsRequest& events_request);

  const GatewayOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<regatta::v1::QueueService::Stub> queues_;
  std::unique_ptr<regatta::v1::SubmitService::Stub> submit_;
  std::unique_ptr<regatta::v1::JobService::Stub> jobs_;
  std::unique_ptr<regatta::v1::EventService::Stub> events_;
  std::unique_ptr<regatta::v1::SchedulingReportService::Stub> reports_;
  std::unique_ptr<regatta::v1::PipelineService::Stub> pipelines_;
  std::unique_ptr<regatta::v1::RunService::Stub> runs_;
  std::unique_ptr<regatta::v1::DeviceService::Stub> devices_;
  CallTracker tracker_;
};

template <typename Response, typename Invoke>
HttpResponse Gateway::Unary(const HttpRequest& request, Invoke invoke) {
  grpc::ClientContext context;
  ForwardCaller(&context, request.authorization, request.client_address);
  context.set_deadline(std::chrono::system_clock::now() +
                       absl::ToChronoMilliseconds(options_.call_timeout));
  if (!tracker_.Register(&context)) {
    return ErrorResponse(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  }
  Response response;
  const grpc::Status status = invoke(&context, &response);
  tracker_.Unregister(&context);
  if (!status.ok()) return ErrorResponse(status);
  HttpResponse http;
  http.body = ProtoToJson(response);
  return http;
}

// The path's {id} into the string `field` of `message`; a body that sets it too must agree.
absl::Status BindPathField(absl::string_view field, const std::string& value,
                           google::protobuf::Message* message);

template <typename Stub, typename Req, typename Resp>
HttpResponse Gateway::Forward(const HttpRequest& request, const RouteMatch& match,
                              const QueryParams& query, Stub* stub,
                              grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&, Resp*),
                              bool from_body, const char* path_field) {
  Req rpc;
  if (from_body) {
    if (!query.empty()) {
      return ErrorResponse(
          absl::InvalidArgumentError(absl::StrCat("unexpected query parameter \"", query[0].first,
                                                  "\": this route takes its fields in the body")));
    }
    if (absl::Status s = JsonToProto(request.body, &rpc); !s.ok()) return ErrorResponse(s);
  } else {
    QueryMapping mapping;
    mapping.aliases = {{"state", "states"}, {"fingerprint", "fingerprints"}};
    if (path_field != nullptr) mapping.path_fields = {path_field};
    if (absl::Status s = ApplyQueryParams(query, mapping, &rpc); !s.ok()) return ErrorResponse(s);
  }
  if (path_field != nullptr) {
    if (absl::Status s = BindPathField(path_field, match.vars.at("id"), &rpc); !s.ok()) {
      return ErrorResponse(s);
    }
  }
  return Unary<Resp>(
      request, [&](grpc::ClientContext* c, Resp* out) { return (stub->*method)(c, rpc, out); });
}

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_GATEWAY_H_
