#ifndef REGATTA_SRC_COMMON_POD_ARMADA_H_
#define REGATTA_SRC_COMMON_POD_ARMADA_H_

// Armada's scheduling annotations on a job, read the way Armada reads them, for the API server
// (validation, and the gang at submit), the scheduler (failFast) and the CLI (keeping a gang in
// one request):
//
//   armadaproject.io/gangId: "g1"                 the job's Gang.id
//   armadaproject.io/gangCardinality: "3"         Gang.cardinality (required with gangId)
//   armadaproject.io/gangNodeUniformityLabel: ""  Gang.node_uniformity_label (optional)
//   armadaproject.io/failFast: "true"             a run that fails is never retried

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/map.h"
#include "regatta/v1/types.pb.h"

namespace regatta::pod {

inline constexpr absl::string_view kArmadaGangIdAnnotation = "armadaproject.io/gangId";
inline constexpr absl::string_view kArmadaGangCardinalityAnnotation =
    "armadaproject.io/gangCardinality";
inline constexpr absl::string_view kArmadaGangNodeUniformityLabelAnnotation =
    "armadaproject.io/gangNodeUniformityLabel";
inline constexpr absl::string_view kArmadaFailFastAnnotation = "armadaproject.io/failFast";

using Annotations = google::protobuf::Map<std::string, std::string>;

// The gang the annotations declare, or nullopt when there is no gangId. INVALID_ARGUMENT
// "FIELD[armadaproject.io/gangCardinality]: ..." (FIELD is the annotations' path) when the
// cardinality is missing or not a positive integer, or when the cardinality or uniformity
// label come without a gangId.
absl::StatusOr<std::optional<regatta::v1::Gang>> ArmadaGang(const Annotations& annotations,
                                                            absl::string_view field);

// The gang id alone ("" when none): what keeps a gang's members together before validation.
const std::string& ArmadaGangId(const Annotations& annotations);

// True when failFast is "true" (Armada's test; any other value is false there). Validation
// refuses values other than "true" and "false".
bool ArmadaFailFast(const Annotations& annotations);

}  // namespace regatta::pod

#endif  // REGATTA_SRC_COMMON_POD_ARMADA_H_
