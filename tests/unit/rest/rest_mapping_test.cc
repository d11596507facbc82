// The transport-free parts of the REST mapping: routing, decoding, query mapping, errors, SSE.
#include <algorithm>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/event_service.pb.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/queue_service.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "src/api/rest/errors.h"
#include "src/api/rest/gateway.h"
#include "src/api/rest/proto_json.h"
#include "src/api/rest/router.h"
#include "src/api/rest/sse.h"

namespace regatta::rest {
namespace {

namespace v1 = regatta::v1;
using ::testing::HasSubstr;

TEST(PercentDecodeTest, DecodesEscapesAndPlus) {
  EXPECT_EQ(PercentDecode("a%20b%2Fc%3a", false).value(), "a b/c:");
  EXPECT_EQ(PercentDecode("a+b", false).value(), "a+b");
  EXPECT_EQ(PercentDecode("a+b", true).value(), "a b");
  EXPECT_EQ(PercentDecode("%C3%A9", false).value(), "\xC3\xA9");
}

TEST(PercentDecodeTest, RejectsMalformedEscapesAndInvalidUtf8) {
  EXPECT_EQ(PercentDecode("%", false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PercentDecode("%2", false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PercentDecode("%zz", false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PercentDecode("%FF", false).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PercentDecode("%C0%80", false).status().code(),  // overlong NUL
            absl::StatusCode::kInvalidArgument);
}

TEST(ParseQueryTest, KeepsOrderAndRepeats) {
  QueryParams params = ParseQuery("state=QUEUED&state=RUNNING&label=k%3Dv&flag&&x=a+b").value();
  ASSERT_EQ(params.size(), 5u);
  EXPECT_EQ(params[0], (std::pair<std::string, std::string>("state", "QUEUED")));
  EXPECT_EQ(params[1], (std::pair<std::string, std::string>("state", "RUNNING")));
  EXPECT_EQ(params[2], (std::pair<std::string, std::string>("label", "k=v")));
  EXPECT_EQ(params[3], (std::pair<std::string, std::string>("flag", "")));
  EXPECT_EQ(params[4], (std::pair<std::string, std::string>("x", "a b")));
  EXPECT_FALSE(ParseQuery("a=%G0").ok());
}

TEST(MatchRouteTest, MatchesEveryRouteShape) {
  auto id = [](const char* method, const char* path) {
    RouteResult r = MatchRoute(method, path).value();
    EXPECT_EQ(r.kind, RouteResult::Kind::kFound) << method << " " << path;
    return r.match.id;
  };
  EXPECT_EQ(id("GET", "/healthz"), RouteId::kHealthz);
  EXPECT_EQ(id("GET", "/v1/version"), RouteId::kVersion);
  EXPECT_EQ(id("POST", "/v1/queues"), RouteId::kCreateQueue);
  EXPECT_EQ(id("GET", "/v1/queues"), RouteId::kListQueues);
  EXPECT_EQ(id("GET", "/v1/queues/a"), RouteId::kGetQueue);
  EXPECT_EQ(id("PUT", "/v1/queues/a"), RouteId::kUpdateQueue);
  EXPECT_EQ(id("DELETE", "/v1/queues/a"), RouteId::kDeleteQueue);
  EXPECT_EQ(id("POST", "/v1/queues/a:cordon"), RouteId::kCordonQueue);
  EXPECT_EQ(id("POST", "/v1/queues/a:uncordon"), RouteId::kUncordonQueue);
  EXPECT_EQ(id("POST", "/v1/jobs:submit"), RouteId::kSubmitJobs);
  EXPECT_EQ(id("POST", "/v1/jobs:cancel"), RouteId::kCancelJobs);
  EXPECT_EQ(id("POST", "/v1/jobsets:cancel"), RouteId::kCancelJobSet);
  EXPECT_EQ(id("POST", "/v1/jobs:reprioritize"), RouteId::kReprioritizeJobs);
  EXPECT_EQ(id("POST", "/v1/jobs:preempt"), RouteId::kPreemptJobs);
  EXPECT_EQ(id("POST", "/v1/queues/a:cancel"), RouteId::kCancelQueueJobs);
  EXPECT_EQ(id("POST", "/v1/queues/a:preempt"), RouteId::kPreemptQueueJobs);
  EXPECT_EQ(id("POST", "/v1/executors/e1:cancel"), RouteId::kCancelExecutorJobs);
  EXPECT_EQ(id("POST", "/v1/executors/e1:preempt"), RouteId::kPreemptExecutorJobs);
  EXPECT_EQ(id("POST", "/v1/jobs:status"), RouteId::kJobStatus);
  EXPECT_EQ(id("GET", "/v1/jobs/j1/status"), RouteId::kGetJobStatus);
  EXPECT_EQ(id("POST", "/v1/jobs:details"), RouteId::kJobDetails);
  EXPECT_EQ(id("GET", "/v1/jobs/j1"), RouteId::kGetJobDetails);
  EXPECT_EQ(id("POST", "/v1/jobs:list"), RouteId::kListJobs);
  EXPECT_EQ(id("GET", "/v1/jobs"), RouteId::kGetListJobs);
  EXPECT_EQ(id("GET", "/v1/jobs/j1/logs"), RouteId::kGetJobLogs);
  EXPECT_EQ(id("GET", "/v1/queues/q/jobsets/s/events"), RouteId::kJobSetEvents);
}

TEST(MatchRouteTest, MatchesThePipelineRoutes) {
  auto match = [](const char* method, const char* path) {
    RouteResult r = MatchRoute(method, path).value();
    EXPECT_EQ(r.kind, RouteResult::Kind::kFound) << method << " " << path;
    return r.match;
  };
  EXPECT_EQ(match("POST", "/v1/pipelines").id, RouteId::kCreatePipeline);
  EXPECT_EQ(match("GET", "/v1/pipelines").id, RouteId::kListPipelines);
  EXPECT_EQ(match("GET", "/v1/pipelines/p1").id, RouteId::kGetPipeline);
  EXPECT_EQ(match("DELETE", "/v1/pipelines/p1").id, RouteId::kDeletePipeline);
  EXPECT_EQ(match("POST", "/v1/pipelines/p1/versions").id, RouteId::kCreatePipelineVersion);
  EXPECT_EQ(match("GET", "/v1/pipelines/p1/versions").id, RouteId::kListPipelineVersions);
  EXPECT_EQ(match("GET", "/v1/pipeline_versions/v1").id, RouteId::kGetPipelineVersion);
  EXPECT_EQ(match("DELETE", "/v1/pipeline_versions/v1").id, RouteId::kDeletePipelineVersion);
  EXPECT_EQ(match("POST", "/v1/experiments").id, RouteId::kCreateExperiment);
  EXPECT_EQ(match("GET", "/v1/experiments").id, RouteId::kListExperiments);
  EXPECT_EQ(match("GET", "/v1/experiments/e").id, RouteId::kGetExperiment);
  EXPECT_EQ(match("DELETE", "/v1/experiments/e").id, RouteId::kDeleteExperiment);
  EXPECT_EQ(match("POST", "/v1/experiments/e:archive").id, RouteId::kArchiveExperiment);
  EXPECT_EQ(match("POST", "/v1/experiments/e:unarchive").id, RouteId::kUnarchiveExperiment);
  EXPECT_EQ(match("GET", "/v1/artifacts/a").id, RouteId::kGetArtifact);
  EXPECT_EQ(match("GET", "/v1/artifacts/a:lineage").id, RouteId::kGetArtifactLineage);
  EXPECT_EQ(match("GET", "/v1/runs/r/artifacts").id, RouteId::kListRunArtifacts);
  EXPECT_EQ(match("GET", "/v1/cache").id, RouteId::kListCacheEntries);
  EXPECT_EQ(match("POST", "/v1/cache:prune").id, RouteId::kPruneCache);
  EXPECT_EQ(match("POST", "/v1/runs").id, RouteId::kCreateRun);
  EXPECT_EQ(match("GET", "/v1/runs").id, RouteId::kListRuns);
  EXPECT_EQ(match("GET", "/v1/runs/r").id, RouteId::kGetRun);
  EXPECT_EQ(match("DELETE", "/v1/runs/r").id, RouteId::kDeleteRun);
  EXPECT_EQ(match("POST", "/v1/runs/r:terminate").id, RouteId::kTerminateRun);
  EXPECT_EQ(match("POST", "/v1/runs/r:retry").id, RouteId::kRetryRun);
  EXPECT_EQ(match("POST", "/v1/runs/r:archive").id, RouteId::kArchiveRun);
  EXPECT_EQ(match("POST", "/v1/runs/r:unarchive").id, RouteId::kUnarchiveRun);
  EXPECT_EQ(match("POST", "/v1/recurringruns").id, RouteId::kCreateRecurringRun);
  EXPECT_EQ(match("GET", "/v1/recurringruns").id, RouteId::kListRecurringRuns);
  EXPECT_EQ(match("GET", "/v1/recurringruns/rr").id, RouteId::kGetRecurringRun);
  EXPECT_EQ(match("DELETE", "/v1/recurringruns/rr").id, RouteId::kDeleteRecurringRun);
  EXPECT_EQ(match("POST", "/v1/recurringruns/rr:enable").id, RouteId::kEnableRecurringRun);
  EXPECT_EQ(match("POST", "/v1/recurringruns/rr:disable").id, RouteId::kDisableRecurringRun);
  // A name with a ':' stays whole when the verb is unknown.
  EXPECT_EQ(match("GET", "/v1/pipelines/my%3Apipe").vars.at("id"), "my:pipe");
  EXPECT_EQ(MatchRoute("PUT", "/v1/runs/r").value().allowed, "GET, DELETE");
}

TEST(MatchRouteTest, DecodesVariablesAfterSplittingTheVerb) {
  RouteResult r = MatchRoute("POST", "/v1/queues/a%3Ab%2Fc:cordon").value();
  ASSERT_EQ(r.kind, RouteResult::Kind::kFound);
  EXPECT_EQ(r.match.id, RouteId::kCordonQueue);
  EXPECT_EQ(r.match.vars.at("name"), "a:b/c");

  r = MatchRoute("GET", "/v1/queues/my%20q/jobsets/set%2F1/events").value();
  ASSERT_EQ(r.kind, RouteResult::Kind::kFound);
  EXPECT_EQ(r.match.vars.at("queue"), "my q");
  EXPECT_EQ(r.match.vars.at("jobSet"), "set/1");

  // A raw ':' that is no known verb stays part of the name.
  r = MatchRoute("GET", "/v1/queues/a:b").value();
  ASSERT_EQ(r.kind, RouteResult::Kind::kFound);
  EXPECT_EQ(r.match.id, RouteId::kGetQueue);
  EXPECT_EQ(r.match.vars.at("name"), "a:b");
}

TEST(MatchRouteTest, WrongMethodOnACustomMethodIsNotAnotherRoute) {
  RouteResult r = MatchRoute("PUT", "/v1/queues/x:cancel").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "POST");
  r = MatchRoute("GET", "/v1/queues/x:cordon").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "POST");
  r = MatchRoute("DELETE", "/v1/runs/r1:retry").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "POST");
}

TEST(ErrorJsonTest, MessageIsCapped) {
  nlohmann::json body = nlohmann::json::parse(
      ErrorJson(grpc::StatusCode::INVALID_ARGUMENT, std::string(15 << 20, 'x')));
  const std::string message = body["message"];
  EXPECT_LE(message.size(), 4096u + 32u);
  EXPECT_THAT(message, ::testing::HasSubstr("(15728640 bytes)"));
}

TEST(MatchRouteTest, NotFoundAndMethodNotAllowed) {
  EXPECT_EQ(MatchRoute("GET", "/nope").value().kind, RouteResult::Kind::kNotFound);
  EXPECT_EQ(MatchRoute("GET", "/v1/queues/").value().kind, RouteResult::Kind::kNotFound);
  EXPECT_EQ(MatchRoute("GET", "").value().kind, RouteResult::Kind::kNotFound);
  EXPECT_EQ(MatchRoute("GET", "*").value().kind, RouteResult::Kind::kNotFound);
  EXPECT_EQ(MatchRoute("POST", "/v1/jobs:frobnicate").value().kind, RouteResult::Kind::kNotFound);

  RouteResult r = MatchRoute("PATCH", "/v1/queues/a").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "GET, PUT, DELETE");
  r = MatchRoute("GET", "/v1/jobs:submit").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "POST");
  r = MatchRoute("DELETE", "/v1/jobs/j1/logs").value();
  EXPECT_EQ(r.kind, RouteResult::Kind::kMethodNotAllowed);
  EXPECT_EQ(r.allowed, "GET");
  EXPECT_EQ(MatchRoute("GET", "/v1/jobs//logs").value().kind, RouteResult::Kind::kNotFound);

