#include "src/server/platform.h"

#include <atomic>
#include <filesystem>
#include <system_error>
#include <variant>

#include "absl/strings/str_cat.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "src/api/api_context.h"
#include "src/api/auth/password.h"
#include "src/api/auth/users_file.h"
#include "src/api/device_service.h"
#include "src/api/event_service.h"
#include "src/api/executor_service.h"
#include "src/api/in_process_executor_api.h"
#include "src/api/job_service.h"
#include "src/api/pipeline_service.h"
#include "src/api/queue_service.h"
#include "src/api/report_service.h"
#include "src/api/rest/rest_server.h"
#include "src/api/run_service.h"
#include "src/api/status_interceptor.h"
#include "src/api/submit_service.h"
#include "src/common/logging.h"
#include "src/common/secrets/sealer.h"
#include "src/common/status_macros.h"
#include "src/devices/controller/controller.h"
#include "src/devices/protocol/sockets.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/executor/local_executor.h"
#include "src/executor/simulated_executor.h"
#include "src/ingest/ingester.h"
#include "src/observability/api_interceptor.h"
#include "src/observability/http_endpoints.h"
#include "src/observability/state_collector.h"
#include "src/pipelines/engine/engine.h"
#include "src/pipelines/schedule/controller.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/scheduler.h"
#include "src/server/anonymous_access.h"
#include "src/server/device_controller_backend.h"
#include "src/server/oidc.h"
#include "src/server/pipeline_backend.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::server {

struct Platform::Impl {
  ServerConfig config;
  // Outlives everything it observes.
  std::unique_ptr<observability::Metrics> metrics;
  std::atomic<bool> serving{false};  // for /readyz
  std::unique_ptr<UlidGenerator> owned_ids;
  // Error references of its own, so an error does not shift the ids jobs get.
  std::unique_ptr<UlidGenerator> error_ids;
  std::unique_ptr<eventlog::SqliteEventLog> log;
  std::unique_ptr<store::SqliteStore> store;
  std::unique_ptr<ingest::Ingester> ingester;
  std::unique_ptr<auth::Authenticator> authenticator;
  std::unique_ptr<auth::Authorizer> authorizer;
  std::unique_ptr<secrets::Sealer> sealer;
  api::ApiContext api;
  std::unique_ptr<api::SubmitService> submit_service;
  std::unique_ptr<api::QueueService> queue_service;
  std::unique_ptr<api::JobService> job_service;
  std::unique_ptr<api::EventService> event_service;
  scheduler::ExecutorRegistry executors;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  scheduler::SchedulingReports reports;
  std::unique_ptr<api::ReportService> report_service;
  std::unique_ptr<api::ExecutorService> executor_service;
  std::unique_ptr<executor::Executor> local_executor;
  // Pipelines: the engine drives runs; the ingester tells it about step jobs once it is set.
  std::unique_ptr<PlatformPipelineBackend> pipeline_backend;
  std::unique_ptr<pipelines::engine::PipelineEngine> pipeline_engine;
  std::atomic<pipelines::engine::PipelineEngine*> observed_engine{nullptr};
  // The executor API once built: device changes and executor losses reach it.
  std::atomic<api::ExecutorService*> observed_executor_service{nullptr};
  // The scheduler once built: it reads the Instances again only after device changes.
  std::atomic<scheduler::Scheduler*> observed_scheduler{nullptr};
  std::unique_ptr<api::RunService> run_service;
  std::unique_ptr<api::PipelineService> pipeline_service;
  std::unique_ptr<api::DeviceService> device_service;
  std::unique_ptr<pipelines::schedule::RecurringRunController> recurring_runs;
  // Devices: the controller keeps every Instance's brokers running; ingested changes wake it.
  std::unique_ptr<PlatformBrokerBackend> broker_backend;
  std::unique_ptr<devices::DeviceController> device_controller;
  std::atomic<devices::DeviceController*> observed_device_controller{nullptr};
  // Before the servers: their credentials use it until they are gone.
  std::shared_ptr<tls::ServerTls> tls;
  // The embedded executor once started: its log service is read without TLS.
  std::atomic<executor::Executor*> observed_local_executor{nullptr};
  std::unique_ptr<grpc::Server> grpc_server;
  std::unique_ptr<rest::RestServer> rest_server;
  std::string grpc_address;
  std::string http_address;
  std::string data_dir;
  bool anonymous = false;
  std::string anonymous_warning;
  bool stopped = false;
};

