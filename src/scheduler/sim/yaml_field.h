#ifndef REGATTA_SRC_SCHEDULER_SIM_YAML_FIELD_H_
#define REGATTA_SRC_SCHEDULER_SIM_YAML_FIELD_H_

// Reading the simulator's YAML files (Regatta's and Armada's formats) field by field.

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/common/status_macros.h"
#include "src/scheduler/nodedb/node.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler::sim {

// A YAML node with its path from the document root, so every error names the file and field.
class Field {
 public:
  Field(YAML::Node node, std::string path, absl::string_view file)
      : node_(std::move(node)), path_(std::move(path)), file_(file) {}

  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": ", path_.empty() ? "(top level)" : path_, ": ", message));
  }
  // Absent fields (yaml-cpp's invalid "zombie" nodes) read as undefined, never throw.
  bool IsMap() const { return node_.IsDefined() && node_.IsMap(); }
  const YAML::Node& node() const { return node_; }
  const std::string& path() const { return path_; }
  bool Has(absl::string_view key) const {
    return IsMap() && node_[std::string(key)].IsDefined() && !node_[std::string(key)].IsNull();
  }
  Field operator[](absl::string_view key) const {
    return Field(IsMap() ? node_[std::string(key)] : YAML::Node(YAML::NodeType::Undefined),
                 path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key), file_);
  }
  Field At(size_t i) const { return Field(node_[i], absl::StrCat(path_, "[", i, "]"), file_); }

  absl::Status ExpectMap(std::initializer_list<absl::string_view> known) const {
    if (!IsMap()) return Error("must be a map");
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>();
      bool found = false;
      for (absl::string_view k : known) found = found || k == key;
      if (!found) {
        return (*this)[key].Error(
            absl::StrCat("unknown field (known: ", absl::StrJoin(known, ", "), ")"));
      }
    }
    return absl::OkStatus();
  }
  // The elements of a sequence (an absent or null field is an empty one).
  absl::StatusOr<std::vector<Field>> Elements() const {
    std::vector<Field> out;
    if (!node_.IsDefined() || node_.IsNull()) return out;
    if (!node_.IsSequence()) return Error("must be a list");
    for (size_t i = 0; i < node_.size(); ++i) out.push_back(At(i));
    return out;
  }
  // The entries of a map in document order (an absent or null field is an empty one).
  absl::StatusOr<std::vector<std::pair<std::string, Field>>> Entries() const {
    std::vector<std::pair<std::string, Field>> out;
    if (!node_.IsDefined() || node_.IsNull()) return out;
    if (!node_.IsMap()) return Error("must be a map");
    for (const auto& kv : node_) {
      std::string key = kv.first.as<std::string>();
      out.emplace_back(key, (*this)[key]);
    }
    return out;
  }

  template <typename T>
  absl::StatusOr<T> As(absl::string_view what) const {
    if (!node_.IsDefined() || node_.IsNull()) return Error(absl::StrCat("is required: ", what));
    if (!node_.IsScalar()) return Error(absl::StrCat("must be ", what));
    try {
      return node_.as<T>();
    } catch (const YAML::Exception&) {
      return Error(absl::StrCat("must be ", what, ", got \"", node_.Scalar(), "\""));
    }
  }
  absl::StatusOr<std::string> String() const { return As<std::string>("a string"); }
  absl::StatusOr<double> Double() const { return As<double>("a number"); }
  absl::StatusOr<int64_t> Int() const { return As<int64_t>("an integer"); }
  absl::StatusOr<bool> Bool() const { return As<bool>("true or false"); }
  absl::StatusOr<absl::Duration> Duration() const {
    ASSIGN_OR_RETURN(std::string text, String());
    absl::Duration d;
    if (!absl::ParseDuration(text, &d) || d < absl::ZeroDuration()) {
      return Error(absl::StrCat("must be a duration such as 30s, 5m, 1h30m; got \"", text, "\""));
    }
    return d;
  }
  absl::StatusOr<double> NonNegativeDouble() const {
    ASSIGN_OR_RETURN(double v, Double());
    if (!(v >= 0)) return Error("must be >= 0");
    return v;
  }
  absl::StatusOr<int64_t> IntAtLeast(int64_t min) const {
    ASSIGN_OR_RETURN(int64_t v, Int());
    if (v < min) return Error(absl::StrCat("must be >= ", min));
    return v;
  }
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> StringMap() const {
    absl::flat_hash_map<std::string, std::string> out;
    ASSIGN_OR_RETURN(auto entries, Entries());
    for (auto& [key, field] : entries) {
      ASSIGN_OR_RETURN(out[key], field.String());
    }
    return out;
  }
  // {cpu: 32, memory: 256Gi}
  absl::StatusOr<ResourceList> Resources() const {
    ResourceList out;
    ASSIGN_OR_RETURN(auto entries, Entries());
    for (auto& [name, field] : entries) {
      if (!IsValidResourceName(name)) return field.Error("not a valid resource name");
      ASSIGN_OR_RETURN(std::string text, field.String());
      auto q = Quantity::Parse(text);
      if (!q.ok()) return field.Error(q.status().message());
      out.Set(ResourceNames::Global().Intern(name), *q);
    }
    return out;
  }

 private:
  YAML::Node node_;
  std::string path_;
  absl::string_view file_;
};

// Kubernetes-shaped taints and tolerations, shared by both formats (defined in spec.cc).
absl::StatusOr<Taint> ParseTaint(const Field& f);
absl::StatusOr<regatta::v1::Toleration> ParseToleration(const Field& f);

}  // namespace regatta::scheduler::sim

#endif  // REGATTA_SRC_SCHEDULER_SIM_YAML_FIELD_H_
