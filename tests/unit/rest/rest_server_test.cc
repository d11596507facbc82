// The REST server end to end: real HTTP in, a real gRPC server with fake services behind it.
#include "src/api/rest/rest_server.h"

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/api/rest/errors.h"
#include "tests/unit/rest/fake_services.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::rest {
namespace {

namespace v1 = regatta::v1;
using ::testing::ElementsAre;
using testing::FakeApi;
using testing::Fetch;
using ::testing::HasSubstr;
using testing::Headers;
using testing::HttpReply;
using testing::SseClient;
using testing::TestConnection;

nlohmann::json Json(const HttpReply& reply) {
  nlohmann::json json = nlohmann::json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(json.is_discarded()) << "not JSON: " << reply.body;
  return json;
}

class RestServerTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(Options()); }

  static RestOptions Options() {
    RestOptions options;
    options.threads = 2;
    options.max_body_bytes = 1 << 20;
    options.sse_header_delay = absl::Milliseconds(200);
    return options;
  }

  void StartServer(const RestOptions& options) {
    server_.reset();
    auto server = RestServer::Start(options, api_.channel());
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    port_ = server_->port();
  }

  HttpReply Do(absl::string_view method, absl::string_view target, absl::string_view body = "",
               const Headers& headers = {}) {
    return Fetch(port_, method, target, body, headers);
  }

  testing::Recorder& recorder() { return api_.recorder(); }

  FakeApi api_;
  std::unique_ptr<RestServer> server_;
  int port_ = 0;
};

// ---- Routes map to the right RPCs -------------------------------------------------------------

