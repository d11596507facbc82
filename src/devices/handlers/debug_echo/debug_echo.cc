#include "src/devices/handlers/debug_echo/debug_echo.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/common/bounded_parse.h"
#include "src/devices/handlers/debug_echo/file_watcher.h"
#include "yaml-cpp/yaml.h"

namespace regatta::devices::debug_echo {
namespace {

class DebugEchoQuery final : public NotifiedDeviceQuery {
 public:
  DebugEchoQuery(const DebugEchoFinder* finder, std::vector<std::string> descriptions)
      : NotifiedDeviceQuery(finder->changes()),
        finder_(finder),
        descriptions_(std::move(descriptions)) {}

  absl::StatusOr<std::vector<v0::Device>> ListDevices() override {
    std::vector<v0::Device> devices;
    if (finder_->Offline()) return devices;
    for (const std::string& description : descriptions_) {
      v0::Device& device = devices.emplace_back();
      device.set_id(description);
      (*device.mutable_properties())[kDescriptionProperty] = description;
    }
    return devices;
  }

 private:
  const DebugEchoFinder* const finder_;
  const std::vector<std::string> descriptions_;
};

}  // namespace

std::string DefaultAvailabilityFile() {
  const char* path = std::getenv(kAvailabilityEnv);
  return path != nullptr && *path != '\0' ? path : kDefaultAvailabilityFile;
}

absl::StatusOr<std::vector<std::string>> ParseDetails(absl::string_view discovery_details) {
  absl::StatusOr<YAML::Node> loaded = LoadYaml(discovery_details);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("discoveryDetails: ", ParseErrorText(loaded.status(), "not valid YAML")));
  }
  YAML::Node root = *std::move(loaded);
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        "discoveryDetails: must be a map with 'descriptions', e.g. 'descriptions: [foo0, foo1]'");
  }
  YAML::Node list;
  for (const auto& entry : root) {
    std::string key = entry.first.Scalar();
    if (key != "descriptions") {
      return absl::InvalidArgumentError(absl::StrCat(
          "discoveryDetails.", key, ": unknown field (debugEcho takes only 'descriptions')"));
    }
    list = entry.second;
  }
  if (!list.IsDefined() || list.IsNull()) {
    return absl::InvalidArgumentError("discoveryDetails.descriptions: required");
  }
  if (!list.IsSequence()) {
    return absl::InvalidArgumentError(
        "discoveryDetails.descriptions: must be a list of strings, e.g. [foo0, foo1]");
  }
  std::vector<std::string> descriptions;
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].IsScalar() || list[i].Scalar().empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("discoveryDetails.descriptions[", i, "]: must be a non-empty string"));
    }
    descriptions.push_back(list[i].Scalar());
  }
  return descriptions;
}

DebugEchoFinder::DebugEchoFinder(std::string availability_file)
    : availability_file_(std::move(availability_file)) {
  watcher_ = std::make_unique<FileWatcher>(availability_file_, [this] { changes_.Notify(); });
}

DebugEchoFinder::~DebugEchoFinder() = default;

absl::StatusOr<std::unique_ptr<DeviceQuery>> DebugEchoFinder::Prepare(
    const v0::DiscoverRequest& request) {
  absl::StatusOr<std::vector<std::string>> descriptions = ParseDetails(request.discovery_details());
  if (!descriptions.ok()) return descriptions.status();
  return std::make_unique<DebugEchoQuery>(this, *std::move(descriptions));
}

bool DebugEchoFinder::Offline() const {
  std::ifstream in(availability_file_);
  if (!in) return false;
  std::stringstream content;
  content << in.rdbuf();
  return absl::StrContains(content.str(), kOffline);
}

}  // namespace regatta::devices::debug_echo
