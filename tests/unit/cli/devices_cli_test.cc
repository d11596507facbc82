// The device verbs against an in-process fake DeviceService: config apply|delete of a
// multi-document file, config get|list, instances list|get and services list|get with paging and
// filters.
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/device_service.grpc.pb.h"
#include "src/cli/app.h"
#include "tests/unit/cli/fake_server_test_base.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using ::testing::HasSubstr;
using ::testing::Not;

// Resources by name; listings one row per page to exercise paging.
class FakeDevices final : public v1::DeviceService::Service {
 public:
  grpc::Status ApplyConfiguration(grpc::ServerContext*, const v1::ApplyConfigurationRequest* r,
                                  v1::Configuration* out) override {
    absl::MutexLock lock(&mu);
    if (r->configuration().name() == refuse) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "discovery_handler.name: no such handler");
    }
    v1::Configuration& c = configurations[r->configuration().name()];
    const int64_t generation = c.generation() + 1;
    c = r->configuration();
    c.set_generation(generation);
    *out = c;
    log.push_back(absl::StrCat("apply configuration ", c.name()));
    return grpc::Status::OK;
  }
  grpc::Status GetConfiguration(grpc::ServerContext*, const v1::GetConfigurationRequest* r,
                                v1::Configuration* out) override {
    absl::MutexLock lock(&mu);
    auto it = configurations.find(r->name());
    if (it == configurations.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("configuration ", r->name(), " not found"));
    }
    *out = it->second;
    return grpc::Status::OK;
  }
  grpc::Status ListConfigurations(grpc::ServerContext*, const v1::ListConfigurationsRequest* r,
                                  v1::ListConfigurationsResponse* out) override {
    absl::MutexLock lock(&mu);
    auto it = configurations.upper_bound(r->page_token());
    if (it == configurations.end()) return grpc::Status::OK;
    *out->add_configurations() = it->second;
    if (std::next(it) != configurations.end()) out->set_next_page_token(it->first);
    return grpc::Status::OK;
  }
  grpc::Status DeleteConfiguration(grpc::ServerContext*, const v1::DeleteConfigurationRequest* r,
                                   v1::DeleteConfigurationResponse*) override {
    absl::MutexLock lock(&mu);
    configurations.erase(r->name());
    log.push_back(absl::StrCat("delete configuration ", r->name()));
    return grpc::Status::OK;
  }
  grpc::Status ApplySecret(grpc::ServerContext*, const v1::ApplySecretRequest* r,
                           v1::Secret* out) override {
    absl::MutexLock lock(&mu);
    secret_values = r->secret();
    out->set_name(r->secret().name());
    for (const auto& [key, value] : r->secret().data()) out->add_keys(key);
    log.push_back(absl::StrCat("apply secret ", r->secret().name()));
    return grpc::Status::OK;
  }
  grpc::Status DeleteSecret(grpc::ServerContext*, const v1::DeleteSecretRequest* r,
                            v1::DeleteSecretResponse*) override {
    absl::MutexLock lock(&mu);
    log.push_back(absl::StrCat("delete secret ", r->name()));
    return grpc::Status::OK;
  }
  grpc::Status ApplyConfigMap(grpc::ServerContext*, const v1::ApplyConfigMapRequest* r,
                              v1::ConfigMap* out) override {
    absl::MutexLock lock(&mu);
    *out = r->config_map();
    log.push_back(absl::StrCat("apply config map ", r->config_map().name()));
    return grpc::Status::OK;
  }
  grpc::Status DeleteConfigMap(grpc::ServerContext*, const v1::DeleteConfigMapRequest* r,
                               v1::DeleteConfigMapResponse*) override {
    absl::MutexLock lock(&mu);
    log.push_back(absl::StrCat("delete config map ", r->name()));
    return grpc::Status::OK;
  }
  grpc::Status GetInstance(grpc::ServerContext*, const v1::GetInstanceRequest* r,
                           v1::Instance* out) override {
    absl::MutexLock lock(&mu);
    auto it = instances.find(r->name());
    if (it == instances.end()) return grpc::Status(grpc::StatusCode::NOT_FOUND, "no instance");
    *out = it->second;
    return grpc::Status::OK;
  }
  grpc::Status ListInstances(grpc::ServerContext*, const v1::ListInstancesRequest* r,
                             v1::ListInstancesResponse* out) override {
    absl::MutexLock lock(&mu);
    last_instance_filter = r->configuration_name() + "/" + r->node();
    auto it = instances.upper_bound(r->page_token());
    if (it == instances.end()) return grpc::Status::OK;
    *out->add_instances() = it->second;
    if (std::next(it) != instances.end()) out->set_next_page_token(it->first);
    return grpc::Status::OK;
  }

  grpc::Status GetService(grpc::ServerContext*, const v1::GetServiceRequest* r,
                          v1::Service* out) override {
    absl::MutexLock lock(&mu);
    auto it = services.find(r->name());
    if (it == services.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("service ", r->name(), " not found"));
    }
    *out = it->second;
    return grpc::Status::OK;
  }
  grpc::Status ListServices(grpc::ServerContext*, const v1::ListServicesRequest* r,
                            v1::ListServicesResponse* out) override {
    absl::MutexLock lock(&mu);
    last_service_filter = r->configuration_name();
    auto it = services.upper_bound(r->page_token());
    if (it == services.end()) return grpc::Status::OK;
    *out->add_services() = it->second;
    if (std::next(it) != services.end()) out->set_next_page_token(it->first);
    return grpc::Status::OK;
  }

  absl::Mutex mu;
  std::map<std::string, v1::Configuration> configurations;
  std::map<std::string, v1::Service> services;
  std::string last_service_filter;
  std::map<std::string, v1::Instance> instances;
  v1::Secret secret_values;
  std::vector<std::string> log;
  std::string refuse;  // a configuration ApplyConfiguration refuses
  std::string last_instance_filter;
};

