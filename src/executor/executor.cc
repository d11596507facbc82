#include "src/executor/executor.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"

namespace regatta::executor {
namespace {

using regatta::v1::Event;

constexpr int kMaxEventsPerReport = 2000;
// Threads starting runs: a start is mostly kernel work (spawn, files) that waits for the file
// system as often as for a core, so four overlap better than two (1000 trivial steps on 2
// cores: 1.54 s vs 1.90 s, medians of three paired runs).
constexpr int kStarterThreads = 4;
// Runs reported finished that are remembered, so a late repeated lease does not run them again.
constexpr size_t kFinishedRunsRemembered = 100000;
constexpr int64_t kLogChunkBytes = 64 << 10;

bool IsActive(regatta::v1::RunState s) {
  return s == regatta::v1::RUN_STATE_LEASED || s == regatta::v1::RUN_STATE_PENDING ||
         s == regatta::v1::RUN_STATE_RUNNING;
}

bool IsTerminalRunEvent(const Event& e) {
  switch (e.event_case()) {
    case Event::kJobRunSucceeded:
    case Event::kJobRunFailed:
    case Event::kJobRunCancelled:
    case Event::kJobRunPreempted:
    case Event::kJobRunLeaseReturned:
      return true;
    default:
      return false;
  }
}

regatta::v1::RunState StateAfter(const Event& e) {
  switch (e.event_case()) {
    case Event::kJobRunPending:
      return regatta::v1::RUN_STATE_PENDING;
    case Event::kJobRunRunning:
      return regatta::v1::RUN_STATE_RUNNING;
    case Event::kJobRunSucceeded:
      return regatta::v1::RUN_STATE_SUCCEEDED;
    case Event::kJobRunFailed:
      return regatta::v1::RUN_STATE_FAILED;
    case Event::kJobRunCancelled:
      return regatta::v1::RUN_STATE_CANCELLED;
    case Event::kJobRunPreempted:
      return regatta::v1::RUN_STATE_PREEMPTED;
    case Event::kJobRunLeaseReturned:
      return regatta::v1::RUN_STATE_LEASE_RETURNED;
    default:
      return regatta::v1::RUN_STATE_UNSPECIFIED;
  }
}

// The run event that reports a backend result.
void SetResultEvent(const RunResult& result, const std::string& job_id, Event& event) {
  switch (result.end) {
    case RunEnd::kSucceeded: {
      auto* e = event.mutable_job_run_succeeded();
      e->set_job_id(job_id);
      e->set_run_id(result.run_id);
      return;
    }
    case RunEnd::kCancelled: {
      auto* e = event.mutable_job_run_cancelled();
      e->set_job_id(job_id);
      e->set_run_id(result.run_id);
      return;
    }
    case RunEnd::kPreempted: {
      auto* e = event.mutable_job_run_preempted();
      e->set_job_id(job_id);
      e->set_run_id(result.run_id);
      return;
    }
    case RunEnd::kFailed:
    case RunEnd::kLost: {
      auto* e = event.mutable_job_run_failed();
      e->set_job_id(job_id);
      e->set_run_id(result.run_id);
      *e->mutable_error() = result.error;
      return;
    }
  }
}

std::string DescribeResources(const ResourceList& list) {
  std::string out;
  for (const auto& [name, quantity] : list.ToStrings()) {
    absl::StrAppend(&out, out.empty() ? "" : ", ", name, "=", quantity);
  }
  return out.empty() ? "nothing" : out;
}

}  // namespace

// Serves run logs to the server (ExecutorLogService).
class Executor::LogService final : public regatta::v1::ExecutorLogService::Service {
 public:
  explicit LogService(const RunBackend* backend) : backend_(backend) {}

