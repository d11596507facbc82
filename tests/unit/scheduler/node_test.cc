// Static matching (selector, affinity, taints, allocatable), FitsNow and job shapes.
#include "src/scheduler/nodedb/node.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/scheduler/nodedb/shape.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::Cpu;
using ::regatta::scheduler::testing::MakeNode;
using ::regatta::scheduler::testing::Res;
using ::regatta::v1::NodeSelectorRequirement;
using ::regatta::v1::NodeSelectorTerm;
using ::regatta::v1::TaskSpec;
using ::regatta::v1::Toleration;

Node LabelledNode(std::vector<std::pair<std::string, std::string>> labels) {
  Node node = MakeNode("node-1", Res({{"cpu", "8"}, {"memory", "32Gi"}}));
  for (auto& [k, v] : labels) node.labels[k] = v;
  return node;
}

NodeSelectorRequirement Req(const std::string& key, const std::string& op,
                            std::vector<std::string> values = {}) {
  NodeSelectorRequirement r;
  r.set_key(key);
  r.set_operator_(op);
  for (auto& v : values) r.add_values(v);
  return r;
}

// A task whose affinity has one term per element of `terms`.
TaskSpec AffinityTask(std::vector<std::vector<NodeSelectorRequirement>> terms) {
  TaskSpec task;
  for (auto& term : terms) {
    NodeSelectorTerm* t = task.mutable_node_affinity()->add_required_terms();
    for (auto& r : term) *t->add_match_expressions() = r;
  }
  return task;
}

bool Holds(const NodeSelectorRequirement& r, const Node& node) {
  return RequirementHolds(r, node.labels);
}

Toleration Tol(const std::string& key, const std::string& op, const std::string& value,
               const std::string& effect) {
  Toleration t;
  t.set_key(key);
  t.set_operator_(op);
  t.set_value(value);
  t.set_effect(effect);
  return t;
}

TEST(MatchNodeStaticallyTest, PlainTaskMatchesPlainNode) {
  StaticMatch m = MatchNodeStatically(TaskSpec(), Cpu("1"), LabelledNode({}));
  EXPECT_TRUE(m.matches);
  EXPECT_EQ(m.rule, MatchRule::kNone);
  EXPECT_EQ(m.reason, "");
}

