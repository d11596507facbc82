// The device views of the SQLite store (tables of migration 0006_devices.sql): applying device
// events at ingest, and the DeviceViews queries.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "src/common/status_macros.h"
#include "src/devices/naming/naming.h"
#include "src/store/sqlite/sqlite_internal.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::store {
namespace sqlite_internal {
namespace {

using regatta::v1::ConfigMap;
using regatta::v1::Configuration;
using regatta::v1::Event;
using regatta::v1::Instance;
using regatta::v1::Secret;

// ---- Applying device events ------------------------------------------------------------------

class DeviceApplier {
 public:
  DeviceApplier(Connection* conn, int64_t offset, const Event& event, IngestResult* result)
      : conn_(conn),
        offset_(offset),
        event_(event),
        event_us_(ToMicros(event.created())),
        result_(result) {}

  absl::Status Apply() {
    switch (event_.event_case()) {
      case Event::kConfigurationApplied:
        return ApplyConfiguration(event_.configuration_applied().configuration());
      case Event::kConfigurationDeleted:
        return DeleteConfiguration(event_.configuration_deleted().name());
      case Event::kConfigurationStatusUpdated:
        return UpdateStatus(event_.configuration_status_updated());
      case Event::kInstanceNodeSeen:
        return NodeSeen(event_.instance_node_seen().node(), event_.instance_node_seen().instance());
      case Event::kInstanceNodeLost:
        return NodeLost(event_.instance_node_lost().instance_name(),
                        event_.instance_node_lost().node());
      case Event::kDeviceSlotClaimed:
        return ClaimSlot(event_.device_slot_claimed());
      case Event::kDeviceSlotReleased:
        return ReleaseSlot(event_.device_slot_released());
      case Event::kSecretApplied: {
        Secret secret = event_.secret_applied().secret();
        secret.clear_keys();  // output only: derived from data when read
        return ApplyNamed("device_secrets", secret);
      }
      case Event::kSecretDeleted:
        return DeleteWhere("device_secrets", "name", event_.secret_deleted().name());
      case Event::kConfigMapApplied:
        return ApplyNamed("device_config_maps", event_.config_map_applied().config_map());
      case Event::kConfigMapDeleted:
        return DeleteWhere("device_config_maps", "name", event_.config_map_deleted().name());
      default:
        Skip("", "not a device event");
        return absl::OkStatus();
    }
  }

 private:
  void Skip(absl::string_view row, absl::string_view why) {
    SkipEvent(event_, "DeviceChange", offset_, row, why, result_);
  }

  absl::Status DeleteWhere(absl::string_view table, absl::string_view column,
                           absl::string_view value) {
    return DeleteRowsWhere(conn_, table, column, value);
  }

  // The stored body of `name` in `table`, if any.
  template <typename Message>
  absl::StatusOr<std::optional<Message>> FindBody(absl::string_view table, absl::string_view name) {
    ASSIGN_OR_RETURN(Stmt stmt,
                     conn_->Prepare(absl::StrCat("SELECT body FROM ", table, " WHERE name = ?1")));
    stmt.BindText(1, name);
    ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) return std::nullopt;
    Message message;
    RETURN_IF_ERROR(ParseBlob(stmt.Blob(0), &message, table, "name", name, "body"));
    return message;
  }

  absl::Status UpsertBody(absl::string_view table, absl::string_view name,
                          const google::protobuf::MessageLite& body) {
    ASSIGN_OR_RETURN(Stmt upsert, conn_->Prepare(absl::StrCat(
                                      "INSERT INTO ", table,
                                      " (name, body, last_offset) VALUES (?1, ?2, ?3) "
                                      "ON CONFLICT (name) DO UPDATE SET body = excluded.body, "
                                      "last_offset = excluded.last_offset")));
    upsert.BindText(1, name).BindBlob(2, Serialize(body)).Bind(3, offset_);
    return upsert.Run();
  }

