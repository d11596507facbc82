#ifndef REGATTA_TESTS_CONFORMANCE_DEVICE_VIEWS_CONFORMANCE_H_
#define REGATTA_TESTS_CONFORMANCE_DEVICE_VIEWS_CONFORMANCE_H_

// The DeviceViews part of the Store conformance suite (the rules of src/store/device_views.h).
// Included by store_conformance.h after the pipeline cases; do not include it on its own.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/store/device_views.h"

namespace regatta::store::testing {

// ---- Test data ------------------------------------------------------------------------------

inline Mutation DeviceEvent(regatta::v1::Event event, int64_t seconds = 0) {
  *event.mutable_created() = TestTimestamp(seconds);
  return DeviceChange{std::move(event)};
}

inline regatta::v1::Configuration TestConfiguration(absl::string_view name, int capacity = 2) {
  regatta::v1::Configuration c;
  c.set_name(std::string(name));
  c.mutable_discovery_handler()->set_name("debugEcho");
  c.mutable_discovery_handler()->set_discovery_details("descriptions: [foo0, foo1]");
  auto* property = c.mutable_discovery_handler()->add_discovery_properties();
  property->set_name("password");
  property->mutable_value_from()->mutable_secret_key_ref()->set_name("creds");
  property->mutable_value_from()->mutable_secret_key_ref()->set_key("password");
  c.set_capacity(capacity);
  auto* broker = c.mutable_broker_spec()->mutable_broker_pod_spec();
  broker->set_queue("brokers");
  broker->mutable_job()->mutable_task()->add_command("/bin/broker");
  auto* port = c.mutable_instance_service_spec()->add_ports();
  port->set_name("grpc");
  port->set_port(8083);
  (*c.mutable_broker_properties())["RESOLUTION"] = "800x600";
  return c;
}

inline Mutation ConfigurationApplied(regatta::v1::Configuration c, int64_t seconds = 0) {
  regatta::v1::Event e;
  *e.mutable_configuration_applied()->mutable_configuration() = std::move(c);
  return DeviceEvent(std::move(e), seconds);
}

inline Mutation ConfigurationDeleted(absl::string_view name) {
  regatta::v1::Event e;
  e.mutable_configuration_deleted()->set_name(std::string(name));
  return DeviceEvent(std::move(e));
}

inline Mutation StatusUpdated(absl::string_view configuration, absl::string_view node,
                              absl::string_view error, int64_t seconds = 0) {
  regatta::v1::Event e;
  auto* s = e.mutable_configuration_status_updated();
  s->set_configuration_name(std::string(configuration));
  s->set_node(std::string(node));
  s->set_error(std::string(error));
  return DeviceEvent(std::move(e), seconds);
}

// An Instance named "<configuration>-<suffix>" (the views take names as given).
inline regatta::v1::Instance TestInstance(absl::string_view configuration, absl::string_view suffix,
                                          int capacity = 2, bool shared = false) {
  regatta::v1::Instance i;
  i.set_name(absl::StrCat(configuration, "-", suffix));
  i.set_configuration_name(std::string(configuration));
  i.set_cdi_name(absl::StrCat("regatta.dev/", configuration, "=", suffix));
  i.set_capacity(capacity);
  i.set_shared(shared);
  i.set_device_id(absl::StrCat("device-", suffix));
  (*i.mutable_properties())["DEBUG_ECHO_DESCRIPTION"] = std::string(suffix);
  (*i.mutable_broker_properties())["DEBUG_ECHO_DESCRIPTION"] = std::string(suffix);
  auto* spec = i.add_device_specs();
  spec->set_host_path(absl::StrCat("/dev/", suffix));
  spec->set_container_path(absl::StrCat("/dev/", suffix));
  spec->set_permissions("rw");
  return i;
}

inline Mutation NodeSeen(absl::string_view node, regatta::v1::Instance instance,
                         int64_t seconds = 0) {
  regatta::v1::Event e;
  e.mutable_instance_node_seen()->set_node(std::string(node));
  *e.mutable_instance_node_seen()->mutable_instance() = std::move(instance);
  return DeviceEvent(std::move(e), seconds);
}

inline Mutation NodeLost(absl::string_view instance, absl::string_view node) {
  regatta::v1::Event e;
  e.mutable_instance_node_lost()->set_instance_name(std::string(instance));
  e.mutable_instance_node_lost()->set_node(std::string(node));
  return DeviceEvent(std::move(e));
}

inline Mutation SlotClaimed(absl::string_view instance, int index, absl::string_view holder,
                            absl::string_view node) {
  regatta::v1::Event e;
  auto* c = e.mutable_device_slot_claimed();
  c->set_instance_name(std::string(instance));
  c->set_slot(absl::StrCat(instance, "-", index));
  c->set_holder(std::string(holder));
  c->set_node(std::string(node));
  return DeviceEvent(std::move(e));
}

inline Mutation SlotReleased(absl::string_view instance, int index, absl::string_view holder) {
  regatta::v1::Event e;
  auto* r = e.mutable_device_slot_released();
  r->set_instance_name(std::string(instance));
  r->set_slot(absl::StrCat(instance, "-", index));
  r->set_holder(std::string(holder));
  return DeviceEvent(std::move(e));
}

inline Mutation SecretApplied(absl::string_view name,
                              std::vector<std::pair<std::string, std::string>> data,
                              int64_t seconds = 0) {
  regatta::v1::Event e;
  auto* s = e.mutable_secret_applied()->mutable_secret();
  s->set_name(std::string(name));
  for (auto& [k, v] : data) (*s->mutable_data())[k] = v;
  return DeviceEvent(std::move(e), seconds);
}

inline Mutation ConfigMapApplied(absl::string_view name,
                                 std::vector<std::pair<std::string, std::string>> data,
                                 int64_t seconds = 0) {
  regatta::v1::Event e;
  auto* m = e.mutable_config_map_applied()->mutable_config_map();
  m->set_name(std::string(name));
  for (auto& [k, v] : data) (*m->mutable_data())[k] = v;
  return DeviceEvent(std::move(e), seconds);
}

template <typename Message>
std::vector<std::string> Names(const std::vector<Message>& rows) {
  std::vector<std::string> out;
  for (const Message& row : rows) out.push_back(row.name());
  return out;
}

// The names of every page.
template <typename Message, typename ListFn>
std::vector<std::vector<std::string>> AllNamePages(ListFn list) {
  return PageKeys<Message>(list, [](const std::vector<Message>& rows) { return Names(rows); });
}

inline std::vector<std::pair<std::string, std::string>> Usage(const regatta::v1::Instance& i) {
  std::vector<std::pair<std::string, std::string>> out(i.device_usage().begin(),
                                                       i.device_usage().end());
  std::sort(out.begin(), out.end());
  return out;
}

using SlotHolder = std::pair<std::string, std::string>;

// ---- Configurations -------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ConfigurationsApplyReplaceAndDelete) {
  Apply({ConfigurationApplied(TestConfiguration("cam"), 10)});
  regatta::v1::Configuration c = ValueOr(store_->GetConfiguration("cam"));
  EXPECT_EQ(c.discovery_handler().name(), "debugEcho");
  EXPECT_EQ(c.discovery_handler().discovery_properties(0).value_from().secret_key_ref().key(),
            "password");
  EXPECT_EQ(c.capacity(), 2);
  EXPECT_EQ(c.broker_spec().broker_pod_spec().queue(), "brokers");
  EXPECT_EQ(c.instance_service_spec().ports(0).port(), 8083);
  EXPECT_EQ(c.broker_properties().at("RESOLUTION"), "800x600");
  EXPECT_EQ(c.generation(), 1);
  EXPECT_EQ(c.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(c.update_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(c.status().instance_count(), 0);
  EXPECT_THAT(c.status().nodes(), IsEmpty());

  // A replacement: whole spec replaced, generation +1, create_time kept; a given status or
  // generation is ignored (output only).
  regatta::v1::Configuration replacement = TestConfiguration("cam", 5);
  replacement.clear_broker_spec();
  replacement.set_generation(42);
  replacement.mutable_status()->set_instance_count(9);
  Apply({ConfigurationApplied(replacement, 20)});
  c = ValueOr(store_->GetConfiguration("cam"));
  EXPECT_EQ(c.capacity(), 5);
  EXPECT_FALSE(c.has_broker_spec());
  EXPECT_EQ(c.generation(), 2);
  EXPECT_EQ(c.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(c.update_time().seconds(), TestTimestamp(20).seconds());
  EXPECT_EQ(c.status().instance_count(), 0);

  Apply({ConfigurationDeleted("cam"), ConfigurationDeleted("ghost")});
  EXPECT_EQ(store_->GetConfiguration("cam").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(store_->GetConfiguration("cam").status().message(), HasSubstr("configuration cam"));

  // Applied again after deletion: a new one, generation 1.
  Apply({ConfigurationApplied(TestConfiguration("cam"), 30)});
  c = ValueOr(store_->GetConfiguration("cam"));
  EXPECT_EQ(c.generation(), 1);
  EXPECT_EQ(c.create_time().seconds(), TestTimestamp(30).seconds());
}

TEST_P(StoreConformanceTest, ConfigurationStatusIsPerNode) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  Apply({StatusUpdated("cam", "node-b", "discovery handler 'debugEcho' is not registered", 5),
         StatusUpdated("cam", "node-a", "", 6)});
  regatta::v1::Configuration c = ValueOr(store_->GetConfiguration("cam"));
  ASSERT_EQ(c.status().nodes_size(), 2);
  EXPECT_EQ(c.status().nodes(0).node(), "node-a");
  EXPECT_EQ(c.status().nodes(0).error(), "");
  EXPECT_EQ(c.status().nodes(1).node(), "node-b");
  EXPECT_THAT(c.status().nodes(1).error(), HasSubstr("not registered"));
  EXPECT_EQ(c.status().nodes(1).update_time().seconds(), TestTimestamp(5).seconds());

  // One node's fix does not touch the other's entry.
  Apply({StatusUpdated("cam", "node-b", "", 7)});
  c = ValueOr(store_->GetConfiguration("cam"));
  EXPECT_EQ(c.status().nodes(1).error(), "");
  EXPECT_EQ(c.status().nodes(1).update_time().seconds(), TestTimestamp(7).seconds());
  EXPECT_EQ(c.status().nodes(0).update_time().seconds(), TestTimestamp(6).seconds());

  // A replacement keeps the status; deletion and re-creation starts without it.
  Apply({ConfigurationApplied(TestConfiguration("cam", 3))});
  EXPECT_EQ(ValueOr(store_->GetConfiguration("cam")).status().nodes_size(), 2);
  Apply({ConfigurationDeleted("cam"), ConfigurationApplied(TestConfiguration("cam"))});
  EXPECT_EQ(ValueOr(store_->GetConfiguration("cam")).status().nodes_size(), 0);
}

TEST_P(StoreConformanceTest, ConfigurationsListInNameOrderAndPage) {
  std::vector<Mutation> applies;
  for (absl::string_view name : {"echo", "alpha", "delta", "bravo", "charlie"}) {
    applies.push_back(ConfigurationApplied(TestConfiguration(name)));
  }
  Apply(std::move(applies));
  Apply({NodeSeen("node-a", TestInstance("bravo", "aaaaaa"))});
  auto pages = AllNamePages<regatta::v1::Configuration>([&](const std::string& token) {
    return store_->ListConfigurations({.page_token = token, .limit = 2});
  });
  EXPECT_THAT(pages, ElementsAre(ElementsAre("alpha", "bravo"), ElementsAre("charlie", "delta"),
                                 ElementsAre("echo")));
  // Listed with their status.
  Page<regatta::v1::Configuration> page = ValueOr(store_->ListConfigurations({}));
  ASSERT_EQ(page.rows.size(), 5u);
  EXPECT_EQ(page.rows[1].status().instance_count(), 1);
  EXPECT_EQ(page.rows[0].status().instance_count(), 0);

  // Another listing's token, or garbage, is refused.
  EXPECT_EQ(store_->ListConfigurations({.page_token = "garbage"}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Apply({NodeSeen("node-a", TestInstance("bravo", "bbbbbb"))});
  Page<regatta::v1::Instance> first = ValueOr(store_->ListInstances({.page = {.limit = 1}}));
  ASSERT_FALSE(first.next_page_token.empty());
  EXPECT_EQ(store_->ListConfigurations({.page_token = first.next_page_token}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// ---- Instances ------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, InstanceCreatedOnFirstSightWithFreeSlots) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "e77db4", 2), 10)});
  regatta::v1::Instance i = ValueOr(store_->GetInstance("cam-e77db4"));
  EXPECT_EQ(i.configuration_name(), "cam");
  EXPECT_EQ(i.cdi_name(), "regatta.dev/cam=e77db4");
  EXPECT_EQ(i.capacity(), 2);
  EXPECT_EQ(i.device_id(), "device-e77db4");
  EXPECT_EQ(i.properties().at("DEBUG_ECHO_DESCRIPTION"), "e77db4");
  ASSERT_EQ(i.device_specs_size(), 1);
  EXPECT_EQ(i.device_specs(0).host_path(), "/dev/e77db4");
  EXPECT_FALSE(i.shared());
  EXPECT_THAT(i.nodes(), ElementsAre("node-a"));
  EXPECT_THAT(Usage(i),
              ElementsAre(SlotHolder{"cam-e77db4-0", ""}, SlotHolder{"cam-e77db4-1", ""}));
  EXPECT_EQ(i.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(ValueOr(store_->GetConfiguration("cam")).status().instance_count(), 1);
  EXPECT_EQ(store_->GetInstance("cam-ffffff").status().code(), absl::StatusCode::kNotFound);
}

TEST_P(StoreConformanceTest, SharedInstanceMergesNodesAndGoesWithTheLast) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  regatta::v1::Instance shared = TestInstance("cam", "4294ea", 2, /*shared=*/true);
  Apply({NodeSeen("node-b", shared, 10)});
  Apply({NodeSeen("node-a", shared, 11)});
  Apply({NodeSeen("node-b", shared, 12)});  // a repeat: nothing new
  regatta::v1::Instance i = ValueOr(store_->GetInstance("cam-4294ea"));
  EXPECT_THAT(i.nodes(), ElementsAre("node-a", "node-b"));
  EXPECT_EQ(i.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(i.update_time().seconds(), TestTimestamp(12).seconds());
  EXPECT_EQ(i.device_usage_size(), 2);

  // Listing by node sees it from both.
  for (absl::string_view node : {"node-a", "node-b"}) {
    EXPECT_THAT(Names(ValueOr(store_->ListInstances({.node = std::string(node)})).rows),
                ElementsAre("cam-4294ea"))
        << node;
  }

  Apply({NodeLost("cam-4294ea", "node-b")});
  EXPECT_THAT(ValueOr(store_->GetInstance("cam-4294ea")).nodes(), ElementsAre("node-a"));
  EXPECT_THAT(ValueOr(store_->ListInstances({.node = "node-b"})).rows, IsEmpty());
  Apply({NodeLost("cam-4294ea", "node-b")});  // again: ignored
  Apply({NodeLost("cam-4294ea", "node-a")});
  EXPECT_EQ(store_->GetInstance("cam-4294ea").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ValueOr(store_->GetConfiguration("cam")).status().instance_count(), 0);

  // Seen again: a new Instance with free slots.
  Apply({NodeSeen("node-a", shared, 20)});
  i = ValueOr(store_->GetInstance("cam-4294ea"));
  EXPECT_EQ(i.create_time().seconds(), TestTimestamp(20).seconds());
  EXPECT_THAT(i.nodes(), ElementsAre("node-a"));
}

TEST_P(StoreConformanceTest, InstanceFieldsFollowTheLatestSightingAndSlotsTheCapacity) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "aaaaaa", 3))});
  Apply({SlotClaimed("cam-aaaaaa", 0, "run-0", "node-a"),
         SlotClaimed("cam-aaaaaa", 2, "run-2", "node-a")});

  regatta::v1::Instance smaller = TestInstance("cam", "aaaaaa", 2);
  (*smaller.mutable_properties())["NEW"] = "yes";
  smaller.clear_device_specs();
  Apply({NodeSeen("node-a", smaller)});
  regatta::v1::Instance i = ValueOr(store_->GetInstance("cam-aaaaaa"));
  EXPECT_EQ(i.properties().at("NEW"), "yes");
  EXPECT_EQ(i.device_specs_size(), 0);
  EXPECT_EQ(i.capacity(), 2);
  // The slot past the capacity is gone; the others keep their holders.
  EXPECT_THAT(Usage(i),
              ElementsAre(SlotHolder{"cam-aaaaaa-0", "run-0"}, SlotHolder{"cam-aaaaaa-1", ""}));

  Apply({NodeSeen("node-a", TestInstance("cam", "aaaaaa", 4))});
  EXPECT_THAT(Usage(ValueOr(store_->GetInstance("cam-aaaaaa"))),
              ElementsAre(SlotHolder{"cam-aaaaaa-0", "run-0"}, SlotHolder{"cam-aaaaaa-1", ""},
                          SlotHolder{"cam-aaaaaa-2", ""}, SlotHolder{"cam-aaaaaa-3", ""}));
}

TEST_P(StoreConformanceTest, InstancesListByConfigurationAndNodeAndPage) {
  Apply({ConfigurationApplied(TestConfiguration("cam")),
         ConfigurationApplied(TestConfiguration("usb"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "000001")),
         NodeSeen("node-b", TestInstance("cam", "000002")),
         NodeSeen("node-a", TestInstance("cam", "000003")),
         NodeSeen("node-a", TestInstance("usb", "000004")),
         NodeSeen("node-b", TestInstance("usb", "000005"))});
  EXPECT_THAT(Names(ValueOr(store_->ListInstances({})).rows),
              ElementsAre("cam-000001", "cam-000002", "cam-000003", "usb-000004", "usb-000005"));
  EXPECT_THAT(Names(ValueOr(store_->ListInstances({.configuration_name = "usb"})).rows),
              ElementsAre("usb-000004", "usb-000005"));
  EXPECT_THAT(Names(ValueOr(store_->ListInstances({.node = "node-a"})).rows),
              ElementsAre("cam-000001", "cam-000003", "usb-000004"));
  EXPECT_THAT(
      Names(ValueOr(store_->ListInstances({.configuration_name = "cam", .node = "node-b"})).rows),
      ElementsAre("cam-000002"));
  // Rows come with their nodes and usage.
  EXPECT_THAT(ValueOr(store_->ListInstances({.node = "node-b"})).rows[0].nodes(),
              ElementsAre("node-b"));
  EXPECT_EQ(ValueOr(store_->ListInstances({})).rows[0].device_usage_size(), 2);

  auto pages = AllNamePages<regatta::v1::Instance>([&](const std::string& token) {
    return store_->ListInstances({.node = "node-a", .page = {.page_token = token, .limit = 2}});
  });
  EXPECT_THAT(pages,
              ElementsAre(ElementsAre("cam-000001", "cam-000003"), ElementsAre("usb-000004")));
}

TEST_P(StoreConformanceTest, DeletingAConfigurationDeletesItsInstances) {
  Apply({ConfigurationApplied(TestConfiguration("cam")),
         ConfigurationApplied(TestConfiguration("usb"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "000001")),
         NodeSeen("node-a", TestInstance("usb", "000002")),
         SlotClaimed("cam-000001", 0, "run-1", "node-a")});
  Apply({ConfigurationDeleted("cam")});
  EXPECT_EQ(store_->GetInstance("cam-000001").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Names(ValueOr(store_->ListInstances({.node = "node-a"})).rows),
              ElementsAre("usb-000002"));
  // The agent's late reports for it are skipped or ignored, never resurrect it.
  IngestResult result =
      Apply({NodeSeen("node-a", TestInstance("cam", "000001")), NodeLost("cam-000001", "node-a"),
             SlotReleased("cam-000001", 0, "run-1")});
  ASSERT_EQ(result.skipped.size(), 1u) << absl::StrJoin(result.skipped, "\n");
  EXPECT_THAT(result.skipped[0], HasSubstr("unknown configuration 'cam'"));
  EXPECT_EQ(store_->GetInstance("cam-000001").status().code(), absl::StatusCode::kNotFound);

  // Re-created, its Instance starts with free slots and only the nodes that see it again.
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  Apply({NodeSeen("node-b", TestInstance("cam", "000001"))});
  regatta::v1::Instance i = ValueOr(store_->GetInstance("cam-000001"));
  EXPECT_THAT(i.nodes(), ElementsAre("node-b"));
  EXPECT_THAT(Usage(i),
              ElementsAre(SlotHolder{"cam-000001-0", ""}, SlotHolder{"cam-000001-1", ""}));
}

// ---- Slots ----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, SlotsClaimedAndReleased) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "aaaaaa", 2))});
  IngestResult result = Apply({SlotClaimed("cam-aaaaaa", 1, "run-1", "node-a")});
  EXPECT_THAT(result.skipped, IsEmpty());
  EXPECT_THAT(Usage(ValueOr(store_->GetInstance("cam-aaaaaa"))),
              ElementsAre(SlotHolder{"cam-aaaaaa-0", ""}, SlotHolder{"cam-aaaaaa-1", "run-1"}));

  // The same claim again is a no-op; another holder's is skipped.
  result = Apply({SlotClaimed("cam-aaaaaa", 1, "run-1", "node-a"),
                  SlotClaimed("cam-aaaaaa", 1, "run-2", "node-a")});
  ASSERT_EQ(result.skipped.size(), 1u) << absl::StrJoin(result.skipped, "\n");
  EXPECT_THAT(result.skipped[0], HasSubstr("DeviceSlotClaimed slot=cam-aaaaaa-1 holder=run-2"));
  EXPECT_THAT(result.skipped[0], HasSubstr("held by run-1"));

  // A release by someone else does nothing; by the holder, or anonymous, frees it.
  Apply({SlotReleased("cam-aaaaaa", 1, "run-2")});
  EXPECT_EQ(ValueOr(store_->GetInstance("cam-aaaaaa")).device_usage().at("cam-aaaaaa-1"), "run-1");
  Apply({SlotReleased("cam-aaaaaa", 1, "run-1")});
  EXPECT_EQ(ValueOr(store_->GetInstance("cam-aaaaaa")).device_usage().at("cam-aaaaaa-1"), "");
  Apply({SlotClaimed("cam-aaaaaa", 0, "run-3", "node-a")});
  Apply({SlotReleased("cam-aaaaaa", 0, "")});
  EXPECT_EQ(ValueOr(store_->GetInstance("cam-aaaaaa")).device_usage().at("cam-aaaaaa-0"), "");
  // Releasing a free slot is harmless.
  EXPECT_THAT(Apply({SlotReleased("cam-aaaaaa", 0, "run-3")}).skipped, IsEmpty());
}

TEST_P(StoreConformanceTest, SlotsFreedWhenTheirNodeOrInstanceGoes) {
  Apply({ConfigurationApplied(TestConfiguration("cam"))});
  regatta::v1::Instance shared = TestInstance("cam", "4294ea", 2, /*shared=*/true);
  Apply({NodeSeen("node-a", shared), NodeSeen("node-b", shared)});
  Apply({SlotClaimed("cam-4294ea", 0, "run-a", "node-a"),
         SlotClaimed("cam-4294ea", 1, "run-b", "node-b")});
  // node-b no longer sees the camera: its holder lost the device, node-a's keeps it.
  Apply({NodeLost("cam-4294ea", "node-b")});
  EXPECT_THAT(Usage(ValueOr(store_->GetInstance("cam-4294ea"))),
              ElementsAre(SlotHolder{"cam-4294ea-0", "run-a"}, SlotHolder{"cam-4294ea-1", ""}));
  // The Instance goes with its last node, and its slots with it.
  Apply({NodeLost("cam-4294ea", "node-a")});
  IngestResult result = Apply({SlotClaimed("cam-4294ea", 0, "run-c", "node-a")});
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_THAT(result.skipped[0], HasSubstr("no slot 0"));
  Apply({NodeSeen("node-a", shared)});
  EXPECT_THAT(Usage(ValueOr(store_->GetInstance("cam-4294ea"))),
              ElementsAre(SlotHolder{"cam-4294ea-0", ""}, SlotHolder{"cam-4294ea-1", ""}));
}

// ---- Secrets and config maps ----------------------------------------------------------------

TEST_P(StoreConformanceTest, SecretsKeepValuesButListOnlyKeys) {
  Apply({SecretApplied("creds", {{"username", "admin"}, {"password", "s3cr3t"}}, 10)});
  regatta::v1::Secret s = ValueOr(store_->GetSecret("creds"));
  EXPECT_EQ(s.data().at("password"), "s3cr3t");
  EXPECT_THAT(s.keys(), ElementsAre("password", "username"));
  EXPECT_EQ(s.create_time().seconds(), TestTimestamp(10).seconds());

  Apply({SecretApplied("creds", {{"token", "t"}}, 20), SecretApplied("another", {{"k", "v"}})});
  s = ValueOr(store_->GetSecret("creds"));
  EXPECT_THAT(s.keys(), ElementsAre("token"));  // replaced whole
  EXPECT_EQ(s.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(s.update_time().seconds(), TestTimestamp(20).seconds());

  Page<regatta::v1::Secret> page = ValueOr(store_->ListSecrets({}));
  EXPECT_THAT(Names(page.rows), ElementsAre("another", "creds"));
  for (const regatta::v1::Secret& listed : page.rows) {
    EXPECT_THAT(listed.data(), IsEmpty()) << listed.name();
    EXPECT_EQ(listed.keys_size(), 1) << listed.name();
  }
  EXPECT_THAT(AllNamePages<regatta::v1::Secret>([&](const std::string& token) {
                return store_->ListSecrets({.page_token = token, .limit = 1});
              }),
              ElementsAre(ElementsAre("another"), ElementsAre("creds")));

  regatta::v1::Event del;
  del.mutable_secret_deleted()->set_name("creds");
  Apply({DeviceEvent(del)});
  EXPECT_EQ(store_->GetSecret("creds").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(store_->GetSecret("creds").status().message(), HasSubstr("secret creds"));
}

TEST_P(StoreConformanceTest, ConfigMapsApplyListAndDelete) {
  Apply({ConfigMapApplied("endpoints", {{"url", "opc.tcp://localhost:4840"}}, 10),
         ConfigMapApplied("other", {})});
  regatta::v1::ConfigMap m = ValueOr(store_->GetConfigMap("endpoints"));
  EXPECT_EQ(m.data().at("url"), "opc.tcp://localhost:4840");
  Apply({ConfigMapApplied("endpoints", {{"url", "opc.tcp://other:4840"}}, 20)});
  m = ValueOr(store_->GetConfigMap("endpoints"));
  EXPECT_EQ(m.data().at("url"), "opc.tcp://other:4840");
  EXPECT_EQ(m.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(m.update_time().seconds(), TestTimestamp(20).seconds());
  EXPECT_THAT(Names(ValueOr(store_->ListConfigMaps({})).rows), ElementsAre("endpoints", "other"));
  regatta::v1::Event del;
  del.mutable_config_map_deleted()->set_name("endpoints");
  Apply({DeviceEvent(del)});
  EXPECT_EQ(store_->GetConfigMap("endpoints").status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Names(ValueOr(store_->ListConfigMaps({})).rows), ElementsAre("other"));
}

// ---- Bad rows -------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, DeviceChangesThatCannotApplyAreSkippedNotFatal) {
  Apply({ConfigurationApplied(TestConfiguration("cam")),
         ConfigurationApplied(TestConfiguration("usb"))});
  Apply({NodeSeen("node-a", TestInstance("cam", "aaaaaa"))});
  regatta::v1::Instance no_capacity = TestInstance("cam", "bbbbbb", 0);
  regatta::v1::Instance other_configuration = TestInstance("usb", "aaaaaa");
  other_configuration.set_name("cam-aaaaaa");
  IngestResult result = ApplyAt({{20, ConfigurationApplied(TestConfiguration(""))},
                                 {21, StatusUpdated("ghost", "node-a", "")},
                                 {22, NodeSeen("", TestInstance("cam", "cccccc"))},
                                 {23, NodeSeen("node-a", no_capacity)},
                                 {24, NodeSeen("node-a", TestInstance("ghost", "dddddd"))},
                                 {25, NodeSeen("node-a", other_configuration)},
                                 {26, SlotClaimed("cam-aaaaaa", 0, "", "node-a")},
                                 {27, SlotClaimed("cam-aaaaaa", 7, "run-1", "node-a")},
                                 {28, SecretApplied("", {{"k", "v"}})},
                                 {29, SecretApplied("fine", {{"k", "v"}})}},
                                29);
  ASSERT_EQ(result.skipped.size(), 9u) << absl::StrJoin(result.skipped, "\n");
  EXPECT_THAT(result.skipped[0], HasSubstr("offset 20: ConfigurationApplied name=\"\""));
  EXPECT_THAT(result.skipped[1],
              HasSubstr("offset 21: ConfigurationStatusUpdated configuration_name=ghost"));
  EXPECT_THAT(result.skipped[1], HasSubstr("unknown configuration"));
  EXPECT_THAT(result.skipped[2], HasSubstr("offset 22: InstanceNodeSeen instance_name=cam-cccccc"));
  EXPECT_THAT(result.skipped[3], HasSubstr("capacity 0 is below 1"));
  EXPECT_THAT(result.skipped[4], HasSubstr("unknown configuration 'ghost'"));
  EXPECT_THAT(result.skipped[5], HasSubstr("belongs to configuration 'cam'"));
  EXPECT_THAT(result.skipped[6], HasSubstr("offset 26: DeviceSlotClaimed"));
  EXPECT_THAT(result.skipped[6], HasSubstr("empty holder"));
  EXPECT_THAT(result.skipped[7], HasSubstr("no slot 7"));
  EXPECT_THAT(result.skipped[8], HasSubstr("offset 28: SecretApplied"));
  // The rest applied.
  EXPECT_EQ(ValueOr(store_->GetSecret("fine")).data().at("k"), "v");
  EXPECT_EQ(ValueOr(store_->GetInstance("cam-aaaaaa")).configuration_name(), "cam");
  EXPECT_EQ(ValueOr(store_->GetConsumerOffset("query")), 29);
}

// ---- Dumps ----------------------------------------------------------------------------------

// Every kind of device row, through creations, updates and deletions.
inline std::vector<Mutation> DeviceHistory() {
  std::vector<Mutation> out;
  out.push_back(ConfigurationApplied(TestConfiguration("cam"), 1));
  out.push_back(ConfigurationApplied(TestConfiguration("usb"), 2));
  out.push_back(ConfigurationApplied(TestConfiguration("cam", 3), 3));
  out.push_back(StatusUpdated("cam", "node-a", "", 4));
  out.push_back(StatusUpdated("usb", "node-b", "handler missing", 5));
  regatta::v1::Instance shared = TestInstance("cam", "4294ea", 3, true);
  out.push_back(NodeSeen("node-a", shared, 6));
  out.push_back(NodeSeen("node-b", shared, 7));
  out.push_back(NodeSeen("node-a", TestInstance("usb", "e77db4"), 8));
  out.push_back(NodeSeen("node-b", TestInstance("usb", "000001"), 9));
  out.push_back(SlotClaimed("cam-4294ea", 0, "run-1", "node-a"));
  out.push_back(SlotClaimed("cam-4294ea", 2, "run-2", "node-b"));
  out.push_back(SlotClaimed("usb-e77db4", 1, "run-3", "node-a"));
  out.push_back(SlotReleased("usb-e77db4", 1, "run-3"));
  out.push_back(NodeLost("cam-4294ea", "node-b"));
  out.push_back(NodeLost("usb-000001", "node-b"));
  out.push_back(SecretApplied("creds", {{"password", "x"}}, 10));
  out.push_back(SecretApplied("gone", {{"k", "v"}}, 11));
  regatta::v1::Event del_secret;
  del_secret.mutable_secret_deleted()->set_name("gone");
  out.push_back(DeviceEvent(del_secret));
  out.push_back(ConfigMapApplied("urls", {{"a", "b"}}, 12));
  out.push_back(ConfigurationApplied(TestConfiguration("gone"), 13));
  out.push_back(ConfigurationDeleted("gone"));
  return out;
}

TEST_P(StoreConformanceTest, DeviceViewsReplayToTheSameDump) {
  // One store gets an event per batch, the other the whole history in one batch, at the same
  // offsets: the same views. Blobs dump as text, so a reader can see what differs.
  ExpectReplayEquality(
      DeviceHistory(),
      {"device_configurations", "device_configuration_nodes", "device_instances",
       "device_instance_nodes", "device_slots", "device_secrets", "device_config_maps"},
      "configuration_name: \"cam\"", {SlotClaimed("cam-4294ea", 1, "run-9", "node-a")});
}

}  // namespace regatta::store::testing

#endif  // REGATTA_TESTS_CONFORMANCE_DEVICE_VIEWS_CONFORMANCE_H_
