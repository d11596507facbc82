#include "src/scheduler/nodedb/node_db.h"

#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::MakeNode;
using ::regatta::scheduler::testing::Res;
using ::regatta::v1::TaskSpec;

std::vector<int64_t> Dense(const NodeDb& db, const ResourceList& requests) {
  std::vector<int64_t> dense;
  EXPECT_TRUE(db.ToDense(requests, &dense));
  return dense;
}

int Best(NodeDb& db, const TaskSpec& task, const ResourceList& requests, int level) {
  ShapeMatch shape = db.MatchShape(task, requests);
  std::vector<int64_t> dense = Dense(db, requests);
  return db.BestFit(shape, dense.data(), level,
                    [&](int node) { return db.NodeMatches(shape, task, node); });
}

NodeDbConfig Config(std::vector<int32_t> priorities = {0}) {
  NodeDbConfig config;
  config.priorities = std::move(priorities);
  return config;
}

TEST(NodeDbTest, BestFitIsLeastFreeCpuThenMemoryThenLowestIndex) {
  std::vector<Node> nodes = {
      MakeNode("a", Res({{"cpu", "8"}, {"memory", "8Gi"}})),
      MakeNode("b", Res({{"cpu", "4"}, {"memory", "16Gi"}})),
      MakeNode("c", Res({{"cpu", "4"}, {"memory", "8Gi"}})),
      MakeNode("d", Res({{"cpu", "4"}, {"memory", "8Gi"}})),
      MakeNode("e", Res({{"cpu", "2"}, {"memory", "64Gi"}})),
  };
  NodeDb db(nodes, Config());
  const TaskSpec task;
  // 4 cpu: e has too little cpu; c and d (4 cpu, 8Gi) beat b (4 cpu, 16Gi); c has the lower index.
  EXPECT_EQ(Best(db, task, Res({{"cpu", "4"}, {"memory", "1Gi"}}), 0), 2);
  // 12Gi memory: among the 4-cpu nodes only b has it (c and d are skipped within the 4-cpu run).
  EXPECT_EQ(Best(db, task, Res({{"cpu", "3"}, {"memory", "12Gi"}}), 0), 1);
  // 2 cpu: e is the tightest cpu fit.
  EXPECT_EQ(Best(db, task, Res({{"cpu", "2"}}), 0), 4);
  // Nothing has 9 cpu.
  EXPECT_EQ(Best(db, task, Res({{"cpu", "9"}}), 0), -1);
}

TEST(NodeDbTest, BindMovesTheNodeInTheIndex) {
  std::vector<Node> nodes = {MakeNode("a", Res({{"cpu", "8"}})),
                             MakeNode("b", Res({{"cpu", "4"}}))};
  NodeDb db(nodes, Config());
  const TaskSpec task;
  EXPECT_EQ(Best(db, task, Res({{"cpu", "1"}}), 0), 1);
  std::vector<int64_t> three = Dense(db, Res({{"cpu", "3"}}));
  db.Bind(1, three.data(), 1);
  // b has 1 cpu left: still the best for 1 cpu, no longer fits 2.
  EXPECT_EQ(Best(db, task, Res({{"cpu", "1"}}), 0), 1);
  EXPECT_EQ(Best(db, task, Res({{"cpu", "2"}}), 0), 0);
  db.Unbind(1, three.data(), 1);
  EXPECT_EQ(Best(db, task, Res({{"cpu", "2"}}), 0), 1);
}

TEST(NodeDbTest, AllocatableAtALevelExcludesJobsBelowIt) {
  std::vector<Node> nodes = {MakeNode("a", Res({{"cpu", "10"}}))};
  // Priorities 100 and 1000: levels 0 (evicted), 1 (100), 2 (1000).
  NodeDb db(nodes, Config({1000, 100, 100}));
  ASSERT_EQ(db.num_levels(), 3);
  EXPECT_EQ(db.LevelOfPriority(100), 1);
  EXPECT_EQ(db.LevelOfPriority(1000), 2);
  std::vector<int64_t> one = Dense(db, Res({{"cpu", "1"}}));
  std::vector<int64_t> two = Dense(db, Res({{"cpu", "2"}}));
  std::vector<int64_t> four = Dense(db, Res({{"cpu", "4"}}));
  db.Bind(0, one.data(), NodeDb::kEvictedLevel);
  db.Bind(0, two.data(), 1);
  db.Bind(0, four.data(), 2);
  EXPECT_EQ(db.FreeAt(0, 0, ResourceNames::kCpu), 3000);  // 10 - 1 - 2 - 4
  EXPECT_EQ(db.FreeAt(0, 1, ResourceNames::kCpu), 4000);  // the evicted job does not count
  EXPECT_EQ(db.FreeAt(0, 2, ResourceNames::kCpu), 6000);  // only the level-2 job counts
  // A non-preemptible job counts at every level.
  db.Bind(0, one.data(), NodeDb::kUnpreemptibleLevel);
  EXPECT_EQ(db.FreeAt(0, 2, ResourceNames::kCpu), 5000);
  EXPECT_EQ(db.FreeAt(0, 0, ResourceNames::kCpu), 2000);
  // Evicting the level-2 job: it now counts at level 0 only; placing it back takes no room
  // from anyone, so the epoch (room grew) moves only on the way down.
  int64_t epoch = db.epoch();
  db.Move(0, four.data(), 2, NodeDb::kEvictedLevel);
  EXPECT_EQ(db.FreeAt(0, 0, ResourceNames::kCpu), 2000);
  EXPECT_EQ(db.FreeAt(0, 2, ResourceNames::kCpu), 9000);
  EXPECT_GT(db.epoch(), epoch);
  epoch = db.epoch();
  db.Move(0, four.data(), NodeDb::kEvictedLevel, 2);
  EXPECT_EQ(db.FreeAt(0, 1, ResourceNames::kCpu), 3000);
  EXPECT_EQ(db.FreeAt(0, 2, ResourceNames::kCpu), 5000);
  EXPECT_EQ(db.epoch(), epoch);
  // The index follows each level: 5 cpu fit at level 2 only.
  EXPECT_EQ(Best(db, TaskSpec(), Res({{"cpu", "5"}}), 2), 0);
  EXPECT_EQ(Best(db, TaskSpec(), Res({{"cpu", "5"}}), 1), -1);
}

