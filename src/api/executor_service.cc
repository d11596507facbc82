#include "src/api/executor_service.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/api/grpc_status.h"
#include "src/api/pipeline_refs.h"
#include "src/api/serve.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"
#include "src/devices/report/report.h"
#include "src/store/list_all.h"

namespace regatta::api {
namespace {

using regatta::v1::Event;

absl::Status CheckExecutePermission(const ApiContext& ctx, const auth::Principal& principal) {
  if (ctx.authorizer->HasGlobal(principal, auth::GlobalPermission::kExecuteJobs)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError(absl::StrCat(
      "user ", principal.name, " may not act as an executor (needs the execute_jobs permission)"));
}

// The job and run ids of an executor's run event; INVALID_ARGUMENT for any other event.
absl::Status RunEventIds(const Event& event, std::string* job_id, std::string* run_id) {
  switch (event.event_case()) {
#define REGATTA_RUN_EVENT(kCase, getter) \
  case Event::kCase:                     \
    *job_id = event.getter().job_id();   \
    *run_id = event.getter().run_id();   \
    break;
    REGATTA_RUN_EVENT(kJobRunPending, job_run_pending)
    REGATTA_RUN_EVENT(kJobRunRunning, job_run_running)
    REGATTA_RUN_EVENT(kJobRunSucceeded, job_run_succeeded)
    REGATTA_RUN_EVENT(kJobRunFailed, job_run_failed)
    REGATTA_RUN_EVENT(kJobRunCancelled, job_run_cancelled)
    REGATTA_RUN_EVENT(kJobRunPreempted, job_run_preempted)
    REGATTA_RUN_EVENT(kJobRunLeaseReturned, job_run_lease_returned)
#undef REGATTA_RUN_EVENT
    default:
      return absl::InvalidArgumentError(
          "executors may only report run events (pending, running, succeeded, failed, "
          "cancelled, preempted, lease returned)");
  }
  if (job_id->empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  if (run_id->empty()) return absl::InvalidArgumentError("run_id: must not be empty");
  return absl::OkStatus();
}

}  // namespace

ExecutorService::ExecutorService(const ApiContext* ctx, scheduler::Scheduler* scheduler,
                                 scheduler::ExecutorRegistry* registry,
                                 ExecutorServiceOptions options)
    : ctx_(ctx), scheduler_(scheduler), registry_(registry), options_(options) {}

absl::Status ExecutorService::AddLeasedDevices(regatta::v1::JobRunLease& lease) {
  std::vector<scheduler::DeviceClaim> claims = scheduler_->DeviceClaimsOf(lease.run_id());
  std::vector<regatta::v1::Instance> instances;
  if (claims.empty()) {
    // Leased before this process started (or the run holds no device): the views know.
    const auto& requests = lease.job().task().resources().requests();
    if (std::none_of(requests.begin(), requests.end(),
                     [](const auto& r) { return IsDeviceResource(r.first); })) {
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(instances,
                     store::ListAll<regatta::v1::Instance>([this](const store::PageRequest& page) {
                       store::InstanceFilter filter;
                       filter.page = page;
                       return ctx_->store->ListInstances(filter);
                     }));
    for (const regatta::v1::Instance& instance : instances) {
      for (const auto& [slot, holder] : instance.device_usage()) {
        if (holder == lease.run_id()) claims.push_back({instance.name(), slot});
      }
    }
  }
  for (const scheduler::DeviceClaim& claim : claims) {
    regatta::v1::Instance instance;
    auto known = std::find_if(instances.begin(), instances.end(),
                              [&](const auto& i) { return i.name() == claim.instance; });
    if (known != instances.end()) {
      instance = *known;
    } else {
      absl::StatusOr<regatta::v1::Instance> found = ctx_->store->GetInstance(claim.instance);
      if (absl::IsNotFound(found.status())) {
        // The device went away since the claim; the run starts without it.
        LOG_WARN("a leased device is gone", "run", lease.run_id(), "instance", claim.instance);
        continue;
      }
      RETURN_IF_ERROR(found.status());
      instance = *std::move(found);
    }
    regatta::v1::LeasedDevice* device = lease.add_devices();
    device->set_instance_name(instance.name());
    device->set_slot(claim.slot);
    device->set_cdi_name(instance.cdi_name());
    if (!instance.broker_properties().empty()) {
      *device->mutable_properties() = instance.broker_properties();
    } else {
      // The device's properties with the Configuration's brokerProperties over them (Akri's
      // order).
      *device->mutable_properties() = instance.properties();
      absl::StatusOr<regatta::v1::Configuration> configuration =
          ctx_->store->GetConfiguration(instance.configuration_name());
      if (configuration.ok()) {
        for (const auto& [name, value] : configuration->broker_properties()) {
          (*device->mutable_properties())[name] = value;
        }
      }
    }
    *device->mutable_mounts() = instance.mounts();
    *device->mutable_device_specs() = instance.device_specs();
  }
  return absl::OkStatus();
}

ExecutorService::~ExecutorService() { Shutdown(); }

void ExecutorService::Shutdown() {
  shutting_down_ = true;
  {
    absl::MutexLock lock(&loss_mu_);
    loss_stop_ = true;
  }
  if (loss_thread_.joinable()) loss_thread_.join();
}

void ExecutorService::OpenSecretEnv(regatta::v1::Job& job) const {
  for (auto& [name, value] : *job.mutable_task()->mutable_secret_env()) {
    absl::StatusOr<std::string> opened =
        ctx_->sealer == nullptr ? absl::FailedPreconditionError("the server has no secrets key")
                                : ctx_->sealer->Open(value, SecretEnvContext(job.id(), name));
    if (opened.ok()) {
      value = *std::move(opened);
    } else {
      // Left sealed: the executor fails the run with this reason rather than run it without.
      LOG_ERROR("a leased job's secret env does not open", "job", job.id(), "variable", name,
                "error", opened.status().ToString());
    }
  }
}

std::vector<regatta::v1::LeaseStreamMessage> ExecutorService::PendingFor(
    const scheduler::ExecutorState& state) {
  std::vector<regatta::v1::LeaseStreamMessage> out;
  scheduler::JobDb& db = scheduler_->job_db();
  const absl::Time now = ctx_->clock->Now();
  regatta::v1::CancelRuns cancel;
  regatta::v1::PreemptRuns preempt;
  // The JobDb keeps only the scheduling part of a spec; the lease carries the job as
  // submitted, read from the store after the lock is released.
  struct NewLease {
    std::string run_id;
    std::string node_id;
    std::string job_id;
    int32_t priority = 0;
  };
  std::vector<NewLease> leases;
  {
    absl::ReaderMutexLock lock(&db.mutex());
    db.ForEachActiveRunOf(
        state.id, [&](const scheduler::JobRecord& job, const scheduler::RunRecord& run) {
          if (run.state != regatta::v1::RUN_STATE_LEASED || job.terminal() ||
              state.runs.contains(run.run_id)) {
            return;
          }
          if (!registry_->ClaimSend(state.id, state.incarnation, run.run_id, now,
                                    options_.lease_resend_after)) {
            return;
          }
          leases.push_back(NewLease{run.run_id, run.node_id, job.id, job.priority_class_priority});
        });
    for (const auto& [run_id, run_state] : state.runs) {
      if (store::IsTerminal(run_state)) continue;  // ended; the executor is reporting it
      const scheduler::JobRecord* job = db.FindJobByRun(run_id);
      const scheduler::RunRecord* run = job == nullptr ? nullptr : job->run(run_id);
      if (job != nullptr && job->state == regatta::v1::JOB_STATE_PREEMPTED) {
        preempt.add_run_ids(run_id);
      } else if (job == nullptr || run == nullptr || job->terminal() || !run->active() ||
                 run->executor_id != state.id) {
        cancel.add_run_ids(run_id);
      }
    }
  }
  if (!leases.empty()) {
    // Jobs just submitted in this process may not be in the views yet: the scheduler holds
    // their specs until they are (asked first, so a spec it forgets is in the views).
    absl::flat_hash_map<absl::string_view, const regatta::v1::Job*> by_id;
    std::vector<std::shared_ptr<const regatta::v1::Job>> spec_owners;  // keep by_id's pointers
    std::vector<std::string> job_ids;
    for (const NewLease& lease : leases) {
      if (std::shared_ptr<const regatta::v1::Job> spec = scheduler_->SubmittedSpec(lease.job_id)) {
        by_id.emplace(spec->id(), spec.get());
        spec_owners.push_back(std::move(spec));
      } else {
        job_ids.push_back(lease.job_id);
      }
    }
    absl::StatusOr<std::vector<regatta::v1::Job>> specs = std::vector<regatta::v1::Job>();
    if (!job_ids.empty()) specs = ctx_->store->GetJobSpecs(job_ids);
    if (!specs.ok()) {
      // Claimed but not sent: they go out again after lease_resend_after.
      LOG_WARN("could not read the specs of leased jobs; resending later", "executor", state.id,
               "error", specs.status().ToString());
      specs = std::vector<regatta::v1::Job>();
    }
    for (const regatta::v1::Job& job : *specs) by_id.emplace(job.id(), &job);
    for (const NewLease& lease : leases) {
      auto it = by_id.find(lease.job_id);
      if (it == by_id.end()) continue;
      regatta::v1::JobRunLease* message = out.emplace_back().mutable_lease();
      message->set_run_id(lease.run_id);
      message->set_executor_id(state.id);
      message->set_node_id(lease.node_id);
      *message->mutable_job() = *it->second;
      OpenSecretEnv(*message->mutable_job());
      message->set_scheduled_at_priority(lease.priority);
      if (absl::Status devices = AddLeasedDevices(*message); !devices.ok()) {
        // Not sent: it goes out again after lease_resend_after.
        LOG_WARN("could not read the devices of a lease; resending later", "run", lease.run_id,
                 "error", devices.ToString());
        out.pop_back();
      }
    }
  }
  if (cancel.run_ids_size() > 0) *out.emplace_back().mutable_cancel_runs() = std::move(cancel);
  if (preempt.run_ids_size() > 0) {
    *out.emplace_back().mutable_preempt_runs() = std::move(preempt);
  }
  return out;
}

namespace {

class GrpcLeaseSessionEnd final : public LeaseSessionEnd {
 public:
  GrpcLeaseSessionEnd(
      grpc::ServerContext* call,
      grpc::ServerReaderWriter<regatta::v1::LeaseStreamMessage, regatta::v1::LeaseRequest>* stream)
      : call_(call), stream_(stream) {}

  bool Read(regatta::v1::LeaseRequest* request) override { return stream_->Read(request); }
  bool Write(const regatta::v1::LeaseStreamMessage& message) override {
    return stream_->Write(message);
  }
  bool IsCancelled() override { return call_->IsCancelled(); }
  void TryCancel() override { call_->TryCancel(); }

 private:
  grpc::ServerContext* call_;
  grpc::ServerReaderWriter<regatta::v1::LeaseStreamMessage, regatta::v1::LeaseRequest>* stream_;
};

}  // namespace

grpc::Status ExecutorService::LeaseJobRuns(
    grpc::ServerContext* call,
    grpc::ServerReaderWriter<regatta::v1::LeaseStreamMessage, regatta::v1::LeaseRequest>* stream) {
  absl::StatusOr<auth::Principal> principal = AuthenticateCall(*ctx_, call);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  GrpcLeaseSessionEnd session(call, stream);
  return ToGrpcStatus(ServeLeases(*principal, session));
}

absl::Status ExecutorService::ServeLeases(const auth::Principal& principal,
                                          LeaseSessionEnd& session) {
  RETURN_IF_ERROR(CheckExecutePermission(*ctx_, principal));
  if (!scheduler_->ready()) {
    return absl::UnavailableError("the scheduler is still loading; retry shortly");
  }

  // A reader thread takes requests as they come (an executor may send a fresh one while the
  // previous is being answered); this thread answers with whatever the latest asks for.
  absl::Mutex mu;
  std::optional<scheduler::ExecutorState> latest;
  bool fresh = false;
  bool done = false;
  absl::Status read_error;
  absl::Status sync_error;
  std::thread reader([&] {
    regatta::v1::LeaseRequest request;
    while (session.Read(&request)) {
      absl::StatusOr<scheduler::ExecutorState> state =
          scheduler::ParseLeaseRequest(request, ctx_->clock->Now());
      absl::MutexLock lock(&mu);
      if (!state.ok()) {
        read_error = state.status();
        break;
      }
      // Run ends reach the scheduler through the views; a request only wakes it for new room.
      if (options_.on_heartbeat) options_.on_heartbeat(state->id);
      const bool more_room = registry_->Report(*state);
      latest = *std::move(state);
      fresh = true;
      if (more_room) scheduler_->Wake();
    }
    absl::MutexLock lock(&mu);
    done = true;
  });

  scheduler::JobDb& db = scheduler_->job_db();
  while (true) {
    scheduler::ExecutorState state;
    {
      absl::MutexLock lock(&mu);
      auto ready = [&] { return fresh || done; };
      while (!ready() && !shutting_down_ && !session.IsCancelled()) {
        mu.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(100));
      }
      if (done || shutting_down_ || session.IsCancelled()) break;
      fresh = false;
      state = *latest;
    }
    std::vector<regatta::v1::LeaseStreamMessage> messages = PendingFor(state);
    const absl::Time deadline = absl::Now() + options_.lease_wait;
    int64_t version = db.Version();
    while (messages.empty() && absl::Now() < deadline && !shutting_down_) {
      // A request that comes while nothing is pending (a run ended, a report was taken) only
      // refreshes what the executor holds: answering it with an empty answer would cost a
      // round trip of both threads on each side, and the executor's request after that.
      bool refreshed = false;
      {
        absl::MutexLock lock(&mu);
        if (done) break;
        if (fresh) {
          fresh = false;
          state = *latest;
          refreshed = true;
        }
      }
      if (!refreshed) {
        const int64_t now_version =
            db.WaitForChange(version, std::min(deadline, absl::Now() + absl::Milliseconds(50)));
        if (now_version == version) continue;
        version = now_version;
        // The registry holds the freshest view of what the executor holds.
        if (std::optional<scheduler::ExecutorState> s = registry_->Get(state.id)) state = *s;
      }
      messages = PendingFor(state);
    }
    // The scheduler only commits its decisions: an executor elsewhere must not act on one the
    // log could still lose. Everything PendingFor saw was committed by now, so at or before the
    // last offset.
    if (!messages.empty() && principal.name != options_.in_process_principal) {
      if (absl::Status durable = ctx_->log->WaitDurable(ctx_->log->LastOffset()); !durable.ok()) {
        sync_error = durable;
        break;
      }
    }
    bool ok = true;
    for (const auto& message : messages) ok = ok && session.Write(message);
    regatta::v1::LeaseStreamMessage end;
    end.mutable_end();
    if (!ok || !session.Write(end)) break;
  }
  {
    // Unblock the reader if this side stopped first; a reader that ended on a bad request has
    // returned already, and cancelling would replace the error the executor should see.
    absl::MutexLock lock(&mu);
    if (!done) session.TryCancel();
  }
  reader.join();
  if (!read_error.ok()) return read_error;
  if (!sync_error.ok()) {
    return absl::UnavailableError(
        absl::StrCat("the event log cannot make leases durable: ", sync_error.message()));
  }
  if (shutting_down_) return absl::UnavailableError("the server is shutting down");
  return absl::OkStatus();
}

absl::StatusOr<regatta::v1::ReportEventsResponse> ExecutorService::Report(
    const auth::Principal& principal, const regatta::v1::ReportEventsRequest& request) {
  RETURN_IF_ERROR(CheckExecutePermission(*ctx_, principal));
  if (request.executor_id().empty()) {
    return absl::InvalidArgumentError("executor_id: must not be empty");
  }
  // Check everything before publishing anything.
  int total = 0;
  for (int i = 0; i < request.sequences_size(); ++i) {
    const auto& seq = request.sequences(i);
    for (int j = 0; j < seq.events_size(); ++j) {
      std::string job_id;
      std::string run_id;
      absl::Status s = RunEventIds(seq.events(j), &job_id, &run_id);
      if (!s.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("sequences[", i, "].events[", j, "]: ", s.message()));
      }
      if (++total > options_.max_events_per_report) {
        return absl::InvalidArgumentError(absl::StrCat(
            "sequences: more than ", options_.max_events_per_report, " events in one report"));
      }
    }
  }
  regatta::v1::ReportEventsResponse response;
  std::vector<regatta::v1::EventSequence> out;
  std::map<std::pair<std::string, std::string>, size_t> index;
  std::vector<std::string> succeeded_jobs;
  {
    scheduler::JobDb& db = scheduler_->job_db();
    absl::ReaderMutexLock lock(&db.mutex());
    for (const auto& seq : request.sequences()) {
      for (const Event& event : seq.events()) {
        std::string job_id;
        std::string run_id;
        (void)RunEventIds(event, &job_id, &run_id);
        const scheduler::JobRecord* job = db.FindJobByRun(run_id);
        const scheduler::RunRecord* run = job == nullptr ? nullptr : job->run(run_id);
        if (run == nullptr || job == nullptr || job->id != job_id ||
            run->executor_id != request.executor_id()) {
          // Unknown here (the job ended and was dropped, or the run belongs elsewhere): the
          // executor stops reporting it.
          response.add_ignored_run_ids(run_id);
          continue;
        }
        registry_->MarkDelivered(request.executor_id(), run_id);
        // The server routes the event; the executor's queue and job set are not trusted.
        auto [it, inserted] = index.try_emplace({job->queue(), job->job_set()}, out.size());
        if (inserted) {
          regatta::v1::EventSequence& s = out.emplace_back();
          s.set_queue(job->queue());
          s.set_job_set(job->job_set());
          s.set_user_id(principal.name);
        }
        Event* copy = out[it->second].add_events();
        *copy = event;
        if (event.has_job_run_succeeded()) succeeded_jobs.push_back(job_id);
        if (!copy->has_created()) SetTimestamp(ctx_->clock->Now(), copy->mutable_created());
      }
    }
  }
  if (!out.empty()) {
    // Visible first, so the pipeline engine can start a chain's next step while the log
    // syncs; the executor is answered only once the events are durable.
    absl::StatusOr<std::vector<int64_t>> offsets = ctx_->log->AppendVisible(std::move(out));
    if (!offsets.ok()) {
      return absl::UnavailableError(
          absl::StrCat("the event log did not take the events: ", offsets.status().message()));
    }
    if (on_runs_succeeded_ && !succeeded_jobs.empty()) on_runs_succeeded_(succeeded_jobs);
    if (absl::Status durable = ctx_->log->WaitDurable(offsets->back()); !durable.ok()) {
      return absl::UnavailableError(
          absl::StrCat("the event log did not make the events durable: ", durable.message()));
    }
  }
  // No wake-up for the scheduler: it cycles once the views include these events.
  registry_->Touch(request.executor_id(), ctx_->clock->Now());
  return response;
}

grpc::Status ExecutorService::ReportEvents(grpc::ServerContext* call,
                                           const regatta::v1::ReportEventsRequest* request,
                                           regatta::v1::ReportEventsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& principal) { return Report(principal, *request); });
}

