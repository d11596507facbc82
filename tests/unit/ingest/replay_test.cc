// THE replay test: a realistic log ingested live, in chunks, while it is being written (with an
// ingester restart half way) gives exactly the views that replaying the whole log from offset 0
// into an empty store gives; and both match an independent model of the state machine.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "src/common/clock.h"
#include "src/ingest/ingester.h"
#include "src/store/sqlite/sqlite_store.h"
#include "tests/testing/in_memory_event_log.h"
#include "tests/unit/ingest/test_events.h"

namespace regatta::ingest {
namespace {

using namespace ::regatta::ingest::testing;  // NOLINT: test builders
using regatta::v1::Event;
using regatta::v1::EventSequence;
using regatta::v1::JobState;
using regatta::v1::RunState;

bool Terminal(JobState s) { return store::IsTerminal(s); }

// What the views should say about a job, tracked independently of the store.
struct ModelJob {
  int index = 0;
  std::string queue;
  std::string job_set;
  JobState state = regatta::v1::JOB_STATE_QUEUED;
  bool cancel_requested = false;
  bool preempt_requested = false;
  uint32_t priority = 0;
  std::vector<int> runs;  // oldest first
};

struct ModelQueue {
  double factor = 1.0;
  bool cordoned = false;
  bool live = true;
};

// Writes a plausible log: queues, submits across job sets, scheduling and run outcomes,
// cancels (by job and by job set with state filters), reprioritizations, preemptions, queue
// updates/cordons/deletes, and some events the views cannot apply.
class LogGenerator {
 public:
  explicit LogGenerator(uint32_t seed) : rng_(seed) {}

  std::vector<EventSequence> Generate(int target_jobs) {
    for (int q = 0; q < 4; ++q) {
      std::string name = absl::StrCat("q", q);
      queues_[name] = ModelQueue{};
      Emit(name, "", {QueueCreated(Tick(), MakeQueue(name))}, "admin");
    }
    while (next_job_ < target_jobs || steps_after_ < 400) {
      if (next_job_ >= target_jobs) ++steps_after_;
      int op = Uniform(0, 99);
      if (op < 25 && next_job_ < target_jobs) {
        SubmitSome();
      } else if (op < 42) {
        LeaseSome();
      } else if (op < 72) {
        ProgressSome();
      } else if (op < 77) {
        CancelSome();
      } else if (op < 81) {
        CancelAJobSet();
      } else if (op < 86) {
        ReprioritizeSome();
      } else if (op < 89) {
        PreemptSome();
      } else if (op < 92) {
        QueueOp();
      } else if (op < 94) {
        RejectSome();
      } else if (op < 97) {
        Junk();
      } else {
        LateOrDuplicate();
      }
      if (Chance(10)) PipelineOp();
    }
    return std::move(out_);
  }

  const std::map<int, ModelJob>& jobs() const { return jobs_; }
  const std::map<std::string, ModelQueue>& queues() const { return queues_; }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(int percent) { return Uniform(0, 99) < percent; }
  int64_t Tick() { return ms_ += Uniform(1, 20); }

  void Emit(const std::string& queue, const std::string& job_set, std::vector<Event> events,
            const std::string& user = "alice") {
    out_.push_back(Sequence(queue, job_set, std::move(events), user));
  }

  // Events per job set, one sequence each (the log orders events per job set).
  using Grouped = std::map<std::pair<std::string, std::string>, std::vector<Event>>;
  void EmitGrouped(Grouped grouped, const std::string& user) {
    for (auto& [key, events] : grouped) Emit(key.first, key.second, std::move(events), user);
  }

  // Up to `n` random jobs satisfying `pred`.
  template <typename Pred>
  std::vector<ModelJob*> Pick(int n, Pred pred) {
    std::vector<ModelJob*> matching;
    for (auto& [i, job] : jobs_) {
      if (pred(job)) matching.push_back(&job);
    }
    std::shuffle(matching.begin(), matching.end(), rng_);
    if (static_cast<int>(matching.size()) > n) matching.resize(n);
    return matching;
  }

