#include "src/server/config.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"

namespace regatta::server {

const char kDefaultConfigYaml[] = R"yaml(
# Where `regatta up` keeps its log and views.
dataDir: ./regatta-data
api:
  grpcListen: 127.0.0.1:50051
  httpListen: 127.0.0.1:8080
  # Largest gRPC message or HTTP body accepted.
  maxRequestBytes: 16777216
  restThreads: 2
  # How long a queue change waits for the views to show it.
  viewWaitTimeout: 10s
auth:
  # auto: anonymous access only for `regatta up` with every listener on loopback.
  anonymous: auto
  # Groups of the anonymous user. Unset: [admins] in auto mode, none with anonymous: true.
  anonymousGroups: ~
  # anonymous: true with a listener off loopback is refused at startup unless this is true.
  allowAnonymousOnNetwork: false
  usersFile: ""
  # argon2id checks of passwords that are not remembered from an earlier success.
  passwordChecks:
    # At once (64 MiB each with interactive limits); 0: half the cores, at least 1.
    maxConcurrent: 0
    # A check that finds no free slot within this is refused (UNAVAILABLE).
    maxWait: 1s
    # A check refused by the failure limits below is answered after this long (at most 256 at
    # once), so that clients retrying in a loop do not keep the server busy.
    refusalDelay: 1s
    # Failed checks allowed per client address and per user name: burst, then one per refill.
    failuresPerSource: {burst: 20, refill: 3s}
    failuresPerUser: {burst: 10, refill: 6s}
    # Addresses and user names remembered for those limits.
    trackedKeys: 10000
  permissionGroupMapping:
    submit_any_jobs: [admins]
    cancel_any_jobs: [admins]
    reprioritize_any_jobs: [admins]
    preempt_any_jobs: [admins]
    watch_all_events: [admins]
    create_queue: [admins]
    delete_queue: [admins]
    cordon_queue: [admins]
    execute_jobs: [admins]
  permissionUserMapping: {}
  # Bearer JWTs from an OpenID Connect issuer (docs/auth.md); off while issuer is "".
  oidc:
    issuer: ""
    # The "aud" a token must carry (the client id registered at the issuer).
    audience: ""
    # The issuer's JSON Web Key Set: a file (re-read when it changes) or a URL (jwks_uri).
    jwksFile: ""
    jwksUrl: ""
    # PEM CA bundle for an https jwksUrl; "": the system's.
    jwksCaFile: ""
    usernameClaim: sub
    # A top-level claim, or a dotted path such as realm_access.roles.
    groupsClaim: groups
    usernamePrefix: ""
    groupsPrefix: ""
    algorithms: [RS256, ES256]
    clockSkew: 60s
    # jwksUrl: fetched again this often; at most one fetch per minRefreshInterval (also for
    # tokens naming an unknown key id).
    refreshInterval: 5m
    minRefreshInterval: 30s
    fetchTimeout: 10s
    # Verified tokens remembered until they expire; 0: verify every call.
    tokenCacheSize: 10000
submit:
  maxJobsPerRequest: 10000
  maxJobSpecBytes: 262144
  # Used when a job requests no resources at all.
  defaultResources: {cpu: 100m, memory: 64Mi}
scheduling:
  defaultPriorityClass: default
  # Each: {priority (higher may preempt lower), preemptible, maxFractionPerQueue: {cpu: 0.5},
  # pools: {POOL: {maxFractionPerQueue: {...}}}}. Classes of your own are added to these.
  priorityClasses:
    default: {priority: 1000, preemptible: false, maxFractionPerQueue: {}, pools: {}}
    preemptible: {priority: 900, preemptible: true, maxFractionPerQueue: {}, pools: {}}
    # Armada's default classes, so that its job files (priorityClassName) submit unchanged;
    # the same as default and preemptible.
    armada-default: {priority: 1000, preemptible: false, maxFractionPerQueue: {}, pools: {}}
    armada-preemptible: {priority: 900, preemptible: true, maxFractionPerQueue: {}, pools: {}}
  # Fair-share preemption: preemptible jobs of queues above this fraction of their adjusted
  # fair share are preempted when queues below theirs need the room.
  enableFairSharePreemption: true
  protectedFractionOfFairShare: 1.0
  # Best fit orders nodes by these (most significant first), and groups nodes into node types
  # by their taints and these labels' values.
  indexedResources: [cpu, memory]
  indexedNodeLabels: []
  # Fraction of a pool newly scheduled per cycle, e.g. {cpu: 0.1}: all queues / each queue.
  maxFractionToSchedule: {}
  maxFractionToSchedulePerQueue: {}
  # New jobs per second (0: no limit) and burst: overall, and for each queue.
  rateLimit: {rate: 0, burst: 1000}
  queueRateLimit: {rate: 0, burst: 1000}
  # How far into a queue the scheduler looks for the rest of a gang.
  gangLookahead: 1000
  # Longest sleep between scheduling cycles (a cycle also starts when the views change or an
  # executor reports).
  cyclePeriod: 1s
  # How long a cycle the views ask for (an outcome to decide, a requeue) waits for more to do;
  # a submit to this server starts one at once. 0s: at once.
  viewsWakeDelay: 2ms
  # How long the views' ingest waits for more when records come one at a time, to apply them
  # in one transaction; a record that needs a cycle (an outcome, a new job) ends the wait, and
  # none starts while a reader waits for the views. 0s: every record as it comes.
  viewsLinger: 2ms
  # An executor silent for longer is lost: its runs are expired and retried.
  executorTimeout: 30s
  # Retries of runs that fail for a retryable reason (lease expired or returned, executor lost),
  # unless a job sets its own retryPolicy.maxRetries.
  maxRetries: 3
  maxLeasesPerCycle: 10000
  # Multipliers of each resource's share in the dominant-resource cost.
  resourceMultipliers: {cpu: 1, memory: 1}
  # A lease request with nothing to hand out is answered after at most this long.
  leaseWait: 500ms
# The local process executor (`regatta executor --local`, and inside `regatta up`).
executor:
  # Run it inside `regatta up`.
  embedded: true
  # Default: the host name.
  id: ""
  pool: default
  # Runs and their logs; default: <dataDir>/executor.
  dataDir: ""
  # Nodes this executor offers; empty: the whole machine as one node named after the host.
  # Each: {name, labels: {}, taints: [{key, value, effect}], resources: {cpu: "4", memory: 8Gi}}
  nodes: []
  # Most runs at once (0: limited by resources only).
  maxRuns: 0
  # Between SIGTERM and SIGKILL when a run is cancelled or preempted (jobs may set their own).
  terminationGrace: 30s
  heartbeat: 2s
  # Where the executor serves run logs to the server (port 0: any free port).
  logsListen: 127.0.0.1:0
  # Enforce memory limits with cgroup v2 where the machine allows it.
  cgroups: true
  # Runs whose task has an image run in a container (docs/operations.md, "Containers").
  containers:
    # auto: podman where it works here, else none; podman: podman or the executor does not
    # start; none: a job with an image fails (terminal) and never runs on the host.
    runtime: auto
    # host (the container shares the node's network, and its ports are the node's) or none.
    network: host
    # When podman pulls an image: missing, never or always.
    pull: missing
  # fsync each run's state files. Not needed to survive an executor crash (the kernel keeps
  # the files); only a machine crash could lose them, and that ends the runs anyway.
  syncRunState: false
  # The device agent of the executor's node: discovery handlers (`regatta dh NAME --dir DIR`)
  # register in `dir`. Empty: <dataDir>/discovery inside `regatta up`, no agent for
  # `regatta executor` (give --discovery-dir); "off": no agent. Local executors only (the
  # first node, if several).
  discovery:
    dir: ""
  # The simulated executor (`regatta executor --simulated`): fake nodes whose runs run nothing
  # and end after the job's regatta.io/simulated-duration annotation, else a duration drawn
  # from `duration`. Shares id, pool, maxRuns and heartbeat with the above.
  simulated:
    # Node groups, each {count, namePrefix: sim-, cpu, memory, resources: {other: "1"},
    # labels: {}, taints: [{key, value, effect}]}; nodes are named <namePrefix>0000, ...
    nodes: [{count: 10, cpu: "32", memory: 128Gi}]
    # distribution: constant (value), uniform (min, max) or exponential (mean).
    duration: {distribution: constant, value: 10s, min: 1s, max: 60s, mean: 30s}
    # Seed of the random durations (the same seed draws the same durations).
    seed: 1
# Pipeline runs (Kubeflow Pipelines IR): each step is a job.
pipelines:
  # The queue steps go to when a run names none (made on first use by an admin).
  defaultQueue: pipelines
  # Where artifacts are stored: a directory or file:// URI; default: <dataDir>/artifacts.
  root: ""
  # How long a cached step result stays usable (0s: until pruned).
  cacheTtl: 0s
  # Resources of a step whose component names none.
  stepCpu: 100m
  stepMemory: 128Mi
  # How long the state of a just-submitted step may wait to ride on the run's next append (in
  # a chain, the next step's submit) before it is published on its own; 0s: at once.
  progressHold: 20ms
  # Where steps run: host (a process on the node, as kfp.local's SubprocessRunner) or container
  # (in the component's image, its directories mounted; needs executor.containers).
  stepRunner: host
  # Where artifacts of gs://, minio:// and s3:// uris are kept (<bucketsDir>/gcs/BUCKET/...);
  # inside a step's container they are at kfp's /gcs/, /minio/ and /s3/. "/": kfp's paths on the
  # host too (buckets FUSE-mounted there). Default: <dataDir>/buckets.
  bucketsDir: ""
# Devices: the controller runs each Instance's brokers as jobs (the Configuration's brokerSpec).
devices:
  brokers:
    # A long-running broker that exits is restarted after restartDelay, doubling for every
    # attempt in a row that ran less than resetAfter, up to maxRestartDelay.
    restartDelay: 10s
    maxRestartDelay: 5m
    resetAfter: 10m
    # Ports brokers get for service ports without a targetPort, unique among running brokers.
    firstPort: 30000
    lastPort: 32767
# TLS on the gRPC and HTTP listeners (see docs/operations.md); no certFile: plain text.
tls:
  certFile: ""
  keyFile: ""
  # The CA client certificates (executors') must chain to; it also verifies the executors'
  # log services when the server reads run logs.
  clientCaFile: ""
  # Client certificates: none, request (verified when sent), require; auto: require when
  # clientCaFile is set, else none.
  clientAuth: auto
# Secrets at rest (docs/operations.md): jobs' secretEnv values and Secrets' data are sealed
# with the first key of this file before they reach the log; every key in it opens. "": the
# data directory's secrets.key, created with a new key on first start.
secrets:
  keyFile: ""
eventLog:
  maxRecordBytes: 67108864
logging:
  level: info
  format: text
  # One structured "audit" line per state-changing API call (who, what, on which queue, job
  # or run, and the result).
  audit: true
metrics:
  # GET /metrics asks for credentials (any user or token) when true.
  requireAuth: false
health:
  # GET /readyz fails while the oldest log record the views have not applied is older.
  maxViewLag: 30s
)yaml";

