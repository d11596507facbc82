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
  anonymousGroups: [admins]
  usersFile: ""
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
submit:
  maxJobsPerRequest: 10000
  maxJobSpecBytes: 262144
  # Used when a job requests no resources at all.
  defaultResources: {cpu: 100m, memory: 64Mi}
scheduling:
  defaultPriorityClass: default
  priorityClasses:
    default: {priority: 1000, preemptible: false}
    preemptible: {priority: 900, preemptible: true}
eventLog:
  maxRecordBytes: 67108864
logging:
  level: info
  format: text
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
  if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("configuration key ", path, ": \"", text, "\" is not a duration like 10s"));
  }
  return d;
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
  ASSIGN_OR_RETURN(YAML::Node root, LoadConfigTree(kDefaultConfigYaml, file, env, flags.overrides));
  ServerConfig c;
  ASSIGN_OR_RETURN(c.data_dir, Get<std::string>(root, "dataDir"));
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
  ASSIGN_OR_RETURN(c.anonymous_groups, Get<std::vector<std::string>>(root, "auth.anonymousGroups"));
  ASSIGN_OR_RETURN(c.users_file, Get<std::string>(root, "auth.usersFile"));
  using Mapping = std::map<std::string, std::vector<std::string>>;
  ASSIGN_OR_RETURN(c.authorization.permission_group_mapping,
                   Get<Mapping>(root, "auth.permissionGroupMapping"));
  ASSIGN_OR_RETURN(c.authorization.permission_user_mapping,
                   Get<Mapping>(root, "auth.permissionUserMapping"));

  api::SubmitPolicy& p = c.submit_policy;
  ASSIGN_OR_RETURN(p.max_jobs_per_request, Get<int>(root, "submit.maxJobsPerRequest"));
  ASSIGN_OR_RETURN(p.max_job_spec_bytes, Get<int64_t>(root, "submit.maxJobSpecBytes"));
  if (p.max_jobs_per_request < 1 || p.max_job_spec_bytes < 1) {
    return absl::InvalidArgumentError("submit: limits must be positive");
  }
  ASSIGN_OR_RETURN(p.default_resources,
                   (Get<std::map<std::string, std::string>>(root, "submit.defaultResources")));
  ASSIGN_OR_RETURN(p.default_priority_class,
                   Get<std::string>(root, "scheduling.defaultPriorityClass"));
  YAML::Node classes = root["scheduling"]["priorityClasses"];
  if (!classes.IsMap() || classes.size() == 0) {
    return absl::InvalidArgumentError("scheduling.priorityClasses: at least one class is needed");
  }
  p.priority_classes.clear();
  for (const auto& kv : classes) {
    std::string name = kv.first.as<std::string>();
    std::string base = absl::StrCat("scheduling.priorityClasses.", name);
    ASSIGN_OR_RETURN(int priority, Get<int>(root, absl::StrCat(base, ".priority")));
    bool preemptible = false;
    if (kv.second["preemptible"]) {
      ASSIGN_OR_RETURN(preemptible, Get<bool>(root, absl::StrCat(base, ".preemptible")));
    }
    p.priority_classes[name] = api::PriorityClass{priority, preemptible};
  }
  if (!p.priority_classes.count(p.default_priority_class)) {
    return absl::InvalidArgumentError(absl::StrCat("scheduling.defaultPriorityClass: \"",
                                                   p.default_priority_class,
                                                   "\" is not one of scheduling.priorityClasses"));
  }
  ASSIGN_OR_RETURN(c.max_log_record_bytes, Get<int64_t>(root, "eventLog.maxRecordBytes"));
  ASSIGN_OR_RETURN(c.log_level, Get<std::string>(root, "logging.level"));
  ASSIGN_OR_RETURN(c.log_format, Get<std::string>(root, "logging.format"));
  if (c.log_format != "text" && c.log_format != "json") {
    return absl::InvalidArgumentError("logging.format: must be text or json");
  }
  return c;
}

}  // namespace regatta::server
