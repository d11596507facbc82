#include "src/executor/api/executor_api.h"

#include <chrono>
#include <utility>

#include "grpcpp/client_context.h"
#include "regatta/v1/executor_service.grpc.pb.h"

namespace regatta::executor {
namespace {

absl::Status FromGrpc(const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

void Authorize(grpc::ClientContext& context, const std::string& authorization) {
  if (!authorization.empty()) context.AddMetadata("authorization", authorization);
}

class GrpcLeaseSession final : public LeaseSession {
 public:
  GrpcLeaseSession(regatta::v1::ExecutorService::Stub& stub, const std::string& authorization) {
    Authorize(context_, authorization);
    stream_ = stub.LeaseJobRuns(&context_);
  }

  bool Write(const regatta::v1::LeaseRequest& request) override { return stream_->Write(request); }
  void WritesDone() override { stream_->WritesDone(); }
  bool Read(regatta::v1::LeaseStreamMessage* message) override { return stream_->Read(message); }
  void Cancel() override { context_.TryCancel(); }
  absl::Status Finish() override { return FromGrpc(stream_->Finish()); }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<
      grpc::ClientReaderWriter<regatta::v1::LeaseRequest, regatta::v1::LeaseStreamMessage>>
      stream_;
};

class GrpcExecutorApi final : public ExecutorApi {
 public:
  GrpcExecutorApi(std::shared_ptr<grpc::Channel> channel, std::string authorization)
      : stub_(regatta::v1::ExecutorService::NewStub(std::move(channel))),
        authorization_(std::move(authorization)) {}

  std::unique_ptr<LeaseSession> OpenLeaseSession() override {
    return std::make_unique<GrpcLeaseSession>(*stub_, authorization_);
  }

  absl::StatusOr<regatta::v1::ReportEventsResponse> ReportEvents(
      const regatta::v1::ReportEventsRequest& request, absl::Duration timeout) override {
    grpc::ClientContext context;
    Authorize(context, authorization_);
    context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMicroseconds(timeout));
    regatta::v1::ReportEventsResponse response;
    grpc::Status status = stub_->ReportEvents(&context, request, &response);
    if (!status.ok()) return FromGrpc(status);
    return response;
  }

 private:
  std::unique_ptr<regatta::v1::ExecutorService::Stub> stub_;
  const std::string authorization_;
};

}  // namespace

std::unique_ptr<ExecutorApi> NewGrpcExecutorApi(std::shared_ptr<grpc::Channel> channel,
                                                std::string authorization) {
  return std::make_unique<GrpcExecutorApi>(std::move(channel), std::move(authorization));
}

}  // namespace regatta::executor