  grpc::Status ReadRunLog(grpc::ServerContext* call, const regatta::v1::ReadRunLogRequest* request,
                          grpc::ServerWriter<regatta::v1::LogChunk>* writer) override {
    int64_t offset = std::max<int64_t>(0, request->offset());
    if (request->tail_lines() > 0) {
      absl::StatusOr<int64_t> tail = backend_->TailOffset(request->run_id(), request->tail_lines());
      if (!tail.ok()) return ToGrpc(tail.status());
      offset = *tail;
    }
    while (!call->IsCancelled()) {
      absl::StatusOr<LogRead> read = backend_->ReadLog(request->run_id(), offset, kLogChunkBytes);
      if (!read.ok()) return ToGrpc(read.status());
      offset = read->next_offset;
      const bool at_end = read->data.empty();
      if (!read->data.empty() || (at_end && (read->finished || !request->follow()))) {
        regatta::v1::LogChunk chunk;
        chunk.set_data(std::move(read->data));
        chunk.set_next_offset(offset);
        chunk.set_end(at_end && read->finished);
        if (!writer->Write(chunk)) return grpc::Status::OK;
      }
      if (at_end && (read->finished || !request->follow())) return grpc::Status::OK;
      if (at_end) absl::SleepFor(absl::Milliseconds(100));
    }
    return grpc::Status::OK;
  }

 private:
  static grpc::Status ToGrpc(const absl::Status& s) {
    return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
  }
  const RunBackend* backend_;
};

ResourceList RequestsOf(const regatta::v1::Job& job) {
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& [name, quantity] : job.task().resources().requests()) {
    if (!IsDeviceResource(name)) entries.emplace_back(name, quantity);
  }
  absl::StatusOr<ResourceList> list = ResourceList::FromStrings(entries);
  return list.ok() ? *std::move(list) : ResourceList();
}

std::vector<std::pair<std::string, std::string>> LeasedDeviceEnvironment(
    const regatta::v1::JobRunLease& lease) {
  std::vector<std::pair<std::string, std::string>> env;
  if (lease.devices().empty()) return env;
  const auto& own = lease.job().task().env();
  const auto& own_secret = lease.job().task().secret_env();
  absl::flat_hash_set<std::string> named;
  auto add = [&](const std::string& name, std::string value) {
    if (own.contains(name) || own_secret.contains(name) || !named.insert(name).second) return;
    env.emplace_back(name, std::move(value));
  };
  std::vector<std::string> instances, slots, cdi_names, nodes, mounts;
  for (const regatta::v1::LeasedDevice& device : lease.devices()) {
    std::map<std::string, std::string> sorted(device.properties().begin(),
                                              device.properties().end());
    for (const auto& [name, value] : sorted) add(name, value);
    instances.push_back(device.instance_name());
    slots.push_back(device.slot());
    cdi_names.push_back(device.cdi_name());
    for (const v0::DeviceSpec& spec : device.device_specs()) nodes.push_back(spec.host_path());
    for (const v0::Mount& mount : device.mounts()) {
      mounts.push_back(absl::StrCat(mount.host_path(), ":", mount.container_path(),
                                    mount.read_only() ? ":ro" : ""));
    }
  }
  add("REGATTA_DEVICE_INSTANCES", absl::StrJoin(instances, ","));
  add("REGATTA_DEVICE_SLOTS", absl::StrJoin(slots, ","));
  add("REGATTA_DEVICE_CDI_NAMES", absl::StrJoin(cdi_names, ","));
  add("REGATTA_DEVICE_NODES", absl::StrJoin(nodes, ","));
  add("REGATTA_DEVICE_MOUNTS", absl::StrJoin(mounts, ","));
  return env;
}

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

