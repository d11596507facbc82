// The scheduler loop on the real log, views and ingester, with a scripted executor: the test
// reports nodes through the ExecutorRegistry and "runs" leases by appending run events itself.
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "sqlite3.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/ingest/ingester.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/leader.h"
#include "src/scheduler/reports.h"
#include "src/scheduler/scheduler.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::scheduler {
namespace {

using regatta::v1::Event;
using regatta::v1::EventSequence;

// The log, with appends refused on demand (a full disk, a lost leadership) and counted by
// what they wait for.
class RefusingLog final : public eventlog::EventLog {
 public:
  explicit RefusingLog(eventlog::EventLog* log) : log_(log) {}
  absl::StatusOr<std::vector<int64_t>> Append(std::vector<EventSequence> sequences) override {
    ++durable_appends;
    if (refuse) return absl::UnavailableError("append refused by the test");
    return log_->Append(std::move(sequences));
  }
  absl::StatusOr<std::vector<int64_t>> AppendVisible(
      std::vector<EventSequence> sequences) override {
    ++visible_appends;
    if (refuse) return absl::UnavailableError("append refused by the test");
    return log_->AppendVisible(std::move(sequences));
  }
  absl::Status WaitDurable(int64_t offset) override { return log_->WaitDurable(offset); }
  absl::StatusOr<std::vector<eventlog::LogRecord>> Read(int64_t after, int max) override {
    return log_->Read(after, max);
  }
  absl::StatusOr<std::vector<eventlog::LogRecord>> ReadJobSet(absl::string_view queue,
                                                              absl::string_view job_set,
                                                              int64_t after, int max) override {
    return log_->ReadJobSet(queue, job_set, after, max);
  }
  int64_t LastOffset() override { return log_->LastOffset(); }
  int64_t WaitForAppend(int64_t after, absl::Time deadline) override {
    return log_->WaitForAppend(after, deadline);
  }
  bool refuse = false;
  int durable_appends = 0;
  int visible_appends = 0;

