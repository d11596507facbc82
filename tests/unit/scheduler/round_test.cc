// ScheduleRound: placement, best fit, avoid-nodes, limits, reasons, the shape cache, shares.
#include "src/scheduler/round/round.h"

#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::AssignedTo;
using ::regatta::scheduler::testing::Cpu;
using ::regatta::scheduler::testing::MakeNode;
using ::regatta::scheduler::testing::Res;
using ::regatta::scheduler::testing::RoundBuilder;
using ::regatta::v1::TaskSpec;
using ::testing::HasSubstr;

TaskSpec Selector(const std::string& key, const std::string& value) {
  TaskSpec task;
  (*task.mutable_node_selector())[key] = value;
  return task;
}

std::vector<int> NodesOf(const RoundResult& result) {
  std::vector<int> nodes;
  for (const Assignment& a : result.assignments) nodes.push_back(a.node_index);
  return nodes;
}

TEST(ScheduleRoundTest, EmptyInputs) {
  RoundResult empty = ScheduleRound(RoundInput());
  EXPECT_TRUE(empty.assignments.empty());
  EXPECT_FALSE(empty.limited);

  RoundBuilder b;
  b.AddQueue("a");
  b.AddJob("a", "j1", Cpu("1"));
  RoundResult r = b.Run();  // no nodes
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason, "the pool has no nodes");
  EXPECT_EQ(r.unschedulable[0].job_id, "j1");
  EXPECT_EQ(r.unschedulable[0].queue, "a");
}

TEST(ScheduleRoundTest, PlacesJobsAndRecordsAssignments) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddQueue("a");
  b.AddJob("a", "j1", Cpu("1"));
  b.AddJob("a", "j2", Cpu("2"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.assignments.size(), 2u);
  EXPECT_EQ(r.assignments[0].job_id, "j1");
  EXPECT_EQ(r.assignments[0].queue, "a");
  EXPECT_EQ(r.assignments[0].node_index, 0);
  EXPECT_EQ(r.assignments[1].job_id, "j2");
  EXPECT_TRUE(r.unschedulable.empty());
  EXPECT_FALSE(r.limited);
  EXPECT_EQ(r.stats.jobs_considered, 2);
}

TEST(ScheduleRoundTest, DoesNotModifyTheNodes) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4"))).allocated = Cpu("1");
  b.AddQueue("a");
  b.AddJobs("a", 3, Cpu("1"));
  RoundResult r = b.Run();
  EXPECT_EQ(r.assignments.size(), 3u);
  EXPECT_EQ(b.nodes()[0].allocated, Cpu("1"));
}

TEST(ScheduleRoundTest, RespectsWhatNodesAlreadyHold) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4"))).allocated = Cpu("3500m");
  b.AddQueue("a");
  b.AddJob("a", "small", Cpu("500m"));
  b.AddJob("a", "big", Cpu("1"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, "small");
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason, "no node has room: needs 1 cpu, most free is 0 on node-0");
}

TEST(ScheduleRoundTest, BestFitPicksTheNodeLeftFullest) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));                       // 4 free
  b.AddNode(MakeNode("node-1", Cpu("4"))).allocated = Cpu("2");  // 2 free
  b.AddNode(MakeNode("node-2", Cpu("4"))).allocated = Cpu("1");  // 3 free
  b.AddQueue("a");
  b.AddJobs("a", 4, Cpu("1"));
  RoundResult r = b.Run();
  // node-1 fills first (2 -> 1 -> 0 left), then node-2 (3 -> 2 left).
  EXPECT_EQ(NodesOf(r), (std::vector<int>{1, 1, 2, 2}));
}

TEST(ScheduleRoundTest, BestFitTiesGoToTheLowestNodeIndex) {
  RoundBuilder b;
  for (int i = 0; i < 3; ++i) b.AddNode(MakeNode("node-" + std::to_string(i), Cpu("2")));
  b.AddQueue("a");
  b.AddJobs("a", 6, Cpu("1"));
  EXPECT_EQ(NodesOf(b.Run()), (std::vector<int>{0, 0, 1, 1, 2, 2}));
}

