#include "src/scheduler/round/pool_round.h"

#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/fairness/fair_share.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::Cpu;
using ::regatta::scheduler::testing::MakeNode;
using ::regatta::scheduler::testing::Res;
using ::regatta::v1::TaskSpec;
using ::testing::DoubleNear;
using ::testing::HasSubstr;

constexpr int kLow = 0;
constexpr int kHigh = 1;
constexpr int kMid = 2;
constexpr int kSystem = 3;

class ListIterator : public QueuedJobIterator {
 public:
  explicit ListIterator(std::vector<const QueuedJob*> jobs) : jobs_(std::move(jobs)) {}
  const QueuedJob* Next() override { return next_ < jobs_.size() ? jobs_[next_++] : nullptr; }

 private:
  std::vector<const QueuedJob*> jobs_;
  size_t next_ = 0;
};

// Owns everything one SchedulePool call points at; Build() may be called repeatedly.
class Pool {
 public:
  Pool() {
    config.priority_classes = {
        PriorityClass{.name = "low", .priority = 100},
        PriorityClass{.name = "high", .priority = 1000},
        PriorityClass{.name = "mid", .priority = 500},
        PriorityClass{.name = "system", .priority = 2000, .preemptible = false},
    };
  }

  int AddNode(const std::string& id, ResourceList allocatable, std::string executor = "exec-1") {
    nodes_.push_back(MakeNode(id, std::move(allocatable), std::move(executor)));
    return static_cast<int>(nodes_.size()) - 1;
  }
  Node& node(int i) { return nodes_[i]; }
  // `count` nodes "n<first>".."n<first+count-1>" of `allocatable`.
  void AddNodes(int count, const ResourceList& allocatable) {
    for (int i = 0; i < count; ++i) AddNode("n" + std::to_string(nodes_.size()), allocatable);
  }

  void AddQueue(const std::string& name, double weight = 1.0, bool cordoned = false) {
    queues_.push_back(QueueDef{name, weight, cordoned, {}});
  }
  // The queue's own limit for a class (replaces the class's max_fraction_per_queue).
  void LimitQueue(const std::string& name, int cls, absl::flat_hash_map<int, double> limits) {
    for (QueueDef& q : queues_) {
      if (q.name == name) q.class_limits[cls] = std::move(limits);
    }
  }

  const JobTemplate* Template(ResourceList requests, int cls = kLow, TaskSpec task = TaskSpec(),
                              uint32_t cardinality = 1, std::string uniformity = "") {
    tasks_.push_back(std::move(task));
    JobTemplate& t = templates_.emplace_back();
    t.requests = std::move(requests);
    t.task = &tasks_.back();
    t.priority_class = cls;
    t.gang_cardinality = cardinality;
    t.gang_node_uniformity_label = std::move(uniformity);
    return &t;
  }

  QueuedJob& Queue(const std::string& queue, const std::string& id, const JobTemplate* tmpl,
                   const std::string& gang = "") {
    QueuedJob& job = queued_.emplace_back();
    job.id = Keep(id);
    job.tmpl = tmpl;
    job.gang_id = Keep(gang);
    for (QueueDef& q : queues_) {
      if (q.name == queue) q.jobs.push_back(&job);
    }
    return job;
  }
  // `count` jobs "<queue>-<i>".
  void QueueMany(const std::string& queue, int count, const JobTemplate* tmpl) {
    for (int i = 0; i < count; ++i) Queue(queue, queue + "-" + std::to_string(i), tmpl);
  }

  RunningJob& Run(const std::string& queue, const std::string& id, const JobTemplate* tmpl,
                  int node, int leased_seconds, const std::string& gang = "") {
    RunningJob& job = running_.emplace_back();
    job.id = Keep(id);
    job.queue = Keep(queue);
    job.tmpl = tmpl;
    job.gang_id = Keep(gang);
    job.node_index = node;
    job.leased_time = absl::FromUnixSeconds(leased_seconds);
    return job;
  }

  PoolRoundInput Build() {
    PoolRoundInput input;
    input.pool = "default";
    input.nodes = &nodes_;
    input.running = &running_vector_;
    running_vector_.assign(running_.begin(), running_.end());
    for (const QueueDef& def : queues_) {
      QueueInput& q = input.queues.emplace_back();
      q.name = def.name;
      q.weight = def.weight;
      q.cordoned = def.cordoned;
      q.max_fraction_by_class = def.class_limits;
      for (const QueuedJob* job : def.jobs) q.queued_demand.Add(job->tmpl->requests);
      q.jobs = std::make_unique<ListIterator>(def.jobs);
    }
    input.config = config;
    return input;
  }
  PoolRoundResult Schedule() { return SchedulePool(Build()); }

  PoolRoundConfig config;

 private:
  struct QueueDef {
    std::string name;
    double weight;
    bool cordoned;
    std::vector<const QueuedJob*> jobs;
    absl::flat_hash_map<int, absl::flat_hash_map<int, double>> class_limits = {};
  };
  absl::string_view Keep(const std::string& s) { return strings_.emplace_back(s); }

  std::vector<Node> nodes_;
  std::vector<QueueDef> queues_;
  std::deque<TaskSpec> tasks_;
  std::deque<JobTemplate> templates_;
  std::deque<QueuedJob> queued_;
  std::deque<RunningJob> running_;
  std::vector<RunningJob> running_vector_;
  std::deque<std::string> strings_;
};

int LeasedTo(const PoolRoundResult& r, const std::string& queue) {
  int n = 0;
  for (const Lease& l : r.leases) n += l.queue == queue ? 1 : 0;
  return n;
}

const QueueReport& ReportOf(const PoolRoundResult& r, const std::string& queue) {
  for (const QueueReport& q : r.queues) {
    if (q.queue == queue) return q;
  }
  ADD_FAILURE() << "no report for " << queue;
  return r.queues.front();
}

const Unschedulable* UnschedulableOf(const PoolRoundResult& r, const std::string& job) {
  for (const Unschedulable& u : r.unschedulable) {
    if (u.job_id == job) return &u;
  }
  return nullptr;
}

