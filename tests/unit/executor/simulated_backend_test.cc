// The simulated run backend on a fake clock: durations from the annotation or the
// distribution, the exit-code annotation, stops, and the distributions themselves.
#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/common/clock.h"
#include "src/executor/simulated_executor.h"
#include "tests/unit/executor/test_nodes.h"

namespace regatta::executor {
namespace {

regatta::v1::JobRunLease Lease(const std::string& run_id,
                               std::map<std::string, std::string> annotations = {}) {
  regatta::v1::JobRunLease lease;
  lease.set_run_id(run_id);
  lease.set_node_id("sim-0000");
  lease.mutable_job()->set_id("job-" + run_id);
  lease.mutable_job()->mutable_annotations()->insert(annotations.begin(), annotations.end());
  return lease;
}

DurationDistribution Constant(absl::Duration d) {
  DurationDistribution dist;
  dist.kind = DurationDistribution::Kind::kConstant;
  dist.value = d;
  return dist;
}

// Always the same "random" number.
UniformSource Fixed(double u) {
  return [u] { return u; };
}

class SimulatedBackendTest : public ::testing::Test {
 protected:
  std::vector<RunResult> Results() { return backend_.WaitResults(absl::ZeroDuration()); }

  FakeClock clock_;
  SimulatedBackend backend_{&clock_, Constant(absl::Minutes(1)), Fixed(0.5)};
};

TEST_F(SimulatedBackendTest, ARunEndsAfterTheDistributionsDurationByTheClock) {
  const absl::Time start = clock_.Now();
  ASSERT_TRUE(backend_.Start(Lease("r1")).ok());
  clock_.Advance(absl::Seconds(59));
  EXPECT_TRUE(Results().empty());
  clock_.Advance(absl::Seconds(1));
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].run_id, "r1");
  EXPECT_EQ(results[0].end, RunEnd::kSucceeded);
  EXPECT_EQ(results[0].started, start);
  EXPECT_EQ(results[0].finished, start + absl::Minutes(1));
  EXPECT_TRUE(Results().empty());  // each result once
}

TEST_F(SimulatedBackendTest, TheDurationAnnotationWinsOverTheDistribution) {
  ASSERT_TRUE(backend_.Start(Lease("short", {{kSimulatedDurationAnnotation, "90s"}})).ok());
  ASSERT_TRUE(backend_.Start(Lease("long", {{kSimulatedDurationAnnotation, "1h30m"}})).ok());
  ASSERT_TRUE(backend_.Start(Lease("default")).ok());
  clock_.Advance(absl::Minutes(1));
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].run_id, "default");
  clock_.Advance(absl::Seconds(30));
  results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].run_id, "short");
  clock_.Advance(absl::Minutes(89));
  results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].run_id, "long");
}

TEST_F(SimulatedBackendTest, AZeroDurationRunHasEndedAtOnce) {
  ASSERT_TRUE(backend_.Start(Lease("r1", {{kSimulatedDurationAnnotation, "0s"}})).ok());
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].end, RunEnd::kSucceeded);
}

TEST_F(SimulatedBackendTest, ANonZeroExitCodeAnnotationFailsTheRunLikeAProcessExit) {
  ASSERT_TRUE(backend_
                  .Start(Lease("r1", {{kSimulatedDurationAnnotation, "5s"},
                                      {kSimulatedExitCodeAnnotation, "3"}}))
                  .ok());
  ASSERT_TRUE(backend_
                  .Start(Lease("r2", {{kSimulatedDurationAnnotation, "5s"},
                                      {kSimulatedExitCodeAnnotation, "0"}}))
                  .ok());
  clock_.Advance(absl::Seconds(5));
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 2u);
  const RunResult& failed = results[0].run_id == "r1" ? results[0] : results[1];
  const RunResult& succeeded = results[0].run_id == "r1" ? results[1] : results[0];
  EXPECT_EQ(failed.end, RunEnd::kFailed);
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_EQ(failed.error.reason(), regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  EXPECT_EQ(failed.error.category(), "ContainerError");
  EXPECT_EQ(failed.error.exit_code(), 3);
  EXPECT_TRUE(failed.error.terminal());
  EXPECT_EQ(succeeded.end, RunEnd::kSucceeded);
}