TEST(ScheduleRoundTest, BestFitUsesTheDominantFreeResource) {
  RoundBuilder b;
  // Pool total: 4 cpu, 72Gi. After a 1-cpu job node-0 keeps 1 cpu (0.25) and 64Gi (0.89),
  // node-1 keeps 1 cpu (0.25) and 8Gi (0.11): node-1 is the better fit (0.25 < 0.89), which
  // keeps node-0's memory for memory-heavy jobs.
  b.AddNode(MakeNode("node-0", Res({{"cpu", "2"}, {"memory", "64Gi"}})));
  b.AddNode(MakeNode("node-1", Res({{"cpu", "2"}, {"memory", "8Gi"}})));
  b.AddQueue("a");
  b.AddJob("a", "j", Cpu("1"));
  EXPECT_EQ(NodesOf(b.Run()), (std::vector<int>{1}));
}

TEST(ScheduleRoundTest, UnschedulableNodesNeitherMatchNorCountInTheTotal) {
  RoundBuilder b;
  Node& cordoned = b.AddNode(MakeNode("node-0", Cpu("100")));
  cordoned.unschedulable = true;
  b.AddNode(MakeNode("node-1", Cpu("8")));
  // The queue holds 4 of the 8 schedulable cpu: share 0.5 (the cordoned 100 do not count).
  b.AddQueue("a", 1.0, Cpu("4"));
  b.nodes()[1].allocated = Cpu("4");
  b.AddJob("a", "j", Cpu("1"));
  RoundResult r = b.Run();
  EXPECT_EQ(NodesOf(r), (std::vector<int>{1}));
  ASSERT_EQ(r.shares.size(), 1u);
  EXPECT_DOUBLE_EQ(r.shares[0].share_before, 0.5);   // 4/8
  EXPECT_DOUBLE_EQ(r.shares[0].share_after, 0.625);  // 5/8
  EXPECT_EQ(r.shares[0].assigned, 1);
}

TEST(ScheduleRoundTest, SharesAreWeightedDominantSharesPerQueueInInputOrder) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Res({{"cpu", "8"}, {"memory", "16Gi"}})));
  b.AddQueue("z", 0.5, Res({{"memory", "4Gi"}}));  // 4/16 = 0.25 / 0.5 = 0.5
  b.AddQueue("a");
  b.AddJob("a", "j", Res({{"cpu", "2"}, {"memory", "1Gi"}}));
  RoundResult r = b.Run({});
  ASSERT_EQ(r.shares.size(), 2u);
  EXPECT_EQ(r.shares[0].queue, "z");
  EXPECT_DOUBLE_EQ(r.shares[0].share_before, 0.5);
  EXPECT_DOUBLE_EQ(r.shares[0].share_after, 0.5);
  EXPECT_EQ(r.shares[0].assigned, 0);
  EXPECT_EQ(r.shares[1].queue, "a");
  EXPECT_DOUBLE_EQ(r.shares[1].share_before, 0.0);
  EXPECT_DOUBLE_EQ(r.shares[1].share_after, 0.25);  // cpu 2/8 dominates memory 1/16
  EXPECT_EQ(r.shares[1].assigned, 1);
}

TEST(ScheduleRoundTest, MultipliersChangeWhoGoesFirst) {
  // Pool 4 cpu, 4Gi. Queue "a" wants cpu-only jobs, "b" memory-only ones; 1 of each unit per job.
  auto run = [](double memory_multiplier) {
    RoundBuilder b;
    b.AddNode(MakeNode("node-0", Res({{"cpu", "4"}, {"memory", "4Gi"}})));
    b.AddQueue("a", 1.0, Cpu("2"));                  // share 0.5
    b.AddQueue("b", 1.0, Res({{"memory", "1Gi"}}));  // share 0.25 x multiplier
    b.nodes()[0].allocated = Res({{"cpu", "2"}, {"memory", "1Gi"}});
    b.AddJob("a", "a1", Cpu("1"));
    b.AddJob("b", "b1", Res({{"memory", "1Gi"}}));
    RoundConfig config;
    config.resource_multipliers[ResourceNames::kMemory] = memory_multiplier;
    config.max_assignments = 1;
    return b.Run(config).assignments.at(0).queue;
  };
  EXPECT_EQ(run(1.0), "b");  // a-if 0.75 vs b-if 0.5
  EXPECT_EQ(run(4.0), "a");  // a-if 0.75 vs b-if 0.5 x 4 = 2.0
}