std::vector<std::string> PreemptedIds(const PoolRoundResult& r) {
  std::vector<std::string> ids;
  for (const Preemption& p : r.preemptions) ids.push_back(p.job_id);
  return ids;
}

// ---- fair share -----------------------------------------------------------------------------

TEST(AdjustedFairSharesTest, WaterFillingGivesUnusedShareAwayByWeight) {
  // Weights 1, 1, 2 share 1.0 as 0.25, 0.25, 0.5. The first wants 0.1: capped. The 0.9 left
  // splits 1:2 between the others as 0.3 and 0.6; the second wants 0.2 < 0.3: capped. The 0.7
  // left all goes to the third (it wants 0.9).
  std::vector<double> shares = AdjustedFairShares({1, 1, 2}, {0.1, 0.2, 0.9});
  EXPECT_THAT(shares, ::testing::ElementsAre(DoubleNear(0.1, 1e-9), DoubleNear(0.2, 1e-9),
                                             DoubleNear(0.7, 1e-9)));
  // Nobody capped: plain weighted shares. Inactive (weight 0): 0.
  shares = AdjustedFairShares({1, 3, 0}, {1.0, 1.0, 0.5});
  EXPECT_THAT(shares, ::testing::ElementsAre(DoubleNear(0.25, 1e-9), DoubleNear(0.75, 1e-9),
                                             DoubleNear(0, 1e-9)));
}

TEST(SchedulePoolTest, SaturatedPoolSplitsOneToOneAndOneToThree) {
  for (double weight_b : {1.0, 3.0}) {
    Pool pool;
    pool.AddNodes(10, Cpu("4"));  // 40 cpu
    pool.AddQueue("a", 1.0);
    pool.AddQueue("b", weight_b);
    const JobTemplate* one = pool.Template(Cpu("1"));
    pool.QueueMany("a", 100, one);
    pool.QueueMany("b", 100, one);
    PoolRoundResult r = pool.Schedule();
    const int expect_a = weight_b == 1.0 ? 20 : 10;
    EXPECT_EQ(LeasedTo(r, "a"), expect_a) << weight_b;
    EXPECT_EQ(LeasedTo(r, "b"), 40 - expect_a) << weight_b;
    EXPECT_THAT(ReportOf(r, "b").fair_share, DoubleNear(weight_b / (1 + weight_b), 1e-9));
    EXPECT_EQ(ReportOf(r, "a").stop_reason, "no more queued jobs");
    // Every other job was looked at and found no room.
    EXPECT_EQ(r.unschedulable.size(), 160u);
    EXPECT_EQ(r.unschedulable[0].code, UnschedulableCode::kNoRoom);
    EXPECT_THAT(r.unschedulable[0].reason,
                HasSubstr("no node has room: needs 1 cpu, most free is 0"));
  }
}

TEST(SchedulePoolTest, AdjustedFairShareInTheReport) {
  Pool pool;
  pool.AddNodes(10, Cpu("10"));  // 100 cpu
  pool.AddQueue("a");
  pool.AddQueue("b");
  pool.AddQueue("c", 2.0);
  pool.AddQueue("idle");
  // Demands: a 10 cpu = 0.1, b 60 = 0.6, c 60 = 0.6. Fair shares 0.25, 0.25, 0.5 (idle is
  // inactive). a is capped at 0.1; 0.9 splits 1:2 into 0.3 (b) and 0.6 (c, exactly its demand).
  pool.QueueMany("a", 10, pool.Template(Cpu("1")));
  pool.QueueMany("b", 6, pool.Template(Cpu("10")));
  pool.QueueMany("c", 6, pool.Template(Cpu("10")));
  PoolRoundResult r = pool.Schedule();
  EXPECT_THAT(ReportOf(r, "a").fair_share, DoubleNear(0.25, 1e-9));
  EXPECT_THAT(ReportOf(r, "a").adjusted_fair_share, DoubleNear(0.1, 1e-9));
  EXPECT_THAT(ReportOf(r, "b").adjusted_fair_share, DoubleNear(0.3, 1e-9));
  EXPECT_THAT(ReportOf(r, "c").adjusted_fair_share, DoubleNear(0.6, 1e-9));
  EXPECT_THAT(ReportOf(r, "c").demand_share, DoubleNear(0.6, 1e-9));
  EXPECT_EQ(ReportOf(r, "idle").fair_share, 0);
}

TEST(SchedulePoolTest, DominantResourceFairnessBetweenCpuHeavyAndMemoryHeavyQueues) {
  Pool pool;
  pool.AddNodes(10, Res({{"cpu", "10"}, {"memory", "10Gi"}}));
  pool.AddQueue("cpu-heavy");
  pool.AddQueue("mem-heavy");
  pool.QueueMany("cpu-heavy", 200, pool.Template(Res({{"cpu", "1"}, {"memory", "100Mi"}})));
  pool.QueueMany("mem-heavy", 200, pool.Template(Res({{"cpu", "100m"}, {"memory", "1Gi"}})));
  PoolRoundResult r = pool.Schedule();
  // Equal dominant shares, not equal job counts of one resource: ~50 jobs each, i.e. ~50 of 100
  // cpu for cpu-heavy and ~50 of 100Gi for mem-heavy (a per-cpu split would starve mem-heavy
  // of memory it could use).
  const QueueReport& cpu = ReportOf(r, "cpu-heavy");
  const QueueReport& mem = ReportOf(r, "mem-heavy");
  EXPECT_NEAR(cpu.share_after, mem.share_after, 0.02);
  EXPECT_GE(LeasedTo(r, "cpu-heavy"), 45);
  EXPECT_GE(LeasedTo(r, "mem-heavy"), 45);
}

// ---- urgency preemption ---------------------------------------------------------------------

