#include "src/api/in_process_executor_api.h"

#include <deque>
#include <thread>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "src/common/thread_name.h"

namespace regatta::api {
namespace {

// What both ends of an in-process lease session share: requests up, messages down.
struct LeasePipe {
  absl::Mutex mu;
  std::deque<regatta::v1::LeaseRequest> requests ABSL_GUARDED_BY(mu);
  std::deque<regatta::v1::LeaseStreamMessage> messages ABSL_GUARDED_BY(mu);
  bool writes_done ABSL_GUARDED_BY(mu) = false;  // the executor sends no more requests
  bool cancelled ABSL_GUARDED_BY(mu) = false;    // either end ended the session
  bool served ABSL_GUARDED_BY(mu) = false;       // the server's end returned
};

class ServerEnd final : public LeaseSessionEnd {
 public:
  explicit ServerEnd(LeasePipe* pipe) : pipe_(pipe) {}

  bool Read(regatta::v1::LeaseRequest* request) override {
    absl::MutexLock lock(&pipe_->mu);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pipe_->mu) {
      return !pipe_->requests.empty() || pipe_->writes_done || pipe_->cancelled;
    };
    pipe_->mu.Await(absl::Condition(&ready));
    if (pipe_->cancelled || pipe_->requests.empty()) return false;
    *request = std::move(pipe_->requests.front());
    pipe_->requests.pop_front();
    return true;
  }

  bool Write(const regatta::v1::LeaseStreamMessage& message) override {
    absl::MutexLock lock(&pipe_->mu);
    if (pipe_->cancelled) return false;
    pipe_->messages.push_back(message);
    return true;
  }

  bool IsCancelled() override {
    absl::MutexLock lock(&pipe_->mu);
    return pipe_->cancelled;
  }

  void TryCancel() override {
    absl::MutexLock lock(&pipe_->mu);
    pipe_->cancelled = true;
  }

 private:
  LeasePipe* pipe_;
};

class InProcessLeaseSession final : public executor::LeaseSession {
 public:
  InProcessLeaseSession(ExecutorService* service, const auth::Principal& principal) {
    server_ = std::thread([this, service, principal] {
      SetThreadName("rg-lease-serve");
      ServerEnd end(&pipe_);
      absl::Status status = service->ServeLeases(principal, end);
      absl::MutexLock lock(&pipe_.mu);
      status_ = std::move(status);
      pipe_.served = true;
    });
  }

  ~InProcessLeaseSession() override {
    Cancel();
    if (server_.joinable()) server_.join();
  }

  bool Write(const regatta::v1::LeaseRequest& request) override {
    absl::MutexLock lock(&pipe_.mu);
    if (pipe_.cancelled || pipe_.served || pipe_.writes_done) return false;
    pipe_.requests.push_back(request);
    return true;
  }

  void WritesDone() override {
    absl::MutexLock lock(&pipe_.mu);
    pipe_.writes_done = true;
  }

  bool Read(regatta::v1::LeaseStreamMessage* message) override {
    absl::MutexLock lock(&pipe_.mu);
    auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pipe_.mu) {
      return !pipe_.messages.empty() || pipe_.cancelled || pipe_.served;
    };
    pipe_.mu.Await(absl::Condition(&ready));
    // Like a gRPC stream: what the server wrote before it returned is still read.
    if (pipe_.messages.empty() || pipe_.cancelled) return false;
    *message = std::move(pipe_.messages.front());
    pipe_.messages.pop_front();
    return true;
  }

  void Cancel() override {
    absl::MutexLock lock(&pipe_.mu);
    pipe_.cancelled = true;
  }

  absl::Status Finish() override {
    if (server_.joinable()) server_.join();
    absl::MutexLock lock(&pipe_.mu);
    if (status_.ok() && pipe_.cancelled) return absl::CancelledError("lease session cancelled");
    return status_;
  }

 private:
  LeasePipe pipe_;
  absl::Status status_ ABSL_GUARDED_BY(pipe_.mu);
  std::thread server_;
};

class InProcessExecutorApi final : public executor::ExecutorApi {
 public:
  InProcessExecutorApi(ExecutorService* service, auth::Principal principal)
      : service_(service), principal_(std::move(principal)) {}

  std::unique_ptr<executor::LeaseSession> OpenLeaseSession() override {
    return std::make_unique<InProcessLeaseSession>(service_, principal_);
  }

  // The timeout is moot: the call returns once the log took the events (or refused them).
  absl::StatusOr<regatta::v1::ReportEventsResponse> ReportEvents(
      const regatta::v1::ReportEventsRequest& request, absl::Duration /*timeout*/) override {
    return service_->Report(principal_, request);
  }

 private:
  ExecutorService* const service_;
  const auth::Principal principal_;
};

}  // namespace

std::unique_ptr<executor::ExecutorApi> NewInProcessExecutorApi(ExecutorService* service,
                                                               auth::Principal principal) {
  return std::make_unique<InProcessExecutorApi>(service, std::move(principal));
}

}  // namespace regatta::api