namespace {

// The ingester that maintains views.db (its consumer offset is stored there).
constexpr char kViewsConsumer[] = "query";

absl::StatusOr<std::string> PrepareDataDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::UnavailableError(absl::StrCat("data directory ", dir, ": ", ec.message()));
  std::filesystem::path abs = std::filesystem::absolute(dir, ec);
  return ec ? dir : abs.lexically_normal().string();
}

// The keys that seal secret values: secrets.keyFile, or the data directory's own (created).
absl::StatusOr<std::unique_ptr<secrets::Sealer>> LoadSealer(const std::string& key_file,
                                                            const std::string& data_dir) {
  const bool own = key_file.empty();
  const std::string path =
      own ? (std::filesystem::path(data_dir) / "secrets.key").string() : key_file;
  absl::StatusOr<std::unique_ptr<secrets::Sealer>> sealer =
      secrets::Sealer::FromFile(path, /*create_if_missing=*/own);
  if (!sealer.ok()) {
    return absl::Status(sealer.status().code(),
                        absl::StrCat("secrets.keyFile: ", sealer.status().message()));
  }
  return sealer;
}

std::pair<std::string, int> SplitHostPort(absl::string_view listen) {
  size_t colon = listen.rfind(':');
  int port = 0;
  (void)absl::SimpleAtoi(listen.substr(colon + 1), &port);
  return {std::string(listen.substr(0, colon)), port};
}

}  // namespace

namespace {

executor::ExecutorOptions ExecutorOptionsFrom(const ExecutorConfig& config) {
  executor::ExecutorOptions e;
  e.executor_id = config.id;
  e.pool = config.pool;
  e.nodes = config.nodes;
  e.heartbeat = config.heartbeat;
  e.max_runs = config.max_runs;
  e.logs_listen = config.logs_listen;
  return e;
}

}  // namespace

executor::LocalExecutorOptions LocalExecutorOptionsFrom(const ExecutorConfig& config,
                                                        const std::string& data_dir) {
  executor::LocalExecutorOptions e;
  e.executor = ExecutorOptionsFrom(config);
  e.data_dir = config.data_dir.empty() ? data_dir + "/executor" : config.data_dir;
  e.default_termination_grace = config.termination_grace;
  e.use_cgroups = config.cgroups;
  e.sync_run_state = config.sync_run_state;
  e.containers = config.containers;
  // Runs see a small, predictable environment, not the server's.
  for (const char* name : {"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER", "LOGNAME"}) {
    if (const char* value = std::getenv(name); value != nullptr)
      e.base_env.emplace_back(name, value);
  }
  if (std::getenv("PATH") == nullptr)
    e.base_env.emplace_back("PATH", "/usr/local/bin:/usr/bin:/bin");
  return e;
}

std::string DiscoveryDirFrom(const ExecutorConfig& config, const std::string& default_dir) {
  if (config.discovery_dir == "off") return "";
  return config.discovery_dir.empty() ? default_dir : config.discovery_dir;
}

executor::SimulatedExecutorOptions SimulatedExecutorOptionsFrom(const ExecutorConfig& config) {
  executor::SimulatedExecutorOptions e;
  e.executor = ExecutorOptionsFrom(config);
  e.executor.nodes.clear();          // the simulated nodes replace them
  e.executor.logs_listen.clear();    // simulated runs have no logs
  e.executor.discovery_dir.clear();  // simulated nodes get devices from `regatta agent`
  e.node_groups = config.simulated.node_groups;
  e.duration = config.simulated.duration;
  e.seed = config.simulated.seed;
  return e;
}

