#include "src/devices/agent/agent.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "akri/discovery/v0/discovery.grpc.pb.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::devices {
namespace {

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

bool SameDevices(const std::vector<DiscoveredDevice>& a, const std::vector<DiscoveredDevice>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].shared != b[i].shared || a[i].endpoint != b[i].endpoint ||
        !google::protobuf::util::MessageDifferencer::Equals(a[i].device, b[i].device)) {
      return false;
    }
  }
  return true;
}

v0::DiscoverRequest ToProto(const DiscoveryRequest& request) {
  v0::DiscoverRequest proto;
  proto.set_discovery_details(request.discovery_details);
  for (const auto& [name, value] : request.discovery_properties) {
    v0::ByteData& data = (*proto.mutable_discovery_properties())[name];
    if (value.has_value()) data.set_vec(*value);
  }
  return proto;
}

}  // namespace

// One Discover stream of one configuration to one endpoint, run by its own thread. Everything
// but the constants is guarded by the agent's mutex.
struct Agent::Stream {
  std::string configuration;
  uint64_t config_epoch = 0;
  std::string handler;
  HandlerEndpoint endpoint;
  v0::DiscoverRequest request;

  bool stopped = false;
  bool retry_now = false;
  bool in_call = false;
  // Some call has answered or ended since the stream started: its devices are known.
  bool settled = false;
  grpc::ClientContext* context = nullptr;
  int64_t attempts = 0;
  absl::Time next_attempt = absl::InfinitePast();
  absl::Duration backoff;
  std::vector<v0::Device> devices;
  std::string error;
  std::thread thread;
};

struct Agent::Config {
  DiscoveryRequest request;
  uint64_t epoch = 0;
  std::map<std::string, std::shared_ptr<Stream>> streams;  // by endpoint
  std::optional<std::vector<DiscoveredDevice>> reported_devices;
  std::optional<std::string> reported_error;
};

class Agent::RegistrationService final : public v0::Registration::Service {
 public:
  explicit RegistrationService(Agent* agent) : agent_(agent) {}
  grpc::Status RegisterDiscoveryHandler(grpc::ServerContext*,
                                        const v0::RegisterDiscoveryHandlerRequest* request,
                                        v0::Empty*) override {
    absl::Status status = agent_->Register(*request);
    if (status.ok()) return grpc::Status::OK;
    return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                        std::string(status.message()));
  }

 private:
  Agent* const agent_;
};

Agent::Agent(AgentOptions options, AgentCallbacks callbacks)
    : options_(std::move(options)),
      callbacks_(std::move(callbacks)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {}

absl::StatusOr<std::unique_ptr<Agent>> Agent::Start(AgentOptions options,
                                                    AgentCallbacks callbacks) {
  if (options.dir.empty()) return absl::InvalidArgumentError("discovery dir: empty");
  if (options.node_name.empty()) options.node_name = HostName();
  std::unique_ptr<Agent> agent(new Agent(std::move(options), std::move(callbacks)));
  agent->socket_ = AgentRegistrationSocket(agent->options_.dir);
  agent->delivery_thread_ = std::thread([a = agent.get()] { a->Deliver(); });
  agent->service_ = std::make_unique<RegistrationService>(agent.get());
  ASSIGN_OR_RETURN(agent->server_, ServeOnSocket("agent socket", agent->options_.dir,
                                                 agent->socket_, agent->service_.get()));
  LOG_INFO("device agent serving registrations", "socket", agent->socket_, "node",
           agent->options_.node_name);
  return agent;
}

Agent::~Agent() { Shutdown(); }

void Agent::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_->Wait();
  }
  {
    absl::MutexLock lock(&mu_);
    for (auto& [_, config] : configs_) {
      for (auto& [__, stream] : config->streams) StopStreamLocked(stream);
    }
    configs_.clear();
    stopping_ = true;
  }
  if (delivery_thread_.joinable()) delivery_thread_.join();
  if (server_ != nullptr) unlink(socket_.c_str());  // only a socket this agent bound
}