 private:
  eventlog::EventLog* log_;
};

class SchedulerIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-sched-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    log_ = *eventlog::SqliteEventLog::Open((dir_ / "log.db").string());
    store_ = *store::SqliteStore::Open((dir_ / "views.db").string());
    ingester_ = std::make_unique<ingest::Ingester>(log_.get(), store_.get(), RealClock::Get());
    ASSERT_TRUE(ingester_->Start().ok());
  }

  void TearDown() override {
    scheduler_.reset();
    ingester_->Stop();
    log_->Close();
    std::filesystem::remove_all(dir_);
  }

  // A scheduler on the test's views and registry, not yet initialized.
  void MakeScheduler(SchedulerOptions options, LeaderElection* leader = nullptr,
                     eventlog::EventLog* log = nullptr) {
    scheduler_ = std::make_unique<Scheduler>(
        log != nullptr ? log : log_.get(), store_.get(),
        [this](int64_t offset, absl::Time deadline) {
          return ingester_->WaitForOffset(offset, deadline);
        },
        &registry_, &clock_, &ids_, options);
    if (leader != nullptr) scheduler_->set_leader_election(leader);
  }

  void StartScheduler(SchedulerOptions options = {}, eventlog::EventLog* log = nullptr) {
    options.policy.priority_classes.try_emplace(
        "default", PriorityClassPolicy{.name = "default", .priority = 1000});
    options.executor_timeout = absl::Seconds(30);
    MakeScheduler(options, nullptr, log);
    ASSERT_TRUE(scheduler_->Initialize().ok());
  }

  int64_t Append(EventSequence seq) {
    std::vector<EventSequence> batch;
    batch.push_back(std::move(seq));
    absl::StatusOr<std::vector<int64_t>> offsets = log_->Append(std::move(batch));
    EXPECT_TRUE(offsets.ok()) << offsets.status();
    return offsets.ok() ? offsets->front() : 0;
  }

  void Ingested() {
    ASSERT_TRUE(ingester_->WaitForOffset(log_->LastOffset(), absl::Now() + absl::Seconds(10)).ok());
  }

  Event NewEvent() {
    Event e;
    *e.mutable_created() =
        google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(clock_.Now()));
    return e;
  }

  void CreateQueue(const std::string& name, double priority_factor) {
    EventSequence seq;
    seq.set_queue(name);
    Event* e = seq.add_events();
    *e = NewEvent();
    e->mutable_queue_created()->mutable_queue()->set_name(name);
    e->mutable_queue_created()->mutable_queue()->set_priority_factor(priority_factor);
    Append(std::move(seq));
  }

  // Appends `count` jobs in one record; `specs` (if given) gets the jobs and `offset` the
  // record's offset.
  std::vector<std::string> SubmitJobs(
      const std::string& queue, int count, const std::string& cpu = "1",
      std::vector<std::shared_ptr<const regatta::v1::Job>>* specs = nullptr,
      int64_t* offset = nullptr, const std::map<std::string, std::string>& annotations = {}) {
    EventSequence seq;
    seq.set_queue(queue);
    seq.set_job_set("set");
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      Event* e = seq.add_events();
      *e = NewEvent();
      regatta::v1::Job* job = e->mutable_submit_job()->mutable_job();
      job->set_id(ids_.NewId());
      job->set_queue(queue);
      job->set_job_set("set");
      job->set_priority_class("default");
      job->add_groups("g");
      job->mutable_task()->add_command("/bin/true");
      (*job->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = cpu;
      (*job->mutable_task()->mutable_resources()->mutable_requests())["memory"] = "1Mi";
      for (const auto& [k, v] : annotations) (*job->mutable_annotations())[k] = v;
      *job->mutable_submit_time() = e->created();
      ids.push_back(job->id());
      if (specs != nullptr) specs->push_back(std::make_shared<const regatta::v1::Job>(*job));
    }
    const int64_t appended = Append(std::move(seq));
    if (offset != nullptr) *offset = appended;
    return ids;
  }

  // The views stop following the log, then catch up again (a slow ingest).
  void PauseIngest() { ingester_->Stop(); }
  void ResumeIngest() {
    ingester_ = std::make_unique<ingest::Ingester>(log_.get(), store_.get(), RealClock::Get());
    ASSERT_TRUE(ingester_->Start().ok());
  }

  // As `regatta up` wires it: every batch the views take is told to the scheduler.
  void ObserveIngest() {
    PauseIngest();
    ingester_ = std::make_unique<ingest::Ingester>(log_.get(), store_.get(), RealClock::Get());
    ingester_->AddObserver([this](const store::IngestBatch& batch) {
      if (scheduler_ != nullptr) scheduler_->ViewsMoved(batch);
    });
    ASSERT_TRUE(ingester_->Start().ok());
  }

  // Waits up to 10 s for `done`.
  // The run id of the log's last lease ("" if none).
  std::string LastLeasedRunId() {
    std::string run_id;
    absl::StatusOr<std::vector<eventlog::LogRecord>> records = log_->Read(0, 1'000'000);
    EXPECT_TRUE(records.ok()) << records.status();
    if (!records.ok()) return run_id;
    for (const auto& record : *records) {
      for (const Event& e : record.sequence.events()) {
        if (e.has_job_run_leased()) run_id = e.job_run_leased().run_id();
      }
    }
    return run_id;
  }

  // A one-cpu /bin/true job of queue q, job set "set", as the submit path hands it over.
  static std::shared_ptr<regatta::v1::Job> HandedOverJob(const std::string& id) {
    auto job = std::make_shared<regatta::v1::Job>();
    job->set_id(id);
    job->set_queue("q");
    job->set_job_set("set");
    job->set_priority_class("default");
    job->mutable_task()->add_command("/bin/true");
    (*job->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "1";
    return job;
  }

  static bool Eventually(absl::FunctionRef<bool()> done) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!done()) {
      if (absl::Now() > deadline) return false;
      absl::SleepFor(absl::Milliseconds(1));
    }
    return true;
  }

  void ReportNode(const std::string& executor, const std::string& node, const std::string& cpu,
                  int max_runs = 1000) {
    regatta::v1::LeaseRequest request;
    request.set_executor_id(executor);
    request.set_pool("default");
    request.set_max_runs_to_lease(max_runs);
    regatta::v1::NodeInfo* info = request.add_nodes();
    info->set_id(node);
    (*info->mutable_allocatable_resources())["cpu"] = cpu;
    (*info->mutable_allocatable_resources())["memory"] = "100Gi";
    absl::StatusOr<ExecutorState> state = ParseLeaseRequest(request, clock_.Now());
    ASSERT_TRUE(state.ok()) << state.status();
    registry_.Report(*state);
  }

  // Runs one cycle and returns the runs leased in it: run id -> job.
  std::map<std::string, const JobRecord*> Cycle() {
    std::map<std::string, std::string> before;
    EXPECT_TRUE(scheduler_->RunCycle().ok());
    std::map<std::string, const JobRecord*> leased;
    scheduler_->job_db().ForEachJob([&](const JobRecord& job) {
      const RunRecord* run = job.latest_run();
      if (run != nullptr && run->state == regatta::v1::RUN_STATE_LEASED &&
          !seen_runs_.contains(run->run_id)) {
        seen_runs_.insert(run->run_id);
        leased[run->run_id] = &job;
      }
    });
    return leased;
  }

  // The executor's side of a run: pending, running, and (if `finish`) succeeded.
  void RunEvents(const JobRecord& job, const std::string& run_id, bool finish) {
    EventSequence seq;
    seq.set_queue(job.queue());
    seq.set_job_set(job.job_set());
    Event* e = seq.add_events();
    *e = NewEvent();
    e->mutable_job_run_pending()->set_job_id(job.id);
    e->mutable_job_run_pending()->set_run_id(run_id);
    e = seq.add_events();
    *e = NewEvent();
    e->mutable_job_run_running()->set_job_id(job.id);
    e->mutable_job_run_running()->set_run_id(run_id);
    if (finish) {
      e = seq.add_events();
      *e = NewEvent();
      e->mutable_job_run_succeeded()->set_job_id(job.id);
      e->mutable_job_run_succeeded()->set_run_id(run_id);
    }
    Append(std::move(seq));
  }

  // Saturates an 8-cpu node with one-cpu jobs of two queues, finishing the oldest two runs per
  // round, until `starts` jobs have started; returns the starts per queue.
  std::map<std::string, int> StartsUnderContention(int starts) {
    ReportNode("exec", "node", "8");
    std::map<std::string, int> per_queue;
    std::deque<std::pair<std::string, const JobRecord*>> running;
    int total = 0;
    for (int round = 0; round < 1000 && total < starts; ++round) {
      Ingested();
      for (const auto& [run_id, job] : Cycle()) {
        if (total == starts) break;
        ++per_queue[job->queue()];
        ++total;
        running.emplace_back(run_id, job);
        RunEvents(*job, run_id, /*finish=*/false);
      }
      for (int i = 0; i < 2 && !running.empty(); ++i) {
        auto [run_id, job] = running.front();
        running.pop_front();
        EventSequence seq;
        seq.set_queue(job->queue());
        seq.set_job_set(job->job_set());
        Event* e = seq.add_events();
        *e = NewEvent();
        e->mutable_job_run_succeeded()->set_job_id(job->id);
        e->mutable_job_run_succeeded()->set_run_id(run_id);
        Append(std::move(seq));
      }
    }
    return per_queue;
  }

  // Queues a and b with these priority factors, 200 one-cpu jobs each, on a saturated node.
  std::map<std::string, int> TwoQueuesUnderContention(double factor_a, double factor_b) {
    CreateQueue("a", factor_a);
    CreateQueue("b", factor_b);
    SubmitJobs("a", 200);
    SubmitJobs("b", 200);
    Ingested();
    StartScheduler();
    return StartsUnderContention(200);
  }

  std::filesystem::path dir_;
  FakeClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  SequentialIdGenerator ids_{"id-"};
  std::unique_ptr<eventlog::SqliteEventLog> log_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ingest::Ingester> ingester_;
  ExecutorRegistry registry_;
  std::unique_ptr<Scheduler> scheduler_;
  absl::flat_hash_set<std::string> seen_runs_;
};