TEST(SchedulePoolTest, UrgencyPreemptsLowestClassThenYoungestAndOnlyAsManyAsNeeded) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  const int n0 = pool.AddNode("n0", Cpu("6"));
  pool.AddQueue("batch");
  pool.AddQueue("ml");
  const JobTemplate* low1 = pool.Template(Cpu("1"), kLow);
  const JobTemplate* mid1 = pool.Template(Cpu("1"), kMid);
  const JobTemplate* sys1 = pool.Template(Cpu("1"), kSystem);
  pool.Run("batch", "low-old", low1, n0, 100);
  pool.Run("batch", "low-young", low1, n0, 300);
  pool.Run("batch", "low-mid-age", low1, n0, 200);
  pool.Run("batch", "mid-young", mid1, n0, 400);
  pool.Run("batch", "sys", sys1, n0, 500);
  pool.Run("batch", "sys2", sys1, n0, 500);
  pool.Queue("ml", "urgent", pool.Template(Cpu("2"), kHigh));
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 1u);
  EXPECT_EQ(r.leases[0].job_id, "urgent");
  EXPECT_TRUE(r.leases[0].preempted_others);
  // Low class first (the mid job stays though it is the youngest), youngest low first, two.
  EXPECT_THAT(PreemptedIds(r), ::testing::ElementsAre("low-young", "low-mid-age"));
  const Preemption& p = r.preemptions[0];
  EXPECT_EQ(p.kind, PreemptionKind::kUrgency);
  EXPECT_EQ(p.caused_by_job, "urgent");
  EXPECT_EQ(p.caused_by_queue, "ml");
  EXPECT_EQ(p.reason,
            "urgency: job urgent of queue ml (class high, priority 1000) needed 2 cpu on n0; this "
            "job's class low has 100");
  EXPECT_EQ(ReportOf(r, "batch").preempted, 2);
}

TEST(SchedulePoolTest, AQueuesOwnClassLimitReplacesTheClassLimit) {
  // One queue alone on 10 cpu with 10 one-cpu jobs of class low (limit 50 % per queue): the
  // class limit stops it at 5; the queue's own 80 % limit for the class lets it reach 8.
  for (const bool own_limit : {false, true}) {
    Pool pool;
    pool.AddNode("n0", Cpu("10"));
    pool.config.priority_classes[kLow].max_fraction_per_queue = {{ResourceNames::kCpu, 0.5}};
    pool.AddQueue("q");
    if (own_limit) pool.LimitQueue("q", kLow, {{ResourceNames::kCpu, 0.8}});
    pool.QueueMany("q", 10, pool.Template(Cpu("1"), kLow));
    PoolRoundResult r = pool.Schedule();
    const int expected = own_limit ? 8 : 5;
    EXPECT_EQ(ReportOf(r, "q").leased, expected) << own_limit;
    const Unschedulable* u = UnschedulableOf(r, "q-" + std::to_string(expected));
    ASSERT_NE(u, nullptr) << own_limit;
    EXPECT_EQ(u->code, UnschedulableCode::kQueueFractionLimit);
  }
}

TEST(SchedulePoolTest, JobsAlreadyLeavingHoldTheirRoomAndAreNeverVictimsAgain) {
  Pool pool;
  const int n0 = pool.AddNode("n0", Cpu("2"));
  pool.AddQueue("over");
  pool.AddQueue("under");
  const JobTemplate* low1 = pool.Template(Cpu("1"), kLow);
  // Queue "over" holds the whole node with preemptible jobs that a previous cycle already
  // preempted (their runs have not ended yet).
  pool.Run("over", "leaving-1", low1, n0, 1).leaving = true;
  pool.Run("over", "leaving-2", low1, n0, 2).leaving = true;
  pool.Queue("under", "urgent", pool.Template(Cpu("1"), kHigh));
  pool.Queue("under", "fair", low1);
  PoolRoundResult r = pool.Schedule();
  // Neither fair share nor urgency preempts them twice, and their room is not given away.
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_TRUE(r.leases.empty());
  ASSERT_NE(UnschedulableOf(r, "urgent"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "urgent")->code, UnschedulableCode::kNoRoom);
}

TEST(SchedulePoolTest, UrgencyNeverPreemptsNonPreemptibleOrEqualClasses) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  const int n0 = pool.AddNode("n0", Cpu("2"));
  pool.AddQueue("a");
  pool.AddQueue("b");
  pool.Run("a", "sys", pool.Template(Cpu("1"), kSystem), n0, 1);
  pool.Run("a", "high", pool.Template(Cpu("1"), kHigh), n0, 1);
  pool.Queue("b", "want", pool.Template(Cpu("1"), kHigh));
  PoolRoundResult r = pool.Schedule();
  EXPECT_TRUE(r.leases.empty());
  EXPECT_TRUE(r.preemptions.empty());
  ASSERT_NE(UnschedulableOf(r, "want"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "want")->code, UnschedulableCode::kNoRoom);
}

TEST(SchedulePoolTest, NewlyPlacedVictimIsUnplacedNotPreempted) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  pool.AddNode("n0", Cpu("4"));
  pool.AddQueue("a");
  pool.AddQueue("b");
  pool.Queue("a", "low", pool.Template(Cpu("4"), kLow));    // served first (name order)
  pool.Queue("b", "high", pool.Template(Cpu("4"), kHigh));  // then needs the same room
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 1u);
  EXPECT_EQ(r.leases[0].job_id, "high");
  EXPECT_TRUE(r.preemptions.empty());
  ASSERT_NE(UnschedulableOf(r, "low"), nullptr);
  EXPECT_THAT(UnschedulableOf(r, "low")->reason, HasSubstr("placed, then displaced by urgency"));
  EXPECT_EQ(ReportOf(r, "a").leased, 0);
}

// ---- fair-share preemption ------------------------------------------------------------------

// Nodes of 2 cpu; queue a runs 1-cpu jobs two per node (oldest on n0), queue b queues 1-cpu jobs.
Pool TwoQueues(int nodes, int a_running, int b_queued) {
  Pool pool;
  pool.AddNodes(nodes, Cpu("2"));
  pool.AddQueue("a");
  pool.AddQueue("b");
  const JobTemplate* one = pool.Template(Cpu("1"));
  for (int i = 0; i < a_running; ++i) {
    pool.Run("a", "a-run-" + std::to_string(i), one, i / 2, 100 + i);
  }
  pool.QueueMany("b", b_queued, one);
  return pool;
}