TEST(ScheduleRoundTest, EqualCostGoesToTheQueueFirstByName) {
  for (bool reversed : {false, true}) {
    RoundBuilder b;
    b.AddNode(MakeNode("node-0", Cpu("1")));
    if (reversed) {
      b.AddQueue("beta").AddQueue("alpha");
    } else {
      b.AddQueue("alpha").AddQueue("beta");
    }
    b.AddJob("alpha", "a1", Cpu("1"));
    b.AddJob("beta", "b1", Cpu("1"));
    RoundResult r = b.Run();
    ASSERT_EQ(r.assignments.size(), 1u);
    EXPECT_EQ(r.assignments[0].job_id, "a1") << "reversed=" << reversed;
  }
}

TEST(ScheduleRoundTest, AnUnschedulableJobDoesNotBlockItsQueue) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddQueue("a");
  b.AddJob("a", "needs-gpu", Res({{"nvidia.com/gpu", "1"}}));
  b.AddJob("a", "too-big", Cpu("64"));
  b.AddJob("a", "fine", Cpu("1"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, "fine");
  ASSERT_EQ(r.unschedulable.size(), 2u);
  EXPECT_EQ(r.unschedulable[0].job_id, "needs-gpu");
  EXPECT_EQ(r.unschedulable[0].reason,
            "0 of 1 nodes match: needs 1 nvidia.com/gpu, node allocatable is 0 (1)");
  EXPECT_EQ(r.unschedulable[1].reason,
            "0 of 1 nodes match: needs 64 cpu, node allocatable is 4 (1)");
  EXPECT_FALSE(r.limited);
}

TEST(ScheduleRoundTest, NoMatchReasonCountsReasonsAcrossNodes) {
  RoundBuilder b;
  for (int i = 0; i < 3; ++i) b.AddNode(MakeNode("node-" + std::to_string(i), Cpu("4")));
  b.AddQueue("a");
  b.AddJob("a", "j", Cpu("1"), Selector("gpu", "a100"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "0 of 3 nodes match: node selector gpu=a100 does not match (3)");
}

TEST(ScheduleRoundTest, NoMatchReasonOrdersByCountThenText) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4"))).unschedulable = true;
  Node& tainted = b.AddNode(MakeNode("node-1", Cpu("4")));
  tainted.labels["gpu"] = "a100";
  tainted.taints.push_back(Taint{"dedicated", "ml", "NoSchedule"});
  b.AddNode(MakeNode("node-2", Cpu("4")));
  b.AddNode(MakeNode("node-3", Cpu("4")));
  b.AddQueue("a");
  b.AddJob("a", "j", Cpu("1"), Selector("gpu", "a100"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "0 of 4 nodes match: node selector gpu=a100 does not match (2); node is "
            "unschedulable (1); taint dedicated=ml:NoSchedule is not tolerated (1)");
}

TEST(ScheduleRoundTest, NoMatchReasonSummarisesBeyondThreeReasons) {
  RoundBuilder b;
  for (int i = 0; i < 5; ++i) {
    b.AddNode(MakeNode("node-" + std::to_string(i), Cpu(std::to_string(i + 1))));
  }
  b.AddQueue("a");
  b.AddJob("a", "j", Cpu("8"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "0 of 5 nodes match: needs 8 cpu, node allocatable is 1 (1); needs 8 cpu, node "
            "allocatable is 2 (1); needs 8 cpu, node allocatable is 3 (1); other reasons (2)");
}

TEST(ScheduleRoundTest, NoRoomReasonNamesTheMostFreeNode) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("2"))).allocated = Cpu("2");
  b.AddNode(MakeNode("node-1", Cpu("2"))).allocated = Cpu("1500m");
  Node& other = b.AddNode(MakeNode("node-2", Cpu("8")));
  other.labels["gpu"] = "a100";
  other.allocated = Cpu("8");
  b.AddQueue("a");
  b.AddJob("a", "j", Cpu("1"), Selector("gpu", "a100"));
  b.AddJob("a", "k", Cpu("1"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 2u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 1 cpu, most free is 0 on node-2 (1 of 3 nodes match)");
  EXPECT_EQ(r.unschedulable[1].reason,
            "no node has room: needs 1 cpu, most free is 500m on node-1");
}

TEST(ScheduleRoundTest, NoRoomReasonWhenNoSingleNodeHasEverything) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Res({{"cpu", "4"}, {"memory", "1Gi"}})));
  b.AddNode(MakeNode("node-1", Res({{"cpu", "1"}, {"memory", "8Gi"}})));
  b.AddQueue("a");
  b.AddJob("a", "j", Res({{"cpu", "2"}, {"memory", "1Gi"}}));  // fits node-0 statically
  b.nodes()[0].allocated = Res({{"memory", "512Mi"}});
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 1Gi memory, most free is 512Mi on node-0 (1 of 2 nodes "
            "match)");
  RoundBuilder c;
  c.AddNode(MakeNode("node-0", Res({{"cpu", "4"}, {"memory", "4Gi"}}))).allocated = Cpu("3");
  c.AddNode(MakeNode("node-1", Res({{"cpu", "4"}, {"memory", "4Gi"}}))).allocated =
      Res({{"memory", "4Gi"}});
  c.AddQueue("a");
  c.AddJob("a", "j", Res({{"cpu", "2"}, {"memory", "1Gi"}}));
  r = c.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 2 cpu, 1Gi memory, no node has all of it free");
}

