#include "src/devices/config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace regatta::devices {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

using regatta::v1::ConfigMap;
using regatta::v1::Configuration;
using regatta::v1::Secret;

// An Akri debug-echo Configuration as Akri's own examples write it, plus what Regatta adds.
constexpr char kDebugEchoYaml[] = R"(
apiVersion: akri.sh/v0
kind: Configuration
metadata:
  name: akri-debug-echo-foo
  namespace: default
spec:
  discoveryHandler:
    name: debugEcho
    discoveryDetails: |+
      descriptions:
      - "foo0"
      - "foo1"
    discoveryProperties:
    - name: literal
      value: "42"
    - name: password
      valueFrom:
        secretKeyRef:
          name: creds
          key: password
    - name: endpoint
      valueFrom:
        configMapKeyRef: {name: endpoints, key: url, optional: true}
  capacity: 2
  brokerSpec:
    brokerPodSpec:
      queue: brokers
      job:
        priority: 3
        task:
          command: ["/usr/bin/broker", "--verbose"]
          env: {LOG: "debug"}
          resources: {requests: {cpu: 1, memory: 64Mi}}
          activeDeadline: 1m30s
  instanceServiceSpec:
    ports:
    - {name: grpc, port: 8083, targetPort: 8083, protocol: TCP}
  configurationServiceSpec:
    ports:
    - name: grpc
      port: 80
  brokerProperties:
    RESOLUTION_WIDTH: "800"
    ENABLED: true
)";

Configuration ValidConfiguration() {
  absl::StatusOr<std::vector<Resource>> parsed = ParseResources(kDebugEchoYaml);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  if (!parsed.ok() || parsed->size() != 1) return {};
  return std::get<Configuration>((*parsed)[0]);
}

// ---- Files ----------------------------------------------------------------------------------

TEST(ParseResourcesTest, ReadsAnAkriConfiguration) {
  Configuration c = ValidConfiguration();
  EXPECT_EQ(c.name(), "akri-debug-echo-foo");
  EXPECT_EQ(c.discovery_handler().name(), "debugEcho");
  EXPECT_EQ(c.discovery_handler().discovery_details(), "descriptions:\n- \"foo0\"\n- \"foo1\"\n");
  ASSERT_EQ(c.discovery_handler().discovery_properties_size(), 3);
  EXPECT_EQ(c.discovery_handler().discovery_properties(0).value(), "42");
  EXPECT_EQ(c.discovery_handler().discovery_properties(1).value_from().secret_key_ref().key(),
            "password");
  EXPECT_FALSE(c.discovery_handler().discovery_properties(1).has_value());
  EXPECT_TRUE(
      c.discovery_handler().discovery_properties(2).value_from().config_map_key_ref().optional());
  EXPECT_EQ(c.capacity(), 2);
  const auto& broker = c.broker_spec().broker_pod_spec();
  EXPECT_EQ(broker.queue(), "brokers");
  EXPECT_EQ(broker.job().priority(), 3u);
  EXPECT_THAT(broker.job().task().command(), ElementsAre("/usr/bin/broker", "--verbose"));
  EXPECT_EQ(broker.job().task().resources().requests().at("cpu"), "1");
  EXPECT_EQ(broker.job().task().active_deadline().seconds(), 90);
  EXPECT_EQ(c.instance_service_spec().ports(0).target_port(), 8083);
  EXPECT_EQ(c.configuration_service_spec().ports(0).port(), 80);
  // Scalars are typed by the field: a YAML boolean is the string "true" in a string map.
  EXPECT_THAT(c.broker_properties(),
              UnorderedElementsAre(Pair("RESOLUTION_WIDTH", "800"), Pair("ENABLED", "true")));
}

TEST(ParseResourcesTest, SeveralKindsPerFileAndJson) {
  absl::StatusOr<std::vector<Resource>> parsed = ParseResources(R"(
kind: Secret
apiVersion: v1
metadata: {name: creds}
type: Opaque
data:
  password: czNjcjN0
stringData:
  username: admin
---
kind: ConfigMap
metadata: {name: endpoints}
data: {url: "opc.tcp://localhost:4840", port: 4840}
---
# The concise form: no envelope but the name, fields at the top level, capacity defaulted.
name: usb-cams
discoveryHandler: {name: udev, discoveryDetails: 'groupRecursive: true'}
---
{"kind": "Configuration", "metadata": {"name": "from-json"},
 "spec": {"discoveryHandler": {"name": "onvif"}, "capacity": 3}}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 4u);
  const Secret& secret = std::get<Secret>((*parsed)[0]);
  EXPECT_EQ(secret.name(), "creds");
  EXPECT_THAT(secret.data(),
              UnorderedElementsAre(Pair("password", "s3cr3t"), Pair("username", "admin")));
  const ConfigMap& config_map = std::get<ConfigMap>((*parsed)[1]);
  EXPECT_THAT(config_map.data(),
              UnorderedElementsAre(Pair("url", "opc.tcp://localhost:4840"), Pair("port", "4840")));
  const Configuration& concise = std::get<Configuration>((*parsed)[2]);
  EXPECT_EQ(concise.name(), "usb-cams");
  EXPECT_EQ(concise.capacity(), 1);
  EXPECT_EQ(concise.discovery_handler().discovery_details(), "groupRecursive: true");
  EXPECT_EQ(std::get<Configuration>((*parsed)[3]).capacity(), 3);
}

