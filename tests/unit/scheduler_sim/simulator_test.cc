// The simulator's bookkeeping, driven by small fake algorithms behind the SchedulePool
// interface: arrivals, leases, completions, preemptions, rejection, queue order, token
// buckets, samples and the invariant checks. (The real algorithm runs in the scenario tests.)
#include "src/scheduler/sim/simulator.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/scheduler/sim/summary.h"
#include "tests/unit/scheduler_sim/first_fit.h"

namespace regatta::scheduler::sim {
namespace {

using ::regatta::scheduler::sim::testing::FirstFit;
using ::regatta::scheduler::sim::testing::FirstFitFn;
using ::regatta::scheduler::sim::testing::RoundSeen;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ClusterSpec Cluster(absl::string_view yaml) {
  auto c = ParseClusterYaml(yaml, "cluster.yaml");
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *std::move(c) : ClusterSpec{};
}

WorkloadSpec Workload(absl::string_view yaml) {
  auto w = ParseWorkloadYaml(yaml, "workload.yaml");
  EXPECT_TRUE(w.ok()) << w.status();
  return w.ok() ? *std::move(w) : WorkloadSpec{};
}

std::unique_ptr<Simulator> Make(absl::string_view cluster, absl::string_view workload,
                                ScheduleFn fn) {
  auto sim = Simulator::Create(Cluster(cluster), Workload(workload), std::move(fn));
  EXPECT_TRUE(sim.ok()) << sim.status();
  return sim.ok() ? *std::move(sim) : nullptr;
}

const SimJob& JobById(const Simulator& sim, absl::string_view id) {
  for (const SimJob& j : sim.jobs()) {
    if (j.id == id) return j;
  }
  ADD_FAILURE() << "no job " << id;
  static const SimJob kNone;
  return kNone;
}

constexpr char kFourCpus[] = R"(
pools: [{name: p, nodeGroups: [{count: 4, resources: {cpu: 1, memory: 1Gi}}]}]
scheduling: {cyclePeriod: 1s}
)";

TEST(SimulatorTest, JobsRunForTheirDurationThenFreeTheirNodes) {
  auto sim = Make(kFourCpus, R"(
queues: [{name: a}]
jobs: [{name: j, queue: a, count: 6, requests: {cpu: 1}, duration: 10s}]
)",
                  FirstFitFn());
  sim->Run(SimOptions{});
  // t=0: four leased; t=10: they succeed and the last two are leased; t=20: done.
  EXPECT_EQ(sim->now(), absl::Seconds(20));
  for (const SimJob& j : sim->jobs()) {
    EXPECT_EQ(j.state, SimJobState::kSucceeded) << j.id;
    EXPECT_EQ(j.end_time - j.lease_time, absl::Seconds(10)) << j.id;
  }
  EXPECT_EQ(JobById(*sim, "j-000003").lease_time, absl::ZeroDuration());
  EXPECT_EQ(JobById(*sim, "j-000004").lease_time, absl::Seconds(10));
  Summary summary = Summarize(*sim);
  ASSERT_EQ(summary.queues.size(), 1u);
  const QueueSummary& a = summary.queues[0];
  EXPECT_EQ(a.submitted, 6);
  EXPECT_EQ(a.succeeded, 6);
  EXPECT_EQ(a.delay.count, 6);
  EXPECT_EQ(a.delay.p50, absl::ZeroDuration());
  EXPECT_EQ(a.delay.p95, absl::Seconds(10));
  EXPECT_EQ(a.delay.mean, absl::Seconds(20) / 6);
  EXPECT_THAT(sim->anomalies(), IsEmpty());
}