  EXPECT_EQ(MatchRoute("GET", "/v1/queues/%zz").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GatewayTest, LogsRouteBecomesALogStreamPlan) {
  // Planning a log read makes no call, so the channel may lead nowhere.
  Gateway gateway(grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()), {});
  HttpRequest request;
  request.method = "GET";
  request.target = "/v1/jobs/a%2Fb/logs?follow=true&tailLines=3&runId=r%201";
  request.authorization = "Bearer t";
  GatewayResult result = gateway.Handle(request);
  ASSERT_TRUE(std::holds_alternative<LogStreamPlan>(result));
  const LogStreamPlan& plan = std::get<LogStreamPlan>(result);
  EXPECT_EQ(plan.authorization, "Bearer t");
  EXPECT_EQ(plan.request.job_id(), "a/b");
  EXPECT_TRUE(plan.request.follow());
  EXPECT_EQ(plan.request.tail_lines(), 3);
  EXPECT_EQ(plan.request.run_id(), "r 1");

  request.target = "/v1/jobs/a/logs";
  result = gateway.Handle(request);
  ASSERT_TRUE(std::holds_alternative<LogStreamPlan>(result));
  EXPECT_FALSE(std::get<LogStreamPlan>(result).request.follow());
  EXPECT_EQ(std::get<LogStreamPlan>(result).request.tail_lines(), 0);