// A manifest saved with `kubectl get -o yaml` carries what the API server set: ignored.
TEST(ParseResourcesTest, IgnoresServerSetMetadata) {
  absl::StatusOr<std::vector<Resource>> parsed = ParseResources(R"(
apiVersion: akri.sh/v0
kind: Configuration
metadata:
  name: cams
  namespace: default
  uid: 5b1c2a34-8e0f-4d59-9f3e-0a6c1f2b7d11
  generation: 3
  resourceVersion: "81234"
  creationTimestamp: "2026-11-30T10:00:00Z"
  selfLink: /apis/akri.sh/v0/namespaces/default/configurations/cams
  managedFields:
  - manager: kubectl-client-side-apply
    operation: Update
spec:
  discoveryHandler: {name: debugEcho, discoveryDetails: "descriptions: [a]"}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ(std::get<Configuration>((*parsed)[0]).name(), "cams");
}

TEST(ParseResourcesTest, ErrorsNameTheDocumentAndTheField) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"kind: Configuration\nmetadata: {name: a}\nspec:\n  capacity: lots\n"
       "  discoveryHandler: {name: x}\n",
       "document 1 (Configuration a): spec.capacity: expected an integer, got 'lots'"},
      {"---\nkind: Configuration\nmetadata: {name: a}\nspec: {discoveryHandler: {name: x}, "
       "capacitty: 2}\n",
       "document 1 (Configuration a): spec.capacitty: unknown field"},
      {"metadata: {name: a}\nspec:\n  discoveryHandler: {name: x}\n  brokerSpec:\n"
       "    brokerJobSpec: {queue: q, job: {task: {command: [b]}}}\n"
       "    brokerPodSpec: {queue: q, job: {task: {command: [b]}}}\n",
       "spec.brokerSpec: exactly one of brokerJobSpec, brokerPodSpec"},
      {"metadata: {name: a}\nspec:\n  discoveryHandler:\n    name: x\n"
       "    discoveryProperties:\n    - {name: p, value: v}\n"
       "    - name: q\n      valueFrom: {secretKeyRef: {name: s, key: k}, "
       "configMapKeyRef: {name: m, key: k}}\n",
       "spec.discoveryHandler.discoveryProperties[1].valueFrom: exactly one of secretKeyRef, "
       "configMapKeyRef"},
      {"kind: Camera\nmetadata: {name: a}\n",
       "document 1 (Camera a): kind: 'Camera' is not Configuration, Secret or ConfigMap"},
      {"apiVersion: v2\n", "apiVersion: 'v2' is not akri.sh/v0, regatta.dev/v1 or v1"},
      {"kind: Secret\nmetadata: {name: s}\ndata: {k: '%%%'}\n",
       "document 1 (Secret s): data[\"k\"]: not base64"},
      {"kind: ConfigMap\nmetadata: {name: m}\ndata: [a]\n", "data: expected a mapping, got a list"},
      {"metadata: {name: a, finalizers: [x]}\n", "metadata.finalizers: unknown field"},
      {"kind: Secret\nmetadata: {name: Bad_Name}\n", "name: 'Bad_Name' is not a DNS-1123"},
      {"a: [\n", "line "},
      {"---\n---\nkind: ConfigMap\nmetadata: {name: ok}\n---\nkind: Secret\n",
       "document 3 (Secret): name: required"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<Resource>> parsed = ParseResources(c.text);
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.error)) << c.text;
  }
}

// ---- Validation -----------------------------------------------------------------------------