namespace {

template <typename T>
absl::StatusOr<T> Get(const YAML::Node& root, absl::string_view path) {
  YAML::Node node = root;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    node.reset(node[std::string(part)]);
  }
  try {
    return node.as<T>();
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("configuration key ", path, ": ", e.what()));
  }
}

absl::StatusOr<absl::Duration> GetDuration(const YAML::Node& root, absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, Get<std::string>(root, path));
  absl::Duration d;
  // "inf" parses too; no setting means forever, and timestamps past it are out of range.
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration key ", path, ": \"", text, "\" is not a duration like 10s"));
  }
  return d;
}

absl::Status LoadOidc(const YAML::Node& root, OidcConfig& o) {
  const std::string k = "auth.oidc.";
  for (auto [name, field] : {std::pair{"issuer", &o.issuer},
                             {"audience", &o.audience},
                             {"jwksFile", &o.jwks_file},
                             {"jwksUrl", &o.jwks_url},
                             {"jwksCaFile", &o.jwks_ca_file},
                             {"usernameClaim", &o.username_claim},
                             {"groupsClaim", &o.groups_claim},
                             {"usernamePrefix", &o.username_prefix},
                             {"groupsPrefix", &o.groups_prefix}}) {
    ASSIGN_OR_RETURN(*field, Get<std::string>(root, k + name));
  }
  ASSIGN_OR_RETURN(o.algorithms, Get<std::vector<std::string>>(root, k + "algorithms"));
  for (auto [name, field] : {std::pair{"clockSkew", &o.clock_skew},
                             {"refreshInterval", &o.refresh_interval},
                             {"minRefreshInterval", &o.min_refresh_interval},
                             {"fetchTimeout", &o.fetch_timeout}}) {
    ASSIGN_OR_RETURN(*field, GetDuration(root, k + name));
  }
  ASSIGN_OR_RETURN(o.token_cache_size, Get<int64_t>(root, k + "tokenCacheSize"));
  if (o.issuer.empty()) {
    if (!o.jwks_file.empty() || !o.jwks_url.empty()) {
      return absl::InvalidArgumentError(k + "issuer: must be set when a JWKS is configured");
    }
    return absl::OkStatus();
  }
  if (o.audience.empty()) return absl::InvalidArgumentError(k + "audience: must be set");
  if (o.jwks_file.empty() == o.jwks_url.empty()) {
    return absl::InvalidArgumentError(k + "jwksFile, jwksUrl: set exactly one");
  }
  if (!o.jwks_url.empty() && !absl::StartsWith(o.jwks_url, "https://") &&
      !absl::StartsWith(o.jwks_url, "http://")) {
    return absl::InvalidArgumentError(k + "jwksUrl: must be an http:// or https:// URL");
  }
  if (o.username_claim.empty() || o.groups_claim.empty()) {
    return absl::InvalidArgumentError(k + "usernameClaim, groupsClaim: must not be empty");
  }
  if (o.algorithms.empty()) return absl::InvalidArgumentError(k + "algorithms: must not be empty");
  for (const std::string& alg : o.algorithms) {
    if (alg != "RS256" && alg != "ES256") {
      return absl::InvalidArgumentError(
          absl::StrCat(k, "algorithms: \"", alg, "\" is not supported (RS256, ES256)"));
    }
  }
  if (o.min_refresh_interval <= absl::ZeroDuration() ||
      o.refresh_interval < o.min_refresh_interval) {
    return absl::InvalidArgumentError(
        k + "refreshInterval: must be at least minRefreshInterval, which must be positive");
  }
  if (o.fetch_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(k + "fetchTimeout: must be positive");
  }
  if (o.token_cache_size < 0) return absl::InvalidArgumentError(k + "tokenCacheSize: must be >= 0");
  return absl::OkStatus();
}