  static bool HasActiveRun(const ModelJob& j) {
    return j.state == regatta::v1::JOB_STATE_LEASED || j.state == regatta::v1::JOB_STATE_PENDING ||
           j.state == regatta::v1::JOB_STATE_RUNNING;
  }

  void SubmitSome() {
    std::string queue = absl::StrCat("q", Uniform(0, 3));
    std::string job_set = absl::StrCat("set-", Uniform(0, 5));
    int n = Uniform(1, 40);
    std::vector<Event> events;
    for (int k = 0; k < n; ++k) {
      int index = next_job_++;
      ModelJob job;
      job.index = index;
      job.queue = queue;
      job.job_set = job_set;
      job.priority = static_cast<uint32_t>(Uniform(0, 3));
      events.push_back(Submit(Tick(), MakeJob(index, queue, job_set, job.priority)));
      jobs_[index] = job;
    }
    Emit(queue, job_set, std::move(events));
  }

  void LeaseSome() {
    Grouped grouped;
    for (ModelJob* j : Pick(Uniform(1, 30), [](const ModelJob& j) {
           return j.state == regatta::v1::JOB_STATE_QUEUED;
         })) {
      int run = next_run_++;
      j->runs.push_back(run);
      j->state = regatta::v1::JOB_STATE_LEASED;
      grouped[{j->queue, j->job_set}].push_back(
          Leased(Tick(), j->index, run, absl::StrCat("node-", run % 7)));
    }
    EmitGrouped(std::move(grouped), "scheduler");
  }

  void ProgressSome() {
    Grouped grouped;
    for (ModelJob* j : Pick(Uniform(1, 30), HasActiveRun)) {
      auto& events = grouped[{j->queue, j->job_set}];
      int run = j->runs.back();
      int roll = Uniform(0, 99);
      switch (j->state) {
        case regatta::v1::JOB_STATE_LEASED:
          if (roll < 80) {
            events.push_back(Pending(Tick(), j->index, run));
            j->state = regatta::v1::JOB_STATE_PENDING;
          } else {
            events.push_back(LeaseReturned(Tick(), j->index, run, "image pull failed"));
            events.push_back(Requeued(Tick(), j->index));
            j->state = regatta::v1::JOB_STATE_QUEUED;
          }
          break;
        case regatta::v1::JOB_STATE_PENDING:
          if (roll < 90) {
            events.push_back(Running(Tick(), j->index, run));
            j->state = regatta::v1::JOB_STATE_RUNNING;
          } else {
            events.push_back(LeaseExpired(Tick(), j->index, run));
            events.push_back(Requeued(Tick(), j->index));
            j->state = regatta::v1::JOB_STATE_QUEUED;
          }
          break;
        default:  // RUNNING
          if (roll < 50) {
            events.push_back(RunSucceeded(Tick(), j->index, run));
            events.push_back(Succeeded(Tick(), j->index));
            j->state = regatta::v1::JOB_STATE_SUCCEEDED;
          } else if (roll < 65) {
            events.push_back(RunFailed(Tick(), j->index, run, 2, true));
            events.push_back(Failed(Tick(), j->index, 2));
            j->state = regatta::v1::JOB_STATE_FAILED;
          } else if (roll < 80) {
            events.push_back(RunFailed(Tick(), j->index, run, 137, false));
            events.push_back(Requeued(Tick(), j->index));
            j->state = regatta::v1::JOB_STATE_QUEUED;
          } else if (roll < 90) {
            events.push_back(RunPreempted(Tick(), j->index, run));
            events.push_back(Preempted(Tick(), j->index, run, 0));
            j->state = regatta::v1::JOB_STATE_PREEMPTED;
          } else {
            events.push_back(LeaseExpired(Tick(), j->index, run));
            events.push_back(Requeued(Tick(), j->index));
            j->state = regatta::v1::JOB_STATE_QUEUED;
          }
          break;
      }
    }
    EmitGrouped(std::move(grouped), "executor");
  }