TEST(ValidateConfigurationTest, NamesTheWrongField) {
  struct Case {
    std::function<void(Configuration&)> change;
    std::string error;
  };
  const Case cases[] = {
      {[](Configuration& c) { c.clear_name(); }, "name: required"},
      {[](Configuration& c) { c.set_name("Cams"); }, "name: 'Cams' is not a DNS-1123 label"},
      {[](Configuration& c) { c.set_name("-cams"); }, "name: '-cams'"},
      {[](Configuration& c) { c.set_name(std::string(57, 'a')); }, "of at most 56 characters"},
      {[](Configuration& c) { c.mutable_discovery_handler()->clear_name(); },
       "discoveryHandler.name: required"},
      {[](Configuration& c) { c.mutable_discovery_handler()->set_name("../x"); },
       "discoveryHandler.name: '../x' is not a handler name"},
      {[](Configuration& c) { c.set_capacity(-1); },
       "capacity: must be between 1 and 10000, got -1"},
      {[](Configuration& c) { c.set_capacity(2147483647); },
       "capacity: must be between 1 and 10000, got 2147483647"},
      {[](Configuration& c) {
         c.mutable_discovery_handler()->mutable_discovery_properties(0)->clear_value();
       },
       "discoveryHandler.discoveryProperties[0]: exactly one of value, valueFrom"},
      {[](Configuration& c) {
         c.mutable_discovery_handler()->mutable_discovery_properties(1)->set_value("x");
       },
       "discoveryHandler.discoveryProperties[1]: exactly one of value, valueFrom"},
      {[](Configuration& c) {
         c.mutable_discovery_handler()
             ->mutable_discovery_properties(1)
             ->mutable_value_from()
             ->clear_secret_key_ref();
       },
       "discoveryHandler.discoveryProperties[1].valueFrom: exactly one of secretKeyRef, "
       "configMapKeyRef"},
      {[](Configuration& c) {
         c.mutable_discovery_handler()
             ->mutable_discovery_properties(1)
             ->mutable_value_from()
             ->mutable_secret_key_ref()
             ->clear_key();
       },
       "discoveryHandler.discoveryProperties[1].valueFrom.secretKeyRef.key: required"},
      {[](Configuration& c) {
         c.mutable_discovery_handler()->mutable_discovery_properties(2)->set_name("password");
       },
       "discoveryHandler.discoveryProperties[2].name: 'password' is given twice"},
      {[](Configuration& c) { c.mutable_broker_spec()->clear_broker(); },
       "brokerSpec: exactly one of brokerJobSpec, brokerPodSpec"},
      {[](Configuration& c) { c.mutable_broker_spec()->mutable_broker_pod_spec()->clear_queue(); },
       "brokerSpec.brokerPodSpec.queue: required"},
      {[](Configuration& c) { c.mutable_broker_spec()->mutable_broker_job_spec()->set_queue("q"); },
       "brokerSpec.brokerJobSpec.job.task: a broker needs a command or an image"},
      {[](Configuration& c) { c.mutable_instance_service_spec()->mutable_ports(0)->set_port(0); },
       "instanceServiceSpec.ports[0].port: must be within 1..65535, got 0"},
      {[](Configuration& c) {
         c.mutable_configuration_service_spec()->mutable_ports(0)->set_protocol("SCTP");
       },
       "configurationServiceSpec.ports[0].protocol: 'SCTP' is not TCP or UDP"},
      {[](Configuration& c) {
         *c.mutable_instance_service_spec()->add_ports() = c.instance_service_spec().ports(0);
       },
       "instanceServiceSpec.ports[1].name: 'grpc' is given twice"},
      {[](Configuration& c) { c.mutable_configuration_service_spec()->clear_ports(); },
       "configurationServiceSpec.ports: a service needs at least one port"},
      {[](Configuration& c) { (*c.mutable_broker_properties())["A=B"] = "x"; },
       "brokerProperties[\"A=B\"]: not an environment variable name"},
  };
  ASSERT_TRUE(ValidateConfiguration(ValidConfiguration()).ok());
  for (const Case& c : cases) {
    Configuration configuration = ValidConfiguration();
    c.change(configuration);
    absl::Status status = ValidateConfiguration(configuration);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << c.error;
    EXPECT_THAT(status.message(), HasSubstr(c.error));
  }
}

TEST(ValidateConfigurationTest, CapacityDefaultsToOne) {
  Configuration c = ValidConfiguration();
  c.clear_capacity();
  EXPECT_EQ(ValidateConfiguration(c).code(), absl::StatusCode::kInvalidArgument);
  ApplyDefaults(c);
  EXPECT_EQ(c.capacity(), 1);
  EXPECT_TRUE(ValidateConfiguration(c).ok());
}

TEST(ValidateNamesTest, DnsLabelsAndSubdomains) {
  EXPECT_TRUE(IsDnsLabel("a"));
  EXPECT_TRUE(IsDnsLabel("cam-1"));
  EXPECT_TRUE(IsDnsLabel(std::string(63, 'a')));
  EXPECT_FALSE(IsDnsLabel(std::string(64, 'a')));
  EXPECT_FALSE(IsDnsLabel(""));
  EXPECT_FALSE(IsDnsLabel("cam-"));
  EXPECT_FALSE(IsDnsLabel("cam.1"));
  EXPECT_FALSE(IsDnsLabel("cam_1"));
  EXPECT_TRUE(IsDnsSubdomain("creds.prod"));
  EXPECT_FALSE(IsDnsSubdomain("creds..prod"));
  EXPECT_FALSE(IsDnsSubdomain(".creds"));
  Secret secret;
  secret.set_name("creds");
  (*secret.mutable_data())["bad key"] = "x";
  EXPECT_THAT(ValidateSecret(secret).message(), HasSubstr("data[\"bad key\"]: not a valid key"));
  ConfigMap config_map;
  config_map.set_name("urls");
  (*config_map.mutable_data())["url.primary"] = "x";
  EXPECT_TRUE(ValidateConfigMap(config_map).ok());
}