absl::Status CheckListen(absl::string_view listen, absl::string_view key) {
  size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat(key, ": \"", listen, "\" is not host:port (port 0 picks a free port)"));
  }
  return absl::OkStatus();
}

absl::Status LoadPipelines(const YAML::Node& root, PipelinesConfig& p) {
  ASSIGN_OR_RETURN(p.default_queue, Get<std::string>(root, "pipelines.defaultQueue"));
  ASSIGN_OR_RETURN(p.root, Get<std::string>(root, "pipelines.root"));
  ASSIGN_OR_RETURN(p.cache_ttl, GetDuration(root, "pipelines.cacheTtl"));
  ASSIGN_OR_RETURN(p.step_cpu, Get<std::string>(root, "pipelines.stepCpu"));
  ASSIGN_OR_RETURN(p.step_memory, Get<std::string>(root, "pipelines.stepMemory"));
  ASSIGN_OR_RETURN(p.progress_hold, GetDuration(root, "pipelines.progressHold"));
  ASSIGN_OR_RETURN(p.step_runner, Get<std::string>(root, "pipelines.stepRunner"));
  ASSIGN_OR_RETURN(p.buckets_dir, Get<std::string>(root, "pipelines.bucketsDir"));
  if (p.step_runner != "host" && p.step_runner != "container") {
    return absl::InvalidArgumentError(
        absl::StrCat("pipelines.stepRunner: \"", p.step_runner, "\" (expected host or container)"));
  }
  if (!p.buckets_dir.empty() && p.buckets_dir.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("pipelines.bucketsDir: \"", p.buckets_dir, "\" is not an absolute path"));
  }
  if (p.default_queue.empty()) {
    return absl::InvalidArgumentError("pipelines.defaultQueue: required");
  }
  // Expiry times must stay valid timestamps.
  if (p.cache_ttl < absl::ZeroDuration() || p.cache_ttl > absl::Hours(24 * 366 * 100)) {
    return absl::InvalidArgumentError("pipelines.cacheTtl: must be between 0s and 100 years");
  }
  if (p.progress_hold < absl::ZeroDuration() || p.progress_hold > absl::Seconds(60)) {
    return absl::InvalidArgumentError("pipelines.progressHold: must be between 0s and 60s");
  }
  return absl::OkStatus();
}

