// Pipeline files as `POST /v1/pipelines`, `POST /v1/runs` with an inline spec and
// `regatta pipeline validate|compile` read them: kfp IR (YAML or JSON) or the authoring YAML.
// Whatever is accepted is written as the server stores it and must read back.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/pipelines/authoring/authoring.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/write.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<regatta::pipelines::ir::PipelineSpec> spec =
      regatta::pipelines::authoring::LoadAnyPipelineFile(text);
  if (!spec.ok()) return 0;
  const std::string stored = regatta::pipelines::ir::PipelineSpecToJson(*spec).dump();
  if (spec->platform_spec) (void)spec->platform_spec->dump();
  // The run driver loads a run's spec from this JSON.
  if (!regatta::pipelines::ir::LoadPipelineSpec(stored).ok()) std::abort();
  return 0;
}