// ---- Devices ---------------------------------------------------------------------------------

absl::StatusOr<regatta::v1::DiscoverySnapshot> ExecutorService::CurrentDiscovery() {
  store::Store* store = ctx_->store;
  ASSIGN_OR_RETURN(
      std::vector<regatta::v1::Configuration> configurations,
      store::ListAll<regatta::v1::Configuration>(
          [store](const store::PageRequest& page) { return store->ListConfigurations(page); }));
  const secrets::Sealer* sealer = ctx_->sealer;
  const devices::SecretLookup secrets =
      [store, sealer](absl::string_view name) -> absl::StatusOr<regatta::v1::Secret> {
    ASSIGN_OR_RETURN(regatta::v1::Secret secret, store->GetSecret(name));
    for (auto& [key, value] : *secret.mutable_data()) {
      if (!secrets::IsSealed(value)) continue;  // applied before values were sealed
      if (sealer == nullptr) {
        return absl::FailedPreconditionError(
            absl::StrCat("secret \"", name, "\": the server has no secrets key"));
      }
      absl::StatusOr<std::string> opened = sealer->Open(value, SecretDataContext(name, key));
      if (!opened.ok()) {
        return absl::Status(
            opened.status().code(),
            absl::StrCat("secret \"", name, "\" key \"", key, "\": ", opened.status().message()));
      }
      value = *std::move(opened);
    }
    return secret;
  };
  const devices::ConfigMapLookup config_maps = [store](absl::string_view name) {
    return store->GetConfigMap(name);
  };
  regatta::v1::DiscoverySnapshot snapshot;
  for (const regatta::v1::Configuration& configuration : configurations) {
    regatta::v1::DiscoveryConfiguration* entry = snapshot.add_configurations();
    entry->set_configuration(configuration.name());
    entry->set_handler(configuration.discovery_handler().name());
    entry->set_discovery_details(configuration.discovery_handler().discovery_details());
    entry->set_generation(configuration.generation());
    absl::StatusOr<std::map<std::string, std::string>> properties =
        devices::ResolveDiscoveryProperties(configuration.discovery_handler(), secrets,
                                            config_maps);
    if (properties.ok()) {
      entry->mutable_discovery_properties()->insert(properties->begin(), properties->end());
    } else {
      entry->set_error(std::string(properties.status().message()));
    }
  }
  return snapshot;
}