absl::Status LoadDevices(const YAML::Node& root, DevicesConfig& d) {
  devices::BrokerPlanOptions& b = d.controller.plan;
  ASSIGN_OR_RETURN(b.restart_delay, GetDuration(root, "devices.brokers.restartDelay"));
  ASSIGN_OR_RETURN(b.max_restart_delay, GetDuration(root, "devices.brokers.maxRestartDelay"));
  ASSIGN_OR_RETURN(b.reset_after, GetDuration(root, "devices.brokers.resetAfter"));
  ASSIGN_OR_RETURN(b.first_port, Get<int>(root, "devices.brokers.firstPort"));
  ASSIGN_OR_RETURN(b.last_port, Get<int>(root, "devices.brokers.lastPort"));
  if (b.restart_delay <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("devices.brokers.restartDelay: must be positive");
  }
  if (b.max_restart_delay < b.restart_delay) {
    return absl::InvalidArgumentError(
        "devices.brokers.maxRestartDelay: must be at least restartDelay");
  }
  if (b.first_port < 1 || b.first_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices.brokers.firstPort: must be within 1..65535, got ", b.first_port));
  }
  if (b.last_port < b.first_port || b.last_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "devices.brokers.lastPort: must be within firstPort..65535, got ", b.last_port));
  }
  return absl::OkStatus();
}