TEST(ScheduleRoundTest, TenThousandIdenticalUnmatchableJobsCostOneScan) {
  RoundBuilder b;
  for (int i = 0; i < 3; ++i) b.AddNode(MakeNode("node-" + std::to_string(i), Cpu("4")));
  b.AddQueue("a");
  b.AddJobs("a", 10000, Cpu("1"), Selector("gpu", "a100"));
  RoundResult r = b.Run();
  EXPECT_EQ(r.unschedulable.size(), 10000u);
  EXPECT_EQ(r.unschedulable[9999].reason,
            "0 of 3 nodes match: node selector gpu=a100 does not match (3)");
  EXPECT_EQ(r.stats.jobs_considered, 10000);
  EXPECT_EQ(r.stats.shapes, 1);
  EXPECT_EQ(r.stats.static_matches, 3);  // one scan of the 3 nodes for all 10 000 jobs
  EXPECT_EQ(r.stats.fit_checks, 0);
}

TEST(ScheduleRoundTest, TenThousandIdenticalJobsThatDoNotFitCostOneScan) {
  RoundBuilder b;
  for (int i = 0; i < 3; ++i) b.AddNode(MakeNode("node-" + std::to_string(i), Cpu("4")));
  b.AddQueue("a");
  // Distinct task specs with the same shape share the cache too.
  for (int i = 0; i < 10000; ++i) b.AddJob("a", "j" + std::to_string(i), Cpu("3"));
  RoundResult r = b.Run();
  EXPECT_EQ(r.assignments.size(), 3u);  // one per node
  EXPECT_EQ(r.unschedulable.size(), 9997u);
  EXPECT_EQ(r.unschedulable[0].reason, "no node has room: needs 3 cpu, most free is 1 on node-0");
  EXPECT_EQ(r.stats.shapes, 1);
  EXPECT_EQ(r.stats.static_matches, 3);
  // 3 + 3 + 2 checks to place (full nodes are dropped from the shape's list as they are seen),
  // 1 for the fourth job to find the last node full, then none for the other 9 996.
  EXPECT_EQ(r.stats.fit_checks, 9);
}