TEST_F(SchedulerIntegrationTest, EqualWeightsGetEqualSharesOfStartedJobs) {
  // Equal weights: 100 each of the first 200 started (±5% of 200).
  std::map<std::string, int> starts = TwoQueuesUnderContention(1.0, 1.0);
  EXPECT_NEAR(starts["a"], 100, 10) << starts["a"] << " vs " << starts["b"];
  EXPECT_NEAR(starts["b"], 100, 10);
}

TEST_F(SchedulerIntegrationTest, WeightsOneToThreeGetOneToThreeShares) {
  // Weight = 1 / priority factor: a has weight 1/3, b weight 1, so 1:3 of the first 200
  // started: a 50, b 150 (±5% of 200).
  std::map<std::string, int> starts = TwoQueuesUnderContention(3.0, 1.0);
  EXPECT_NEAR(starts["a"], 50, 10) << starts["a"] << " vs " << starts["b"];
  EXPECT_NEAR(starts["b"], 150, 10);
}

TEST_F(SchedulerIntegrationTest, NoExecutorMeansNoLeasesAndSucceededRunsEndTheirJobs) {
  CreateQueue("q", 1.0);
  std::vector<std::string> ids = SubmitJobs("q", 3);
  Ingested();
  StartScheduler();
  EXPECT_TRUE(Cycle().empty());
  ReportNode("exec", "node", "2");
  std::map<std::string, const JobRecord*> leased = Cycle();
  ASSERT_EQ(leased.size(), 2u);  // two one-cpu jobs fill the node
  for (const auto& [run_id, job] : leased) RunEvents(*job, run_id, /*finish=*/true);
  Ingested();
  Cycle();  // sees the runs succeed: publishes JobSucceeded, and leases the third job
  Ingested();
  absl::StatusOr<std::vector<store::JobLocation>> jobs = store_->GetJobLocations(ids);
  ASSERT_TRUE(jobs.ok());
  std::map<regatta::v1::JobState, int> states;
  for (const auto& j : *jobs) ++states[j.state];
  EXPECT_EQ(states[regatta::v1::JOB_STATE_SUCCEEDED], 2);
  EXPECT_EQ(states[regatta::v1::JOB_STATE_LEASED], 1);
}