absl::StatusOr<std::unique_ptr<Executor>> Executor::Start(ExecutorOptions options,
                                                          std::unique_ptr<RunBackend> backend,
                                                          std::shared_ptr<grpc::Channel> channel,
                                                          const Clock* clock,
                                                          std::unique_ptr<ExecutorApi> api) {
  std::unique_ptr<Executor> executor(new Executor(std::move(options), std::move(backend),
                                                  std::move(channel), clock, std::move(api)));
  RETURN_IF_ERROR(executor->Init());
  Executor* e = executor.get();
  e->result_thread_ = std::thread([e] {
    SetThreadName("rg-exec-result");
    e->ResultLoop();
  });
  e->report_thread_ = std::thread([e] {
    SetThreadName("rg-exec-report");
    e->ReportLoop();
  });
  e->lease_thread_ = std::thread([e] {
    SetThreadName("rg-exec-lease");
    e->LeaseLoop();
  });
  for (int i = 0; i < kStarterThreads; ++i) {
    e->starter_threads_.emplace_back([e] {
      SetThreadName("rg-exec-start");
      e->StartLoop();
    });
  }
  if (!e->options_.discovery_dir.empty()) {
    if (e->nodes_.size() > 1) {
      LOG_WARN(
          "the device agent discovers for the first node only; run `regatta agent --executor-id "
          "E --node N --dir DIR` for each other node",
          "node", e->nodes_[0].id(), "nodes", e->nodes_.size(), "executor",
          e->options_.executor_id);
    }
    DeviceDiscoveryOptions discovery;
    discovery.dir = e->options_.discovery_dir;
    discovery.executor_id = e->options_.executor_id;
    discovery.node_id = e->nodes_[0].id();
    discovery.authorization = e->options_.authorization;
    absl::StatusOr<std::unique_ptr<DeviceDiscovery>> started =
        DeviceDiscovery::Start(std::move(discovery), e->channel_);
    if (!started.ok()) {
      e->Stop(absl::ZeroDuration());
      return started.status();
    }
    e->discovery_ = *std::move(started);
  }
  return executor;
}

Executor::Executor(ExecutorOptions options, std::unique_ptr<RunBackend> backend,
                   std::shared_ptr<grpc::Channel> channel, const Clock* clock,
                   std::unique_ptr<ExecutorApi> api)
    : options_(std::move(options)),
      backend_(std::move(backend)),
      channel_(std::move(channel)),
      api_(api != nullptr ? std::move(api) : NewGrpcExecutorApi(channel_, options_.authorization)),
      clock_(clock) {}

Executor::~Executor() { Stop(absl::ZeroDuration()); }

absl::Status Executor::AddNodes() {
  if (options_.nodes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(options_.nodes_key, ": no nodes"));
  }
  for (size_t i = 0; i < options_.nodes.size(); ++i) {
    const NodeConfig& config = options_.nodes[i];
    std::vector<std::pair<std::string, std::string>> entries(config.resources.begin(),
                                                             config.resources.end());
    absl::StatusOr<ResourceList> allocatable = ResourceList::FromStrings(entries);
    if (!allocatable.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          options_.nodes_key, "[", i, "].resources: ", allocatable.status().message()));
    }
    if (node_allocatable_.contains(config.id)) {
      return absl::InvalidArgumentError(
          absl::StrCat(options_.nodes_key, "[", i, "].name: duplicate node ", config.id));
    }
    node_allocatable_[config.id] = *allocatable;
    regatta::v1::NodeInfo& info = nodes_.emplace_back();
    info.set_id(config.id);
    info.mutable_labels()->insert(config.labels.begin(), config.labels.end());
    (*info.mutable_labels())["kubernetes.io/hostname"] = config.id;
    for (const auto& taint : config.taints) *info.add_taints() = taint;
    for (const auto& [name, quantity] : allocatable->ToStrings()) {
      (*info.mutable_total_resources())[name] = quantity;
      (*info.mutable_allocatable_resources())[name] = quantity;
    }
  }
  return absl::OkStatus();
}

absl::Status Executor::Init() {
  if (options_.executor_id.empty()) options_.executor_id = HostName();
  incarnation_ = absl::StrCat(getpid(), "-", absl::ToUnixNanos(absl::Now()));
  RETURN_IF_ERROR(AddNodes());

  // Runs of an earlier process: report each (its result, or lost).
  for (RecoveredRun& recovered : backend_->TakeRecovered()) {
    regatta::v1::JobRunLease lease;
    if (!lease.ParseFromString(recovered.metadata) || lease.job().id().empty()) {
      LOG_WARN("dropping a recovered run without a readable lease", "run", recovered.run_id);
      backend_->Forget(recovered.run_id);
      continue;
    }
    HeldRun held;
    held.job_id = lease.job().id();
    held.queue = lease.job().queue();
    held.job_set = lease.job().job_set();
    held.node_id = lease.node_id();
    held.requests = RequestsOf(lease.job());
    Event event = NewEvent();
    SetResultEvent(recovered.result, held.job_id, event);
    held.state = StateAfter(event);
    absl::MutexLock lock(&mu_);
    HoldLocked(recovered.run_id, std::move(held));
    EnqueueLocked(recovered.run_id, std::move(event));
    LOG_INFO("recovered a run from an earlier executor process", "run", recovered.run_id, "job",
             lease.job().id(), "outcome", regatta::v1::RunState_Name(StateAfter(event)));
  }

  if (!options_.logs_listen.empty()) {
    log_service_ = std::make_unique<LogService>(backend_.get());
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(options_.logs_listen,
                             options_.logs_tls ? options_.logs_tls->GrpcCredentials()
                                               : grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(log_service_.get());
    log_server_ = builder.BuildAndStart();
    if (log_server_ == nullptr || port == 0) {
      return absl::UnavailableError(
          absl::StrCat("executor.logsListen: cannot listen on ", options_.logs_listen));
    }
    std::string host = options_.logs_listen.substr(0, options_.logs_listen.rfind(':'));
    logs_address_ = absl::StrCat(host, ":", port);
  }
  return absl::OkStatus();
}

int Executor::held_runs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(held_.size());
}

