#include "src/api/device_service.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/api/job_services.h"
#include "src/api/pipeline_refs.h"
#include "src/api/read_access.h"
#include "src/api/serve.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"
#include "src/devices/controller/broker_plan.h"
#include "src/devices/services/services.h"
#include "src/store/list_all.h"

namespace regatta::api {

namespace pb = regatta::v1;

namespace {

constexpr auth::GlobalPermission kWritePermission = auth::GlobalPermission::kCreateQueue;

// The queue a Configuration's brokers are submitted to; "" without brokers.
const std::string& BrokerQueue(const pb::Configuration& c) {
  return c.broker_spec().has_broker_pod_spec() ? c.broker_spec().broker_pod_spec().queue()
                                               : c.broker_spec().broker_job_spec().queue();
}

// Who may read a Configuration and what derives from it (its Instances, whose slots name the runs
// holding them, and its Services, whose endpoints are its broker jobs): holders of
// watch_all_events, the device writers (create_queue: they apply them), and the readers of the
// queue its brokers run in (docs/auth.md). One per request: each Configuration is decided once.
class DeviceReadAccess {
 public:
  DeviceReadAccess(const ApiContext& ctx, const auth::Principal& principal)
      : ctx_(ctx),
        queues_(ctx, principal),
        all_(queues_.All() || ctx.authorizer->HasGlobal(principal, kWritePermission)) {}

  bool All() const { return all_; }

  absl::StatusOr<bool> MayRead(const pb::Configuration& c) {
    if (all_) return true;
    if (auto it = decided_.find(c.name()); it != decided_.end()) return it->second;
    bool readable = false;
    if (!BrokerQueue(c).empty()) {
      ASSIGN_OR_RETURN(readable, queues_.MayRead(BrokerQueue(c)));
    }
    decided_.emplace(c.name(), readable);
    return readable;
  }

  // By name; a Configuration that does not exist only with All().
  absl::StatusOr<bool> MayRead(absl::string_view configuration) {
    if (all_) return true;
    if (auto it = decided_.find(configuration); it != decided_.end()) return it->second;
    absl::StatusOr<pb::Configuration> c = ctx_.store->GetConfiguration(configuration);
    if (c.ok()) return MayRead(*c);
    if (!absl::IsNotFound(c.status())) return c.status();
    decided_.emplace(configuration, false);
    return false;
  }

  // PERMISSION_DENIED naming `what`, its Configuration and what it needs.
  absl::Status Check(absl::string_view configuration, absl::string_view what) {
    ASSIGN_OR_RETURN(bool readable, MayRead(configuration));
    if (readable) return absl::OkStatus();
    absl::StatusOr<pb::Configuration> c = ctx_.store->GetConfiguration(configuration);
    const std::string queue = c.ok() ? BrokerQueue(*c) : "";
    return absl::PermissionDeniedError(absl::StrCat(
        "user \"", queues_.principal().name, "\" may not read ", what, " (needs ",
        queue.empty() ? ""
                      : absl::StrCat("verb \"watch\" on queue \"", queue,
                                     "\", where its Configuration's brokers run, or "),
        "permission \"", auth::GlobalPermissionName(auth::GlobalPermission::kWatchAllEvents),
        "\" or \"", auth::GlobalPermissionName(kWritePermission), "\")"));
  }

