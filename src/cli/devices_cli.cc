#include "src/cli/devices_cli.h"

#include <algorithm>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using Stub = v1::DeviceService::Stub;

std::string HandlerOf(const v1::Configuration& c) { return c.discovery_handler().name(); }

std::string RenderConfigurationTable(
    const google::protobuf::RepeatedPtrField<v1::Configuration>& rows, const RenderContext& ctx) {
  Table table({"NAME", "HANDLER", "CAPACITY", "INSTANCES", "GENERATION", "AGE"});
  for (const v1::Configuration& c : rows) {
    table.AddRow({c.name(), HandlerOf(c), absl::StrCat(c.capacity()),
                  absl::StrCat(c.status().instance_count()), absl::StrCat(c.generation()),
                  FormatAge(c.create_time(), ctx)});
  }
  return table.Render();
}

// "1/2": slots held of the capacity.
std::string Usage(const v1::Instance& instance) {
  int held = 0;
  for (const auto& [slot, holder] : instance.device_usage()) held += holder.empty() ? 0 : 1;
  return absl::StrCat(held, "/", instance.capacity());
}

std::string RenderInstanceTable(const google::protobuf::RepeatedPtrField<v1::Instance>& rows,
                                const RenderContext& ctx) {
  Table table({"NAME", "CONFIGURATION", "NODES", "SHARED", "USED", "AGE"});
  for (const v1::Instance& i : rows) {
    table.AddRow({i.name(), i.configuration_name(), absl::StrJoin(i.nodes(), ","),
                  i.shared() ? "yes" : "no", Usage(i), FormatAge(i.create_time(), ctx)});
  }
  return table.Render();
}

std::string KindOf(const v1::Service& service) {
  switch (service.kind()) {
    case v1::SERVICE_KIND_INSTANCE:
      return "instance";
    case v1::SERVICE_KIND_CONFIGURATION:
      return "configuration";
    case v1::SERVICE_KIND_JOB:
      return "job";
    default:
      return "-";
  }
}

// The key of a port in an endpoint's ports: its name, or its number when it has none (the
// unnamed containerPorts of a job service).
std::string PortKey(const v1::ServicePort& p) {
  return p.name().empty() ? absl::StrCat(p.port()) : p.name();
}

// "rtsp:554/TCP,http:80/TCP" (an unnamed port: "8080/TCP"): the advertised ports.
std::string PortsOf(const v1::Service& service) {
  std::vector<std::string> ports;
  for (const v1::ServicePort& p : service.ports()) {
    ports.push_back(absl::StrCat(p.name(), p.name().empty() ? "" : ":", p.port(), "/",
                                 p.protocol().empty() ? "TCP" : p.protocol()));
  }
  return ports.empty() ? "-" : absl::StrJoin(ports, ",");
}

// "host:port", bracketing an IPv6 address.
std::string HostPort(const std::string& address, int port) {
  if (address.find(':') != std::string::npos) return absl::StrCat("[", address, "]:", port);
  return absl::StrCat(address, ":", port);
}

// The broker's ports in the order of the service's port list: "rtsp=8554,http=31000".
std::string EndpointPorts(const v1::Service& service, const v1::ServiceEndpoint& endpoint) {
  std::vector<std::string> ports;
  for (const v1::ServicePort& p : service.ports()) {
    auto it = endpoint.ports().find(PortKey(p));
    if (it != endpoint.ports().end()) ports.push_back(absl::StrCat(PortKey(p), "=", it->second));
  }
  return ports.empty() ? "-" : absl::StrJoin(ports, ",");
}

// address:port of every port of the ready endpoints, at most three then "+ N more".
std::string ReadyEndpoints(const v1::Service& service) {
  constexpr size_t kShown = 3;
  std::vector<std::string> all;
  for (const v1::ServiceEndpoint& e : service.endpoints()) {
    if (!e.ready() || e.address().empty()) continue;
    for (const v1::ServicePort& p : service.ports()) {
      auto it = e.ports().find(PortKey(p));
      if (it != e.ports().end()) all.push_back(HostPort(e.address(), it->second));
    }
  }
  if (all.empty()) return "<none>";
  if (all.size() <= kShown) return absl::StrJoin(all, ",");
  return absl::StrCat(absl::StrJoin(all.begin(), all.begin() + kShown, ","), " + ",
                      all.size() - kShown, " more");
}