// A cycle only commits its decisions, leases as well as a job's end: the executor API makes a
// lease durable before an executor acts on it (ExecutorApiTest), and a crash that loses the
// tail is decided again from the durable log.
TEST_F(SchedulerIntegrationTest, ACycleOnlyCommitsItsDecisions) {
  CreateQueue("q", 1.0);
  SubmitJobs("q", 1);
  Ingested();
  RefusingLog log(log_.get());
  StartScheduler({}, &log);
  ReportNode("exec", "node", "2");
  const int durable = log.durable_appends;
  const int visible = log.visible_appends;
  std::map<std::string, const JobRecord*> leased = Cycle();
  ASSERT_EQ(leased.size(), 1u);
  EXPECT_EQ(log.durable_appends, durable);
  EXPECT_EQ(log.visible_appends, visible + 1);
  RunEvents(*leased.begin()->second, leased.begin()->first, /*finish=*/true);
  Ingested();
  EXPECT_TRUE(Cycle().empty());
  EXPECT_EQ(log.durable_appends, durable);
  EXPECT_EQ(log.visible_appends, visible + 2);
  int succeeded = 0;
  scheduler_->job_db().ForEachJob([&](const JobRecord& job) {
    succeeded += job.state == regatta::v1::JOB_STATE_SUCCEEDED ? 1 : 0;
  });
  EXPECT_EQ(succeeded, 1);
}

// Events of one kind in the whole log (Event::kJobRunLeased, kPartitionMarker, ...).
int CountEvents(eventlog::EventLog& log, Event::EventCase kind) {
  int count = 0;
  absl::StatusOr<std::vector<eventlog::LogRecord>> records = log.Read(0, 1'000'000);
  EXPECT_TRUE(records.ok()) << records.status();
  for (const auto& record : records.value_or(std::vector<eventlog::LogRecord>{})) {
    for (const Event& e : record.sequence.events()) count += e.event_case() == kind;
  }
  return count;
}

// Fair-share preemption hands the victim's room to the preemptor in the same cycle. The victim's
// process only ends a little later: no cycle in between, before or after the views say PREEMPTED,
// may count that room again (the node would look over-committed and a second victim be taken).
TEST_F(SchedulerIntegrationTest, APreemptedJobsRoomIsNotTakenTwiceWhileItsRunEnds) {
  CreateQueue("batch", 1.0);
  CreateQueue("other", 1.0);
  Ingested();
  SchedulerOptions options;
  options.policy.priority_classes["default"] = {
      .name = "default", .priority = 1000, .preemptible = true};
  StartScheduler(options);
  ReportNode("exec", "node", "2");
  std::vector<std::string> batch;
  std::map<std::string, std::string> run_of;
  for (int i = 0; i < 2; ++i) {  // one a second: the second is the younger
    batch.push_back(SubmitJobs("batch", 1).front());
    Ingested();
    for (const auto& [run_id, job] : Cycle()) {
      run_of[job->id] = run_id;
      RunEvents(*job, run_id, /*finish=*/false);
    }
    clock_.Advance(absl::Seconds(1));
  }
  ASSERT_EQ(run_of.size(), 2u);
  const std::string& older = batch[0];
  const std::string& younger = batch[1];
  auto state = [this](const std::string& id) { return scheduler_->job_db().FindJob(id)->state; };
  // Queue other arrives, holding nothing: batch holds twice its fair share and loses the younger.
  const std::string preemptor = SubmitJobs("other", 1).front();
  Ingested();
  ASSERT_EQ(Cycle().size(), 1u);
  EXPECT_EQ(state(younger), regatta::v1::JOB_STATE_PREEMPTED);
  EXPECT_EQ(state(older), regatta::v1::JOB_STATE_RUNNING);
  // More work for other keeps rounds running while the younger's process still ends.
  SubmitJobs("other", 1);
  EXPECT_TRUE(Cycle().empty());  // the views may not have the preemption yet
  Ingested();
  EXPECT_TRUE(Cycle().empty());  // they have it; the run is still active
  EXPECT_EQ(state(older), regatta::v1::JOB_STATE_RUNNING);
  EXPECT_EQ(state(preemptor), regatta::v1::JOB_STATE_LEASED);
  EXPECT_EQ(CountEvents(*log_, Event::kJobPreempted), 1);
}

// A leader election the test switches: token 0 = not the leader.
class SwitchableLeader : public LeaderElection {
 public:
  int64_t LeaderToken() const override { return token.load(); }
  int64_t AwaitLeadership(absl::Time) override { return token.load(); }
  std::atomic<int64_t> token{1};
};