TEST(SchedulePoolTest, OverShareQueueLosesExactlyEnoughToTheUnderShareQueue) {
  Pool pool = TwoQueues(/*nodes=*/4, /*a_running=*/8, /*b_queued=*/4);  // 8 cpu
  PoolRoundResult r = pool.Schedule();
  // a holds 1.0, its adjusted fair share is 0.5 (b wants 0.5): a loses exactly 4 jobs to b.
  EXPECT_EQ(ReportOf(r, "a").evicted, 8);
  EXPECT_THAT(ReportOf(r, "a").adjusted_fair_share, DoubleNear(0.5, 1e-9));
  EXPECT_EQ(LeasedTo(r, "b"), 4);
  EXPECT_EQ(LeasedTo(r, "a"), 0);  // placed again: no new lease
  ASSERT_EQ(r.preemptions.size(), 4u);
  for (const Preemption& p : r.preemptions) {
    EXPECT_EQ(p.queue, "a");
    EXPECT_EQ(p.kind, PreemptionKind::kFairShare);
    EXPECT_EQ(p.caused_by_queue, "b");
    EXPECT_THAT(p.reason, HasSubstr("fair share: queue a holds 1.00 of the pool, above 1.00 x its "
                                    "adjusted fair share 0.50; job b-"));
  }
  EXPECT_THAT(ReportOf(r, "a").share_after, DoubleNear(0.5, 1e-9));
  EXPECT_THAT(ReportOf(r, "b").share_after, DoubleNear(0.5, 1e-9));
}

TEST(SchedulePoolTest, ProtectedQueueKeepsItsJobs) {
  Pool pool = TwoQueues(/*nodes=*/4, /*a_running=*/8, /*b_queued=*/4);
  pool.config.protected_fraction_of_fair_share =
      2.0;  // a at 1.0 <= 2 x 0.5  // a at 1.0 <= 2 x 0.5
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(ReportOf(r, "a").evicted, 0);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(LeasedTo(r, "b"), 0);
}

TEST(SchedulePoolTest, CordonedQueueKeepsItsRunningJobs) {
  Pool pool = TwoQueues(/*nodes=*/4, /*a_running=*/8, /*b_queued=*/4);
  PoolRoundInput input = pool.Build();
  input.queues[0].cordoned = true;  // a: above its fair share, but cordoned
  PoolRoundResult r = SchedulePool(std::move(input));
  EXPECT_EQ(ReportOf(r, "a").evicted, 0);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(LeasedTo(r, "b"), 0);
}

TEST(SchedulePoolTest, QueueWithinItsShareIsNotEvicted) {
  Pool pool = TwoQueues(/*nodes=*/4, /*a_running=*/4, /*b_queued=*/8);
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(ReportOf(r, "a").evicted, 0);
  EXPECT_TRUE(r.preemptions.empty());
  EXPECT_EQ(LeasedTo(r, "b"), 4);
}

TEST(SchedulePoolTest, NewJobsUseFreeRoomFirstAndEvictedJobsStayOnTheirNode) {
  // n4 is free. a holds 0.8 (its demand), b wants 0.5: adjusted fair shares 0.5 each.
  Pool pool = TwoQueues(/*nodes=*/5, /*a_running=*/8, /*b_queued=*/5);
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(LeasedTo(r, "b"), 5);
  int on_free_node = 0;
  for (const Lease& l : r.leases) on_free_node += l.node_index == 4 ? 1 : 0;
  EXPECT_EQ(on_free_node, 2);
  // 3 of a's jobs gave way; the 5 others were placed again on their own nodes, silently.
  EXPECT_EQ(r.preemptions.size(), 3u);
  EXPECT_THAT(ReportOf(r, "a").share_after, DoubleNear(0.5, 1e-9));
}

TEST(SchedulePoolTest, EvictedJobKeepsRunningWhenNobodyTookItsRoom) {
  Pool pool = TwoQueues(/*nodes=*/4, /*a_running=*/8, /*b_queued=*/4);
  pool.config.max_new_jobs = 1;
  PoolRoundResult r = pool.Schedule();
  EXPECT_TRUE(r.limited);
  EXPECT_EQ(LeasedTo(r, "b"), 1);
  // Only the job whose room b's one job took is preempted.
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].caused_by_job, r.leases[0].job_id);
  EXPECT_EQ(r.preemptions[0].node_index, r.leases[0].node_index);
}

// ---- gangs ----------------------------------------------------------------------------------

TEST(SchedulePoolTest, GangIsAllOrNothingAndLeavesNoTrace) {
  Pool pool;
  pool.AddNodes(2, Cpu("2"));
  pool.AddQueue("a");
  const JobTemplate* big = pool.Template(Cpu("2"), kLow, TaskSpec(), 3);
  pool.Queue("a", "g-0", big, "g");
  pool.Queue("a", "single", pool.Template(Cpu("2")));
  pool.Queue("a", "g-1", big, "g");
  pool.Queue("a", "g-2", big, "g");
  PoolRoundResult r = pool.Schedule();
  for (const std::string id : {"g-0", "g-1", "g-2"}) {
    ASSERT_NE(UnschedulableOf(r, id), nullptr) << id;
    EXPECT_EQ(UnschedulableOf(r, id)->code, UnschedulableCode::kGangDoesNotFit);
    EXPECT_EQ(UnschedulableOf(r, id)->reason, "gang g (3 members) does not fit together");
  }
  // The gang's partial placement was rolled back: the single job still finds a whole node.
  ASSERT_EQ(r.leases.size(), 1u);
  EXPECT_EQ(r.leases[0].job_id, "single");
}

