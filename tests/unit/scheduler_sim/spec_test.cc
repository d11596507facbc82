// Reading cluster and workload files: what each field becomes, and errors that name the file
// and the field.
#include "src/scheduler/sim/spec.h"

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::scheduler::sim {
namespace {

using ::testing::HasSubstr;

constexpr char kCluster[] = R"(
pools:
  - name: cpu
    nodeGroups:
      - count: 3
        labels: {zone: a}
        taints: [{key: dedicated, value: ml, effect: NoSchedule}]
        resources: {cpu: 32, memory: 256Gi}
      - count: 1
        namePrefix: big-
        executor: ex-2
        resources: {cpu: "64"}
scheduling:
  priorityClasses:
    low: {priority: 0, preemptible: true, maxFractionPerQueue: {cpu: 0.5}}
    high: {priority: 100, preemptible: false}
  defaultPriorityClass: low
  cyclePeriod: 5s
  protectedFractionOfFairShare: 0.8
  enableFairSharePreemption: false
  resourceMultipliers: {cpu: 1, memory: 0.5}
  indexedNodeLabels: [zone]
  maxLeasesPerCycle: 7
  executorTimeout: 1m  # a server key the simulator has no use for: accepted
  rateLimit: {rate: 10, burst: 20}
  queueRateLimit: {rate: 1, burst: 2}
)";

TEST(SpecTest, ClusterFieldsAreRead) {
  auto c = ParseClusterYaml(kCluster, "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->pools.size(), 1u);
  const PoolSpec& pool = c->pools[0];
  ASSERT_EQ(pool.node_groups.size(), 2u);
  EXPECT_EQ(pool.node_groups[0].count, 3);
  EXPECT_EQ(pool.node_groups[0].name_prefix, "cpu-0-");
  EXPECT_EQ(pool.node_groups[0].executor_id, "cpu-executor");
  EXPECT_EQ(pool.node_groups[0].labels.at("zone"), "a");
  ASSERT_EQ(pool.node_groups[0].taints.size(), 1u);
  EXPECT_EQ(pool.node_groups[0].taints[0].value, "ml");
  EXPECT_EQ(pool.node_groups[0].resources.Get(ResourceNames::kMemory),
            Quantity::FromUnits(256LL << 30));
  EXPECT_EQ(pool.node_groups[1].name_prefix, "big-");
  EXPECT_EQ(pool.node_groups[1].executor_id, "ex-2");
  EXPECT_EQ(pool.node_groups[1].resources.Get(ResourceNames::kCpu), Quantity::FromUnits(64));

  // The server's parser read the section: the same policy as in regatta.yaml.
  const SchedulingPolicy& policy = c->policy;
  ASSERT_EQ(policy.priority_classes.size(), 2u);
  EXPECT_EQ(policy.priority_classes.at("high").priority, 100);
  EXPECT_FALSE(policy.priority_classes.at("high").preemptible);
  EXPECT_DOUBLE_EQ(policy.priority_classes.at("low").max_fraction_per_queue.at("cpu"), 0.5);
  EXPECT_EQ(policy.default_priority_class, "low");
  EXPECT_EQ(c->cycle_period, absl::Seconds(5));
  EXPECT_EQ(c->max_leases_per_cycle, 7);
  EXPECT_DOUBLE_EQ(policy.protected_fraction_of_fair_share, 0.8);
  EXPECT_FALSE(policy.enable_fair_share_preemption);
  EXPECT_DOUBLE_EQ(policy.resource_multipliers.at("memory"), 0.5);
  EXPECT_EQ(policy.indexed_node_labels, std::vector<std::string>{"zone"});
  EXPECT_DOUBLE_EQ(policy.rate_limit.rate, 10);
  EXPECT_EQ(policy.rate_limit.burst, 20);
  EXPECT_EQ(policy.queue_rate_limit.burst, 2);
}

TEST(SpecTest, ClusterWithoutClassesGetsOnePreemptibleClass) {
  auto c = ParseClusterYaml("pools: [{name: p, nodeGroups: [{resources: {cpu: 1}}]}]", "c.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->policy.priority_classes.size(), 1u);
  EXPECT_TRUE(c->policy.priority_classes.at("default").preemptible);
  EXPECT_EQ(c->policy.default_priority_class, "default");
  EXPECT_EQ(c->policy.rate_limit.rate, 0);  // no limit
}

TEST(SpecTest, WorkloadFieldsAreRead) {
  auto w = ParseWorkloadYaml(R"(
seed: 42
queues:
  - {name: a, weight: 3}
  - {name: b, priorityFactor: 2, cordoned: true}
jobs:
  - name: train
    queue: a
    count: 8
    requests: {cpu: 4, memory: 16Gi}
    priorityClass: high
    priority: 3
    nodeSelector: {zone: a}
    tolerations: [{key: dedicated, operator: Equal, value: ml, effect: NoSchedule}]
    gang: {cardinality: 4, nodeUniformityLabel: zone}
    submitAt: 10s
    submitInterval: 500ms
    duration: {uniform: {min: 1m, max: 2m}}
  - queue: b
    requests: {cpu: 1}
    duration: {exponential: {mean: 30s}}
  - queue: b
    requests: {cpu: 1}
    duration: 90s
)",
                             "workload.yaml");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->seed, 42u);
  EXPECT_DOUBLE_EQ(w->queues[0].weight, 3);
  EXPECT_DOUBLE_EQ(w->queues[1].weight, 0.5);
  EXPECT_TRUE(w->queues[1].cordoned);
  const JobTemplateSpec& train = w->jobs[0];
  EXPECT_EQ(train.count, 8);
  EXPECT_EQ(train.priority_class, "high");
  EXPECT_EQ(train.priority, 3u);
  EXPECT_EQ(train.task.node_selector().at("zone"), "a");
  ASSERT_EQ(train.task.tolerations_size(), 1);
  EXPECT_EQ(train.task.tolerations(0).value(), "ml");
  EXPECT_EQ(train.gang_cardinality, 4u);
  EXPECT_EQ(train.gang_node_uniformity_label, "zone");
  EXPECT_EQ(train.submit_at, absl::Seconds(10));
  EXPECT_EQ(train.submit_interval, absl::Milliseconds(500));
  EXPECT_EQ(train.duration.kind, DurationSpec::Kind::kUniform);
  EXPECT_EQ(train.duration.max, absl::Minutes(2));
  EXPECT_EQ(w->jobs[1].name, "job1");
  EXPECT_EQ(w->jobs[1].count, 1);
  EXPECT_EQ(w->jobs[1].duration.kind, DurationSpec::Kind::kExponential);
  EXPECT_EQ(w->jobs[1].duration.value, absl::Seconds(30));
  EXPECT_EQ(w->jobs[2].duration.kind, DurationSpec::Kind::kConstant);
  EXPECT_EQ(w->jobs[2].duration.value, absl::Seconds(90));
}

struct BadFile {
  const char* yaml;
  const char* error;
};

class BadWorkloadTest : public ::testing::TestWithParam<BadFile> {};

TEST_P(BadWorkloadTest, ErrorNamesFileAndField) {
  auto w = ParseWorkloadYaml(GetParam().yaml, "workload.yaml");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(w.status().message()), HasSubstr(GetParam().error));
}

