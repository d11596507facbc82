// `regatta simulate` output, CSV and errors, with a fake algorithm (the scenario tests run the
// real one).
#include "src/cli/simulate.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/app.h"
#include "src/common/config.h"
#include "tests/unit/scheduler_sim/first_fit.h"

namespace regatta::cli {
namespace {

using ::regatta::scheduler::sim::testing::FirstFitFn;
using ::testing::HasSubstr;

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

class SimulateTest : public ::testing::Test {
 protected:
  SimulateTest() {
    env_.out = &out_;
    env_.err = &err_;
    options_.cluster_file = WriteFile("cluster.yaml", R"(
pools: [{name: p, nodeGroups: [{count: 2, resources: {cpu: 2}}]}]
scheduling: {cyclePeriod: 1s}
)");
    options_.workload_file = WriteFile("workload.yaml", R"(
queues: [{name: a}, {name: b}]
jobs:
  - {queue: a, count: 3, requests: {cpu: 1}, duration: 4s}
  - {queue: b, count: 1, requests: {cpu: 1}, submitAt: 1s, duration: 2s}
)");
  }
  CommandEnv env_;
  std::ostringstream out_, err_;
  SimulateOptions options_;
};

TEST_F(SimulateTest, PrintsSeriesAndSummaryAndWritesCsv) {
  options_.interval = "2s";
  options_.csv_file = ::testing::TempDir() + "/series.csv";
  ASSERT_TRUE(Simulate(env_, options_, FirstFitFn()).ok()) << out_.str();
  const std::string out = out_.str();
  // t=0: a runs 3 of 4 cpu; t=1: b takes the last; t=3: b done; t=4: a done, idle.
  EXPECT_THAT(out, HasSubstr("0s     p      a       0.750   0.500   0.750      3         0\n"));
  EXPECT_THAT(out, HasSubstr("2s     p      b       0.250"));
  EXPECT_THAT(out, HasSubstr("4s     p      a       0.000"));
  EXPECT_THAT(out, HasSubstr("0s     p      cpu 0.750\n"));
  EXPECT_THAT(out, HasSubstr("Summary at 4s (5 cycles)\n"));
  EXPECT_THAT(out, HasSubstr("Preemptions: none\n"));
  auto csv = ReadFileToString(options_.csv_file);
  ASSERT_TRUE(csv.ok());
  EXPECT_THAT(*csv, ::testing::StartsWith("time_s,pool,subject,metric,value\n"
                                          "0.000,p,a,share,0.750000\n"
                                          "0.000,p,a,fair_share,0.500000\n"));
  EXPECT_THAT(*csv, HasSubstr("2.000,p,b,running,1\n"));
  EXPECT_THAT(*csv, HasSubstr("4.000,p,cpu,utilisation,0.000000\n"));
}

TEST_F(SimulateTest, WritesPerJobAndPerCycleCsv) {
  options_.workload_file = WriteFile("workload_jobs.yaml", R"(
queues: [{name: a}]
jobs:
  - {name: fits, queue: a, count: 2, requests: {cpu: 1}, duration: 2s}
  - {name: huge, queue: a, count: 1, requests: {cpu: 64}, duration: 1s}
)");
  options_.jobs_csv_file = ::testing::TempDir() + "/jobs.csv";
  options_.cycles_csv_file = ::testing::TempDir() + "/cycles.csv";
  ASSERT_TRUE(Simulate(env_, options_, FirstFitFn()).ok()) << out_.str();
  auto jobs = ReadFileToString(options_.jobs_csv_file);
  ASSERT_TRUE(jobs.ok());
  EXPECT_THAT(*jobs, ::testing::StartsWith(
                         "job_id,template,queue,job_set,priority_class,state,submit_s,lease_s,"
                         "end_s,pool,node,preemption_kind,preempted_by_queue,reason\n"
                         "fits-000000,fits,a,,default,SUCCEEDED,0.000,0.000,2.000,p,p-0-0,,,\n"));
  // Never leased: no lease time, pool or node; the reason holds commas, so it is quoted.
  EXPECT_THAT(*jobs, HasSubstr("huge-000000,huge,a,,default,REJECTED,0.000,,0.000,,,,,\"pool p: "
                               "none of 2 nodes match"));
  auto cycles = ReadFileToString(options_.cycles_csv_file);
  ASSERT_TRUE(cycles.ok());
  EXPECT_THAT(*cycles, ::testing::StartsWith("cycle,time_s,pool,queue,share,fair_share,"
                                             "adjusted_fair_share,running,queued,leased,"
                                             "preempted\n1,0.000,p,a,0.500000,"));
  EXPECT_THAT(*cycles, HasSubstr(",2,0,2,0\n2,1.000,p,a,0.500000,"));
  EXPECT_THAT(*cycles, HasSubstr("\n3,2.000,p,a,0.000000,"));
}

TEST_F(SimulateTest, BadFilesAndFlagsAreNamed) {
  options_.until = "soon";
  absl::Status until = Simulate(env_, options_, FirstFitFn());
  EXPECT_TRUE(IsUsageError(until));
  EXPECT_THAT(std::string(until.message()), HasSubstr("--until"));
  options_.until.clear();
  options_.workload_file = WriteFile("bad.yaml", "jobs: [{queue: a, requests: {cpu: x}}]");
  absl::Status bad = Simulate(env_, options_, FirstFitFn());
  EXPECT_THAT(std::string(bad.message()), HasSubstr("bad.yaml: jobs[0].requests.cpu: "));
  options_.cluster_file = ::testing::TempDir() + "/missing.yaml";
  EXPECT_THAT(std::string(Simulate(env_, options_, FirstFitFn()).message()),
              HasSubstr("missing.yaml"));
}

TEST_F(SimulateTest, AnomaliesFailTheRun) {
  absl::Status status = Simulate(env_, options_, [](scheduler::PoolRoundInput input) {
    scheduler::PoolRoundResult result;
    result.leases.push_back(scheduler::Lease{"nobody", "a", 0});
    return result;
  });
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(out_.str(), HasSubstr("lease of unknown job nobody"));
}

TEST_F(SimulateTest, VerbRunsTheRealAlgorithm) {
  std::istringstream in;
  std::ostringstream out, err;
  int code = RunCli({"simulate", "--cluster", options_.cluster_file, "--workload",
                     options_.workload_file, "--interval", "1s"},
                    in, out, err);
  ASSERT_EQ(code, 0) << err.str();
  // t=0: a alone takes 3 of 4 cpu; t=1: b the last one; all done at 4s.
  EXPECT_THAT(out.str(), HasSubstr("1s     p      b       0.250"));
  EXPECT_THAT(out.str(), HasSubstr("Summary at 4s (5 cycles)"));
  int usage = RunCli({"simulate", "--workload", options_.workload_file}, in, out, err);
  EXPECT_EQ(usage, 2);
  EXPECT_THAT(err.str(), HasSubstr("--cluster"));
}

}  // namespace
}  // namespace regatta::cli