TEST(MatchNodeStaticallyTest, UnschedulableNodeNeverMatchesAndIsCheckedFirst) {
  Node node = LabelledNode({});
  node.unschedulable = true;
  TaskSpec task;
  (*task.mutable_node_selector())["gpu"] = "a100";  // would fail too; unschedulable wins
  StaticMatch m = MatchNodeStatically(task, Cpu("100"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.rule, MatchRule::kUnschedulable);
  EXPECT_EQ(m.reason, "node is unschedulable");
}

TEST(MatchNodeStaticallyTest, NodeSelectorNeedsEveryPair) {
  TaskSpec task;
  (*task.mutable_node_selector())["gpu"] = "a100";
  (*task.mutable_node_selector())["zone"] = "east";
  EXPECT_TRUE(MatchNodeStatically(task, Cpu("1"),
                                  LabelledNode({{"gpu", "a100"}, {"zone", "east"}, {"extra", "x"}}))
                  .matches);
  StaticMatch wrong_value =
      MatchNodeStatically(task, Cpu("1"), LabelledNode({{"gpu", "v100"}, {"zone", "east"}}));
  EXPECT_FALSE(wrong_value.matches);
  EXPECT_EQ(wrong_value.rule, MatchRule::kNodeSelector);
  EXPECT_EQ(wrong_value.reason, "node selector gpu=a100 does not match");
  StaticMatch missing = MatchNodeStatically(task, Cpu("1"), LabelledNode({{"gpu", "a100"}}));
  EXPECT_EQ(missing.reason, "node selector zone=east does not match");
  // Both fail: the smallest key is named, whatever the map's order.
  StaticMatch both = MatchNodeStatically(task, Cpu("1"), LabelledNode({}));
  EXPECT_EQ(both.reason, "node selector gpu=a100 does not match");
}

TEST(RequirementHoldsTest, In) {
  Node node = LabelledNode({{"zone", "a"}});
  EXPECT_TRUE(Holds(Req("zone", "In", {"a", "b"}), node));
  EXPECT_FALSE(Holds(Req("zone", "In", {"b", "c"}), node));
  EXPECT_FALSE(Holds(Req("rack", "In", {"a"}), node));  // absent
}

TEST(RequirementHoldsTest, NotInHoldsWhenAbsent) {
  Node node = LabelledNode({{"zone", "a"}});
  EXPECT_FALSE(Holds(Req("zone", "NotIn", {"a", "b"}), node));
  EXPECT_TRUE(Holds(Req("zone", "NotIn", {"b"}), node));
  EXPECT_TRUE(Holds(Req("rack", "NotIn", {"a"}), node));
}

TEST(RequirementHoldsTest, ExistsAndDoesNotExist) {
  Node node = LabelledNode({{"gpu", ""}});  // an empty value still exists
  EXPECT_TRUE(Holds(Req("gpu", "Exists"), node));
  EXPECT_FALSE(Holds(Req("fpga", "Exists"), node));
  EXPECT_FALSE(Holds(Req("gpu", "DoesNotExist"), node));
  EXPECT_TRUE(Holds(Req("fpga", "DoesNotExist"), node));
}

TEST(RequirementHoldsTest, GtAndLtCompareIntegers) {
  Node node = LabelledNode({{"cores", "16"}, {"name", "big"}, {"neg", "-3"}});
  EXPECT_TRUE(Holds(Req("cores", "Gt", {"8"}), node));
  EXPECT_FALSE(Holds(Req("cores", "Gt", {"16"}), node));  // strictly greater
  EXPECT_FALSE(Holds(Req("cores", "Gt", {"32"}), node));
  EXPECT_TRUE(Holds(Req("cores", "Lt", {"32"}), node));
  EXPECT_FALSE(Holds(Req("cores", "Lt", {"16"}), node));
  EXPECT_TRUE(Holds(Req("neg", "Lt", {"0"}), node));
  EXPECT_TRUE(Holds(Req("cores", "Gt", {"010"}), node));  // decimal, not octal
}

TEST(RequirementHoldsTest, GtAndLtFailOnAnythingNotOneInteger) {
  Node node = LabelledNode({{"cores", "16"}, {"name", "big"}});
  EXPECT_FALSE(Holds(Req("name", "Gt", {"1"}), node));  // label not an integer
  EXPECT_FALSE(Holds(Req("name", "Lt", {"1"}), node));
  EXPECT_FALSE(Holds(Req("cores", "Gt", {"eight"}), node));  // value not an integer
  EXPECT_FALSE(Holds(Req("cores", "Gt", {"1.5"}), node));
  EXPECT_FALSE(Holds(Req("cores", "Gt", {"1", "2"}), node));  // exactly one value
  EXPECT_FALSE(Holds(Req("cores", "Lt", {}), node));
  EXPECT_FALSE(Holds(Req("absent", "Gt", {"1"}), node));  // absent label
  EXPECT_FALSE(Holds(Req("absent", "Lt", {"1"}), node));
}

TEST(RequirementHoldsTest, UnknownOperatorNeverHolds) {
  EXPECT_FALSE(Holds(Req("zone", "Matches", {"a"}), LabelledNode({{"zone", "a"}})));
}

TEST(MatchNodeStaticallyTest, AffinityTermsAreOredExpressionsAnded) {
  Node node = LabelledNode({{"zone", "a"}, {"gpu", "a100"}});
  // One term, both expressions hold.
  EXPECT_TRUE(MatchNodeStatically(AffinityTask({{Req("zone", "In", {"a"}), Req("gpu", "Exists")}}),
                                  Cpu("1"), node)
                  .matches);
  // One term, second expression fails: the term fails.
  StaticMatch m = MatchNodeStatically(
      AffinityTask({{Req("zone", "In", {"a"}), Req("gpu", "DoesNotExist")}}), Cpu("1"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.rule, MatchRule::kNodeAffinity);
  EXPECT_EQ(m.reason, "node affinity gpu DoesNotExist does not match");
  // Two terms, the second holds: the node matches.
  EXPECT_TRUE(MatchNodeStatically(
                  AffinityTask({{Req("zone", "In", {"b", "c"})}, {Req("gpu", "In", {"a100"})}}),
                  Cpu("1"), node)
                  .matches);
  // Two terms, neither holds: each term's first failing expression is named.
  m = MatchNodeStatically(AffinityTask({{Req("zone", "In", {"b", "c"})},
                                        {Req("gpu", "Exists"), Req("cores", "Gt", {"4"})}}),
                          Cpu("1"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.reason, "none of 2 node affinity terms match (zone In (b, c); cores Gt 4)");
}

TEST(MatchNodeStaticallyTest, AffinityWithoutTermsMatchesAndAnEmptyTermMatchesNothing) {
  Node node = LabelledNode({{"zone", "a"}});
  TaskSpec no_terms;
  no_terms.mutable_node_affinity();  // present but empty
  EXPECT_TRUE(MatchNodeStatically(no_terms, Cpu("1"), node).matches);
  // Kubernetes: an empty node selector term matches no objects.
  StaticMatch m = MatchNodeStatically(AffinityTask({{}}), Cpu("1"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.reason, "node affinity has an empty term, which matches no node");
  // ... but another term can still match.
  EXPECT_TRUE(
      MatchNodeStatically(AffinityTask({{}, {Req("zone", "In", {"a"})}}), Cpu("1"), node).matches);
}

TEST(MatchNodeStaticallyTest, AffinityReasonsNameOperatorAndValues) {
  Node node = LabelledNode({{"cores", "2"}});
  auto reason = [&](NodeSelectorRequirement r) {
    return MatchNodeStatically(AffinityTask({{r}}), Cpu("1"), node).reason;
  };
  EXPECT_EQ(reason(Req("zone", "In", {"a", "b"})), "node affinity zone In (a, b) does not match");
  EXPECT_EQ(reason(Req("cores", "NotIn", {"2"})), "node affinity cores NotIn (2) does not match");
  EXPECT_EQ(reason(Req("gpu", "Exists")), "node affinity gpu Exists does not match");
  EXPECT_EQ(reason(Req("cores", "DoesNotExist")),
            "node affinity cores DoesNotExist does not match");
  EXPECT_EQ(reason(Req("cores", "Gt", {"4"})), "node affinity cores Gt 4 does not match");
  EXPECT_EQ(reason(Req("cores", "Lt", {"1"})), "node affinity cores Lt 1 does not match");
}

TEST(MatchNodeStaticallyTest, NoScheduleAndNoExecuteTaintsMustBeTolerated) {
  Node node = LabelledNode({});
  node.taints.push_back(Taint{"dedicated", "ml", "NoSchedule"});
  StaticMatch m = MatchNodeStatically(TaskSpec(), Cpu("1"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.rule, MatchRule::kTaint);
  EXPECT_EQ(m.reason, "taint dedicated=ml:NoSchedule is not tolerated");

  node.taints = {Taint{"maintenance", "", "NoExecute"}};
  EXPECT_EQ(MatchNodeStatically(TaskSpec(), Cpu("1"), node).reason,
            "taint maintenance:NoExecute is not tolerated");
}

TEST(MatchNodeStaticallyTest, PreferNoScheduleNeverBlocks) {
  Node node = LabelledNode({});
  node.taints.push_back(Taint{"spot", "true", "PreferNoSchedule"});
  EXPECT_TRUE(MatchNodeStatically(TaskSpec(), Cpu("1"), node).matches);
}

TEST(MatchNodeStaticallyTest, FirstUntoleratedTaintIsNamed) {
  Node node = LabelledNode({});
  node.taints = {Taint{"a", "1", "NoSchedule"}, Taint{"b", "2", "NoSchedule"}};
  TaskSpec task;
  *task.add_tolerations() = Tol("a", "Equal", "1", "NoSchedule");
  EXPECT_EQ(MatchNodeStatically(task, Cpu("1"), node).reason,
            "taint b=2:NoSchedule is not tolerated");
  *task.add_tolerations() = Tol("b", "Exists", "", "");
  EXPECT_TRUE(MatchNodeStatically(task, Cpu("1"), node).matches);
}

TEST(ToleratesTest, EqualMatchesKeyAndValue) {
  Taint taint{"dedicated", "ml", "NoSchedule"};
  EXPECT_TRUE(Tolerates(Tol("dedicated", "Equal", "ml", "NoSchedule"), taint));
  EXPECT_TRUE(Tolerates(Tol("dedicated", "", "ml", "NoSchedule"), taint));  // "" is Equal
  EXPECT_FALSE(Tolerates(Tol("dedicated", "Equal", "web", "NoSchedule"), taint));
  EXPECT_FALSE(Tolerates(Tol("other", "Equal", "ml", "NoSchedule"), taint));
  EXPECT_FALSE(Tolerates(Tol("dedicated", "Equal", "", "NoSchedule"), taint));
  // Equal with an empty key is not a wildcard (validation rejects it anyway).
  EXPECT_FALSE(Tolerates(Tol("", "Equal", "ml", "NoSchedule"), taint));
  EXPECT_TRUE(Tolerates(Tol("maintenance", "Equal", "", "NoExecute"),
                        Taint{"maintenance", "", "NoExecute"}));
}

TEST(ToleratesTest, ExistsMatchesAnyValueAndEmptyKeyMatchesEverything) {
  Taint taint{"dedicated", "ml", "NoSchedule"};
  EXPECT_TRUE(Tolerates(Tol("dedicated", "Exists", "", "NoSchedule"), taint));
  EXPECT_FALSE(Tolerates(Tol("other", "Exists", "", "NoSchedule"), taint));
  EXPECT_TRUE(Tolerates(Tol("", "Exists", "", ""), taint));
  EXPECT_TRUE(Tolerates(Tol("", "Exists", "", ""), Taint{"x", "y", "NoExecute"}));
}

TEST(ToleratesTest, EffectMustMatchUnlessEmpty) {
  Taint taint{"dedicated", "ml", "NoExecute"};
  EXPECT_FALSE(Tolerates(Tol("dedicated", "Equal", "ml", "NoSchedule"), taint));
  EXPECT_TRUE(Tolerates(Tol("dedicated", "Equal", "ml", ""), taint));  // all effects
  EXPECT_FALSE(Tolerates(Tol("", "Exists", "", "NoSchedule"), taint));
}

TEST(ToleratesTest, UnknownOperatorToleratesNothing) {
  EXPECT_FALSE(Tolerates(Tol("k", "Like", "v", ""), Taint{"k", "v", "NoSchedule"}));
}

TEST(MatchNodeStaticallyTest, ToleratedTaintsMatchInTheNodeSelection) {
  Node node = LabelledNode({{"gpu", "a100"}});
  node.taints = {Taint{"nvidia.com/gpu", "present", "NoSchedule"},
                 Taint{"spot", "", "PreferNoSchedule"}};
  TaskSpec task;
  (*task.mutable_node_selector())["gpu"] = "a100";
  *task.add_tolerations() = Tol("nvidia.com/gpu", "Exists", "", "NoSchedule");
  EXPECT_TRUE(MatchNodeStatically(task, Cpu("1"), node).matches);
}

TEST(MatchNodeStaticallyTest, RequestsMustFitAllocatable) {
  Node node = MakeNode("node-1", Res({{"cpu", "2"}, {"memory", "32Gi"}}));
  EXPECT_TRUE(MatchNodeStatically(TaskSpec(), Res({{"cpu", "2"}, {"memory", "32Gi"}}), node)
                  .matches);  // exactly full is fine
  StaticMatch m = MatchNodeStatically(TaskSpec(), Cpu("4"), node);
  EXPECT_FALSE(m.matches);
  EXPECT_EQ(m.rule, MatchRule::kResources);
  EXPECT_EQ(m.reason, "needs 4 cpu, node allocatable is 2");
  EXPECT_EQ(MatchNodeStatically(TaskSpec(), Res({{"memory", "64Gi"}}), node).reason,
            "needs 64Gi memory, node allocatable is 32Gi");
  EXPECT_EQ(MatchNodeStatically(TaskSpec(), Cpu("2500m"), node).reason,
            "needs 2500m cpu, node allocatable is 2");
  // A resource the node does not have at all.
  EXPECT_EQ(MatchNodeStatically(TaskSpec(), Res({{"nvidia.com/gpu", "1"}}), node).reason,
            "needs 1 nvidia.com/gpu, node allocatable is 0");
  // Allocated does not matter statically.
  node.allocated = Cpu("2");
  EXPECT_TRUE(MatchNodeStatically(TaskSpec(), Cpu("2"), node).matches);
}

TEST(MatchNodeStaticallyTest, RulesAreCheckedInOrder) {
  Node node = LabelledNode({});
  node.taints = {Taint{"t", "v", "NoSchedule"}};
  TaskSpec task;
  (*task.mutable_node_selector())["gpu"] = "a100";
  // Selector, taint and resources all fail: the selector is named.
  EXPECT_EQ(MatchNodeStatically(task, Cpu("100"), node).rule, MatchRule::kNodeSelector);
  task.clear_node_selector();
  *task.mutable_node_affinity() = AffinityTask({{Req("gpu", "Exists")}}).node_affinity();
  EXPECT_EQ(MatchNodeStatically(task, Cpu("100"), node).rule, MatchRule::kNodeAffinity);
  task.clear_node_affinity();
  EXPECT_EQ(MatchNodeStatically(task, Cpu("100"), node).rule, MatchRule::kTaint);
  node.taints.clear();
  EXPECT_EQ(MatchNodeStatically(task, Cpu("100"), node).rule, MatchRule::kResources);
}

TEST(FitsNowTest, FitsWhatIsFree) {
  Node node = MakeNode("node-1", Res({{"cpu", "4"}, {"memory", "8Gi"}}));
  node.allocated = Res({{"cpu", "3"}, {"memory", "2Gi"}});
  EXPECT_TRUE(FitsNow(Cpu("1"), node));
  EXPECT_TRUE(FitsNow(Res({{"cpu", "1"}, {"memory", "6Gi"}}), node));
  EXPECT_FALSE(FitsNow(Cpu("1001m"), node));
  EXPECT_FALSE(FitsNow(Res({{"cpu", "500m"}, {"memory", "7Gi"}}), node));
  EXPECT_FALSE(FitsNow(Res({{"nvidia.com/gpu", "1"}}), node));
  EXPECT_TRUE(FitsNow(ResourceList(), node));
}

TEST(FitsNowTest, ZeroRequestsFitAnOvercommittedResource) {
  Node node = MakeNode("node-1", Res({{"cpu", "4"}, {"memory", "8Gi"}}));
  node.allocated = Res({{"cpu", "1"}, {"memory", "9Gi"}});  // allocatable shrank under its runs
  EXPECT_TRUE(FitsNow(Cpu("1"), node));
  EXPECT_TRUE(FitsNow(Res({{"cpu", "1"}, {"memory", "0"}}), node));
  EXPECT_FALSE(FitsNow(Res({{"cpu", "1"}, {"memory", "1"}}), node));
}

TEST(JobShapeTest, SameShapeIgnoresSelectorOrderAndNonSchedulingFields) {
  TaskSpec a;
  (*a.mutable_node_selector())["x"] = "1";
  (*a.mutable_node_selector())["y"] = "2";
  a.add_command("sleep");
  TaskSpec b;
  (*b.mutable_node_selector())["y"] = "2";
  (*b.mutable_node_selector())["x"] = "1";
  b.add_command("true");
  ResourceList r = Res({{"cpu", "1"}, {"memory", "1Gi"}});
  EXPECT_TRUE(SameJobShape(a, r, b, r));
  EXPECT_EQ(JobShapeHash(a, r), JobShapeHash(b, r));
  // Trailing zero entries do not change a resource list.
  ResourceList padded = r;
  padded.Set(ResourceNames::kGpu, Quantity());
  EXPECT_TRUE(SameJobShape(a, r, b, padded));
  EXPECT_EQ(JobShapeHash(a, r), JobShapeHash(b, padded));
}

TEST(JobShapeTest, DifferentRequestsSelectorTolerationsOrAffinityDiffer) {
  TaskSpec base;
  ResourceList r = Cpu("1");
  EXPECT_FALSE(SameJobShape(base, r, base, Cpu("2")));
  TaskSpec selector;
  (*selector.mutable_node_selector())["x"] = "1";
  EXPECT_FALSE(SameJobShape(base, r, selector, r));
  TaskSpec other_value;
  (*other_value.mutable_node_selector())["x"] = "2";
  EXPECT_FALSE(SameJobShape(selector, r, other_value, r));
  TaskSpec tolerating;
  *tolerating.add_tolerations() = Tol("k", "Exists", "", "");
  EXPECT_FALSE(SameJobShape(base, r, tolerating, r));
  TaskSpec affinity = AffinityTask({{Req("zone", "In", {"a"})}});
  TaskSpec affinity_b = AffinityTask({{Req("zone", "In", {"b"})}});
  EXPECT_FALSE(SameJobShape(affinity, r, affinity_b, r));
  EXPECT_TRUE(SameJobShape(affinity, r, AffinityTask({{Req("zone", "In", {"a"})}}), r));
}

}  // namespace
}  // namespace regatta::scheduler
