#include "src/executor/device_discovery.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/common/logging.h"
#include "src/devices/report/report.h"

namespace regatta::executor {
namespace {

using google::protobuf::util::MessageDifferencer;

// What the agent is asked to do for an entry (without the generation, which only triggers a
// report).
devices::DiscoveryRequest RequestOf(const regatta::v1::DiscoveryConfiguration& entry) {
  devices::DiscoveryRequest request;
  request.configuration = entry.configuration();
  request.handler = entry.handler();
  request.discovery_details = entry.discovery_details();
  for (const auto& [name, value] : entry.discovery_properties()) {
    request.discovery_properties[name] = value;
  }
  return request;
}

std::string Truncated(std::string text) {
  if (text.size() > devices::kMaxDiscoveryErrorBytes) {
    text.resize(devices::kMaxDiscoveryErrorBytes - 3);
    text += "...";
  }
  return text;
}

}  // namespace

bool RepeatedFailureFilter::ShouldLogFailure(grpc::StatusCode code, absl::string_view message) {
  if (last_logged_.has_value() && last_logged_->first == code && last_logged_->second == message) {
    return false;
  }
  last_logged_.emplace(code, std::string(message));
  return true;
}

bool RepeatedFailureFilter::ShouldLogRecovery() {
  const bool failed = last_logged_.has_value();
  last_logged_.reset();
  return failed;
}

absl::StatusOr<std::unique_ptr<DeviceDiscovery>> DeviceDiscovery::Start(
    DeviceDiscoveryOptions options, std::shared_ptr<grpc::Channel> channel) {
  std::unique_ptr<DeviceDiscovery> discovery(
      new DeviceDiscovery(std::move(options), std::move(channel)));
  DeviceDiscovery* d = discovery.get();
  devices::AgentOptions agent_options;
  agent_options.dir = d->options_.dir;
  agent_options.node_name = d->options_.node_id;
  devices::AgentCallbacks callbacks;
  callbacks.on_devices = [d](const std::string& configuration,
                             const std::vector<devices::DiscoveredDevice>& devices) {
    d->OnDevices(configuration, devices);
  };
  callbacks.on_error = [d](const std::string& configuration, const std::string& error) {
    d->OnError(configuration, error);
  };
  absl::StatusOr<std::unique_ptr<devices::Agent>> agent =
      devices::Agent::Start(std::move(agent_options), std::move(callbacks));
  if (!agent.ok()) {
    return absl::Status(agent.status().code(),
                        absl::StrCat(d->options_.dir_field, ": cannot start the device agent in ",
                                     d->options_.dir, ": ", agent.status().message()));
  }
  d->agent_ = *std::move(agent);
  d->report_thread_ = std::thread([d] { d->ReportLoop(); });
  d->watch_thread_ = std::thread([d] { d->WatchLoop(); });
  return discovery;
}

DeviceDiscovery::DeviceDiscovery(DeviceDiscoveryOptions options,
                                 std::shared_ptr<grpc::Channel> channel)
    : options_(std::move(options)),
      grace_ends_(absl::Now() + options_.registration_grace),
      stub_(regatta::v1::ExecutorService::NewStub(channel)) {}

DeviceDiscovery::~DeviceDiscovery() { Stop(); }

void DeviceDiscovery::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    if (watch_context_ != nullptr) watch_context_->TryCancel();
    if (report_context_ != nullptr) report_context_->TryCancel();
  }
  if (watch_thread_.joinable()) watch_thread_.join();
  if (agent_ != nullptr) agent_->Shutdown();
  if (report_thread_.joinable()) report_thread_.join();
}

int64_t DeviceDiscovery::reports_sent() const {
  absl::MutexLock lock(&mu_);
  return reports_sent_;
}

bool DeviceDiscovery::SleepUnlessStopping(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
  return !mu_.AwaitWithTimeout(absl::Condition(&stopping), delay);
}

bool DeviceDiscovery::HeldLocked(const ConfigState& state, absl::Time now) const {
  // An error from the server (unresolvable properties) is known for sure: not held.
  return !state.devices_known && state.entry.error().empty() && now < grace_ends_;
}

void DeviceDiscovery::MarkDirtyLocked(ConfigState& state) {
  ++state.version;
  if (!state.dirty) {
    state.dirty = true;
    state.dirty_order = next_dirty_order_++;
  }
}