// A submit handed over in process is placed before the views have it; when they catch up, their
// rows for it apply like any other and it is neither loaded nor leased twice.
TEST_F(SchedulerIntegrationTest, AJobHandedOverAtSubmitIsLeasedBeforeTheViewsHoldIt) {
  CreateQueue("q", 1.0);
  Ingested();
  StartScheduler();
  ReportNode("exec", "node", "4");
  PauseIngest();
  std::vector<std::shared_ptr<const regatta::v1::Job>> specs;
  int64_t offset = 0;
  const std::string id = SubmitJobs("q", 1, "1", &specs, &offset).front();
  scheduler_->AcceptSubmitted(offset, specs);
  ASSERT_NE(scheduler_->SubmittedSpec(id), nullptr);
  EXPECT_EQ(scheduler_->SubmittedSpec(id)->task().command(0), "/bin/true");
  std::map<std::string, const JobRecord*> leased = Cycle();
  ASSERT_EQ(leased.size(), 1u);
  EXPECT_EQ(leased.begin()->second->id, id);
  EXPECT_EQ(scheduler_->job_db().FindJob(id)->state, regatta::v1::JOB_STATE_LEASED);

  // The views catch up with the submit and the lease: one job, one run, no second lease, and the
  // spec is theirs to serve again.
  ResumeIngest();
  Ingested();
  EXPECT_TRUE(Cycle().empty());
  const JobRecord* job = scheduler_->job_db().FindJob(id);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->runs.size(), 1u);
  EXPECT_EQ(job->state, regatta::v1::JOB_STATE_LEASED);
  EXPECT_EQ(scheduler_->SubmittedSpec(id), nullptr);
  EXPECT_EQ(CountEvents(*log_, Event::kJobRunLeased), 1);

  // Handed over after the views have it: nothing is added.
  std::vector<std::shared_ptr<const regatta::v1::Job>> late;
  const std::string second = SubmitJobs("q", 1, "1", &late, &offset).front();
  Ingested();
  leased = Cycle();
  ASSERT_EQ(leased.size(), 1u);
  scheduler_->AcceptSubmitted(offset, late);
  EXPECT_TRUE(Cycle().empty());
  EXPECT_EQ(scheduler_->job_db().FindJob(second)->runs.size(), 1u);
  EXPECT_EQ(CountEvents(*log_, Event::kJobRunLeased), 2);
}

// The loop cycles soon (views_wake_delay) for what may need a decision (a new job, a run's
// end) and for nothing that only echoes its own decisions or an executor's progress: in a
// pipeline those were half of all cycles.
TEST_F(SchedulerIntegrationTest, TheViewsWakeTheLoopOnlyForChangesThatMayNeedADecision) {
  CreateQueue("q", 1.0);
  Ingested();
  SchedulerOptions options;
  options.cycle_period = absl::Hours(1);  // every cycle below is woken by the views
  StartScheduler(options);
  ObserveIngest();
  ReportNode("exec", "node", "4");  // straight into the registry: no executor wake-up
  ASSERT_TRUE(scheduler_->Start().ok());
  auto stats = [this] { return scheduler_->stats(); };

  const std::string id = SubmitJobs("q", 1).front();
  ASSERT_TRUE(Eventually([&] { return stats().leases == 1; }));
  Ingested();  // the lease's own rows: no cycle for them
  const std::string run_id = LastLeasedRunId();
  ASSERT_FALSE(run_id.empty());
  // The executor's side of the run, one event per record.
  auto report = [&](auto set_event) {
    EventSequence seq;
    seq.set_queue("q");
    seq.set_job_set("set");
    Event* e = seq.add_events();
    *e = NewEvent();
    set_event(*e);
    Append(std::move(seq));
  };
  const int64_t after_lease = stats().cycles;
  report([&](Event& e) {  // pending, running: no cycle either
    e.mutable_job_run_pending()->set_job_id(id);
    e.mutable_job_run_pending()->set_run_id(run_id);
  });
  report([&](Event& e) {
    e.mutable_job_run_running()->set_job_id(id);
    e.mutable_job_run_running()->set_run_id(run_id);
  });
  Ingested();
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(stats().cycles, after_lease);
  EXPECT_EQ(stats().decisions, 0);

  // The run's end needs a decision: a cycle at once publishes the job's success, whose own
  // rows wake nothing again.
  report([&](Event& e) {
    e.mutable_job_run_succeeded()->set_job_id(id);
    e.mutable_job_run_succeeded()->set_run_id(run_id);
  });
  ASSERT_TRUE(Eventually([&] { return stats().decisions == 1; }));
  const int64_t after_decision = stats().cycles;
  Ingested();
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(stats().cycles, after_decision);
  EXPECT_EQ(CountEvents(*log_, Event::kJobSucceeded), 1);

  // A job handed over at submit woke its own cycle; its views row wakes no other, while the row
  // of a job nobody handed over does. Told directly: with the job in the log, the ingester
  // could bring its row before the hand-over (an extra cycle, harmless, but not countable).
  // The views skip the lease of this job they never saw, with a warning.
  std::shared_ptr<regatta::v1::Job> handed_over = HandedOverJob("handed-over");
  scheduler_->AcceptSubmitted(log_->LastOffset() + 1, {handed_over});
  ASSERT_TRUE(Eventually([&] { return stats().leases == 2; }));
  const int64_t after_hand_over = stats().cycles;
  auto insert = [&](const regatta::v1::Job& job) {
    store::IngestBatch batch;
    batch.to_offset = log_->LastOffset();
    batch.mutations.push_back({batch.to_offset, store::JobInsert{job}});
    scheduler_->ViewsMoved(batch);
  };
  insert(*handed_over);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(stats().cycles, after_hand_over);
  regatta::v1::Job unknown = *handed_over;
  unknown.set_id("not-handed-over");
  insert(unknown);
  EXPECT_TRUE(Eventually([&] { return stats().cycles > after_hand_over; }));
  scheduler_->Stop();
}