TEST(SimulatorTest, SamplesShareAndUtilisation) {
  auto sim = Make(kFourCpus, R"(
queues: [{name: a}, {name: b}]
jobs:
  - {queue: a, count: 2, requests: {cpu: 1}, duration: 1h}
  - {queue: b, count: 1, requests: {cpu: 1, memory: 1Gi}, duration: 1h}
  - {queue: b, count: 2, requests: {cpu: 1}, submitAt: 5s, duration: 1h}
)",
                  FirstFitFn());
  sim->Run(SimOptions{.until = absl::Seconds(10), .sample_interval = absl::Seconds(5)});
  ASSERT_EQ(sim->samples().size(), 3u);  // t = 0, 5, 10
  const Sample& first = sim->samples()[0];
  EXPECT_EQ(first.time, absl::ZeroDuration());
  ASSERT_EQ(first.queues.size(), 2u);
  EXPECT_DOUBLE_EQ(first.queues[0].share, 0.5);   // 2 of 4 cpu
  EXPECT_DOUBLE_EQ(first.queues[1].share, 0.25);  // 1 of 4 cpu, 1 of 4 Gi
  EXPECT_EQ(first.queues[0].running, 2);
  EXPECT_DOUBLE_EQ(first.queues[1].adjusted_fair_share, 0.75);  // as the algorithm said
  ASSERT_EQ(first.pools.size(), 1u);
  EXPECT_THAT(first.pools[0].utilisation,
              ElementsAre(std::pair<int, double>(ResourceNames::kCpu, 0.75),
                          std::pair<int, double>(ResourceNames::kMemory, 0.25)));
  const Sample& second = sim->samples()[1];
  EXPECT_EQ(second.time, absl::Seconds(5));
  EXPECT_EQ(second.queues[1].running, 2);  // one of the two late jobs found room
  EXPECT_EQ(second.queues[1].queued, 1);
}

TEST(SimulatorTest, JobsNoNodeCouldHoldAreRejectedWithPerPoolReasons) {
  std::vector<RoundSeen> seen;
  auto sim = Make(R"(
pools:
  - {name: cpu, nodeGroups: [{count: 2, resources: {cpu: 8}}]}
  - name: gpu
    nodeGroups: [{count: 1, labels: {gpu: a100}, resources: {cpu: 8, nvidia.com/gpu: 8}}]
)",
                  R"(
queues: [{name: a}]
jobs:
  - {name: h100, queue: a, requests: {cpu: 1}, nodeSelector: {gpu: h100}}
  - {name: huge, queue: a, requests: {cpu: 16}}
  - {name: a100, queue: a, requests: {cpu: 1}, nodeSelector: {gpu: a100}, duration: 5s}
)",
                  FirstFitFn(&seen));
  sim->Run(SimOptions{.until = absl::ZeroDuration()});
  const SimJob& h100 = JobById(*sim, "h100-000000");
  EXPECT_EQ(h100.state, SimJobState::kRejected);
  EXPECT_EQ(h100.reason,
            "pool cpu: none of 2 nodes match: node selector gpu=h100 does not match (2); "
            "pool gpu: none of 1 nodes match: node selector gpu=h100 does not match (1)");
  const SimJob& huge = JobById(*sim, "huge-000000");
  EXPECT_EQ(huge.state, SimJobState::kRejected);
  EXPECT_THAT(huge.reason, HasSubstr("pool cpu: none of 2 nodes match: needs 16 cpu"));
  // Only the gpu pool's round sees the job that fits only there.
  EXPECT_EQ(JobById(*sim, "a100-000000").state, SimJobState::kRunning);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].pool, "cpu");
  EXPECT_THAT(seen[0].queue_order, ElementsAre(""));
  EXPECT_THAT(seen[1].queue_order, ElementsAre("a100-000000"));
}

TEST(SimulatorTest, PoolsAreOfferedOnlyWhatEarlierPoolsLeftQueued) {
  std::vector<RoundSeen> seen;
  auto sim = Make(R"(
pools:
  - {name: first, nodeGroups: [{count: 1, resources: {cpu: 2}}]}
  - {name: second, nodeGroups: [{count: 1, resources: {cpu: 2}}]}
)",
                  R"(
queues: [{name: a}]
jobs: [{name: j, queue: a, count: 3, requests: {cpu: 1}, duration: 1h}]
)",
                  FirstFitFn(&seen));
  sim->Run(SimOptions{.until = absl::ZeroDuration()});
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_THAT(seen[0].queue_order, ElementsAre("j-000000,j-000001,j-000002"));
  EXPECT_THAT(seen[1].queue_order, ElementsAre("j-000002"));
  EXPECT_EQ(JobById(*sim, "j-000002").pool, 1);
  EXPECT_THAT(sim->anomalies(), IsEmpty());
}