// ---- Resolution -----------------------------------------------------------------------------

class ResolveTest : public ::testing::Test {
 protected:
  SecretLookup Secrets() {
    return [this](absl::string_view name) -> absl::StatusOr<Secret> {
      ++secret_lookups_;
      auto it = secrets_.find(std::string(name));
      if (it == secrets_.end()) return absl::NotFoundError(absl::StrCat("secret ", name));
      return it->second;
    };
  }
  ConfigMapLookup ConfigMaps() {
    return [this](absl::string_view name) -> absl::StatusOr<ConfigMap> {
      if (config_maps_down_) return absl::UnavailableError("store is down");
      auto it = config_maps_.find(std::string(name));
      if (it == config_maps_.end()) return absl::NotFoundError(absl::StrCat("config map ", name));
      return it->second;
    };
  }
  void AddSecret(const std::string& name, const std::string& key, const std::string& value) {
    secrets_[name].set_name(name);
    (*secrets_[name].mutable_data())[key] = value;
  }
  void AddConfigMap(const std::string& name, const std::string& key, const std::string& value) {
    config_maps_[name].set_name(name);
    (*config_maps_[name].mutable_data())[key] = value;
  }

  std::map<std::string, Secret> secrets_;
  std::map<std::string, ConfigMap> config_maps_;
  bool config_maps_down_ = false;
  int secret_lookups_ = 0;
};

TEST_F(ResolveTest, LiteralsSecretsAndConfigMaps) {
  AddSecret("creds", "password", std::string("s3\0cr3t", 7));
  AddConfigMap("endpoints", "url", "opc.tcp://localhost:4840");
  absl::StatusOr<v0::DiscoverRequest> request =
      MakeDiscoverRequest(ValidConfiguration(), Secrets(), ConfigMaps());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->discovery_details(), "descriptions:\n- \"foo0\"\n- \"foo1\"\n");
  ASSERT_EQ(request->discovery_properties_size(), 3);
  EXPECT_EQ(request->discovery_properties().at("literal").vec(), "42");
  EXPECT_EQ(request->discovery_properties().at("password").vec(), std::string("s3\0cr3t", 7));
  EXPECT_EQ(request->discovery_properties().at("endpoint").vec(), "opc.tcp://localhost:4840");
}

TEST_F(ResolveTest, OptionalReferencesMayBeMissing) {
  AddSecret("creds", "password", "s3cr3t");
  absl::StatusOr<std::map<std::string, std::string>> properties =
      ResolveDiscoveryProperties(ValidConfiguration().discovery_handler(), Secrets(), ConfigMaps());
  ASSERT_TRUE(properties.ok()) << properties.status();
  EXPECT_THAT(*properties, ElementsAre(Pair("literal", "42"), Pair("password", "s3cr3t")));
  // The config map exists but lacks the key: still optional.
  AddConfigMap("endpoints", "other", "x");
  properties =
      ResolveDiscoveryProperties(ValidConfiguration().discovery_handler(), Secrets(), ConfigMaps());
  ASSERT_TRUE(properties.ok()) << properties.status();
  EXPECT_EQ(properties->count("endpoint"), 0u);
}

TEST_F(ResolveTest, MissingRequiredReferencesAreClearErrors) {
  absl::StatusOr<v0::DiscoverRequest> request =
      MakeDiscoverRequest(ValidConfiguration(), Secrets(), ConfigMaps());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(request.status().message(),
            "discoveryHandler.discoveryProperties[1] (password): secret 'creds' not found");

  AddSecret("creds", "username", "admin");
  request = MakeDiscoverRequest(ValidConfiguration(), Secrets(), ConfigMaps());
  EXPECT_EQ(request.status().message(),
            "discoveryHandler.discoveryProperties[1] (password): secret 'creds' has no key "
            "'password'");
}

TEST_F(ResolveTest, LookupFailuresArePassedOn) {
  AddSecret("creds", "password", "s3cr3t");
  config_maps_down_ = true;
  absl::StatusOr<v0::DiscoverRequest> request =
      MakeDiscoverRequest(ValidConfiguration(), Secrets(), ConfigMaps());
  EXPECT_EQ(request.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(secret_lookups_, 1);
}

}  // namespace
}  // namespace regatta::devices