TEST_F(RestServerTest, CreateQueueForwardsBodyAndAuthorization) {
  HttpReply reply =
      Do("POST", "/v1/queues", R"({"name":"q1","priorityFactor":2,"labels":{"team":"ml"}})",
         {{"Authorization", "Bearer s3cret"}, {"X-Other", "ignored"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_THAT(reply.header("content-type"), HasSubstr("application/json"));
  nlohmann::json json = Json(reply);
  EXPECT_EQ(json["name"], "q1");
  EXPECT_EQ(json["priorityFactor"], 2);
  EXPECT_EQ(json["cordoned"], false);  // defaults are printed
  EXPECT_EQ(json["createTime"], "2023-11-14T22:13:20Z");

  testing::RecordedCall call = recorder().Last();
  EXPECT_EQ(call.method, "CreateQueue");
  EXPECT_EQ(call.authorization, "Bearer s3cret");
  auto request = recorder().LastRequest<v1::CreateQueueRequest>();
  EXPECT_EQ(request.queue().name(), "q1");
  EXPECT_EQ(request.queue().priority_factor(), 2);
  EXPECT_EQ(request.queue().labels().at("team"), "ml");
}

TEST_F(RestServerTest, NoAuthorizationHeaderSendsNoMetadata) {
  ASSERT_EQ(Do("GET", "/v1/queues/a").status, 200);
  EXPECT_EQ(recorder().Last().authorization, "");
}

TEST_F(RestServerTest, QueueRoutes) {
  HttpReply list = Do("GET", "/v1/queues?pageSize=5&pageToken=abc");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(Json(list)["queues"].size(), 2u);
  EXPECT_EQ(Json(list)["nextPageToken"], "next");
  auto list_request = recorder().LastRequest<v1::ListQueuesRequest>();
  EXPECT_EQ(list_request.page_size(), 5);
  EXPECT_EQ(list_request.page_token(), "abc");

  HttpReply get = Do("GET", "/v1/queues/team%20a%2Fb");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(recorder().Last().method, "GetQueue");
  EXPECT_EQ(recorder().LastRequest<v1::GetQueueRequest>().name(), "team a/b");
  EXPECT_EQ(Json(get)["name"], "team a/b");

  HttpReply put = Do("PUT", "/v1/queues/qa", R"({"priorityFactor":3})");
  ASSERT_EQ(put.status, 200) << put.body;
  auto update = recorder().LastRequest<v1::UpdateQueueRequest>();
  EXPECT_EQ(recorder().Last().method, "UpdateQueue");
  EXPECT_EQ(update.queue().name(), "qa");
  EXPECT_EQ(update.queue().priority_factor(), 3);
  ASSERT_EQ(Do("PUT", "/v1/queues/qa", R"({"name":"qa","priorityFactor":4})").status, 200);

  const size_t calls = recorder().Count();
  HttpReply mismatch = Do("PUT", "/v1/queues/qa", R"({"name":"qb"})");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_THAT(Json(mismatch)["message"].get<std::string>(), HasSubstr("does not match"));
  EXPECT_EQ(recorder().Count(), calls);  // rejected before any RPC

  HttpReply del = Do("DELETE", "/v1/queues/qa");
  ASSERT_EQ(del.status, 200);
  EXPECT_EQ(del.body, "{}");
  EXPECT_EQ(recorder().Last().method, "DeleteQueue");
  EXPECT_EQ(recorder().LastRequest<v1::DeleteQueueRequest>().name(), "qa");

  HttpReply cordon = Do("POST", "/v1/queues/qa:cordon");
  ASSERT_EQ(cordon.status, 200) << cordon.body;
  EXPECT_EQ(Json(cordon)["cordoned"], true);
  EXPECT_EQ(recorder().Last().method, "CordonQueue");
  EXPECT_EQ(recorder().LastRequest<v1::CordonQueueRequest>().name(), "qa");

  ASSERT_EQ(Do("POST", "/v1/queues/q%3A1:uncordon", "{}").status, 200);
  EXPECT_EQ(recorder().Last().method, "UncordonQueue");
  EXPECT_EQ(recorder().LastRequest<v1::CordonQueueRequest>().name(), "q:1");
}

TEST_F(RestServerTest, SubmitRoutes) {
  HttpReply submit = Do("POST", "/v1/jobs:submit", R"({
      "queue": "q", "jobSet": "s",
      "items": [{"clientId": "c1", "priority": 3,
                 "task": {"command": ["sleep", "1"],
                          "resources": {"requests": {"cpu": "100m"}},
                          "activeDeadline": "30s"}},
                {"clientId": "c2"}]})");
  ASSERT_EQ(submit.status, 200) << submit.body;
  nlohmann::json json = Json(submit);
  ASSERT_EQ(json["items"].size(), 2u);
  EXPECT_EQ(json["items"][0]["jobId"], "job-1");
  EXPECT_EQ(json["items"][1]["clientId"], "c2");
  EXPECT_EQ(json["items"][1]["duplicate"], false);
  auto request = recorder().LastRequest<v1::SubmitJobsRequest>();
  EXPECT_EQ(recorder().Last().method, "SubmitJobs");
  EXPECT_EQ(request.queue(), "q");
  EXPECT_EQ(request.job_set(), "s");
  ASSERT_EQ(request.items_size(), 2);
  EXPECT_EQ(request.items(0).priority(), 3u);
  EXPECT_THAT(request.items(0).task().command(), ElementsAre("sleep", "1"));
  EXPECT_EQ(request.items(0).task().resources().requests().at("cpu"), "100m");
  EXPECT_EQ(request.items(0).task().active_deadline().seconds(), 30);

  HttpReply cancel =
      Do("POST", "/v1/jobs:cancel", R"({"queue":"q","jobIds":["a","b"],"reason":"why"})");
  ASSERT_EQ(cancel.status, 200);
  EXPECT_EQ(Json(cancel)["cancelRequestedIds"], nlohmann::json({"a", "b"}));
  auto cancel_request = recorder().LastRequest<v1::CancelJobsRequest>();
  EXPECT_EQ(recorder().Last().method, "CancelJobs");
  EXPECT_THAT(cancel_request.job_ids(), ElementsAre("a", "b"));
  EXPECT_EQ(cancel_request.reason(), "why");

  ASSERT_EQ(Do("POST", "/v1/jobsets:cancel",
               R"({"queue":"q","jobSet":"s","states":["JOB_STATE_QUEUED","JOB_STATE_RUNNING"]})")
                .status,
            200);
  auto set_request = recorder().LastRequest<v1::CancelJobSetRequest>();
  EXPECT_EQ(recorder().Last().method, "CancelJobSet");
  EXPECT_EQ(set_request.job_set(), "s");
  EXPECT_THAT(set_request.states(), ElementsAre(v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING));

  ASSERT_EQ(Do("POST", "/v1/jobs:reprioritize", R"({"jobIds":["a"],"newPriority":7})").status, 200);
  EXPECT_EQ(recorder().Last().method, "ReprioritizeJobs");
  EXPECT_EQ(recorder().LastRequest<v1::ReprioritizeJobsRequest>().new_priority(), 7u);

  HttpReply preempt = Do("POST", "/v1/jobs:preempt", R"({"jobIds":["a"],"reason":"r"})");
  ASSERT_EQ(preempt.status, 200);
  EXPECT_EQ(Json(preempt)["preemptRequestedIds"], nlohmann::json({"a"}));
  EXPECT_EQ(recorder().Last().method, "PreemptJobs");
}

TEST_F(RestServerTest, BulkRoutesTakeTheTargetFromThePath) {
  HttpReply queue = Do("POST", "/v1/queues/q1:cancel",
                       R"({"priorityClasses":["low"],"states":["JOB_STATE_QUEUED"],"reason":"r"})");
  ASSERT_EQ(queue.status, 200) << queue.body;
  EXPECT_EQ(Json(queue)["cancelRequestedCount"], 1);
  EXPECT_EQ(recorder().Last().method, "CancelQueue");
  auto cancel_queue = recorder().LastRequest<v1::CancelQueueRequest>();
  EXPECT_EQ(cancel_queue.queue(), "q1");
  EXPECT_THAT(cancel_queue.priority_classes(), ElementsAre("low"));
  EXPECT_THAT(cancel_queue.states(), ElementsAre(v1::JOB_STATE_QUEUED));
  EXPECT_EQ(cancel_queue.reason(), "r");

  ASSERT_EQ(Do("POST", "/v1/queues/q1:preempt", R"({"queue":"q1"})").status, 200);
  EXPECT_EQ(recorder().Last().method, "PreemptQueue");
  EXPECT_EQ(recorder().LastRequest<v1::PreemptQueueRequest>().queue(), "q1");

  HttpReply executor = Do("POST", "/v1/executors/e%2F1:cancel",
                          R"({"nodeId":"n1","queues":["a","b"],"priorityClasses":["x","y"]})");
  ASSERT_EQ(executor.status, 200) << executor.body;
  EXPECT_EQ(Json(executor)["cancelRequestedCount"], 2);
  EXPECT_EQ(recorder().Last().method, "CancelOnExecutor");
  auto cancel_executor = recorder().LastRequest<v1::CancelOnExecutorRequest>();
  EXPECT_EQ(cancel_executor.executor_id(), "e/1");
  EXPECT_EQ(cancel_executor.node_id(), "n1");
  EXPECT_THAT(cancel_executor.queues(), ElementsAre("a", "b"));

  ASSERT_EQ(Do("POST", "/v1/executors/e1:preempt", "{}").status, 200);
  EXPECT_EQ(recorder().Last().method, "PreemptOnExecutor");
  EXPECT_EQ(recorder().LastRequest<v1::PreemptOnExecutorRequest>().executor_id(), "e1");

  // A body naming another target is refused before any call.
  const size_t calls = recorder().Count();
  HttpReply mismatch = Do("POST", "/v1/executors/e1:preempt", R"({"executorId":"e2"})");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(Json(mismatch)["message"],
            "executorId \"e2\" in the body does not match \"e1\" in the path");
  EXPECT_EQ(Do("POST", "/v1/queues/q1:cancel", R"({"queue":"q2"})").status, 400);
  EXPECT_EQ(recorder().Count(), calls);
}

TEST_F(RestServerTest, JobRoutes) {
  HttpReply status = Do("POST", "/v1/jobs:status", R"({"jobIds":["a","b"]})");
  ASSERT_EQ(status.status, 200);
  EXPECT_EQ(Json(status)["states"]["a"], "JOB_STATE_RUNNING");
  EXPECT_EQ(recorder().Last().method, "GetJobStatus");
  EXPECT_THAT(recorder().LastRequest<v1::GetJobStatusRequest>().job_ids(), ElementsAre("a", "b"));

  HttpReply one = Do("GET", "/v1/jobs/job%201/status");
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(Json(one)["states"]["job 1"], "JOB_STATE_RUNNING");
  EXPECT_THAT(recorder().LastRequest<v1::GetJobStatusRequest>().job_ids(), ElementsAre("job 1"));

  HttpReply details = Do("GET", "/v1/jobs/j1?expandSpec=true");
  ASSERT_EQ(details.status, 200) << details.body;
  EXPECT_EQ(Json(details)["jobs"]["j1"]["summary"]["state"], "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(Json(details)["jobs"]["j1"]["job"]["id"], "j1");
  auto details_request = recorder().LastRequest<v1::GetJobDetailsRequest>();
  EXPECT_EQ(recorder().Last().method, "GetJobDetails");
  EXPECT_THAT(details_request.job_ids(), ElementsAre("j1"));
  EXPECT_TRUE(details_request.expand_spec());

  ASSERT_EQ(Do("POST", "/v1/jobs:details", R"({"jobIds":["x"],"expandSpec":false})").status, 200);
  EXPECT_FALSE(recorder().LastRequest<v1::GetJobDetailsRequest>().expand_spec());

  HttpReply list = Do("GET",
                      "/v1/jobs?queue=q&jobSet=s&state=QUEUED&state=RUNNING&owner=alice"
                      "&label=team%3Dml&label=tier=gold&pageSize=10&pageToken=t"
                      "&orderBy=-submit_time");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(Json(list)["jobs"][0]["state"], "JOB_STATE_QUEUED");
  EXPECT_EQ(Json(list)["nextPageToken"], "page-2");
  auto list_request = recorder().LastRequest<v1::ListJobsRequest>();
  EXPECT_EQ(recorder().Last().method, "ListJobs");
  EXPECT_EQ(list_request.queue(), "q");
  EXPECT_EQ(list_request.job_set(), "s");
  EXPECT_THAT(list_request.states(), ElementsAre(v1::JOB_STATE_QUEUED, v1::JOB_STATE_RUNNING));
  EXPECT_EQ(list_request.owner(), "alice");
  EXPECT_EQ(list_request.labels().at("team"), "ml");
  EXPECT_EQ(list_request.labels().at("tier"), "gold");
  EXPECT_EQ(list_request.page_size(), 10);
  EXPECT_EQ(list_request.page_token(), "t");
  EXPECT_EQ(list_request.order_by(), "-submit_time");

  ASSERT_EQ(Do("POST", "/v1/jobs:list", R"({"queue":"q2","states":["JOB_STATE_FAILED"]})").status,
            200);
  EXPECT_EQ(recorder().LastRequest<v1::ListJobsRequest>().queue(), "q2");
}

TEST_F(RestServerTest, DeviceRoutes) {
  HttpReply applied =
      Do("POST", "/v1/configurations",
         R"({"configuration":{"name":"cams","discoveryHandler":{"name":"onvif"},"capacity":2}})",
         {{"Authorization", "Bearer t"}});
  ASSERT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(Json(applied)["name"], "cams");
  EXPECT_EQ(recorder().Last().method, "ApplyConfiguration");
  EXPECT_EQ(recorder().Last().authorization, "Bearer t");
  EXPECT_EQ(recorder().LastRequest<v1::ApplyConfigurationRequest>().configuration().capacity(), 2);

  ASSERT_EQ(Do("GET", "/v1/configurations?pageSize=5").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListConfigurationsRequest>().page_size(), 5);
  HttpReply got = Do("GET", "/v1/configurations/cams");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(recorder().LastRequest<v1::GetConfigurationRequest>().name(), "cams");
  ASSERT_EQ(Do("DELETE", "/v1/configurations/cams").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::DeleteConfigurationRequest>().name(), "cams");

  ASSERT_EQ(Do("GET", "/v1/instances?configurationName=cams&node=n1").status, 200);
  auto list = recorder().LastRequest<v1::ListInstancesRequest>();
  EXPECT_EQ(list.configuration_name(), "cams");
  EXPECT_EQ(list.node(), "n1");
  ASSERT_EQ(Do("GET", "/v1/instances/cams-4294ea").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetInstanceRequest>().name(), "cams-4294ea");

  HttpReply services = Do("GET", "/v1/services?configurationName=cams&pageSize=2&pageToken=a");
  ASSERT_EQ(services.status, 200) << services.body;
  auto list_services = recorder().LastRequest<v1::ListServicesRequest>();
  EXPECT_EQ(list_services.configuration_name(), "cams");
  EXPECT_EQ(list_services.page_size(), 2);
  EXPECT_EQ(list_services.page_token(), "a");
  EXPECT_EQ(Json(services)["services"][0]["kind"], "SERVICE_KIND_CONFIGURATION");
  EXPECT_EQ(Json(services)["services"][0]["endpoints"][0]["ports"]["rtsp"], 8554);
  EXPECT_EQ(Json(services)["services"][0]["endpoints"][0]["ready"], true);
  ASSERT_EQ(Do("GET", "/v1/services/cams-4294ea-svc").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetServiceRequest>().name(), "cams-4294ea-svc");

  ASSERT_EQ(Do("POST", "/v1/secrets", R"({"secret":{"name":"creds"}})").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ApplySecretRequest>().secret().name(), "creds");
  ASSERT_EQ(Do("GET", "/v1/secrets").status, 200);
  EXPECT_EQ(recorder().Last().method, "ListSecrets");
  ASSERT_EQ(Do("GET", "/v1/secrets/creds").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetSecretRequest>().name(), "creds");
  ASSERT_EQ(Do("DELETE", "/v1/secrets/creds").status, 200);
  EXPECT_EQ(recorder().Last().method, "DeleteSecret");

  ASSERT_EQ(Do("POST", "/v1/configmaps", R"({"configMap":{"name":"urls"}})").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ApplyConfigMapRequest>().config_map().name(), "urls");
  ASSERT_EQ(Do("GET", "/v1/configmaps").status, 200);
  EXPECT_EQ(recorder().Last().method, "ListConfigMaps");
  ASSERT_EQ(Do("GET", "/v1/configmaps/urls").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetConfigMapRequest>().name(), "urls");
  ASSERT_EQ(Do("DELETE", "/v1/configmaps/urls").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::DeleteConfigMapRequest>().name(), "urls");

  // The path names the resource; the query may not name another one. Unknown fields are errors.
  const size_t calls = recorder().Count();
  EXPECT_EQ(Do("GET", "/v1/configurations/cams?name=other").status, 400);
  EXPECT_EQ(Do("POST", "/v1/configurations", R"({"configuration":{"nmae":"x"}})").status, 400);
  EXPECT_EQ(recorder().Count(), calls);
  // A service error keeps its status.
  recorder().FailNext(grpc::Status(grpc::StatusCode::NOT_FOUND, "configuration x not found"));
  HttpReply missing = Do("GET", "/v1/configurations/x");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(Json(missing)["message"].get<std::string>(), HasSubstr("configuration x"));
}

TEST_F(RestServerTest, PipelineCatalogRoutes) {
  HttpReply created = Do("POST", "/v1/pipelines", R"({"name":"counting","spec":"x: 1"})",
                         {{"Authorization", "Bearer t"}});
  ASSERT_EQ(created.status, 200) << created.body;
  EXPECT_EQ(Json(created)["pipeline"]["name"], "counting");
  EXPECT_EQ(recorder().Last().method, "CreatePipeline");
  EXPECT_EQ(recorder().Last().authorization, "Bearer t");
  EXPECT_EQ(recorder().LastRequest<v1::CreatePipelineRequest>().spec(), "x: 1");

  HttpReply get = Do("GET", "/v1/pipelines/my%20pipe");
  ASSERT_EQ(get.status, 200) << get.body;
  EXPECT_EQ(Json(get)["id"], "my pipe");
  EXPECT_EQ(recorder().LastRequest<v1::GetPipelineRequest>().pipeline(), "my pipe");

  ASSERT_EQ(Do("GET", "/v1/pipelines?pageSize=2&pageToken=t").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListPipelinesRequest>().page_size(), 2);
  EXPECT_EQ(recorder().LastRequest<v1::ListPipelinesRequest>().page_token(), "t");

  ASSERT_EQ(Do("POST", "/v1/pipelines/p1/versions", R"({"name":"v2","spec":"y"})").status, 200);
  auto version = recorder().LastRequest<v1::CreatePipelineVersionRequest>();
  EXPECT_EQ(version.pipeline(), "p1");
  EXPECT_EQ(version.name(), "v2");
  // The body may name the pipeline too, but not another one.
  const size_t calls = recorder().Count();
  HttpReply mismatch = Do("POST", "/v1/pipelines/p1/versions", R"({"pipeline":"p2"})");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_THAT(Json(mismatch)["message"].get<std::string>(), HasSubstr("does not match"));
  EXPECT_EQ(recorder().Count(), calls);

  ASSERT_EQ(Do("GET", "/v1/pipelines/p1/versions?pageSize=1").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListPipelineVersionsRequest>().pipeline(), "p1");
  // The path binds the pipeline; the query may not set it as well.
  EXPECT_EQ(Do("GET", "/v1/pipelines/p1/versions?pipeline=p2").status, 400);
  ASSERT_EQ(Do("GET", "/v1/pipeline_versions/v9").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetPipelineVersionRequest>().version_id(), "v9");
  ASSERT_EQ(Do("DELETE", "/v1/pipeline_versions/v9").status, 200);
  EXPECT_EQ(recorder().Last().method, "DeletePipelineVersion");
  ASSERT_EQ(Do("DELETE", "/v1/pipelines/p1").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::DeletePipelineRequest>().pipeline(), "p1");

  ASSERT_EQ(Do("POST", "/v1/experiments", R"({"name":"e","description":"d"})").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::CreateExperimentRequest>().description(), "d");
  ASSERT_EQ(Do("GET", "/v1/experiments?includeArchived=true").status, 200);
  EXPECT_TRUE(recorder().LastRequest<v1::ListExperimentsRequest>().include_archived());
  ASSERT_EQ(Do("GET", "/v1/experiments/e").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetExperimentRequest>().experiment(), "e");
  ASSERT_EQ(Do("POST", "/v1/experiments/e:archive").status, 200);
  EXPECT_EQ(recorder().Last().method, "ArchiveExperiment");
  EXPECT_EQ(recorder().LastRequest<v1::ArchiveExperimentRequest>().experiment(), "e");
  ASSERT_EQ(Do("POST", "/v1/experiments/e:unarchive", "{}").status, 200);
  EXPECT_EQ(recorder().Last().method, "UnarchiveExperiment");
  ASSERT_EQ(Do("DELETE", "/v1/experiments/e").status, 200);
  EXPECT_EQ(recorder().Last().method, "DeleteExperiment");

  ASSERT_EQ(Do("GET", "/v1/artifacts/a1").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::GetArtifactRequest>().artifact_id(), "a1");
  HttpReply lineage = Do("GET", "/v1/artifacts/a1:lineage");
  ASSERT_EQ(lineage.status, 200);
  EXPECT_EQ(Json(lineage)["artifact"]["id"], "a1");
  EXPECT_EQ(Json(lineage)["producer"]["taskState"], "PIPELINE_TASK_STATE_CACHED");
  ASSERT_EQ(Do("GET", "/v1/runs/r1/artifacts").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListArtifactsRequest>().run_id(), "r1");

  ASSERT_EQ(Do("GET", "/v1/cache?pageSize=3").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListCacheEntriesRequest>().page_size(), 3);
  ASSERT_EQ(Do("POST", "/v1/cache:prune", R"({"fingerprints":["f1","f2"]})").status, 200);
  EXPECT_THAT(recorder().LastRequest<v1::PruneCacheRequest>().fingerprints(),
              ElementsAre("f1", "f2"));
  EXPECT_EQ(Do("POST", "/v1/cache:prune?all=true").status, 400);  // fields go in the body
}

TEST_F(RestServerTest, RunRoutes) {
  ASSERT_EQ(Do("POST", "/v1/runs", R"({"pipeline":"p","parameters":{"n":"3"}})").status, 200);
  auto create = recorder().LastRequest<v1::CreateRunRequest>();
  EXPECT_EQ(create.pipeline(), "p");
  EXPECT_EQ(create.parameters().at("n"), "3");

  HttpReply get = Do("GET", "/v1/runs/r1");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(Json(get)["id"], "r1");
  EXPECT_EQ(Json(get)["state"], "PIPELINE_RUN_STATE_RUNNING");
  ASSERT_EQ(
      Do("GET", "/v1/runs?experiment=e&state=RUNNING&state=failed&sortBy=display_name").status,
      200);
  auto list = recorder().LastRequest<v1::ListRunsRequest>();
  EXPECT_EQ(list.experiment(), "e");
  EXPECT_THAT(list.states(),
              ElementsAre(v1::PIPELINE_RUN_STATE_RUNNING, v1::PIPELINE_RUN_STATE_FAILED));
  EXPECT_EQ(list.sort_by(), "display_name");

  for (const char* verb : {"terminate", "retry", "archive", "unarchive"}) {
    ASSERT_EQ(Do("POST", absl::StrCat("/v1/runs/r1:", verb)).status, 200) << verb;
    EXPECT_EQ(recorder().LastRequest<v1::RunIdRequest>().run_id(), "r1");
  }
  EXPECT_EQ(recorder().Last().method, "UnarchiveRun");
  ASSERT_EQ(Do("DELETE", "/v1/runs/r1").status, 200);
  EXPECT_EQ(recorder().Last().method, "DeleteRun");

  ASSERT_EQ(Do("POST", "/v1/recurringruns",
               R"({"pipeline":"p","recurringRun":{"displayName":"nightly",)"
               R"("cron":{"cron":"0 0 * * * *"}}})")
                .status,
            200);
  auto recurring = recorder().LastRequest<v1::CreateRecurringRunRequest>();
  EXPECT_EQ(recurring.recurring_run().cron().cron(), "0 0 * * * *");
  ASSERT_EQ(Do("GET", "/v1/recurringruns?pageSize=4").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::ListRecurringRunsRequest>().page_size(), 4);
  ASSERT_EQ(Do("GET", "/v1/recurringruns/rr").status, 200);
  EXPECT_EQ(recorder().LastRequest<v1::RecurringRunIdRequest>().recurring_run_id(), "rr");
  ASSERT_EQ(Do("POST", "/v1/recurringruns/rr:enable").status, 200);
  EXPECT_EQ(recorder().Last().method, "EnableRecurringRun");
  ASSERT_EQ(Do("POST", "/v1/recurringruns/rr:disable").status, 200);
  EXPECT_EQ(recorder().Last().method, "DisableRecurringRun");
  ASSERT_EQ(Do("DELETE", "/v1/recurringruns/rr").status, 200);
  EXPECT_EQ(recorder().Last().method, "DeleteRecurringRun");

  // Errors of the service map like any other.
  recorder().FailNext(
      grpc::Status(grpc::StatusCode::NOT_FOUND, "pipeline run \"x\" does not exist"));
  HttpReply missing = Do("GET", "/v1/runs/x");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Json(missing)["message"], "pipeline run \"x\" does not exist");
}

TEST_F(RestServerTest, HealthzAndVersion) {
  HttpReply health = Do("GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(health.body, "ok");
  HttpReply version = Do("GET", "/v1/version");
  EXPECT_EQ(version.status, 200);
  EXPECT_FALSE(Json(version)["version"].get<std::string>().empty());
  EXPECT_EQ(recorder().Count(), 0u);
}

// ---- Errors -----------------------------------------------------------------------------------

TEST_F(RestServerTest, GrpcErrorsMapToHttpStatusAndJson) {
  const std::pair<grpc::StatusCode, int> cases[] = {
      {grpc::StatusCode::INVALID_ARGUMENT, 400},   {grpc::StatusCode::FAILED_PRECONDITION, 400},
      {grpc::StatusCode::OUT_OF_RANGE, 400},       {grpc::StatusCode::UNAUTHENTICATED, 401},
      {grpc::StatusCode::PERMISSION_DENIED, 403},  {grpc::StatusCode::NOT_FOUND, 404},
      {grpc::StatusCode::ALREADY_EXISTS, 409},     {grpc::StatusCode::ABORTED, 409},
      {grpc::StatusCode::RESOURCE_EXHAUSTED, 429}, {grpc::StatusCode::UNIMPLEMENTED, 501},
      {grpc::StatusCode::UNAVAILABLE, 503},        {grpc::StatusCode::DEADLINE_EXCEEDED, 504},
      {grpc::StatusCode::INTERNAL, 500},           {grpc::StatusCode::UNKNOWN, 500},
      {grpc::StatusCode::DATA_LOSS, 500},
  };
  for (const auto& [code, http] : cases) {
    recorder().FailNext(grpc::Status(code, absl::StrCat("failure ", static_cast<int>(code))));
    HttpReply reply = Do("GET", "/v1/queues/x");
    EXPECT_EQ(reply.status, http) << "code " << code;
    nlohmann::json json = Json(reply);
    EXPECT_EQ(json["code"], static_cast<int>(code));
    EXPECT_EQ(json["message"], absl::StrCat("failure ", static_cast<int>(code)));
    EXPECT_EQ(json["status"], std::string(GrpcCodeName(code)));
  }
}

TEST_F(RestServerTest, UnknownRouteAndWrongMethod) {
  HttpReply missing = Do("GET", "/v2/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(Json(missing)["status"], "NOT_FOUND");
  EXPECT_THAT(Json(missing)["message"].get<std::string>(), HasSubstr("/v2/nothing"));

  HttpReply wrong = Do("PATCH", "/v1/queues/a", "{}");
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.header("allow"), "GET, PUT, DELETE");
  EXPECT_EQ(Json(wrong)["code"], 12);

  EXPECT_EQ(Do("GET", "/v1/jobs:submit").status, 405);
  EXPECT_EQ(Do("GET", "/v1/queues/%zz").status, 400);
  EXPECT_EQ(recorder().Count(), 0u);
}

// Issue 21: a custom method with the wrong HTTP method was routed to the plain resource route
// (UpdateQueue of a queue named "x:cancel") and answered 400.
TEST_F(RestServerTest, WrongMethodOnACustomMethodIs405) {
  for (const char* method : {"PUT", "GET", "DELETE"}) {
    HttpReply reply = Do(method, "/v1/queues/x:cancel", "{}");
    EXPECT_EQ(reply.status, 405) << method;
    EXPECT_EQ(reply.header("allow"), "POST") << method;
    EXPECT_EQ(Json(reply)["status"], "UNIMPLEMENTED") << method;
  }
  EXPECT_EQ(recorder().Count(), 0u);
}

TEST_F(RestServerTest, MalformedJsonAndUnknownFieldsAre400) {
  HttpReply truncated = Do("POST", "/v1/queues", R"({"name": )");
  EXPECT_EQ(truncated.status, 400);
  EXPECT_EQ(Json(truncated)["status"], "INVALID_ARGUMENT");
  EXPECT_THAT(Json(truncated)["message"].get<std::string>(), HasSubstr("invalid JSON"));

  HttpReply typo = Do("POST", "/v1/jobs:submit", R"({"queue":"q","jbSet":"s"})");
  EXPECT_EQ(typo.status, 400);
  EXPECT_THAT(Json(typo)["message"].get<std::string>(), HasSubstr("jbSet"));

  HttpReply wrong_type = Do("POST", "/v1/jobs:reprioritize", R"({"newPriority":"high"})");
  EXPECT_EQ(wrong_type.status, 400);

  HttpReply bad_query = Do("GET", "/v1/jobs?stat=QUEUED");
  EXPECT_EQ(bad_query.status, 400);
  EXPECT_THAT(Json(bad_query)["message"].get<std::string>(), HasSubstr("stat"));
  EXPECT_EQ(Do("GET", "/v1/jobs?state=SLEEPING").status, 400);
  EXPECT_EQ(Do("POST", "/v1/jobs:status?x=1", "{}").status, 400);
  EXPECT_EQ(recorder().Count(), 0u);
}

TEST_F(RestServerTest, AuthorizationWithControlCharactersIsRejected) {
  HttpReply reply = Do("GET", "/v1/queues/a", "", {{"Authorization", "Bearer \x80\x81"}});
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(recorder().Count(), 0u);
}

TEST_F(RestServerTest, OversizedBodyIs413WithoutReadingIt) {
  // Announce 64 MiB and send none of it: the answer must come from the headers alone.
  std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(
      conn->Send("POST /v1/jobs:submit HTTP/1.1\r\nHost: x\r\n"
                 "Content-Length: 67108864\r\n\r\n"));
  std::optional<HttpReply> reply = conn->ReadResponse(absl::Seconds(5));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 413);
  EXPECT_THAT(Json(*reply)["message"].get<std::string>(),
              HasSubstr("67108864 bytes exceeds the limit of 1048576 bytes"));
  EXPECT_TRUE(conn->WaitForEof(absl::Seconds(5)));

  // A client that sends the whole oversized body still sees the 413.
  HttpReply big = Do("POST", "/v1/jobs:submit", std::string(2 << 20, 'x'));
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(recorder().Count(), 0u);
}

TEST_F(RestServerTest, ExpectContinueGetsInterimResponse) {
  std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
  ASSERT_NE(conn, nullptr);
  const std::string body = R"({"jobIds":["a"]})";
  ASSERT_TRUE(conn->Send(absl::StrCat("POST /v1/jobs:status HTTP/1.1\r\nHost: x\r\n",
                                      "Expect: 100-continue\r\nContent-Length: ", body.size(),
                                      "\r\n\r\n")));
  std::optional<HttpReply> interim = conn->ReadResponse(absl::Seconds(5));
  ASSERT_TRUE(interim.has_value());
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(conn->Send(body));
  std::optional<HttpReply> reply = conn->ReadResponse(absl::Seconds(5));
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200);
}

TEST_F(RestServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
  ASSERT_NE(conn, nullptr);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(conn->Send(testing::BuildRequest("GET", absl::StrCat("/v1/queues/q", i))));
    std::optional<HttpReply> reply = conn->ReadResponse();
    ASSERT_TRUE(reply.has_value()) << i;
    EXPECT_EQ(reply->status, 200);
    EXPECT_EQ(Json(*reply)["name"], absl::StrCat("q", i));
  }
  // Pipelined: two requests in one write, two answers in order.
  ASSERT_TRUE(conn->Send(testing::BuildRequest("GET", "/v1/queues/p1") +
                         testing::BuildRequest("GET", "/v1/queues/p2")));
  std::optional<HttpReply> first = conn->ReadResponse();
  std::optional<HttpReply> second = conn->ReadResponse();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(Json(*first)["name"], "p1");
  EXPECT_EQ(Json(*second)["name"], "p2");
}

