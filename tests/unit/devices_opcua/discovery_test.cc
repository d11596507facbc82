#include "src/devices/handlers/opcua/discovery.h"

#include <map>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/devices/handlers/opcua/finder.h"

namespace regatta::devices::opcua {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

absl::Status DetailsError(absl::string_view yaml) {
  return ParseOpcuaDiscoveryDetails(yaml).status();
}

TEST(OpcuaDetailsTest, DefaultsToTheLocalDiscoveryServerAndNoFilter) {
  absl::StatusOr<OpcuaDiscoveryDetails> details =
      ParseOpcuaDiscoveryDetails("opcuaDiscoveryMethod:\n  standard: {}\n");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_THAT(details->discovery_urls, ElementsAre("opc.tcp://localhost:4840/"));
  EXPECT_FALSE(details->application_names.has_value());
  // `standard:` with nothing under it is the same.
  details = ParseOpcuaDiscoveryDetails("opcuaDiscoveryMethod:\n  standard:\n");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_THAT(details->discovery_urls, ElementsAre("opc.tcp://localhost:4840/"));
}

TEST(OpcuaDetailsTest, ReadsAkrisFullForm) {
  absl::StatusOr<OpcuaDiscoveryDetails> details = ParseOpcuaDiscoveryDetails(R"(
opcuaDiscoveryMethod:
  standard:
    discoveryUrls:
    - opc.tcp://127.0.0.1:4855/
    - opc.tcp://[::1]:4856
applicationNames:
  action: Exclude
  items:
  - "Some application name"
)");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_THAT(details->discovery_urls,
              ElementsAre("opc.tcp://127.0.0.1:4855/", "opc.tcp://[::1]:4856"));
  ASSERT_TRUE(details->application_names.has_value());
  EXPECT_EQ(details->application_names->action, FilterList::Action::kExclude);
  EXPECT_THAT(details->application_names->items, ElementsAre("Some application name"));

  // action defaults to Include, as in Akri.
  details = ParseOpcuaDiscoveryDetails(
      "opcuaDiscoveryMethod: {standard: {discoveryUrls: []}}\napplicationNames: {items: [a]}");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_THAT(details->discovery_urls, IsEmpty());
  EXPECT_EQ(details->application_names->action, FilterList::Action::kInclude);
}

TEST(OpcuaDetailsTest, BadDetailsNameTheField) {
  EXPECT_EQ(DetailsError("").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(DetailsError("[1, 2").message(), HasSubstr("discoveryDetails: not valid YAML"));
  EXPECT_THAT(DetailsError("applicationNames: {items: [a]}").message(),
              HasSubstr("discoveryDetails.opcuaDiscoveryMethod: required"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {scan: {}}").message(),
              HasSubstr("discoveryDetails.opcuaDiscoveryMethod.scan: unknown discovery method"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: standard").message(),
              HasSubstr("discoveryDetails.opcuaDiscoveryMethod: must name exactly one method"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {discoveryUrl: [x]}}").message(),
              HasSubstr("discoveryDetails.opcuaDiscoveryMethod.standard.discoveryUrl: unknown"));
  EXPECT_THAT(
      DetailsError("opcuaDiscoveryMethod: {standard: {discoveryUrls: opc.tcp://a:1}}").message(),
      HasSubstr("standard.discoveryUrls: must be a list"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {discoveryUrls: "
                           "[opc.tcp://a:1, 'http://b:2']}}")
                  .message(),
              HasSubstr("standard.discoveryUrls[1]: 'http://b:2' is not an opc.tcp:// URL"));
  EXPECT_THAT(
      DetailsError("opcuaDiscoveryMethod: {standard: {discoveryUrls: [opc.tcp://a]}}").message(),
      HasSubstr("discoveryUrls[0]: 'opc.tcp://a': missing port"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {}}\napplicationNames: "
                           "{action: include, items: [a]}")
                  .message(),
              HasSubstr("discoveryDetails.applicationNames.action: must be Include or Exclude"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {}}\napplicationNames: "
                           "{action: Include}")
                  .message(),
              HasSubstr("discoveryDetails.applicationNames.items: required"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {}}\napplicationNames: "
                           "{items: [a, [b]]}")
                  .message(),
              HasSubstr("discoveryDetails.applicationNames.items[1]: must be a non-empty string"));
  EXPECT_THAT(DetailsError("opcuaDiscoveryMethod: {standard: {}}\nfoo: 1").message(),
              HasSubstr("discoveryDetails.foo: unknown field"));
}

TEST(OpcuaUrlTest, ParsesHostPortAndPath) {
  absl::StatusOr<OpcTcpUrl> url = ParseOpcTcpUrl("opc.tcp://10.0.0.5:4840/UA/Server");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "10.0.0.5");
  EXPECT_EQ(url->port, 4840);
  EXPECT_EQ(url->path, "/UA/Server");
  url = ParseOpcTcpUrl("OPC.TCP://[fe80::1]:48010");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->host, "fe80::1");
  EXPECT_EQ(url->path, "");
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://:4840").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://h:0").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://h:65536").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://h:+1").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://u@h:1").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://[::1]").ok());
  EXPECT_FALSE(ParseOpcTcpUrl("opc.tcp://h:1/" + std::string(4096, 'p')).ok());
}

