#ifndef REGATTA_SRC_PIPELINES_IR_WRITE_H_
#define REGATTA_SRC_PIPELINES_IR_WRITE_H_

#include "nlohmann/json.hpp"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

// The pipeline spec as the kfp SDK writes it (the IR's camelCase JSON names; fields at their
// defaults left out), so ParsePipelineSpec reads back the same model. The platform spec is the
// second document of a compiled file and is not part of this one (spec.platform_spec as is).
// Used to store a canonical form of uploaded pipelines and by `regatta pipeline compile`.
nlohmann::ordered_json PipelineSpecToJson(const PipelineSpec& spec);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_WRITE_H_