// ---- Events -----------------------------------------------------------------------------------

TEST_F(RestServerTest, EventStreamSendsFramesAndEnds) {
  SseClient client(port_, "/v1/queues/my%20q/jobsets/set-1/events?fromId=1-0",
                   {{"Authorization", "Bearer w"}});
  ASSERT_TRUE(client.WaitForHead());
  EXPECT_EQ(client.status(), 200);
  EXPECT_EQ(client.headers().at("content-type"), "text/event-stream");
  ASSERT_TRUE(client.WaitForEnd());
  std::vector<testing::SseFrame> events = client.Events();
  ASSERT_EQ(events.size(), 2u);  // after 1-0
  EXPECT_EQ(events[0].id, "2-0");
  EXPECT_EQ(events[0].event, "JOB_EVENT_TYPE_QUEUED");
  nlohmann::json data = nlohmann::json::parse(events[0].data);
  EXPECT_EQ(data["id"], "2-0");
  EXPECT_EQ(data["queue"], "my q");
  EXPECT_EQ(data["jobSet"], "set-1");
  EXPECT_EQ(data["type"], "JOB_EVENT_TYPE_QUEUED");
  EXPECT_EQ(events[1].event, "JOB_EVENT_TYPE_RUNNING");

  auto request = recorder().LastRequest<v1::JobSetEventsRequest>();
  EXPECT_EQ(recorder().Last().authorization, "Bearer w");
  EXPECT_EQ(request.queue(), "my q");
  EXPECT_EQ(request.job_set(), "set-1");
  EXPECT_EQ(request.from_id(), "1-0");
  EXPECT_FALSE(request.watch());
}