absl::Status LoadScheduling(const YAML::Node& root, ServerConfig& c) {
  scheduler::SchedulerOptions& s = c.scheduler;
  ASSIGN_OR_RETURN(s.cycle_period, GetDuration(root, "scheduling.cyclePeriod"));
  ASSIGN_OR_RETURN(s.executor_timeout, GetDuration(root, "scheduling.executorTimeout"));
  ASSIGN_OR_RETURN(s.views_wake_delay, GetDuration(root, "scheduling.viewsWakeDelay"));
  ASSIGN_OR_RETURN(c.views_linger, GetDuration(root, "scheduling.viewsLinger"));
  ASSIGN_OR_RETURN(s.default_max_retries, Get<int>(root, "scheduling.maxRetries"));
  ASSIGN_OR_RETURN(s.max_leases_per_cycle, Get<int>(root, "scheduling.maxLeasesPerCycle"));
  ASSIGN_OR_RETURN(s.policy, scheduler::ParseSchedulingPolicy(root["scheduling"], "scheduling"));
  ASSIGN_OR_RETURN(c.lease_wait, GetDuration(root, "scheduling.leaseWait"));
  if (s.cycle_period <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("scheduling.cyclePeriod: must be positive");
  }
  if (s.views_wake_delay < absl::ZeroDuration() || s.views_wake_delay > absl::Seconds(1)) {
    return absl::InvalidArgumentError("scheduling.viewsWakeDelay: must be between 0s and 1s");
  }
  if (c.views_linger < absl::ZeroDuration() || c.views_linger > absl::Seconds(1)) {
    return absl::InvalidArgumentError("scheduling.viewsLinger: must be between 0s and 1s");
  }
  if (s.executor_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("scheduling.executorTimeout: must be positive");
  }
  if (s.default_max_retries < 0) {
    return absl::InvalidArgumentError("scheduling.maxRetries: must be >= 0");
  }
  if (s.max_leases_per_cycle < 1) {
    return absl::InvalidArgumentError("scheduling.maxLeasesPerCycle: must be >= 1");
  }
  return absl::OkStatus();
}

absl::StatusOr<regatta::v1::Taint> ParseTaint(const YAML::Node& node, const std::string& base) {
  regatta::v1::Taint taint;
  if (!node.IsMap()) return absl::InvalidArgumentError(base + ": must be a map");
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    if (key == "key") {
      taint.set_key(kv.second.as<std::string>());
    } else if (key == "value") {
      taint.set_value(kv.second.as<std::string>());
    } else if (key == "effect") {
      taint.set_effect(kv.second.as<std::string>());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(base, ".", key, ": unknown key"));
    }
  }
  if (taint.key().empty()) return absl::InvalidArgumentError(base + ".key: must not be empty");
  if (taint.effect() != "NoSchedule" && taint.effect() != "PreferNoSchedule" &&
      taint.effect() != "NoExecute") {
    return absl::InvalidArgumentError(base +
                                      ".effect: must be NoSchedule, PreferNoSchedule or NoExecute");
  }
  return taint;
}

// Parses `key` if it is one a node and a simulated node group share (labels, resources,
// taints); false for any other key.
absl::StatusOr<bool> ParseNodeKey(const std::string& key, const YAML::Node& value,
                                  const std::string& base, executor::NodeConfig& node) {
  if (key == "labels") {
    node.labels = value.as<std::map<std::string, std::string>>();
  } else if (key == "resources") {
    for (const auto& [name, quantity] : value.as<std::map<std::string, std::string>>()) {
      node.resources[name] = quantity;
    }
  } else if (key == "taints") {
    for (size_t t = 0; t < value.size(); ++t) {
      ASSIGN_OR_RETURN(regatta::v1::Taint taint,
                       ParseTaint(value[t], absl::StrCat(base, ".taints[", t, "]")));
      node.taints.push_back(std::move(taint));
    }
  } else {
    return false;
  }
  return true;
}

absl::StatusOr<executor::NodeConfig> ParseNode(const YAML::Node& n, const std::string& base) {
  if (!n.IsMap()) return absl::InvalidArgumentError(base + ": must be a map");
  executor::NodeConfig node;
  try {
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (key == "name") {
        node.id = kv.second.as<std::string>();
        continue;
      }
      ASSIGN_OR_RETURN(bool known, ParseNodeKey(key, kv.second, base, node));
      if (!known) return absl::InvalidArgumentError(absl::StrCat(base, ".", key, ": unknown key"));
    }
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(absl::StrCat(base, ": ", ex.what()));
  }
  if (node.id.empty()) return absl::InvalidArgumentError(base + ".name: must not be empty");
  return node;
}

absl::StatusOr<executor::SimulatedNodeGroup> ParseSimulatedNodeGroup(const YAML::Node& n,
                                                                     const std::string& base) {
  if (!n.IsMap()) return absl::InvalidArgumentError(base + ": must be a map");
  executor::SimulatedNodeGroup group;
  executor::NodeConfig node;
  node.resources = {{"cpu", "32"}, {"memory", "128Gi"}};
  try {
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (key == "count") {
        group.count = kv.second.as<int>();
        if (group.count < 0) return absl::InvalidArgumentError(base + ".count: must be >= 0");
      } else if (key == "namePrefix") {
        group.name_prefix = kv.second.as<std::string>();
      } else if (key == "cpu" || key == "memory") {
        node.resources[key] = kv.second.as<std::string>();
      } else {
        ASSIGN_OR_RETURN(bool known, ParseNodeKey(key, kv.second, base, node));
        if (!known) {
          return absl::InvalidArgumentError(absl::StrCat(base, ".", key, ": unknown key"));
        }
      }
    }
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(absl::StrCat(base, ": ", ex.what()));
  }
  group.labels = std::move(node.labels);
  group.taints = std::move(node.taints);
  group.resources = std::move(node.resources);
  return group;
}