constexpr char kResources[] = R"(kind: Secret
metadata: {name: creds}
stringData: {password: s3cr3t}
---
kind: ConfigMap
metadata: {name: urls}
data: {url: "opc.tcp://localhost:4840"}
---
apiVersion: akri.sh/v0
kind: Configuration
metadata: {name: cams}
spec:
  discoveryHandler: {name: debugEcho, discoveryDetails: "descriptions: [foo0]"}
  capacity: 2
)";

class DevicesCliTest : public FakeServerCliTest {
 protected:
  void SetUp() override {
    StartServer(&devices_);
    file_ = absl::StrCat(::testing::TempDir(), "/devices_cli_test.yaml");
    std::ofstream(file_) << kResources;
  }

  void AddInstance(const std::string& name, std::vector<std::string> nodes, bool held) {
    absl::MutexLock lock(&devices_.mu);
    v1::Instance& i = devices_.instances[name];
    i.set_name(name);
    i.set_configuration_name("cams");
    i.set_cdi_name(absl::StrCat("akri.sh/", name));
    i.set_capacity(2);
    for (const std::string& n : nodes) i.add_nodes(n);
    (*i.mutable_device_usage())[name + "-0"] = held ? "run-1" : "";
    (*i.mutable_device_usage())[name + "-1"] = "";
  }

  // A service with port rtsp (554 -> the brokers' 8554) and http, and the given endpoints.
  void AddService(const std::string& name, const std::string& instance,
                  std::vector<v1::ServiceEndpoint> endpoints) {
    absl::MutexLock lock(&devices_.mu);
    v1::Service& s = devices_.services[name];
    s.set_name(name);
    s.set_kind(instance.empty() ? v1::SERVICE_KIND_CONFIGURATION : v1::SERVICE_KIND_INSTANCE);
    s.set_configuration_name("cams");
    s.set_instance_name(instance);
    v1::ServicePort* rtsp = s.add_ports();
    rtsp->set_name("rtsp");
    rtsp->set_port(554);
    v1::ServicePort* http = s.add_ports();
    http->set_name("http");
    http->set_port(80);
    http->set_protocol("TCP");
    for (v1::ServiceEndpoint& e : endpoints) *s.add_endpoints() = std::move(e);
  }

  static v1::ServiceEndpoint Endpoint(const std::string& job, const std::string& address, int rtsp,
                                      bool ready) {
    v1::ServiceEndpoint e;
    e.set_broker_job_id(job);
    e.set_instance_name("cams-4294ea");
    e.set_node(address.empty() ? "" : "node-a");
    e.set_address(address);
    if (rtsp != 0) (*e.mutable_ports())["rtsp"] = rtsp;
    e.set_ready(ready);
    return e;
  }