INSTANTIATE_TEST_SUITE_P(
    Errors, BadWorkloadTest,
    ::testing::Values(
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}}, {queue: a, requests: {cpu: 1}},"
                " {queue: a, requests: {cpu: lots}}]",
                "workload.yaml: jobs[2].requests.cpu: "},
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}, durration: 1s}]",
                "workload.yaml: jobs[0].durration: unknown field"},
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}, duration: soon}]",
                "workload.yaml: jobs[0].duration: must be a duration"},
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}, duration: {constnt: 5s}}]",
                "workload.yaml: jobs[0].duration.constnt: unknown field"},
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}, duration: {}}]",
                "workload.yaml: jobs[0].duration: needs exactly one of constant, uniform"},
        BadFile{"jobs: [{queue: a, requests: {cpu: 1}, duration: {uniform: {min: 2s, max: 1s}}}]",
                "workload.yaml: jobs[0].duration.uniform.max: must be >= min"},
        BadFile{"jobs: [{queue: a, count: 6, requests: {cpu: 1}, gang: {cardinality: 4}}]",
                "workload.yaml: jobs[0].count: must be a multiple of gang.cardinality (4)"},
        BadFile{"jobs: [{queue: a}]", "workload.yaml: jobs[0].requests: is required"},
        BadFile{"jobs: [{requests: {cpu: 1}}]", "workload.yaml: jobs[0].queue: is required"},
        BadFile{"queues: [{name: a, weight: 0}]", "workload.yaml: queues[0].weight: must be > 0"},
        BadFile{"queues: [{name: a}, {name: a}]",
                "workload.yaml: queues[1].name: duplicate queue name"},
        BadFile{"jobs: {queue: a}", "workload.yaml: jobs: must be a list"},
        BadFile{"jobs: [{queue: a, count: -1, requests: {cpu: 1}}]",
                "workload.yaml: jobs[0].count: must be >= 0"},
        BadFile{"jobs: [", "workload.yaml: "}));

