// The executor registry: lease-request parsing and validation, reports, liveness and lease
// delivery bookkeeping.
#include "src/scheduler/executor_registry.h"

#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::scheduler {
namespace {

namespace v1 = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

v1::LeaseRequest Request() {
  v1::LeaseRequest request;
  request.set_executor_id("e1");
  request.set_pool("default");
  request.set_incarnation("inc-1");
  request.set_logs_address("127.0.0.1:7000");
  request.set_max_runs_to_lease(8);
  v1::NodeInfo* node = request.add_nodes();
  node->set_id("n1");
  (*node->mutable_total_resources())["cpu"] = "8";
  (*node->mutable_total_resources())["memory"] = "16Gi";
  (*node->mutable_allocatable_resources())["cpu"] = "7";
  (*node->mutable_allocatable_resources())["memory"] = "15Gi";
  return request;
}

// The message of the INVALID_ARGUMENT error `request` gets.
std::string ErrorOf(const v1::LeaseRequest& request) {
  absl::StatusOr<ExecutorState> state = ParseLeaseRequest(request, kT0);
  EXPECT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kInvalidArgument) << state.status();
  return std::string(state.status().message());
}

ExecutorState State(const std::string& id, const std::string& incarnation,
                    absl::Time last_seen = kT0) {
  ExecutorState state;
  state.id = id;
  state.pool = "default";
  state.incarnation = incarnation;
  state.last_seen = last_seen;
  return state;
}

// ---- ParseLeaseRequest ------------------------------------------------------------------------

TEST(ParseLeaseRequestTest, BuildsTheExecutorState) {
  v1::LeaseRequest request = Request();
  v1::NodeInfo* n1 = request.mutable_nodes(0);
  (*n1->mutable_labels())["zone"] = "a";
  v1::Taint* taint = n1->add_taints();
  taint->set_key("dedicated");
  taint->set_value("ml");
  taint->set_effect("NoSchedule");
  (*n1->mutable_run_states())["r1"] = v1::RUN_STATE_RUNNING;
  v1::NodeInfo* n2 = request.add_nodes();
  n2->set_id("n2");
  n2->set_pool("gpu");
  n2->set_unschedulable(true);
  (*n2->mutable_total_resources())["cpu"] = "4";  // no allocatable: the total counts
  (*n2->mutable_run_states())["r2"] = v1::RUN_STATE_PENDING;

  absl::StatusOr<ExecutorState> state = ParseLeaseRequest(request, kT0);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->id, "e1");
  EXPECT_EQ(state->pool, "default");
  EXPECT_EQ(state->incarnation, "inc-1");
  EXPECT_EQ(state->logs_address, "127.0.0.1:7000");
  EXPECT_EQ(state->max_runs_to_lease, 8);
  EXPECT_EQ(state->leased_since_report, 0);
  EXPECT_EQ(state->last_seen, kT0);
  ASSERT_EQ(state->nodes.size(), 2u);

  const Node& node1 = state->nodes[0];
  EXPECT_EQ(node1.id, "n1");
  EXPECT_EQ(node1.executor_id, "e1");
  EXPECT_EQ(node1.pool, "default");  // inherited from the executor
  EXPECT_EQ(node1.labels.at("zone"), "a");
  ASSERT_EQ(node1.taints.size(), 1u);
  EXPECT_EQ(node1.taints[0].key, "dedicated");
  EXPECT_EQ(node1.taints[0].value, "ml");
  EXPECT_EQ(node1.taints[0].effect, "NoSchedule");
  EXPECT_EQ(node1.allocatable.Get(ResourceNames::kCpu), Quantity::FromUnits(7));
  EXPECT_EQ(node1.allocatable.Get(ResourceNames::kMemory), Quantity::FromUnits(15LL << 30));
  EXPECT_TRUE(node1.allocated.IsZero());
  EXPECT_FALSE(node1.unschedulable);

  const Node& node2 = state->nodes[1];
  EXPECT_EQ(node2.pool, "gpu");
  EXPECT_TRUE(node2.unschedulable);
  EXPECT_EQ(node2.allocatable.Get(ResourceNames::kCpu), Quantity::FromUnits(4));

  // Runs of every node, by run id.
  ASSERT_EQ(state->runs.size(), 2u);
  EXPECT_EQ(state->runs.at("r1"), v1::RUN_STATE_RUNNING);
  EXPECT_EQ(state->runs.at("r2"), v1::RUN_STATE_PENDING);

  // A silly capacity is capped; no nodes is fine.
  request = Request();
  request.clear_nodes();
  request.set_max_runs_to_lease(4'000'000'000u);
  state = ParseLeaseRequest(request, kT0);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->max_runs_to_lease, 1 << 20);
  EXPECT_THAT(state->nodes, IsEmpty());
}

