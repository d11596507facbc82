// Fair share written the Mesos way (sorter_tests.cpp): expected shares as comments beside the
// assertions. One round from empty, then a saturated pool over many rounds in which the oldest
// running jobs finish and each round refills the room they free.
#include <algorithm>
#include <cmath>
#include <deque>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/scheduler/round/round.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::AssignedTo;
using ::regatta::scheduler::testing::Cpu;
using ::regatta::scheduler::testing::MakeNode;
using ::regatta::scheduler::testing::Res;
using ::regatta::scheduler::testing::RoundBuilder;

const QueueShare& ShareOf(const RoundResult& r, const std::string& queue) {
  for (const QueueShare& s : r.shares) {
    if (s.queue == queue) return s;
  }
  ADD_FAILURE() << "no share for " << queue;
  static const QueueShare kNone;
  return kNone;
}

// A pool over many rounds. Each queue submits identical jobs; `backlog` of them in all (-1:
// always more waiting than can run).
class Simulation {
 public:
  struct QueueSpec {
    std::string name;
    double weight = 1.0;
    ResourceList job;
    int backlog = -1;
  };

  Simulation(std::vector<Node> nodes, std::vector<QueueSpec> queues)
      : nodes_(std::move(nodes)),
        specs_(std::move(queues)),
        allocated_(specs_.size()),
        pending_(specs_.size()),
        started_(specs_.size(), 0),
        created_(specs_.size(), 0) {}

  // Runs one round and starts what it assigns.
  RoundResult RunRound() {
    RoundInput input;
    input.nodes = &nodes_;
    std::vector<std::vector<const RoundJob*>> views(specs_.size());
    for (size_t q = 0; q < specs_.size(); ++q) {
      // Keep more jobs waiting than the pool could start in one round.
      while (pending_[q].size() < kLookahead &&
             (specs_[q].backlog < 0 || created_[q] < specs_[q].backlog)) {
        RoundJob& job = pending_[q].emplace_back();
        job.id = specs_[q].name + "-" + std::to_string(created_[q]++);
        job.requests = specs_[q].job;
        job.task = &task_;
      }
      for (const RoundJob& job : pending_[q]) views[q].push_back(&job);
      RoundQueue& rq = input.queues.emplace_back();
      rq.name = specs_[q].name;
      rq.weight = specs_[q].weight;
      rq.allocated = allocated_[q];
      rq.jobs = std::make_unique<VectorJobIterator>(&views[q]);
    }
    RoundResult result = ScheduleRound(std::move(input));
    absl::flat_hash_set<std::string> started_ids;
    for (const Assignment& a : result.assignments) {
      const size_t q = QueueIndex(a.queue);
      nodes_[a.node_index].allocated.Add(specs_[q].job);
      allocated_[q].Add(specs_[q].job);
      running_.push_back(Running{q, a.node_index});
      ++started_[q];
      started_ids.insert(a.job_id);
    }
    for (auto& pending : pending_) {
      std::erase_if(pending, [&](const RoundJob& j) { return started_ids.contains(j.id); });
    }
    return result;
  }

  // The `n` oldest running jobs finish.
  void Finish(int n) {
    for (int i = 0; i < n && !running_.empty(); ++i) {
      const Running r = running_.front();
      running_.pop_front();
      nodes_[r.node].allocated.Subtract(specs_[r.queue].job);
      allocated_[r.queue].Subtract(specs_[r.queue].job);
    }
  }

  int started(const std::string& queue) const { return started_[QueueIndex(queue)]; }
  int running(const std::string& queue) const {
    const size_t q = QueueIndex(queue);
    return static_cast<int>(std::count_if(running_.begin(), running_.end(),
                                          [&](const Running& r) { return r.queue == q; }));
  }

 private:
  static constexpr size_t kLookahead = 64;
  struct Running {
    size_t queue;
    int node;
  };
  size_t QueueIndex(const std::string& name) const {
    for (size_t q = 0; q < specs_.size(); ++q) {
      if (specs_[q].name == name) return q;
    }
    ADD_FAILURE() << "unknown queue " << name;
    return 0;
  }

  std::vector<Node> nodes_;
  std::vector<QueueSpec> specs_;
  std::vector<ResourceList> allocated_;
  std::vector<std::deque<RoundJob>> pending_;
  std::vector<int> started_;
  std::vector<int> created_;
  std::deque<Running> running_;
  regatta::v1::TaskSpec task_;
};

