// Issue 21 (findings 6, 7 and 8) against the whole server, over gRPC and REST: bad numbers and
// bytes are INVALID_ARGUMENT naming the field, errors carry no SQL and stay small, a wrong
// method on a custom method is 405.
#include <future>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/platform_fixture.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class ErrorHygieneTest : public PlatformTest {
 protected:
  rest::testing::HttpReply Http(absl::string_view method, absl::string_view target,
                                absl::string_view body = "") {
    return rest::testing::Fetch(
        HttpPort(), method, target, body,
        {{"Authorization", Basic("alice", "alice-pw")}, {"Content-Type", "application/json"}});
  }
};

TEST_F(ErrorHygieneTest, DenormalPriorityFactorIsInvalidArgument) {
  regatta::v1::CreateQueueRequest request;
  request.mutable_queue()->set_name("tiny");
  request.mutable_queue()->set_priority_factor(5e-324);
  regatta::v1::Queue queue;
  grpc::Status status = queues_->CreateQueue(Alice().get(), request, &queue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), StartsWith("queue.priority_factor: "));

  rest::testing::HttpReply reply =
      Http("POST", "/v1/queues", R"({"name":"tiny","priorityFactor":5e-324})");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_THAT(reply.body, HasSubstr("queue.priority_factor"));
}

TEST_F(ErrorHygieneTest, ThousandLabelFiltersAreInvalidArgumentWithoutSql) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::ListJobsRequest request;
  nlohmann::json labels = nlohmann::json::object();
  for (int i = 0; i < 1001; ++i) {
    (*request.mutable_labels())[absl::StrCat("key", i)] = "value";
    labels[absl::StrCat("key", i)] = "value";
  }
  regatta::v1::ListJobsResponse response;
  grpc::Status status = jobs_->ListJobs(Alice().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), StartsWith("labels: 1001 label filters"));

  rest::testing::HttpReply reply =
      Http("POST", "/v1/jobs:list", nlohmann::json{{"labels", labels}}.dump());
  EXPECT_EQ(reply.status, 400);
  EXPECT_THAT(reply.body, HasSubstr("labels: 1001 label filters"));
  for (const char* internal : {"SELECT", "sqlite", "instr("}) {
    EXPECT_THAT(reply.body, Not(HasSubstr(internal)));
  }
}

TEST_F(ErrorHygieneTest, HugeNamesComeBackAsSmallErrors) {
  const std::string name(3 << 20, 'n');  // under the 4 MiB request limit
  regatta::v1::CreateQueueRequest create;
  create.mutable_queue()->set_name(name);
  regatta::v1::Queue queue;
  grpc::Status status = queues_->CreateQueue(Alice().get(), create, &queue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), StartsWith("queue.name: "));
  EXPECT_LT(status.error_message().size(), 1024u);

  regatta::v1::GetQueueRequest get;
  get.set_name(name);
  status = queues_->GetQueue(Alice().get(), get, &queue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LT(status.error_message().size(), 1024u);

  rest::testing::HttpReply reply =
      Http("POST", "/v1/queues", nlohmann::json{{"name", name}}.dump());
  EXPECT_EQ(reply.status, 400);
  EXPECT_LT(reply.body.size(), 1024u);
}

TEST_F(ErrorHygieneTest, NulBytesInCommandAreRefused) {
  ASSERT_TRUE(CreateQueue("q").ok());
  regatta::v1::SubmitJobsRequest request = Jobs("q", "js", 1);
  request.mutable_items(0)->mutable_task()->add_command(std::string("safe\0; rm -rf /", 15));
  regatta::v1::SubmitJobsResponse response;
  grpc::Status status = submit_->SubmitJobs(Alice().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), StartsWith("items[0].task.command[1]: "));
  EXPECT_THAT(status.error_message(), HasSubstr("NUL byte at offset 4"));
}

TEST_F(ErrorHygieneTest, UnparsableRequestBytesAreInvalidArgument) {
  grpc::GenericStub stub(channel_);
  for (const char* method :
       {"/regatta.v1.QueueService/CreateQueue", "/regatta.v1.JobService/ListJobs",
        "/regatta.v1.SubmitService/SubmitJobs"}) {
    grpc::Slice slice(std::string(16, '\xFF'));
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    std::unique_ptr<grpc::ClientContext> context = Alice();
    std::promise<grpc::Status> done;
    stub.UnaryCall(context.get(), method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) { done.set_value(std::move(status)); });
    grpc::Status status = done.get_future().get();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << method;
    EXPECT_THAT(status.error_message(), HasSubstr(method));
  }
  // The server keeps serving.
  EXPECT_TRUE(CreateQueue("after").ok());
}

TEST_F(ErrorHygieneTest, WrongMethodOnACustomMethodIs405) {
  rest::testing::HttpReply reply = Http("PUT", "/v1/queues/x:cancel", "{}");
  EXPECT_EQ(reply.status, 405) << reply.body;
  EXPECT_EQ(reply.header("allow"), "POST");
}

}  // namespace
}  // namespace regatta::testing