TEST(ParseLeaseRequestTest, ErrorsNameTheField) {
  v1::LeaseRequest request = Request();
  request.clear_executor_id();
  EXPECT_EQ(ErrorOf(request), "executor_id: must not be empty");

  request = Request();
  request.clear_pool();
  EXPECT_EQ(ErrorOf(request), "pool: must not be empty");

  request = Request();
  request.add_nodes();
  EXPECT_EQ(ErrorOf(request), "nodes[1].id: must not be empty");

  request = Request();
  request.add_nodes()->set_id("n1");
  EXPECT_EQ(ErrorOf(request), "nodes[1].id: duplicate node n1");

  request = Request();
  v1::Taint* taint = request.mutable_nodes(0)->add_taints();
  taint->set_key("k");
  taint->set_effect("NoScheduleX");
  EXPECT_THAT(ErrorOf(request), StartsWith("nodes[0].taints[0].effect: "));
  EXPECT_THAT(ErrorOf(request), HasSubstr("\"NoScheduleX\""));

  request = Request();
  request.mutable_nodes(0)->add_taints()->set_effect("NoExecute");
  EXPECT_THAT(ErrorOf(request), StartsWith("nodes[0].taints[0].key: "));

  request = Request();
  (*request.mutable_nodes(0)->mutable_allocatable_resources())["cpu"] = "lots";
  EXPECT_THAT(ErrorOf(request), StartsWith("nodes[0].allocatable_resources: "));
  EXPECT_THAT(ErrorOf(request), HasSubstr("lots"));

  // Without allocatable resources the total is used, and named when it is wrong.
  request = Request();
  request.mutable_nodes(0)->clear_allocatable_resources();
  (*request.mutable_nodes(0)->mutable_total_resources())["memory"] = "-1Gi";
  EXPECT_THAT(ErrorOf(request), StartsWith("nodes[0].total_resources: "));
}

// ---- ExecutorRegistry -------------------------------------------------------------------------

TEST(ExecutorRegistryTest, ReportGetSnapshotAndRemove) {
  ExecutorRegistry registry;
  EXPECT_FALSE(registry.Get("e1").has_value());
  EXPECT_THAT(registry.Snapshot(), IsEmpty());

  registry.Report(State("e1", "a"));
  registry.Report(State("e2", "b"));
  ASSERT_TRUE(registry.Get("e1").has_value());
  EXPECT_EQ(registry.Get("e1")->incarnation, "a");
  std::vector<std::string> ids;
  for (const ExecutorState& state : registry.Snapshot()) ids.push_back(state.id);
  EXPECT_THAT(ids, UnorderedElementsAre("e1", "e2"));

  // A new report replaces the state.
  ExecutorState next = State("e1", "a");
  next.max_runs_to_lease = 3;
  registry.Report(next);
  EXPECT_EQ(registry.Get("e1")->max_runs_to_lease, 3);

  registry.Remove("e1");
  EXPECT_FALSE(registry.Get("e1").has_value());
  EXPECT_EQ(registry.Snapshot().size(), 1u);
  registry.Remove("e1");  // again: nothing happens
  registry.Remove("unknown");
  EXPECT_EQ(registry.Snapshot().size(), 1u);
}

TEST(ExecutorRegistryTest, AReportSaysWhetherItMayGiveTheSchedulerNewRoom) {
  ExecutorRegistry registry;
  auto with_node = [](const std::string& incarnation, const std::string& cpu, int max_runs) {
    ExecutorState state = State("e1", incarnation);
    Node node;
    node.id = "n1";
    node.pool = "default";
    node.allocatable = *ResourceList::FromStrings({{"cpu", cpu}});
    state.nodes.push_back(node);
    state.max_runs_to_lease = max_runs;
    return state;
  };
  EXPECT_TRUE(registry.Report(with_node("a", "4", 2)));   // new executor
  EXPECT_FALSE(registry.Report(with_node("a", "4", 2)));  // the same again: nothing new
  registry.NoteLeased("e1", 1);
  EXPECT_FALSE(registry.Report(with_node("a", "4", 1)));  // room was left: nothing new
  registry.NoteLeased("e1", 1);                           // its last request's room is used
  EXPECT_TRUE(registry.Report(with_node("a", "4", 1)));   // ...and it has room again
  EXPECT_FALSE(registry.Report(with_node("a", "4", 1)));
  EXPECT_TRUE(registry.Report(with_node("a", "8", 1)));  // a bigger node
  ExecutorState labelled = with_node("a", "8", 1);
  labelled.nodes[0].labels["zone"] = "b";
  EXPECT_TRUE(registry.Report(labelled));                // other labels
  EXPECT_TRUE(registry.Report(with_node("b", "8", 1)));  // a restarted process
}