// |a - b| <= 5% of their mean.
void ExpectWithinFivePercent(double a, double b) {
  EXPECT_LE(std::abs(a - b), 0.05 * (a + b) / 2) << a << " vs " << b;
}

// (a) Equal weights share one 8-cpu node 4:4.
TEST(FairShareTest, EqualWeightsSplitANodeEvenly) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("8")));
  b.AddQueue("a").AddQueue("b");
  b.AddJobs("a", 200, Cpu("1"));
  b.AddJobs("b", 200, Cpu("1"));
  RoundResult r = b.Run();
  EXPECT_EQ(AssignedTo(r, "a"), 4);  // a: 4/8 = 0.5
  EXPECT_EQ(AssignedTo(r, "b"), 4);  // b: 4/8 = 0.5
  EXPECT_DOUBLE_EQ(ShareOf(r, "a").share_after, 0.5);
  EXPECT_DOUBLE_EQ(ShareOf(r, "b").share_after, 0.5);
  EXPECT_EQ(r.unschedulable.size(), 392u);  // every other job was looked at, none blocked
  EXPECT_FALSE(r.limited);
}

TEST(FairShareTest, EqualWeightsStartEqualNumbersOverManyRounds) {
  Simulation sim({MakeNode("node-0", Cpu("8"))},
                 {{.name = "a", .job = Cpu("1")}, {.name = "b", .job = Cpu("1")}});
  sim.RunRound();
  for (int round = 0; round < 500; ++round) {
    sim.Finish(3);  // the 3 oldest running jobs finish
    RoundResult r = sim.RunRound();
    ASSERT_EQ(r.assignments.size(), 3u) << "round " << round;  // the node stays saturated
  }
  // 8 + 500 x 3 = 1508 started: a 754 (50%), b 754 (50%).
  EXPECT_EQ(sim.started("a") + sim.started("b"), 1508);
  ExpectWithinFivePercent(sim.started("a"), sim.started("b"));
  EXPECT_EQ(sim.running("a"), 4);  // a: 4/8
  EXPECT_EQ(sim.running("b"), 4);  // b: 4/8
}

// (b) Priority factors 3 and 1 -> weights 1/3 and 1 -> shares 1:3.
TEST(FairShareTest, WeightsOneToThreeSplitOneToThree) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("8")));
  b.AddQueue("a", 1.0 / 3).AddQueue("b", 1.0);
  b.AddJobs("a", 200, Cpu("1"));
  b.AddJobs("b", 200, Cpu("1"));
  RoundResult r = b.Run();
  EXPECT_EQ(AssignedTo(r, "a"), 2);  // a: 2/8 = 0.25 dominant, cost 0.25 / (1/3) = 0.75
  EXPECT_EQ(AssignedTo(r, "b"), 6);  // b: 6/8 = 0.75 dominant, cost 0.75 / 1 = 0.75
  EXPECT_NEAR(ShareOf(r, "a").share_after, 0.75, 1e-12);
  EXPECT_NEAR(ShareOf(r, "b").share_after, 0.75, 1e-12);

  Simulation sim({MakeNode("node-0", Cpu("8"))}, {{.name = "a", .weight = 1.0 / 3, .job = Cpu("1")},
                                                  {.name = "b", .weight = 1.0, .job = Cpu("1")}});
  sim.RunRound();
  for (int round = 0; round < 500; ++round) {
    sim.Finish(2);
    sim.RunRound();
  }
  // 8 + 500 x 2 = 1008 started: a 252 (25%), b 756 (75%).
  EXPECT_EQ(sim.started("a") + sim.started("b"), 1008);
  ExpectWithinFivePercent(3.0 * sim.started("a"), sim.started("b"));
  EXPECT_EQ(sim.running("a"), 2);  // a: 2/8, cost 0.75
  EXPECT_EQ(sim.running("b"), 6);  // b: 6/8, cost 0.75
}