absl::Status Agent::Apply(DiscoveryRequest request) {
  if (request.configuration.empty()) {
    return absl::InvalidArgumentError("configuration: empty");
  }
  if (request.handler.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration ", request.configuration, ": discoveryHandler.name: empty"));
  }
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::FailedPreconditionError("the agent is shutting down");
  auto& slot = configs_[request.configuration];
  if (slot != nullptr) {
    if (slot->request == request) return absl::OkStatus();
    for (auto& [_, stream] : slot->streams) StopStreamLocked(stream);
    slot->streams.clear();
  } else {
    slot = std::make_unique<Config>();
  }
  Config& config = *slot;
  config.request = std::move(request);
  config.epoch = ++next_config_epoch_;
  for (const HandlerEndpoint& endpoint : registry_.Endpoints(config.request.handler)) {
    StartStreamLocked(config, endpoint);
  }
  UpdateLocked(config);
  return absl::OkStatus();
}

void Agent::Remove(const std::string& configuration) {
  absl::MutexLock lock(&mu_);
  auto it = configs_.find(configuration);
  if (it == configs_.end()) return;
  for (auto& [_, stream] : it->second->streams) StopStreamLocked(stream);
  configs_.erase(it);
}

std::vector<HandlerEndpoint> Agent::Endpoints(const std::string& handler) const {
  absl::MutexLock lock(&mu_);
  return registry_.Endpoints(handler);
}

std::vector<StreamInfo> Agent::Streams(const std::string& configuration) const {
  absl::MutexLock lock(&mu_);
  std::vector<StreamInfo> out;
  auto it = configs_.find(configuration);
  if (it == configs_.end()) return out;
  for (const auto& [endpoint, stream] : it->second->streams) {
    StreamInfo& info = out.emplace_back();
    info.endpoint = endpoint;
    info.attempts = stream->attempts;
    info.in_call = stream->in_call;
    info.next_attempt = stream->next_attempt;
    info.backoff = stream->backoff;
    info.error = stream->error;
    info.devices = stream->devices.size();
  }
  return out;
}

absl::Status Agent::Register(const v0::RegisterDiscoveryHandlerRequest& request) {
  RETURN_IF_ERROR(HandlerRegistry::Validate(request));
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::UnavailableError("the agent is shutting down");
  HandlerRegistry::Change change = registry_.Register(request);
  if (change != HandlerRegistry::Change::kNone) {
    LOG_INFO("discovery handler registered", "handler", request.name(), "endpoint",
             request.endpoint(), "shared", request.shared() ? "true" : "false");
  }
  const HandlerEndpoint& endpoint = *registry_.Find(request.name(), request.endpoint());
  for (auto& [_, config] : configs_) {
    if (config->request.handler != request.name()) continue;
    auto it = config->streams.find(endpoint.endpoint);
    if (it == config->streams.end()) {
      StartStreamLocked(*config, endpoint);
    } else {
      Stream& stream = *it->second;
      stream.endpoint = endpoint;
      // A handler that registers again is back: do not make it wait out a backoff.
      if (!stream.in_call && !stream.error.empty()) stream.retry_now = true;
    }
    UpdateLocked(*config);
  }
  return absl::OkStatus();
}

std::shared_ptr<Agent::Stream> Agent::StartStreamLocked(Config& config,
                                                        const HandlerEndpoint& endpoint) {
  auto stream = std::make_shared<Stream>();
  stream->configuration = config.request.configuration;
  stream->config_epoch = config.epoch;
  stream->handler = config.request.handler;
  stream->endpoint = endpoint;
  stream->request = ToProto(config.request);
  stream->backoff = options_.initial_backoff;
  config.streams[endpoint.endpoint] = stream;
  stream->thread = std::thread([this, stream] { RunStream(stream); });
  return stream;
}

void Agent::StopStreamLocked(const std::shared_ptr<Stream>& stream) {
  if (stream->stopped) return;
  stream->stopped = true;
  if (stream->context != nullptr) stream->context->TryCancel();
  stopped_.push_back(stream);
}

