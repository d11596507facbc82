// Pod-spec jobs against the whole platform in-process: submitted over gRPC, REST and a job
// file, the job keeps its pod spec whole and the scheduler sees the derived request; fields
// outside the pod model are refused naming their path.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/cli/app.h"
#include "tests/integration/platform_fixture.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using rest::testing::Fetch;
using rest::testing::HttpReply;

class PodIntegrationTest : public PlatformTest {
 protected:
  HttpReply Post(const std::string& target, const json& body) {
    return Fetch(
        HttpPort(), "POST", target, body.dump(),
        {{"Authorization", Basic("alice", "alice-pw")}, {"Content-Type", "application/json"}});
  }

  regatta::v1::Job JobOf(const std::string& id) {
    SyncViews();
    regatta::v1::GetJobDetailsRequest request;
    request.add_job_ids(id);
    request.set_expand_spec(true);
    regatta::v1::GetJobDetailsResponse response;
    grpc::Status s = jobs_->GetJobDetails(Alice().get(), request, &response);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return response.jobs().contains(id) ? response.jobs().at(id).job() : regatta::v1::Job();
  }

  // Two containers (1 cpu + 500m, 1Gi) and an init container asking for 2 cpu.
  static json PodSpecJson() {
    return json::parse(R"({
      "initContainers": [{"name": "setup", "image": "localhost/busybox",
                          "resources": {"requests": {"cpu": "2"}}}],
      "containers": [
        {"name": "main", "image": "localhost/busybox", "command": ["sh", "-c", "true"],
         "resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                       "limits": {"cpu": "1", "memory": "1Gi"}},
         "volumeMounts": [{"name": "scratch", "mountPath": "/scratch"}]},
        {"name": "sidecar", "image": "localhost/busybox",
         "resources": {"limits": {"cpu": "500m"}}}],
      "volumes": [{"name": "scratch", "emptyDir": {}}],
      "nodeSelector": {"kubernetes.io/os": "linux"},
      "activeDeadlineSeconds": 600,
      "terminationGracePeriodSeconds": 0
    })");
  }

  static void ExpectDerived(const regatta::v1::Job& job) {
    EXPECT_EQ(job.task().resources().requests().at("cpu"), "2");
    EXPECT_EQ(job.task().resources().requests().at("memory"), "1Gi");
    EXPECT_EQ(job.task().resources().limits().at("cpu"), "2");
    EXPECT_EQ(job.task().node_selector().at("kubernetes.io/os"), "linux");
    EXPECT_EQ(job.task().active_deadline().seconds(), 600);
    ASSERT_EQ(job.task().pod_spec().containers_size(), 2);
    EXPECT_EQ(job.task().pod_spec().containers(1).resources().limits().at("cpu"), "500m");
    EXPECT_TRUE(job.task().pod_spec().has_termination_grace_period_seconds());
    EXPECT_TRUE(job.task().command().empty());
  }
};

TEST_F(PodIntegrationTest, GrpcSubmitKeepsThePodAndDerivesTheRequest) {
  ASSERT_TRUE(CreateQueue("pods").ok());
  regatta::v1::SubmitJobsRequest request;
  request.set_queue("pods");
  request.set_job_set("s");
  auto* pod = request.add_items()->mutable_task()->mutable_pod_spec();
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(PodSpecJson().dump(), pod).ok());
  regatta::v1::SubmitJobsResponse response;
  grpc::Status s = submit_->SubmitJobs(Alice().get(), request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ExpectDerived(JobOf(response.items(0).job_id()));

  // A mount of a volume the pod lacks: refused naming the path, in Kubernetes spelling.
  pod->mutable_containers(0)->mutable_volume_mounts(0)->set_name("data");
  s = submit_->SubmitJobs(Alice().get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "items[0].task.podSpec.containers[0].volumeMounts[0].name: no volume named \"data\"");
}

TEST_F(PodIntegrationTest, RestSubmitKeepsThePodAndDerivesTheRequest) {
  ASSERT_TRUE(CreateQueue("pods").ok());
  json item = {{"task", {{"podSpec", PodSpecJson()}}}};
  json body = {{"queue", "pods"}, {"jobSet", "s"}, {"items", json::array({item})}};
  HttpReply reply = Post("/v1/jobs:submit", body);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json submitted = json::parse(reply.body);
  const std::string id = submitted["items"][0].value("jobId", "");
  ASSERT_FALSE(id.empty()) << reply.body;
  ExpectDerived(JobOf(id));

  // The REST view of the job has the pod under Kubernetes' names.
  reply = Post("/v1/jobs:details", {{"jobIds", json::array({id})}, {"expandSpec", true}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json job = json::parse(reply.body)["jobs"][id]["job"];
  EXPECT_EQ(job["task"]["podSpec"]["initContainers"][0]["name"], "setup") << reply.body;
  EXPECT_EQ(job["task"]["resources"]["requests"]["cpu"], "2") << reply.body;

  // Kubernetes fields outside the model are refused with their path, never dropped.
  body["items"][0]["task"]["podSpec"]["volumes"][0]["persistentVolumeClaim"] = {
      {"claimName", "data"}};
  body["items"][0]["task"]["podSpec"]["volumes"][0].erase("emptyDir");
  reply = Post("/v1/jobs:submit", body);
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(json::parse(reply.body).value("message", ""),
            "items[0].task.podSpec.volumes[0].persistentVolumeClaim: not supported by Regatta's "
            "pod model (supported: emptyDir, hostPath)");
}

TEST_F(PodIntegrationTest, JobFileErrorsNameFileLineAndPath) {
  ASSERT_TRUE(CreateQueue("pods").ok());
  const std::string path = (dir_ / "pods.yaml").string();
  std::ofstream(path) << R"(queue: pods
jobSet: s
jobs:
  - podSpec:
      containers:
        - name: main
          image: localhost/busybox
          resources: {requests: {cpu: 1}}
          volumeMounts: [{name: scratch, mountPath: /scratch}]
)";
  std::vector<std::string> args = {"--server",   platform_->grpc_address(),
                                   "--user",     "alice",
                                   "--password", "alice-pw",
                                   "--timeout",  "60s",
                                   "submit",     path};
  std::istringstream in;
  std::ostringstream out, err;
  // The server refuses the mount; the CLI points at the line in the file.
  EXPECT_EQ(cli::RunCli(args, in, out, err), 1);
  EXPECT_THAT(err.str(), HasSubstr(path + ":9:27: jobs[0].task.podSpec.containers[0]."
                                          "volumeMounts[0].name: no volume named \"scratch\""));
}

}  // namespace
}  // namespace regatta::testing
