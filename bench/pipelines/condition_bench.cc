// Evaluating a parsed trigger-policy condition, as the pipeline driver does once per task.
//
//   build/<preset>/bench/pipelines/pipelines_condition_bench
//
// BM_EvaluateElifCondition: the kfp 2.x dsl.Elif shape (cast, two comparisons, ! and &&) against
// a task's parameter map of 8 values; BM_EvaluateStringEquality: `p == 'heads'`;
// BM_ParseElifCondition: parsing it (done once per task spec).
#include <string>

#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/cel/condition.h"

namespace regatta::pipelines::cel {
namespace {

constexpr char kElif[] =
    "!(int(inputs.parameter_values['pipelinechannel--int-0-to-9999-Output']) < 5000) && "
    "int(inputs.parameter_values['pipelinechannel--int-0-to-9999-Output']) > 5000";

nlohmann::json Params() {
  nlohmann::json params = {{"pipelinechannel--int-0-to-9999-Output", 7321.0},
                           {"pipelinechannel--flip-coin-Output", "heads"}};
  for (int i = 0; i < 6; ++i) params["pipelinechannel--other-" + std::to_string(i)] = i;
  return params;
}

// Evaluates `text` (which must hold for Params()) in the timed loop.
void EvaluateLoop(benchmark::State& state, const char* text) {
  CompiledCondition condition = *ParseCondition(text);
  nlohmann::json params = Params();
  for (auto _ : state) {
    absl::StatusOr<bool> result = Evaluate(condition, params);
    if (!result.ok() || !*result) state.SkipWithError("unexpected result");
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EvaluateElifCondition(benchmark::State& state) { EvaluateLoop(state, kElif); }
BENCHMARK(BM_EvaluateElifCondition);

void BM_EvaluateStringEquality(benchmark::State& state) {
  EvaluateLoop(state, "inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads'");
}
BENCHMARK(BM_EvaluateStringEquality);

void BM_ParseElifCondition(benchmark::State& state) {
  for (auto _ : state) {
    absl::StatusOr<CompiledCondition> condition = ParseCondition(kElif);
    benchmark::DoNotOptimize(condition);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseElifCondition);

}  // namespace
}  // namespace regatta::pipelines::cel

BENCHMARK_MAIN();