TEST(SchedulePoolTest, GangPlacedWholeAndIncompleteGangReported) {
  Pool pool;
  pool.AddNodes(4, Cpu("2"));
  pool.AddQueue("a");
  const JobTemplate* pair = pool.Template(Cpu("2"), kLow, TaskSpec(), 2);
  const JobTemplate* trio = pool.Template(Cpu("1"), kLow, TaskSpec(), 3);
  pool.Queue("a", "p-0", pair, "p");
  pool.Queue("a", "p-1", pair, "p");
  pool.Queue("a", "t-0", trio, "t");
  pool.Queue("a", "t-1", trio, "t");
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(r.leases.size(), 2u);
  ASSERT_NE(UnschedulableOf(r, "t-1"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "t-1")->code, UnschedulableCode::kGangIncomplete);
  EXPECT_EQ(UnschedulableOf(r, "t-1")->reason, "gang t incomplete: 2 of 3 members queued");
  EXPECT_EQ(r.stats.gangs_considered, 1);
}

TEST(SchedulePoolTest, GangWithUniformityLabelGoesToNodesOfOneValue) {
  Pool pool;
  for (int i = 0; i < 5; ++i) {
    int n = pool.AddNode("n" + std::to_string(i), Cpu("2"));
    pool.node(n).labels["zone"] = i < 2 ? "a" : "b";
  }
  pool.AddQueue("q");
  const JobTemplate* member = pool.Template(Cpu("2"), kLow, TaskSpec(), 3, "zone");
  for (int i = 0; i < 3; ++i) pool.Queue("q", "m" + std::to_string(i), member, "g");
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 3u);
  for (const Lease& l : r.leases) EXPECT_GE(l.node_index, 2) << l.job_id;  // zone b
}

TEST(SchedulePoolTest, GangIsPreemptedAsAUnit) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  pool.AddNodes(2, Cpu("2"));
  pool.AddQueue("a");
  pool.AddQueue("b");
  const JobTemplate* member = pool.Template(Cpu("2"), kLow, TaskSpec(), 2);
  pool.Run("a", "g-0", member, 0, 100, "g");
  pool.Run("a", "g-1", member, 1, 100, "g");
  pool.Queue("b", "urgent", pool.Template(Cpu("2"), kHigh));
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.preemptions.size(), 2u);
  EXPECT_EQ(r.preemptions[0].job_id, "g-0");
  EXPECT_EQ(r.preemptions[0].kind, PreemptionKind::kUrgency);
  EXPECT_EQ(r.preemptions[1].job_id, "g-1");
  EXPECT_EQ(r.preemptions[1].kind, PreemptionKind::kGang);
  EXPECT_EQ(r.preemptions[1].caused_by_job, "g-0");
  EXPECT_THAT(r.preemptions[1].reason, HasSubstr("gang: member g-0 of gang g was preempted"));
}

TEST(SchedulePoolTest, UrgentGangPreemptsLowerClassesOnlyWhereFreeRoomIsShort) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  pool.AddNodes(3, Cpu("2"));
  pool.AddQueue("batch");
  pool.AddQueue("ml");
  const JobTemplate* low = pool.Template(Cpu("2"), kLow);
  pool.Run("batch", "low-0", low, 0, 100);
  pool.Run("batch", "low-1", low, 1, 100);
  // Two members of two cpu: the free node and the room of one low job.
  const JobTemplate* member = pool.Template(Cpu("2"), kHigh, TaskSpec(), 2);
  pool.Queue("ml", "m0", member, "g");
  pool.Queue("ml", "m1", member, "g");
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 2u);
  int preempting = 0;
  for (const Lease& l : r.leases) preempting += l.preempted_others ? 1 : 0;
  EXPECT_EQ(preempting, 1);
  ASSERT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].kind, PreemptionKind::kUrgency);
  EXPECT_THAT(r.preemptions[0].job_id, ::testing::AnyOf("low-0", "low-1"));
  EXPECT_THAT(r.preemptions[0].caused_by_job, ::testing::AnyOf("m0", "m1"));
  EXPECT_THAT(r.preemptions[0].reason, HasSubstr("urgency: job m"));
}

TEST(SchedulePoolTest, GangOfTheSameClassDoesNotPreempt) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  pool.AddNodes(2, Cpu("2"));
  pool.AddQueue("batch");
  pool.AddQueue("ml");
  const JobTemplate* low = pool.Template(Cpu("2"), kLow);
  pool.Run("batch", "low-0", low, 0, 100);
  const JobTemplate* member = pool.Template(Cpu("2"), kLow, TaskSpec(), 2);
  pool.Queue("ml", "m0", member, "g");
  pool.Queue("ml", "m1", member, "g");
  PoolRoundResult r = pool.Schedule();
  EXPECT_TRUE(r.leases.empty());
  EXPECT_TRUE(r.preemptions.empty());
  ASSERT_NE(UnschedulableOf(r, "m0"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "m0")->code, UnschedulableCode::kGangDoesNotFit);
}

TEST(SchedulePoolTest, UrgentGangTakesAUniformityValueWithoutPreemptionFirst) {
  Pool pool;
  pool.config.enable_fair_share_preemption = false;
  for (int i = 0; i < 4; ++i) {
    const int n = pool.AddNode("n" + std::to_string(i), Cpu("2"));
    pool.node(n).labels["zone"] = i < 2 ? "a" : "b";
  }
  pool.AddQueue("batch");
  pool.AddQueue("ml");
  const JobTemplate* low = pool.Template(Cpu("2"), kLow);
  pool.Run("batch", "low-a", low, 0, 100);  // zone a: one node free, one held by a low job
  const JobTemplate* member = pool.Template(Cpu("2"), kHigh, TaskSpec(), 2, "zone");
  pool.Queue("ml", "m0", member, "g");
  pool.Queue("ml", "m1", member, "g");
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 2u);
  EXPECT_TRUE(r.preemptions.empty());
  for (const Lease& l : r.leases) EXPECT_GE(l.node_index, 2) << l.job_id;  // zone b

  // Once zone b is busy too, the gang preempts in one zone, as little as it needs.
  pool.Run("batch", "low-b", low, 2, 100);
  pool.Run("batch", "low-b2", low, 3, 100);
  r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 2u);
  EXPECT_EQ(r.preemptions.size(), 1u);
  EXPECT_EQ(r.preemptions[0].job_id, "low-a");
  for (const Lease& l : r.leases) EXPECT_LT(l.node_index, 2) << l.job_id;  // zone a
}