TEST(NodeDbTest, NodeTypesByTaintsAndIndexedLabelsOthersCheckedPerNode) {
  std::vector<Node> nodes;
  for (int i = 0; i < 6; ++i) {
    Node node = MakeNode("n" + std::to_string(i), Res({{"cpu", "4"}}));
    node.labels["zone"] = i < 3 ? "a" : "b";
    node.labels["rack"] = "r" + std::to_string(i);
    if (i == 5) node.taints.push_back(Taint{.key = "gpu", .value = "", .effect = "NoSchedule"});
    nodes.push_back(node);
  }
  NodeDbConfig config = Config();
  config.indexed_node_labels = {"zone"};
  NodeDb db(nodes, config);
  EXPECT_EQ(db.num_node_types(), 3);  // zone a, zone b, zone b + taint
  TaskSpec zone_b;
  (*zone_b.mutable_node_selector())["zone"] = "b";
  ShapeMatch match = db.MatchShape(zone_b, Res({{"cpu", "1"}}));
  EXPECT_FALSE(match.needs_node_check);
  EXPECT_EQ(match.matching_nodes, 2);  // n3, n4 (n5 is tainted)
  EXPECT_EQ(Best(db, zone_b, Res({{"cpu", "1"}}), 0), 3);

  TaskSpec rack;
  (*rack.mutable_node_selector())["zone"] = "b";
  (*rack.mutable_node_selector())["rack"] = "r4";
  match = db.MatchShape(rack, Res({{"cpu", "1"}}));
  EXPECT_TRUE(match.needs_node_check);
  EXPECT_EQ(match.matching_nodes, 1);
  EXPECT_EQ(Best(db, rack, Res({{"cpu", "1"}}), 0), 4);

  TaskSpec nowhere;
  (*nowhere.mutable_node_selector())["zone"] = "c";
  match = db.MatchShape(nowhere, Res({{"cpu", "1"}}));
  EXPECT_EQ(match.matching_nodes, 0);
  // The selector is checked before the taint, so every node fails on it.
  EXPECT_EQ(match.no_match_reason, "0 of 6 nodes match: node selector zone=c does not match (6)");
  TaskSpec zone_b_big = zone_b;
  match = db.MatchShape(zone_b_big, Res({{"cpu", "5"}}));
  EXPECT_EQ(match.no_match_reason,
            "0 of 6 nodes match: node selector zone=b does not match (3); needs 5 cpu, node "
            "allocatable is 4 (2); taint gpu:NoSchedule is not tolerated (1)");
}

TEST(NodeDbTest, RollbackUndoesEveryBindSinceTheMark) {
  std::vector<Node> nodes = {MakeNode("a", Res({{"cpu", "4"}})),
                             MakeNode("b", Res({{"cpu", "4"}}))};
  NodeDb db(nodes, Config());
  std::vector<int64_t> one = Dense(db, Res({{"cpu", "1"}}));
  db.Bind(0, one.data(), 1);
  const int64_t epoch = db.epoch();
  const size_t mark = db.Mark();
  db.Bind(0, one.data(), 1);
  db.Bind(1, one.data(), 1);
  db.Unbind(1, one.data(), 1);
  db.Bind(1, one.data(), 1);
  db.RollbackTo(mark);
  db.Commit();
  EXPECT_EQ(db.FreeAt(0, 0, ResourceNames::kCpu), 3000);
  EXPECT_EQ(db.FreeAt(1, 0, ResourceNames::kCpu), 4000);
  EXPECT_GT(db.epoch(), epoch);
  // The index is back too: 4 cpu fit only on b.
  EXPECT_EQ(Best(db, TaskSpec(), Res({{"cpu", "4"}}), 0), 1);
}

TEST(NodeDbTest, ClosedAndUnschedulableNodesAreNotCandidates) {
  std::vector<Node> nodes = {MakeNode("a", Res({{"cpu", "4"}})), MakeNode("b", Res({{"cpu", "4"}})),
                             MakeNode("c", Res({{"cpu", "8"}}))};
  nodes[0].unschedulable = true;
  NodeDb db(nodes, Config());
  EXPECT_EQ(db.open_nodes(), 2);
  EXPECT_EQ(Best(db, TaskSpec(), Res({{"cpu", "1"}}), 0), 1);
  db.Close(1);
  EXPECT_EQ(Best(db, TaskSpec(), Res({{"cpu", "1"}}), 0), 2);
  EXPECT_EQ(db.open_nodes(), 1);
}

}  // namespace
}  // namespace regatta::scheduler