  // The scheduler acting on cancel requests.
  void SchedulerCancels(const std::vector<ModelJob*>& jobs) {
    Grouped grouped;
    for (ModelJob* j : jobs) {
      if (Terminal(j->state)) continue;
      auto& events = grouped[{j->queue, j->job_set}];
      if (HasActiveRun(*j)) events.push_back(RunCancelled(Tick(), j->index, j->runs.back()));
      events.push_back(Cancelled(Tick(), j->index, "cancel requested"));
      j->state = regatta::v1::JOB_STATE_CANCELLED;
    }
    EmitGrouped(std::move(grouped), "scheduler");
  }

  void CancelSome() {
    std::vector<ModelJob*> picked = Pick(Uniform(1, 5), [](const ModelJob&) { return true; });
    Grouped grouped;
    for (ModelJob* j : picked) {
      grouped[{j->queue, j->job_set}].push_back(CancelJob(Tick(), j->index, "not needed"));
      if (!Terminal(j->state)) j->cancel_requested = true;
    }
    EmitGrouped(std::move(grouped), "bob");
    if (Chance(60)) SchedulerCancels(picked);
  }

  void CancelAJobSet() {
    std::string queue = absl::StrCat("q", Uniform(0, 3));
    std::string job_set = absl::StrCat("set-", Uniform(0, 5));
    static const std::vector<std::vector<JobState>> kFilters = {
        {},
        {regatta::v1::JOB_STATE_QUEUED},
        {regatta::v1::JOB_STATE_RUNNING, regatta::v1::JOB_STATE_PENDING},
        {regatta::v1::JOB_STATE_LEASED},
        {regatta::v1::JOB_STATE_SUCCEEDED},
    };
    const std::vector<JobState>& filter = kFilters[Uniform(0, kFilters.size() - 1)];
    std::vector<ModelJob*> marked;
    for (auto& [i, j] : jobs_) {
      if (j.queue != queue || j.job_set != job_set || Terminal(j.state)) continue;
      if (!filter.empty() && std::find(filter.begin(), filter.end(), j.state) == filter.end()) {
        continue;
      }
      j.cancel_requested = true;
      marked.push_back(&j);
    }
    Emit(queue, job_set, {CancelJobSet(Tick(), filter, "clean up")}, "carol");
    if (Chance(50)) SchedulerCancels(marked);
  }

  void ReprioritizeSome() {
    Grouped requests;
    Grouped confirmations;
    for (ModelJob* j : Pick(Uniform(1, 10), [](const ModelJob&) { return true; })) {
      uint32_t priority = static_cast<uint32_t>(Uniform(0, 9));
      requests[{j->queue, j->job_set}].push_back(ReprioritizeJob(Tick(), j->index, priority));
      if (Terminal(j->state)) continue;
      j->priority = priority;
      confirmations[{j->queue, j->job_set}].push_back(Reprioritized(Tick(), j->index, priority));
    }
    EmitGrouped(std::move(requests), "alice");
    // The scheduler confirms some, with the same priority.
    if (Chance(50)) EmitGrouped(std::move(confirmations), "scheduler");
  }

  void PreemptSome() {
    std::vector<ModelJob*> picked = Pick(
        Uniform(1, 3), [](const ModelJob& j) { return j.state == regatta::v1::JOB_STATE_RUNNING; });
    Grouped grouped;
    for (ModelJob* j : picked) {
      grouped[{j->queue, j->job_set}].push_back(PreemptJob(Tick(), j->index, "make room"));
      j->preempt_requested = true;
    }
    EmitGrouped(std::move(grouped), "admin");
    if (Chance(50)) {
      Grouped outcomes;
      for (ModelJob* j : picked) {
        auto& events = outcomes[{j->queue, j->job_set}];
        events.push_back(RunPreempted(Tick(), j->index, j->runs.back()));
        events.push_back(Preempted(Tick(), j->index, j->runs.back(), 1));
        j->state = regatta::v1::JOB_STATE_PREEMPTED;
      }
      EmitGrouped(std::move(outcomes), "scheduler");
    }
  }