void Agent::RunStream(std::shared_ptr<Stream> stream) {
  Stream& s = *stream;
  HandlerEndpoint endpoint;  // a copy: a new registration may change the stream's
  while (true) {
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      auto woken = [&s]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return s.stopped || s.retry_now; };
      while (!s.stopped && !s.retry_now && clock_->Now() < s.next_attempt) {
        mu_.AwaitWithTimeout(absl::Condition(&woken), options_.clock_check);
      }
      if (s.stopped) return;
      s.retry_now = false;
      s.in_call = true;
      ++s.attempts;
      s.context = &context;
      endpoint = s.endpoint;
    }
    auto channel =
        grpc::CreateChannel(EndpointTarget(endpoint), grpc::InsecureChannelCredentials());
    auto stub = v0::DiscoveryHandler::NewStub(channel);
    std::unique_ptr<grpc::ClientReader<v0::DiscoverResponse>> reader =
        stub->Discover(&context, s.request);
    v0::DiscoverResponse response;
    while (reader->Read(&response)) {
      absl::MutexLock lock(&mu_);
      if (s.stopped) break;
      OnResponseLocked(s, response);
    }
    while (reader->Read(&response)) {
      // Cancelled: drain what is in flight so that Finish may be called.
    }
    grpc::Status status = reader->Finish();
    bool stopped;
    {
      absl::MutexLock lock(&mu_);
      s.context = nullptr;
      stopped = s.stopped;
    }
    if (stopped) return;
    // A failure may mean the handler is gone: see whether it still takes connections (without
    // the lock; this can take up to liveness_timeout).
    bool answers = status.ok() || status.error_code() != grpc::StatusCode::UNAVAILABLE ||
                   EndpointAnswers(endpoint);
    absl::MutexLock lock(&mu_);
    s.in_call = false;
    if (s.stopped) return;
    OnCallEndedLocked(s, status, answers);
    if (s.stopped) return;
  }
}

bool Agent::EndpointAnswers(const HandlerEndpoint& endpoint) const {
  if (endpoint.type == v0::RegisterDiscoveryHandlerRequest::UDS) {
    // A plain connect answers at once: refused or missing means nobody serves there.
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return true;  // cannot tell: keep it
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    endpoint.endpoint.copy(address.sun_path, sizeof(address.sun_path) - 1);
    bool connected = connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)) == 0;
    close(fd);
    return connected;
  }
  auto channel = grpc::CreateChannel(EndpointTarget(endpoint), grpc::InsecureChannelCredentials());
  return channel->WaitForConnected(absl::ToChronoTime(absl::Now() + options_.liveness_timeout));
}

void Agent::OnResponseLocked(Stream& stream, const v0::DiscoverResponse& response) {
  stream.devices.clear();
  stream.error.clear();
  int without_id = 0;
  for (const v0::Device& device : response.devices()) {
    if (device.id().empty()) {
      ++without_id;
      continue;
    }
    stream.devices.push_back(device);
  }
  if (without_id > 0) {
    stream.error =
        absl::StrCat("discovery handler '", stream.handler, "' (", stream.endpoint.endpoint,
                     ") reported ", without_id, " device(s) without an id; ignored them");
  }
  stream.settled = true;
  stream.backoff = options_.initial_backoff;
  auto it = configs_.find(stream.configuration);
  if (it != configs_.end() && it->second->epoch == stream.config_epoch) UpdateLocked(*it->second);
}

void Agent::OnCallEndedLocked(Stream& stream, const grpc::Status& status, bool endpoint_answers) {
  auto it = configs_.find(stream.configuration);
  if (it == configs_.end() || it->second->epoch != stream.config_epoch) return;
  Config& config = *it->second;
  stream.settled = true;
  if (status.ok()) {
    // The handler finished this request: keep its last list and ask again later.
    stream.error.clear();
    stream.backoff = options_.initial_backoff;
    stream.next_attempt = clock_->Now() + options_.requeue_after;
    UpdateLocked(config);
    return;
  }
  if (!endpoint_answers) {
    LOG_INFO("discovery handler stopped answering; dropped it", "handler", stream.handler,
             "endpoint", stream.endpoint.endpoint, "error", status.error_message());
    DropEndpointLocked(stream.handler, stream.endpoint.endpoint);
    return;
  }
  if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
    stream.error = absl::StrCat("discovery handler '", stream.handler,
                                "' rejected the discovery details: ", status.error_message());
  } else {
    stream.error = absl::StrCat("discovery handler '", stream.handler, "' (",
                                stream.endpoint.endpoint, ") failed: ", status.error_message(),
                                " (gRPC code ", static_cast<int>(status.error_code()), ")");
  }
  stream.devices.clear();
  stream.next_attempt = clock_->Now() + stream.backoff;
  stream.backoff = std::min(stream.backoff * 2, options_.max_backoff);
  LOG_INFO("discovery failed; retrying", "configuration", stream.configuration, "error",
           stream.error, "attempt", stream.attempts);
  UpdateLocked(config);
}