  request.target = "/v1/jobs/a/logs?lines=3";
  result = gateway.Handle(request);
  ASSERT_TRUE(std::holds_alternative<HttpResponse>(result));
  EXPECT_EQ(std::get<HttpResponse>(result).status, 400);
  EXPECT_EQ(nlohmann::json::parse(std::get<HttpResponse>(result).body)["message"],
            "unknown query parameter \"lines\"");
}

TEST(ApplyQueryParamsTest, MapsScalarsRepeatedEnumsAndMaps) {
  v1::ListJobsRequest request;
  QueryMapping mapping;
  mapping.aliases = {{"state", "states"}, {"label", "labels"}};
  ASSERT_TRUE(ApplyQueryParams({{"queue", "q"},
                                {"jobSet", "s"},
                                {"state", "QUEUED"},
                                {"state", "job_state_running"},
                                {"states", "3"},
                                {"owner", "alice"},
                                {"label", "team=ml"},
                                {"labels", "tier=a=b"},
                                {"page_size", "50"},
                                {"pageToken", "t"},
                                {"orderBy", "-submit_time"}},
                               mapping, &request)
                  .ok());
  EXPECT_EQ(request.queue(), "q");
  EXPECT_EQ(request.job_set(), "s");
  EXPECT_THAT(request.states(), ::testing::ElementsAre(v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING,
                                                       v1::JOB_STATE_LEASED));
  EXPECT_EQ(request.owner(), "alice");
  EXPECT_EQ(request.labels().at("team"), "ml");
  EXPECT_EQ(request.labels().at("tier"), "a=b");
  EXPECT_EQ(request.page_size(), 50);
  EXPECT_EQ(request.page_token(), "t");
  EXPECT_EQ(request.order_by(), "-submit_time");
}

