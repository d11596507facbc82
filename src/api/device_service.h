#ifndef REGATTA_SRC_API_DEVICE_SERVICE_H_
#define REGATTA_SRC_API_DEVICE_SERVICE_H_

#include <vector>

#include "regatta/v1/device_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// The device resources (device_service.proto): Configurations, Secrets and ConfigMaps are
// validated (src/devices/config), published to the log (ConfigurationApplied, SecretApplied, ...)
// and each write waits until the views show it; Instances are read only. Writes need the global
// permission "create_queue" (devices, like queues, are the cluster's). Configurations, Instances
// and Services are readable with "watch_all_events", "create_queue", or the verb "watch" on the
// queue of the Configuration's brokers (lists leave out the others); Secrets and ConfigMaps need
// only authentication. Secret values never leave: Secrets come back with their keys only.
class DeviceService final : public regatta::v1::DeviceService::Service {
 public:
  explicit DeviceService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status ApplyConfiguration(grpc::ServerContext* call,
                                  const regatta::v1::ApplyConfigurationRequest* request,
                                  regatta::v1::Configuration* response) override;
  grpc::Status GetConfiguration(grpc::ServerContext* call,
                                const regatta::v1::GetConfigurationRequest* request,
                                regatta::v1::Configuration* response) override;
  grpc::Status ListConfigurations(grpc::ServerContext* call,
                                  const regatta::v1::ListConfigurationsRequest* request,
                                  regatta::v1::ListConfigurationsResponse* response) override;
  grpc::Status DeleteConfiguration(grpc::ServerContext* call,
                                   const regatta::v1::DeleteConfigurationRequest* request,
                                   regatta::v1::DeleteConfigurationResponse* response) override;
  grpc::Status GetInstance(grpc::ServerContext* call,
                           const regatta::v1::GetInstanceRequest* request,
                           regatta::v1::Instance* response) override;
  grpc::Status ListInstances(grpc::ServerContext* call,
                             const regatta::v1::ListInstancesRequest* request,
                             regatta::v1::ListInstancesResponse* response) override;
  grpc::Status GetService(grpc::ServerContext* call, const regatta::v1::GetServiceRequest* request,
                          regatta::v1::Service* response) override;
  grpc::Status ListServices(grpc::ServerContext* call,
                            const regatta::v1::ListServicesRequest* request,
                            regatta::v1::ListServicesResponse* response) override;
  grpc::Status ApplySecret(grpc::ServerContext* call,
                           const regatta::v1::ApplySecretRequest* request,
                           regatta::v1::Secret* response) override;
  grpc::Status GetSecret(grpc::ServerContext* call, const regatta::v1::GetSecretRequest* request,
                         regatta::v1::Secret* response) override;
  grpc::Status ListSecrets(grpc::ServerContext* call,
                           const regatta::v1::ListSecretsRequest* request,
                           regatta::v1::ListSecretsResponse* response) override;
  grpc::Status DeleteSecret(grpc::ServerContext* call,
                            const regatta::v1::DeleteSecretRequest* request,
                            regatta::v1::DeleteSecretResponse* response) override;
  grpc::Status ApplyConfigMap(grpc::ServerContext* call,
                              const regatta::v1::ApplyConfigMapRequest* request,
                              regatta::v1::ConfigMap* response) override;
  grpc::Status GetConfigMap(grpc::ServerContext* call,
                            const regatta::v1::GetConfigMapRequest* request,
                            regatta::v1::ConfigMap* response) override;
  grpc::Status ListConfigMaps(grpc::ServerContext* call,
                              const regatta::v1::ListConfigMapsRequest* request,
                              regatta::v1::ListConfigMapsResponse* response) override;
  grpc::Status DeleteConfigMap(grpc::ServerContext* call,
                               const regatta::v1::DeleteConfigMapRequest* request,
                               regatta::v1::DeleteConfigMapResponse* response) override;

  // The transport-neutral cores (REST and tests call these).
  absl::StatusOr<regatta::v1::Configuration> ApplyConfigurationCore(
      const auth::Principal& principal, regatta::v1::Configuration configuration);
  absl::Status DeleteConfigurationCore(const auth::Principal& principal, absl::string_view name);
  absl::StatusOr<regatta::v1::Configuration> GetConfigurationCore(const auth::Principal& principal,
                                                                  absl::string_view name);
  absl::StatusOr<regatta::v1::ListConfigurationsResponse> ListConfigurationsCore(
      const auth::Principal& principal, const regatta::v1::ListConfigurationsRequest& request);
  absl::StatusOr<regatta::v1::Instance> GetInstanceCore(const auth::Principal& principal,
                                                        absl::string_view name);
  absl::StatusOr<regatta::v1::ListInstancesResponse> ListInstancesCore(
      const auth::Principal& principal, const regatta::v1::ListInstancesRequest& request);
  // Services are computed from the Configurations, their Instances and their non-terminal
  // broker jobs (src/devices/services); broker jobs that cannot be read are left out with a
  // warning in the server's log.
  absl::StatusOr<regatta::v1::Service> GetServiceCore(const auth::Principal& principal,
                                                      absl::string_view name);
  absl::StatusOr<regatta::v1::ListServicesResponse> ListServicesCore(
      const auth::Principal& principal, const regatta::v1::ListServicesRequest& request);
  absl::StatusOr<regatta::v1::Secret> ApplySecretCore(const auth::Principal& principal,
                                                      regatta::v1::Secret secret);
  // Without values.
  absl::StatusOr<regatta::v1::Secret> GetSecretCore(absl::string_view name);
  absl::Status DeleteSecretCore(const auth::Principal& principal, absl::string_view name);
  absl::StatusOr<regatta::v1::ListSecretsResponse> ListSecretsCore(
      const regatta::v1::ListSecretsRequest& request);
  absl::StatusOr<regatta::v1::ConfigMap> ApplyConfigMapCore(const auth::Principal& principal,
                                                            regatta::v1::ConfigMap config_map);
  absl::Status DeleteConfigMapCore(const auth::Principal& principal, absl::string_view name);
  absl::StatusOr<regatta::v1::ListConfigMapsResponse> ListConfigMapsCore(
      const regatta::v1::ListConfigMapsRequest& request);

 private:
  // PERMISSION_DENIED naming the user and the permission unless the principal may write.
  // The device controller's errors for its brokers (held in memory, not in the views).
  void AddBrokerErrors(regatta::v1::Configuration& configuration) const;
  absl::Status CheckMayWrite(const auth::Principal& principal, absl::string_view what) const;
  absl::Status Publish(const auth::Principal& principal, regatta::v1::Event event);
  // The services of these Configurations (sorted by name).
  absl::StatusOr<std::vector<regatta::v1::Service>> ComputeServicesOf(
      const std::vector<regatta::v1::Configuration>& configurations);
  // The job services (src/api/job_services.h) of the queues the principal may read.
  absl::StatusOr<std::vector<regatta::v1::Service>> ReadableJobServices(
      const auth::Principal& principal);
  // The readable job service `name`, or `not_found`.
  absl::StatusOr<regatta::v1::Service> JobServiceNamed(const auth::Principal& principal,
                                                       absl::string_view name,
                                                       const absl::Status& not_found);

  const ApiContext* ctx_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_DEVICE_SERVICE_H_