absl::Status LoadSimulated(const YAML::Node& root, SimulatedConfig& sim) {
  const YAML::Node nodes = root["executor"]["simulated"]["nodes"];
  if (!nodes.IsSequence()) {
    return absl::InvalidArgumentError("executor.simulated.nodes: must be a list");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSIGN_OR_RETURN(
        executor::SimulatedNodeGroup group,
        ParseSimulatedNodeGroup(nodes[i], absl::StrCat("executor.simulated.nodes[", i, "]")));
    sim.node_groups.push_back(std::move(group));
  }
  using Kind = executor::DurationDistribution::Kind;
  executor::DurationDistribution& d = sim.duration;
  ASSIGN_OR_RETURN(std::string kind,
                   Get<std::string>(root, "executor.simulated.duration.distribution"));
  ASSIGN_OR_RETURN(d.value, GetDuration(root, "executor.simulated.duration.value"));
  ASSIGN_OR_RETURN(d.min, GetDuration(root, "executor.simulated.duration.min"));
  ASSIGN_OR_RETURN(d.max, GetDuration(root, "executor.simulated.duration.max"));
  ASSIGN_OR_RETURN(d.mean, GetDuration(root, "executor.simulated.duration.mean"));
  if (kind == "constant") {
    d.kind = Kind::kConstant;
  } else if (kind == "uniform") {
    d.kind = Kind::kUniform;
    if (d.max < d.min) {
      return absl::InvalidArgumentError("executor.simulated.duration.max: must be >= min");
    }
  } else if (kind == "exponential") {
    d.kind = Kind::kExponential;
  } else {
    return absl::InvalidArgumentError(
        "executor.simulated.duration.distribution: must be constant, uniform or exponential");
  }
  ASSIGN_OR_RETURN(sim.seed, Get<uint64_t>(root, "executor.simulated.seed"));
  return absl::OkStatus();
}

absl::Status LoadExecutor(const YAML::Node& root, ServerConfig& c) {
  ExecutorConfig& e = c.executor;
  ASSIGN_OR_RETURN(e.embedded, Get<bool>(root, "executor.embedded"));
  ASSIGN_OR_RETURN(e.id, Get<std::string>(root, "executor.id"));
  ASSIGN_OR_RETURN(e.pool, Get<std::string>(root, "executor.pool"));
  if (e.pool.empty()) return absl::InvalidArgumentError("executor.pool: must not be empty");
  ASSIGN_OR_RETURN(e.data_dir, Get<std::string>(root, "executor.dataDir"));
  ASSIGN_OR_RETURN(e.max_runs, Get<int>(root, "executor.maxRuns"));
  if (e.max_runs < 0) return absl::InvalidArgumentError("executor.maxRuns: must be >= 0");
  ASSIGN_OR_RETURN(e.termination_grace, GetDuration(root, "executor.terminationGrace"));
  ASSIGN_OR_RETURN(e.heartbeat, GetDuration(root, "executor.heartbeat"));
  if (e.heartbeat <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("executor.heartbeat: must be positive");
  }
  ASSIGN_OR_RETURN(e.logs_listen, Get<std::string>(root, "executor.logsListen"));
  if (!e.logs_listen.empty()) RETURN_IF_ERROR(CheckListen(e.logs_listen, "executor.logsListen"));
  ASSIGN_OR_RETURN(e.cgroups, Get<bool>(root, "executor.cgroups"));
  ASSIGN_OR_RETURN(e.sync_run_state, Get<bool>(root, "executor.syncRunState"));
  ASSIGN_OR_RETURN(e.discovery_dir, Get<std::string>(root, "executor.discovery.dir"));
  ASSIGN_OR_RETURN(e.containers.runtime, Get<std::string>(root, "executor.containers.runtime"));
  if (e.containers.runtime != "auto" && e.containers.runtime != "podman" &&
      e.containers.runtime != "none") {
    return absl::InvalidArgumentError(absl::StrCat("executor.containers.runtime: \"",
                                                   e.containers.runtime,
                                                   "\" (expected auto, podman or none)"));
  }
  ASSIGN_OR_RETURN(e.containers.network, Get<std::string>(root, "executor.containers.network"));
  if (e.containers.network != "host" && e.containers.network != "none") {
    return absl::InvalidArgumentError(absl::StrCat(
        "executor.containers.network: \"", e.containers.network, "\" (expected host or none)"));
  }
  ASSIGN_OR_RETURN(e.containers.pull, Get<std::string>(root, "executor.containers.pull"));
  if (e.containers.pull != "missing" && e.containers.pull != "never" &&
      e.containers.pull != "always") {
    return absl::InvalidArgumentError(absl::StrCat("executor.containers.pull: \"",
                                                   e.containers.pull,
                                                   "\" (expected missing, never or always)"));
  }
  const YAML::Node nodes = root["executor"]["nodes"];
  if (nodes && !nodes.IsNull() && !nodes.IsSequence()) {
    return absl::InvalidArgumentError("executor.nodes: must be a list");
  }
  for (size_t i = 0; nodes && nodes.IsSequence() && i < nodes.size(); ++i) {
    ASSIGN_OR_RETURN(executor::NodeConfig node,
                     ParseNode(nodes[i], absl::StrCat("executor.nodes[", i, "]")));
    e.nodes.push_back(std::move(node));
  }
  return LoadSimulated(root, e.simulated);
}