absl::StatusOr<std::unique_ptr<Platform>> Platform::Start(const ServerConfig& config, Mode mode,
                                                          Deps deps) {
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  const Clock* clock = deps.clock != nullptr ? deps.clock : RealClock::Get();
  IdGenerator* ids = deps.ids;
  if (ids == nullptr) {
    impl->owned_ids = std::make_unique<UlidGenerator>(clock);
    ids = impl->owned_ids.get();
  }
  ASSIGN_OR_RETURN(impl->data_dir, PrepareDataDir(config.data_dir));
  ASSIGN_OR_RETURN(impl->sealer, LoadSealer(config.secrets_key_file, impl->data_dir));
  const bool embedded_executor = mode == Mode::kUp && config.executor.embedded;
  if (config.tls.on()) {
    tls::ServerTlsOptions tls_options;
    tls_options.cert_file = config.tls.cert_file;
    tls_options.key_file = config.tls.key_file;
    tls_options.client_ca_file = config.tls.client_ca_file;
    tls_options.client_auth = config.tls.client_auth;
    ASSIGN_OR_RETURN(impl->tls, tls::ServerTls::Load(std::move(tls_options)));
    // The embedded executor's log service stays plain text, so only on loopback.
    if (embedded_executor && !config.executor.embedded_simulated &&
        !config.executor.logs_listen.empty() && !IsLoopbackListen(config.executor.logs_listen)) {
      return absl::InvalidArgumentError(
          "executor.logsListen: the embedded executor serves logs without TLS, so only on a "
          "loopback address when tls.certFile is set");
    }
  }

  // Authentication and authorization.
  auth::AuthConfig auth_config;
  ASSIGN_OR_RETURN(AnonymousAccess anonymous,
                   ResolveAnonymousAccess(config, mode == Mode::kUp,
                                          embedded_executor && !config.executor.embedded_simulated
                                              ? config.executor.logs_listen
                                              : ""));
  if (!anonymous.note.empty()) LOG_WARN(anonymous.note);
  if (!anonymous.warning.empty()) LOG_ERROR(anonymous.warning);
  impl->anonymous = anonymous.enabled;
  impl->anonymous_warning = anonymous.warning;
  auth_config.anonymous_enabled = anonymous.enabled;
  auth_config.anonymous_groups = std::move(anonymous.groups);
  auth_config.password_limits = config.password_limits;
  auth_config.clock = clock;
  // The users file first: the embedded executor's token is added to what it holds.
  if (!config.users_file.empty()) {
    ASSIGN_OR_RETURN(auth_config.credentials, auth::LoadUsersFile(config.users_file));
  } else if (!impl->anonymous) {
    LOG_WARN("no auth.usersFile and anonymous access is off: every call will be refused");
  }
  // The embedded executor authenticates with a token that lives only in this process.
  std::string embedded_token;
  auth::AuthorizationConfig authorization = config.authorization;
  if (embedded_executor) {
    embedded_token = absl::StrCat(ids->NewId(), ids->NewId(), ids->NewId());
    auth::TokenEntry token;
    token.name = kEmbeddedExecutorUser;
    token.token_sha256 = auth::HashToken(embedded_token);
    auth_config.credentials.tokens.push_back(std::move(token));
    authorization.permission_user_mapping["execute_jobs"].push_back(kEmbeddedExecutorUser);
  }
  // The device controller submits and cancels brokers in the queues their Configurations name
  // (only an administrator may apply a Configuration).
  authorization.permission_user_mapping["submit_any_jobs"].push_back(kDeviceControllerUser);
  authorization.permission_user_mapping["cancel_any_jobs"].push_back(kDeviceControllerUser);
  ASSIGN_OR_RETURN(auth_config.jwt_verifier, MakeOidcVerifier(config.oidc, clock));
  ASSIGN_OR_RETURN(impl->authenticator, auth::Authenticator::Create(std::move(auth_config)));
  ASSIGN_OR_RETURN(auth::Authorizer authorizer, auth::Authorizer::Create(authorization));
  impl->authorizer = std::make_unique<auth::Authorizer>(std::move(authorizer));

  // Storage: the log is the source of truth, the store holds the views.
  impl->metrics = std::make_unique<observability::Metrics>();
  observability::Metrics* metrics = impl->metrics.get();
  eventlog::SqliteEventLog::Options log_options;
  log_options.max_record_bytes = config.max_log_record_bytes;
  log_options.on_append = [metrics](eventlog::AppendWait wait, absl::Duration d, bool ok) {
    metrics->ObserveAppend(wait, d, ok);
  };
  ASSIGN_OR_RETURN(impl->log,
                   eventlog::SqliteEventLog::Open(impl->data_dir + "/log.db", log_options));
  const std::string views_path = impl->data_dir + "/views.db";
  ASSIGN_OR_RETURN(impl->store, store::SqliteStore::Open(views_path));
  // The views can only be ahead of the log if a machine crash lost the log's unsynced tail
  // (see EventLog::AppendVisible) after the ingester had applied it: rebuild them from the log.
  ASSIGN_OR_RETURN(const int64_t views_offset, impl->store->GetConsumerOffset(kViewsConsumer));
  if (views_offset > impl->log->LastOffset()) {
    LOG_WARN("the views are ahead of the event log; rebuilding them from the log", "views_offset",
             views_offset, "log_offset", impl->log->LastOffset());
    impl->store.reset();
    for (const char* suffix : {"", "-wal", "-shm"}) {
      std::error_code removed;
      std::filesystem::remove(views_path + suffix, removed);
      if (removed) {
        return absl::InternalError(absl::StrCat("cannot remove ", views_path, suffix,
                                                " to rebuild the views: ", removed.message()));
      }
    }
    ASSIGN_OR_RETURN(impl->store, store::SqliteStore::Open(views_path));
  }
  // Small ingest transactions: the API's client-id writes share the store's write lock, so a
  // long ingest batch would stall submits that carry client ids.
  ingest::IngesterOptions ingest_options;
  ingest_options.max_mutations_per_batch = 2000;
  // Background priority: a 100-step chain 365 -> 340 ms (medians of 6 alternating runs), and
  // 1000 trivial jobs end to end no slower (see docs/benchmarks.md).
  ingest_options.thread_nice = 5;
  // Group commit of records that come one at a time (a pipeline chain's submit and lease) but
  // never of one the scheduler would wake for: a chain step's three records in one transaction
  // instead of three, ~25 % of the ingest's CPU (see docs/benchmarks.md).
  Impl* raw = impl.get();
  ingest_options.linger = config.views_linger;
  ingest_options.urgent = [raw](const store::OffsetMutation& mutation) {
    scheduler::Scheduler* scheduler = raw->observed_scheduler.load(std::memory_order_acquire);
    return scheduler == nullptr || scheduler->NeedsCycle(mutation);
  };
  impl->ingester = std::make_unique<ingest::Ingester>(impl->log.get(), impl->store.get(), clock,
                                                      kViewsConsumer, ingest_options);
  impl->ingester->AddObserver(
      [metrics](const store::IngestBatch& batch) { metrics->ObserveIngestBatch(batch); });
  impl->ingester->AddObserver([raw](const store::IngestBatch& batch) {
    scheduler::Scheduler* scheduler = raw->observed_scheduler.load(std::memory_order_acquire);
    if (scheduler == nullptr) return;
    scheduler->ViewsMoved(batch);  // they hold the batch already
  });
  // Discovery watchers send new snapshots when what executors discover may have changed.
  impl->ingester->AddObserver([raw](const store::IngestBatch& batch) {
    api::ExecutorService* executor_service =
        raw->observed_executor_service.load(std::memory_order_acquire);
    if (executor_service == nullptr) return;
    for (const store::OffsetMutation& m : batch.mutations) {
      const auto* change = std::get_if<store::DeviceChange>(&m.mutation);
      if (change == nullptr) continue;
      switch (change->event.event_case()) {
        case regatta::v1::Event::kConfigurationApplied:
        case regatta::v1::Event::kConfigurationDeleted:
        case regatta::v1::Event::kSecretApplied:
        case regatta::v1::Event::kSecretDeleted:
        case regatta::v1::Event::kConfigMapApplied:
        case regatta::v1::Event::kConfigMapDeleted:
          executor_service->NotifyDiscoveryChanged();
          return;
        default:
          break;
      }
    }
  });
  // The device controller plans again when Configurations or Instances change or a broker ends.
  impl->ingester->AddObserver([raw](const store::IngestBatch& batch) {
    devices::DeviceController* controller =
        raw->observed_device_controller.load(std::memory_order_acquire);
    if (controller == nullptr) return;
    for (const store::OffsetMutation& m : batch.mutations) {
      if (const auto* change = std::get_if<store::DeviceChange>(&m.mutation)) {
        switch (change->event.event_case()) {
          case regatta::v1::Event::kConfigurationApplied:
          case regatta::v1::Event::kConfigurationDeleted:
          case regatta::v1::Event::kInstanceNodeSeen:
          case regatta::v1::Event::kInstanceNodeLost:
            controller->Wake();
            return;
          default:
            break;
        }
      } else if (const auto* state = std::get_if<store::JobSetState>(&m.mutation)) {
        if (store::IsTerminal(state->state) && controller->IsActiveBroker(state->job_id)) {
          controller->Wake();
          return;
        }
      }
    }
  });
  impl->ingester->AddObserver([raw](const store::IngestBatch& batch) {
    pipelines::engine::PipelineEngine* engine =
        raw->observed_engine.load(std::memory_order_acquire);
    if (engine == nullptr) return;
    for (const store::OffsetMutation& m : batch.mutations) {
      if (const auto* insert = std::get_if<store::JobInsert>(&m.mutation)) {
        engine->ObserveJobInserted(insert->job);
      } else if (const auto* run = std::get_if<store::RunInsert>(&m.mutation)) {
        engine->ObserveRunLeased(run->run.run_id(), run->run.job_id());
      } else if (const auto* run_state = std::get_if<store::RunSetState>(&m.mutation)) {
        if (run_state->state == regatta::v1::RUN_STATE_SUCCEEDED) {
          engine->ObserveRunSucceeded(run_state->run_id);
        }
      } else if (const auto* change = std::get_if<store::JobSetState>(&m.mutation)) {
        if (!store::IsTerminal(change->state)) continue;
        std::string error = change->error ? change->error->message() : change->reason;
        if (error.empty() && change->state != regatta::v1::JOB_STATE_SUCCEEDED) {
          error = std::string(regatta::v1::JobState_Name(change->state));
        }
        engine->ObserveJobEnded(change->job_id, change->state == regatta::v1::JOB_STATE_SUCCEEDED,
                                error);
      }
    }
  });
  RETURN_IF_ERROR(impl->ingester->Start());

  // API services.
  impl->api.log = impl->log.get();
  impl->api.store = impl->store.get();
  impl->api.authenticator = impl->authenticator.get();
  impl->api.authorizer = impl->authorizer.get();
  impl->api.clock = clock;
  impl->api.ids = ids;
  impl->api.sealer = impl->sealer.get();
  impl->api.policy = config.submit_policy;
  impl->api.view_wait_timeout = config.view_wait_timeout;
  impl->api.record_principal = config.observability.audit;
  impl->api.wait_for_views = [raw](int64_t offset, absl::Time deadline) {
    return raw->ingester->WaitForOffset(offset, deadline);
  };
  impl->submit_service = std::make_unique<api::SubmitService>(&impl->api);
  impl->queue_service = std::make_unique<api::QueueService>(&impl->api);
  impl->job_service = std::make_unique<api::JobService>(&impl->api);
  impl->event_service = std::make_unique<api::EventService>(&impl->api);

  // The scheduler (standalone leader) and the executor API in front of it.
  impl->scheduler = std::make_unique<scheduler::Scheduler>(
      impl->log.get(), impl->store.get(), impl->api.wait_for_views, &impl->executors, clock, ids,
      config.scheduler);
  impl->scheduler->set_reports(&impl->reports);
  impl->scheduler->set_on_cycle(
      [metrics](const scheduler::CycleReport& report) { metrics->ObserveCycle(report); });
  impl->scheduler->TrackDeviceChanges();
  impl->observed_scheduler.store(impl->scheduler.get(), std::memory_order_release);
  // A lost executor's nodes leave every Instance.
  impl->scheduler->set_on_executor_lost([raw](const scheduler::ExecutorState& state) {
    api::ExecutorService* executor_service =
        raw->observed_executor_service.load(std::memory_order_acquire);
    if (executor_service != nullptr) executor_service->OnExecutorLost(state);
  });
  RETURN_IF_ERROR(impl->scheduler->Start());
  // New jobs reach the scheduler in process, an ingest earlier than through the views.
  impl->submit_service->set_on_submitted(
      [raw](int64_t offset, std::vector<std::shared_ptr<const regatta::v1::Job>> jobs) {
        raw->scheduler->AcceptSubmitted(offset, std::move(jobs));
      });

  // Pipelines: the engine resumes the runs the log left active, then serves new ones.
  std::error_code ec;
  const std::string data_dir_abs = std::filesystem::absolute(impl->data_dir, ec).string();
  pipelines::engine::EngineOptions engine_options;
  engine_options.work_root = data_dir_abs + "/pipelines";
  engine_options.cache_ttl = config.pipelines.cache_ttl;
  engine_options.default_cpu = config.pipelines.step_cpu;
  engine_options.default_memory = config.pipelines.step_memory;
  engine_options.progress_hold = config.pipelines.progress_hold;
  engine_options.step_runner = config.pipelines.step_runner == "container"
                                   ? pipelines::engine::StepRunner::kContainer
                                   : pipelines::engine::StepRunner::kHost;
  engine_options.buckets_dir = config.pipelines.buckets_dir.empty() ? data_dir_abs + "/buckets"
                                                                    : config.pipelines.buckets_dir;
  impl->pipeline_backend =
      std::make_unique<PlatformPipelineBackend>(&impl->api, impl->submit_service.get());
  impl->pipeline_engine = std::make_unique<pipelines::engine::PipelineEngine>(
      impl->pipeline_backend.get(), clock, ids, engine_options);
  api::RunServiceOptions run_options;
  run_options.default_queue = config.pipelines.default_queue;
  run_options.default_pipeline_root =
      config.pipelines.root.empty() ? data_dir_abs + "/artifacts" : config.pipelines.root;
  impl->run_service =
      std::make_unique<api::RunService>(&impl->api, impl->pipeline_engine.get(), run_options);
  impl->recurring_runs = std::make_unique<pipelines::schedule::RecurringRunController>(
      clock, impl->run_service.get(), impl->run_service.get());
  impl->run_service->set_controller(impl->recurring_runs.get());
  // A recurring run's slot frees when one of its runs ends.
  pipelines::schedule::RecurringRunController* recurring = impl->recurring_runs.get();
  impl->pipeline_engine->set_on_run_ended([recurring](const regatta::v1::PipelineRun& run) {
    if (!run.recurring_run_id().empty()) recurring->Wake();
  });
  impl->observed_engine.store(impl->pipeline_engine.get(), std::memory_order_release);
  RETURN_IF_ERROR(impl->pipeline_engine->Start());
  impl->recurring_runs->Start();
  impl->pipeline_service = std::make_unique<api::PipelineService>(&impl->api);
  impl->device_service = std::make_unique<api::DeviceService>(&impl->api);
  impl->report_service = std::make_unique<api::ReportService>(&impl->api, &impl->reports);
  api::ExecutorServiceOptions executor_api_options;
  executor_api_options.lease_wait = config.lease_wait;
  executor_api_options.executor_timeout = config.scheduler.executor_timeout;
  if (embedded_executor) executor_api_options.in_process_principal = kEmbeddedExecutorUser;
  executor_api_options.on_heartbeat = [metrics](absl::string_view id) {
    metrics->ObserveHeartbeat(id);
  };
  impl->executor_service = std::make_unique<api::ExecutorService>(
      &impl->api, impl->scheduler.get(), &impl->executors, executor_api_options);
  // A step's success reaches the engine as soon as it is durable (the ingest path stays as the
  // fallback and for restarts; the engine ignores the second notice).
  impl->executor_service->set_on_runs_succeeded([raw](const std::vector<std::string>& job_ids) {
    pipelines::engine::PipelineEngine* engine =
        raw->observed_engine.load(std::memory_order_acquire);
    if (engine == nullptr) return;
    for (const std::string& job_id : job_ids) engine->ObserveJobEnded(job_id, true, "");
  });
  impl->observed_executor_service.store(impl->executor_service.get(), std::memory_order_release);
  impl->api.broker_errors = [raw](absl::string_view configuration) -> std::string {
    devices::DeviceController* controller =
        raw->observed_device_controller.load(std::memory_order_acquire);
    return controller == nullptr ? "" : controller->BrokerErrors(configuration);
  };
  impl->api.executor_logs_address = [raw](absl::string_view executor_id) -> std::string {
    std::optional<scheduler::ExecutorState> state = raw->executors.Get(executor_id);
    return state.has_value() ? state->logs_address : "";
  };

  if (impl->tls != nullptr) {
    // Executors' log services are dialed with TLS (this server's certificate as the client's,
    // their certificates verified with the client CA); the embedded one's is plain text.
    impl->api.executor_channel_credentials =
        [raw, insecure = std::shared_ptr<grpc::ChannelCredentials>(
                  grpc::InsecureChannelCredentials())](absl::string_view executor_id) {
          executor::Executor* embedded =
              raw->observed_local_executor.load(std::memory_order_acquire);
          if (embedded != nullptr && embedded->executor_id() == executor_id) return insecure;
          return raw->tls->PeerChannelCredentials();
        };
  }

  grpc::ServerBuilder builder;
  int grpc_port = 0;
  builder.AddListeningPort(
      config.grpc_listen,
      impl->tls ? impl->tls->GrpcCredentials() : grpc::InsecureServerCredentials(), &grpc_port);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.max_request_bytes));
  builder.SetMaxSendMessageSize(64 << 20);
  builder.RegisterService(impl->submit_service.get());
  builder.RegisterService(impl->queue_service.get());
  builder.RegisterService(impl->job_service.get());
  builder.RegisterService(impl->event_service.get());
  builder.RegisterService(impl->executor_service.get());
  builder.RegisterService(impl->report_service.get());
  builder.RegisterService(impl->run_service.get());
  builder.RegisterService(impl->pipeline_service.get());
  builder.RegisterService(impl->device_service.get());
  // No internal text (SQL, paths) and no unbounded echo in statuses; unparsable requests are
  // the client's error.
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  impl->error_ids = std::make_unique<UlidGenerator>(clock);
  interceptors.push_back(api::NewStatusHygieneInterceptorFactory(impl->error_ids.get()));
  // After the hygiene interceptor: calls are counted and audited with the status it settled.
  interceptors.push_back(std::make_unique<observability::ApiInterceptorFactory>(
      observability::InterceptorOptions{.metrics = metrics, .audit = config.observability.audit}));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  impl->grpc_server = builder.BuildAndStart();
  if (impl->grpc_server == nullptr || grpc_port == 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen for gRPC on ", config.grpc_listen, " (address in use?)"));
  }
  impl->grpc_address = absl::StrCat(SplitHostPort(config.grpc_listen).first, ":", grpc_port);

  rest::RestOptions rest_options;
  auto [http_host, http_port] = SplitHostPort(config.http_listen);
  rest_options.host = http_host;
  rest_options.port = http_port;
  rest_options.threads = config.rest_threads;
  rest_options.max_body_bytes = config.max_request_bytes;
  rest_options.tls = impl->tls;
  metrics->AddCollector(
      [sources = observability::StateSources{
           impl->scheduler.get(), &impl->reports, &impl->executors, impl->store.get(),
           impl->log.get(), impl->ingester.get(), kViewsConsumer, impl->pipeline_engine.get(),
           clock, config.scheduler.executor_timeout}] {
        return observability::CollectState(sources);
      });
  rest_options.plain_routes = observability::ObservabilityRoutes(
      {metrics, config.observability.metrics_require_auth, impl->authenticator.get()},
      {impl->log.get(), impl->ingester.get(), &impl->reports, &impl->serving, clock,
       config.observability.max_view_lag});
  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(64 << 20);
  channel_args.SetMaxSendMessageSize(static_cast<int>(config.max_request_bytes));
  ASSIGN_OR_RETURN(
      impl->rest_server,
      rest::RestServer::Start(rest_options, impl->grpc_server->InProcessChannel(channel_args)));
  impl->http_address = absl::StrCat(http_host, ":", impl->rest_server->port());

  // The embedded executor's leases and reports skip gRPC: they are calls into the executor
  // API (its device agent and log service still use gRPC).
  auto embedded_executor_api = [&] {
    return api::NewInProcessExecutorApi(impl->executor_service.get(),
                                        auth::Principal{.name = kEmbeddedExecutorUser});
  };
  if (embedded_executor && config.executor.embedded_simulated) {
    executor::SimulatedExecutorOptions e = SimulatedExecutorOptionsFrom(config.executor);
    e.executor.authorization = absl::StrCat("Bearer ", embedded_token);
    ASSIGN_OR_RETURN(impl->local_executor,
                     executor::StartSimulatedExecutor(
                         std::move(e), impl->grpc_server->InProcessChannel(channel_args), clock,
                         embedded_executor_api()));
  } else if (embedded_executor) {
    executor::LocalExecutorOptions e = LocalExecutorOptionsFrom(config.executor, impl->data_dir);
    e.executor.authorization = absl::StrCat("Bearer ", embedded_token);
    e.executor.discovery_dir = DiscoveryDirFrom(config.executor, data_dir_abs + "/discovery");
    if (config.executor.discovery_dir.empty() &&
        !devices::CheckSocketPath("executor.discovery.dir",
                                  devices::AgentRegistrationSocket(e.executor.discovery_dir))
             .ok()) {
      // Only the default is given up on: a directory the operator chose must work.
      LOG_WARN(
          "device discovery is off: the default discovery directory is too long for a Unix "
          "socket; set executor.discovery.dir to a shorter one",
          "dir", e.executor.discovery_dir);
      e.executor.discovery_dir.clear();
    }
    ASSIGN_OR_RETURN(impl->local_executor,
                     executor::StartLocalExecutor(std::move(e),
                                                  impl->grpc_server->InProcessChannel(channel_args),
                                                  clock, embedded_executor_api()));
  }
  impl->observed_local_executor.store(impl->local_executor.get(), std::memory_order_release);
  // Instance nodes of executors that do not come back after this start are dropped once the
  // executor timeout has passed.
  impl->executor_service->StartNodeSweep();
  impl->broker_backend =
      std::make_unique<PlatformBrokerBackend>(&impl->api, impl->submit_service.get());
  impl->device_controller = std::make_unique<devices::DeviceController>(
      clock, impl->broker_backend.get(), config.devices.controller);
  impl->observed_device_controller.store(impl->device_controller.get(), std::memory_order_release);
  impl->device_controller->Start();
  impl->serving.store(true);
  LOG_INFO("platform started", "grpc", impl->grpc_address, "http", impl->http_address, "data",
           impl->data_dir, "anonymous", impl->anonymous ? "on" : "off");
  return std::unique_ptr<Platform>(new Platform(std::move(impl)));
}