TEST(ApplyQueryParamsTest, RejectsWhatItCannotMap) {
  auto error = [](QueryParams params, QueryMapping mapping = {}) {
    v1::ListJobsRequest request;
    absl::Status s = ApplyQueryParams(params, mapping, &request);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  EXPECT_THAT(error({{"pageSzie", "1"}}), HasSubstr("unknown query parameter \"pageSzie\""));
  EXPECT_THAT(error({{"pageSize", "many"}}), HasSubstr("pageSize"));
  EXPECT_THAT(error({{"pageSize", "99999999999"}}), HasSubstr("32-bit"));
  EXPECT_THAT(error({{"states", "SLEEPING"}}), HasSubstr("regatta.v1.JobState"));
  EXPECT_THAT(error({{"labels", "novalue"}}), HasSubstr("key=value"));
  EXPECT_THAT(error({{"queue", "a"}, {"queue", "b"}}), HasSubstr("more than once"));
  EXPECT_THAT(error({{"queue", "a"}}, QueryMapping{{}, {"queue"}}), HasSubstr("path"));

  v1::GetJobDetailsRequest details;
  EXPECT_EQ(ApplyQueryParams({{"expandSpec", "maybe"}}, {}, &details).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ApplyQueryParams({{"expandSpec", "true"}}, {}, &details).ok());
  EXPECT_TRUE(details.expand_spec());
}

TEST(JsonToProtoTest, ParsesCamelAndSnakeAndRejectsUnknownFields) {
  v1::Queue queue;
  ASSERT_TRUE(JsonToProto(R"({"name":"a","priorityFactor":2,"labels":{"k":"v"}})", &queue).ok());
  EXPECT_EQ(queue.priority_factor(), 2);
  v1::Queue snake;
  ASSERT_TRUE(JsonToProto(R"({"priority_factor":3})", &snake).ok());
  EXPECT_EQ(snake.priority_factor(), 3);
  EXPECT_TRUE(JsonToProto("  \n", &snake).ok());  // empty body is {}

  absl::Status typo = JsonToProto(R"({"nmae":"a"})", &queue);
  EXPECT_EQ(typo.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(typo.message(), HasSubstr("nmae"));
  EXPECT_EQ(JsonToProto(R"({"name": )", &queue).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonToProto(R"([1,2])", &queue).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(JsonToProto(R"({"priorityFactor":"high"})", &queue).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(JsonToProtoTest, UnknownFieldsAreNamedByTheirPath) {
  v1::SubmitJobsRequest submit;
  absl::Status s = JsonToProto(
      R"({"queue":"q","items":[{"task":{"command":["x"]}},
          {"labels":{"a":"b"},"task":{"pod_spec":{"containers":[{"name":"c",
           "securityContext":{"runAsUser":0,"privileged":true}}]}}}]})",
      &submit);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  // The path as the body spelled it; for the pod model, what it supports instead.
  EXPECT_EQ(s.message(),
            "items[1].task.pod_spec.containers[0].securityContext.privileged: not supported by "
            "Regatta's pod model (supported: runAsUser, runAsGroup)");
  s = JsonToProto(R"({"items":[{"task":{"comand":["x"]}}]})", &submit);
  EXPECT_EQ(s.message(), "items[0].task.comand: unknown field \"comand\"");
}

TEST(ProtoToJsonTest, PrintsDefaultsAndEnumNames) {
  v1::GetJobStatusResponse response;
  (*response.mutable_states())["j"] = v1::JOB_STATE_QUEUED;
  EXPECT_EQ(ProtoToJson(response), R"({"states":{"j":"JOB_STATE_QUEUED"}})");
  v1::Queue queue;
  queue.set_name("a");
  nlohmann::json json = nlohmann::json::parse(ProtoToJson(queue));
  EXPECT_EQ(json["cordoned"], false);
  EXPECT_EQ(json["priorityFactor"], 0);
}

TEST(ErrorsTest, MapsGrpcCodesLikeGrpcGateway) {
  using grpc::StatusCode;
  const std::pair<StatusCode, int> cases[] = {
      {StatusCode::OK, 200},
      {StatusCode::CANCELLED, 500},
      {StatusCode::UNKNOWN, 500},
      {StatusCode::INVALID_ARGUMENT, 400},
      {StatusCode::DEADLINE_EXCEEDED, 504},
      {StatusCode::NOT_FOUND, 404},
      {StatusCode::ALREADY_EXISTS, 409},
      {StatusCode::PERMISSION_DENIED, 403},
      {StatusCode::RESOURCE_EXHAUSTED, 429},
      {StatusCode::FAILED_PRECONDITION, 400},
      {StatusCode::ABORTED, 409},
      {StatusCode::OUT_OF_RANGE, 400},
      {StatusCode::UNIMPLEMENTED, 501},
      {StatusCode::INTERNAL, 500},
      {StatusCode::UNAVAILABLE, 503},
      {StatusCode::DATA_LOSS, 500},
      {StatusCode::UNAUTHENTICATED, 401},
  };
  for (const auto& [code, http] : cases) {
    EXPECT_EQ(HttpStatusForGrpcCode(code), http) << GrpcCodeName(code);
  }
  HttpResponse response =
      ErrorResponse(grpc::Status(grpc::StatusCode::NOT_FOUND, "queue \"x\" not found"));
  EXPECT_EQ(response.status, 404);
  nlohmann::json json = nlohmann::json::parse(response.body);
  EXPECT_EQ(json["code"], 5);
  EXPECT_EQ(json["status"], "NOT_FOUND");
  EXPECT_EQ(json["message"], "queue \"x\" not found");
  // Invalid UTF-8 in a message must not break the JSON.
  EXPECT_NO_THROW(
      nlohmann::json::parse(ErrorJson(grpc::StatusCode::INTERNAL, std::string("\xFF\xFE", 2))));
}

TEST(SseTest, FormatsEventsCommentsErrorsAndChunks) {
  v1::JobSetEvent event;
  event.set_id("12-0");
  event.set_job_id("j\n1");
  event.set_type(v1::JOB_EVENT_TYPE_RUNNING);
  const std::string frame = FormatSseEvent(event);
  EXPECT_TRUE(absl::StartsWith(frame, "id: 12-0\nevent: JOB_EVENT_TYPE_RUNNING\ndata: {")) << frame;
  EXPECT_TRUE(absl::EndsWith(frame, "}\n\n"));
  // One data line: the newline inside the job id is escaped in the JSON.
  EXPECT_EQ(std::count(frame.begin(), frame.end(), '\n'), 4);
  EXPECT_EQ(FormatSseComment("keepalive"), ": keepalive\n\n");
  EXPECT_THAT(FormatSseError(grpc::Status(grpc::StatusCode::INTERNAL, "boom")),
              HasSubstr("event: error\ndata: {\"code\":13"));
  EXPECT_EQ(HttpChunk("hello"), "5\r\nhello\r\n");
  EXPECT_EQ(HttpChunk(std::string(26, 'x')), "1a\r\n" + std::string(26, 'x') + "\r\n");
}

}  // namespace
}  // namespace regatta::rest
