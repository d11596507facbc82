// End to end: the built binary runs Armada-format simulator files (tests/testdata/armada,
// written for Regatta in the shapes of Armada's simulator specs) and its per-cycle CSV shows the
// fair shares Armada's documentation promises: two queues of equal weight share a pool equally,
// weights 2:1 give shares 2:1. Also the per-job CSV of a workload with dependencies, delays, a
// gang and a repeated template, and errors naming the field.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

const std::string kData = REGATTA_ARMADA_TESTDATA_DIR;

class SimulateArmadaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / "simulate_armada";
    std::filesystem::create_directories(dir_);
  }

  RunResult Simulate(std::vector<std::string> args) {
    std::vector<std::string> argv = {RegattaBinary(), "simulate"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, dir_.string());
  }

  // Rows of a CSV file with a header, as column -> value.
  static std::vector<std::map<std::string, std::string>> ReadCsv(const std::string& path) {
    std::vector<std::string> lines = absl::StrSplit(Slurp(path), '\n', absl::SkipEmpty());
    std::vector<std::map<std::string, std::string>> rows;
    if (lines.empty()) return rows;
    std::vector<std::string> header = absl::StrSplit(lines[0], ',');
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> cells = absl::StrSplit(lines[i], ',');
      std::map<std::string, std::string> row;
      for (size_t c = 0; c < header.size() && c < cells.size(); ++c) row[header[c]] = cells[c];
      rows.push_back(std::move(row));
    }
    return rows;
  }

  // Each queue's mean share of the pool over the cycles from `from_s` to `to_s`.
  std::map<std::string, double> MeanShares(const std::string& workload, double from_s,
                                           double to_s) {
    const std::string cycles = (dir_ / (workload + ".cycles.csv")).string();
    RunResult r =
        Simulate({"--cluster", kData + "/cluster_cpu.yaml", "--workload", kData + "/" + workload,
                  "--scheduling-config", kData + "/scheduling_config.yaml", "--until", "30m",
                  "--out-cycles", cycles});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    std::map<std::string, double> sum;
    std::map<std::string, int> n;
    for (const auto& row : ReadCsv(cycles)) {
      double t = 0, share = 0;
      if (!absl::SimpleAtod(row.at("time_s"), &t) || !absl::SimpleAtod(row.at("share"), &share)) {
        ADD_FAILURE() << "bad row";
        continue;
      }
      if (t < from_s || t > to_s) continue;
      sum[row.at("queue")] += share;
      ++n[row.at("queue")];
    }
    std::map<std::string, double> mean;
    for (const auto& [queue, total] : sum) mean[queue] = total / n[queue];
    return mean;
  }

  std::filesystem::path dir_;
};

TEST_F(SimulateArmadaTest, EqualWeightsGiveEqualShares) {
  // From 5m (the pool is full after the ramp allowed by maximumResourceFractionToSchedule) to
  // 30m, through the first jobs' completions at 10m+ and their replacement.
  std::map<std::string, double> shares = MeanShares("workload_two_queues_equal.yaml", 300, 1800);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_NEAR(shares["A"], 0.5, 0.02);
  EXPECT_NEAR(shares["B"], 0.5, 0.02);
  EXPECT_NEAR(shares["A"] / shares["B"], 1.0, 0.05);
}

TEST_F(SimulateArmadaTest, WeightsTwoToOneGiveSharesTwoToOne) {
  std::map<std::string, double> shares = MeanShares("workload_two_queues_weighted.yaml", 300, 1800);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_NEAR(shares["A"], 2.0 / 3.0, 0.02);
  EXPECT_NEAR(shares["B"], 1.0 / 3.0, 0.02);
  EXPECT_NEAR(shares["A"] / shares["B"], 2.0, 0.1);
}

TEST_F(SimulateArmadaTest, DependenciesDelaysGangAndRepeatInPerJobCsv) {
  const std::string jobs = (dir_ / "jobs.csv").string();
  RunResult r = Simulate({"--cluster", kData + "/cluster_gpu_legacy.yaml", "--workload",
                          kData + "/workload_pipeline.yaml", "--scheduling-config",
                          kData + "/scheduling_config.yaml", "--out-jobs", jobs});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<std::string, std::map<std::string, std::string>> by_id;
  for (auto& row : ReadCsv(jobs)) by_id[row["job_id"]] = row;
  ASSERT_EQ(by_id.size(), 12u);  // 4 prepare + 2 train + 2 x 3 batch
  double last_prepare_end = 0;
  for (int i = 0; i < 4; ++i) {
    const auto& row = by_id["prepare-00000" + std::to_string(i)];
    EXPECT_EQ(row.at("state"), "SUCCEEDED");
    EXPECT_EQ(row.at("pool"), "cpu");
    last_prepare_end = std::max(last_prepare_end, std::stod(row.at("end_s")));
  }
  EXPECT_DOUBLE_EQ(last_prepare_end, 120);  // runtime minimum 2m, no tail
  for (const std::string id : {"train-000000", "train-000001"}) {
    const auto& row = by_id[id];
    // Submitted 30s after its dependency ended, on the GPU pool (toleration, selector).
    EXPECT_DOUBLE_EQ(std::stod(row.at("submit_s")), 150) << id;
    EXPECT_EQ(row.at("pool"), "gpu");
    EXPECT_EQ(row.at("state"), "SUCCEEDED");
  }
  // The gang of two is leased at once.
  EXPECT_EQ(by_id["train-000000"].at("lease_s"), by_id["train-000001"].at("lease_s"));
  // An empty id is <queue>-<index>; repeat: numTimes 2, period 10m after earliestSubmitTime 1m.
  EXPECT_DOUBLE_EQ(std::stod(by_id["batch-0-r0-000000"].at("submit_s")), 60);
  EXPECT_DOUBLE_EQ(std::stod(by_id["batch-0-r1-000002"].at("submit_s")), 660);
  EXPECT_EQ(by_id["batch-0-r1-000002"].at("priority_class"), "armada-preemptible");
}

TEST_F(SimulateArmadaTest, FieldsThatCannotBeHonouredAreNamed) {
  const std::string workload = (dir_ / "affinity.yaml").string();
  std::ofstream(workload) << R"(name: "affinity"
queues:
  - name: A
    weight: 1
    jobTemplates:
      - number: 1
        requirements:
          affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {}}}
          resourceRequirements: {requests: {cpu: 1}}
)";
  RunResult r = Simulate({"--cluster", kData + "/cluster_cpu.yaml", "--workload", workload});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("queues[0].jobTemplates[0].requirements.affinity: cannot be "
                               "honoured"));

  const std::string config = (dir_ / "config.yaml").string();
  std::ofstream(config) << "maxQueueLookback: 1000\n";
  r = Simulate({"--cluster", kData + "/cluster_cpu.yaml", "--workload",
                kData + "/workload_two_queues_equal.yaml", "--scheduling-config", config});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("config.yaml: maxQueueLookback: cannot be honoured"));
}

}  // namespace
}  // namespace regatta::testing