  void QueueOp() {
    int roll = Uniform(0, 2);
    if (roll == 0) {
      std::string name = absl::StrCat("q", Uniform(0, 3));
      double factor = Uniform(1, 4);
      queues_[name].factor = factor;
      regatta::v1::Queue queue = MakeQueue(name, factor);
      queue.set_cordoned(queues_[name].cordoned);
      Emit(name, "", {QueueUpdated(Tick(), queue)}, "admin");
    } else if (roll == 1) {
      std::string name = absl::StrCat("q", Uniform(0, 3));
      queues_[name].cordoned = !queues_[name].cordoned;
      Emit(name, "", {QueueCordoned(Tick(), name, queues_[name].cordoned)}, "admin");
    } else {
      auto it = queues_.find("tmp");
      if (it != queues_.end() && it->second.live) {
        it->second.live = false;
        Emit("tmp", "", {QueueDeleted(Tick(), "tmp")}, "admin");
      } else {
        queues_["tmp"] = ModelQueue{};
        Emit("tmp", "", {QueueCreated(Tick(), MakeQueue("tmp"))}, "admin");
      }
    }
  }

  void RejectSome() {
    Grouped grouped;
    for (ModelJob* j : Pick(Uniform(1, 3), [](const ModelJob& j) {
           return j.state == regatta::v1::JOB_STATE_QUEUED;
         })) {
      grouped[{j->queue, j->job_set}].push_back(Rejected(Tick(), j->index));
      j->state = regatta::v1::JOB_STATE_REJECTED;
    }
    EmitGrouped(std::move(grouped), "scheduler");
  }

  void Junk() {
    Event empty = At(Tick());
    Emit("q0", "set-0",
         {Running(Tick(), 9'999'999, 9'999'999), CancelJob(Tick(), 9'999'998), empty,
          Marker(Tick(), "leader-1"), Succeeded(Tick(), 9'999'997)},
         "mallory");
  }

  void LateOrDuplicate() {
    // A late event of an earlier run must not move a job that has a newer run.
    std::vector<ModelJob*> multi =
        Pick(1, [](const ModelJob& j) { return j.runs.size() >= 2 && !Terminal(j.state); });
    if (!multi.empty()) {
      ModelJob* j = multi[0];
      Emit(j->queue, j->job_set, {Running(Tick(), j->index, j->runs[j->runs.size() - 2])},
           "executor");
    }
    // A resubmitted job id changes nothing.
    std::vector<ModelJob*> any = Pick(1, [](const ModelJob&) { return true; });
    if (!any.empty()) {
      ModelJob* j = any[0];
      Emit(j->queue, j->job_set, {Submit(Tick(), MakeJob(j->index, j->queue, j->job_set, 99))});
    }
  }