void DeviceDiscovery::WatchLoop() {
  absl::Duration backoff = options_.initial_backoff;
  RepeatedFailureFilter failures;
  while (true) {
    grpc::ClientContext context;
    if (!options_.authorization.empty()) {
      context.AddMetadata("authorization", options_.authorization);
    }
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      watch_context_ = &context;
    }
    regatta::v1::WatchDiscoveryRequest request;
    request.set_executor_id(options_.executor_id);
    std::unique_ptr<grpc::ClientReader<regatta::v1::DiscoverySnapshot>> reader =
        stub_->WatchDiscovery(&context, request);
    regatta::v1::DiscoverySnapshot snapshot;
    bool first = true;
    while (reader->Read(&snapshot)) {
      if (first) {
        // A new watch: the server may have lost what this node reported (it restarted, or
        // declared the executor lost), so everything goes again.
        absl::MutexLock lock(&mu_);
        for (auto& [name, state] : configs_) {
          if (state.heard) MarkDirtyLocked(state);
        }
        first = false;
      }
      ApplySnapshot(snapshot);
      backoff = options_.initial_backoff;
      if (failures.ShouldLogRecovery()) {
        LOG_INFO("the discovery watch is connected again", "node", options_.node_id);
      }
    }
    const grpc::Status status = reader->Finish();
    {
      absl::MutexLock lock(&mu_);
      watch_context_ = nullptr;
      if (stopping_) return;
    }
    if (failures.ShouldLogFailure(status.error_code(), status.error_message())) {
      LOG_WARN("the discovery watch ended; reconnecting (the same error is not logged again)",
               "node", options_.node_id, "code", static_cast<int>(status.error_code()), "error",
               status.error_message());
    }
    if (!SleepUnlessStopping(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

void DeviceDiscovery::ApplySnapshot(const regatta::v1::DiscoverySnapshot& snapshot) {
  std::vector<devices::DiscoveryRequest> to_apply;
  std::vector<std::string> to_remove;
  {
    absl::MutexLock lock(&mu_);
    std::map<std::string, const regatta::v1::DiscoveryConfiguration*> wanted;
    for (const auto& entry : snapshot.configurations()) wanted[entry.configuration()] = &entry;
    for (auto it = configs_.begin(); it != configs_.end();) {
      if (wanted.contains(it->first)) {
        ++it;
        continue;
      }
      // Deleted: the server drops its Instances; nothing to report.
      if (it->second.entry.error().empty()) to_remove.push_back(it->first);
      it = configs_.erase(it);
    }
    for (const auto& [name, entry] : wanted) {
      auto [it, inserted] = configs_.try_emplace(name);
      ConfigState& state = it->second;
      const regatta::v1::DiscoveryConfiguration previous = state.entry;
      state.entry = *entry;
      if (!entry->error().empty()) {
        // Cannot be discovered: stop, report the error with no devices.
        if (!inserted && previous.error().empty()) to_remove.push_back(name);
        if (inserted || previous.error() != entry->error()) {
          state.devices.clear();
          state.agent_error.clear();
          state.heard = true;
          MarkDirtyLocked(state);
        }
        continue;
      }
      const bool request_changed =
          inserted || !previous.error().empty() || !(RequestOf(previous) == RequestOf(*entry));
      if (request_changed) {
        to_apply.push_back(RequestOf(*entry));
        if (!previous.error().empty()) {
          // Until the agent reports, the node has neither devices nor an error for it.
          state.heard = false;
          state.devices_known = false;
          state.devices.clear();
        }
      } else if (previous.generation() != entry->generation() && state.heard) {
        MarkDirtyLocked(state);  // e.g. a new capacity: the Instances change
      }
    }
  }
  for (const std::string& name : to_remove) agent_->Remove(name);
  for (devices::DiscoveryRequest& request : to_apply) {
    const std::string name = request.configuration;
    absl::Status status = agent_->Apply(std::move(request));
    if (!status.ok()) OnError(name, std::string(status.message()));
  }
}

void DeviceDiscovery::OnDevices(const std::string& configuration,
                                const std::vector<devices::DiscoveredDevice>& devices) {
  absl::MutexLock lock(&mu_);
  auto it = configs_.find(configuration);
  if (it == configs_.end() || !it->second.entry.error().empty()) return;  // removed meanwhile
  it->second.devices = devices;
  it->second.devices_known = true;
  it->second.heard = true;
  MarkDirtyLocked(it->second);
}

void DeviceDiscovery::OnError(const std::string& configuration, const std::string& error) {
  absl::MutexLock lock(&mu_);
  auto it = configs_.find(configuration);
  if (it == configs_.end() || !it->second.entry.error().empty()) return;
  it->second.agent_error = error;
  it->second.heard = true;
  MarkDirtyLocked(it->second);
}

regatta::v1::ReportDevicesRequest DeviceDiscovery::BuildReportLocked(
    const std::string& configuration, const ConfigState& state) const {
  regatta::v1::ReportDevicesRequest request;
  request.set_executor_id(options_.executor_id);
  request.set_node_id(options_.node_id);
  request.set_configuration(configuration);
  if (!state.entry.error().empty()) {
    request.set_error(Truncated(state.entry.error()));
    return request;
  }
  request.set_error(Truncated(state.agent_error));
  for (const devices::DiscoveredDevice& device : state.devices) {
    regatta::v1::ReportedDevice* reported = request.add_devices();
    *reported->mutable_device() = device.device;
    reported->set_shared(device.shared);
  }
  return request;
}

void DeviceDiscovery::ReportLoop() {
  absl::Duration backoff = options_.initial_backoff;
  RepeatedFailureFilter failures;
  while (true) {
    std::string name;
    uint64_t version = 0;
    regatta::v1::ReportDevicesRequest request;
    grpc::ClientContext context;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        if (stopping_) return true;
        const absl::Time now = absl::Now();
        for (const auto& [n, state] : configs_) {
          if (state.dirty && !HeldLocked(state, now)) return true;
        }
        return false;
      };
      // Held reports become ready when the grace ends, which no lock release signals.
      if (absl::Now() < grace_ends_) {
        mu_.AwaitWithTimeout(absl::Condition(&ready), grace_ends_ - absl::Now());
      }
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      const absl::Time now = absl::Now();
      const ConfigState* oldest = nullptr;
      for (const auto& [n, state] : configs_) {
        if (state.dirty && !HeldLocked(state, now) &&
            (oldest == nullptr || state.dirty_order < oldest->dirty_order)) {
          oldest = &state;
          name = n;
        }
      }
      version = oldest->version;
      request = BuildReportLocked(name, *oldest);
      report_context_ = &context;
    }
    if (!options_.authorization.empty()) {
      context.AddMetadata("authorization", options_.authorization);
    }
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    regatta::v1::ReportDevicesResponse response;
    const grpc::Status status = stub_->ReportDevices(&context, request, &response);
    // A report the server refuses as invalid will never be taken: drop it (the next change
    // reports again) rather than block every other Configuration.
    const bool done = status.ok() || status.error_code() == grpc::StatusCode::INVALID_ARGUMENT;
    {
      absl::MutexLock lock(&mu_);
      report_context_ = nullptr;
      if (stopping_) return;
      auto it = configs_.find(name);
      if (done && it != configs_.end() && it->second.version == version) it->second.dirty = false;
      if (status.ok()) ++reports_sent_;
    }
    if (done) {
      if (!status.ok()) {
        LOG_ERROR("the server refused a device report; dropped", "configuration", name, "node",
                  options_.node_id, "error", status.error_message());
      } else if (failures.ShouldLogRecovery()) {
        LOG_INFO("the server takes this node's device reports again", "node", options_.node_id,
                 "executor", options_.executor_id);
      }
      backoff = options_.initial_backoff;
      continue;
    }
    // Logged once per distinct failure: retries every few seconds would flood the log.
    if (failures.ShouldLogFailure(status.error_code(), status.error_message())) {
      if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
        LOG_WARN(
            "the server does not take this node's device reports yet: the executor must be "
            "connected and list the node in its lease requests; retrying until it does",
            "node", options_.node_id, "executor", options_.executor_id, "reason",
            status.error_message());
      } else {
        LOG_WARN("reporting devices failed; retrying (the same error is not logged again)",
                 "configuration", name, "node", options_.node_id, "code",
                 static_cast<int>(status.error_code()), "error", status.error_message());
      }
    }
    if (!SleepUnlessStopping(backoff)) return;
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

}  // namespace regatta::executor
