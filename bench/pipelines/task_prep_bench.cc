// Per-task work of the pipeline driver besides the condition: the cache fingerprint and the
// placeholder resolution of a typical kfp Python-function component.
//
//   build/<preset>/bench/pipelines/pipelines_task_prep_bench
//
// BM_Fingerprint: 5 parameter values (one a small map), 1 input artifact, 2 outputs, the
// SDK's sh -c bootstrap command (~1 KB) and its executor args; BM_ResolveArgs: the same task's
// args ("--executor_input", "{{$}}", "--function_to_execute", "f") with 2 parameter placeholders.
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/cache/fingerprint.h"
#include "src/pipelines/placeholders/placeholders.h"

namespace regatta::pipelines {
namespace {

const std::string& Bootstrap() {
  static const std::string text =
      "\nif ! [ -x \"$(command -v pip)\" ]; then\n" + std::string(900, 'x') + "\nfi\n";
  return text;
}

void BM_Fingerprint(benchmark::State& state) {
  cache::FingerprintInputs inputs;
  inputs.parameter_values = {{"n", 3.0},
                             {"name", "alice"},
                             {"ratio", 0.25},
                             {"flag", true},
                             {"opts", {{"b", 1}, {"a", {1, 2, 3}}}}};
  inputs.input_artifacts = {{"data",
                             {{"file:///var/lib/regatta/objects/p/r/t/u/data",
                               "sha256:0123456789abcdef0123456789abcdef", "41"}}}};
  inputs.output_parameters = {{"Output", "STRING"}};
  inputs.output_artifacts = {{"model", "system.Model@0.0.1"}};
  inputs.image = "python:3.11";
  inputs.command = {"sh", "-c", Bootstrap(), "sh", "-ec", "python3 -m kfp.dsl.executor_main"};
  inputs.args = {"--executor_input", "{{$}}", "--function_to_execute", "train"};
  for (auto _ : state) {
    absl::StatusOr<std::string> fingerprint = cache::Fingerprint(inputs);
    if (!fingerprint.ok()) state.SkipWithError("fingerprint failed");
    benchmark::DoNotOptimize(fingerprint);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Fingerprint);

void BM_ResolveArgs(benchmark::State& state) {
  placeholders::ExecutorValues values;
  values.parameter_values = {{"n", 3.0}, {"name", "alice"}, {"ratio", 0.25}};
  placeholders::RuntimeArtifact data;
  data.uri = "file:///var/lib/regatta/objects/p/r/t/u/data";
  values.input_artifacts["data"] = {data};
  placeholders::RuntimeArtifact model;
  model.uri = "file:///var/lib/regatta/objects/p/r/train/u2/model";
  values.output_artifacts["model"] = {model};
  values.output_parameter_files["Output"] = "/var/lib/regatta/tasks/t/outputs/Output";
  values.output_file = "/var/lib/regatta/tasks/t/output_metadata.json";
  const std::vector<std::string> args = {"--executor_input",
                                         "{{$}}",
                                         "--function_to_execute",
                                         "train",
                                         "--n={{$.inputs.parameters['n']}}",
                                         "{{$.inputs.parameters['name']}}"};
  for (auto _ : state) {
    absl::StatusOr<std::vector<std::string>> resolved = placeholders::ResolveArgs(args, values);
    if (!resolved.ok()) state.SkipWithError("resolve failed");
    benchmark::DoNotOptimize(resolved);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ResolveArgs);

}  // namespace
}  // namespace regatta::pipelines

BENCHMARK_MAIN();
