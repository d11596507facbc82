// The bounded YAML and JSON readers themselves: whatever they accept must be safe to walk.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/common/bounded_parse.h"

namespace {

// Visits every node with aliases expanded, as YAML-to-JSON conversions do; the limits promise
// this stays within max_expanded_nodes.
size_t Walk(const YAML::Node& node, int depth) {
  if (depth > regatta::ParseLimits().max_depth + 1) std::abort();
  size_t nodes = 1;
  if (node.IsSequence() || node.IsMap()) {
    for (const auto& child : node) {
      if (node.IsMap()) {
        nodes += Walk(child.first, depth + 1) + Walk(child.second, depth + 1);
      } else {
        nodes += Walk(child, depth + 1);
      }
    }
  }
  return nodes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<YAML::Node>> docs = regatta::LoadAllYaml(text);
  if (docs.ok()) {
    size_t nodes = 0;
    for (const YAML::Node& doc : *docs) nodes += Walk(doc, 0);
    if (nodes > regatta::ParseLimits().max_expanded_nodes) std::abort();
  }
  absl::StatusOr<nlohmann::json> json = regatta::ParseJson(text);
  if (json.ok()) (void)json->dump();
  return 0;
}