TEST(ExecutorRegistryTest, IncarnationSinceIsTheFirstReportOfTheProcess) {
  ExecutorRegistry registry;
  registry.Report(State("e1", "a", kT0));
  EXPECT_EQ(registry.Get("e1")->incarnation_since, kT0);
  registry.Report(State("e1", "a", kT0 + absl::Seconds(5)));  // same process: unchanged
  EXPECT_EQ(registry.Get("e1")->incarnation_since, kT0);
  EXPECT_EQ(registry.Get("e1")->last_seen, kT0 + absl::Seconds(5));
  registry.Report(State("e1", "b", kT0 + absl::Seconds(9)));  // restarted
  EXPECT_EQ(registry.Get("e1")->incarnation_since, kT0 + absl::Seconds(9));
  // Forgotten and back: counts from its next report.
  registry.Remove("e1");
  registry.Report(State("e1", "b", kT0 + absl::Seconds(20)));
  EXPECT_EQ(registry.Get("e1")->incarnation_since, kT0 + absl::Seconds(20));
}

TEST(ExecutorRegistryTest, TouchMovesLastSeenForwardOnly) {
  ExecutorRegistry registry;
  registry.Report(State("e1", "a", kT0));
  registry.Touch("e1", kT0 + absl::Seconds(5));
  EXPECT_EQ(registry.Get("e1")->last_seen, kT0 + absl::Seconds(5));
  registry.Touch("e1", kT0 + absl::Seconds(2));  // an older time never moves it back
  EXPECT_EQ(registry.Get("e1")->last_seen, kT0 + absl::Seconds(5));
  registry.Touch("unknown", kT0);  // does not register anything
  EXPECT_FALSE(registry.Get("unknown").has_value());
}

TEST(ExecutorRegistryTest, NoteLeasedCountsUntilTheNextReport) {
  ExecutorRegistry registry;
  registry.NoteLeased("e1", 2);  // unknown: ignored
  EXPECT_FALSE(registry.Get("e1").has_value());
  registry.Report(State("e1", "a"));
  registry.NoteLeased("e1", 2);
  registry.NoteLeased("e1", 3);
  EXPECT_EQ(registry.Get("e1")->leased_since_report, 5);
  registry.Report(State("e1", "a"));
  EXPECT_EQ(registry.Get("e1")->leased_since_report, 0);
}

TEST(ExecutorRegistryTest, ClaimSendOncePerResendIntervalAndIncarnation) {
  const absl::Duration resend = absl::Seconds(10);
  ExecutorRegistry registry;
  // An executor the registry does not know gets nothing.
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r1", kT0, resend));

  registry.Report(State("e1", "a"));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r1", kT0, resend));
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r1", kT0, resend));
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r1", kT0 + absl::Seconds(9), resend));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r2", kT0 + absl::Seconds(9), resend));  // per run
  // Not held after resend_after: sent again, and the interval starts over.
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r1", kT0 + absl::Seconds(10), resend));
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r1", kT0 + absl::Seconds(15), resend));

  // A restarted executor (new incarnation) lost what it was sent: everything goes again.
  EXPECT_TRUE(registry.ClaimSend("e1", "b", "r1", kT0 + absl::Seconds(16), resend));
  EXPECT_TRUE(registry.ClaimSend("e1", "b", "r2", kT0 + absl::Seconds(16), resend));
  EXPECT_FALSE(registry.ClaimSend("e1", "b", "r2", kT0 + absl::Seconds(17), resend));

  // A report from yet another incarnation resets the sent runs too.
  registry.Report(State("e1", "c"));
  EXPECT_TRUE(registry.ClaimSend("e1", "c", "r2", kT0 + absl::Seconds(18), resend));

  registry.Remove("e1");
  EXPECT_FALSE(registry.ClaimSend("e1", "c", "r3", kT0 + absl::Seconds(19), resend));
}

TEST(ExecutorRegistryTest, RunsTheExecutorHeldOrReportedAreNeverSentAgainToThatIncarnation) {
  const absl::Duration resend = absl::Seconds(10);
  ExecutorRegistry registry;
  registry.Report(State("e1", "a"));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r1", kT0, resend));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r2", kT0, resend));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r3", kT0, resend));

  // The executor reports r1 as held; later it finishes r1 and forgets it while the JobDb may
  // still show the run LEASED. Sending it again would run it twice: it is never resent.
  ExecutorState held = State("e1", "a");
  held.runs["r1"] = v1::RUN_STATE_PENDING;
  registry.Report(held);
  registry.Report(State("e1", "a"));
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r1", kT0 + absl::Seconds(60), resend));
  // The same for a run the executor reported an event of (MarkDelivered).
  registry.MarkDelivered("e1", "r3");
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r3", kT0 + absl::Seconds(60), resend));
  // r2 was never acknowledged: resent after the interval.
  EXPECT_FALSE(registry.ClaimSend("e1", "a", "r2", kT0 + absl::Seconds(1), resend));
  EXPECT_TRUE(registry.ClaimSend("e1", "a", "r2", kT0 + absl::Seconds(10), resend));
  // A new incarnation (a restart) starts over.
  EXPECT_TRUE(registry.ClaimSend("e1", "b", "r1", kT0 + absl::Seconds(61), resend));
}

}  // namespace
}  // namespace regatta::scheduler
