#include "src/devices/protocol/registrar.h"

#include <sys/stat.h>

#include <algorithm>

#include "akri/discovery/v0/discovery.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "src/common/logging.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::devices {

Registrar::Registrar(RegistrarOptions options) : options_(std::move(options)) {}

Registrar::~Registrar() { Stop(); }

void Registrar::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void Registrar::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Registrar::Nudge() {
  absl::MutexLock lock(&mu_);
  nudged_ = true;
}

int64_t Registrar::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

bool Registrar::WaitForRegistrations(int64_t count, absl::Duration timeout) const {
  absl::MutexLock lock(&mu_);
  auto reached = [this, count]()
                     ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return registrations_ >= count; };
  return mu_.AwaitWithTimeout(absl::Condition(&reached), timeout);
}

std::optional<Registrar::SocketIdentity> Registrar::Identify(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode)) return std::nullopt;
  SocketIdentity identity;
  identity.device = info.st_dev;
  identity.inode = info.st_ino;
  identity.change_ns =
      static_cast<int64_t>(info.st_ctim.tv_sec) * 1'000'000'000 + info.st_ctim.tv_nsec;
  return identity;
}

bool Registrar::Register() {
  auto channel =
      grpc::CreateChannel(UdsAddress(options_.agent_socket), grpc::InsecureChannelCredentials());
  auto stub = v0::Registration::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout));
  v0::Empty reply;
  grpc::Status status = stub->RegisterDiscoveryHandler(&context, options_.request, &reply);
  if (!status.ok()) {
    LOG_DEBUG("registration with the agent failed", "agent", options_.agent_socket, "error",
              status.error_message());
    return false;
  }
  LOG_INFO("registered with the agent", "handler", options_.request.name(), "endpoint",
           options_.request.endpoint(), "agent", options_.agent_socket);
  return true;
}

void Registrar::Loop() {
  std::optional<SocketIdentity> registered_with;  // the agent socket of the last success
  bool must_register = true;                      // nobody has this handler yet
  std::optional<SocketIdentity> last_seen;
  absl::Duration retry_delay = options_.initial_retry_delay;
  absl::Time next_try = absl::InfinitePast();
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (nudged_) {
        nudged_ = false;
        must_register = true;
        next_try = absl::InfinitePast();
      }
    }
    std::optional<SocketIdentity> current = Identify(options_.agent_socket);
    if (current != last_seen) {
      // A new agent (or the first one): try at once, whatever the failures before.
      last_seen = current;
      retry_delay = options_.initial_retry_delay;
      next_try = absl::InfinitePast();
    }
    if (current.has_value() && (must_register || current != registered_with) &&
        absl::Now() >= next_try) {
      if (Register()) {
        registered_with = current;
        must_register = false;
        retry_delay = options_.initial_retry_delay;
        absl::MutexLock lock(&mu_);
        ++registrations_;
      } else {
        next_try = absl::Now() + retry_delay;
        retry_delay = std::min(retry_delay * 2, options_.max_retry_delay);
      }
    }
    absl::MutexLock lock(&mu_);
    auto wake = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || nudged_; };
    mu_.AwaitWithTimeout(absl::Condition(&wake), options_.check_interval);
  }
}

}  // namespace regatta::devices