absl::Status LoadTls(const YAML::Node& root, TlsConfig& t) {
  ASSIGN_OR_RETURN(t.cert_file, Get<std::string>(root, "tls.certFile"));
  ASSIGN_OR_RETURN(t.key_file, Get<std::string>(root, "tls.keyFile"));
  ASSIGN_OR_RETURN(t.client_ca_file, Get<std::string>(root, "tls.clientCaFile"));
  ASSIGN_OR_RETURN(std::string auth, Get<std::string>(root, "tls.clientAuth"));
  if (t.cert_file.empty() != t.key_file.empty()) {
    return absl::InvalidArgumentError(t.cert_file.empty()
                                          ? "tls.certFile: required with tls.keyFile"
                                          : "tls.keyFile: required with tls.certFile");
  }
  if (t.cert_file.empty() && !t.client_ca_file.empty()) {
    return absl::InvalidArgumentError("tls.clientCaFile: needs tls.certFile and tls.keyFile");
  }
  if (auth == "auto") {
    t.client_auth = t.client_ca_file.empty() ? tls::ClientAuth::kNone : tls::ClientAuth::kRequire;
  } else {
    ASSIGN_OR_RETURN(t.client_auth, tls::ParseClientAuth(auth, "tls.clientAuth"));
  }
  if (t.client_auth != tls::ClientAuth::kNone && t.client_ca_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tls.clientCaFile: required with tls.clientAuth ", auth));
  }
  return absl::OkStatus();
}

absl::Status LoadPasswordChecks(const YAML::Node& root, auth::PasswordCheckLimits& l) {
  const std::string key = "auth.passwordChecks";
  ASSIGN_OR_RETURN(l.max_concurrent, Get<int>(root, key + ".maxConcurrent"));
  ASSIGN_OR_RETURN(l.max_wait, GetDuration(root, key + ".maxWait"));
  ASSIGN_OR_RETURN(l.refusal_delay, GetDuration(root, key + ".refusalDelay"));
  for (auto [name, limit] : {std::pair{".failuresPerSource", &l.per_source},
                             std::pair{".failuresPerUser", &l.per_user}}) {
    ASSIGN_OR_RETURN(limit->burst, Get<int>(root, key + name + ".burst"));
    ASSIGN_OR_RETURN(limit->refill, GetDuration(root, key + name + ".refill"));
  }
  ASSIGN_OR_RETURN(int64_t tracked, Get<int64_t>(root, key + ".trackedKeys"));
  l.tracked_keys = tracked < 0 ? 0 : static_cast<size_t>(tracked);
  return auth::ValidatePasswordCheckLimits(l, key);
}

}  // namespace

bool IsLoopbackListen(absl::string_view listen) {
  size_t colon = listen.rfind(':');
  absl::string_view host = listen.substr(0, colon);
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]" || host == "::1" ||
         absl::StartsWith(host, "127.");
}