// (c) Multi-resource DRF, the example of Ghodsi et al. (NSDI 2011): 9 cpu, 18Gi; queue "mem"
// runs <1 cpu, 4Gi> tasks (memory-dominant, 2/9 per task), "cpu" runs <3 cpu, 1Gi> tasks
// (cpu-dominant, 1/3 per task). DRF gives mem 3 tasks and cpu 2: both dominant shares are 2/3.
TEST(FairShareTest, MultiResourceQueuesGetEqualDominantShares) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Res({{"cpu", "9"}, {"memory", "18Gi"}})));
  b.AddQueue("mem").AddQueue("cpu");
  b.AddJobs("mem", 50, Res({{"cpu", "1"}, {"memory", "4Gi"}}));
  b.AddJobs("cpu", 50, Res({{"cpu", "3"}, {"memory", "1Gi"}}));
  RoundResult r = b.Run();
  EXPECT_EQ(AssignedTo(r, "mem"), 3);  // mem: <3 cpu, 12Gi>, dominant memory 12/18 = 2/3
  EXPECT_EQ(AssignedTo(r, "cpu"), 2);  // cpu: <6 cpu, 2Gi>, dominant cpu 6/9 = 2/3
  EXPECT_NEAR(ShareOf(r, "mem").share_after, 2.0 / 3, 1e-12);
  EXPECT_NEAR(ShareOf(r, "cpu").share_after, 2.0 / 3, 1e-12);

  // Ten times bigger, many rounds: the shares stay equal while jobs come and go.
  Simulation sim({MakeNode("node-0", Res({{"cpu", "90"}, {"memory", "180Gi"}}))},
                 {{.name = "mem", .job = Res({{"cpu", "1"}, {"memory", "4Gi"}})},
                  {.name = "cpu", .job = Res({{"cpu", "3"}, {"memory", "1Gi"}})}});
  sim.RunRound();
  EXPECT_EQ(sim.running("mem"), 30);  // mem: 120Gi / 180Gi = 2/3
  EXPECT_EQ(sim.running("cpu"), 20);  // cpu: 60 / 90 cpu = 2/3
  for (int round = 0; round < 300; ++round) {
    sim.Finish(5);
    sim.RunRound();
    // Dominant shares differ by at most one task's share (2/9 or 1/3 of the tenfold pool).
    const double mem_share = sim.running("mem") * 4.0 / 180;
    const double cpu_share = sim.running("cpu") * 3.0 / 90;
    EXPECT_LE(std::abs(mem_share - cpu_share), 1.0 / 30 + 1e-9) << "round " << round;
  }
  // Started in proportion to the tasks per equal share: 3 mem tasks per 2 cpu tasks.
  ExpectWithinFivePercent(2.0 * sim.started("mem"), 3.0 * sim.started("cpu"));
}

// (d) Only active queues count: a queue with little demand takes what it needs and leaves the
// rest to the others; a queue without jobs reserves nothing.
TEST(FairShareTest, UnusedShareGoesToTheQueuesThatWantIt) {
  RoundBuilder b;
  b.AddNode(MakeNode("node-0", Cpu("8")));
  b.AddQueue("small").AddQueue("big").AddQueue("idle");
  b.AddJobs("small", 2, Cpu("1"));
  b.AddJobs("big", 100, Cpu("1"));
  RoundResult r = b.Run();
  EXPECT_EQ(AssignedTo(r, "small"), 2);  // small: 2/8 = 0.25, all it asked for
  EXPECT_EQ(AssignedTo(r, "big"), 6);    // big: 6/8 = 0.75, not held back to a third or a half
  EXPECT_EQ(AssignedTo(r, "idle"), 0);   // idle: 0, reserves nothing
  EXPECT_DOUBLE_EQ(ShareOf(r, "big").share_after, 0.75);

  // Over many rounds: "small" has 40 jobs in all; while it has work it gets half the node, then
  // "big" gets all of it.
  Simulation sim({MakeNode("node-0", Cpu("8"))}, {{.name = "small", .job = Cpu("1"), .backlog = 40},
                                                  {.name = "big", .job = Cpu("1")}});
  sim.RunRound();
  EXPECT_EQ(sim.running("small"), 4);  // small: 4/8 while both are active
  for (int round = 0; round < 200; ++round) {
    sim.Finish(2);
    sim.RunRound();
  }
  EXPECT_EQ(sim.started("small"), 40);  // all of it ran
  EXPECT_EQ(sim.started("small") + sim.started("big"), 408);
  EXPECT_EQ(sim.running("small"), 0);
  EXPECT_EQ(sim.running("big"), 8);  // big: 8/8 once small is done
}

}  // namespace
}  // namespace regatta::scheduler