TEST(SimulatorTest, QueueOrderIsClassThenPriorityThenSubmitTimeThenId) {
  std::vector<RoundSeen> seen;
  auto sim = Make(R"(
pools: [{name: p, nodeGroups: [{count: 1, resources: {cpu: 1}}]}]
scheduling:
  priorityClasses: {low: {priority: 0}, high: {priority: 10}}
  defaultPriorityClass: low
)",
                  R"(
queues: [{name: a}, {name: b}]
jobs:
  - {name: blocker, queue: b, requests: {cpu: 1}, duration: 1h}
  - {name: z, queue: a, requests: {cpu: 1}}
  - {name: low, queue: a, count: 2, requests: {cpu: 1}, priorityClass: low}
  - {name: urgent, queue: a, requests: {cpu: 1}, priorityClass: high, priority: 5}
  - {name: urgent0, queue: a, requests: {cpu: 1}, priorityClass: high, priority: 0}
  - {name: later, queue: a, requests: {cpu: 1}, priorityClass: high, priority: 0, submitAt: 1s}
)",
                  [&seen](PoolRoundInput input) {
                    std::swap(input.queues[0], input.queues[1]);  // the blocker takes the node
                    return FirstFit(std::move(input), &seen);
                  });
  sim->Run(SimOptions{.until = absl::Seconds(1)});
  ASSERT_EQ(seen.size(), 2u);
  // z names no class: scheduling.defaultPriorityClass (low).
  EXPECT_EQ(seen[1].queue_order[1],
            "urgent0-000000,later-000000,urgent-000000,low-000000,low-000001,z-000000");
}

TEST(SimulatorTest, TokenBucketsRefillBySimulatedTime) {
  std::vector<RoundSeen> seen;
  auto sim = Make(R"(
pools: [{name: p, nodeGroups: [{count: 100, resources: {cpu: 1}}]}]
scheduling: {cyclePeriod: 1s, rateLimit: {rate: 2, burst: 3}, queueRateLimit: {rate: 1, burst: 2}}
)",
                  R"(
queues: [{name: a}, {name: b}]
jobs:
  - {queue: a, count: 50, requests: {cpu: 1}, duration: 1h}
  - {queue: b, count: 50, requests: {cpu: 1}, duration: 1h}
)",
                  FirstFitFn(&seen));
  sim->Run(SimOptions{.until = absl::Seconds(3)});
  ASSERT_EQ(seen.size(), 4u);
  // t=0: full buckets (3 global, 2 per queue): a takes 2, b the last global token.
  EXPECT_EQ(seen[0].global_tokens, 3);
  EXPECT_EQ(seen[0].queue_tokens.at("a"), 2);
  EXPECT_EQ(seen[1].running, 3);
  // t=1: global 0 + 2, a 0 + 1, b 1 + 1.
  EXPECT_EQ(seen[1].global_tokens, 2);
  EXPECT_EQ(seen[1].queue_tokens.at("a"), 1);
  EXPECT_EQ(seen[1].queue_tokens.at("b"), 2);
  EXPECT_EQ(seen[3].running, 7);  // 3 + 2 + 2
  EXPECT_THAT(sim->anomalies(), IsEmpty());
}

TEST(SimulatorTest, PreemptedJobsEndPreemptedAndFreeTheirNode) {
  int round = 0;
  auto sim =
      Make(kFourCpus, R"(
queues: [{name: a}, {name: b}]
jobs:
  - {name: low, queue: a, count: 4, requests: {cpu: 1}, duration: 10s}
  - {name: high, queue: b, count: 1, requests: {cpu: 1}, submitAt: 2s, duration: 10s}
)",
           [&round](PoolRoundInput input) {
             PoolRoundResult result;
             if (round++ == 2) {
               // Preempt low-000001 for high-000000, and "evict and place again"
               // low-000002 on its own node.
               result.preemptions.push_back(Preemption{.job_id = "low-000001",
                                                       .queue = "a",
                                                       .node_index = 1,
                                                       .kind = PreemptionKind::kUrgency,
                                                       .caused_by_job = "high-000000",
                                                       .caused_by_queue = "b",
                                                       .reason = "urgency: high needed the room"});
               result.leases.push_back(Lease{"high-000000", "b", 1, true});
               result.leases.push_back(Lease{"low-000002", "a", 2});
               return result;
             }
             return FirstFit(std::move(input), nullptr);
           });
  sim->Run(SimOptions{});
  const SimJob& preempted = JobById(*sim, "low-000001");
  EXPECT_EQ(preempted.state, SimJobState::kPreempted);
  EXPECT_EQ(preempted.end_time, absl::Seconds(2));
  EXPECT_EQ(preempted.preempted_by_job, "high-000000");
  EXPECT_EQ(preempted.preempted_by_queue, "b");
  EXPECT_EQ(preempted.reason, "urgency: high needed the room");
  const SimJob& high = JobById(*sim, "high-000000");
  EXPECT_EQ(high.state, SimJobState::kSucceeded);
  EXPECT_EQ(high.node, 1);
  const SimJob& kept = JobById(*sim, "low-000002");
  EXPECT_EQ(kept.state, SimJobState::kSucceeded);
  EXPECT_EQ(kept.lease_time, absl::ZeroDuration());  // never restarted
  EXPECT_EQ(kept.end_time, absl::Seconds(10));
  ASSERT_EQ(sim->preemptions().size(), 1u);
  EXPECT_EQ(sim->preemptions()[0].time, absl::Seconds(2));
  Summary summary = Summarize(*sim);
  EXPECT_EQ(summary.preemptions_by_kind.at("urgency"), 1);
  EXPECT_EQ((summary.preemptions_by_cause.at({"a", "urgency", "b"})), 1);
  EXPECT_THAT(sim->anomalies(), IsEmpty());
}