TEST(SpecTest, ClusterErrorsNameFileAndField) {
  auto missing = ParseClusterYaml("pools: []", "cluster.yaml");
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("cluster.yaml: pools: at least one pool is needed"));
  auto taint = ParseClusterYaml(
      "pools: [{name: p, nodeGroups: [{resources: {cpu: 1}, taints: [{key: k, effect: Never}]}]}]",
      "cluster.yaml");
  EXPECT_THAT(std::string(taint.status().message()),
              HasSubstr("cluster.yaml: pools[0].nodeGroups[0].taints[0].effect: must be"));
  auto period =
      ParseClusterYaml("pools: [{name: p}]\nscheduling: {cyclePeriod: 0s}", "cluster.yaml");
  EXPECT_THAT(std::string(period.status().message()),
              HasSubstr("cluster.yaml: scheduling.cyclePeriod: must be > 0"));
  // The policy's own errors, with the file in front.
  auto klass = ParseClusterYaml(
      "pools: [{name: p}]\nscheduling: {priorityClasses: {low: {preemptible: true}}}",
      "cluster.yaml");
  EXPECT_THAT(std::string(klass.status().message()),
              HasSubstr("cluster.yaml: scheduling.priorityClasses.low.priority: required"));
  auto unknown =
      ParseClusterYaml("pools: [{name: p}]\nscheduling: {maxNewJobsPerCycle: 3}", "cluster.yaml");
  EXPECT_THAT(std::string(unknown.status().message()),
              HasSubstr("cluster.yaml: scheduling.maxNewJobsPerCycle: unknown field"));
  auto memory = ParseClusterYaml("pools: [{name: p, nodeGroups: [{resources: {memory: 1Qi}}]}]",
                                 "cluster.yaml");
  EXPECT_THAT(std::string(memory.status().message()),
              HasSubstr("cluster.yaml: pools[0].nodeGroups[0].resources.memory: "));
}

TEST(SpecTest, WorkloadMustNameKnownQueuesAndClasses) {
  auto c = ParseClusterYaml(kCluster, "cluster.yaml");
  ASSERT_TRUE(c.ok());
  auto unknown_queue =
      ParseWorkloadYaml("queues: [{name: a}]\njobs: [{queue: b, requests: {cpu: 1}}]", "w.yaml");
  ASSERT_TRUE(unknown_queue.ok());
  EXPECT_THAT(std::string(ValidateWorkload(*c, *unknown_queue, "w.yaml").message()),
              HasSubstr("w.yaml: jobs[0].queue: \"b\" is not one of the workload's queues"));
  auto unknown_class = ParseWorkloadYaml(
      "queues: [{name: a}]\njobs: [{queue: a, priorityClass: urgent, requests: {cpu: 1}}]",
      "w.yaml");
  ASSERT_TRUE(unknown_class.ok());
  EXPECT_THAT(std::string(ValidateWorkload(*c, *unknown_class, "w.yaml").message()),
              HasSubstr("w.yaml: jobs[0].priorityClass: \"urgent\" is not one of"));
}

}  // namespace
}  // namespace regatta::scheduler::sim
