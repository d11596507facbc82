// What clients see of failed calls: no internal text, bounded messages, INVALID_ARGUMENT for
// request bytes that do not parse (issue 21, findings 7 and 8).
#include "src/api/status_interceptor.h"

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/common/error_text.h"

namespace regatta::api {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSqlError[] =
    "sqlite store: prepare [SELECT job_id FROM jobs j WHERE 1 AND instr(j.labels, ?) > 0]: "
    "Expression tree is too large (maximum depth 1000) (code 1)";

TEST(PublicStatusTest, InternalTextIsReplacedByAReference) {
  SequentialIdGenerator ids("err");
  for (grpc::StatusCode code :
       {grpc::StatusCode::INTERNAL, grpc::StatusCode::UNKNOWN, grpc::StatusCode::DATA_LOSS}) {
    grpc::Status out = PublicStatus(grpc::Status(code, kSqlError), "/m", &ids);
    EXPECT_EQ(out.error_code(), code);
    EXPECT_THAT(out.error_message(), Not(HasSubstr("SELECT")));
    EXPECT_THAT(out.error_message(), Not(HasSubstr("sqlite")));
    EXPECT_THAT(out.error_message(), HasSubstr("(reference err-"));
  }
}

TEST(PublicStatusTest, OtherMessagesAreKeptButCapped) {
  SequentialIdGenerator ids;
  grpc::Status small(grpc::StatusCode::INVALID_ARGUMENT, "queue.name: required");
  EXPECT_EQ(PublicStatus(small, "/m", &ids).error_message(), "queue.name: required");
  grpc::Status big(grpc::StatusCode::NOT_FOUND, std::string(15 << 20, 'q'));
  grpc::Status out = PublicStatus(big, "/m", &ids);
  EXPECT_EQ(out.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(out.error_message().size(), kMaxStatusMessageBytes + 32);
  EXPECT_THAT(out.error_message(), HasSubstr("(15728640 bytes)"));
}

// A queue service whose every call fails the way a broken store would.
class FailingQueues final : public regatta::v1::QueueService::Service {
 public:
  grpc::Status CreateQueue(grpc::ServerContext*, const regatta::v1::CreateQueueRequest*,
                           regatta::v1::Queue*) override {
    return grpc::Status(grpc::StatusCode::INTERNAL, kSqlError);
  }
  grpc::Status GetQueue(grpc::ServerContext*, const regatta::v1::GetQueueRequest* request,
                        regatta::v1::Queue*) override {
    return grpc::Status(grpc::StatusCode::NOT_FOUND,
                        absl::StrCat("queue \"", request->name(), "\" does not exist"));
  }
};

class InterceptedServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(32 << 20);
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
    creators.push_back(NewStatusHygieneInterceptorFactory(&ids_));
    builder.experimental().SetInterceptorCreators(std::move(creators));
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(32 << 20);
    args.SetMaxSendMessageSize(32 << 20);
    channel_ = server_->InProcessChannel(args);
  }

  // Sends `bytes` as the request of `method` without any protobuf encoding.
  grpc::Status RawCall(const std::string& method, const std::string& bytes) {
    grpc::GenericStub stub(channel_);
    grpc::Slice slice(bytes);
    grpc::ByteBuffer request(&slice, 1);
    grpc::ByteBuffer response;
    grpc::ClientContext context;
    std::promise<grpc::Status> done;
    stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response,
                   [&](grpc::Status status) { done.set_value(std::move(status)); });
    return done.get_future().get();
  }

  SequentialIdGenerator ids_{"err"};
  FailingQueues service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(InterceptedServerTest, UnparsableRequestBytesAreInvalidArgument) {
  // 0xFF... is a field tag whose varint never ends: no message parses from it.
  for (const std::string& bytes : {std::string(10, '\xFF'), std::string("\x0a\x7f", 2),
                                   std::string("\x0a\x05\x0a\x03\xFF\xFF", 6)}) {
    grpc::Status status = RawCall("/regatta.v1.QueueService/CreateQueue", bytes);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("not a valid request message"));
  }
}

TEST_F(InterceptedServerTest, HandlerErrorsLeaveWithoutInternalText) {
  auto stub = regatta::v1::QueueService::NewStub(channel_);
  grpc::ClientContext create_context;
  regatta::v1::Queue queue;
  grpc::Status status =
      stub->CreateQueue(&create_context, regatta::v1::CreateQueueRequest(), &queue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_THAT(status.error_message(), Not(HasSubstr("SELECT")));
  EXPECT_THAT(status.error_message(), HasSubstr("reference err-"));

  // A parsable request whose handler fails stays that handler's code.
  regatta::v1::GetQueueRequest get;
  get.set_name(std::string(15 << 20, 'n'));
  grpc::ClientContext get_context;
  status = stub->GetQueue(&get_context, get, &queue);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_LE(status.error_message().size(), kMaxStatusMessageBytes + 32);
}

}  // namespace
}  // namespace regatta::api