  // Secrets and config maps: replaced whole, keeping the first create_time.
  template <typename Message>
  absl::Status ApplyNamed(absl::string_view table, Message message) {
    if (message.name().empty()) {
      Skip("name=\"\"", "empty name");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<Message> existing, FindBody<Message>(table, message.name()));
    StampTimes(existing.has_value() ? &existing->create_time() : nullptr, message);
    return UpsertBody(table, message.name(), message);
  }

  // create_time from the first version (or the event), update_time the event's.
  template <typename Message>
  void StampTimes(const google::protobuf::Timestamp* first_created, Message& message) {
    if (first_created != nullptr) {
      *message.mutable_create_time() = *first_created;
    } else {
      SetMicros(event_us_, message.mutable_create_time());
    }
    SetMicros(event_us_, message.mutable_update_time());
  }

  absl::Status ApplyConfiguration(Configuration configuration) {
    if (configuration.name().empty()) {
      Skip("name=\"\"", "empty name");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<Configuration> existing,
                     FindBody<Configuration>("device_configurations", configuration.name()));
    configuration.clear_status();  // output only: kept in its own tables
    configuration.set_generation(existing.has_value() ? existing->generation() + 1 : 1);
    StampTimes(existing.has_value() ? &existing->create_time() : nullptr, configuration);
    return UpsertBody("device_configurations", configuration.name(), configuration);
  }

  absl::Status DeleteConfiguration(absl::string_view name) {
    for (absl::string_view table : {"device_slots", "device_instance_nodes"}) {
      ASSIGN_OR_RETURN(Stmt stmt, conn_->Prepare(absl::StrCat(
                                      "DELETE FROM ", table,
                                      " WHERE instance_name IN (SELECT name FROM device_instances "
                                      "WHERE configuration_name = ?1)")));
      stmt.BindText(1, name);
      RETURN_IF_ERROR(stmt.Run());
    }
    RETURN_IF_ERROR(DeleteWhere("device_instances", "configuration_name", name));
    RETURN_IF_ERROR(DeleteWhere("device_configuration_nodes", "configuration_name", name));
    return DeleteWhere("device_configurations", "name", name);
  }

  absl::StatusOr<bool> ConfigurationExists(absl::string_view name) {
    ASSIGN_OR_RETURN(Stmt stmt,
                     conn_->Prepare("SELECT 1 FROM device_configurations WHERE name = ?1"));
    stmt.BindText(1, name);
    return stmt.Step();
  }