void ExecutorService::NotifyDiscoveryChanged() {
  absl::MutexLock lock(&discovery_mu_);
  ++discovery_version_;
}

grpc::Status ExecutorService::WatchDiscovery(
    grpc::ServerContext* call, const regatta::v1::WatchDiscoveryRequest* request,
    grpc::ServerWriter<regatta::v1::DiscoverySnapshot>* writer) {
  absl::StatusOr<auth::Principal> principal = AuthenticateCall(*ctx_, call);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (absl::Status s = CheckExecutePermission(*ctx_, *principal); !s.ok()) return ToGrpcStatus(s);
  if (request->executor_id().empty()) {
    return ToGrpcStatus(absl::InvalidArgumentError("executor_id: must not be empty"));
  }
  const std::string& executor_id = request->executor_id();
  int64_t kick;
  {
    absl::MutexLock lock(&discovery_mu_);
    kick = kicks_[executor_id];
  }
  std::optional<regatta::v1::DiscoverySnapshot> sent;
  while (!shutting_down_ && !call->IsCancelled()) {
    int64_t version;
    {
      absl::MutexLock lock(&discovery_mu_);
      version = discovery_version_;
    }
    absl::StatusOr<regatta::v1::DiscoverySnapshot> snapshot = CurrentDiscovery();
    if (!snapshot.ok()) {
      return ToGrpcStatus(absl::UnavailableError(
          absl::StrCat("cannot read the Configurations: ", snapshot.status().message())));
    }
    if (!sent.has_value() ||
        !google::protobuf::util::MessageDifferencer::Equals(*snapshot, *sent)) {
      if (!writer->Write(*snapshot)) return grpc::Status::OK;
      sent = *std::move(snapshot);
    }
    absl::MutexLock lock(&discovery_mu_);
    auto changed = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(discovery_mu_) {
      return discovery_version_ != version || kicks_[executor_id] != kick || shutting_down_;
    };
    while (!changed() && !call->IsCancelled()) {
      discovery_mu_.AwaitWithTimeout(absl::Condition(&changed), absl::Milliseconds(100));
    }
    if (kicks_[executor_id] != kick) {
      return ToGrpcStatus(absl::UnavailableError(
          "the executor was declared lost; watch again and report every device again"));
    }
  }
  if (shutting_down_) return ToGrpcStatus(absl::UnavailableError("the server is shutting down"));
  return grpc::Status::OK;
}

