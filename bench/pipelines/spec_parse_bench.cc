// Reading a pipeline spec: a 100-task chain in kfp IR (what `regatta pipeline run` of the
// benchmark's chain sends), as the JSON object it is (ParseJsonObject's path) and as the same
// text behind a YAML comment line, which sends it through yaml-cpp. The API reads a run's spec
// twice at create time and the engine once more before the first step starts.
//
//   build/<preset>/bench/pipelines/pipelines_spec_parse_bench
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/ir/parse.h"

namespace regatta::pipelines {
namespace {

std::string ChainSpec(int steps) {
  nlohmann::json spec = {{"pipelineInfo", {{"name", "chain"}}},
                         {"schemaVersion", "2.1.0"},
                         {"sdkVersion", "kfp-2.13.0"}};
  nlohmann::json& tasks = spec["root"]["dag"]["tasks"];
  for (int i = 0; i < steps; ++i) {
    const std::string name = absl::StrCat("step-", i);
    nlohmann::json component = {{"executorLabel", "exec-" + name}};
    component["inputDefinitions"]["parameters"]["x"] = {{"parameterType", "STRING"}};
    component["outputDefinitions"]["parameters"]["y"] = {{"parameterType", "STRING"}};
    spec["components"]["comp-" + name] = component;
    spec["deploymentSpec"]["executors"]["exec-" + name]["container"] = {
        {"image", "alpine"},
        {"command", {"sh", "-c", "echo -n \"$0.\" > \"$1\""}},
        {"args", {"{{$.inputs.parameters['x']}}", "{{$.outputs.parameters['y'].output_file}}"}}};
    nlohmann::json task = {{"taskInfo", {{"name", name}}},
                           {"componentRef", {{"name", "comp-" + name}}}};
    if (i == 0) {
      task["inputs"]["parameters"]["x"]["runtimeValue"]["constant"] = "start";
    } else {
      const std::string producer = absl::StrCat("step-", i - 1);
      task["dependentTasks"] = {producer};
      task["inputs"]["parameters"]["x"]["taskOutputParameter"] = {{"producerTask", producer},
                                                                  {"outputParameterKey", "y"}};
    }
    tasks[name] = task;
  }
  return spec.dump(2);
}

void BM_ParseChainSpec(benchmark::State& state) {
  const bool through_yaml = state.range(0) == 1;
  const std::string text = (through_yaml ? "# YAML\n" : "") + ChainSpec(100);
  for (auto _ : state) {
    absl::StatusOr<ir::PipelineSpec> spec = ir::LoadPipelineSpec(text);
    if (!spec.ok()) state.SkipWithError(std::string(spec.status().message()).c_str());
    benchmark::DoNotOptimize(spec);
  }
  state.SetLabel(through_yaml ? "yaml-cpp" : "json");
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(text.size()));
}
BENCHMARK(BM_ParseChainSpec)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta::pipelines

BENCHMARK_MAIN();