  FakeDevices devices_;
  std::string file_;
};

TEST_F(DevicesCliTest, ApplyAndDeleteEveryDocumentInFileOrder) {
  Result r = Run({"config", "apply", file_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "secret creds applied\n"
            "config map urls applied\n"
            "configuration cams applied (generation 1)\n");
  r = Run({"config", "apply", file_});
  EXPECT_THAT(r.out, HasSubstr("configuration cams applied (generation 2)\n"));
  {
    absl::MutexLock lock(&devices_.mu);
    EXPECT_EQ(devices_.secret_values.data().at("password"), "s3cr3t");
    EXPECT_EQ(devices_.configurations["cams"].capacity(), 2);
  }
  r = Run({"config", "delete", file_});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "secret creds deleted\nconfig map urls deleted\nconfiguration cams deleted\n");
}

TEST_F(DevicesCliTest, TheServersErrorNamesTheFileAndTheResource) {
  {
    absl::MutexLock lock(&devices_.mu);
    devices_.refuse = "cams";
  }
  Result r = Run({"config", "apply", file_});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, absl::StrCat("regatta: config apply: INVALID_ARGUMENT: ", file_,
                                ": configuration cams: discovery_handler.name: no such handler\n"));
}

TEST_F(DevicesCliTest, AnInvalidFileAppliesNothing) {
  std::ofstream(file_) << kResources << "---\nkind: Configuration\nmetadata: {name: Bad}\n";
  Result r = Run({"config", "apply", file_});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("document 4 (Configuration Bad): name: 'Bad' is not a DNS-1123"));
  absl::MutexLock lock(&devices_.mu);
  EXPECT_TRUE(devices_.log.empty());
}