 private:
  const ApiContext& ctx_;
  ReadAccess queues_;
  const bool all_;
  absl::flat_hash_map<std::string, bool> decided_;
};

absl::Status RequireName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("name: required");
  return absl::OkStatus();
}

// A page of the store as a response's rows and token.
template <typename Row, typename Rows>
void CopyPage(store::Page<Row> page, Rows* rows, std::string* next_page_token) {
  for (Row& row : page.rows) *rows->Add() = std::move(row);
  *next_page_token = std::move(page.next_page_token);
}

// INVALID_ARGUMENT naming the page size, else the store's page request.
absl::StatusOr<store::PageRequest> PageOf(int page_size, const std::string& page_token) {
  RETURN_IF_ERROR(CheckPageSize(page_size));
  return store::PageRequest{page_token, page_size};
}

// The value, nullopt for NOT_FOUND, or the error.
template <typename T>
absl::StatusOr<std::optional<T>> IfFound(absl::StatusOr<T> got) {
  if (got.ok()) return std::optional<T>(*std::move(got));
  if (got.status().code() == absl::StatusCode::kNotFound) return std::optional<T>();
  return got.status();
}

bool HasServiceSpec(const pb::Configuration& c) {
  return c.has_instance_service_spec() || c.has_configuration_service_spec();
}

// The non-terminal broker jobs of a Configuration (by the controller's label).
absl::StatusOr<std::vector<devices::ServiceBroker>> ActiveBrokers(
    store::Store& store, const std::string& configuration) {
  ASSIGN_OR_RETURN(
      std::vector<pb::JobDetails> jobs,
      ActiveJobsLabelled(store, {}, devices::kBrokerConfigurationLabel, configuration));
  std::vector<devices::ServiceBroker> brokers;
  for (const pb::JobDetails& d : jobs) brokers.push_back(devices::ServiceBrokerFromDetails(d));
  return brokers;
}

}  // namespace

// ---- gRPC adapters ---------------------------------------------------------------------------

grpc::Status DeviceService::ApplyConfiguration(grpc::ServerContext* call,
                                               const pb::ApplyConfigurationRequest* request,
                                               pb::Configuration* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return ApplyConfigurationCore(p, request->configuration());
  });
}

grpc::Status DeviceService::GetConfiguration(grpc::ServerContext* call,
                                             const pb::GetConfigurationRequest* request,
                                             pb::Configuration* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return GetConfigurationCore(p, request->name()); });
}

grpc::Status DeviceService::ListConfigurations(grpc::ServerContext* call,
                                               const pb::ListConfigurationsRequest* request,
                                               pb::ListConfigurationsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListConfigurationsCore(p, *request); });
}

grpc::Status DeviceService::DeleteConfiguration(grpc::ServerContext* call,
                                                const pb::DeleteConfigurationRequest* request,
                                                pb::DeleteConfigurationResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return DeleteConfigurationCore(p, request->name());
  });
}

grpc::Status DeviceService::GetInstance(grpc::ServerContext* call,
                                        const pb::GetInstanceRequest* request,
                                        pb::Instance* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return GetInstanceCore(p, request->name()); });
}

grpc::Status DeviceService::ListInstances(grpc::ServerContext* call,
                                          const pb::ListInstancesRequest* request,
                                          pb::ListInstancesResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListInstancesCore(p, *request); });
}

grpc::Status DeviceService::GetService(grpc::ServerContext* call,
                                       const pb::GetServiceRequest* request,
                                       pb::Service* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return GetServiceCore(p, request->name()); });
}

grpc::Status DeviceService::ListServices(grpc::ServerContext* call,
                                         const pb::ListServicesRequest* request,
                                         pb::ListServicesResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ListServicesCore(p, *request); });
}

grpc::Status DeviceService::ApplySecret(grpc::ServerContext* call,
                                        const pb::ApplySecretRequest* request,
                                        pb::Secret* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return ApplySecretCore(p, request->secret()); });
}

grpc::Status DeviceService::GetSecret(grpc::ServerContext* call,
                                      const pb::GetSecretRequest* request, pb::Secret* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return GetSecretCore(request->name()); });
}

grpc::Status DeviceService::ListSecrets(grpc::ServerContext* call,
                                        const pb::ListSecretsRequest* request,
                                        pb::ListSecretsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ListSecretsCore(*request); });
}

grpc::Status DeviceService::DeleteSecret(grpc::ServerContext* call,
                                         const pb::DeleteSecretRequest* request,
                                         pb::DeleteSecretResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return DeleteSecretCore(p, request->name()); });
}

grpc::Status DeviceService::ApplyConfigMap(grpc::ServerContext* call,
                                           const pb::ApplyConfigMapRequest* request,
                                           pb::ConfigMap* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) {
    return ApplyConfigMapCore(p, request->config_map());
  });
}