  // Pipeline events (API server and engine) among the batch traffic: runs and their tasks
  // through random states (retries, late updates of terminal ones), lineage between tasks of
  // different runs, cache entries, recurring runs, archives and deletions, name clashes and
  // events for deleted runs, which the views must skip alike live and on replay.
  void PipelineOp() {
    const int op = Uniform(0, 99);
    Event e = At(Tick());
    if (op < 15 || pipeline_runs_.empty()) {
      std::string id = absl::StrCat("prun-", pipeline_runs_.size());
      auto* run = e.mutable_pipeline_run_created()->mutable_run();
      run->set_id(id);
      run->set_display_name(absl::StrCat("run ", Uniform(0, 20)));
      run->set_experiment_id(absl::StrCat("exp-", Uniform(0, 2)));
      run->set_spec_json(absl::StrCat("{\"pipelineInfo\":{\"name\":\"p", Uniform(0, 3), "\"}}"));
      run->set_queue("q0");
      run->set_state(regatta::v1::PIPELINE_RUN_STATE_PENDING);
      *run->mutable_create_time() = e.created();
      if (Chance(30)) {
        run->set_recurring_run_id(absl::StrCat("rr-", Uniform(0, 1)));
        *run->mutable_scheduled_time() = e.created();
      }
      pipeline_runs_.push_back(id);
      Emit("q0", absl::StrCat("pipeline-run-", id), {std::move(e)}, "api");
      return;
    }
    const std::string run_id =
        pipeline_runs_[Uniform(0, static_cast<int>(pipeline_runs_.size()) - 1)];
    const std::string job_set = absl::StrCat("pipeline-run-", run_id);
    if (op < 55) {
      auto* update = e.mutable_pipeline_task_updated();
      update->set_run_id(run_id);
      regatta::v1::PipelineTask* task = update->mutable_task();
      task->set_path(absl::StrCat("step-", Uniform(0, 4)));
      task->set_state(static_cast<regatta::v1::PipelineTaskState>(Uniform(1, 9)));
      (*task->mutable_input_parameters())["x"] = absl::StrCat(Uniform(0, 9));
      if (Chance(50)) {
        regatta::v1::PipelineArtifact* out =
            (*task->mutable_output_artifacts())["out"].add_artifacts();
        out->set_id(absl::StrCat("art-", artifacts_.size()));
        out->set_uri(absl::StrCat("file:///artifacts/", out->id()));
        if (Chance(20)) out->set_run_id("prun-0");  // as if republished from another run
        artifacts_.push_back(out->id());
      }
      if (Chance(50) && !artifacts_.empty()) {
        (*task->mutable_input_artifacts())["in"].add_artifacts()->set_id(
            artifacts_[Uniform(0, static_cast<int>(artifacts_.size()) - 1)]);
      }
      Emit("q0", job_set, {std::move(e)}, "engine");
    } else if (op < 75) {
      auto* update = e.mutable_pipeline_run_updated();
      update->set_run_id(run_id);
      update->set_state(static_cast<regatta::v1::PipelineRunState>(Uniform(1, 7)));
      if (Chance(30)) update->set_error_message("step failed");
      if (Chance(40)) *update->mutable_start_time() = e.created();
      if (Chance(40)) *update->mutable_finish_time() = e.created();
      if (Chance(20)) (*update->mutable_outputs())["y"] = absl::StrCat(Uniform(0, 9));
      Emit("q0", job_set, {std::move(e)}, "engine");
    } else if (op < 82) {
      regatta::v1::CacheEntry* entry = e.mutable_cache_entry_created()->mutable_entry();
      entry->set_fingerprint(absl::StrCat("fp-", Uniform(0, 30)));
      entry->set_run_id(run_id);
      if (Chance(50)) *entry->mutable_expire_time() = e.created();
      Emit("", "", {std::move(e)}, "engine");
    } else if (op < 86) {
      e.mutable_cache_entries_deleted()->add_fingerprints(absl::StrCat("fp-", Uniform(0, 30)));
      Emit("", "", {std::move(e)}, "carol");
    } else if (op < 90) {
      regatta::v1::RecurringRun* rr = e.mutable_recurring_run_upserted()->mutable_recurring_run();
      rr->set_id(absl::StrCat("rr-", Uniform(0, 1)));
      rr->set_enabled(Chance(70));
      rr->mutable_cron()->set_cron("0 * * * * *");
      Emit("", "", {std::move(e)}, "api");
    } else if (op < 94) {
      e.mutable_pipeline_run_archived()->set_run_id(run_id);
      e.mutable_pipeline_run_archived()->set_archived(Chance(70));
      Emit("", "", {std::move(e)}, "api");
    } else if (op < 96) {
      e.mutable_pipeline_run_deleted()->set_run_id(run_id);  // later events for it are skipped
      Emit("", "", {std::move(e)}, "api");
    } else {
      // Names clash now and then: the later id is skipped.
      const int n = Uniform(0, 20);
      regatta::v1::Pipeline* pipeline = e.mutable_pipeline_created()->mutable_pipeline();
      pipeline->set_id(absl::StrCat("pl-", n));
      pipeline->set_name(absl::StrCat("name-", n % 7));
      Event version = At(Tick());
      regatta::v1::PipelineVersion* v =
          version.mutable_pipeline_version_created()->mutable_version();
      v->set_id(absl::StrCat("pv-", Uniform(0, 50)));
      v->set_pipeline_id(pipeline->id());
      v->set_name(absl::StrCat("v", Uniform(0, 3)));
      *v->mutable_create_time() = version.created();
      Event experiment = At(Tick());
      regatta::v1::Experiment* x = experiment.mutable_experiment_upserted()->mutable_experiment();
      x->set_id(absl::StrCat("exp-", Uniform(0, 4)));
      x->set_name(absl::StrCat("experiment-", Uniform(0, 3)));
      x->set_archived(Chance(20));
      Emit("", "", {std::move(e), std::move(version), std::move(experiment)}, "api");
    }
  }