// What the views ask for waits views_wake_delay for more to do; a hand-over starts a cycle at
// once, which then decides too: a pipeline chain's next step and its predecessor's outcome
// share one cycle.
TEST_F(SchedulerIntegrationTest, AViewsWakeWaitsAndAHandOverTakesItAlong) {
  CreateQueue("q", 1.0);
  Ingested();
  SchedulerOptions options;
  options.cycle_period = absl::Hours(1);
  options.views_wake_delay = absl::Seconds(2);
  StartScheduler(options);
  ObserveIngest();
  ReportNode("exec", "node", "4");
  ASSERT_TRUE(scheduler_->Start().ok());
  auto stats = [this] { return scheduler_->stats(); };
  // The term's first cycle runs at once: a job in the views by then would be placed by it.
  ASSERT_TRUE(Eventually([&] { return stats().cycles >= 1; }));

  // A job submitted through the views (not handed over) is placed after the delay.
  const absl::Time submitted = absl::Now();
  const std::string first = SubmitJobs("q", 1).front();
  Ingested();
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(stats().leases, 0);
  ASSERT_TRUE(Eventually([&] { return stats().leases == 1; }));
  EXPECT_GE(absl::Now() - submitted, absl::Seconds(1.5));
  Ingested();
  const std::string run_id = LastLeasedRunId();
  ASSERT_FALSE(run_id.empty());

  // Its run ends: the outcome waits...
  const int64_t before = stats().cycles;
  EventSequence seq;
  seq.set_queue("q");
  seq.set_job_set("set");
  *seq.add_events() = NewEvent();
  seq.mutable_events(0)->mutable_job_run_succeeded()->set_job_id(first);
  seq.mutable_events(0)->mutable_job_run_succeeded()->set_run_id(run_id);
  Append(std::move(seq));
  Ingested();
  absl::SleepFor(absl::Milliseconds(200));
  EXPECT_EQ(stats().cycles, before);
  // ...until a job is handed over: one cycle at once places it and decides the outcome.
  std::shared_ptr<regatta::v1::Job> next = HandedOverJob("next-step");
  const absl::Time handed = absl::Now();
  scheduler_->AcceptSubmitted(log_->LastOffset() + 1, {next});
  ASSERT_TRUE(Eventually([&] { return stats().leases == 2; }));
  EXPECT_LT(absl::Now() - handed, absl::Seconds(1.5));
  EXPECT_EQ(stats().decisions, 1);
  EXPECT_EQ(stats().cycles, before + 1);
  scheduler_->Stop();
}

// A cycle that stops at its own lease limit goes on at once, though its leases' rows wake nobody.
TEST_F(SchedulerIntegrationTest, ACycleStoppedByItsLeaseLimitGoesOnAtOnce) {
  CreateQueue("q", 1.0);
  SubmitJobs("q", 3);
  Ingested();
  SchedulerOptions options;
  options.cycle_period = absl::Hours(1);
  options.max_leases_per_cycle = 1;
  StartScheduler(options);
  ObserveIngest();
  ReportNode("exec", "node", "4");
  ASSERT_TRUE(scheduler_->Start().ok());
  EXPECT_TRUE(Eventually([&] { return scheduler_->stats().leases == 3; }))
      << scheduler_->stats().leases << " leases";
  scheduler_->Stop();
}

TEST_F(SchedulerIntegrationTest, AHandOverToASchedulerThatDoesNotLeadIsIgnored) {
  CreateQueue("q", 1.0);
  Ingested();
  SwitchableLeader leader;
  leader.token = 0;
  MakeScheduler(SchedulerOptions{}, &leader);
  std::vector<std::shared_ptr<const regatta::v1::Job>> specs;
  int64_t offset = 0;
  const std::string id = SubmitJobs("q", 1, "1", &specs, &offset).front();
  scheduler_->AcceptSubmitted(offset, specs);
  EXPECT_EQ(scheduler_->SubmittedSpec(id), nullptr);
}