TEST(OpcuaFilterTest, IncludeKeepsOnlyTheItemsExcludeAllButThem) {
  EXPECT_TRUE(ShouldInclude(std::nullopt, "anything"));
  FilterList filter{FilterList::Action::kInclude, {"a", "b"}};
  EXPECT_TRUE(ShouldInclude(filter, "a"));
  EXPECT_FALSE(ShouldInclude(filter, "c"));
  EXPECT_FALSE(ShouldInclude(filter, "A")) << "names match exactly, as in Akri";
  filter.action = FilterList::Action::kExclude;
  EXPECT_FALSE(ShouldInclude(filter, "a"));
  EXPECT_TRUE(ShouldInclude(filter, "c"));
  EXPECT_FALSE(ShouldInclude(FilterList{FilterList::Action::kInclude, {}}, "a"));
  EXPECT_TRUE(ShouldInclude(FilterList{FilterList::Action::kExclude, {}}, "a"));
}

// Answers FindServers from a table; hosts and addresses listed as down fail.
class FakeClient : public DiscoveryClient {
 public:
  absl::StatusOr<std::vector<ApplicationDescription>> FindServers(
      absl::string_view discovery_url) override {
    ++find_calls;
    auto it = servers.find(std::string(discovery_url));
    if (it == servers.end()) return absl::UnavailableError("connection refused");
    return it->second;
  }
  bool Reachable(absl::string_view discovery_url) override {
    reachability_checked.insert(std::string(discovery_url));
    return !unreachable.contains(std::string(discovery_url));
  }
  bool Resolves(absl::string_view host) override {
    return !unresolvable.contains(std::string(host));
  }

  std::map<std::string, std::vector<ApplicationDescription>> servers;
  std::set<std::string> unreachable;
  std::set<std::string> unresolvable;
  std::set<std::string> reachability_checked;
  int find_calls = 0;
};

ApplicationDescription App(const std::string& name, std::vector<std::string> urls,
                           ApplicationType type = ApplicationType::kServer) {
  ApplicationDescription app;
  app.application_uri = "urn:" + name;
  app.application_name.text = name;
  app.application_type = static_cast<uint32_t>(type);
  app.discovery_urls = std::move(urls);
  return app;
}

TEST(OpcuaDiscoveryTest, FindsServersSkipsOtherApplicationTypesAndPrefersOpcTcp) {
  FakeClient client;
  const std::string lds = "opc.tcp://127.0.0.1:4840/";
  client.servers[lds] = {
      App("LDS", {lds}, ApplicationType::kDiscoveryServer),
      App("Client", {"opc.tcp://127.0.0.1:1"}, ApplicationType::kClient),
      App("Both", {"opc.tcp://127.0.0.1:2"}, ApplicationType::kClientAndServer),
      App("Boiler", {"https://127.0.0.1:443/", "opc.tcp://127.0.0.1:4855/"}),
      App("Pump", {"opc.tcp://127.0.0.1:4856/"}),
      App("No URL", {}),
  };
  OpcuaDiscoveryDetails details{{lds}, std::nullopt};
  DiscoveryResult result = DiscoverServers(details, client);
  EXPECT_THAT(result.server_urls,
              ElementsAre("opc.tcp://127.0.0.1:4855/", "opc.tcp://127.0.0.1:4856/"));
  // Servers listed at other addresses than the one asked are checked for reachability.
  EXPECT_THAT(client.reachability_checked,
              ElementsAre("opc.tcp://127.0.0.1:4855/", "opc.tcp://127.0.0.1:4856/"));

  const std::vector<v0::Device> devices = ServerDevices(result.server_urls);
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id(), "opc.tcp://127.0.0.1:4855/");
  EXPECT_EQ(devices[0].properties().at("OPCUA_DISCOVERY_URL"), "opc.tcp://127.0.0.1:4855/");
  EXPECT_THAT(devices[0].mounts(), IsEmpty());
  EXPECT_THAT(devices[0].device_specs(), IsEmpty());
}