// The nodes of the ready endpoints, each once, in endpoint order.
std::string ReadyNodes(const v1::Service& service) {
  std::vector<std::string> nodes;
  for (const v1::ServiceEndpoint& e : service.endpoints()) {
    if (!e.ready() || e.node().empty()) continue;
    if (std::find(nodes.begin(), nodes.end(), e.node()) == nodes.end()) nodes.push_back(e.node());
  }
  return nodes.empty() ? "-" : absl::StrJoin(nodes, ",");
}

// What the service stands for: its Instance, its job, or "-" for a Configuration's.
std::string SourceOf(const v1::Service& s) {
  if (!s.job_id().empty()) return s.job_id();
  return s.instance_name().empty() ? "-" : s.instance_name();
}

std::string RenderServiceTable(const google::protobuf::RepeatedPtrField<v1::Service>& rows) {
  Table table({"NAME", "KIND", "SOURCE", "PORTS", "NODES", "ENDPOINTS"});
  for (const v1::Service& s : rows) {
    table.AddRow({s.name(), KindOf(s), SourceOf(s), PortsOf(s), ReadyNodes(s), ReadyEndpoints(s)});
  }
  return table.Render();
}

absl::StatusOr<std::vector<devices::Resource>> ReadResources(const CommandEnv& env,
                                                             const std::string& file) {
  if (file.empty()) return UsageError("a FILE is required");
  ASSIGN_OR_RETURN(std::string text, ReadInput(env, file));
  absl::StatusOr<std::vector<devices::Resource>> resources = devices::ParseResources(text);
  if (!resources.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(file, ": ", resources.status().message()));
  }
  if (resources->empty()) return absl::InvalidArgumentError(absl::StrCat(file, ": no resources"));
  return resources;
}

// Applies one resource; what to print for it.
absl::StatusOr<std::string> Apply(Client& client, const CommandEnv& env,
                                  const devices::Resource& resource) {
  if (const auto* c = std::get_if<v1::Configuration>(&resource)) {
    v1::ApplyConfigurationRequest request;
    *request.mutable_configuration() = *c;
    ASSIGN_OR_RETURN(v1::Configuration applied,
                     CallUnary(client, client.devices(), &Stub::ApplyConfiguration, request));
    if (env.output != OutputFormat::kTable) PrintMessage(env, applied, "");
    return absl::StrCat("configuration ", applied.name(), " applied (generation ",
                        applied.generation(), ")\n");
  }
  if (const auto* s = std::get_if<v1::Secret>(&resource)) {
    v1::ApplySecretRequest request;
    *request.mutable_secret() = *s;
    ASSIGN_OR_RETURN(v1::Secret applied,
                     CallUnary(client, client.devices(), &Stub::ApplySecret, request));
    if (env.output != OutputFormat::kTable) PrintMessage(env, applied, "");
    return absl::StrCat("secret ", applied.name(), " applied\n");
  }
  const auto& m = std::get<v1::ConfigMap>(resource);
  v1::ApplyConfigMapRequest request;
  *request.mutable_config_map() = m;
  ASSIGN_OR_RETURN(v1::ConfigMap applied,
                   CallUnary(client, client.devices(), &Stub::ApplyConfigMap, request));
  if (env.output != OutputFormat::kTable) PrintMessage(env, applied, "");
  return absl::StrCat("config map ", applied.name(), " applied\n");
}

// "configuration NAME", "secret NAME", "config map NAME": which resource of a file.
std::string Describe(const devices::Resource& resource) {
  if (const auto* c = std::get_if<v1::Configuration>(&resource)) {
    return absl::StrCat("configuration ", c->name());
  }
  if (const auto* s = std::get_if<v1::Secret>(&resource)) return absl::StrCat("secret ", s->name());
  return absl::StrCat("config map ", std::get<v1::ConfigMap>(resource).name());
}