TEST_F(SchedulerIntegrationTest, RefusedPublishLeavesTheJobDbAsItWas) {
  CreateQueue("q", 1.0);
  SubmitJobs("q", 2);
  Ingested();
  RefusingLog log(log_.get());
  StartScheduler({}, &log);
  ReportNode("exec", "node", "2");
  const int64_t version = scheduler_->job_db().Version();
  log.refuse = true;
  EXPECT_FALSE(scheduler_->RunCycle().ok());
  // The leases were never durable: the JobDb shows none of them.
  EXPECT_EQ(scheduler_->job_db().Version(), version);
  EXPECT_THAT(scheduler_->job_db().ActiveRunsOf("exec"), ::testing::IsEmpty());
  int queued = 0;
  scheduler_->job_db().ForEachJob([&](const JobRecord& job) {
    EXPECT_THAT(job.runs, ::testing::IsEmpty());
    queued += job.state == regatta::v1::JOB_STATE_QUEUED ? 1 : 0;
  });
  EXPECT_EQ(queued, 2);
  // Once the log takes appends again, the next cycle leases both.
  log.refuse = false;
  EXPECT_EQ(Cycle().size(), 2u);
  EXPECT_EQ(scheduler_->job_db().ActiveRunsOf("exec").size(), 2u);
}

TEST_F(SchedulerIntegrationTest, JobsStoredBeforeTemplatesLoadFromTheirSpecs) {
  CreateQueue("q", 1.0);
  SubmitJobs("q", 2, "2");
  Ingested();
  // One of them runs: its run must come back with it, though the job loads after the runs.
  StartScheduler();
  ReportNode("exec", "node", "2");
  ASSERT_EQ(Cycle().size(), 1u);
  Ingested();
  // As after the upgrade to templates: the views' rows name none.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "views.db").string().c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE jobs SET template_id = 0", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  StartScheduler();
  EXPECT_EQ(scheduler_->job_db().size(), 2u);
  scheduler_->job_db().ForEachJob([](const JobRecord& job) {
    EXPECT_EQ(job.requests().Get(ResourceNames::kCpu), Quantity::FromUnits(2));
  });
  EXPECT_EQ(scheduler_->job_db().template_count(), 1u);
  EXPECT_EQ(scheduler_->job_db().ActiveRunsOf("exec").size(), 1u);
  ReportNode("exec", "node", "4");
  EXPECT_EQ(Cycle().size(), 1u);  // the other job, next to the running one
}

TEST_F(SchedulerIntegrationTest, LostExecutorRunsExpireAndRequeueUntilRetriesRunOut) {
  CreateQueue("q", 1.0);
  std::vector<std::string> ids = SubmitJobs("q", 1);
  Ingested();
  SchedulerOptions options;
  options.default_max_retries = 1;
  StartScheduler(options);
  for (int attempt = 0; attempt < 2; ++attempt) {
    ReportNode("exec", "node", "2");
    // A requeued job is placed in the cycle after its requeue is in the views.
    std::map<std::string, const JobRecord*> leased;
    for (int i = 0; i < 5 && leased.empty(); ++i) {
      Ingested();
      leased = Cycle();
    }
    ASSERT_EQ(leased.size(), 1u) << "attempt " << attempt;
    clock_.Advance(absl::Seconds(31));  // the executor goes silent past the timeout
    Cycle();                            // expires the run and decides: requeue, then fail
    Ingested();
  }
  Cycle();
  Ingested();
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> details = store_->GetJobDetails(ids, false);
  ASSERT_TRUE(details.ok());
  ASSERT_EQ(details->size(), 1u);
  const regatta::v1::JobDetails& job = details->front();
  EXPECT_EQ(job.summary().state(), regatta::v1::JOB_STATE_FAILED);
  EXPECT_EQ(job.error().reason(), regatta::v1::ERROR_REASON_MAX_RETRIES_EXCEEDED);
  ASSERT_EQ(job.runs_size(), 2);
  EXPECT_EQ(job.runs(0).state(), regatta::v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_EQ(job.runs(1).state(), regatta::v1::RUN_STATE_LEASE_EXPIRED);
}

TEST_F(SchedulerIntegrationTest, AFailFastJobIsNotRetriedWhenItsRunExpires) {
  CreateQueue("q", 1.0);
  // Armada's failFast: the run that fails ends the job, retries left or not.
  std::vector<std::string> ids =
      SubmitJobs("q", 1, "1", nullptr, nullptr, {{"armadaproject.io/failFast", "true"}});
  Ingested();
  SchedulerOptions options;
  options.default_max_retries = 3;
  StartScheduler(options);
  ReportNode("exec", "node", "2");
  std::map<std::string, const JobRecord*> leased;
  for (int i = 0; i < 5 && leased.empty(); ++i) {
    Ingested();
    leased = Cycle();
  }
  ASSERT_EQ(leased.size(), 1u);
  clock_.Advance(absl::Seconds(31));  // the executor goes silent past the timeout
  Cycle();                            // expires the run and decides: failed, no requeue
  Ingested();
  Cycle();
  Ingested();
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> details = store_->GetJobDetails(ids, false);
  ASSERT_TRUE(details.ok());
  ASSERT_EQ(details->size(), 1u);
  const regatta::v1::JobDetails& job = details->front();
  EXPECT_EQ(job.summary().state(), regatta::v1::JOB_STATE_FAILED);
  EXPECT_TRUE(job.error().terminal());
  EXPECT_THAT(job.error().message(), ::testing::HasSubstr("not retried"));
  ASSERT_EQ(job.runs_size(), 1);
  EXPECT_EQ(job.runs(0).state(), regatta::v1::RUN_STATE_LEASE_EXPIRED);
}

TEST_F(SchedulerIntegrationTest, CancelOfQueuedJobIsDecidedAndNeverLeased) {
  CreateQueue("q", 1.0);
  std::vector<std::string> ids = SubmitJobs("q", 1);
  EventSequence cancel;
  cancel.set_queue("q");
  cancel.set_job_set("set");
  Event* e = cancel.add_events();
  *e = NewEvent();
  e->mutable_cancel_job()->set_job_id(ids[0]);
  e->mutable_cancel_job()->set_reason("changed my mind");
  Append(std::move(cancel));
  Ingested();
  StartScheduler();
  ReportNode("exec", "node", "2");
  EXPECT_TRUE(Cycle().empty());
  Ingested();
  absl::StatusOr<std::vector<store::JobLocation>> jobs = store_->GetJobLocations(ids);
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->front().state, regatta::v1::JOB_STATE_CANCELLED);
}

