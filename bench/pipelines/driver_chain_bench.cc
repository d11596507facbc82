// The pipeline driver's own work per step of a chain: Advance after the previous step's job
// ended, which starts the next step (inputs, placeholders, fingerprint), and the submit and end
// notices. No I/O: the steps are bare (no outputs to read), as make_pipelines.py writes them
// for the simulated executor.
//
//   build/<preset>/bench/pipelines/pipelines_driver_chain_bench
//
// BM_ChainStep/C: the time per step of driving a C-step chain from start to end.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "src/common/ids.h"
#include "src/pipelines/engine/run_driver.h"

namespace regatta::pipelines::engine {
namespace {

using json = nlohmann::json;

// A kfp IR chain of `steps` bare container steps, each after the one before.
std::string ChainSpec(int steps) {
  json tasks = json::object();
  for (int i = 0; i < steps; ++i) {
    json task = {{"taskInfo", {{"name", absl::StrCat("step-", i)}}},
                 {"componentRef", {{"name", "comp-step"}}},
                 {"cachingOptions", {{"enableCache", true}}},
                 {"inputs",
                  {{"parameters",
                    {{"x", {{"runtimeValue", {{"constant", absl::StrCat("step-", i)}}}}},
                     {"salt", {{"componentInputParameter", "salt"}}}}}}}};
    if (i > 0) task["dependentTasks"] = json::array({absl::StrCat("step-", i - 1)});
    tasks[absl::StrCat("step-", i)] = std::move(task);
  }
  json parameter = {{"parameterType", "STRING"}};
  json spec = {
      {"pipelineInfo", {{"name", "bench-chain"}}},
      {"schemaVersion", "2.1.0"},
      {"deploymentSpec",
       {{"executors",
         {{"exec-step",
           {{"container",
             {{"image", "alpine:3.20"},
              {"command", json::array({"sh", "-c"})},
              {"args", json::array({"true", "{{$.inputs.parameters['x']}}"})}}}}}}}}},
      {"components",
       {{"comp-step",
         {{"executorLabel", "exec-step"},
          {"inputDefinitions", {{"parameters", {{"x", parameter}, {"salt", parameter}}}}}}}}},
      {"root",
       {{"inputDefinitions",
         {{"parameters",
           {{"salt",
             {{"parameterType", "STRING"}, {"defaultValue", "0"}, {"isOptional", true}}}}}}},
        {"dag", {{"tasks", tasks}}}}}};
  return spec.dump();
}

void BM_ChainStep(benchmark::State& state) {
  const int steps = static_cast<int>(state.range(0));
  const std::string spec = ChainSpec(steps);
  SequentialIdGenerator ids;
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  int64_t driven = 0;
  for (auto _ : state) {
    regatta::v1::PipelineRun run;
    run.set_id("run");
    run.set_pipeline_name("bench-chain");
    run.set_spec_json(spec);
    run.set_pipeline_root("file:///nonexistent");
    run.set_state(regatta::v1::PIPELINE_RUN_STATE_PENDING);
    DriverOptions options;
    options.work_root = "/nonexistent";
    std::unique_ptr<RunDriver> driver = *RunDriver::Create(std::move(run), &ids, options);
    for (int64_t job = 0;; ++job) {
      DriverOutput out = driver->Advance(now);
      if (out.launches.empty()) break;
      const std::string job_id = absl::StrCat("job-", job);
      driver->OnJobSubmitted(out.launches.front().task_path, out.launches.front().attempt, job_id,
                             now);
      driver->OnJobEnded(job_id, /*succeeded=*/true, "", now);
      ++driven;
    }
    if (!driver->Terminal()) state.SkipWithError("the chain did not finish");
  }
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(driven), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChainStep)->Arg(10)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta::pipelines::engine

BENCHMARK_MAIN();