TEST_F(RestServerTest, LastEventIdHeaderResumes) {
  SseClient client(port_, "/v1/queues/q/jobsets/s/events?fromId=1-0", {{"Last-Event-ID", "2-0"}});
  ASSERT_TRUE(client.WaitForEnd());
  std::vector<testing::SseFrame> events = client.Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].id, "3-0");
  EXPECT_EQ(recorder().LastRequest<v1::JobSetEventsRequest>().from_id(), "2-0");
}

TEST_F(RestServerTest, EventsAsJsonArray) {
  HttpReply reply =
      Do("GET", "/v1/queues/q/jobsets/s/events", "", {{"Accept", "application/json"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  nlohmann::json json = Json(reply);
  ASSERT_TRUE(json.is_array());
  ASSERT_EQ(json.size(), 3u);
  EXPECT_EQ(json[0]["type"], "JOB_EVENT_TYPE_SUBMITTED");
  EXPECT_EQ(json[2]["id"], "3-0");

  EXPECT_EQ(
      Do("GET", "/v1/queues/q/jobsets/s/events?watch=true", "", {{"Accept", "application/json"}})
          .status,
      400);
  recorder().FailNext(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no watch"));
  EXPECT_EQ(Do("GET", "/v1/queues/q/jobsets/s/events", "", {{"Accept", "application/json"}}).status,
            403);
}

TEST_F(RestServerTest, EventStreamErrorBeforeAnyEventIsAnHttpError) {
  recorder().FailNext(grpc::Status(grpc::StatusCode::NOT_FOUND, "no such job set"));
  SseClient client(port_, "/v1/queues/q/jobsets/s/events?watch=true");
  ASSERT_TRUE(client.WaitForHead());
  EXPECT_EQ(client.status(), 404);
  client.WaitForEnd();
  EXPECT_THAT(client.body(), HasSubstr("no such job set"));
}

TEST_F(RestServerTest, WatchStreamsPushedEventsAndDisconnectCancelsTheCall) {
  SseClient client(port_, "/v1/queues/q/jobsets/s/events?watch=true");
  ASSERT_TRUE(client.WaitForEvents(3));
  ASSERT_TRUE(api_.events().WaitForActive(1, absl::Seconds(5)));
  v1::JobSetEvent pushed;
  pushed.set_id("4-0");
  pushed.set_type(v1::JOB_EVENT_TYPE_SUCCEEDED);
  api_.events().Push(pushed);
  ASSERT_TRUE(client.WaitForEvents(4));
  EXPECT_EQ(client.Events()[3].event, "JOB_EVENT_TYPE_SUCCEEDED");
  EXPECT_TRUE(recorder().LastRequest<v1::JobSetEventsRequest>().watch());

  client.Close();
  EXPECT_TRUE(api_.events().WaitForCancelled(1, absl::Seconds(5)));
  EXPECT_TRUE(api_.events().WaitForActive(0, absl::Seconds(5)));
  // The server is still fine.
  EXPECT_EQ(Do("GET", "/healthz").status, 200);
}

TEST_F(RestServerTest, WatchWithoutEventsStillAnswersAndSendsKeepalives) {
  RestOptions options = Options();
  options.sse_keepalive = absl::Milliseconds(100);
  StartServer(options);
  api_.events().set_canned(false);
  SseClient client(port_, "/v1/queues/q/jobsets/s/events?watch=true");
  // Headers come after sse_header_delay even though no event exists yet.
  ASSERT_TRUE(client.WaitForHead(absl::Seconds(5)));
  EXPECT_EQ(client.status(), 200);
  ASSERT_TRUE(client.WaitForComment(absl::Seconds(5)));
  EXPECT_EQ(client.frames()[0].comment, "keepalive");
  EXPECT_TRUE(client.Events().empty());
}

TEST_F(RestServerTest, WatchWithoutEventsSendsHeadersAfterTheDelay) {
  api_.events().set_canned(false);  // keepalive stays at 15 s
  SseClient client(port_, "/v1/queues/q/jobsets/s/events?watch=true");
  const absl::Time start = absl::Now();
  ASSERT_TRUE(client.WaitForHead(absl::Seconds(5)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(150));  // sse_header_delay is 200 ms
  EXPECT_EQ(client.status(), 200);
  EXPECT_EQ(client.headers().at("transfer-encoding"), "chunked");
}

TEST_F(RestServerTest, StreamsDoNotStarveUnaryCalls) {
  // More open watches than pool threads (2).
  std::vector<std::unique_ptr<SseClient>> clients;
  for (int i = 0; i < 6; ++i) {
    clients.push_back(
        std::make_unique<SseClient>(port_, "/v1/queues/q/jobsets/s/events?watch=true"));
  }
  for (auto& client : clients) ASSERT_TRUE(client->WaitForEvents(3));
  ASSERT_TRUE(api_.events().WaitForActive(6, absl::Seconds(5)));
  const absl::Time start = absl::Now();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Do("GET", "/v1/queues/x").status, 200);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(RestServerTest, ShutdownWithOpenStreamsIsPrompt) {
  std::vector<std::unique_ptr<SseClient>> clients;
  for (int i = 0; i < 4; ++i) {
    clients.push_back(
        std::make_unique<SseClient>(port_, "/v1/queues/q/jobsets/s/events?watch=true"));
  }
  for (auto& client : clients) ASSERT_TRUE(client->WaitForEvents(3));
  // An idle keep-alive connection too.
  std::unique_ptr<TestConnection> idle = TestConnection::Connect(port_);
  ASSERT_NE(idle, nullptr);
  const absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  for (auto& client : clients) EXPECT_TRUE(client->WaitForEnd(absl::Seconds(2)));
  EXPECT_TRUE(idle->WaitForEof(absl::Seconds(2)));
  EXPECT_TRUE(api_.events().WaitForActive(0, absl::Seconds(5)));
  // No longer listening.
  EXPECT_EQ(TestConnection::Connect(port_), nullptr);
  server_->Shutdown();  // idempotent
}

TEST_F(RestServerTest, ShutdownCancelsABlockedUnaryCall) {
  recorder().HangNext();
  std::thread client([&] { Do("GET", "/v1/queues/slow"); });
  const absl::Time wait_until = absl::Now() + absl::Seconds(5);
  while (recorder().Count() == 0 && absl::Now() < wait_until) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_EQ(recorder().Count(), 1u);
  const absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  client.join();
}

TEST_F(RestServerTest, StartReportsBadOptionsAndBusyPorts) {
  RestOptions options = Options();
  options.port = port_;
  auto busy = RestServer::Start(options, api_.channel());
  ASSERT_FALSE(busy.ok());
  EXPECT_EQ(busy.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(busy.status().message()), HasSubstr(absl::StrCat(port_)));

  options = Options();
  options.threads = 0;
  EXPECT_EQ(RestServer::Start(options, api_.channel()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RestServer::Start(Options(), nullptr).status().code(),
            absl::StatusCode::kInvalidArgument);
  // The running server is unaffected.
  EXPECT_EQ(Do("GET", "/healthz").status, 200);
}

// ---- Logs -------------------------------------------------------------------------------------

TEST_F(RestServerTest, LogsWithoutFollowAreOneResponseWithContentLength) {
  HttpReply reply =
      Do("GET", "/v1/jobs/job%201/logs?tailLines=5&runId=r-1", "", {{"Authorization", "Bearer l"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.header("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(reply.header("content-length"), "8");
  EXPECT_EQ(reply.header("transfer-encoding"), "");
  EXPECT_EQ(reply.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(reply.body, "one\ntwo\n");

  testing::RecordedCall call = recorder().Last();
  EXPECT_EQ(call.method, "GetJobLogs");
  EXPECT_EQ(call.authorization, "Bearer l");
  auto request = recorder().LastRequest<v1::GetJobLogsRequest>();
  EXPECT_EQ(request.job_id(), "job 1");
  EXPECT_EQ(request.run_id(), "r-1");
  EXPECT_EQ(request.tail_lines(), 5);
  EXPECT_FALSE(request.follow());

  // Proto names work too; an empty log is an empty body.
  api_.jobs().set_log({});
  HttpReply empty = Do("GET", "/v1/jobs/j/logs?tail_lines=2&run_id=r&follow=false");
  ASSERT_EQ(empty.status, 200) << empty.body;
  EXPECT_EQ(empty.body, "");
  EXPECT_EQ(empty.header("content-length"), "0");
  request = recorder().LastRequest<v1::GetJobLogsRequest>();
  EXPECT_EQ(request.tail_lines(), 2);
  EXPECT_EQ(request.run_id(), "r");
}

TEST_F(RestServerTest, LogsWithFollowStreamDataAsItArrivesAndEndWithTheRun) {
  SseClient client(port_, "/v1/jobs/j/logs?follow=true", {{"Authorization", "Bearer f"}});
  ASSERT_TRUE(client.WaitForText("one\ntwo\n"));
  EXPECT_EQ(client.status(), 200);
  EXPECT_EQ(client.headers().at("content-type"), "text/plain; charset=utf-8");
  EXPECT_EQ(client.headers().at("transfer-encoding"), "chunked");
  EXPECT_EQ(client.headers().count("content-length"), 0u);
  ASSERT_TRUE(api_.jobs().WaitForActiveLogs(1, absl::Seconds(5)));
  EXPECT_TRUE(recorder().LastRequest<v1::GetJobLogsRequest>().follow());
  EXPECT_EQ(recorder().Last().authorization, "Bearer f");

  api_.jobs().AppendLog("three\n");
  ASSERT_TRUE(client.WaitForText("three\n"));
  EXPECT_FALSE(client.WaitForEnd(absl::Milliseconds(100)));  // the run goes on

  api_.jobs().EndLog();
  ASSERT_TRUE(client.WaitForEnd());
  EXPECT_TRUE(client.complete());  // ended with the last chunk
  EXPECT_EQ(client.body(), "one\ntwo\nthree\n");
  EXPECT_TRUE(api_.jobs().WaitForActiveLogs(0, absl::Seconds(5)));
}

TEST_F(RestServerTest, LogsWithFollowSendHeadersBeforeAnyOutput) {
  api_.jobs().set_log({});
  SseClient client(port_, "/v1/jobs/j/logs?follow=true");
  // Headers come after sse_header_delay (200 ms) even though the run printed nothing yet.
  ASSERT_TRUE(client.WaitForHead(absl::Seconds(5)));
  EXPECT_EQ(client.status(), 200);
  api_.jobs().AppendLog("late\n");
  ASSERT_TRUE(client.WaitForText("late\n"));
  EXPECT_EQ(client.body(), "late\n");  // no keepalive comments in a log
}

TEST_F(RestServerTest, LogsClientDisconnectCancelsTheCall) {
  SseClient client(port_, "/v1/jobs/j/logs?follow=true");
  ASSERT_TRUE(client.WaitForText("two\n"));
  ASSERT_TRUE(api_.jobs().WaitForActiveLogs(1, absl::Seconds(5)));
  client.Close();
  EXPECT_TRUE(api_.jobs().WaitForCancelledLogs(1, absl::Seconds(5)));
  EXPECT_TRUE(api_.jobs().WaitForActiveLogs(0, absl::Seconds(5)));
  EXPECT_EQ(Do("GET", "/healthz").status, 200);
}

TEST_F(RestServerTest, LogsErrorsMapToHttpStatusAndJson) {
  const std::pair<grpc::StatusCode, int> cases[] = {
      {grpc::StatusCode::NOT_FOUND, 404},         {grpc::StatusCode::FAILED_PRECONDITION, 400},
      {grpc::StatusCode::UNAVAILABLE, 503},       {grpc::StatusCode::INVALID_ARGUMENT, 400},
      {grpc::StatusCode::PERMISSION_DENIED, 403}, {grpc::StatusCode::UNAUTHENTICATED, 401},
  };
  for (const char* target : {"/v1/jobs/j/logs", "/v1/jobs/j/logs?follow=true"}) {
    for (const auto& [code, http] : cases) {
      recorder().FailNext(grpc::Status(code, "job j has not run yet"));
      HttpReply reply = Do("GET", target);
      EXPECT_EQ(reply.status, http) << target << " code " << code;
      EXPECT_THAT(reply.header("content-type"), HasSubstr("application/json"));
      nlohmann::json json = Json(reply);
      EXPECT_EQ(json["code"], static_cast<int>(code));
      EXPECT_EQ(json["status"], std::string(GrpcCodeName(code)));
      EXPECT_EQ(json["message"], "job j has not run yet");
    }
  }
}

TEST_F(RestServerTest, LogsQueryParametersAreChecked) {
  HttpReply unknown = Do("GET", "/v1/jobs/j/logs?tail=1");
  EXPECT_EQ(unknown.status, 400);
  EXPECT_THAT(Json(unknown)["message"].get<std::string>(), HasSubstr("\"tail\""));
  HttpReply path_field = Do("GET", "/v1/jobs/j/logs?jobId=k");
  EXPECT_EQ(path_field.status, 400);
  EXPECT_THAT(Json(path_field)["message"].get<std::string>(), HasSubstr("path"));
  EXPECT_EQ(Do("GET", "/v1/jobs/j/logs?tailLines=many").status, 400);
  EXPECT_EQ(Do("GET", "/v1/jobs/j/logs?follow=maybe").status, 400);
  EXPECT_EQ(Do("GET", "/v1/jobs/j/logs?follow=true&follow=false").status, 400);
  HttpReply post = Do("POST", "/v1/jobs/j/logs", "{}");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("allow"), "GET");
  EXPECT_EQ(recorder().Count(), 0u);
}

TEST_F(RestServerTest, LogsFailureAfterDataLeavesTheStreamIncomplete) {
  api_.jobs().FailLogAfterData(grpc::Status(grpc::StatusCode::UNAVAILABLE, "executor gone"));
  // Without follow nothing was sent yet: a proper error.
  HttpReply reply = Do("GET", "/v1/jobs/j/logs");
  EXPECT_EQ(reply.status, 503);
  EXPECT_EQ(Json(reply)["message"], "executor gone");

  // Following, the data went out first: the body ends without its last chunk.
  std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
  ASSERT_NE(conn, nullptr);
  ASSERT_TRUE(conn->Send(testing::BuildRequest("GET", "/v1/jobs/j/logs?follow=true")));
  EXPECT_FALSE(conn->ReadResponse(absl::Seconds(5)).has_value());
  EXPECT_TRUE(conn->eof());
  EXPECT_THAT(conn->buffer(), HasSubstr("200 OK"));
  EXPECT_THAT(conn->buffer(), HasSubstr("4\r\none\n\r\n"));
  EXPECT_THAT(conn->buffer(), ::testing::Not(::testing::EndsWith("0\r\n\r\n")));
}

TEST_F(RestServerTest, LargeLogWithoutFollowIsStreamedInsteadOfBuffered) {
  RestOptions options = Options();
  options.log_buffer_bytes = 1024;
  StartServer(options);
  api_.jobs().set_log({std::string(700, 'a'), std::string(700, 'b'), "end\n"});
  HttpReply big = Do("GET", "/v1/jobs/j/logs");
  ASSERT_EQ(big.status, 200);
  EXPECT_EQ(big.header("transfer-encoding"), "chunked");
  EXPECT_EQ(big.body, std::string(700, 'a') + std::string(700, 'b') + "end\n");

  api_.jobs().set_log({std::string(1000, 'x')});
  HttpReply small = Do("GET", "/v1/jobs/j/logs");
  ASSERT_EQ(small.status, 200);
  EXPECT_EQ(small.header("content-length"), "1000");
}

TEST_F(RestServerTest, ShutdownEndsFollowedLogsPromptly) {
  std::vector<std::unique_ptr<SseClient>> clients;
  for (int i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<SseClient>(port_, "/v1/jobs/j/logs?follow=true"));
  }
  for (auto& client : clients) ASSERT_TRUE(client->WaitForText("two\n"));
  ASSERT_TRUE(api_.jobs().WaitForActiveLogs(3, absl::Seconds(5)));
  const absl::Time start = absl::Now();
  server_->Shutdown();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  for (auto& client : clients) EXPECT_TRUE(client->WaitForEnd(absl::Seconds(2)));
  EXPECT_TRUE(api_.jobs().WaitForActiveLogs(0, absl::Seconds(5)));
}

// ---- Hostile input ----------------------------------------------------------------------------

TEST_F(RestServerTest, SurvivesGarbageTruncationAndHugeHeaders) {
  absl::BitGen gen;
  for (int i = 0; i < 100; ++i) {
    std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
    ASSERT_NE(conn, nullptr);
    std::string bytes(absl::Uniform(gen, 1, 2048), '\0');
    for (char& c : bytes) c = static_cast<char>(absl::Uniform(gen, 0, 256));
    if (i % 3 == 0) bytes = "GET /" + bytes;  // gets past the method
    conn->Send(bytes);
    conn->ShutdownWrite();
    conn->WaitForEof(absl::Seconds(5));
  }

  const std::string valid = testing::BuildRequest("POST", "/v1/jobs:submit",
                                                  R"({"queue":"q","items":[{"clientId":"c"}]})",
                                                  {{"Authorization", "Bearer t"}});
  for (size_t cut = 0; cut < valid.size(); cut += 7) {
    std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
    ASSERT_NE(conn, nullptr);
    conn->Send(valid.substr(0, cut));
    conn->ShutdownWrite();
    conn->WaitForEof(absl::Seconds(5));
  }

  {
    std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
    ASSERT_NE(conn, nullptr);
    conn->Send("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(200 << 10, 'a') +
               "\r\n\r\n");
    std::optional<HttpReply> reply = conn->ReadResponse(absl::Seconds(5));
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 431);
  }
  {
    std::unique_ptr<TestConnection> conn = TestConnection::Connect(port_);
    ASSERT_NE(conn, nullptr);
    conn->Send("THIS IS NOT HTTP\r\n\r\n");
    std::optional<HttpReply> reply = conn->ReadResponse(absl::Seconds(5));
    ASSERT_TRUE(reply.has_value());
    EXPECT_EQ(reply->status, 400);
  }
  // Random JSON-ish bodies on every body route.
  const char* routes[] = {"/v1/queues",          "/v1/jobs:submit",        "/v1/jobs:cancel",
                          "/v1/jobsets:cancel",  "/v1/jobs:status",        "/v1/jobs:list",
                          "/v1/queues/a:cordon", "/v1/jobs:details",       "/v1/jobs:preempt",
                          "/v1/queues/a:cancel", "/v1/executors/e:preempt"};
  const std::string alphabet = "{}[]\":,0123456789.eE+-truefalsnl \\u\xff\x00abc";
  for (int i = 0; i < 200; ++i) {
    std::string body(absl::Uniform(gen, 0, 64), ' ');
    for (char& c : body) c = alphabet[absl::Uniform<size_t>(gen, 0, alphabet.size())];
    HttpReply reply = Do("POST", routes[i % std::size(routes)], body);
    EXPECT_TRUE(reply.status == 200 || reply.status == 400) << reply.status << " " << body;
  }
  // Random targets.
  for (int i = 0; i < 200; ++i) {
    std::string target = "/v1/";
    const std::string chars = "abc/%:?=&+20zqueuesjobs";
    for (int j = absl::Uniform(gen, 0, 30); j > 0; --j) {
      target.push_back(chars[absl::Uniform<size_t>(gen, 0, chars.size())]);
    }
    HttpReply reply = Do("GET", target);
    EXPECT_GE(reply.status, 200) << target;
    EXPECT_LT(reply.status, 600) << target;
  }
  EXPECT_EQ(Do("GET", "/healthz").status, 200);
}

}  // namespace
}  // namespace regatta::rest