TEST(SimulatorTest, DecisionsThatBreakInvariantsAreAnomalies) {
  auto sim = Make(kFourCpus, R"(
queues: [{name: a}]
jobs:
  - {name: g, queue: a, count: 2, requests: {cpu: 1}, gang: {cardinality: 2}}
  - {name: j, queue: a, count: 2, requests: {cpu: 1}}
)",
                  [](PoolRoundInput input) {
                    PoolRoundResult result;
                    result.leases.push_back(Lease{"g-000000", "a", 0});  // half a gang
                    result.leases.push_back(Lease{"j-000000", "a", 1});
                    result.leases.push_back(Lease{"j-000001", "a", 1});  // node 1 over full
                    result.leases.push_back(Lease{"j-000001", "a", 2});  // leased twice
                    result.preemptions.push_back(Preemption{.job_id = "nope"});
                    return result;
                  });
  sim->Run(SimOptions{.until = absl::ZeroDuration()});
  EXPECT_THAT(sim->anomalies(),
              ElementsAre(HasSubstr("preemption of nope, not running in pool p"),
                          HasSubstr("lease of j-000001 in state RUNNING"),
                          HasSubstr("node p-0-1 is over its allocatable"),
                          HasSubstr("gang g-g000000 has 1 of 2 members running")));
}

TEST(SimulatorTest, UnschedulableReasonsAreCountedPerQueueAndCode) {
  int round = 0;
  auto sim = Make(kFourCpus, R"(
queues: [{name: a}]
jobs: [{name: j, queue: a, count: 2, requests: {cpu: 1}}]
)",
                  [&round](PoolRoundInput input) {
                    PoolRoundResult result;
                    ++round;
                    while (const QueuedJob* job = input.queues[0].jobs->Next()) {
                      result.unschedulable.push_back(
                          Unschedulable{job->id, "a", UnschedulableCode::kNoRoom,
                                        result.Keep(absl::StrCat("no room in round ", round))});
                    }
                    result.unschedulable.push_back(Unschedulable{
                        "j-000000", "a", UnschedulableCode::kRateLimited, "rate limited"});
                    return result;
                  });
  sim->Run(SimOptions{.until = absl::Seconds(2)});
  std::vector<UnschedulableCount> counts = sim->unschedulable();
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts[0].code, UnschedulableCode::kNoRoom);
  EXPECT_EQ(counts[0].count, 6);  // 2 jobs x 3 rounds
  EXPECT_EQ(counts[0].example_reason, "no room in round 3");
  EXPECT_EQ(counts[1].code, UnschedulableCode::kRateLimited);
  EXPECT_EQ(counts[1].count, 3);
  // A queued job keeps the last reason given for it.
  EXPECT_EQ(JobById(*sim, "j-000001").reason, "no room in round 3");
}