TEST_F(DevicesCliTest, GetAndListConfigurations) {
  EXPECT_EQ(Run({"config", "list"}).out, "No configurations found.\n");
  ASSERT_EQ(Run({"config", "apply", file_}).code, 0);
  {
    absl::MutexLock lock(&devices_.mu);
    v1::Configuration& c = devices_.configurations["cams"];
    c.mutable_status()->set_instance_count(3);
    auto* node = c.mutable_status()->add_nodes();
    node->set_node("node-a");
    node->set_error("discovery handler 'debugEcho' is not registered");
    devices_.configurations["usb"] = c;
    devices_.configurations["usb"].set_name("usb");
  }
  Result r = Run({"config", "get", "cams"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Handler:     debugEcho\n"));
  EXPECT_THAT(r.out, HasSubstr("Instances:   3\n"));
  EXPECT_THAT(r.out, HasSubstr("node-a   discovery handler 'debugEcho' is not registered"));
  r = Run({"config", "list", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["configurations"].size(), 2u);  // both pages
  EXPECT_EQ(j["configurations"][1]["name"], "usb");
  r = Run({"config", "get", "ghost"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("configuration ghost not found"));
}

TEST_F(DevicesCliTest, ListAndGetInstances) {
  EXPECT_EQ(Run({"instances", "list"}).out, "No instances found.\n");
  AddInstance("cams-4294ea", {"node-a", "node-b"}, /*held=*/true);
  AddInstance("cams-e77db4", {"node-a"}, /*held=*/false);
  Result r = Run({"instances", "list", "--configuration", "cams", "--node", "node-a"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cams-4294ea   cams            node-a,node-b   no       1/2"));
  EXPECT_THAT(r.out, HasSubstr("cams-e77db4   cams            node-a          no       0/2"));
  {
    absl::MutexLock lock(&devices_.mu);
    EXPECT_EQ(devices_.last_instance_filter, "cams/node-a");
  }
  r = Run({"instances", "get", "cams-4294ea"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Nodes:          node-a, node-b\n"));
  EXPECT_THAT(r.out, HasSubstr("cams-4294ea-0   run-1\n"));
  EXPECT_THAT(r.out, HasSubstr("cams-4294ea-1   -\n"));
  EXPECT_EQ(Run({"instances", "get"}).code, 2);  // NAME is required
}

TEST_F(DevicesCliTest, ListAndGetServices) {
  EXPECT_EQ(Run({"services", "list"}).out, "No services found.\n");
  AddService("cams-4294ea-svc", "cams-4294ea",
             {Endpoint("job-1", "node-a", 8554, true), Endpoint("job-2", "", 8555, false)});
  AddService("cams-svc", "",
             {Endpoint("job-1", "node-a", 8554, true), Endpoint("job-3", "fd00::7", 8556, true),
              Endpoint("job-4", "10.0.0.9", 8557, true), Endpoint("job-5", "10.0.0.8", 0, true),
              Endpoint("job-6", "10.0.0.7", 8559, true)});
  AddService("usb-svc", "", {Endpoint("job-7", "node-b", 8560, false)});
  Result r = Run({"services", "list", "--configuration", "cams"});
  ASSERT_EQ(r.code, 0) << r.err;
  {
    absl::MutexLock lock(&devices_.mu);
    EXPECT_EQ(devices_.last_service_filter, "cams");
  }
  EXPECT_THAT(r.out, HasSubstr("NAME              KIND            SOURCE        PORTS"));
  // Only ready endpoints, one address:port per port the broker has; the rest counted.
  EXPECT_THAT(r.out, HasSubstr("cams-4294ea-svc   instance        cams-4294ea   "
                               "rtsp:554/TCP,http:80/TCP   node-a   node-a:8554\n"));
  EXPECT_THAT(r.out, HasSubstr("cams-svc          configuration   -             "
                               "rtsp:554/TCP,http:80/TCP   node-a   "
                               "node-a:8554,[fd00::7]:8556,10.0.0.9:8557 + 1 more\n"));
  EXPECT_THAT(r.out, HasSubstr("usb-svc           configuration   -             "
                               "rtsp:554/TCP,http:80/TCP   -        <none>\n"));

  r = Run({"services", "get", "cams-4294ea-svc"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Kind:           instance\n"));
  EXPECT_THAT(r.out, HasSubstr("Instance:       cams-4294ea\n"));
  EXPECT_THAT(r.out, HasSubstr("job-1        cams-4294ea   node-a   node-a    rtsp=8554   yes\n"));
  EXPECT_THAT(r.out, HasSubstr("job-2        cams-4294ea   -        -         rtsp=8555   no\n"));
  r = Run({"services", "get", "cams-svc", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kind"], "SERVICE_KIND_CONFIGURATION");
  EXPECT_EQ(j["endpoints"][1]["address"], "fd00::7");
  EXPECT_EQ(j["endpoints"][1]["ports"]["rtsp"], 8556);
  r = Run({"services", "get", "ghost-svc"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("service ghost-svc not found"));
  EXPECT_EQ(Run({"services", "get"}).code, 2);  // NAME is required
}

TEST_F(DevicesCliTest, JobServicesShowTheirJobNodeAndUnnamedPorts) {
  {
    absl::MutexLock lock(&devices_.mu);
    v1::Service& s = devices_.services["01JOB-svc"];
    s.set_name("01JOB-svc");
    s.set_kind(v1::SERVICE_KIND_JOB);
    s.set_job_id("01JOB");
    s.set_queue("team-a");
    v1::ServicePort* web = s.add_ports();
    web->set_name("web");
    web->set_port(8080);
    web->set_target_port(8080);
    v1::ServicePort* metrics = s.add_ports();
    metrics->set_port(9090);
    metrics->set_target_port(9090);
    metrics->set_protocol("UDP");
    v1::ServiceEndpoint* e = s.add_endpoints();
    e->set_broker_job_id("01JOB");
    e->set_run_id("run-1");
    e->set_node("box");
    e->set_address("box");
    (*e->mutable_ports())["web"] = 8080;
    (*e->mutable_ports())["9090"] = 9090;
    e->set_ready(true);
  }
  Result r = Run({"services", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("01JOB-svc   job    01JOB    web:8080/TCP,9090/UDP   box     "
                               "box:8080,box:9090\n"));
  r = Run({"services", "get", "01JOB-svc"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("Kind:           job\nJob:            01JOB\nQueue:          team-a\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("Configuration:")));
  EXPECT_THAT(r.out, HasSubstr("01JOB   -          box    box       web=8080,9090=9090   yes\n"));
}

}  // namespace
}  // namespace regatta::cli