grpc::Status DeviceService::GetConfigMap(grpc::ServerContext* call,
                                         const pb::GetConfigMapRequest* request,
                                         pb::ConfigMap* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ctx_->store->GetConfigMap(request->name()); });
}

grpc::Status DeviceService::ListConfigMaps(grpc::ServerContext* call,
                                           const pb::ListConfigMapsRequest* request,
                                           pb::ListConfigMapsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal&) { return ListConfigMapsCore(*request); });
}

grpc::Status DeviceService::DeleteConfigMap(grpc::ServerContext* call,
                                            const pb::DeleteConfigMapRequest* request,
                                            pb::DeleteConfigMapResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return DeleteConfigMapCore(p, request->name()); });
}

// ---- Cores -----------------------------------------------------------------------------------

void DeviceService::AddBrokerErrors(pb::Configuration& configuration) const {
  if (!ctx_->broker_errors) return;
  std::string errors = ctx_->broker_errors(configuration.name());
  if (!errors.empty()) configuration.mutable_status()->set_broker_error(std::move(errors));
}

absl::Status DeviceService::CheckMayWrite(const auth::Principal& principal,
                                          absl::string_view what) const {
  if (ctx_->authorizer->HasGlobal(principal, kWritePermission)) return absl::OkStatus();
  return absl::PermissionDeniedError(
      absl::StrCat("user \"", principal.name, "\" may not change ", what, " (needs permission \"",
                   auth::GlobalPermissionName(kWritePermission), "\")"));
}

absl::Status DeviceService::Publish(const auth::Principal& principal, pb::Event event) {
  std::vector<pb::Event> events;
  events.push_back(std::move(event));
  // Device events belong to no queue or job set.
  return PublishAndWaitForViews(*ctx_, principal, "", "", std::move(events));
}

absl::StatusOr<pb::Configuration> DeviceService::ApplyConfigurationCore(
    const auth::Principal& principal, pb::Configuration configuration) {
  RETURN_IF_ERROR(CheckMayWrite(principal, "configurations"));
  // Output only: the views set them.
  configuration.clear_create_time();
  configuration.clear_update_time();
  configuration.clear_generation();
  configuration.clear_status();
  devices::ApplyDefaults(configuration);
  RETURN_IF_ERROR(devices::ValidateConfiguration(configuration));
  const std::string name = configuration.name();
  pb::Event event;
  *event.mutable_configuration_applied()->mutable_configuration() = std::move(configuration);
  RETURN_IF_ERROR(Publish(principal, std::move(event)));
  return ctx_->store->GetConfiguration(name);
}

