#include "src/common/pod/armada.h"

#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace regatta::pod {
namespace {

std::string EntryPath(absl::string_view field, absl::string_view key) {
  return absl::StrCat(field, "[", key, "]");
}

const std::string* Find(const Annotations& annotations, absl::string_view key) {
  auto it = annotations.find(std::string(key));
  return it == annotations.end() ? nullptr : &it->second;
}

}  // namespace

absl::StatusOr<std::optional<regatta::v1::Gang>> ArmadaGang(const Annotations& annotations,
                                                            absl::string_view field) {
  const std::string* id = Find(annotations, kArmadaGangIdAnnotation);
  const std::string* cardinality = Find(annotations, kArmadaGangCardinalityAnnotation);
  const std::string* label = Find(annotations, kArmadaGangNodeUniformityLabelAnnotation);
  if (id == nullptr || id->empty()) {
    for (absl::string_view key :
         {kArmadaGangCardinalityAnnotation, kArmadaGangNodeUniformityLabelAnnotation}) {
      const std::string* value = Find(annotations, key);
      if (value != nullptr && !value->empty()) {
        return absl::InvalidArgumentError(absl::StrCat(EntryPath(field, key), ": needs the ",
                                                       kArmadaGangIdAnnotation,
                                                       " annotation beside it"));
      }
    }
    if (id != nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(EntryPath(field, kArmadaGangIdAnnotation), ": must not be empty"));
    }
    return std::nullopt;
  }
  if (cardinality == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(EntryPath(field, kArmadaGangCardinalityAnnotation), ": required with ",
                     kArmadaGangIdAnnotation, " (the number of jobs in the gang, e.g. \"3\")"));
  }
  int64_t n = 0;
  if (!absl::SimpleAtoi(*cardinality, &n) || n < 1 || n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat(EntryPath(field, kArmadaGangCardinalityAnnotation), ": \"", *cardinality,
                     "\" is not a positive integer"));
  }
  regatta::v1::Gang gang;
  gang.set_id(*id);
  gang.set_cardinality(static_cast<uint32_t>(n));
  if (label != nullptr) gang.set_node_uniformity_label(*label);
  return gang;
}

const std::string& ArmadaGangId(const Annotations& annotations) {
  static const std::string* kEmpty = new std::string();
  const std::string* id = Find(annotations, kArmadaGangIdAnnotation);
  return id == nullptr ? *kEmpty : *id;
}

bool ArmadaFailFast(const Annotations& annotations) {
  const std::string* value = Find(annotations, kArmadaFailFastAnnotation);
  return value != nullptr && *value == "true";
}

}  // namespace regatta::pod