absl::StatusOr<ServerConfig> LoadServerConfig(const UpFlags& flags,
                                              const std::map<std::string, std::string>& env) {
  std::string file = flags.config_file;
  if (file.empty()) {
    auto it = env.find("REGATTA_CONFIG");
    if (it != env.end()) file = it->second;
  }
  // Maps whose keys are the operator's (priority classes, resource names, users); what they hold
  // is checked when they are parsed below.
  static const auto* kOpenMaps = new std::vector<std::string>{
      "scheduling.priorityClasses",       "scheduling.resourceMultipliers",
      "scheduling.maxFractionToSchedule", "scheduling.maxFractionToSchedulePerQueue",
      "submit.defaultResources",          "auth.permissionUserMapping"};
  ASSIGN_OR_RETURN(YAML::Node root,
                   LoadConfigTree(kDefaultConfigYaml, file, env, flags.overrides, *kOpenMaps));
  ServerConfig c;
  ASSIGN_OR_RETURN(c.data_dir, Get<std::string>(root, "dataDir"));
  RETURN_IF_ERROR(LoadPipelines(root, c.pipelines));
  RETURN_IF_ERROR(LoadDevices(root, c.devices));
  ASSIGN_OR_RETURN(c.grpc_listen, Get<std::string>(root, "api.grpcListen"));
  ASSIGN_OR_RETURN(c.http_listen, Get<std::string>(root, "api.httpListen"));
  if (!flags.data_dir.empty()) c.data_dir = flags.data_dir;
  if (!flags.grpc_listen.empty()) c.grpc_listen = flags.grpc_listen;
  if (!flags.http_listen.empty()) c.http_listen = flags.http_listen;
  RETURN_IF_ERROR(CheckListen(c.grpc_listen, "api.grpcListen"));
  RETURN_IF_ERROR(CheckListen(c.http_listen, "api.httpListen"));
  if (c.data_dir.empty()) return absl::InvalidArgumentError("dataDir: must not be empty");
  ASSIGN_OR_RETURN(c.max_request_bytes, Get<int64_t>(root, "api.maxRequestBytes"));
  if (c.max_request_bytes < 1024 || c.max_request_bytes > (1LL << 31) - 1) {
    return absl::InvalidArgumentError("api.maxRequestBytes: must be between 1024 and 2^31-1");
  }
  ASSIGN_OR_RETURN(c.rest_threads, Get<int>(root, "api.restThreads"));
  if (c.rest_threads < 1) return absl::InvalidArgumentError("api.restThreads: must be >= 1");
  ASSIGN_OR_RETURN(c.view_wait_timeout, GetDuration(root, "api.viewWaitTimeout"));

  ASSIGN_OR_RETURN(c.anonymous_mode, Get<std::string>(root, "auth.anonymous"));
  if (c.anonymous_mode != "auto" && c.anonymous_mode != "true" && c.anonymous_mode != "false") {
    return absl::InvalidArgumentError("auth.anonymous: must be auto, true or false");
  }
  if (!root["auth"]["anonymousGroups"].IsNull()) {
    ASSIGN_OR_RETURN(c.anonymous_groups,
                     Get<std::vector<std::string>>(root, "auth.anonymousGroups"));
  }
  ASSIGN_OR_RETURN(c.allow_anonymous_on_network, Get<bool>(root, "auth.allowAnonymousOnNetwork"));
  ASSIGN_OR_RETURN(c.users_file, Get<std::string>(root, "auth.usersFile"));
  RETURN_IF_ERROR(LoadPasswordChecks(root, c.password_limits));
  using Mapping = std::map<std::string, std::vector<std::string>>;
  ASSIGN_OR_RETURN(c.authorization.permission_group_mapping,
                   Get<Mapping>(root, "auth.permissionGroupMapping"));
  ASSIGN_OR_RETURN(c.authorization.permission_user_mapping,
                   Get<Mapping>(root, "auth.permissionUserMapping"));
  RETURN_IF_ERROR(LoadOidc(root, c.oidc));

  api::SubmitPolicy& p = c.submit_policy;
  ASSIGN_OR_RETURN(p.max_jobs_per_request, Get<int>(root, "submit.maxJobsPerRequest"));
  ASSIGN_OR_RETURN(p.max_job_spec_bytes, Get<int64_t>(root, "submit.maxJobSpecBytes"));
  if (p.max_jobs_per_request < 1 || p.max_job_spec_bytes < 1) {
    return absl::InvalidArgumentError("submit: limits must be positive");
  }
  ASSIGN_OR_RETURN(p.default_resources,
                   (Get<std::map<std::string, std::string>>(root, "submit.defaultResources")));
  RETURN_IF_ERROR(LoadScheduling(root, c));
  const scheduler::SchedulingPolicy& policy = c.scheduler.policy;
  p.default_priority_class = policy.default_priority_class;
  p.priority_classes.clear();
  for (const auto& [name, pc] : policy.priority_classes) {
    p.priority_classes[name] = api::PriorityClass{pc.priority, pc.preemptible};
  }
  RETURN_IF_ERROR(LoadExecutor(root, c));
  if (flags.simulated_nodes > 0) {
    c.executor.embedded_simulated = true;
    executor::SimulatedNodeGroup group;
    group.count = flags.simulated_nodes;
    group.resources = {{"cpu", "32"}, {"memory", "128Gi"}};
    c.executor.simulated.node_groups = {group};
  }
  RETURN_IF_ERROR(LoadTls(root, c.tls));
  ASSIGN_OR_RETURN(c.secrets_key_file, Get<std::string>(root, "secrets.keyFile"));
  ASSIGN_OR_RETURN(c.max_log_record_bytes, Get<int64_t>(root, "eventLog.maxRecordBytes"));
  ASSIGN_OR_RETURN(c.log_level, Get<std::string>(root, "logging.level"));
  ASSIGN_OR_RETURN(c.log_format, Get<std::string>(root, "logging.format"));
  if (c.log_format != "text" && c.log_format != "json") {
    return absl::InvalidArgumentError("logging.format: must be text or json");
  }
  ASSIGN_OR_RETURN(c.observability.audit, Get<bool>(root, "logging.audit"));
  ASSIGN_OR_RETURN(c.observability.metrics_require_auth, Get<bool>(root, "metrics.requireAuth"));
  ASSIGN_OR_RETURN(c.observability.max_view_lag, GetDuration(root, "health.maxViewLag"));
  if (c.observability.max_view_lag <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("health.maxViewLag: must be positive");
  }
  return c;
}

}  // namespace regatta::server