  absl::Status UpdateStatus(const regatta::v1::ConfigurationStatusUpdated& e) {
    const std::string row =
        absl::StrCat("configuration_name=", e.configuration_name(), " node=", e.node());
    if (e.node().empty()) {
      Skip(row, "empty node");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(bool known, ConfigurationExists(e.configuration_name()));
    if (!known) {
      Skip(row, absl::StrCat("unknown configuration '", e.configuration_name(), "'"));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare("INSERT INTO device_configuration_nodes (configuration_name, node, error, "
                       "update_time_us, last_offset) VALUES (?1, ?2, ?3, ?4, ?5) "
                       "ON CONFLICT (configuration_name, node) DO UPDATE SET "
                       "error = excluded.error, update_time_us = excluded.update_time_us, "
                       "last_offset = excluded.last_offset"));
    upsert.BindText(1, e.configuration_name())
        .BindText(2, e.node())
        .BindText(3, e.error())
        .Bind(4, event_us_)
        .Bind(5, offset_);
    return upsert.Run();
  }

  absl::Status NodeSeen(absl::string_view node, Instance instance) {
    const std::string row = absl::StrCat("instance_name=", instance.name(), " node=", node);
    if (instance.name().empty() || node.empty()) {
      Skip(row, "empty instance name or node");
      return absl::OkStatus();
    }
    if (instance.capacity() < 1) {
      Skip(row, absl::StrCat("capacity ", instance.capacity(), " is below 1"));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(bool known, ConfigurationExists(instance.configuration_name()));
    if (!known) {
      Skip(row, absl::StrCat("unknown configuration '", instance.configuration_name(), "'"));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<Instance> existing,
                     FindBody<Instance>("device_instances", instance.name()));
    if (existing.has_value() && existing->configuration_name() != instance.configuration_name()) {
      Skip(row, absl::StrCat("the instance belongs to configuration '",
                             existing->configuration_name(), "'"));
      return absl::OkStatus();
    }
    // Output only: kept in their own tables.
    instance.clear_nodes();
    instance.clear_device_usage();
    StampTimes(existing.has_value() ? &existing->create_time() : nullptr, instance);

    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare("INSERT INTO device_instances (name, configuration_name, body, last_offset) "
                       "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (name) DO UPDATE SET "
                       "body = excluded.body, last_offset = excluded.last_offset"));
    upsert.BindText(1, instance.name())
        .BindText(2, instance.configuration_name())
        .BindBlob(3, Serialize(instance))
        .Bind(4, offset_);
    RETURN_IF_ERROR(upsert.Run());

    ASSIGN_OR_RETURN(
        Stmt seen,
        conn_->Prepare("INSERT INTO device_instance_nodes (instance_name, node, seen_time_us, "
                       "last_offset) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (instance_name, node) "
                       "DO UPDATE SET seen_time_us = excluded.seen_time_us, "
                       "last_offset = excluded.last_offset"));
    seen.BindText(1, instance.name()).BindText(2, node).Bind(3, event_us_).Bind(4, offset_);
    RETURN_IF_ERROR(seen.Run());

    // Slots follow the capacity: free ones added, those past it dropped.
    ASSIGN_OR_RETURN(Stmt drop, conn_->Prepare("DELETE FROM device_slots WHERE instance_name = ?1 "
                                               "AND slot_index >= ?2"));
    drop.BindText(1, instance.name()).Bind(2, instance.capacity());
    RETURN_IF_ERROR(drop.Run());
    ASSIGN_OR_RETURN(Stmt add, conn_->Prepare("INSERT OR IGNORE INTO device_slots (instance_name, "
                                              "slot_index, holder, node, last_offset) "
                                              "VALUES (?1, ?2, '', '', ?3)"));
    for (int i = 0; i < instance.capacity(); ++i) {
      add.Reset();
      add.BindText(1, instance.name()).Bind(2, i).Bind(3, offset_);
      RETURN_IF_ERROR(add.Run());
    }
    return absl::OkStatus();
  }

  absl::Status NodeLost(absl::string_view instance_name, absl::string_view node) {
    ASSIGN_OR_RETURN(Stmt lost, conn_->Prepare("DELETE FROM device_instance_nodes "
                                               "WHERE instance_name = ?1 AND node = ?2"));
    lost.BindText(1, instance_name).BindText(2, node);
    RETURN_IF_ERROR(lost.Run());
    if (sqlite3_changes(conn_->db()) == 0) return absl::OkStatus();  // not seen there: nothing

    // Its holders on that node lost the device with the node.
    ASSIGN_OR_RETURN(Stmt free,
                     conn_->Prepare("UPDATE device_slots SET holder = '', node = '', "
                                    "last_offset = ?3 WHERE instance_name = ?1 AND node = ?2"));
    free.BindText(1, instance_name).BindText(2, node).Bind(3, offset_);
    RETURN_IF_ERROR(free.Run());

    ASSIGN_OR_RETURN(Stmt left, conn_->Prepare("SELECT 1 FROM device_instance_nodes "
                                               "WHERE instance_name = ?1 LIMIT 1"));
    left.BindText(1, instance_name);
    ASSIGN_OR_RETURN(bool still_seen, left.Step());
    if (still_seen) return absl::OkStatus();
    RETURN_IF_ERROR(DeleteWhere("device_slots", "instance_name", instance_name));
    return DeleteWhere("device_instances", "name", instance_name);
  }

  // The slot's current (holder, node), or nullopt after a skip naming why not.
  absl::StatusOr<std::optional<std::pair<int, std::string>>> FindSlot(
      absl::string_view instance_name, absl::string_view slot, absl::string_view row) {
    absl::StatusOr<int> index = devices::SlotIndex(instance_name, slot);
    if (!index.ok()) {
      Skip(row, index.status().message());
      return std::nullopt;
    }
    ASSIGN_OR_RETURN(Stmt stmt, conn_->Prepare("SELECT holder FROM device_slots "
                                               "WHERE instance_name = ?1 AND slot_index = ?2"));
    stmt.BindText(1, instance_name).Bind(2, *index);
    ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) {
      Skip(row, absl::StrCat("no slot ", *index, " (unknown instance, or past its capacity)"));
      return std::nullopt;
    }
    return std::make_pair(*index, std::string(stmt.Text(0)));
  }