// ---- limits ---------------------------------------------------------------------------------

TEST(SchedulePoolTest, RoundWideLimitsEndTheRound) {
  struct Case {
    std::string name;
    void (*configure)(PoolRoundConfig&);
    UnschedulableCode code;
    int leased;
    std::string stop_reason;
  };
  const std::vector<Case> cases = {
      {"max new jobs", [](PoolRoundConfig& c) { c.max_new_jobs = 3; },
       UnschedulableCode::kRoundLimit, 3, "round limit"},
      {"global tokens", [](PoolRoundConfig& c) { c.global_tokens = 2; },
       UnschedulableCode::kRateLimited, 2, "rate limited"},
      {"round fraction",
       [](PoolRoundConfig& c) { c.max_fraction_to_schedule[ResourceNames::kCpu] = 0.25; },
       UnschedulableCode::kRoundLimit, 4, "round limit"},
  };
  for (const Case& c : cases) {
    Pool pool;
    pool.AddNodes(4, Cpu("4"));  // 16 cpu
    pool.AddQueue("a");
    pool.AddQueue("b");
    const JobTemplate* one = pool.Template(Cpu("1"));
    pool.QueueMany("a", 10, one);
    pool.QueueMany("b", 10, one);
    c.configure(pool.config);
    PoolRoundResult r = pool.Schedule();
    EXPECT_TRUE(r.limited) << c.name;
    EXPECT_EQ(static_cast<int>(r.leases.size()), c.leased) << c.name;
    ASSERT_EQ(r.unschedulable.size(), 1u) << c.name;
    EXPECT_EQ(r.unschedulable[0].code, c.code) << c.name;
    EXPECT_EQ(ReportOf(r, "a").stop_reason, c.stop_reason) << c.name;
    EXPECT_EQ(ReportOf(r, "b").stop_reason, c.stop_reason) << c.name;
  }
}

TEST(SchedulePoolTest, QueueLimitsStopOnlyThatQueue) {
  struct Case {
    std::string name;
    void (*configure)(PoolRoundConfig&);
    UnschedulableCode code;
    int leased_a;
    std::string stop_reason;
  };
  const std::vector<Case> cases = {
      {"queue tokens", [](PoolRoundConfig& c) { c.queue_tokens["a"] = 2; },
       UnschedulableCode::kRateLimited, 2, "rate limited"},
      {"queue round fraction",
       [](PoolRoundConfig& c) {
         c.max_fraction_to_schedule_per_queue[ResourceNames::kCpu] = 0.125;  // 2 of 16 cpu
       },
       UnschedulableCode::kRoundLimit, 2, "round limit (queue)"},
  };
  for (const Case& c : cases) {
    Pool pool;
    pool.AddNodes(4, Cpu("4"));
    pool.AddQueue("a");
    pool.AddQueue("b");
    const JobTemplate* one = pool.Template(Cpu("1"));
    pool.QueueMany("a", 10, one);
    pool.QueueMany("b", 5, one);
    c.configure(pool.config);
    PoolRoundResult r = pool.Schedule();
    EXPECT_FALSE(r.limited) << c.name;
    EXPECT_EQ(LeasedTo(r, "a"), c.leased_a) << c.name;
    EXPECT_EQ(ReportOf(r, "a").stop_reason, c.stop_reason) << c.name;
    ASSERT_NE(UnschedulableOf(r, "a-" + std::to_string(c.leased_a)), nullptr) << c.name;
    EXPECT_EQ(UnschedulableOf(r, "a-" + std::to_string(c.leased_a))->code, c.code) << c.name;
    // b is limited too under the per-queue fraction, not under a's tokens.
    if (c.name == "queue tokens") {
      EXPECT_EQ(LeasedTo(r, "b"), 5);
    }
  }
}

TEST(SchedulePoolTest, ClassFractionLimitSkipsTheJobOnly) {
  Pool pool;
  pool.AddNodes(4, Cpu("4"));  // 16 cpu
  pool.config.priority_classes[kLow].max_fraction_per_queue[ResourceNames::kCpu] = 0.25;
  pool.AddQueue("a");
  pool.QueueMany("a", 6, pool.Template(Cpu("1"), kLow));
  pool.Queue("a", "high", pool.Template(Cpu("1"), kHigh));
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(LeasedTo(r, "a"), 5);  // 4 low + the high one
  ASSERT_NE(UnschedulableOf(r, "a-4"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "a-4")->code, UnschedulableCode::kQueueFractionLimit);
  EXPECT_EQ(UnschedulableOf(r, "a-4")->reason,
            "queue a would hold 0.31 of cpu, above its limit 0.25 in class low");
}

TEST(SchedulePoolTest, CordonedQueueNoMatchAndExecutorFull) {
  Pool pool;
  const int n0 = pool.AddNode("n0", Cpu("4"), "exec-full");
  pool.node(n0).labels["kind"] = "special";
  pool.AddNode("n1", Cpu("4"), "exec-ok");
  pool.config.executor_capacity["exec-full"] = 0;
  pool.AddQueue("cordoned", 1.0, /*cordoned=*/true);
  pool.AddQueue("q");
  pool.Queue("cordoned", "c-0", pool.Template(Cpu("1")));
  TaskSpec special;
  (*special.mutable_node_selector())["kind"] = "special";
  TaskSpec gpu;
  (*gpu.mutable_node_selector())["kind"] = "gpu";
  pool.Queue("q", "to-full", pool.Template(Cpu("1"), kLow, special));
  pool.Queue("q", "nowhere", pool.Template(Cpu("1"), kLow, gpu));
  pool.Queue("q", "ok", pool.Template(Cpu("1")));
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(UnschedulableOf(r, "c-0")->code, UnschedulableCode::kQueueCordoned);
  EXPECT_EQ(ReportOf(r, "cordoned").stop_reason, "queue cordoned");
  EXPECT_EQ(UnschedulableOf(r, "to-full")->code, UnschedulableCode::kExecutorFull);
  EXPECT_EQ(UnschedulableOf(r, "nowhere")->code, UnschedulableCode::kNoNodeMatches);
  EXPECT_EQ(UnschedulableOf(r, "nowhere")->reason,
            "0 of 2 nodes match: node selector kind=gpu does not match (2)");
  ASSERT_EQ(r.leases.size(), 1u);
  EXPECT_EQ(r.leases[0].job_id, "ok");
  EXPECT_EQ(r.leases[0].node_index, 1);
}