absl::Status ExecutorService::ReportDevicesCore(const auth::Principal& principal,
                                                const regatta::v1::ReportDevicesRequest& request) {
  RETURN_IF_ERROR(CheckExecutePermission(*ctx_, principal));
  RETURN_IF_ERROR(devices::ValidateDeviceReport(request));
  std::optional<scheduler::ExecutorState> state = registry_->Get(request.executor_id());
  if (!state.has_value()) {
    return absl::FailedPreconditionError(
        absl::StrCat("executor_id: executor '", request.executor_id(),
                     "' is not connected (no lease request within the executor timeout)"));
  }
  std::vector<std::string> node_ids;
  for (const scheduler::Node& node : state->nodes) node_ids.push_back(node.id);
  if (std::find(node_ids.begin(), node_ids.end(), request.node_id()) == node_ids.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "node_id: '", request.node_id(), "' is not a node of executor '", request.executor_id(),
        "' (its latest lease request lists: ", absl::StrJoin(node_ids, ", "), ")"));
  }
  registry_->Touch(request.executor_id(), ctx_->clock->Now());

  absl::MutexLock lock(&report_mu_);
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  absl::StatusOr<regatta::v1::Configuration> configuration =
      ctx_->store->GetConfiguration(request.configuration());
  // Deleted while the node still discovered it: its watch removes it there.
  if (absl::IsNotFound(configuration.status())) return absl::OkStatus();
  RETURN_IF_ERROR(configuration.status());
  store::Store* store = ctx_->store;
  ASSIGN_OR_RETURN(std::vector<regatta::v1::Instance> seen,
                   store::ListAll<regatta::v1::Instance>([&](const store::PageRequest& page) {
                     store::InstanceFilter filter;
                     filter.configuration_name = request.configuration();
                     filter.node = request.node_id();
                     filter.page = page;
                     return store->ListInstances(filter);
                   }));
  std::vector<regatta::v1::Event> events = devices::DiffDeviceReport(*configuration, seen, request);
  if (events.empty()) return absl::OkStatus();
  return PublishAndWaitForViews(*ctx_, principal, "", "", std::move(events));
}