Event Executor::NewEvent() const {
  Event event;
  *event.mutable_created() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(clock_->Now()));
  return event;
}

void Executor::RequestLeases() {
  absl::MutexLock lock(&mu_);
  want_request_ = true;
}

regatta::v1::LeaseRequest Executor::BuildRequest() {
  regatta::v1::LeaseRequest request;
  request.set_executor_id(options_.executor_id);
  request.set_pool(options_.pool);
  request.set_incarnation(incarnation_);
  request.set_logs_address(logs_address_);
  absl::MutexLock lock(&mu_);
  absl::flat_hash_map<std::string, int> node_index;
  for (const regatta::v1::NodeInfo& node : nodes_) {
    node_index[node.id()] = request.nodes_size();
    *request.add_nodes() = node;
  }
  int active = 0;
  for (const auto& [run_id, held] : held_) {
    auto it = node_index.find(held.node_id);
    if (it == node_index.end()) continue;
    (*request.mutable_nodes(it->second)->mutable_run_states())[run_id] = held.state;
    active += IsActive(held.state) ? 1 : 0;
  }
  request.set_max_runs_to_lease(options_.max_runs > 0
                                    ? static_cast<uint32_t>(std::max(0, options_.max_runs - active))
                                    : 1u << 20);
  return request;
}

void Executor::HoldLocked(const std::string& run_id, HeldRun held) {
  if (IsActive(held.state)) {
    node_used_[held.node_id].Add(held.requests);
    ++active_runs_;
  }
  held_[run_id] = std::move(held);
}

void Executor::EnqueueLocked(const std::string& run_id, Event event) {
  auto it = held_.find(run_id);
  if (it != held_.end()) {
    HeldRun& held = it->second;
    const regatta::v1::RunState after = StateAfter(event);
    if (IsActive(held.state) && !IsActive(after)) {
      node_used_[held.node_id].Subtract(held.requests);
      --active_runs_;
    }
    held.state = after;
  }
  if (IsTerminalRunEvent(event)) ++outbox_ends_;
  outbox_.push_back(PendingEvent{run_id, std::move(event)});
}

void Executor::PopOutboxLocked() {
  if (IsTerminalRunEvent(outbox_.front().event)) --outbox_ends_;
  outbox_.pop_front();
}

void Executor::Enqueue(const std::string& run_id, Event event) {
  absl::MutexLock lock(&mu_);
  EnqueueLocked(run_id, std::move(event));
}