// Deletes one resource; what to print for it.
absl::StatusOr<std::string> Delete(Client& client, const devices::Resource& resource) {
  if (const auto* c = std::get_if<v1::Configuration>(&resource)) {
    v1::DeleteConfigurationRequest request;
    request.set_name(c->name());
    RETURN_IF_ERROR(
        CallUnary(client, client.devices(), &Stub::DeleteConfiguration, request).status());
    return absl::StrCat("configuration ", c->name(), " deleted\n");
  }
  if (const auto* s = std::get_if<v1::Secret>(&resource)) {
    v1::DeleteSecretRequest request;
    request.set_name(s->name());
    RETURN_IF_ERROR(CallUnary(client, client.devices(), &Stub::DeleteSecret, request).status());
    return absl::StrCat("secret ", s->name(), " deleted\n");
  }
  v1::DeleteConfigMapRequest request;
  request.set_name(std::get<v1::ConfigMap>(resource).name());
  RETURN_IF_ERROR(CallUnary(client, client.devices(), &Stub::DeleteConfigMap, request).status());
  return absl::StrCat("config map ", request.name(), " deleted\n");
}

}  // namespace

absl::Status ConfigApply(const CommandEnv& env, const std::string& file) {
  ASSIGN_OR_RETURN(std::vector<devices::Resource> resources, ReadResources(env, file));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  for (const devices::Resource& resource : resources) {
    absl::StatusOr<std::string> line = Apply(*client, env, resource);
    if (!line.ok()) {
      // Which resource of the file, whatever the error: those before it were applied.
      return absl::Status(line.status().code(),
                          absl::StrCat(file == "-" ? "stdin" : file, ": ", Describe(resource), ": ",
                                       line.status().message()));
    }
    if (env.output == OutputFormat::kTable) *env.out << *line;
  }
  return absl::OkStatus();
}

absl::Status ConfigDelete(const CommandEnv& env, const std::string& file) {
  ASSIGN_OR_RETURN(std::vector<devices::Resource> resources, ReadResources(env, file));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  for (const devices::Resource& resource : resources) {
    ASSIGN_OR_RETURN(std::string line, Delete(*client, resource));
    *env.out << line;
  }
  return absl::OkStatus();
}