TEST_F(SimulatedBackendTest, UnreadableAnnotationsMeanTheRunCannotExecute) {
  absl::Status bad_duration = backend_.Start(Lease("r1", {{kSimulatedDurationAnnotation, "soon"}}));
  EXPECT_TRUE(absl::IsFailedPrecondition(bad_duration)) << bad_duration;
  EXPECT_NE(bad_duration.message().find(kSimulatedDurationAnnotation), absl::string_view::npos);
  EXPECT_TRUE(absl::IsFailedPrecondition(
      backend_.Start(Lease("r2", {{kSimulatedDurationAnnotation, "-5s"}}))));
  EXPECT_TRUE(absl::IsFailedPrecondition(
      backend_.Start(Lease("r3", {{kSimulatedExitCodeAnnotation, "one"}}))));
  EXPECT_EQ(backend_.runs(), 0);
}

TEST_F(SimulatedBackendTest, CancelAndPreemptEndARunAtOnceAndItsOwnEndIsNotReported) {
  ASSERT_TRUE(backend_.Start(Lease("c")).ok());
  ASSERT_TRUE(backend_.Start(Lease("p")).ok());
  clock_.Advance(absl::Seconds(10));
  ASSERT_TRUE(backend_.Stop("c", RunEnd::kCancelled).ok());
  ASSERT_TRUE(backend_.Stop("p", RunEnd::kPreempted).ok());
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].run_id, "c");
  EXPECT_EQ(results[0].end, RunEnd::kCancelled);
  EXPECT_EQ(results[0].finished, clock_.Now());
  EXPECT_EQ(results[1].run_id, "p");
  EXPECT_EQ(results[1].end, RunEnd::kPreempted);
  clock_.Advance(absl::Hours(1));
  EXPECT_TRUE(Results().empty());
  EXPECT_TRUE(absl::IsNotFound(backend_.Stop("c", RunEnd::kCancelled)));
}

TEST_F(SimulatedBackendTest, AStopAfterTheRunsTimeIsUpFindsItEnded) {
  ASSERT_TRUE(backend_.Start(Lease("r1")).ok());
  clock_.Advance(absl::Minutes(2));
  EXPECT_TRUE(absl::IsNotFound(backend_.Stop("r1", RunEnd::kCancelled)));
  std::vector<RunResult> results = Results();
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].end, RunEnd::kSucceeded);
}

TEST_F(SimulatedBackendTest, AKnownRunIsNotStartedTwiceUntilForgotten) {
  ASSERT_TRUE(backend_.Start(Lease("r1", {{kSimulatedDurationAnnotation, "0s"}})).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(backend_.Start(Lease("r1"))));
  ASSERT_EQ(Results().size(), 1u);
  EXPECT_TRUE(absl::IsAlreadyExists(backend_.Start(Lease("r1"))));  // ended, not forgotten
  backend_.Forget("r1");
  EXPECT_EQ(backend_.runs(), 0);
}

TEST_F(SimulatedBackendTest, StartFailsAfterStopAll) {
  ASSERT_TRUE(backend_.Start(Lease("r1")).ok());
  backend_.StopAll(absl::ZeroDuration());
  EXPECT_TRUE(absl::IsUnavailable(backend_.Start(Lease("r2"))));
}

TEST_F(SimulatedBackendTest, WaitResultsWaitsForTheEarliestEndInRealTime) {
  RealClock* real = RealClock::Get();
  SimulatedBackend backend(real, Constant(absl::Milliseconds(50)), Fixed(0.5));
  ASSERT_TRUE(backend.Start(Lease("r1")).ok());
  const absl::Time before = absl::Now();
  std::vector<RunResult> results = backend.WaitResults(absl::Seconds(10));
  ASSERT_EQ(results.size(), 1u);
  EXPECT_GE(absl::Now() - before, absl::Milliseconds(40));
  EXPECT_LT(absl::Now() - before, absl::Seconds(5));
}