  absl::Status ClaimSlot(const regatta::v1::DeviceSlotClaimed& e) {
    const std::string row =
        absl::StrCat("slot=", e.slot(), " holder=", e.holder(), " node=", e.node());
    if (e.holder().empty()) {
      Skip(row, "empty holder");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(auto slot, FindSlot(e.instance_name(), e.slot(), row));
    if (!slot.has_value()) return absl::OkStatus();
    const auto& [index, holder] = *slot;
    if (holder == e.holder()) return absl::OkStatus();
    if (!holder.empty()) {
      Skip(row, absl::StrCat("the slot is held by ", holder));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Stmt claim,
        conn_->Prepare("UPDATE device_slots SET holder = ?3, node = ?4, "
                       "last_offset = ?5 WHERE instance_name = ?1 AND slot_index = ?2"));
    claim.BindText(1, e.instance_name())
        .Bind(2, index)
        .BindText(3, e.holder())
        .BindText(4, e.node())
        .Bind(5, offset_);
    return claim.Run();
  }

  absl::Status ReleaseSlot(const regatta::v1::DeviceSlotReleased& e) {
    // Releases race with the Instance going away (which frees everything): an unknown
    // instance is not an error.
    ASSIGN_OR_RETURN(Stmt known, conn_->Prepare("SELECT 1 FROM device_instances WHERE name = ?1"));
    known.BindText(1, e.instance_name());
    ASSIGN_OR_RETURN(bool exists, known.Step());
    if (!exists) return absl::OkStatus();
    const std::string row = absl::StrCat("slot=", e.slot(), " holder=", e.holder());
    ASSIGN_OR_RETURN(auto slot, FindSlot(e.instance_name(), e.slot(), row));
    if (!slot.has_value()) return absl::OkStatus();
    const auto& [index, holder] = *slot;
    if (holder.empty() || (!e.holder().empty() && holder != e.holder())) return absl::OkStatus();
    ASSIGN_OR_RETURN(
        Stmt release,
        conn_->Prepare("UPDATE device_slots SET holder = '', node = '', "
                       "last_offset = ?3 WHERE instance_name = ?1 AND slot_index = ?2"));
    release.BindText(1, e.instance_name()).Bind(2, index).Bind(3, offset_);
    return release.Run();
  }

  Connection* conn_;
  const int64_t offset_;
  const Event& event_;
  const int64_t event_us_;
  IngestResult* result_;
};

}  // namespace

absl::Status ApplyDeviceChange(Connection* conn, int64_t offset, const DeviceChange& change,
                               IngestResult* result) {
  return DeviceApplier(conn, offset, change.event, result).Apply();
}

const std::vector<std::pair<absl::string_view, absl::string_view>>& DeviceDumpQueries() {
  static const auto* const kQueries =
      new std::vector<std::pair<absl::string_view, absl::string_view>>{
          {"device_configurations",
           "SELECT name, body, last_offset FROM device_configurations ORDER BY name"},
          {"device_configuration_nodes",
           "SELECT configuration_name, node, error, update_time_us, last_offset "
           "FROM device_configuration_nodes ORDER BY configuration_name, node"},
          {"device_instances",
           "SELECT name, configuration_name, body, last_offset FROM device_instances "
           "ORDER BY name"},
          {"device_instance_nodes",
           "SELECT instance_name, node, seen_time_us, last_offset FROM device_instance_nodes "
           "ORDER BY instance_name, node"},
          {"device_slots",
           "SELECT instance_name, slot_index, holder, node, last_offset FROM device_slots "
           "ORDER BY instance_name, slot_index"},
          {"device_secrets", "SELECT name, body, last_offset FROM device_secrets ORDER BY name"},
          {"device_config_maps",
           "SELECT name, body, last_offset FROM device_config_maps ORDER BY name"},
      };
  return *kQueries;
}

std::unique_ptr<google::protobuf::Message> DeviceBlobMessage(absl::string_view table,
                                                             absl::string_view column) {
  if (column != "body") return nullptr;
  if (table == "device_configurations") return std::make_unique<Configuration>();
  if (table == "device_instances") return std::make_unique<Instance>();
  if (table == "device_secrets") return std::make_unique<Secret>();
  if (table == "device_config_maps") return std::make_unique<ConfigMap>();
  return nullptr;
}

namespace {

// ---- Reading rows ----------------------------------------------------------------------------

// The output-only status: node entries in node order and the instance count.
absl::Status FillStatus(Connection* conn, Configuration& configuration) {
  regatta::v1::ConfigurationStatus* status = configuration.mutable_status();
  ASSIGN_OR_RETURN(Stmt nodes, conn->Prepare("SELECT node, error, update_time_us FROM "
                                             "device_configuration_nodes WHERE "
                                             "configuration_name = ?1 ORDER BY node"));
  nodes.BindText(1, configuration.name());
  while (true) {
    ASSIGN_OR_RETURN(bool row, nodes.Step());
    if (!row) break;
    regatta::v1::ConfigurationNodeStatus* node = status->add_nodes();
    node->set_node(std::string(nodes.Text(0)));
    node->set_error(std::string(nodes.Text(1)));
    SetMicros(nodes.Int(2), node->mutable_update_time());
  }
  ASSIGN_OR_RETURN(Stmt count, conn->Prepare("SELECT COUNT(*) FROM device_instances "
                                             "WHERE configuration_name = ?1"));
  count.BindText(1, configuration.name());
  ASSIGN_OR_RETURN(bool row, count.Step());
  status->set_instance_count(row ? static_cast<int32_t>(count.Int(0)) : 0);
  return absl::OkStatus();
}

// The output-only nodes (name order) and device usage.
absl::Status FillInstance(Connection* conn, Instance& instance) {
  ASSIGN_OR_RETURN(Stmt nodes, conn->Prepare("SELECT node FROM device_instance_nodes "
                                             "WHERE instance_name = ?1 ORDER BY node"));
  nodes.BindText(1, instance.name());
  while (true) {
    ASSIGN_OR_RETURN(bool row, nodes.Step());
    if (!row) break;
    instance.add_nodes(std::string(nodes.Text(0)));
  }
  ASSIGN_OR_RETURN(Stmt slots, conn->Prepare("SELECT slot_index, holder FROM device_slots "
                                             "WHERE instance_name = ?1"));
  slots.BindText(1, instance.name());
  while (true) {
    ASSIGN_OR_RETURN(bool row, slots.Step());
    if (!row) break;
    (*instance.mutable_device_usage())[devices::SlotName(
        instance.name(), static_cast<int>(slots.Int(0)))] = std::string(slots.Text(1));
  }
  return absl::OkStatus();
}

void FillKeys(Secret& secret) {
  secret.clear_keys();
  for (const auto& [key, value] : secret.data()) secret.add_keys(key);
  std::sort(secret.mutable_keys()->begin(), secret.mutable_keys()->end());
}

}  // namespace
}  // namespace sqlite_internal