TEST(ScheduleRoundTest, ShapesAreCachedPerRequestsAndSelector) {
  RoundBuilder b;
  Node& gpu = b.AddNode(MakeNode("node-0", Cpu("8")));
  gpu.labels["gpu"] = "a100";
  b.AddNode(MakeNode("node-1", Cpu("8")));
  b.AddQueue("a");
  for (int i = 0; i < 4; ++i) {
    b.AddJob("a", "plain" + std::to_string(i), Cpu("1"));
    b.AddJob("a", "gpu" + std::to_string(i), Cpu("1"), Selector("gpu", "a100"));
  }
  RoundResult r = b.Run();
  EXPECT_EQ(r.assignments.size(), 8u);
  EXPECT_EQ(r.stats.shapes, 2);
  EXPECT_EQ(r.stats.static_matches, 4);  // 2 shapes x 2 nodes
  for (const Assignment& a : r.assignments) {
    if (a.job_id.starts_with("gpu")) {
      EXPECT_EQ(a.node_index, 0) << a.job_id;
    }
  }
}

TEST(ScheduleRoundTest, ResourcesOnlySomeNodesHave) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("8")));
  b.AddNode(MakeNode("node-1", Res({{"cpu", "8"}, {"example.com/camera", "1"}})));
  // A node whose runs hold more than it now has: nothing fits there.
  b.AddNode(MakeNode("node-2", Res({{"cpu", "8"}, {"example.com/camera", "2"}}))).allocated =
      Res({{"cpu", "9"}});
  b.AddQueue("a");
  b.AddJob("a", "cam-1", Res({{"cpu", "1"}, {"example.com/camera", "1"}}));
  b.AddJob("a", "cam-2", Res({{"cpu", "1"}, {"example.com/camera", "1"}}));
  b.AddJob("a", "plain", Cpu("1"));
  RoundResult r = b.Run();
  ASSERT_EQ(r.assignments.size(), 2u);
  EXPECT_EQ(r.assignments[0].job_id, "cam-1");
  EXPECT_EQ(r.assignments[0].node_index, 1);
  EXPECT_EQ(r.assignments[1].job_id, "plain");
  EXPECT_EQ(r.assignments[1].node_index, 1);  // the fuller of node-0 and node-1
  ASSERT_EQ(r.unschedulable.size(), 1u);
  // node-1 has cpu but no camera left, node-2 a camera but no cpu.
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 1 cpu, 1 example.com/camera, no node has all of it free (2 "
            "of 3 nodes match)");
}

TEST(ScheduleRoundTest, ZeroRequestsFitAnOvercommittedResource) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Res({{"cpu", "4"}, {"memory", "8Gi"}}))).allocated =
      Res({{"cpu", "1"}, {"memory", "9Gi"}});
  b.AddQueue("a");
  b.AddJob("a", "cpu-only", Cpu("1"));
  b.AddJob("a", "needs-memory", Res({{"cpu", "1"}, {"memory", "1Gi"}}));
  RoundResult r = b.Run();
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, "cpu-only");
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 1Gi memory, most free is 0 on node-0");
}

TEST(ScheduleRoundTest, ManyDistinctShapesBeyondTheMatchCache) {
  // 1000 nodes x 1100 shapes (two jobs each) is more node indices than the per-shape match cache
  // keeps (2M): later shapes are matched per job, with the same results.
  RoundBuilder b;
  for (int i = 0; i < 1000; ++i) b.AddNode(MakeNode("node-" + std::to_string(i), Cpu("8")));
  b.AddQueue("a");
  for (int i = 0; i < 1100; ++i) {
    for (int k = 0; k < 2; ++k) {
      b.AddJob("a", "j" + std::to_string(i) + "-" + std::to_string(k),
               Cpu(std::to_string(1000 + i) + "m"));
    }
  }
  RoundResult r = b.Run();
  EXPECT_EQ(r.assignments.size(), 2200u);
  EXPECT_EQ(r.stats.shapes, 1100);
  EXPECT_GT(r.stats.static_matches, 1100 * 1000);  // uncached shapes' second jobs matched again
  EXPECT_TRUE(r.unschedulable.empty());
}

