-- The device views (src/store/device_views.h): Configurations with their per-node discovery
-- status, Instances with the nodes that see them and their slots, Secrets and ConfigMaps. Each
-- resource row keeps its protobuf as a blob (`body`, without the output-only parts that live in
-- their own tables) plus the columns that lookups and listings read. Times are microseconds
-- since the Unix epoch. Listings are in name order, so names are the keys of every page.

CREATE TABLE device_configurations (
  name TEXT PRIMARY KEY,
  body BLOB NOT NULL,              -- regatta.v1.Configuration without status
  last_offset INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE device_configuration_nodes (
  configuration_name TEXT NOT NULL,
  node TEXT NOT NULL,
  error TEXT NOT NULL,             -- '' when discovery works on the node
  update_time_us INTEGER NOT NULL,
  last_offset INTEGER NOT NULL,
  PRIMARY KEY (configuration_name, node)
) WITHOUT ROWID;

CREATE TABLE device_instances (
  name TEXT PRIMARY KEY,
  configuration_name TEXT NOT NULL,
  body BLOB NOT NULL,              -- regatta.v1.Instance without nodes and device_usage
  last_offset INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX device_instances_by_configuration ON device_instances (configuration_name, name);

-- The nodes that currently see an Instance; the Instance goes with its last row.
CREATE TABLE device_instance_nodes (
  instance_name TEXT NOT NULL,
  node TEXT NOT NULL,
  seen_time_us INTEGER NOT NULL,
  last_offset INTEGER NOT NULL,
  PRIMARY KEY (instance_name, node)
) WITHOUT ROWID;
CREATE INDEX device_instance_nodes_by_node ON device_instance_nodes (node, instance_name);

-- Slot "<instance>-<slot_index>" of an Instance; holder '' when free.
CREATE TABLE device_slots (
  instance_name TEXT NOT NULL,
  slot_index INTEGER NOT NULL,
  holder TEXT NOT NULL,
  node TEXT NOT NULL,              -- the holder's node; '' when free
  last_offset INTEGER NOT NULL,
  PRIMARY KEY (instance_name, slot_index)
) WITHOUT ROWID;

CREATE TABLE device_secrets (
  name TEXT PRIMARY KEY,
  body BLOB NOT NULL,              -- regatta.v1.Secret (with its values)
  last_offset INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE device_config_maps (
  name TEXT PRIMARY KEY,
  body BLOB NOT NULL,              -- regatta.v1.ConfigMap
  last_offset INTEGER NOT NULL
) WITHOUT ROWID;