void Executor::HandleLease(const regatta::v1::JobRunLease& lease) {
  const regatta::v1::Job& job = lease.job();
  const std::string& run_id = lease.run_id();
  auto returned_event = [&](const std::string& reason) {
    Event event = NewEvent();
    auto* e = event.mutable_job_run_lease_returned();
    e->set_job_id(job.id());
    e->set_run_id(run_id);
    e->set_reason(reason);
    LOG_WARN("returning a lease", "run", run_id, "job", job.id(), "reason", reason);
    return event;
  };
  {
    absl::MutexLock lock(&mu_);
    // A repeated delivery (also of a run that already ended here), or shutting down.
    if (held_.contains(run_id) || finished_.contains(run_id) || stopping_) return;
    HeldRun held;
    held.job_id = job.id();
    held.queue = job.queue();
    held.job_set = job.job_set();
    held.node_id = lease.node_id();
    held.requests = RequestsOf(job);
    held.state = regatta::v1::RUN_STATE_LEASED;
    std::string reject;
    auto node = node_allocatable_.find(lease.node_id());
    if (node == node_allocatable_.end()) {
      reject = absl::StrCat("node ", lease.node_id(), " is not one of executor ",
                            options_.executor_id, "'s nodes");
    } else {
      ResourceList used = node_used_[lease.node_id()];
      used.Add(held.requests);
      if (!used.FitsIn(node->second)) {
        reject = absl::StrCat("the run does not fit on node ", lease.node_id(), ": it needs ",
                              DescribeResources(held.requests), " and the node has ",
                              DescribeResources(node->second), " in total");
      } else if (options_.max_runs > 0 && active_runs_ >= options_.max_runs) {
        reject = absl::StrCat("the executor already runs its maximum of ", options_.max_runs);
      }
    }
    HoldLocked(run_id, std::move(held));
    if (!reject.empty()) {
      // Under the same lock, so a concurrent admission never counts the rejected run.
      EnqueueLocked(run_id, returned_event(reject));
      return;
    }
    Event pending = NewEvent();
    pending.mutable_job_run_pending()->set_job_id(job.id());
    pending.mutable_job_run_pending()->set_run_id(run_id);
    EnqueueLocked(run_id, std::move(pending));
  }

  Event event = NewEvent();  // stamped before the start, so it is not after the run's end
  absl::Status started = backend_->Start(lease);
  if (started.ok()) {
    event.mutable_job_run_running()->set_job_id(job.id());
    event.mutable_job_run_running()->set_run_id(run_id);
    // A quick run may have ended already; its result waited for this event.
    absl::MutexLock lock(&mu_);
    EnqueueLocked(run_id, std::move(event));
    if (auto it = early_results_.find(run_id); it != early_results_.end()) {
      EnqueueLocked(run_id, std::move(it->second));
      early_results_.erase(it);
    }
    return;
  } else if (absl::IsFailedPrecondition(started)) {
    auto* e = event.mutable_job_run_failed();
    e->set_job_id(job.id());
    e->set_run_id(run_id);
    regatta::v1::Error* error = e->mutable_error();
    error->set_reason(regatta::v1::ERROR_REASON_CANNOT_EXECUTE);
    error->set_message(std::string(started.message()));
    error->set_category("CannotExecute");
    error->set_terminal(true);
  } else if (absl::IsAlreadyExists(started)) {
    return;
  } else {
    return Enqueue(run_id, returned_event(absl::StrCat("the executor could not start the run: ",
                                                       started.message())));
  }
  Enqueue(run_id, std::move(event));
}

void Executor::HandleStop(const std::string& run_id, RunEnd why) {
  regatta::v1::RunState state;
  std::string job_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = held_.find(run_id);
    if (it == held_.end()) return;
    state = it->second.state;
    job_id = it->second.job_id;
  }
  if (!IsActive(state)) return;  // ended already; being reported
  absl::Status stopped = backend_->Stop(run_id, why);
  if (absl::IsNotFound(stopped) && state == regatta::v1::RUN_STATE_LEASED) {
    // Never started: nothing to kill.
    Event event = NewEvent();
    if (why == RunEnd::kPreempted) {
      event.mutable_job_run_preempted()->set_job_id(job_id);
      event.mutable_job_run_preempted()->set_run_id(run_id);
    } else {
      event.mutable_job_run_cancelled()->set_job_id(job_id);
      event.mutable_job_run_cancelled()->set_run_id(run_id);
    }
    Enqueue(run_id, std::move(event));
  }
}

