// Reading Armada's simulator formats: what each field becomes, and the fields that cannot be
// honoured refused by path.
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/common/bounded_parse.h"
#include "src/scheduler/sim/spec.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

int Resource(absl::string_view name) { return ResourceNames::Global().Intern(name); }

TEST(ArmadaSpecTest, ClusterWithPoolsOnClusters) {
  auto c = ParseClusterYaml(R"(
name: "two clusters"
clusters:
  - name: "c1"
    pool: "gpu"
    nodeTemplates:
      - number: 3
        labels: {zone: a}
        taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]
        totalResources:
          resources: {cpu: "64", memory: "512Gi", nvidia.com/gpu: "8", example.com/fpga: "2"}
  - name: "c2"
    pool: "cpu"
    nodeTemplates:
      - {number: 2, totalResources: {resources: {cpu: "32"}}}
  - name: "c3"
    pool: "gpu"
    nodeTemplates:
      - {number: 1, totalResources: {resources: {cpu: "8"}}}
)",
                            "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->armada_format);
  ASSERT_EQ(c->pools.size(), 2u);
  EXPECT_EQ(c->pools[0].name, "gpu");
  ASSERT_EQ(c->pools[0].node_groups.size(), 2u);  // c1's template and c3's
  const NodeGroupSpec& g = c->pools[0].node_groups[0];
  EXPECT_EQ(g.count, 3);
  EXPECT_EQ(g.executor_id, "c1");
  EXPECT_EQ(g.name_prefix, "c1-0-");
  EXPECT_EQ(g.labels.at("zone"), "a");
  EXPECT_EQ(g.labels.at("armadaproject.io/clusterName"), "c1");
  ASSERT_EQ(g.taints.size(), 1u);
  EXPECT_EQ(g.taints[0].key, "nvidia.com/gpu");
  // Dotted names are single resource keys.
  EXPECT_EQ(g.resources.Get(Resource("nvidia.com/gpu")), Quantity::FromUnits(8));
  EXPECT_EQ(g.resources.Get(Resource("example.com/fpga")), Quantity::FromUnits(2));
  EXPECT_EQ(c->pools[1].name, "cpu");
  EXPECT_EQ(c->pools[0].node_groups[1].executor_id, "c3");
  // No scheduling config: Armada's two classes.
  EXPECT_EQ(c->policy.default_priority_class, "armada-default");
  EXPECT_TRUE(c->policy.priority_classes.at("armada-preemptible").preemptible);
  EXPECT_FALSE(c->policy.priority_classes.at("armada-default").preemptible);
}

TEST(ArmadaSpecTest, ClusterInTheOlderPoolsShape) {
  auto c = ParseClusterYaml(R"(
name: "tiny"
pools:
  - name: "pool1"
    clusterGroups:
      - clusters:
          - name: ""
            nodeTemplates:
              - {number: 1, totalResources: {resources: {cpu: "32", memory: "256Gi"}}}
      - clusters:
          - name: "big"
            nodeTemplates:
              - {number: 2, totalResources: {resources: {cpu: "128"}}}
)",
                            "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->pools.size(), 1u);
  ASSERT_EQ(c->pools[0].node_groups.size(), 2u);
  EXPECT_EQ(c->pools[0].node_groups[0].executor_id, "pool1-0-0");  // an empty name is generated
  EXPECT_EQ(c->pools[0].node_groups[1].executor_id, "big");
  EXPECT_EQ(c->pools[0].node_groups[1].count, 2);
}

TEST(ArmadaSpecTest, ClusterErrorsNameTheField) {
  auto c = ParseClusterYaml(R"(
clusters:
  - {name: a, pool: p, nodeTemplates: [{number: 1, totalResources: {resources: {cpu: "x"}}}]}
)",
                            "cluster.yaml");
  EXPECT_THAT(c.status().message(),
              HasSubstr("cluster.yaml: clusters[0].nodeTemplates[0].totalResources.resources.cpu"));
  c = ParseClusterYaml(R"(
name: x
clusters: [{name: a, pool: p, nodeTemplates: [{number: 1, totalResources: {cpu: "1"}}]}]
pendingDelayDistribution: {minimum: 10s}
)",
                       "cluster.yaml");
  EXPECT_THAT(c.status().message(),
              HasSubstr("pendingDelayDistribution.minimum: cannot be honoured"));
  c = ParseClusterYaml(R"(
clusters: [{name: a, pool: p, nodeTemplates: [{number: 1, cores: 4}]}]
)",
                       "cluster.yaml");
  EXPECT_THAT(c.status().message(), HasSubstr("clusters[0].nodeTemplates[0].cores: unknown field"));
}

