// The server configuration: the executor.simulated section (defaults, node groups, durations,
// errors that name the key), pipelines.progressHold and scheduling.viewsLinger.
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::server {
namespace {

absl::StatusOr<ServerConfig> Load(std::vector<std::string> overrides) {
  UpFlags flags;
  flags.overrides = std::move(overrides);
  return LoadServerConfig(flags, {});
}

TEST(SimulatedExecutorConfigTest, DefaultsAreTenNodesOfThirtyTwoCpuAndTenSecondRuns) {
  absl::StatusOr<ServerConfig> config = Load({});
  ASSERT_TRUE(config.ok()) << config.status();
  const SimulatedConfig& sim = config->executor.simulated;
  ASSERT_EQ(sim.node_groups.size(), 1u);
  EXPECT_EQ(sim.node_groups[0].count, 10);
  EXPECT_EQ(sim.node_groups[0].name_prefix, "sim-");
  EXPECT_EQ(sim.node_groups[0].resources.at("cpu"), "32");
  EXPECT_EQ(sim.node_groups[0].resources.at("memory"), "128Gi");
  EXPECT_EQ(sim.duration.kind, executor::DurationDistribution::Kind::kConstant);
  EXPECT_EQ(sim.duration.value, absl::Seconds(10));
  EXPECT_EQ(sim.seed, 1u);
}

TEST(SimulatedExecutorConfigTest, NodeGroupsAndADistributionFromOverrides) {
  absl::StatusOr<ServerConfig> config =
      Load({"executor.simulated.nodes=[{count: 3, cpu: '8'}, {count: 2, namePrefix: gpu-, "
            "resources: {nvidia.com/gpu: '4'}, labels: {accelerator: a100}, "
            "taints: [{key: gpu, effect: NoSchedule}]}]",
            "executor.simulated.duration.distribution=uniform",
            "executor.simulated.duration.min=2s", "executor.simulated.duration.max=5m",
            "executor.simulated.seed=7", "executor.pool=sim", "executor.id=simex"});
  ASSERT_TRUE(config.ok()) << config.status();
  const SimulatedConfig& sim = config->executor.simulated;
  ASSERT_EQ(sim.node_groups.size(), 2u);
  EXPECT_EQ(sim.node_groups[0].resources.at("cpu"), "8");
  EXPECT_EQ(sim.node_groups[0].resources.at("memory"), "128Gi");  // the default
  EXPECT_EQ(sim.node_groups[1].name_prefix, "gpu-");
  EXPECT_EQ(sim.node_groups[1].resources.at("nvidia.com/gpu"), "4");
  EXPECT_EQ(sim.node_groups[1].labels.at("accelerator"), "a100");
  ASSERT_EQ(sim.node_groups[1].taints.size(), 1u);
  EXPECT_EQ(sim.duration.kind, executor::DurationDistribution::Kind::kUniform);
  EXPECT_EQ(sim.duration.min, absl::Seconds(2));
  EXPECT_EQ(sim.duration.max, absl::Minutes(5));
  EXPECT_EQ(sim.seed, 7u);

  executor::SimulatedExecutorOptions options = SimulatedExecutorOptionsFrom(config->executor);
  EXPECT_EQ(options.executor.executor_id, "simex");
  EXPECT_EQ(options.executor.pool, "sim");
  EXPECT_TRUE(options.executor.logs_listen.empty());
  absl::StatusOr<std::vector<executor::NodeConfig>> nodes =
      executor::SimulatedNodes(options.node_groups);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 5u);
  EXPECT_EQ(nodes->back().id, "gpu-0001");
}

TEST(SimulatedExecutorConfigTest, ErrorsNameTheKey) {
  for (const auto& [override, key] : std::vector<std::pair<std::string, std::string>>{
           {"executor.simulated.duration.distribution=normal",
            "executor.simulated.duration.distribution"},
           {"executor.simulated.duration.mean=soon", "executor.simulated.duration.mean"},
           {"executor.simulated.nodes=[{count: 2, colour: red}]",
            "executor.simulated.nodes[0].colour"},
           {"executor.simulated.nodes=[{count: -1}]", "executor.simulated.nodes[0].count"},
           {"executor.simulated.nodes={count: 2}", "executor.simulated.nodes"},
           {"executor.simulated.bogus=1", "executor.simulated.bogus"},
       }) {
    absl::StatusOr<ServerConfig> config = Load({override});
    ASSERT_FALSE(config.ok()) << override;
    EXPECT_NE(config.status().message().find(key), std::string::npos)
        << override << ": " << config.status();
  }
  absl::StatusOr<ServerConfig> config =
      Load({"executor.simulated.duration.distribution=uniform",
            "executor.simulated.duration.min=10s", "executor.simulated.duration.max=1s"});
  ASSERT_FALSE(config.ok());
  EXPECT_NE(config.status().message().find("executor.simulated.duration.max"), std::string::npos);
}

TEST(PipelinesConfigTest, ProgressHoldDefaultsToTwentyMillisecondsAndIsBounded) {
  absl::StatusOr<ServerConfig> config = Load({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->pipelines.progress_hold, absl::Milliseconds(20));
  config = Load({"pipelines.progressHold=0s"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->pipelines.progress_hold, absl::ZeroDuration());
  for (const char* bad : {"pipelines.progressHold=-1s", "pipelines.progressHold=2m"}) {
    config = Load({bad});
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.status().message().find("pipelines.progressHold"), std::string::npos)
        << config.status();
  }
}

// Issue 21: "inf" parsed as a duration, and a huge cache TTL made expiry times invalid.
TEST(PipelinesConfigTest, DurationsAreFiniteAndCacheTtlIsBounded) {
  for (const char* bad :
       {"pipelines.cacheTtl=inf", "pipelines.cacheTtl=1000000h", "scheduling.cyclePeriod=inf"}) {
    absl::StatusOr<ServerConfig> config = Load({bad});
    ASSERT_FALSE(config.ok()) << bad;
    const std::string key(absl::string_view(bad).substr(0, absl::string_view(bad).find('=')));
    EXPECT_NE(config.status().message().find(key), std::string::npos) << config.status();
  }
  EXPECT_TRUE(Load({"pipelines.cacheTtl=720h"}).ok());
}

TEST(SchedulingConfigTest, ViewsLingerDefaultsToTwoMillisecondsAndIsBounded) {
  absl::StatusOr<ServerConfig> config = Load({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->views_linger, absl::Milliseconds(2));
  config = Load({"scheduling.viewsLinger=0s"});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->views_linger, absl::ZeroDuration());
  for (const char* bad : {"scheduling.viewsLinger=-1ms", "scheduling.viewsLinger=2s"}) {
    config = Load({bad});
    ASSERT_FALSE(config.ok()) << bad;
    EXPECT_NE(config.status().message().find("scheduling.viewsLinger"), std::string::npos)
        << config.status();
  }
}

}  // namespace
}  // namespace regatta::server