TEST(DurationDistributionTest, ConstantUniformAndExponentialDrawFromTheirShapes) {
  DurationDistribution uniform;
  uniform.kind = DurationDistribution::Kind::kUniform;
  uniform.min = absl::Seconds(10);
  uniform.max = absl::Seconds(20);
  EXPECT_EQ(SampleDuration(uniform, Fixed(0.0)), absl::Seconds(10));
  EXPECT_EQ(SampleDuration(uniform, Fixed(0.25)), absl::Seconds(12.5));
  EXPECT_EQ(SampleDuration(Constant(absl::Seconds(7)), Fixed(0.9)), absl::Seconds(7));

  DurationDistribution exponential;
  exponential.kind = DurationDistribution::Kind::kExponential;
  exponential.mean = absl::Seconds(30);
  // The median of an exponential is mean * ln 2.
  EXPECT_NEAR(absl::ToDoubleSeconds(SampleDuration(exponential, Fixed(0.5))), 30 * std::log(2.0),
              1e-6);
  EXPECT_EQ(SampleDuration(exponential, Fixed(0.0)), absl::ZeroDuration());
}

TEST(DurationDistributionTest, SeededDrawsRepeatAndHaveTheConfiguredMean) {
  DurationDistribution exponential;
  exponential.kind = DurationDistribution::Kind::kExponential;
  exponential.mean = absl::Seconds(30);
  UniformSource a = SeededUniformSource(42);
  UniformSource b = SeededUniformSource(42);
  UniformSource c = SeededUniformSource(43);
  double sum = 0;
  bool differs = false;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) {
    const double u = a();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    EXPECT_EQ(u, b());
    differs |= u != c();
    sum += absl::ToDoubleSeconds(SampleDuration(exponential, [u] { return u; }));
  }
  EXPECT_TRUE(differs);
  // Standard error of the mean: 30 / sqrt(20000) ~ 0.21 s; allow five of them.
  EXPECT_NEAR(sum / kDraws, 30.0, 1.1);
}

TEST(SimulatedNodesTest, GroupsBecomeNodesNamedByPrefixAndIndex) {
  std::vector<SimulatedNodeGroup> groups = TwoSmallNodesAndAGpuNode();
  groups.push_back(groups[0]);
  groups.back().count = 1;
  absl::StatusOr<std::vector<NodeConfig>> nodes = SimulatedNodes(groups);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 4u);
  EXPECT_EQ((*nodes)[0].id, "sim-0000");
  EXPECT_EQ((*nodes)[1].id, "sim-0001");
  EXPECT_EQ((*nodes)[1].resources.at("cpu"), "2");
  EXPECT_EQ((*nodes)[2].id, "gpu-0000");
  EXPECT_EQ((*nodes)[2].labels.at("accelerator"), "a100");
  EXPECT_EQ((*nodes)[2].resources.at("nvidia.com/gpu"), "1");
  ASSERT_EQ((*nodes)[2].taints.size(), 1u);
  EXPECT_EQ((*nodes)[3].id, "sim-0002");  // numbered per prefix across groups
}

TEST(SimulatedNodesTest, ErrorsNameTheGroup) {
  SimulatedNodeGroup good;
  good.resources = {{"cpu", "1"}};
  SimulatedNodeGroup bad;
  bad.resources = {{"cpu", "lots"}};
  absl::StatusOr<std::vector<NodeConfig>> nodes = SimulatedNodes({good, bad});
  ASSERT_FALSE(nodes.ok());
  EXPECT_NE(nodes.status().message().find("executor.simulated.nodes[1].resources"),
            std::string::npos)
      << nodes.status();
  SimulatedNodeGroup none;
  none.count = 0;
  EXPECT_FALSE(SimulatedNodes({none}).ok());
}

}  // namespace
}  // namespace regatta::executor