using sqlite_internal::FillInstance;
using sqlite_internal::FillKeys;
using sqlite_internal::FillStatus;
using sqlite_internal::GetBody;
using sqlite_internal::ListByText;
using sqlite_internal::Transaction;

absl::StatusOr<regatta::v1::Configuration> SqliteStore::GetConfiguration(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  // One snapshot: the configuration and its status agree.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ASSIGN_OR_RETURN(regatta::v1::Configuration configuration,
                   GetBody<regatta::v1::Configuration>(conn.get(), "device_configurations", "name",
                                                       name, absl::StrCat("configuration ", name)));
  RETURN_IF_ERROR(FillStatus(conn.get(), configuration));
  RETURN_IF_ERROR(txn.Commit());
  return configuration;
}

absl::StatusOr<Page<regatta::v1::Configuration>> SqliteStore::ListConfigurations(
    const PageRequest& page) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ASSIGN_OR_RETURN(Page<regatta::v1::Configuration> out,
                   ListByText<regatta::v1::Configuration>(conn.get(), "device_configurations",
                                                          "name", "", page));
  for (regatta::v1::Configuration& configuration : out.rows) {
    RETURN_IF_ERROR(FillStatus(conn.get(), configuration));
  }
  RETURN_IF_ERROR(txn.Commit());
  return out;
}