TEST(SchedulePoolTest, PoolOfUnschedulableNodesSaysSo) {
  Pool pool;
  const int n0 = pool.AddNode("n0", Cpu("4"));
  pool.node(n0).unschedulable = true;
  pool.AddQueue("a");
  pool.Queue("a", "j", pool.Template(Cpu("1")));
  PoolRoundResult r = pool.Schedule();
  EXPECT_FALSE(r.limited);
  ASSERT_NE(UnschedulableOf(r, "j"), nullptr);
  EXPECT_EQ(UnschedulableOf(r, "j")->code, UnschedulableCode::kNoNodeMatches);
  EXPECT_EQ(UnschedulableOf(r, "j")->reason, "0 of 1 nodes match: node is unschedulable (1)");
}

TEST(SchedulePoolTest, ExecutorCapacityCapsRunsPerExecutor) {
  Pool pool;
  pool.AddNode("n0", Cpu("8"), "e0");
  pool.AddNode("n1", Cpu("8"), "e1");
  pool.config.executor_capacity["e0"] = 2;
  pool.config.executor_capacity["e1"] = 1;
  pool.AddQueue("a");
  pool.QueueMany("a", 10, pool.Template(Cpu("1")));
  PoolRoundResult r = pool.Schedule();
  EXPECT_EQ(r.leases.size(), 3u);
  EXPECT_TRUE(r.limited);
  EXPECT_EQ(ReportOf(r, "a").stop_reason, "every executor is full");
}

TEST(SchedulePoolTest, TimeBudgetEndsTheRound) {
  Pool pool;
  pool.AddNodes(2, Cpu("1000"));
  pool.AddQueue("a");
  pool.QueueMany("a", 5000, pool.Template(Cpu("1")));
  pool.config.time_budget = absl::Nanoseconds(1);
  PoolRoundResult r = pool.Schedule();
  EXPECT_TRUE(r.limited);
  EXPECT_LT(r.leases.size(), 2000u);
  EXPECT_EQ(ReportOf(r, "a").stop_reason, "time budget");
}

TEST(SchedulePoolTest, AvoidedNodesAreAvoidedWhileAnotherCouldHoldTheJob) {
  Pool pool;
  pool.AddNode("n0", Cpu("1"));
  pool.AddNode("n1", Cpu("4"));
  pool.AddQueue("a");
  const std::vector<std::string> avoid_n0 = {"n0"};
  const std::vector<std::string> avoid_both = {"n0", "n1"};
  QueuedJob& first = pool.Queue("a", "avoids-n0", pool.Template(Cpu("1")));
  first.avoid_nodes = &avoid_n0;
  QueuedJob& second = pool.Queue("a", "avoids-all", pool.Template(Cpu("1")));
  second.avoid_nodes = &avoid_both;
  PoolRoundResult r = pool.Schedule();
  ASSERT_EQ(r.leases.size(), 2u);
  EXPECT_EQ(r.leases[0].node_index, 1);  // n0 is the tighter fit but avoided
  EXPECT_EQ(r.leases[1].node_index, 0);  // avoiding both would leave nothing: back to n0
}

TEST(SchedulePoolTest, SameInputSameResult) {
  // Each result's job ids view its pool's: both pools outlive the comparison.
  auto run = [](Pool& pool) {
    pool.AddNodes(8, Res({{"cpu", "4"}, {"memory", "8Gi"}}));
    pool.AddQueue("x");
    pool.AddQueue("y", 2.0);
    pool.AddQueue("z");
    const JobTemplate* small = pool.Template(Res({{"cpu", "1"}, {"memory", "1Gi"}}));
    const JobTemplate* big = pool.Template(Res({{"cpu", "3"}, {"memory", "2Gi"}}), kHigh);
    for (int i = 0; i < 10; ++i) pool.Run("x", "x-run-" + std::to_string(i), small, i % 8, i);
    pool.QueueMany("y", 20, small);
    pool.QueueMany("z", 6, big);
    return pool.Schedule();
  };
  Pool pool_a;
  Pool pool_b;
  PoolRoundResult a = run(pool_a);
  PoolRoundResult b = run(pool_b);
  ASSERT_EQ(a.leases.size(), b.leases.size());
  for (size_t i = 0; i < a.leases.size(); ++i) {
    EXPECT_EQ(a.leases[i].job_id, b.leases[i].job_id);
    EXPECT_EQ(a.leases[i].node_index, b.leases[i].node_index);
  }
  EXPECT_EQ(PreemptedIds(a), PreemptedIds(b));
  ASSERT_EQ(a.unschedulable.size(), b.unschedulable.size());
  for (size_t i = 0; i < a.unschedulable.size(); ++i) {
    EXPECT_EQ(a.unschedulable[i].reason, b.unschedulable[i].reason);
  }
  EXPECT_FALSE(a.leases.empty());
}

// ---- invariants on random pools -------------------------------------------------------------