TEST(ScheduleRoundTest, AvoidNodesWhileAnotherNodeMatches) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddNode(MakeNode("node-1", Cpu("4")));
  b.AddQueue("a");
  b.AddJob("a", "retry", Cpu("1"), TaskSpec(), {"node-0"});
  b.AddJob("a", "fresh", Cpu("1"));
  // Without the avoid list both would go to node-0 (tie -> lowest index).
  EXPECT_EQ(NodesOf(b.Run()), (std::vector<int>{1, 1}));  // fresh: node-1 is now the best fit
}

TEST(ScheduleRoundTest, AvoidedNodesAreUsedWhenNoOtherNodeCouldEverHoldTheJob) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddNode(MakeNode("node-1", Cpu("2")));  // too small, ever
  Node& tainted = b.AddNode(MakeNode("node-2", Cpu("8")));
  tainted.taints.push_back(Taint{"dedicated", "ml", "NoSchedule"});
  b.AddQueue("a");
  b.AddJob("a", "retry", Cpu("3"), TaskSpec(), {"node-0", "unknown-node"});
  EXPECT_EQ(NodesOf(b.Run()), (std::vector<int>{0}));
}

TEST(ScheduleRoundTest, AvoidedNodesStayAvoidedWhenTheOtherMatchingNodeIsFull) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddNode(MakeNode("node-1", Cpu("4"))).allocated = Cpu("4");
  b.AddQueue("a");
  b.AddJob("a", "retry", Cpu("1"), TaskSpec(), {"node-0"});
  b.AddJob("a", "fresh", Cpu("1"));  // same shape, nothing avoided: must not inherit the failure
  RoundResult r = b.Run();
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].job_id, "retry");
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: needs 1 cpu, most free is 0 on node-1 (avoiding 1 where earlier "
            "runs failed)");
  ASSERT_EQ(r.assignments.size(), 1u);
  EXPECT_EQ(r.assignments[0].job_id, "fresh");
  EXPECT_EQ(r.assignments[0].node_index, 0);
}

TEST(ScheduleRoundTest, ExecutorCapacitySkipsNodesOfFullExecutors) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4"), "exec-a"));
  b.AddNode(MakeNode("node-1", Cpu("4"), "exec-b"));
  b.AddQueue("a");
  b.AddJobs("a", 3, Cpu("1"));
  RoundConfig config;
  config.executor_capacity["exec-a"] = 1;  // exec-b has no entry: unlimited
  RoundResult r = b.Run(config);
  EXPECT_EQ(NodesOf(r), (std::vector<int>{0, 1, 1}));
  EXPECT_FALSE(r.limited);
}

TEST(ScheduleRoundTest, RoundEndsWhenEveryExecutorIsAtCapacity) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4"), "exec-a"));
  b.AddNode(MakeNode("node-1", Cpu("4"), "exec-a"));
  b.AddNode(MakeNode("node-2", Cpu("4"), "exec-b"));
  b.AddQueue("a");
  b.AddJobs("a", 10, Cpu("1"));
  RoundConfig config;
  config.executor_capacity["exec-a"] = 2;
  config.executor_capacity["exec-b"] = 1;
  RoundResult r = b.Run(config);
  EXPECT_EQ(NodesOf(r), (std::vector<int>{0, 0, 2}));
  EXPECT_TRUE(r.limited);
  EXPECT_TRUE(r.unschedulable.empty());  // the rest were not looked at
  EXPECT_EQ(r.stats.jobs_considered, 3);
}

TEST(ScheduleRoundTest, ExecutorAtCapacityIsNamedInTheReason) {
  RoundBuilder b;
  Node& a = b.AddNode(MakeNode("node-0", Cpu("4"), "exec-a"));
  a.labels["gpu"] = "a100";
  b.AddNode(MakeNode("node-1", Cpu("4"), "exec-b"));
  b.AddQueue("a");
  b.AddJob("a", "gpu-job", Cpu("1"), Selector("gpu", "a100"));
  b.AddJob("a", "plain", Cpu("1"));
  RoundConfig config;
  config.executor_capacity["exec-a"] = 0;
  RoundResult r = b.Run(config);
  ASSERT_EQ(r.unschedulable.size(), 1u);
  EXPECT_EQ(r.unschedulable[0].reason,
            "no node has room: the executors of all 1 matching nodes have no capacity left this "
            "round (1 of 2 nodes match)");
  EXPECT_EQ(NodesOf(r), (std::vector<int>{1}));
}