  std::vector<std::string> pipeline_runs_;
  std::vector<std::string> artifacts_;
  std::mt19937 rng_;
  int64_t ms_ = 0;
  int next_job_ = 0;
  int next_run_ = 1;
  int steps_after_ = 0;
  std::map<int, ModelJob> jobs_;
  std::map<std::string, ModelQueue> queues_;
  std::vector<EventSequence> out_;
};

std::string FirstDifference(const std::string& a, const std::string& b) {
  std::vector<absl::string_view> la = absl::StrSplit(a, '\n');
  std::vector<absl::string_view> lb = absl::StrSplit(b, '\n');
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    absl::string_view x = i < la.size() ? la[i] : "<end>";
    absl::string_view y = i < lb.size() ? lb[i] : "<end>";
    if (x != y) return absl::StrCat("line ", i + 1, ":\n  live:   ", x, "\n  replay: ", y);
  }
  return "no difference";
}

class ReplayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ =
        absl::StrCat((tmp != nullptr && *tmp) ? tmp : "/tmp", "/regatta_replay_XXXXXX");
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::unique_ptr<store::SqliteStore> OpenStore(const std::string& name) {
    auto store = store::SqliteStore::Open(dir_ + "/" + name);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  std::string dir_;
  RealClock clock_;
};

TEST_F(ReplayTest, LiveIngestionEqualsReplayFromZero) {
  LogGenerator generator(20261129);
  std::vector<EventSequence> sequences = generator.Generate(/*target_jobs=*/5000);
  ASSERT_GT(sequences.size(), 1000u);

  regatta::testing::InMemoryEventLog log;
  std::unique_ptr<store::SqliteStore> live = OpenStore("live.db");
  ASSERT_NE(live, nullptr);
  IngesterOptions small_batches;
  small_batches.max_records_per_batch = 37;
  small_batches.poll_timeout = absl::Milliseconds(20);
  auto ingester = std::make_unique<Ingester>(&log, live.get(), &clock_, "query", small_batches);
  ASSERT_TRUE(ingester->Start().ok());

  // Readers query the views while they are being written.
  std::atomic<bool> stop_readers{false};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!stop_readers.load()) {
      auto jobs = live->ListJobs({.states = {regatta::v1::JOB_STATE_RUNNING}, .limit = 500});
      ASSERT_TRUE(jobs.ok()) << jobs.status();
      auto set = live->GetJobSetJobs("q1", "set-2", {});
      ASSERT_TRUE(set.ok()) << set.status();
      ++reads;
      absl::SleepFor(absl::Milliseconds(2));
    }
  });

  // Append in uneven chunks; sometimes let the ingester catch up and idle, and restart it half
  // way so it resumes from its stored offset.
  std::mt19937 rng(7);
  size_t next = 0;
  int chunk_count = 0;
  bool restarted = false;
  while (next < sequences.size()) {
    size_t n =
        std::min<size_t>(std::uniform_int_distribution<int>(1, 60)(rng), sequences.size() - next);
    std::vector<EventSequence> chunk(sequences.begin() + next, sequences.begin() + next + n);
    next += n;
    auto offsets = log.Append(std::move(chunk));
    ASSERT_TRUE(offsets.ok()) << offsets.status();
    if (++chunk_count % 10 == 0) {
      ASSERT_TRUE(ingester->WaitForOffset(offsets->back(), clock_.Now() + absl::Seconds(60)).ok());
    }
    if (!restarted && next > sequences.size() / 2) {
      restarted = true;
      ingester->Stop();
      ingester = std::make_unique<Ingester>(&log, live.get(), &clock_, "query", small_batches);
      ASSERT_TRUE(ingester->Start().ok());
    }
  }
  const int64_t last = log.LastOffset();
  ASSERT_EQ(last, static_cast<int64_t>(sequences.size()));
  ASSERT_TRUE(ingester->WaitForOffset(last, clock_.Now() + absl::Seconds(120)).ok());
  ingester->Stop();
  stop_readers = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);

  // Replay the whole log into an empty store with default batching.
  std::unique_ptr<store::SqliteStore> replayed = OpenStore("replay.db");
  ASSERT_NE(replayed, nullptr);
  Ingester replayer(&log, replayed.get(), &clock_);
  ASSERT_TRUE(replayer.Start().ok());
  ASSERT_TRUE(replayer.WaitForOffset(last, clock_.Now() + absl::Seconds(120)).ok());
  replayer.Stop();

  absl::StatusOr<std::string> live_dump = live->DumpViews();
  absl::StatusOr<std::string> replay_dump = replayed->DumpViews();
  ASSERT_TRUE(live_dump.ok()) << live_dump.status();
  ASSERT_TRUE(replay_dump.ok()) << replay_dump.status();
  EXPECT_TRUE(*live_dump == *replay_dump) << FirstDifference(*live_dump, *replay_dump);
  // The pipeline views took part.
  for (absl::string_view table :
       {"\npipeline_runs ", "\npipeline_tasks ", "\nartifacts ", "\nartifact_events ",
        "\ncache_entries ", "\nrecurring_runs ", "\npipelines ", "\nexperiments "}) {
    EXPECT_TRUE(absl::StrContains(*live_dump, table)) << table;
  }
  EXPECT_EQ(*live->GetConsumerOffset("query"), last);
  EXPECT_EQ(*replayed->GetConsumerOffset("query"), last);

  // Both match the model.
  std::map<std::string, regatta::v1::JobSummary> listed;
  store::JobFilter filter{.limit = store::kMaxListJobsLimit};
  while (true) {
    auto page = replayed->ListJobs(filter);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    for (auto& s : *page) listed[s.job_id()] = s;
    filter.after_job_id = page->back().job_id();
  }
  ASSERT_EQ(listed.size(), generator.jobs().size());
  std::map<JobState, int> by_state;
  int cancel_requested = 0;
  int preempt_requested = 0;
  for (const auto& [index, model] : generator.jobs()) {
    const regatta::v1::JobSummary& s = listed[JobId(index)];
    ++by_state[model.state];
    cancel_requested += model.cancel_requested;
    preempt_requested += model.preempt_requested;
    ASSERT_EQ(s.state(), model.state) << JobId(index);
    ASSERT_EQ(s.cancel_requested(), model.cancel_requested) << JobId(index);
    ASSERT_EQ(s.preempt_requested(), model.preempt_requested) << JobId(index);
    ASSERT_EQ(s.priority(), model.priority) << JobId(index);
    ASSERT_EQ(s.queue(), model.queue);
    ASSERT_EQ(s.job_set(), model.job_set);
    ASSERT_EQ(s.latest_run_id(), model.runs.empty() ? "" : RunId(model.runs.back()))
        << JobId(index);
  }
  // The log exercised every outcome.
  for (JobState s : {regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_LEASED,
                     regatta::v1::JOB_STATE_PENDING, regatta::v1::JOB_STATE_RUNNING,
                     regatta::v1::JOB_STATE_SUCCEEDED, regatta::v1::JOB_STATE_FAILED,
                     regatta::v1::JOB_STATE_CANCELLED, regatta::v1::JOB_STATE_PREEMPTED,
                     regatta::v1::JOB_STATE_REJECTED}) {
    EXPECT_GT(by_state[s], 0) << regatta::v1::JobState_Name(s);
  }
  EXPECT_GT(cancel_requested, 0);
  EXPECT_GT(preempt_requested, 0);

  for (const auto& [name, model] : generator.queues()) {
    absl::StatusOr<regatta::v1::Queue> queue = replayed->GetQueue(name);
    if (!model.live) {
      EXPECT_EQ(queue.status().code(), absl::StatusCode::kNotFound) << name;
      continue;
    }
    ASSERT_TRUE(queue.ok()) << queue.status();
    EXPECT_EQ(queue->priority_factor(), model.factor) << name;
    EXPECT_EQ(queue->cordoned(), model.cordoned) << name;
  }
}

}  // namespace
}  // namespace regatta::ingest