void Executor::LeaseLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    std::unique_ptr<LeaseSession> stream = api_->OpenLeaseSession();
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      session_ = stream.get();
      want_request_ = true;
    }
    bool session_done = false;
    bool got_message = false;
    // Sends a request when one is wanted (after each answer, after a run ends) and at least
    // every heartbeat.
    std::thread writer([&] {
      absl::Time last_sent = absl::InfinitePast();
      while (true) {
        {
          absl::MutexLock lock(&mu_);
          auto ready = [&] { return want_request_ || stopping_ || session_done; };
          mu_.AwaitWithDeadline(absl::Condition(&ready), last_sent + options_.heartbeat);
          if (stopping_ || session_done) break;
          want_request_ = false;
        }
        last_sent = absl::Now();
        if (!stream->Write(BuildRequest())) break;
      }
      stream->WritesDone();
    });
    // The leases of one answer (up to its end). A lone one is started on this thread, a thread
    // hand-off (~0.1 ms here) sooner than by a starter: a pipeline chain's next step comes
    // alone. Several go to the starter threads, to start side by side.
    std::vector<regatta::v1::JobRunLease> answer;
    auto queue_answer = [&] {
      if (answer.empty()) return;
      absl::MutexLock lock(&mu_);
      for (regatta::v1::JobRunLease& lease : answer) lease_queue_.push_back(std::move(lease));
      answer.clear();
    };
    regatta::v1::LeaseStreamMessage message;
    while (stream->Read(&message)) {
      got_message = true;
      switch (message.message_case()) {
        case regatta::v1::LeaseStreamMessage::kLease:
          answer.push_back(std::move(*message.mutable_lease()));
          break;
        case regatta::v1::LeaseStreamMessage::kCancelRuns:
          queue_answer();
          for (const std::string& id : message.cancel_runs().run_ids()) {
            HandleStop(id, RunEnd::kCancelled);
          }
          break;
        case regatta::v1::LeaseStreamMessage::kPreemptRuns:
          queue_answer();
          for (const std::string& id : message.preempt_runs().run_ids()) {
            HandleStop(id, RunEnd::kPreempted);
          }
          break;
        case regatta::v1::LeaseStreamMessage::kEnd: {
          RequestLeases();
          bool alone = answer.size() == 1;
          if (alone) {
            absl::MutexLock lock(&mu_);
            alone = lease_queue_.empty();
          }
          if (alone) {
            HandleLease(answer.front());
            answer.clear();
          }
          queue_answer();
          break;
        }
        case regatta::v1::LeaseStreamMessage::MESSAGE_NOT_SET:
          break;
      }
    }
    queue_answer();
    {
      absl::MutexLock lock(&mu_);
      session_done = true;
      session_ = nullptr;
    }
    stream->Cancel();
    writer.join();
    absl::Status status = stream->Finish();
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    if (got_message) backoff = absl::Milliseconds(100);
    LOG_WARN("lease stream ended; reconnecting", "code", static_cast<int>(status.code()), "error",
             status.message(), "retry_in", absl::FormatDuration(backoff));
    absl::MutexLock lock(&mu_);
    auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), backoff);
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

void Executor::StartLoop() {
  while (true) {
    regatta::v1::JobRunLease lease;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !lease_queue_.empty() || stopping_;
      };
      mu_.Await(absl::Condition(&ready));
      if (stopping_) return;
      lease = std::move(lease_queue_.front());
      lease_queue_.pop_front();
    }
    HandleLease(lease);
  }
}

void Executor::ResultLoop() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
    }
    std::vector<RunResult> results = backend_->WaitResults(absl::Milliseconds(200));
    if (results.empty()) continue;
    absl::MutexLock lock(&mu_);
    for (const RunResult& result : results) {
      auto it = held_.find(result.run_id);
      if (it == held_.end()) {
        backend_->Forget(result.run_id);
        continue;
      }
      Event event = NewEvent();
      if (result.finished != absl::Time()) {
        *event.mutable_created() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
            absl::ToUnixMicros(result.finished));
      }
      SetResultEvent(result, it->second.job_id, event);
      if (it->second.state == regatta::v1::RUN_STATE_PENDING) {
        // Started but its RUNNING event is not queued yet: keep the order.
        early_results_[result.run_id] = std::move(event);
        continue;
      }
      EnqueueLocked(result.run_id, std::move(event));
    }
    want_request_ = true;
  }
}