grpc::Status ExecutorService::ReportDevices(grpc::ServerContext* call,
                                            const regatta::v1::ReportDevicesRequest* request,
                                            regatta::v1::ReportDevicesResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& principal) {
    return ReportDevicesCore(principal, *request);
  });
}

void ExecutorService::OnExecutorLost(const scheduler::ExecutorState& state) {
  absl::MutexLock lock(&loss_mu_);
  if (loss_stop_) return;
  losses_.push_back(state);
  ++losses_queued_;
  if (!loss_thread_.joinable()) loss_thread_ = std::thread([this] { NodeLossLoop(); });
}

void ExecutorService::StartNodeSweep() {
  absl::MutexLock lock(&loss_mu_);
  if (loss_stop_) return;
  sweep_pending_ = true;
  if (!loss_thread_.joinable()) loss_thread_ = std::thread([this] { NodeLossLoop(); });
}

void ExecutorService::WaitForNodeLosses() {
  absl::MutexLock lock(&loss_mu_);
  const int64_t target = losses_queued_;
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loss_mu_) {
    return losses_done_ >= target || loss_stop_;
  };
  loss_mu_.Await(absl::Condition(&done));
}

bool ExecutorService::PublishNodeLosses(
    const std::function<absl::StatusOr<std::vector<regatta::v1::Event>>()>& collect,
    absl::string_view what) {
  const auth::Principal principal{kNodeLossUser, {}, false};
  // Retried until it is published: a lost node must not keep its Instances.
  absl::Duration backoff = absl::Milliseconds(100);
  while (true) {
    absl::Status status = [&]() -> absl::Status {
      absl::MutexLock lock(&report_mu_);
      RETURN_IF_ERROR(CatchUpViews(*ctx_));
      ASSIGN_OR_RETURN(std::vector<regatta::v1::Event> events, collect());
      if (events.empty()) return absl::OkStatus();
      LOG_INFO("dropping lost nodes from Instances", "why", what, "instances", events.size());
      return PublishAndWaitForViews(*ctx_, principal, "", "", std::move(events));
    }();
    if (status.ok()) return true;
    LOG_WARN("could not drop lost nodes from Instances; retrying", "why", what, "error",
             status.ToString());
    absl::MutexLock lock(&loss_mu_);
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loss_mu_) { return loss_stop_; };
    if (loss_mu_.AwaitWithTimeout(absl::Condition(&stop), backoff)) return false;
    backoff = std::min(backoff * 2, absl::Seconds(5));
  }
}