TEST_F(SchedulerIntegrationTest, OnlyTheLeaderDecidesAndANewTermCatchesUpFirst) {
  SwitchableLeader leader;
  CreateQueue("a", 1);
  SubmitJobs("a", 2);
  ReportNode("exec", "node", "8");
  Ingested();
  MakeScheduler(SchedulerOptions{}, &leader);
  ASSERT_TRUE(scheduler_->Initialize().ok());
  EXPECT_EQ(CountEvents(*log_, Event::kPartitionMarker), 1);
  EXPECT_EQ(Cycle().size(), 2u);

  // Leadership moves away mid-term: the cycle publishes nothing and the JobDb is dropped.
  leader.token = 0;
  SubmitJobs("a", 2);
  Ingested();
  EXPECT_EQ(scheduler_->RunCycle().code(), absl::StatusCode::kAborted);
  EXPECT_FALSE(scheduler_->ready());
  EXPECT_EQ(scheduler_->job_db().size(), 0u);
  EXPECT_EQ(CountEvents(*log_, Event::kJobRunLeased), 2);
  EXPECT_EQ(scheduler_->Initialize().code(), absl::StatusCode::kUnavailable);

  // A new term: the catch-up marker again, then the two new jobs are leased (the first two
  // still hold their runs, so they are not leased twice).
  leader.token = 2;
  ASSERT_TRUE(scheduler_->Initialize().ok());
  EXPECT_EQ(CountEvents(*log_, Event::kPartitionMarker), 2);
  EXPECT_TRUE(scheduler_->ready());
  EXPECT_EQ(Cycle().size(), 2u);
  EXPECT_EQ(CountEvents(*log_, Event::kJobRunLeased), 4);
}

TEST_F(SchedulerIntegrationTest, ReportsSayWhyJobsWaitAndHowQueuesShare) {
  SchedulingReports reports;
  CreateQueue("a", 1);
  CreateQueue("b", 1);
  std::vector<std::string> fits = SubmitJobs("a", 1, "2");
  std::vector<std::string> never = SubmitJobs("b", 1, "100");
  ReportNode("exec", "node", "8");
  Ingested();
  StartScheduler();
  scheduler_->set_reports(&reports);
  EXPECT_FALSE(reports.ready());
  EXPECT_EQ(Cycle().size(), 1u);
  EXPECT_TRUE(reports.ready());

  EXPECT_TRUE(reports.ReasonsFor(fits[0]).empty());
  std::vector<JobReason> reasons = reports.ReasonsFor(never[0]);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0].pool, "default");
  EXPECT_EQ(reasons[0].code, "NO_NODE_MATCHES");
  EXPECT_THAT(reasons[0].reason, ::testing::HasSubstr("needs 100 cpu"));

  // Two active queues of equal weight: fair share 1/2 each; a holds 2 of 8 cpus.
  std::vector<QueueShareReport> queues = reports.Queues();
  ASSERT_EQ(queues.size(), 2u);
  EXPECT_EQ(queues[0].queue, "a");
  EXPECT_DOUBLE_EQ(queues[0].fair_share, 0.5);
  EXPECT_DOUBLE_EQ(queues[0].actual_share, 0.25);
  EXPECT_EQ(queues[0].leased, 1);
  EXPECT_EQ(reports.Queues("b").size(), 1u);
}

}  // namespace
}  // namespace regatta::scheduler