absl::StatusOr<regatta::v1::Instance> SqliteStore::GetInstance(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ASSIGN_OR_RETURN(regatta::v1::Instance instance,
                   GetBody<regatta::v1::Instance>(conn.get(), "device_instances", "name", name,
                                                  absl::StrCat("instance ", name)));
  RETURN_IF_ERROR(FillInstance(conn.get(), instance));
  RETURN_IF_ERROR(txn.Commit());
  return instance;
}

absl::StatusOr<Page<regatta::v1::Instance>> SqliteStore::ListInstances(
    const InstanceFilter& filter) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ASSIGN_OR_RETURN(
      Page<regatta::v1::Instance> page,
      ListByText<regatta::v1::Instance>(
          conn.get(), "device_instances", "name",
          " AND (?4 = '' OR configuration_name = ?4) AND (?5 = '' OR EXISTS (SELECT 1 FROM "
          "device_instance_nodes n WHERE n.instance_name = device_instances.name AND n.node = ?5))",
          filter.page, {filter.configuration_name, filter.node}));
  for (regatta::v1::Instance& instance : page.rows) {
    RETURN_IF_ERROR(FillInstance(conn.get(), instance));
  }
  RETURN_IF_ERROR(txn.Commit());
  return page;
}

absl::StatusOr<regatta::v1::Secret> SqliteStore::GetSecret(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(regatta::v1::Secret secret,
                   GetBody<regatta::v1::Secret>(conn.get(), "device_secrets", "name", name,
                                                absl::StrCat("secret ", name)));
  FillKeys(secret);
  return secret;
}

absl::StatusOr<Page<regatta::v1::Secret>> SqliteStore::ListSecrets(const PageRequest& page) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Page<regatta::v1::Secret> out,
                   ListByText<regatta::v1::Secret>(conn.get(), "device_secrets", "name", "", page));
  for (regatta::v1::Secret& secret : out.rows) {
    FillKeys(secret);
    secret.clear_data();  // listings never carry values
  }
  return out;
}

absl::StatusOr<regatta::v1::ConfigMap> SqliteStore::GetConfigMap(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::ConfigMap>(conn.get(), "device_config_maps", "name", name,
                                         absl::StrCat("config map ", name));
}

absl::StatusOr<Page<regatta::v1::ConfigMap>> SqliteStore::ListConfigMaps(const PageRequest& page) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return ListByText<regatta::v1::ConfigMap>(conn.get(), "device_config_maps", "name", "", page);
}

}  // namespace regatta::store
