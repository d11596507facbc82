#include "src/devices/protocol/handler_server.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "akri/discovery/v0/discovery.grpc.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/server.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::devices {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

bool SameDevices(const v0::DiscoverResponse& a, const v0::DiscoverResponse& b) {
  return google::protobuf::util::MessageDifferencer::Equals(a, b);
}

}  // namespace

class HandlerServer::Service final : public v0::DiscoveryHandler::Service {
 public:
  Service(DeviceFinder* finder, const HandlerServerOptions& options, Registrar* registrar)
      : finder_(finder),
        name_(options.name),
        relist_interval_(options.relist_interval),
        cancel_check_(options.cancel_check),
        registrar_(registrar) {}

  void Stop() { stopping_ = true; }
  int active_streams() const { return active_streams_; }

  grpc::Status Discover(grpc::ServerContext* context, const v0::DiscoverRequest* request,
                        grpc::ServerWriter<v0::DiscoverResponse>* writer) override {
    absl::StatusOr<std::unique_ptr<DeviceQuery>> query = finder_->Prepare(*request);
    if (!query.ok()) {
      LOG_INFO("rejected a discover request", "handler", name_, "error", query.status().message());
      return ToGrpc(query.status());
    }
    ++active_streams_;
    struct Leave {
      std::atomic<int>& count;
      ~Leave() { --count; }
    } leave{active_streams_};
    std::optional<v0::DiscoverResponse> sent;
    bool list_now = true;
    absl::Time next_relist = absl::Now();
    while (!stopping_) {
      if (context->IsCancelled()) return grpc::Status::CANCELLED;
      if (list_now || absl::Now() >= next_relist) {
        next_relist = absl::Now() + relist_interval_;
        absl::StatusOr<std::vector<v0::Device>> devices = (*query)->ListDevices();
        if (!devices.ok()) return ToGrpc(devices.status());
        v0::DiscoverResponse response;
        for (v0::Device& device : *devices) *response.add_devices() = std::move(device);
        if (!sent.has_value() || !SameDevices(*sent, response)) {
          if (!writer->Write(response)) {
            // The agent went away (Akri's handlers register again here): it may be a new one.
            registrar_->Nudge();
            return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the agent closed the stream");
          }
          sent = std::move(response);
        }
      }
      list_now = (*query)->WaitForPossibleChange(
          std::min(cancel_check_, std::max(absl::ZeroDuration(), next_relist - absl::Now())));
    }
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the discovery handler is shutting down");
  }

 private:
  DeviceFinder* const finder_;
  const std::string name_;
  const absl::Duration relist_interval_;
  const absl::Duration cancel_check_;
  Registrar* const registrar_;
  std::atomic<bool> stopping_ = false;
  std::atomic<int> active_streams_ = 0;
};

absl::StatusOr<std::unique_ptr<HandlerServer>> HandlerServer::Start(HandlerServerOptions options,
                                                                    DeviceFinder* finder) {
  RETURN_IF_ERROR(CheckHandlerName("handler name", options.name));
  if (options.dir.empty()) return absl::InvalidArgumentError("discovery dir: empty");
  std::unique_ptr<HandlerServer> server(new HandlerServer());
  server->socket_path_ =
      options.socket_path.empty() ? HandlerSocket(options.dir, options.name) : options.socket_path;
  server->agent_socket_ = AgentRegistrationSocket(options.dir);
  RETURN_IF_ERROR(CheckSocketPath("agent socket", server->agent_socket_));

  RegistrarOptions registrar_options;
  registrar_options.agent_socket = server->agent_socket_;
  registrar_options.request.set_name(options.name);
  registrar_options.request.set_endpoint(server->socket_path_);
  registrar_options.request.set_endpoint_type(v0::RegisterDiscoveryHandlerRequest::UDS);
  registrar_options.request.set_shared(options.shared);
  registrar_options.check_interval = options.registration_check;
  server->registrar_ = std::make_unique<Registrar>(std::move(registrar_options));

  server->service_ = std::make_unique<Service>(finder, options, server->registrar_.get());
  ASSIGN_OR_RETURN(server->server_, ServeOnSocket("handler socket", options.dir,
                                                  server->socket_path_, server->service_.get()));
  // Register only once serving: the agent calls Discover right after.
  server->registrar_->Start();
  LOG_INFO("discovery handler serving", "handler", options.name, "socket", server->socket_path_,
           "shared", options.shared ? "true" : "false");
  return server;
}

HandlerServer::~HandlerServer() { Shutdown(); }

int HandlerServer::active_streams() const {
  return service_ != nullptr ? service_->active_streams() : 0;
}

void HandlerServer::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (registrar_ != nullptr) registrar_->Stop();
  if (service_ != nullptr) service_->Stop();
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
    unlink(socket_path_.c_str());  // only a socket this server bound
  }
}

}  // namespace regatta::devices