absl::Status ConfigGet(const CommandEnv& env, const std::string& name) {
  if (name.empty()) return UsageError("a configuration NAME is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetConfigurationRequest request;
  request.set_name(name);
  ASSIGN_OR_RETURN(v1::Configuration c,
                   CallUnary(*client, client->devices(), &Stub::GetConfiguration, request));
  std::string text = absl::StrCat(
      "Name:        ", c.name(), "\nHandler:     ", HandlerOf(c), "\nCapacity:    ", c.capacity(),
      "\nInstances:   ", c.status().instance_count(), "\nGeneration:  ", c.generation(), "\n");
  if (!c.status().broker_error().empty()) {
    absl::StrAppend(&text, "Brokers:     ", c.status().broker_error(), "\n");
  }
  if (c.status().nodes().empty()) {
    absl::StrAppend(&text, "Discovery:   no node has reported yet\n");
  } else {
    Table nodes({"NODE", "DISCOVERY"});
    for (const v1::ConfigurationNodeStatus& node : c.status().nodes()) {
      nodes.AddRow({node.node(), node.error().empty() ? "ok" : node.error()});
    }
    absl::StrAppend(&text, "\n", nodes.Render());
  }
  PrintMessage(env, c, text);
  return absl::OkStatus();
}

absl::Status ConfigList(const CommandEnv& env) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  ASSIGN_OR_RETURN(
      v1::ListConfigurationsResponse all,
      CallAllPages(*client, client->devices(), &Stub::ListConfigurations,
                   v1::ListConfigurationsRequest(),
                   [](v1::ListConfigurationsResponse& r) { return r.mutable_configurations(); }));
  if (env.output == OutputFormat::kTable && all.configurations().empty()) {
    *env.out << "No configurations found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderConfigurationTable(all.configurations(), env.render));
  return absl::OkStatus();
}

absl::Status InstancesList(const CommandEnv& env, const std::string& configuration,
                           const std::string& node) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListInstancesRequest request;
  request.set_configuration_name(configuration);
  request.set_node(node);
  ASSIGN_OR_RETURN(
      v1::ListInstancesResponse all,
      CallAllPages(*client, client->devices(), &Stub::ListInstances, request,
                   [](v1::ListInstancesResponse& r) { return r.mutable_instances(); }));
  if (env.output == OutputFormat::kTable && all.instances().empty()) {
    *env.out << "No instances found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderInstanceTable(all.instances(), env.render));
  return absl::OkStatus();
}

absl::Status InstancesGet(const CommandEnv& env, const std::string& name) {
  if (name.empty()) return UsageError("an instance NAME is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetInstanceRequest request;
  request.set_name(name);
  ASSIGN_OR_RETURN(v1::Instance i,
                   CallUnary(*client, client->devices(), &Stub::GetInstance, request));
  std::string text = absl::StrCat(
      "Name:           ", i.name(), "\nConfiguration:  ", i.configuration_name(),
      "\nCDI name:       ", i.cdi_name(), "\nShared:         ", i.shared() ? "yes" : "no",
      "\nNodes:          ", absl::StrJoin(i.nodes(), ", "), "\nUsed:           ", Usage(i), "\n");
  Table slots({"SLOT", "HOLDER"});
  std::vector<std::pair<std::string, std::string>> usage(i.device_usage().begin(),
                                                         i.device_usage().end());
  std::sort(usage.begin(), usage.end());
  for (const auto& [slot, holder] : usage) slots.AddRow({slot, holder.empty() ? "-" : holder});
  absl::StrAppend(&text, "\n", slots.Render());
  PrintMessage(env, i, text);
  return absl::OkStatus();
}

absl::Status ServicesList(const CommandEnv& env, const std::string& configuration) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListServicesRequest request;
  request.set_configuration_name(configuration);
  ASSIGN_OR_RETURN(v1::ListServicesResponse all,
                   CallAllPages(*client, client->devices(), &Stub::ListServices, request,
                                [](v1::ListServicesResponse& r) { return r.mutable_services(); }));
  if (env.output == OutputFormat::kTable && all.services().empty()) {
    *env.out << "No services found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderServiceTable(all.services()));
  return absl::OkStatus();
}

absl::Status ServicesGet(const CommandEnv& env, const std::string& name) {
  if (name.empty()) return UsageError("a service NAME is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetServiceRequest request;
  request.set_name(name);
  ASSIGN_OR_RETURN(v1::Service s,
                   CallUnary(*client, client->devices(), &Stub::GetService, request));
  std::string text =
      absl::StrCat("Name:           ", s.name(), "\nKind:           ", KindOf(s), "\n");
  if (!s.job_id().empty()) {
    absl::StrAppend(&text, "Job:            ", s.job_id(), "\nQueue:          ", s.queue(), "\n");
  } else {
    absl::StrAppend(&text, "Configuration:  ", s.configuration_name(), "\n");
  }
  if (!s.instance_name().empty())
    absl::StrAppend(&text, "Instance:       ", s.instance_name(), "\n");
  absl::StrAppend(&text, "Ports:          ", PortsOf(s), "\n");
  if (s.endpoints().empty()) {
    absl::StrAppend(&text, "Endpoints:      none (",
                    s.job_id().empty() ? "no active broker" : "the job has no active run", ")\n");
  } else {
    Table endpoints({s.job_id().empty() ? "BROKER JOB" : "JOB", "INSTANCE", "NODE", "ADDRESS",
                     "PORTS", "READY"});
    for (const v1::ServiceEndpoint& e : s.endpoints()) {
      endpoints.AddRow({e.broker_job_id(), e.instance_name().empty() ? "-" : e.instance_name(),
                        e.node().empty() ? "-" : e.node(), e.address().empty() ? "-" : e.address(),
                        EndpointPorts(s, e), e.ready() ? "yes" : "no"});
    }
    absl::StrAppend(&text, "\n", endpoints.Render());
  }
  PrintMessage(env, s, text);
  return absl::OkStatus();
}

}  // namespace regatta::cli