constexpr char kWorkload[] = R"(
name: "w"
randomSeed: 9
queues:
  - name: "A"
    weight: 2
    jobTemplates:
      - id: "first"
        number: 4
        jobSet: "s"
        queuePriority: 3
        priorityClassName: "armada-preemptible"
        requirements:
          nodeSelector: {zone: a}
          tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
          resourceRequirements:
            requests: {cpu: 1, memory: 10Gi}
            limits: {cpu: 2, nvidia.com/gpu: 1}
        runtimeDistribution: {minimum: "5m", tailMean: "1m"}
        gangCardinality: 2
      - number: 1
        dependencies: ["first"]
        earliestSubmitTime: "1m"
        earliestSubmitTimeFromDependencyCompletion: "30s"
        requirements: {resourceRequirements: {requests: {cpu: 1}}}
        repeat: {numTimes: 3, period: "10m"}
  - name: "B"
    weight: 1
    jobTemplates:
      - number: 2
        dependencies: ["A-1"]
        requirements: {resourceRequirements: {requests: {cpu: 1}}}
)";

TEST(ArmadaSpecTest, WorkloadTemplates) {
  auto w = ParseWorkloadYaml(kWorkload, "workload.yaml");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->seed, 9u);
  ASSERT_EQ(w->queues.size(), 2u);
  EXPECT_EQ(w->queues[0].weight, 2);
  ASSERT_EQ(w->jobs.size(), 5u);  // first, A-1 three times, B-0
  const JobTemplateSpec& first = w->jobs[0];
  EXPECT_EQ(first.name, "first");
  EXPECT_EQ(first.queue, "A");
  EXPECT_EQ(first.count, 4);
  EXPECT_EQ(first.job_set, "s");
  EXPECT_EQ(first.priority, 3u);
  EXPECT_EQ(first.priority_class, "armada-preemptible");
  EXPECT_EQ(first.task.node_selector().at("zone"), "a");
  ASSERT_EQ(first.task.tolerations_size(), 1);
  EXPECT_EQ(first.task.tolerations(0).operator_(), "Exists");
  // Requests win; a limit without a request is the request (as in Kubernetes).
  EXPECT_EQ(first.requests.Get(ResourceNames::kCpu), Quantity::FromUnits(1));
  EXPECT_EQ(first.requests.Get(Resource("nvidia.com/gpu")), Quantity::FromUnits(1));
  EXPECT_EQ(first.duration.kind, DurationSpec::Kind::kShiftedExponential);
  EXPECT_EQ(first.duration.min, absl::Minutes(5));
  EXPECT_EQ(first.duration.value, absl::Minutes(1));
  EXPECT_EQ(first.gang_cardinality, 2u);
  EXPECT_EQ(first.gang_node_uniformity_label, "armadaproject.io/clusterName");
  // The second template: id <queue>-<index>, repeated 3 times 10m apart.
  EXPECT_EQ(w->jobs[1].name, "A-1-r0");
  EXPECT_EQ(w->jobs[3].name, "A-1-r2");
  EXPECT_EQ(w->jobs[1].submit_at, absl::Minutes(1));
  EXPECT_EQ(w->jobs[3].submit_at, absl::Minutes(21));
  EXPECT_EQ(w->jobs[2].submit_after_dependencies, absl::Seconds(30));
  EXPECT_THAT(w->jobs[2].dependencies, ElementsAre("first"));
  // A dependency on a repeated template waits for every copy.
  EXPECT_EQ(w->jobs[4].name, "B-0");
  EXPECT_THAT(w->jobs[4].dependencies, ElementsAre("A-1-r0", "A-1-r1", "A-1-r2"));
}