TEST(OpcuaDiscoveryTest, AppliesTheApplicationNameFilter) {
  FakeClient client;
  const std::string lds = "opc.tcp://127.0.0.1:4840/";
  client.servers[lds] = {App("Boiler", {"opc.tcp://127.0.0.1:1"}),
                         App("Pump", {"opc.tcp://127.0.0.1:2"})};
  OpcuaDiscoveryDetails details{{lds}, FilterList{FilterList::Action::kInclude, {"Pump"}}};
  EXPECT_THAT(DiscoverServers(details, client).server_urls, ElementsAre("opc.tcp://127.0.0.1:2"));
  details.application_names->action = FilterList::Action::kExclude;
  EXPECT_THAT(DiscoverServers(details, client).server_urls, ElementsAre("opc.tcp://127.0.0.1:1"));
}

TEST(OpcuaDiscoveryTest, SkipsFailedUrlsAndUnreachableServersAndRemovesDuplicates) {
  FakeClient client;
  const std::string lds1 = "opc.tcp://127.0.0.1:4840/";
  const std::string lds2 = "opc.tcp://10.0.0.1:4840/";
  const std::string down = "opc.tcp://10.0.0.9:4840/";
  client.servers[lds1] = {App("Boiler", {"opc.tcp://10.0.0.5:4855/"}),
                          App("Gone", {"opc.tcp://10.0.0.6:4855/"})};
  client.servers[lds2] = {App("Boiler", {"opc.tcp://10.0.0.5:4855/"})};
  client.unreachable.insert("opc.tcp://10.0.0.6:4855/");
  OpcuaDiscoveryDetails details{{down, lds1, lds2}, std::nullopt};
  DiscoveryResult result = DiscoverServers(details, client);
  EXPECT_THAT(result.server_urls, ElementsAre("opc.tcp://10.0.0.5:4855/"));
  EXPECT_EQ(client.find_calls, 3);
  ASSERT_EQ(result.problems.size(), 2u);
  EXPECT_THAT(result.problems[0], HasSubstr("FindServers on opc.tcp://10.0.0.9:4840/"));
  EXPECT_THAT(result.problems[1], HasSubstr("'Gone' at opc.tcp://10.0.0.6:4855/ is not reachable"));
}

TEST(OpcuaDiscoveryTest, AServerAnsweringForItselfNeedsNoExtraCheck) {
  FakeClient client;
  const std::string self = "opc.tcp://127.0.0.1:4855";
  client.servers[self] = {App("Boiler", {"opc.tcp://127.0.0.1:4855/"})};
  DiscoveryResult result = DiscoverServers({{self}, std::nullopt}, client);
  EXPECT_THAT(result.server_urls, ElementsAre("opc.tcp://127.0.0.1:4855/"));
  EXPECT_THAT(client.reachability_checked, IsEmpty());
}

TEST(OpcuaDiscoveryTest, AnUnresolvableAnnouncedHostIsReplacedByTheAddressAsked) {
  FakeClient client;
  const std::string asked = "opc.tcp://10.0.0.5:4840/";
  client.servers[asked] = {App("Boiler", {"opc.tcp://plc-7.factory:4840/UA/Boiler"})};
  client.unresolvable.insert("plc-7.factory");
  DiscoveryResult result = DiscoverServers({{asked}, std::nullopt}, client);
  EXPECT_THAT(result.server_urls, ElementsAre("opc.tcp://10.0.0.5:4840/UA/Boiler"));
}

TEST(OpcuaFinderTest, PrepareRejectsBadDetailsAndListsWhatTheClientFinds) {
  FakeClient client;
  client.servers["opc.tcp://127.0.0.1:4855/"] = {App("Boiler", {"opc.tcp://127.0.0.1:4855/"})};
  OpcuaFinder finder(&client);
  v0::DiscoverRequest request;
  request.set_discovery_details("opcuaDiscoveryMethod: {standard: {discoveryUrls: [x]}}");
  absl::StatusOr<std::unique_ptr<DeviceQuery>> query = finder.Prepare(request);
  EXPECT_EQ(query.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(query.status().message(), HasSubstr("discoveryUrls[0]"));

  request.set_discovery_details(
      "opcuaDiscoveryMethod: {standard: {discoveryUrls: ['opc.tcp://127.0.0.1:4855/']}}");
  query = finder.Prepare(request);
  ASSERT_TRUE(query.ok()) << query.status();
  absl::StatusOr<std::vector<v0::Device>> devices = (*query)->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].id(), "opc.tcp://127.0.0.1:4855/");

  client.servers.clear();
  devices = (*query)->ListDevices();
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_THAT(*devices, IsEmpty()) << "a server that stops answering is no longer listed";
  EXPECT_FALSE((*query)->WaitForPossibleChange(absl::Milliseconds(1)));
}

}  // namespace
}  // namespace regatta::devices::opcua