void Agent::DropEndpointLocked(const std::string& handler, const std::string& endpoint) {
  registry_.Drop(handler, endpoint);
  for (auto& [_, config] : configs_) {
    auto it = config->streams.find(endpoint);
    if (config->request.handler != handler || it == config->streams.end()) continue;
    StopStreamLocked(it->second);
    config->streams.erase(it);
    UpdateLocked(*config);
  }
}

void Agent::UpdateLocked(Config& config) {
  const std::string& name = config.request.configuration;
  // Devices: first endpoint (in endpoint order) wins a duplicate id.
  bool any_settled = false;
  std::map<std::string, DiscoveredDevice> by_id;
  for (const auto& [endpoint, stream] : config.streams) {
    if (stream->settled) any_settled = true;
    for (const v0::Device& device : stream->devices) {
      if (by_id.contains(device.id())) continue;
      by_id.emplace(device.id(), DiscoveredDevice{device, stream->endpoint.shared, endpoint});
    }
  }
  std::vector<DiscoveredDevice> devices;
  for (auto& [_, device] : by_id) devices.push_back(std::move(device));
  // Nothing to say until some stream has an outcome, so that a restarted request does not
  // flap through an empty set; with no endpoint left, the set is empty.
  bool report_devices = config.reported_devices.has_value()
                            ? (any_settled || config.streams.empty()) &&
                                  !SameDevices(*config.reported_devices, devices)
                            : any_settled;
  if (report_devices && callbacks_.on_devices) {
    config.reported_devices = devices;
    pending_.push_back([this, name, epoch = config.epoch, devices = std::move(devices)] {
      {
        absl::MutexLock lock(&mu_);
        auto it = configs_.find(name);
        if (it == configs_.end() || it->second->epoch != epoch) return;
      }
      callbacks_.on_devices(name, devices);
    });
  } else if (report_devices) {
    config.reported_devices = std::move(devices);
  }

  // Errors, in plain words.
  std::string error;
  if (config.streams.empty()) {
    error = absl::StrCat("no discovery handler named '", config.request.handler,
                         "' is registered on node '", options_.node_name, "'");
  } else {
    std::set<std::string> errors;
    for (const auto& [_, stream] : config.streams) {
      if (!stream->error.empty()) errors.insert(stream->error);
    }
    error = absl::StrJoin(errors, "; ");
  }
  if (config.reported_error != error && (config.reported_error.has_value() || !error.empty())) {
    config.reported_error = error;
    if (callbacks_.on_error) {
      pending_.push_back([this, name, epoch = config.epoch, error] {
        {
          absl::MutexLock lock(&mu_);
          auto it = configs_.find(name);
          if (it == configs_.end() || it->second->epoch != epoch) return;
        }
        callbacks_.on_error(name, error);
      });
    }
  }
}

void Agent::Deliver() {
  while (true) {
    std::deque<std::function<void()>> batch;
    std::vector<std::shared_ptr<Stream>> to_join;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      auto work = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return stopping_ || !pending_.empty() || !stopped_.empty();
      };
      mu_.Await(absl::Condition(&work));
      batch.swap(pending_);
      to_join.swap(stopped_);
      stopping = stopping_;
    }
    for (auto& deliver : batch) {
      if (!stopping) deliver();
    }
    for (auto& stream : to_join) {
      if (stream->thread.joinable()) stream->thread.join();
    }
    if (stopping) {
      absl::MutexLock lock(&mu_);
      if (pending_.empty() && stopped_.empty()) return;
    }
  }
}

}  // namespace regatta::devices