TEST(SchedulePoolTest, RandomPoolsNeverOvercommitAndKeepGangsWhole) {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % n); };
    Pool pool;
    pool.config.enable_fair_share_preemption = seed % 3 != 0;
    pool.config.protected_fraction_of_fair_share = seed % 2 == 0 ? 1.0 : 1.5;
    if (seed % 5 == 0) pool.config.max_new_jobs = 10;
    if (seed % 4 == 0) pool.config.executor_capacity["e0"] = 2;
    const int node_count = 3 + pick(8);
    for (int i = 0; i < node_count; ++i) {
      const int n = pool.AddNode("n" + std::to_string(i),
                                 Res({{"cpu", std::to_string(2 + pick(6))}, {"memory", "8Gi"}}),
                                 "e" + std::to_string(i % 2));
      pool.node(n).labels["zone"] = pick(2) == 0 ? "a" : "b";
    }
    std::vector<std::vector<int64_t>> used(node_count, std::vector<int64_t>(2, 0));
    std::vector<const JobTemplate*> templates;
    for (int cls : {kLow, kHigh, kMid, kSystem}) {
      templates.push_back(pool.Template(Res({{"cpu", "1"}, {"memory", "1Gi"}}), cls));
      templates.push_back(pool.Template(Res({{"cpu", "2"}, {"memory", "3Gi"}}), cls));
    }
    const std::vector<std::string> queues = {"a", "b", "c"};
    for (const std::string& q : queues) pool.AddQueue(q, 1.0 + pick(3));
    // Running jobs that fit (the caller never reports an overcommitted node).
    std::map<std::string, std::pair<const JobTemplate*, int>> running;
    for (int j = 0; j < 3 * node_count; ++j) {
      const JobTemplate* t = templates[pick(templates.size())];
      const int node = pick(node_count);
      const int64_t cpu = t->requests.Get(ResourceNames::kCpu).milli();
      const int64_t mem = t->requests.Get(ResourceNames::kMemory).milli();
      const Node& n = pool.node(node);
      if (used[node][0] + cpu > n.allocatable.Get(ResourceNames::kCpu).milli() ||
          used[node][1] + mem > n.allocatable.Get(ResourceNames::kMemory).milli()) {
        continue;
      }
      used[node][0] += cpu;
      used[node][1] += mem;
      const std::string id = "run-" + std::to_string(j);
      pool.Run(queues[pick(3)], id, t, node, 1000 + pick(100));
      running[id] = {t, node};
    }
    std::map<std::string, const JobTemplate*> queued;
    std::map<std::string, std::string> gang_of;
    for (int j = 0; j < 30; ++j) {
      const std::string q = queues[pick(3)];
      if (pick(6) == 0) {  // a gang of 2 or 3, sometimes on one zone
        const uint32_t size = 2 + pick(2);
        const JobTemplate* t = pool.Template(Cpu("1"), pick(2) == 0 ? kLow : kHigh, TaskSpec(),
                                             size, pick(2) == 0 ? "zone" : "");
        const std::string gang = "g" + std::to_string(j);
        for (uint32_t m = 0; m < size; ++m) {
          const std::string id = gang + "-" + std::to_string(m);
          pool.Queue(q, id, t, gang);
          queued[id] = t;
          gang_of[id] = gang;
        }
        continue;
      }
      const std::string id = "new-" + std::to_string(j);
      const JobTemplate* t = templates[pick(templates.size())];
      pool.Queue(q, id, t);
      queued[id] = t;
    }

    PoolRoundResult r = pool.Schedule();
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    // Final bindings: running jobs not preempted, plus the leases.
    std::vector<std::vector<int64_t>> held(node_count, std::vector<int64_t>(2, 0));
    std::set<std::string> preempted;
    for (const Preemption& p : r.preemptions) {
      ASSERT_TRUE(running.contains(p.job_id)) << p.job_id;
      EXPECT_TRUE(preempted.insert(p.job_id).second) << "preempted twice: " << p.job_id;
      EXPECT_EQ(p.node_index, running[p.job_id].second);
      EXPECT_FALSE(p.reason.empty());
    }
    for (const auto& [id, run] : running) {
      if (preempted.contains(id)) continue;
      held[run.second][0] += run.first->requests.Get(ResourceNames::kCpu).milli();
      held[run.second][1] += run.first->requests.Get(ResourceNames::kMemory).milli();
    }
    std::set<std::string> leased;
    std::map<std::string, int> gang_leased;
    for (const Lease& l : r.leases) {
      const std::string id(l.job_id);
      ASSERT_TRUE(queued.contains(id)) << id;
      EXPECT_TRUE(leased.insert(id).second) << "leased twice: " << id;
      held[l.node_index][0] += queued[id]->requests.Get(ResourceNames::kCpu).milli();
      held[l.node_index][1] += queued[id]->requests.Get(ResourceNames::kMemory).milli();
      if (gang_of.contains(id)) ++gang_leased[gang_of[id]];
    }
    int on_e0 = 0;
    for (const Lease& l : r.leases) on_e0 += pool.node(l.node_index).executor_id == "e0" ? 1 : 0;
    if (seed % 4 == 0) {
      EXPECT_LE(on_e0, 2);
    }
    if (seed % 5 == 0) {
      EXPECT_LE(r.leases.size(), 10u);
    }
    for (int n = 0; n < node_count; ++n) {
      EXPECT_LE(held[n][0], pool.node(n).allocatable.Get(ResourceNames::kCpu).milli()) << n;
      EXPECT_LE(held[n][1], pool.node(n).allocatable.Get(ResourceNames::kMemory).milli()) << n;
    }
    for (const auto& [gang, count] : gang_leased) {
      int members = 0;
      for (const auto& [id, g] : gang_of) members += g == gang ? 1 : 0;
      EXPECT_EQ(count, members) << gang;
    }
    for (const Unschedulable& u : r.unschedulable) {
      EXPECT_FALSE(leased.contains(std::string(u.job_id))) << u.job_id;
      EXPECT_FALSE(u.reason.empty());
    }
    // Same input, same result.
    PoolRoundResult again = pool.Schedule();
    ASSERT_EQ(again.leases.size(), r.leases.size());
    for (size_t i = 0; i < r.leases.size(); ++i) {
      EXPECT_EQ(again.leases[i].job_id, r.leases[i].job_id);
      EXPECT_EQ(again.leases[i].node_index, r.leases[i].node_index);
    }
    EXPECT_EQ(PreemptedIds(again), PreemptedIds(r));
  }
}

}  // namespace
}  // namespace regatta::scheduler