TEST(ArmadaSpecTest, WorkloadFieldsThatCannotBeHonoured) {
  struct Case {
    const char* yaml;
    const char* error;
  };
  const Case cases[] = {
      {"queues: [{name: A, jobTemplates: [{number: 3, gangCardinality: 2}]}]",
       "queues[0].jobTemplates[0].number: must be a multiple of gangCardinality"},
      {"queues: [{name: A, jobTemplates: [{requirements: {annotations: {x: y}}}]}]",
       "queues[0].jobTemplates[0].requirements.annotations: cannot be honoured"},
      {"queues: [{name: A, jobTemplates: [{dependencies: [nope]}]}]",
       "queues[0].jobTemplates[0].dependencies[0]: \"nope\" is not the id of a job template"},
      {"queues: [{name: A, jobTemplates: [{repeat: {numTimes: 0, period: 1m}}]}]",
       "queues[0].jobTemplates[0].repeat.numTimes: must be >= 1"},
      {"queues: [{name: A, jobTemplates: [{repeat: {numTimes: 2}}]}]",
       "queues[0].jobTemplates[0].repeat.period: is required"},
      {"queues: [{name: A, jobTemplates: [{queue: B}]}]",
       "queues[0].jobTemplates[0].queue: is \"B\""},
      {"queues: [{name: A, jobTemplates: [{runtimeDistribution: {mean: 1m}}]}]",
       "queues[0].jobTemplates[0].runtimeDistribution.mean: unknown field"},
      {"name: w\nqueues: [{name: A, weight: 0}]", "queues[0].weight: must be > 0"},
  };
  for (const Case& c : cases) {
    auto w = ParseWorkloadYaml(c.yaml, "w.yaml");
    EXPECT_FALSE(w.ok()) << c.yaml;
    EXPECT_THAT(w.status().message(), HasSubstr(c.error)) << c.yaml;
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

ClusterSpec CpuGpuCluster() {
  auto c = ParseClusterYaml(R"(
clusters:
  - name: c
    pool: p
    nodeTemplates:
      - {number: 1, totalResources: {resources: {cpu: "8", memory: "32Gi", nvidia.com/gpu: "1"}}}
)",
                            "cluster.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return *c;
}

TEST(ArmadaSpecTest, SchedulingConfigKeys) {
  ClusterSpec c = CpuGpuCluster();
  auto root = LoadYaml(R"(
scheduling:
  supportedResourceTypes: [{name: cpu, resolution: 1m}]
  enableAssertions: true
  priorityClasses:
    low: {priority: 10, preemptible: true, maximumResourceFractionPerQueue: {cpu: 0.5}}
    high:
      priority: 100
      maximumResourceFractionPerQueueByPool: {p: {memory: 0.25}}
  defaultPriorityClassName: low
  dominantResourceFairnessResourcesToConsider: [cpu, memory]
  maximumResourceFractionToSchedule: {cpu: 0.1}
  maximumSchedulingRate: 50
  maximumSchedulingBurst: 100
  maximumPerQueueSchedulingRate: "+Inf"
  maximumPerQueueSchedulingBurst: 9223372036854775807
  protectedFractionOfFairShare: 0.5
  indexedResources: [{name: cpu, resolution: "1"}, {name: nvidia.com/gpu, resolution: "1"}]
  indexedNodeLabels: [zone]
  nodeEvictionProbability: 1.0
other: {ignored: as a section of the whole config.yaml that is not scheduling}
)");
  ASSERT_TRUE(root.ok());
  ASSERT_TRUE(ApplyArmadaSchedulingConfig(*root, "config.yaml", c).ok());
  const SchedulingPolicy& p = c.policy;
  ASSERT_EQ(p.priority_classes.size(), 2u);
  EXPECT_EQ(p.priority_classes.at("low").priority, 10);
  EXPECT_TRUE(p.priority_classes.at("low").preemptible);
  EXPECT_EQ(p.priority_classes.at("low").max_fraction_per_queue.at("cpu"), 0.5);
  EXPECT_FALSE(p.priority_classes.at("high").preemptible);
  EXPECT_EQ(p.priority_classes.at("high").max_fraction_per_queue_by_pool.at("p").at("memory"),
            0.25);
  EXPECT_EQ(p.default_priority_class, "low");
  // DRF over cpu and memory only: the GPU the nodes have weighs 0.
  EXPECT_EQ(p.resource_multipliers.at("cpu"), 1);
  EXPECT_EQ(p.resource_multipliers.at("memory"), 1);
  EXPECT_EQ(p.resource_multipliers.at("nvidia.com/gpu"), 0);
  EXPECT_EQ(p.max_fraction_to_schedule.at("cpu"), 0.1);
  EXPECT_EQ(p.rate_limit.rate, 50);
  EXPECT_EQ(p.rate_limit.burst, 100);
  EXPECT_EQ(p.queue_rate_limit.rate, 0);  // +Inf: no limit
  EXPECT_EQ(p.protected_fraction_of_fair_share, 0.5);
  EXPECT_THAT(p.indexed_resources, ElementsAre("cpu", "nvidia.com/gpu"));
  EXPECT_THAT(p.indexed_node_labels, ElementsAre("zone"));
}

TEST(ArmadaSpecTest, SchedulingConfigKeysThatCannotBeHonoured) {
  const std::pair<const char*, const char*> cases[] = {
      {"nodeEvictionProbability: 0.5", "config.yaml: nodeEvictionProbability: only 1.0"},
      {"maxQueueLookback: 1000", "config.yaml: maxQueueLookback: cannot be honoured"},
      {"scheduling: {fancyNewKey: 1}", "config.yaml: scheduling.fancyNewKey: cannot be honoured"},
      {"priorityClasses: {a: {priority: 1, awayNodeTypes: []}}",
       "priorityClasses.a.awayNodeTypes: unknown field"},
      {"maximumSchedulingBurst: \"+inf\"", "maximumSchedulingBurst: must be an integer"},
  };
  for (const auto& [yaml, error] : cases) {
    ClusterSpec c = CpuGpuCluster();
    auto root = LoadYaml(yaml);
    ASSERT_TRUE(root.ok());
    absl::Status s = ApplyArmadaSchedulingConfig(*root, "config.yaml", c);
    EXPECT_THAT(s.message(), HasSubstr(error)) << yaml;
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << yaml;
  }
}

TEST(ArmadaSpecTest, RegattaFilesAreNotTakenForArmadas) {
  auto c = ParseClusterYaml("pools: [{name: p, nodeGroups: [{count: 1, resources: {cpu: 1}}]}]",
                            "cluster.yaml");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->armada_format);
  auto w = ParseWorkloadYaml("queues: [{name: a}]\njobs: [{queue: a, requests: {cpu: 1}}]",
                             "workload.yaml");
  ASSERT_TRUE(w.ok()) << w.status();
}

}  // namespace
}  // namespace regatta::scheduler::sim