Platform::Platform(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Platform::~Platform() { Shutdown(); }

const std::string& Platform::grpc_address() const { return impl_->grpc_address; }
const std::string& Platform::http_address() const { return impl_->http_address; }
const std::string& Platform::data_dir() const { return impl_->data_dir; }
bool Platform::anonymous_enabled() const { return impl_->anonymous; }
const std::string& Platform::anonymous_warning() const { return impl_->anonymous_warning; }
eventlog::EventLog* Platform::log() { return impl_->log.get(); }
store::Store* Platform::store() { return impl_->store.get(); }
api::ExecutorService* Platform::executor_service() { return impl_->executor_service.get(); }
api::SubmitService* Platform::submit_service() { return impl_->submit_service.get(); }

pipelines::engine::PipelineEngine* Platform::pipeline_engine() {
  return impl_->pipeline_engine.get();
}
api::RunService* Platform::run_service() { return impl_->run_service.get(); }
devices::DeviceController* Platform::device_controller() { return impl_->device_controller.get(); }
executor::Executor* Platform::local_executor() { return impl_->local_executor.get(); }

absl::Status Platform::ReloadSecretKeys() { return impl_->sealer->Reload(); }

const secrets::Sealer& Platform::sealer() const { return *impl_->sealer; }

absl::Status Platform::ReloadTls() {
  if (impl_->tls == nullptr) return absl::FailedPreconditionError("TLS is off (no tls.certFile)");
  return impl_->tls->Reload();
}

absl::Status Platform::WaitForViews(int64_t offset, absl::Time deadline) {
  return impl_->ingester->WaitForOffset(offset, deadline);
}

void Platform::Shutdown() {
  if (impl_ == nullptr || impl_->stopped) return;
  impl_->stopped = true;
  impl_->serving.store(false);
  // No new pipeline steps, then runs (their last events still reach the log), then the
  // executor API and scheduler.
  impl_->recurring_runs->Stop();
  impl_->observed_device_controller.store(nullptr, std::memory_order_release);
  impl_->device_controller->Stop();
  impl_->pipeline_engine->Stop();
  impl_->observed_engine.store(nullptr, std::memory_order_release);
  impl_->observed_local_executor.store(nullptr, std::memory_order_release);
  if (impl_->local_executor) impl_->local_executor->Stop(absl::Seconds(5));
  impl_->observed_executor_service.store(nullptr, std::memory_order_release);
  impl_->executor_service->Shutdown();
  impl_->observed_scheduler.store(nullptr, std::memory_order_release);
  impl_->scheduler->Stop();
  impl_->event_service->StopWatches();
  if (impl_->rest_server) impl_->rest_server->Shutdown();
  impl_->grpc_server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  impl_->grpc_server->Wait();
  impl_->ingester->Stop();
  impl_->log->Close();
  LOG_INFO("platform stopped");
}

}  // namespace regatta::server
