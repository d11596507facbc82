#include "src/devices/handlers/onvif/details.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::devices::onvif {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OnvifDetailsTest, EmptyDetailsMeanNoFiltersAndOneSecond) {
  for (const char* text : {"", "{}", "  \n"}) {
    absl::StatusOr<OnvifDiscoveryDetails> details = ParseOnvifDiscoveryDetails(text);
    ASSERT_TRUE(details.ok()) << text << ": " << details.status();
    EXPECT_FALSE(details->ip_addresses.has_value());
    EXPECT_FALSE(details->mac_addresses.has_value());
    EXPECT_FALSE(details->scopes.has_value());
    EXPECT_FALSE(details->uuids.has_value());
    EXPECT_EQ(details->discovery_timeout_seconds, 1);
  }
}

TEST(OnvifDetailsTest, ReadsAkrisFieldsWithIncludeAsTheDefaultAction) {
  absl::StatusOr<OnvifDiscoveryDetails> details = ParseOnvifDiscoveryDetails(R"(
ipAddresses:
  action: Exclude
  items: [10.0.0.1, 10.0.0.2]
macAddresses:
  items: ["00:11:22:33:44:55"]
scopes:
  action: Include
  items: [onvif://www.onvif.org/name/GateCam]
uuids:
  action: Exclude
  items: []
discoveryTimeoutSeconds: 3
)");
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_TRUE(details->ip_addresses.has_value());
  EXPECT_EQ(details->ip_addresses->action, FilterAction::kExclude);
  EXPECT_THAT(details->ip_addresses->items, ElementsAre("10.0.0.1", "10.0.0.2"));
  EXPECT_EQ(details->mac_addresses->action, FilterAction::kInclude);
  EXPECT_THAT(details->mac_addresses->items, ElementsAre("00:11:22:33:44:55"));
  EXPECT_THAT(details->scopes->items, ElementsAre("onvif://www.onvif.org/name/GateCam"));
  EXPECT_EQ(details->uuids->action, FilterAction::kExclude);
  EXPECT_TRUE(details->uuids->items.empty());
  EXPECT_EQ(details->discovery_timeout_seconds, 3);
}

TEST(OnvifDetailsTest, BadDetailsNameTheField) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {"ipAdresses: {items: [a]}", "discoveryDetails.ipAdresses: unknown field"},
           {"scopes: {action: include, items: [a]}",
            "discoveryDetails.scopes.action: must be Include or Exclude"},
           {"uuids: {items: abc}", "discoveryDetails.uuids.items: must be a list of strings"},
           {"uuids: {items: [[a]]}", "discoveryDetails.uuids.items[0]: must be a string"},
           {"macAddresses: {action: Include}", "discoveryDetails.macAddresses.items: required"},
           {"macAddresses: [a, b]", "discoveryDetails.macAddresses: must be a map"},
           {"ipAddresses: {items: [a], extra: 1}", "discoveryDetails.ipAddresses.extra: unknown"},
           {"discoveryTimeoutSeconds: 0", "discoveryDetails.discoveryTimeoutSeconds: must be"},
           {"discoveryTimeoutSeconds: soon", "discoveryDetails.discoveryTimeoutSeconds: must be"},
           {"discoveryTimeoutSeconds: 1.5", "discoveryDetails.discoveryTimeoutSeconds: must be"},
           {"discoveryTimeoutSeconds: 301", "discoveryDetails.discoveryTimeoutSeconds: must be"},
           {"[a, b]", "discoveryDetails: must be a map"},
           {"scopes: {items: [a", "discoveryDetails: not valid YAML"},
       }) {
    absl::StatusOr<OnvifDiscoveryDetails> details = ParseOnvifDiscoveryDetails(c.yaml);
    ASSERT_FALSE(details.ok()) << c.yaml;
    EXPECT_EQ(details.status().code(), absl::StatusCode::kInvalidArgument) << c.yaml;
    EXPECT_THAT(details.status().message(), HasSubstr(c.error)) << c.yaml;
  }
}

std::optional<FilterList> Filter(FilterAction action, std::vector<std::string> items) {
  return FilterList{action, std::move(items)};
}

TEST(OnvifFilterTest, FollowsAkrisIncludeAndExcludeSemantics) {
  using Values = std::optional<std::vector<std::string>>;
  const Values foo = std::vector<std::string>{"foo"};
  const Values foobar = std::vector<std::string>{"foobar"};
  const Values unknown = std::nullopt;
  // No filter keeps everything, even a camera whose value is unknown.
  EXPECT_FALSE(FilteredOut(std::nullopt, foo, EqualsExactly));
  EXPECT_FALSE(FilteredOut(std::nullopt, unknown, EqualsExactly));
  // Include keeps a match only; items match whole values, not parts.
  const auto include = Filter(FilterAction::kInclude, {"foo", "bar"});
  EXPECT_FALSE(FilteredOut(include, foo, EqualsExactly));
  EXPECT_TRUE(FilteredOut(include, foobar, EqualsExactly));
  EXPECT_TRUE(FilteredOut(include, unknown, EqualsExactly));
  EXPECT_TRUE(FilteredOut(Filter(FilterAction::kInclude, {}), foo, EqualsExactly));
  // Exclude drops a match; an unknown value is dropped unless nothing is excluded.
  const auto exclude = Filter(FilterAction::kExclude, {"foo", "bar"});
  EXPECT_TRUE(FilteredOut(exclude, foo, EqualsExactly));
  EXPECT_FALSE(FilteredOut(exclude, foobar, EqualsExactly));
  EXPECT_TRUE(FilteredOut(exclude, unknown, EqualsExactly));
  EXPECT_FALSE(FilteredOut(Filter(FilterAction::kExclude, {}), unknown, EqualsExactly));
  // Several values (a camera's scopes): one match is enough.
  const Values scopes = std::vector<std::string>{"onvif://a", "onvif://b"};
  EXPECT_FALSE(FilteredOut(Filter(FilterAction::kInclude, {"onvif://b"}), scopes, EqualsExactly));
  EXPECT_TRUE(FilteredOut(Filter(FilterAction::kExclude, {"onvif://b"}), scopes, EqualsExactly));
}

TEST(OnvifFilterTest, AddressesCompareWithoutCaseScopesExactly) {
  const auto mac = Filter(FilterAction::kInclude, {"AA:BB:CC:00:11:22"});
  EXPECT_FALSE(FilteredOut(mac, std::vector<std::string>{"aa:bb:cc:00:11:22"}, EqualsIgnoringCase));
  const auto scope = Filter(FilterAction::kInclude, {"onvif://www.onvif.org/name/Cam"});
  EXPECT_TRUE(FilteredOut(scope, std::vector<std::string>{"onvif://www.onvif.org/name/cam"},
                          EqualsExactly));
}

}  // namespace
}  // namespace regatta::devices::onvif