void Executor::ReportLoop() {
  absl::Duration backoff = absl::Milliseconds(100);
  absl::Time give_up = absl::InfiniteFuture();
  while (true) {
    regatta::v1::ReportEventsRequest request;
    request.set_executor_id(options_.executor_id);
    size_t taken = 0;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !outbox_.empty() || stopping_; };
      mu_.Await(absl::Condition(&ready));
      if (stopping_ && (outbox_.empty() || absl::Now() > give_up)) return;
      if (stopping_ && give_up == absl::InfiniteFuture()) {
        give_up = absl::Now() + absl::Seconds(2);
      }
      if (outbox_ends_ == 0 && !stopping_ && options_.report_linger > absl::ZeroDuration()) {
        auto end_or_stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return outbox_ends_ > 0 || stopping_;
        };
        mu_.AwaitWithTimeout(absl::Condition(&end_or_stop), options_.report_linger);
      }
      // One sequence per run of consecutive events of the same job set.
      regatta::v1::EventSequence* seq = nullptr;
      for (const PendingEvent& pending : outbox_) {
        if (taken == kMaxEventsPerReport) break;
        auto it = held_.find(pending.run_id);
        const std::string queue = it == held_.end() ? "" : it->second.queue;
        const std::string job_set = it == held_.end() ? "" : it->second.job_set;
        if (seq == nullptr || seq->queue() != queue || seq->job_set() != job_set) {
          seq = request.add_sequences();
          seq->set_queue(queue);
          seq->set_job_set(job_set);
        }
        *seq->add_events() = pending.event;
        ++taken;
      }
    }
    absl::StatusOr<regatta::v1::ReportEventsResponse> reported =
        api_->ReportEvents(request, absl::Seconds(10));
    if (!reported.ok()) {
      const absl::Status& status = reported.status();
      LOG_WARN("reporting run events failed; retrying", "events", taken, "code",
               static_cast<int>(status.code()), "error", status.message());
      if (absl::IsInvalidArgument(status)) {
        // The server will never take these; drop them rather than block every later report.
        absl::MutexLock lock(&mu_);
        for (size_t i = 0; i < taken && !outbox_.empty(); ++i) PopOutboxLocked();
        continue;
      }
      absl::MutexLock lock(&mu_);
      auto stopping = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
      mu_.AwaitWithTimeout(absl::Condition(&stopping), backoff);
      backoff = std::min(backoff * 2, absl::Seconds(5));
      continue;
    }
    backoff = absl::Milliseconds(100);
    const regatta::v1::ReportEventsResponse& response = *reported;
    std::vector<std::string> finished;
    {
      absl::MutexLock lock(&mu_);
      for (size_t i = 0; i < taken && !outbox_.empty(); ++i) {
        const PendingEvent& pending = outbox_.front();
        if (IsTerminalRunEvent(pending.event)) finished.push_back(pending.run_id);
        PopOutboxLocked();
      }
      for (const std::string& run_id : response.ignored_run_ids()) {
        auto it = held_.find(run_id);
        if (it != held_.end() && !IsActive(it->second.state)) finished.push_back(run_id);
      }
      for (const std::string& run_id : finished) {
        held_.erase(run_id);
        finished_.insert(run_id);
        finished_order_.push_back(run_id);
      }
      while (finished_order_.size() > kFinishedRunsRemembered) {
        finished_.erase(finished_order_.front());
        finished_order_.pop_front();
      }
      want_request_ = true;
    }
    for (const std::string& run_id : finished) backend_->Forget(run_id);
  }
}

std::string Executor::discovery_socket() const {
  return discovery_ == nullptr ? "" : discovery_->registration_socket();
}

void Executor::Stop(absl::Duration grace) {
  // Devices first: the agent's socket goes, and no report races the runs' last events.
  if (discovery_ != nullptr) discovery_->Stop();
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !lease_thread_.joinable() && !result_thread_.joinable() &&
        !report_thread_.joinable()) {
      return;
    }
    stopping_ = true;
    if (session_ != nullptr) session_->Cancel();
  }
  if (lease_thread_.joinable()) lease_thread_.join();
  for (std::thread& t : starter_threads_) {
    if (t.joinable()) t.join();
  }
  if (result_thread_.joinable()) result_thread_.join();
  if (backend_ != nullptr) backend_->StopAll(grace);
  if (report_thread_.joinable()) report_thread_.join();
  if (log_server_ != nullptr) {
    log_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
    log_server_.reset();
  }
}

}  // namespace regatta::executor
