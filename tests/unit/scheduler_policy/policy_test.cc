#include "src/scheduler/policy/policy.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/common/resources.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<SchedulingPolicy> Parse(const std::string& yaml) {
  return ParseSchedulingPolicy(YAML::Load(yaml), "scheduling");
}

TEST(SchedulingPolicyTest, ParsesEveryKeyAndAppliesPoolOverrides) {
  absl::StatusOr<SchedulingPolicy> policy = Parse(R"(
priorityClasses:
  batch: {priority: 100, preemptible: true, maxFractionPerQueue: {cpu: 0.5},
          pools: {gpu: {maxFractionPerQueue: {nvidia.com/gpu: 0.25}}}}
  urgent: {priority: 1000}
defaultPriorityClass: batch
resourceMultipliers: {cpu: 1, memory: 0.5}
enableFairSharePreemption: false
protectedFractionOfFairShare: 0.5
indexedResources: [nvidia.com/gpu, cpu]
indexedNodeLabels: [zone]
maxFractionToSchedule: {cpu: 0.2}
maxFractionToSchedulePerQueue: {cpu: 0.05}
rateLimit: {rate: 50, burst: 100}
queueRateLimit: {rate: 5, burst: 10}
gangLookahead: 200
cyclePeriod: 1s
)");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->default_priority_class, "batch");
  EXPECT_FALSE(policy->priority_classes.at("urgent").preemptible);
  EXPECT_DOUBLE_EQ(policy->rate_limit.rate, 50);
  EXPECT_EQ(policy->queue_rate_limit.burst, 10);

  const int cpu = ResourceNames::kCpu;
  const int gpu = ResourceNames::kGpu;
  std::vector<std::string> names;
  PoolRoundConfig cpu_pool = MakePoolRoundConfig(*policy, "cpu", &names);
  ASSERT_EQ(names, (std::vector<std::string>{"batch", "urgent"}));
  ASSERT_EQ(cpu_pool.priority_classes.size(), 2u);
  EXPECT_EQ(cpu_pool.priority_classes[0].priority, 100);
  EXPECT_TRUE(cpu_pool.priority_classes[0].preemptible);
  EXPECT_DOUBLE_EQ(cpu_pool.priority_classes[0].max_fraction_per_queue.at(cpu), 0.5);
  EXPECT_TRUE(cpu_pool.priority_classes[1].max_fraction_per_queue.empty());
  EXPECT_EQ(cpu_pool.indexed_resources, (std::vector<int>{gpu, cpu}));
  EXPECT_EQ(cpu_pool.indexed_node_labels, (std::vector<std::string>{"zone"}));
  EXPECT_FALSE(cpu_pool.enable_fair_share_preemption);
  EXPECT_DOUBLE_EQ(cpu_pool.protected_fraction_of_fair_share, 0.5);
  EXPECT_DOUBLE_EQ(cpu_pool.resource_multipliers.at(ResourceNames::kMemory), 0.5);
  EXPECT_DOUBLE_EQ(cpu_pool.max_fraction_to_schedule.at(cpu), 0.2);
  EXPECT_DOUBLE_EQ(cpu_pool.max_fraction_to_schedule_per_queue.at(cpu), 0.05);
  EXPECT_EQ(cpu_pool.gang_lookahead, 200);
  // The gpu pool's override replaces the class's limits there.
  PoolRoundConfig gpu_pool = MakePoolRoundConfig(*policy, "gpu", &names);
  EXPECT_FALSE(gpu_pool.priority_classes[0].max_fraction_per_queue.contains(cpu));
  EXPECT_DOUBLE_EQ(gpu_pool.priority_classes[0].max_fraction_per_queue.at(gpu), 0.25);
}

TEST(SchedulingPolicyTest, DefaultsNeedOnlyOneClass) {
  absl::StatusOr<SchedulingPolicy> policy = Parse("priorityClasses: {only: {priority: 1}}");
  ASSERT_TRUE(policy.ok()) << policy.status();
  EXPECT_EQ(policy->default_priority_class, "only");
  EXPECT_TRUE(policy->enable_fair_share_preemption);
  EXPECT_DOUBLE_EQ(policy->protected_fraction_of_fair_share, 1.0);
  EXPECT_EQ(policy->indexed_resources, (std::vector<std::string>{"cpu", "memory"}));
  EXPECT_DOUBLE_EQ(policy->rate_limit.rate, 0);
}

TEST(SchedulingPolicyTest, ErrorsNameTheKey) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"priorityClasses: {}", "scheduling.priorityClasses: at least one class"},
      {"priorityClasses: {a: {preemptible: true}}", "scheduling.priorityClasses.a.priority"},
      {"priorityClasses: {a: {priority: x}}", "scheduling.priorityClasses.a.priority"},
      {"priorityClasses: {a: {priority: 1, preemtible: true}}",
       "scheduling.priorityClasses.a.preemtible: unknown key"},
      {"priorityClasses: {a: {priority: 1, maxFractionPerQueue: {cpu: 1.5}}}",
       "scheduling.priorityClasses.a.maxFractionPerQueue.cpu: must be a fraction"},
      {"priorityClasses: {a: {priority: 1, pools: {p: {maxFractionPerQueue: {cpu: 0}}}}}",
       "scheduling.priorityClasses.a.pools.p.maxFractionPerQueue.cpu"},
      {"priorityClasses: {a: {priority: 1}}\ndefaultPriorityClass: b",
       "scheduling.defaultPriorityClass: \"b\" is not one of"},
      {"priorityClasses: {a: {priority: 1}}\nprotectedFractionOfFairShare: -1",
       "scheduling.protectedFractionOfFairShare"},
      {"priorityClasses: {a: {priority: 1}}\nindexedResources: []", "scheduling.indexedResources"},
      {"priorityClasses: {a: {priority: 1}}\nmaxFractionToSchedule: {\"Bad Name\": 0.1}",
       "not a valid resource name"},
      {"priorityClasses: {a: {priority: 1}}\nrateLimit: {rate: 5, burst: 0}",
       "scheduling.rateLimit.burst"},
      {"priorityClasses: {a: {priority: 1}}\nqueueRateLimit: {rate: -1}",
       "scheduling.queueRateLimit.rate"},
      {"priorityClasses: {a: {priority: 1}}\ngangLookahead: 0", "scheduling.gangLookahead"},
      {"priorityClasses: {a: {priority: 1}}\nresourceMultipliers: {cpu: -1}",
       "scheduling.resourceMultipliers.cpu"},
      // Issue 21: values that would make shares NaN or a token bucket infinite.
      {"priorityClasses: {a: {priority: 1}}\nresourceMultipliers: {cpu: .inf}",
       "scheduling.resourceMultipliers.cpu: must be between 0 and 1e6"},
      {"priorityClasses: {a: {priority: 1}}\nresourceMultipliers: {cpu: .nan}",
       "scheduling.resourceMultipliers.cpu"},
      {"priorityClasses: {a: {priority: 1}}\nprotectedFractionOfFairShare: .inf",
       "scheduling.protectedFractionOfFairShare: must be between 0 and 100"},
      {"priorityClasses: {a: {priority: 1}}\nrateLimit: {rate: .inf, burst: 10}",
       "scheduling.rateLimit.rate: must be a finite number"},
  };
  for (const auto& [yaml, expected] : cases) {
    absl::StatusOr<SchedulingPolicy> policy = Parse(yaml);
    ASSERT_FALSE(policy.ok()) << yaml;
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument) << yaml;
    EXPECT_THAT(std::string(policy.status().message()), HasSubstr(expected)) << yaml;
  }
}

}  // namespace
}  // namespace regatta::scheduler