absl::Status DeviceService::DeleteConfigurationCore(const auth::Principal& principal,
                                                    absl::string_view name) {
  RETURN_IF_ERROR(RequireName(name));
  RETURN_IF_ERROR(CheckMayWrite(principal, "configurations"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  RETURN_IF_ERROR(ctx_->store->GetConfiguration(name).status());  // NOT_FOUND naming it
  pb::Event event;
  event.mutable_configuration_deleted()->set_name(std::string(name));
  return Publish(principal, std::move(event));
}

absl::StatusOr<pb::Configuration> DeviceService::GetConfigurationCore(
    const auth::Principal& principal, absl::string_view name) {
  ASSIGN_OR_RETURN(pb::Configuration configuration, ctx_->store->GetConfiguration(name));
  DeviceReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(access.Check(name, absl::StrCat("Configuration \"", name, "\"")));
  AddBrokerErrors(configuration);
  return configuration;
}

absl::StatusOr<pb::ListConfigurationsResponse> DeviceService::ListConfigurationsCore(
    const auth::Principal& principal, const pb::ListConfigurationsRequest& request) {
  ASSIGN_OR_RETURN(store::PageRequest page, PageOf(request.page_size(), request.page_token()));
  DeviceReadAccess access(*ctx_, principal);
  auto read = [&](const store::PageRequest& p) { return ctx_->store->ListConfigurations(p); };
  ASSIGN_OR_RETURN(store::Page<pb::Configuration> rows,
                   ReadablePage<pb::Configuration>(
                       access.All(), page.limit, page.page_token, read,
                       [&](const pb::Configuration& c) { return access.MayRead(c); }));
  pb::ListConfigurationsResponse response;
  CopyPage(std::move(rows), response.mutable_configurations(), response.mutable_next_page_token());
  for (pb::Configuration& configuration : *response.mutable_configurations()) {
    AddBrokerErrors(configuration);
  }
  return response;
}

absl::StatusOr<pb::Instance> DeviceService::GetInstanceCore(const auth::Principal& principal,
                                                            absl::string_view name) {
  ASSIGN_OR_RETURN(pb::Instance instance, ctx_->store->GetInstance(name));
  DeviceReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(
      access.Check(instance.configuration_name(), absl::StrCat("Instance \"", name, "\"")));
  return instance;
}

absl::StatusOr<pb::ListInstancesResponse> DeviceService::ListInstancesCore(
    const auth::Principal& principal, const pb::ListInstancesRequest& request) {
  store::InstanceFilter filter;
  ASSIGN_OR_RETURN(store::PageRequest page, PageOf(request.page_size(), request.page_token()));
  filter.configuration_name = request.configuration_name();
  filter.node = request.node();
  DeviceReadAccess access(*ctx_, principal);
  auto read = [&](const store::PageRequest& p) {
    filter.page = p;
    return ctx_->store->ListInstances(filter);
  };
  ASSIGN_OR_RETURN(store::Page<pb::Instance> rows,
                   ReadablePage<pb::Instance>(access.All(), page.limit, page.page_token, read,
                                              [&](const pb::Instance& i) {
                                                return access.MayRead(i.configuration_name());
                                              }));
  pb::ListInstancesResponse response;
  CopyPage(std::move(rows), response.mutable_instances(), response.mutable_next_page_token());
  return response;
}

absl::StatusOr<std::vector<pb::Service>> DeviceService::ComputeServicesOf(
    const std::vector<pb::Configuration>& configurations) {
  std::vector<pb::Configuration> with_spec;
  std::vector<pb::Instance> instances;
  std::vector<devices::ServiceBroker> brokers;
  for (const pb::Configuration& c : configurations) {
    if (!HasServiceSpec(c)) continue;
    with_spec.push_back(c);
    store::InstanceFilter filter;
    filter.configuration_name = c.name();
    ASSIGN_OR_RETURN(std::vector<pb::Instance> own,
                     store::ListAll<pb::Instance>([&](const store::PageRequest& page) {
                       filter.page = page;
                       return ctx_->store->ListInstances(filter);
                     }));
    std::move(own.begin(), own.end(), std::back_inserter(instances));
    ASSIGN_OR_RETURN(std::vector<devices::ServiceBroker> active,
                     ActiveBrokers(*ctx_->store, c.name()));
    std::move(active.begin(), active.end(), std::back_inserter(brokers));
  }
  devices::ComputedServices computed =
      devices::ComputeServices(with_spec, instances, brokers, ctx_->executor_logs_address);
  for (const std::string& warning : computed.warnings) LOG_WARN("services", "warning", warning);
  return std::move(computed.services);
}

absl::StatusOr<pb::Service> DeviceService::GetServiceCore(const auth::Principal& principal,
                                                          absl::string_view name) {
  RETURN_IF_ERROR(RequireName(name));
  const absl::Status not_found = absl::NotFoundError(absl::StrCat("service ", name, " not found"));
  // "<x>-svc" is Configuration x's service or that of Instance x (of its Configuration).
  absl::string_view base = name;
  std::vector<pb::Configuration> configurations;
  if (!absl::ConsumeSuffix(&base, devices::kServiceNameSuffix) || base.empty()) {
    return JobServiceNamed(principal, name, not_found);
  }
  ASSIGN_OR_RETURN(std::optional<pb::Configuration> own,
                   IfFound(ctx_->store->GetConfiguration(base)));
  if (own.has_value()) configurations.push_back(*std::move(own));
  ASSIGN_OR_RETURN(std::optional<pb::Instance> instance, IfFound(ctx_->store->GetInstance(base)));
  if (instance.has_value() && instance->configuration_name() != base) {
    ASSIGN_OR_RETURN(std::optional<pb::Configuration> of_instance,
                     IfFound(ctx_->store->GetConfiguration(instance->configuration_name())));
    if (of_instance.has_value()) configurations.push_back(*std::move(of_instance));
  }
  ASSIGN_OR_RETURN(std::vector<pb::Service> services, ComputeServicesOf(configurations));
  for (pb::Service& service : services) {
    if (service.name() != name) continue;
    DeviceReadAccess access(*ctx_, principal);
    RETURN_IF_ERROR(
        access.Check(service.configuration_name(), absl::StrCat("service \"", name, "\"")));
    return std::move(service);
  }
  return JobServiceNamed(principal, name, not_found);
}

absl::StatusOr<pb::Service> DeviceService::JobServiceNamed(const auth::Principal& principal,
                                                           absl::string_view name,
                                                           const absl::Status& not_found) {
  // A job's service: its own name, or one of its Armada services' names.
  ASSIGN_OR_RETURN(std::vector<pb::Service> of_jobs, ReadableJobServices(principal));
  for (pb::Service& service : of_jobs) {
    if (service.name() == name) return std::move(service);
  }
  return not_found;
}

absl::StatusOr<std::vector<pb::Service>> DeviceService::ReadableJobServices(
    const auth::Principal& principal) {
  ReadAccess access(*ctx_, principal);
  std::vector<std::string> queues;
  if (!access.All()) {
    ASSIGN_OR_RETURN(queues, access.ReadableQueues());
    if (queues.empty()) return std::vector<pb::Service>();
  }
  return ListJobServices(*ctx_->store, queues, ctx_->executor_logs_address);
}

absl::StatusOr<pb::ListServicesResponse> DeviceService::ListServicesCore(
    const auth::Principal& principal, const pb::ListServicesRequest& request) {
  RETURN_IF_ERROR(CheckPageSize(request.page_size()));
  const int page_size = request.page_size() == 0 ? 100 : request.page_size();
  std::vector<pb::Configuration> configurations;
  if (!request.configuration_name().empty()) {
    ASSIGN_OR_RETURN(std::optional<pb::Configuration> c,
                     IfFound(ctx_->store->GetConfiguration(request.configuration_name())));
    if (c.has_value()) configurations.push_back(*std::move(c));
  } else {
    ASSIGN_OR_RETURN(configurations,
                     store::ListAll<pb::Configuration>([&](const store::PageRequest& page) {
                       return ctx_->store->ListConfigurations(page);
                     }));
  }
  // Only the services of readable Configurations.
  DeviceReadAccess access(*ctx_, principal);
  std::vector<pb::Configuration> readable;
  for (pb::Configuration& c : configurations) {
    ASSIGN_OR_RETURN(bool may, access.MayRead(c));
    if (may) readable.push_back(std::move(c));
  }
  ASSIGN_OR_RETURN(std::vector<pb::Service> services, ComputeServicesOf(readable));
  if (request.configuration_name().empty()) {
    ASSIGN_OR_RETURN(std::vector<pb::Service> of_jobs, ReadableJobServices(principal));
    std::vector<pb::Service> merged;
    merged.reserve(services.size() + of_jobs.size());
    std::merge(std::make_move_iterator(services.begin()), std::make_move_iterator(services.end()),
               std::make_move_iterator(of_jobs.begin()), std::make_move_iterator(of_jobs.end()),
               std::back_inserter(merged),
               [](const pb::Service& a, const pb::Service& b) { return a.name() < b.name(); });
    services = std::move(merged);
  }
  // The page token is the last name of the previous page (services are in name order).
  auto it = std::upper_bound(
      services.begin(), services.end(), request.page_token(),
      [](const std::string& token, const pb::Service& service) { return token < service.name(); });
  pb::ListServicesResponse response;
  for (; it != services.end() && response.services_size() < page_size; ++it) {
    *response.add_services() = std::move(*it);
  }
  if (it != services.end()) {
    response.set_next_page_token(response.services(response.services_size() - 1).name());
  }
  return response;
}

absl::StatusOr<pb::Secret> DeviceService::ApplySecretCore(const auth::Principal& principal,
                                                          pb::Secret secret) {
  RETURN_IF_ERROR(CheckMayWrite(principal, "secrets"));
  secret.clear_keys();
  secret.clear_create_time();
  secret.clear_update_time();
  RETURN_IF_ERROR(devices::ValidateSecret(secret));
  const std::string name = secret.name();
  if (!secret.data().empty() && ctx_->sealer == nullptr) {
    return absl::FailedPreconditionError(
        "secret.data: this server has no secrets key to seal the values with");
  }
  for (auto& [key, value] : *secret.mutable_data()) {
    ASSIGN_OR_RETURN(value, ctx_->sealer->Seal(value, SecretDataContext(name, key)));
  }
  pb::Event event;
  *event.mutable_secret_applied()->mutable_secret() = std::move(secret);
  RETURN_IF_ERROR(Publish(principal, std::move(event)));
  return GetSecretCore(name);
}

absl::StatusOr<pb::Secret> DeviceService::GetSecretCore(absl::string_view name) {
  ASSIGN_OR_RETURN(pb::Secret secret, ctx_->store->GetSecret(name));
  secret.clear_data();  // values never leave the server
  return secret;
}

absl::Status DeviceService::DeleteSecretCore(const auth::Principal& principal,
                                             absl::string_view name) {
  RETURN_IF_ERROR(RequireName(name));
  RETURN_IF_ERROR(CheckMayWrite(principal, "secrets"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  RETURN_IF_ERROR(ctx_->store->GetSecret(name).status());
  pb::Event event;
  event.mutable_secret_deleted()->set_name(std::string(name));
  return Publish(principal, std::move(event));
}

absl::StatusOr<pb::ListSecretsResponse> DeviceService::ListSecretsCore(
    const pb::ListSecretsRequest& request) {
  ASSIGN_OR_RETURN(store::PageRequest page, PageOf(request.page_size(), request.page_token()));
  ASSIGN_OR_RETURN(store::Page<pb::Secret> rows, ctx_->store->ListSecrets(page));
  pb::ListSecretsResponse response;
  CopyPage(std::move(rows), response.mutable_secrets(), response.mutable_next_page_token());
  for (pb::Secret& secret : *response.mutable_secrets()) secret.clear_data();
  return response;
}

absl::StatusOr<pb::ConfigMap> DeviceService::ApplyConfigMapCore(const auth::Principal& principal,
                                                                pb::ConfigMap config_map) {
  RETURN_IF_ERROR(CheckMayWrite(principal, "config maps"));
  config_map.clear_create_time();
  config_map.clear_update_time();
  RETURN_IF_ERROR(devices::ValidateConfigMap(config_map));
  const std::string name = config_map.name();
  pb::Event event;
  *event.mutable_config_map_applied()->mutable_config_map() = std::move(config_map);
  RETURN_IF_ERROR(Publish(principal, std::move(event)));
  return ctx_->store->GetConfigMap(name);
}

absl::Status DeviceService::DeleteConfigMapCore(const auth::Principal& principal,
                                                absl::string_view name) {
  RETURN_IF_ERROR(RequireName(name));
  RETURN_IF_ERROR(CheckMayWrite(principal, "config maps"));
  RETURN_IF_ERROR(CatchUpViews(*ctx_));
  RETURN_IF_ERROR(ctx_->store->GetConfigMap(name).status());
  pb::Event event;
  event.mutable_config_map_deleted()->set_name(std::string(name));
  return Publish(principal, std::move(event));
}

absl::StatusOr<pb::ListConfigMapsResponse> DeviceService::ListConfigMapsCore(
    const pb::ListConfigMapsRequest& request) {
  ASSIGN_OR_RETURN(store::PageRequest page, PageOf(request.page_size(), request.page_token()));
  ASSIGN_OR_RETURN(store::Page<pb::ConfigMap> rows, ctx_->store->ListConfigMaps(page));
  pb::ListConfigMapsResponse response;
  CopyPage(std::move(rows), response.mutable_config_maps(), response.mutable_next_page_token());
  return response;
}

}  // namespace regatta::api