TEST(SimulatorTest, DurationDistributionsAreSeededAndBounded) {
  constexpr char kWorkload[] = R"(
seed: 7
queues: [{name: a}]
jobs:
  - {name: u, queue: a, count: 200, requests: {cpu: 1}, duration: {uniform: {min: 10s, max: 20s}}}
  - {name: e, queue: a, count: 2000, requests: {cpu: 1}, duration: {exponential: {mean: 30s}}}
  - {name: g, queue: a, count: 6, requests: {cpu: 1}, gang: {cardinality: 3}, submitInterval: 1m,
     duration: {exponential: {mean: 30s}}}
)";
  auto first = Make(kFourCpus, kWorkload, FirstFitFn());
  auto second = Make(kFourCpus, kWorkload, FirstFitFn());
  absl::Duration exp_sum;
  for (size_t i = 0; i < first->jobs().size(); ++i) {
    const SimJob& j = first->jobs()[i];
    EXPECT_EQ(j.duration, second->jobs()[i].duration);
    if (j.id[0] == 'u') {
      EXPECT_GE(j.duration, absl::Seconds(10));
      EXPECT_LE(j.duration, absl::Seconds(20));
    } else if (j.id[0] == 'e') {
      exp_sum += j.duration;
    }
  }
  EXPECT_NEAR(absl::ToDoubleSeconds(exp_sum / 2000), 30, 3);
  // Gang members arrive together, one gang per interval, and share one duration.
  EXPECT_EQ(JobById(*first, "g-000002").gang_id, "g-g000000");
  EXPECT_EQ(JobById(*first, "g-000003").gang_id, "g-g000001");
  EXPECT_EQ(JobById(*first, "g-000003").submit_time, absl::Minutes(1));
  EXPECT_EQ(JobById(*first, "g-000000").duration, JobById(*first, "g-000002").duration);
}

// Armada's template dependencies: a template is submitted once every job of the templates it
// depends on has ended, plus earliestSubmitTimeFromDependencyCompletion, and no earlier than its
// earliestSubmitTime; a shifted-exponential runtime is never below its minimum.
TEST(SimulatorTest, DependentTemplatesArriveAfterTheirDependenciesEnd) {
  constexpr char kArmadaCluster[] = R"(
clusters: [{name: c, pool: p, nodeTemplates: [{number: 4, totalResources: {cpu: "1"}}]}]
)";
  auto sim = Make(kArmadaCluster, R"(
name: w
queues:
  - name: a
    jobTemplates:
      - {id: one, number: 2, requirements: {resourceRequirements: {requests: {cpu: 1}}},
         runtimeDistribution: {minimum: 3s}}
      - {id: two, number: 1, dependencies: [one], earliestSubmitTimeFromDependencyCompletion: 2s,
         requirements: {resourceRequirements: {requests: {cpu: 1}}},
         runtimeDistribution: {minimum: 1s, tailMean: 1s}}
      - {id: late, number: 1, dependencies: [one], earliestSubmitTime: 20s,
         requirements: {resourceRequirements: {requests: {cpu: 1}}}}
      - {id: empty, number: 0}
      - {id: after-empty, number: 1, dependencies: [empty],
         requirements: {resourceRequirements: {requests: {cpu: 1}}}}
)",
                  FirstFitFn());
  ASSERT_NE(sim, nullptr);
  sim->Run(SimOptions{.record_cycles = true});
  EXPECT_EQ(JobById(*sim, "one-000001").end_time, absl::Seconds(3));
  EXPECT_EQ(JobById(*sim, "two-000000").submit_time, absl::Seconds(5));
  EXPECT_GE(JobById(*sim, "two-000000").duration, absl::Seconds(1));
  EXPECT_EQ(JobById(*sim, "late-000000").submit_time, absl::Seconds(20));
  EXPECT_EQ(JobById(*sim, "after-empty-000000").submit_time, absl::ZeroDuration());
  for (const SimJob& j : sim->jobs()) EXPECT_EQ(j.state, SimJobState::kSucceeded) << j.id;
  // One record per cycle (one pool, one queue): cycle 1 leased one x2 and after-empty.
  ASSERT_EQ(static_cast<int64_t>(sim->cycle_records().size()), sim->cycles());
  EXPECT_EQ(sim->cycle_records()[0].leased, 3);
  EXPECT_EQ(sim->cycle_records()[0].running, 3);
  EXPECT_DOUBLE_EQ(sim->cycle_records()[0].share, 0.75);
}

TEST(SimulatorTest, DependencyCyclesAreRefused) {
  auto sim = Simulator::Create(Cluster(kFourCpus), Workload(R"(
name: w
queues:
  - name: a
    jobTemplates:
      - {id: x, dependencies: [y]}
      - {id: y, dependencies: [x]}
)"),
                               FirstFitFn(), "workload.yaml");
  EXPECT_THAT(sim.status().message(),
              HasSubstr("workload.yaml: dependencies: templates x, y depend on each other"));
}

}  // namespace
}  // namespace regatta::scheduler::sim
