#ifndef REGATTA_SRC_CLI_DEVICES_CLI_H_
#define REGATTA_SRC_CLI_DEVICES_CLI_H_

// The verbs of the device resources (DeviceService): `config apply|get|list|delete`,
// `instances list|get` and `services list|get`.

#include <string>

#include "absl/status/status.h"
#include "src/cli/commands.h"

namespace regatta::cli {

// Applies every document of FILE (YAML or JSON; Configurations, Secrets, ConfigMaps), in file
// order, after checking the whole file first (nothing is applied if a document is invalid).
absl::Status ConfigApply(const CommandEnv& env, const std::string& file);
// Deletes every resource FILE names.
absl::Status ConfigDelete(const CommandEnv& env, const std::string& file);
// A Configuration with its per-node discovery status.
absl::Status ConfigGet(const CommandEnv& env, const std::string& name);
absl::Status ConfigList(const CommandEnv& env);

// Empty filters: any.
absl::Status InstancesList(const CommandEnv& env, const std::string& configuration,
                           const std::string& node);
absl::Status InstancesGet(const CommandEnv& env, const std::string& name);

// Instance and configuration services: the ready endpoints as address:port. Empty filter: any.
absl::Status ServicesList(const CommandEnv& env, const std::string& configuration);
// A service with every endpoint (ready or not) and the broker's ports.
absl::Status ServicesGet(const CommandEnv& env, const std::string& name);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_DEVICES_CLI_H_