TEST(ScheduleRoundTest, MaxAssignmentsEndsTheRound) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("100")));
  b.AddQueue("a").AddQueue("b");
  b.AddJobs("a", 10, Cpu("1"));
  b.AddJobs("b", 10, Cpu("1"));
  RoundConfig config;
  config.max_assignments = 5;
  RoundResult r = b.Run(config);
  EXPECT_EQ(r.assignments.size(), 5u);
  EXPECT_TRUE(r.limited);
  EXPECT_EQ(AssignedTo(r, "a"), 3);  // a, b, a, b, a: alternating on ties
  EXPECT_EQ(AssignedTo(r, "b"), 2);
}

TEST(ScheduleRoundTest, MaxAssignmentsReachedWithTheLastJobIsNotALimit) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("100")));
  b.AddQueue("a");
  b.AddJobs("a", 5, Cpu("1"));
  RoundConfig config;
  config.max_assignments = 5;
  RoundResult r = b.Run(config);
  EXPECT_EQ(r.assignments.size(), 5u);
  EXPECT_FALSE(r.limited);
}

TEST(ScheduleRoundTest, TimeBudgetEndsTheRound) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("100000")));
  b.AddQueue("a");
  b.AddJobs("a", 5000, Cpu("1"));
  RoundConfig config;
  config.time_budget = absl::Nanoseconds(1);
  RoundResult r = b.Run(config);
  EXPECT_TRUE(r.limited);
  EXPECT_GE(r.assignments.size(), 1u);
  EXPECT_LT(r.assignments.size(), 5000u);
  EXPECT_TRUE(r.unschedulable.empty());
}

TEST(ScheduleRoundTest, SameInputSameOutput) {
  auto run = [] {
    RoundBuilder b;
    for (int i = 0; i < 7; ++i) {
      Node& n =
          b.AddNode(MakeNode("node-" + std::to_string(i), Res({{"cpu", "3"}, {"memory", "6Gi"}})));
      if (i % 2 == 0) n.labels["zone"] = "even";
    }
    for (const char* q : {"q3", "q1", "q2"}) b.AddQueue(q, q[1] == '1' ? 0.5 : 1.0);
    for (int i = 0; i < 30; ++i) {
      const std::string q = "q" + std::to_string(1 + i % 3);
      ResourceList req = i % 4 == 0 ? Res({{"cpu", "500m"}, {"memory", "2Gi"}}) : Cpu("1");
      b.AddJob(q, "j" + std::to_string(i), req, i % 5 == 0 ? Selector("zone", "even") : TaskSpec());
    }
    return b.Run();
  };
  RoundResult first = run();
  for (int i = 0; i < 3; ++i) {
    RoundResult again = run();
    ASSERT_EQ(again.assignments.size(), first.assignments.size());
    for (size_t k = 0; k < first.assignments.size(); ++k) {
      EXPECT_EQ(again.assignments[k].job_id, first.assignments[k].job_id);
      EXPECT_EQ(again.assignments[k].node_index, first.assignments[k].node_index);
    }
    ASSERT_EQ(again.unschedulable.size(), first.unschedulable.size());
    for (size_t k = 0; k < first.unschedulable.size(); ++k) {
      EXPECT_EQ(again.unschedulable[k].reason, first.unschedulable[k].reason);
    }
  }
}

TEST(ScheduleRoundTest, QueuesWithoutJobsOrIteratorsAreSkipped) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("4")));
  b.AddQueue("a").AddQueue("empty");
  b.AddJob("a", "j", Cpu("1"));
  RoundInput input = b.Build();
  input.queues.emplace_back().name = "no-iterator";
  RoundResult r = ScheduleRound(std::move(input));
  EXPECT_EQ(r.assignments.size(), 1u);
  ASSERT_EQ(r.shares.size(), 3u);
  EXPECT_EQ(r.shares[2].queue, "no-iterator");
}

}  // namespace
}  // namespace regatta::scheduler