void ExecutorService::NodeLossLoop() {
  store::Store* store = ctx_->store;
  auto instances_of = [store](const std::string& node) {
    return store::ListAll<regatta::v1::Instance>([&](const store::PageRequest& page) {
      store::InstanceFilter filter;
      filter.node = node;
      filter.page = page;
      return store->ListInstances(filter);
    });
  };
  bool sweep;
  {
    absl::MutexLock lock(&loss_mu_);
    sweep = sweep_pending_;
    sweep_pending_ = false;
    // Executors connected before the restart get one executor timeout to come back.
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loss_mu_) { return loss_stop_; };
    if (sweep && loss_mu_.AwaitWithTimeout(absl::Condition(&stop), options_.executor_timeout)) {
      return;
    }
  }
  if (sweep) {
    const bool published = PublishNodeLosses(
        [&]() -> absl::StatusOr<std::vector<regatta::v1::Event>> {
          std::set<std::string> live;
          for (const scheduler::ExecutorState& e : registry_->Snapshot()) {
            for (const scheduler::Node& node : e.nodes) live.insert(node.id);
          }
          ASSIGN_OR_RETURN(std::vector<regatta::v1::Instance> all, instances_of(""));
          std::vector<regatta::v1::Event> events;
          for (const regatta::v1::Instance& instance : all) {
            for (const std::string& node : instance.nodes()) {
              if (live.contains(node)) continue;
              for (regatta::v1::Event& event : devices::NodeLostEvents({instance}, node)) {
                events.push_back(std::move(event));
              }
            }
          }
          return events;
        },
        "no executor lists the node one executor timeout after the server started");
    if (!published) return;
  }
  while (true) {
    scheduler::ExecutorState state;
    {
      absl::MutexLock lock(&loss_mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(loss_mu_) {
        return !losses_.empty() || loss_stop_;
      };
      loss_mu_.Await(absl::Condition(&ready));
      if (loss_stop_) return;
      state = std::move(losses_.front());
      losses_.pop_front();
    }
    const bool published = PublishNodeLosses(
        [&]() -> absl::StatusOr<std::vector<regatta::v1::Event>> {
          std::vector<regatta::v1::Event> events;
          for (const scheduler::Node& node : state.nodes) {
            ASSIGN_OR_RETURN(std::vector<regatta::v1::Instance> seen, instances_of(node.id));
            for (regatta::v1::Event& event : devices::NodeLostEvents(seen, node.id)) {
              events.push_back(std::move(event));
            }
          }
          return events;
        },
        absl::StrCat("executor ", state.id, " lost"));
    if (!published) return;
    {
      // Its watch ends only now, so a returning executor's reports come after the losses.
      absl::MutexLock lock(&discovery_mu_);
      ++kicks_[state.id];
    }
    absl::MutexLock lock(&loss_mu_);
    ++losses_done_;
  }
}

}  // namespace regatta::api
