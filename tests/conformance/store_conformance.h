#ifndef REGATTA_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_
#define REGATTA_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_

// The Store conformance suite: every backend must pass it. A backend's test binary includes
// this header once and instantiates the suite with its factory:
//
//   INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
//                            ::testing::Values(StoreBackend{"sqlite", OpenSqlite}),
//                            StoreBackendName);
//
// The TEST_Ps below are defined in this header, so include it from exactly one .cc per binary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "src/store/store.h"

namespace regatta::store::testing {

using StoreFactory = std::function<std::unique_ptr<Store>(const std::string& dir)>;

struct StoreBackend {
  std::string name;
  // Creates a new, empty store keeping its state under `dir` (a fresh, empty directory per
  // store). Returns nullptr on failure (after reporting why, e.g. with ADD_FAILURE).
  StoreFactory create;
};

inline void PrintTo(const StoreBackend& backend, std::ostream* os) { *os << backend.name; }

inline std::string StoreBackendName(const ::testing::TestParamInfo<StoreBackend>& info) {
  return info.param.name;
}

// ---- Test data ------------------------------------------------------------------------------

// Sortable like ULIDs: id order is creation order.
inline std::string TestJobId(int i) { return absl::StrFormat("01HZZZZZZZZZZZZZ%010d", i); }
inline std::string TestRunId(int i) { return absl::StrFormat("01HRRRRRRRRRRRRR%010d", i); }

inline absl::Time TestTime(int64_t seconds) {
  return absl::FromUnixSeconds(1'700'000'000 + seconds);
}

inline google::protobuf::Timestamp TestTimestamp(int64_t seconds) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(1'700'000'000 + seconds);
  return ts;
}

struct TestJob {
  int index = 0;
  std::string queue = "q";
  std::string job_set = "set";
  std::string owner = "alice";
  uint32_t priority = 0;
  std::map<std::string, std::string> labels;
  std::string priority_class = "default";
};

inline regatta::v1::Job MakeTestJob(const TestJob& t) {
  regatta::v1::Job job;
  job.set_id(TestJobId(t.index));
  job.set_queue(t.queue);
  job.set_job_set(t.job_set);
  job.set_owner(t.owner);
  job.add_groups("team");
  job.set_client_id(absl::StrCat("client-", t.index));
  job.set_priority(t.priority);
  job.set_priority_class(t.priority_class);
  for (const auto& [k, v] : t.labels) (*job.mutable_labels())[k] = v;
  (*job.mutable_annotations())["note"] = absl::StrCat("job ", t.index);
  auto* task = job.mutable_task();
  task->add_command("/bin/echo");
  task->add_args(absl::StrCat(t.index));
  (*task->mutable_env())["INDEX"] = absl::StrCat(t.index);
  (*task->mutable_resources()->mutable_requests())["cpu"] = "100m";
  (*task->mutable_resources()->mutable_requests())["memory"] = "64Mi";
  *job.mutable_submit_time() = TestTimestamp(t.index);
  return job;
}

inline regatta::v1::Queue MakeTestQueue(absl::string_view name, double factor = 1.0) {
  regatta::v1::Queue queue;
  queue.set_name(std::string(name));
  queue.set_priority_factor(factor);
  auto* perm = queue.add_permissions();
  auto* subject = perm->add_subjects();
  subject->set_kind("group");
  subject->set_name("team");
  perm->add_verbs("submit");
  perm->add_verbs("cancel");
  (*queue.mutable_labels())["tier"] = "gold";
  (*(*queue.mutable_resource_limits_by_priority_class())["default"]
        .mutable_maximum_resource_fraction())["cpu"] = 0.5;
  return queue;
}

inline QueueUpsert MakeQueueUpsert(absl::string_view name, int64_t seconds, double factor = 1.0) {
  QueueUpsert m;
  m.queue = MakeTestQueue(name, factor);
  *m.queue.mutable_create_time() = TestTimestamp(seconds);
  *m.queue.mutable_update_time() = TestTimestamp(seconds);
  return m;
}

inline JobSetState MakeJobSetState(int job, regatta::v1::JobState state, int64_t seconds,
                                   std::string run_id = "") {
  JobSetState m;
  m.job_id = TestJobId(job);
  m.state = state;
  m.time = TestTime(seconds);
  m.run_id = std::move(run_id);
  return m;
}

inline RunInsert MakeRunInsert(int run, int job, int64_t seconds) {
  RunInsert m;
  m.run.set_run_id(TestRunId(run));
  m.run.set_job_id(TestJobId(job));
  m.run.set_executor_id("exec-1");
  m.run.set_node_id(absl::StrCat("node-", run % 3));
  m.run.set_pool("default");
  m.run.set_state(regatta::v1::RUN_STATE_LEASED);
  *m.run.mutable_leased_time() = TestTimestamp(seconds);
  return m;
}

inline RunSetState MakeRunSetState(int run, regatta::v1::RunState state, int64_t seconds) {
  RunSetState m;
  m.run_id = TestRunId(run);
  m.state = state;
  m.time = TestTime(seconds);
  return m;
}

inline std::vector<std::string> JobIds(const std::vector<regatta::v1::JobSummary>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.job_id());
  return out;
}

inline std::vector<std::string> JobIds(const std::vector<JobLocation>& jobs) {
  std::vector<std::string> out;
  for (const auto& j : jobs) out.push_back(j.job_id);
  return out;
}

inline std::vector<std::string> JobIdRange(int begin, int end) {
  std::vector<std::string> out;
  for (int i = begin; i < end; ++i) out.push_back(TestJobId(i));
  return out;
}

// ---- Fixture --------------------------------------------------------------------------------

class StoreConformanceTest : public ::testing::TestWithParam<StoreBackend> {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string base = (tmp != nullptr && *tmp != '\0') ? tmp : "/tmp";
    std::string templ = base + "/regatta_store_conformance_XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr) << "mkdtemp " << templ;
    root_ = templ;
    store_ = NewStore();
    ASSERT_NE(store_, nullptr);
  }

  void TearDown() override {
    stores_.clear();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }

  // A further empty store of the same backend (own directory).
  std::unique_ptr<Store> NewStore() {
    std::string dir = absl::StrCat(root_, "/store", next_dir_++);
    std::filesystem::create_directories(dir);
    return GetParam().create(dir);
  }

  // Applies `mutations` as one batch at a fresh offset (all mutations get that offset).
  IngestResult Apply(std::vector<Mutation> mutations, Store* store = nullptr) {
    int64_t offset = ++offset_;
    std::vector<OffsetMutation> with_offsets;
    for (auto& m : mutations) with_offsets.push_back(OffsetMutation{offset, std::move(m)});
    return ApplyAt(std::move(with_offsets), offset, store);
  }

  // Applies mutations with explicit offsets as one batch ending at `to_offset`.
  IngestResult ApplyAt(std::vector<OffsetMutation> mutations, int64_t to_offset,
                       Store* store = nullptr, absl::string_view consumer = "query") {
    IngestBatch batch;
    batch.consumer = std::string(consumer);
    batch.to_offset = to_offset;
    batch.mutations = std::move(mutations);
    offset_ = std::max(offset_, to_offset);
    absl::StatusOr<IngestResult> result = (store ? store : store_.get())->ApplyIngestBatch(batch);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : IngestResult{};
  }

  // Applies `history` to store_ one mutation per batch and, at the same offsets, to a new empty
  // store of the backend in one batch; the dumps of both, store_'s first (empty on an error).
  std::pair<std::string, std::string> DumpsOfTwoReplays(std::vector<Mutation> history) {
    std::unique_ptr<Store> other = NewStore();
    if (other == nullptr) return {};
    std::vector<OffsetMutation> all;
    int64_t offset = offset_;
    for (Mutation& m : history) {
      ++offset;
      all.push_back(OffsetMutation{offset, m});
      ApplyAt({OffsetMutation{offset, std::move(m)}}, offset);
    }
    ApplyAt(std::move(all), offset, other.get());
    absl::StatusOr<std::string> a = store_->DumpViews();
    absl::StatusOr<std::string> b = other->DumpViews();
    EXPECT_TRUE(a.ok()) << a.status();
    EXPECT_TRUE(b.ok()) << b.status();
    if (!a.ok() || !b.ok()) return {};
    return {*std::move(a), *std::move(b)};
  }

  // The replay-equality check of a group of views: `history` replayed two ways gives the same
  // dump, the dump holds every one of `tables` and (if given) `sample`, and then applying
  // `change` shows in the dump.
  void ExpectReplayEquality(std::vector<Mutation> history,
                            std::initializer_list<absl::string_view> tables,
                            absl::string_view sample, std::vector<Mutation> change) {
    auto [a, b] = DumpsOfTwoReplays(std::move(history));
    ASSERT_FALSE(a.empty());
    EXPECT_EQ(a, b);
    const std::string lines = absl::StrCat("\n", a);
    for (absl::string_view table : tables) {
      EXPECT_THAT(lines, ::testing::HasSubstr(absl::StrCat("\n", table, " "))) << table;
    }
    if (!sample.empty()) EXPECT_THAT(a, ::testing::HasSubstr(std::string(sample)));
    Apply(std::move(change));
    absl::StatusOr<std::string> changed = store_->DumpViews();
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_NE(*changed, b);
  }

  void InsertJobs(int begin, int end, TestJob base = {}) {
    std::vector<Mutation> mutations;
    for (int i = begin; i < end; ++i) {
      base.index = i;
      mutations.push_back(JobInsert{MakeTestJob(base)});
    }
    Apply(std::move(mutations));
  }

  regatta::v1::JobSummary Summary(int job) {
    absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
        store_->GetJobDetails({TestJobId(job)}, false);
    EXPECT_TRUE(details.ok()) << details.status();
    if (!details.ok() || details->size() != 1) {
      ADD_FAILURE() << "job " << job << " not found";
      return {};
    }
    return (*details)[0].summary();
  }

  regatta::v1::JobDetails Details(int job, bool expand = false) {
    absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
        store_->GetJobDetails({TestJobId(job)}, expand);
    EXPECT_TRUE(details.ok()) << details.status();
    if (!details.ok() || details->size() != 1) {
      ADD_FAILURE() << "job " << job << " not found";
      return {};
    }
    return (*details)[0];
  }

  // FindJobs' ids, sorted (it promises no order).
  std::vector<std::string> Find(const JobSelector& selector) {
    absl::StatusOr<std::vector<JobLocation>> jobs = store_->FindJobs(selector);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    std::vector<std::string> ids = jobs.ok() ? JobIds(*jobs) : std::vector<std::string>{};
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  std::vector<std::string> List(JobFilter filter) {
    absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs = store_->ListJobs(filter);
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? JobIds(*jobs) : std::vector<std::string>{};
  }

  std::string root_;
  int next_dir_ = 0;
  int64_t offset_ = 0;
  std::unique_ptr<Store> store_;
  std::vector<std::unique_ptr<Store>> stores_;
};

// ---- Queues ---------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, QueueUpsertAndGet) {
  Apply({MakeQueueUpsert("alpha", 10, 2.0)});
  absl::StatusOr<regatta::v1::Queue> queue = store_->GetQueue("alpha");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->name(), "alpha");
  EXPECT_EQ(queue->priority_factor(), 2.0);
  EXPECT_FALSE(queue->cordoned());
  ASSERT_EQ(queue->permissions_size(), 1);
  EXPECT_EQ(queue->permissions(0).verbs_size(), 2);
  EXPECT_EQ(queue->labels().at("tier"), "gold");
  EXPECT_EQ(queue->resource_limits_by_priority_class().at("default").maximum_resource_fraction().at(
                "cpu"),
            0.5);
  EXPECT_EQ(queue->create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(queue->update_time().seconds(), TestTimestamp(10).seconds());

  absl::StatusOr<regatta::v1::Queue> missing = store_->GetQueue("nope");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "nope")) << missing.status();
}

TEST_P(StoreConformanceTest, QueueUpdateKeepsCreateTime) {
  Apply({MakeQueueUpsert("alpha", 10, 1.0)});
  Apply({MakeQueueUpsert("alpha", 20, 3.0)});
  absl::StatusOr<regatta::v1::Queue> queue = store_->GetQueue("alpha");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->priority_factor(), 3.0);
  EXPECT_EQ(queue->create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(queue->update_time().seconds(), TestTimestamp(20).seconds());
}

TEST_P(StoreConformanceTest, QueueDeleteAndRecreate) {
  Apply({MakeQueueUpsert("alpha", 10), MakeQueueUpsert("beta", 10)});
  Apply({QueueDelete{"alpha"}});
  EXPECT_EQ(store_->GetQueue("alpha").status().code(), absl::StatusCode::kNotFound);
  absl::StatusOr<std::vector<regatta::v1::Queue>> queues = store_->ListQueues("", 100);
  ASSERT_TRUE(queues.ok()) << queues.status();
  ASSERT_EQ(queues->size(), 1u);
  EXPECT_EQ((*queues)[0].name(), "beta");

  // Deleting an unknown queue is reported, not an error.
  IngestResult result = Apply({QueueDelete{"ghost"}});
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_TRUE(absl::StrContains(result.skipped[0], "ghost")) << result.skipped[0];

  // Created again, it is a new queue with a new create time.
  Apply({MakeQueueUpsert("alpha", 30)});
  absl::StatusOr<regatta::v1::Queue> queue = store_->GetQueue("alpha");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->create_time().seconds(), TestTimestamp(30).seconds());
}

TEST_P(StoreConformanceTest, QueueCordon) {
  Apply({MakeQueueUpsert("alpha", 10)});
  Apply({QueueSetCordoned{"alpha", true, TestTime(15)}});
  absl::StatusOr<regatta::v1::Queue> queue = store_->GetQueue("alpha");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_TRUE(queue->cordoned());
  EXPECT_EQ(queue->update_time().seconds(), TestTimestamp(15).seconds());
  EXPECT_EQ(queue->create_time().seconds(), TestTimestamp(10).seconds());

  Apply({QueueSetCordoned{"alpha", false, TestTime(16)}});
  queue = store_->GetQueue("alpha");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_FALSE(queue->cordoned());

  IngestResult result = Apply({QueueSetCordoned{"ghost", true, TestTime(17)}});
  EXPECT_EQ(result.skipped.size(), 1u);
}

TEST_P(StoreConformanceTest, ListQueuesPaging) {
  std::vector<Mutation> upserts;
  for (int i = 0; i < 25; ++i) upserts.push_back(MakeQueueUpsert(absl::StrFormat("q%02d", i), i));
  Apply(std::move(upserts));
  std::vector<std::string> seen;
  std::string after;
  int pages = 0;
  while (true) {
    absl::StatusOr<std::vector<regatta::v1::Queue>> page = store_->ListQueues(after, 10);
    ASSERT_TRUE(page.ok()) << page.status();
    if (page->empty()) break;
    ++pages;
    EXPECT_LE(page->size(), 10u);
    for (const auto& q : *page) seen.push_back(q.name());
    after = page->back().name();
  }
  EXPECT_EQ(pages, 3);
  ASSERT_EQ(seen.size(), 25u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.front(), "q00");
  EXPECT_EQ(seen.back(), "q24");
}

// ---- Jobs -----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, JobInsertFillsSummary) {
  TestJob t;
  t.index = 7;
  t.priority = 3;
  t.owner = "bob";
  Apply({JobInsert{MakeTestJob(t)}});
  regatta::v1::JobSummary s = Summary(7);
  EXPECT_EQ(s.job_id(), TestJobId(7));
  EXPECT_EQ(s.queue(), "q");
  EXPECT_EQ(s.job_set(), "set");
  EXPECT_EQ(s.owner(), "bob");
  EXPECT_EQ(s.state(), regatta::v1::JOB_STATE_QUEUED);
  EXPECT_EQ(s.priority(), 3u);
  EXPECT_EQ(s.priority_class(), "default");
  EXPECT_EQ(s.client_id(), "client-7");
  EXPECT_EQ(s.submit_time().seconds(), TestTimestamp(7).seconds());
  EXPECT_EQ(s.last_transition_time().seconds(), TestTimestamp(7).seconds());
  EXPECT_EQ(s.requests().at("cpu"), "100m");
  EXPECT_EQ(s.requests().at("memory"), "64Mi");
  EXPECT_FALSE(s.cancel_requested());
  EXPECT_FALSE(s.preempt_requested());
  EXPECT_EQ(s.latest_run_id(), "");
}

TEST_P(StoreConformanceTest, JobRequestsFallBackToLimits) {
  regatta::v1::Job job = MakeTestJob({.index = 1});
  job.mutable_task()->mutable_resources()->clear_requests();
  (*job.mutable_task()->mutable_resources()->mutable_limits())["cpu"] = "2";
  Apply({JobInsert{job}});
  EXPECT_EQ(Summary(1).requests().at("cpu"), "2");
}

TEST_P(StoreConformanceTest, JobInsertIsIdempotent) {
  regatta::v1::Job first = MakeTestJob({.index = 1, .priority = 1});
  regatta::v1::Job again = MakeTestJob({.index = 1, .owner = "mallory", .priority = 9});
  Apply({JobInsert{first}});
  Apply({JobInsert{again}, JobInsert{first}});
  ASSERT_EQ(List({}), std::vector<std::string>{TestJobId(1)});
  regatta::v1::JobDetails details = Details(1, /*expand=*/true);
  EXPECT_EQ(details.summary().owner(), "alice");
  EXPECT_EQ(details.summary().priority(), 1u);
  EXPECT_EQ(details.job().owner(), "alice");
  absl::StatusOr<std::string> dump = store_->DumpViews();
  ASSERT_TRUE(dump.ok()) << dump.status();
  int job_lines = 0;
  for (absl::string_view line : absl::StrSplit(*dump, '\n')) {
    if (absl::StartsWith(line, "jobs ")) ++job_lines;
  }
  EXPECT_EQ(job_lines, 1);
}

TEST_P(StoreConformanceTest, CancelRequested) {
  InsertJobs(0, 3);
  Apply({JobCancelRequested{TestJobId(0), "not needed", "alice"}});
  // A second request keeps the first reason and user.
  Apply({JobCancelRequested{TestJobId(0), "again", "bob"}});
  regatta::v1::JobDetails d = Details(0);
  EXPECT_TRUE(d.summary().cancel_requested());
  EXPECT_EQ(d.summary().state(), regatta::v1::JOB_STATE_QUEUED);  // waits for JobCancelled
  EXPECT_EQ(d.cancel_reason(), "not needed");
  EXPECT_EQ(d.cancel_user(), "alice");
  EXPECT_FALSE(Summary(1).cancel_requested());

  // Terminal jobs ignore it.
  Apply({MakeJobSetState(1, regatta::v1::JOB_STATE_SUCCEEDED, 100)});
  Apply({JobCancelRequested{TestJobId(1), "late", "alice"}});
  EXPECT_FALSE(Summary(1).cancel_requested());

  // Unknown jobs are reported.
  IngestResult result = Apply({JobCancelRequested{TestJobId(99), "x", "alice"}});
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_TRUE(absl::StrContains(result.skipped[0], TestJobId(99))) << result.skipped[0];
}

TEST_P(StoreConformanceTest, JobSetCancelHonoursStateFilter) {
  InsertJobs(0, 4, {.job_set = "a"});
  InsertJobs(10, 12, {.job_set = "b"});
  InsertJobs(20, 21, {.queue = "other", .job_set = "a"});
  // 0 QUEUED, 1 LEASED, 2 RUNNING, 3 SUCCEEDED.
  Apply({MakeRunInsert(1, 1, 50), MakeJobSetState(1, regatta::v1::JOB_STATE_LEASED, 50),
         MakeRunInsert(2, 2, 50), MakeJobSetState(2, regatta::v1::JOB_STATE_RUNNING, 51),
         MakeJobSetState(3, regatta::v1::JOB_STATE_SUCCEEDED, 52)});

  Apply({JobSetCancelRequested{"q", "a", {regatta::v1::JOB_STATE_QUEUED}, "only queued", "alice"}});
  EXPECT_TRUE(Summary(0).cancel_requested());
  EXPECT_FALSE(Summary(1).cancel_requested());
  EXPECT_FALSE(Summary(2).cancel_requested());
  EXPECT_FALSE(Summary(3).cancel_requested());
  EXPECT_EQ(Details(0).cancel_reason(), "only queued");

  // Terminal states in the filter match nothing.
  Apply({JobSetCancelRequested{"q", "a", {regatta::v1::JOB_STATE_SUCCEEDED}, "done", "alice"}});
  EXPECT_FALSE(Summary(3).cancel_requested());

  Apply({JobSetCancelRequested{
      "q", "a", {regatta::v1::JOB_STATE_LEASED, regatta::v1::JOB_STATE_PENDING}, "leased", "bob"}});
  EXPECT_TRUE(Summary(1).cancel_requested());
  EXPECT_FALSE(Summary(2).cancel_requested());
  EXPECT_EQ(Details(1).cancel_user(), "bob");

  // Empty filter: every non-terminal job of the set, nothing elsewhere.
  Apply({JobSetCancelRequested{"q", "a", {}, "all", "carol"}});
  EXPECT_TRUE(Summary(2).cancel_requested());
  EXPECT_FALSE(Summary(3).cancel_requested());
  EXPECT_FALSE(Summary(10).cancel_requested());
  EXPECT_FALSE(Summary(11).cancel_requested());
  EXPECT_FALSE(Summary(20).cancel_requested());
  EXPECT_EQ(Details(0).cancel_reason(), "only queued");  // first reason kept
}

TEST_P(StoreConformanceTest, PreemptRequested) {
  InsertJobs(0, 2);
  Apply({JobPreemptRequested{TestJobId(0), "make room"}});
  EXPECT_TRUE(Summary(0).preempt_requested());
  EXPECT_FALSE(Summary(1).preempt_requested());
  Apply({MakeJobSetState(1, regatta::v1::JOB_STATE_FAILED, 10)});
  Apply({JobPreemptRequested{TestJobId(1), "late"}});
  EXPECT_FALSE(Summary(1).preempt_requested());
  EXPECT_EQ(Apply({JobPreemptRequested{TestJobId(5), "x"}}).skipped.size(), 1u);
}

TEST_P(StoreConformanceTest, SetPriority) {
  InsertJobs(0, 2);
  Apply({JobSetPriority{TestJobId(0), 42}});
  EXPECT_EQ(Summary(0).priority(), 42u);
  EXPECT_EQ(Summary(1).priority(), 0u);
  Apply({MakeJobSetState(0, regatta::v1::JOB_STATE_CANCELLED, 10)});
  Apply({JobSetPriority{TestJobId(0), 7}});
  EXPECT_EQ(Summary(0).priority(), 42u);
  EXPECT_EQ(Apply({JobSetPriority{TestJobId(5), 1}}).skipped.size(), 1u);
}

TEST_P(StoreConformanceTest, StateTransitionsAndTerminalStates) {
  InsertJobs(0, 1);
  Apply({MakeRunInsert(1, 0, 10), MakeJobSetState(0, regatta::v1::JOB_STATE_LEASED, 10)});
  EXPECT_EQ(Summary(0).state(), regatta::v1::JOB_STATE_LEASED);
  EXPECT_EQ(Summary(0).last_transition_time().seconds(), TestTimestamp(10).seconds());
  // The same state again keeps the transition time.
  Apply({MakeJobSetState(0, regatta::v1::JOB_STATE_LEASED, 11)});
  EXPECT_EQ(Summary(0).last_transition_time().seconds(), TestTimestamp(10).seconds());
  Apply({MakeJobSetState(0, regatta::v1::JOB_STATE_RUNNING, 12)});
  EXPECT_EQ(Summary(0).state(), regatta::v1::JOB_STATE_RUNNING);

  regatta::v1::Error error;
  error.set_reason(regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  error.set_message("exit 3");
  error.set_exit_code(3);
  error.set_terminal(true);
  JobSetState failed = MakeJobSetState(0, regatta::v1::JOB_STATE_FAILED, 13);
  failed.error = error;
  Apply({failed});
  // Once terminal, nothing moves it.
  Apply({MakeJobSetState(0, regatta::v1::JOB_STATE_RUNNING, 14),
         MakeJobSetState(0, regatta::v1::JOB_STATE_SUCCEEDED, 15)});
  regatta::v1::JobDetails d = Details(0);
  EXPECT_EQ(d.summary().state(), regatta::v1::JOB_STATE_FAILED);
  EXPECT_EQ(d.summary().last_transition_time().seconds(), TestTimestamp(13).seconds());
  EXPECT_EQ(d.error().exit_code(), 3);
  EXPECT_EQ(d.error().message(), "exit 3");

  // Unknown job and invalid state are reported.
  EXPECT_EQ(Apply({MakeJobSetState(77, regatta::v1::JOB_STATE_RUNNING, 20)}).skipped.size(), 1u);
  InsertJobs(1, 2);
  EXPECT_EQ(Apply({MakeJobSetState(1, regatta::v1::JOB_STATE_UNSPECIFIED, 20)}).skipped.size(), 1u);
  EXPECT_EQ(Summary(1).state(), regatta::v1::JOB_STATE_QUEUED);
}

TEST_P(StoreConformanceTest, CancelledReasonShownWhenNoUserReason) {
  InsertJobs(0, 1);
  JobSetState cancelled = MakeJobSetState(0, regatta::v1::JOB_STATE_CANCELLED, 10);
  cancelled.reason = "gang member failed";
  Apply({cancelled});
  EXPECT_EQ(Details(0).cancel_reason(), "gang member failed");
}

TEST_P(StoreConformanceTest, OlderOffsetsNeverMoveRowsBackwards) {
  InsertJobs(0, 2);
  Apply({MakeQueueUpsert("alpha", 1)});
  // Offset 100 moves job 0 to RUNNING and sets priority; later batches carry older offsets.
  ApplyAt({{100, MakeRunInsert(1, 0, 100)},
           {100, MakeJobSetState(0, regatta::v1::JOB_STATE_RUNNING, 100, TestRunId(1))},
           {100, JobSetPriority{TestJobId(0), 5}},
           {100, MakeRunSetState(1, regatta::v1::RUN_STATE_RUNNING, 100)},
           {100, QueueDelete{"alpha"}}},
          100);
  ApplyAt({{50, MakeJobSetState(0, regatta::v1::JOB_STATE_QUEUED, 50)},
           {50, JobSetPriority{TestJobId(0), 1}},
           {50, JobCancelRequested{TestJobId(0), "old", "alice"}},
           {50, JobPreemptRequested{TestJobId(0), "old"}},
           {50, JobSetCancelRequested{"q", "set", {}, "old", "alice"}},
           {50, MakeRunSetState(1, regatta::v1::RUN_STATE_PENDING, 50)},
           {50, MakeQueueUpsert("alpha", 50)},
           {50, QueueSetCordoned{"alpha", true, TestTime(50)}}},
          101);
  regatta::v1::JobDetails d = Details(0);
  EXPECT_EQ(d.summary().state(), regatta::v1::JOB_STATE_RUNNING);
  EXPECT_EQ(d.summary().priority(), 5u);
  EXPECT_FALSE(d.summary().cancel_requested());
  EXPECT_FALSE(d.summary().preempt_requested());
  ASSERT_EQ(d.runs_size(), 1);
  EXPECT_EQ(d.runs(0).state(), regatta::v1::RUN_STATE_RUNNING);
  EXPECT_EQ(store_->GetQueue("alpha").status().code(), absl::StatusCode::kNotFound);
  // Job 1 was last changed at its insert (offset 1), so the job-set cancel at 50 applies.
  EXPECT_TRUE(Summary(1).cancel_requested());
  // Mutations at the row's own offset still apply (one record, several events).
  ApplyAt({{100, JobSetPriority{TestJobId(0), 6}}}, 102);
  EXPECT_EQ(Summary(0).priority(), 6u);
}

// ---- Runs -----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, RunsLifecycle) {
  InsertJobs(0, 2);
  Apply({MakeRunInsert(1, 0, 10),
         MakeJobSetState(0, regatta::v1::JOB_STATE_LEASED, 10, TestRunId(1))});
  EXPECT_EQ(Summary(0).latest_run_id(), TestRunId(1));
  // Inserting the run again changes nothing.
  RunInsert dup = MakeRunInsert(1, 0, 99);
  dup.run.set_node_id("elsewhere");
  Apply({dup});

  regatta::v1::Error lost;
  lost.set_reason(regatta::v1::ERROR_REASON_LEASE_EXPIRED);
  lost.set_message("executor silent");
  RunSetState expired = MakeRunSetState(1, regatta::v1::RUN_STATE_LEASE_EXPIRED, 20);
  expired.error = lost;
  Apply({MakeRunSetState(1, regatta::v1::RUN_STATE_PENDING, 11), expired,
         MakeJobSetState(0, regatta::v1::JOB_STATE_QUEUED, 20)});
  // A terminal run ignores later state changes.
  Apply({MakeRunSetState(1, regatta::v1::RUN_STATE_RUNNING, 21)});

  Apply({MakeRunInsert(2, 0, 30),
         MakeJobSetState(0, regatta::v1::JOB_STATE_LEASED, 30, TestRunId(2)),
         MakeRunSetState(2, regatta::v1::RUN_STATE_PENDING, 31),
         MakeJobSetState(0, regatta::v1::JOB_STATE_PENDING, 31, TestRunId(2))});
  // A late event of the first run does not move the job.
  Apply({MakeJobSetState(0, regatta::v1::JOB_STATE_RUNNING, 32, TestRunId(1))});
  EXPECT_EQ(Summary(0).state(), regatta::v1::JOB_STATE_PENDING);
  Apply({MakeRunSetState(2, regatta::v1::RUN_STATE_RUNNING, 33),
         MakeJobSetState(0, regatta::v1::JOB_STATE_RUNNING, 33, TestRunId(2)),
         MakeRunSetState(2, regatta::v1::RUN_STATE_SUCCEEDED, 40),
         MakeJobSetState(0, regatta::v1::JOB_STATE_SUCCEEDED, 40)});

  regatta::v1::JobDetails d = Details(0);
  EXPECT_EQ(d.summary().state(), regatta::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(d.summary().latest_run_id(), TestRunId(2));
  ASSERT_EQ(d.runs_size(), 2);
  const auto& first = d.runs(0);  // oldest first
  EXPECT_EQ(first.run_id(), TestRunId(1));
  EXPECT_EQ(first.job_id(), TestJobId(0));
  EXPECT_EQ(first.node_id(), "node-1");
  EXPECT_EQ(first.executor_id(), "exec-1");
  EXPECT_EQ(first.pool(), "default");
  EXPECT_EQ(first.state(), regatta::v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_EQ(first.leased_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(first.pending_time().seconds(), TestTimestamp(11).seconds());
  EXPECT_FALSE(first.has_started_time());
  EXPECT_EQ(first.finished_time().seconds(), TestTimestamp(20).seconds());
  EXPECT_EQ(first.error().reason(), regatta::v1::ERROR_REASON_LEASE_EXPIRED);
  const auto& second = d.runs(1);
  EXPECT_EQ(second.state(), regatta::v1::RUN_STATE_SUCCEEDED);
  EXPECT_EQ(second.started_time().seconds(), TestTimestamp(33).seconds());
  EXPECT_EQ(second.finished_time().seconds(), TestTimestamp(40).seconds());
  EXPECT_FALSE(second.has_error());

  // Runs of terminal jobs are recorded but do not become the latest run.
  Apply({MakeRunInsert(3, 0, 50)});
  EXPECT_EQ(Summary(0).latest_run_id(), TestRunId(2));
  EXPECT_EQ(Details(0).runs_size(), 3);
  EXPECT_EQ(Details(1).runs_size(), 0);
}

TEST_P(StoreConformanceTest, RunMutationsForUnknownRowsAreReported) {
  InsertJobs(0, 1);
  IngestResult result =
      Apply({MakeRunInsert(1, 42, 10), MakeRunSetState(9, regatta::v1::RUN_STATE_RUNNING, 10),
             MakeRunInsert(2, 0, 10)});
  ASSERT_EQ(result.skipped.size(), 2u);
  EXPECT_TRUE(absl::StrContains(result.skipped[0], TestJobId(42))) << result.skipped[0];
  EXPECT_TRUE(absl::StrContains(result.skipped[1], TestRunId(9))) << result.skipped[1];
  // The rest of the batch was applied.
  EXPECT_EQ(Summary(0).latest_run_id(), TestRunId(2));
}

// ---- Queries --------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ListJobsFilters) {
  InsertJobs(0, 10, {.queue = "a", .job_set = "s1", .owner = "alice", .labels = {{"app", "x"}}});
  InsertJobs(10, 20, {.queue = "a", .job_set = "s2", .owner = "bob", .labels = {{"app", "y"}}});
  InsertJobs(20, 30,
             {.queue = "b",
              .job_set = "s1",
              .owner = "alice",
              .labels = {{"app", "x"}, {"tier", "gold"}}});
  for (int i : {1, 11, 21}) {
    Apply({MakeRunInsert(i, i, 5), MakeJobSetState(i, regatta::v1::JOB_STATE_RUNNING, 5)});
  }
  Apply({MakeJobSetState(2, regatta::v1::JOB_STATE_SUCCEEDED, 6)});

  EXPECT_EQ(List({}), JobIdRange(0, 30));
  EXPECT_EQ(List({.queue = "a"}), JobIdRange(0, 20));
  EXPECT_EQ(List({.queue = "a", .job_set = "s2"}), JobIdRange(10, 20));
  EXPECT_EQ(List({.job_set = "s1"}).size(), 20u);
  EXPECT_EQ(List({.states = {regatta::v1::JOB_STATE_RUNNING}}),
            (std::vector<std::string>{TestJobId(1), TestJobId(11), TestJobId(21)}));
  EXPECT_EQ(List({.queue = "a",
                  .states = {regatta::v1::JOB_STATE_RUNNING, regatta::v1::JOB_STATE_SUCCEEDED}}),
            (std::vector<std::string>{TestJobId(1), TestJobId(2), TestJobId(11)}));
  EXPECT_EQ(List({.owner = "bob"}), JobIdRange(10, 20));
  EXPECT_EQ(List({.owner = "alice"}).size(), 20u);
  EXPECT_EQ(List({.labels = {{"app", "x"}}}).size(), 20u);
  EXPECT_EQ(List({.labels = {{"app", "x"}, {"tier", "gold"}}}), JobIdRange(20, 30));
  EXPECT_EQ(List({.labels = {{"app", "y"}, {"tier", "gold"}}}), std::vector<std::string>{});
  EXPECT_EQ(List({.labels = {{"app", "nope"}}}), std::vector<std::string>{});
  EXPECT_EQ(List({.queue = "b",
                  .job_set = "s1",
                  .states = {regatta::v1::JOB_STATE_QUEUED},
                  .owner = "alice",
                  .labels = {{"tier", "gold"}}})
                .size(),
            9u);
  EXPECT_EQ(List({.queue = "c"}), std::vector<std::string>{});
}

// The queue-set filter the API lists a caller's readable queues with.
TEST_P(StoreConformanceTest, ListJobsInQueueSet) {
  InsertJobs(0, 10, {.queue = "a", .job_set = "s1"});
  InsertJobs(10, 20, {.queue = "b", .job_set = "s1"});
  InsertJobs(20, 30, {.queue = "c", .job_set = "s2"});

  EXPECT_EQ(List({.queues = {"a"}}), JobIdRange(0, 10));
  std::vector<std::string> a_and_c = JobIdRange(0, 10);
  for (const std::string& id : JobIdRange(20, 30)) a_and_c.push_back(id);
  EXPECT_EQ(List({.queues = {"c", "a"}}), a_and_c);
  EXPECT_EQ(List({.queues = {"a", "b", "c", "a"}}), JobIdRange(0, 30));
  EXPECT_EQ(List({.queues = {"nope"}}), std::vector<std::string>{});
  // With the other filters: all must match.
  EXPECT_EQ(List({.queue = "b", .queues = {"a", "b"}}), JobIdRange(10, 20));
  EXPECT_EQ(List({.queue = "b", .queues = {"a"}}), std::vector<std::string>{});
  EXPECT_EQ(List({.queues = {"a", "c"}, .job_set = "s2"}), JobIdRange(20, 30));
  // Pages continue within the set.
  std::vector<std::string> first = List({.queues = {"a", "c"}, .limit = 15});
  ASSERT_EQ(first.size(), 15u);
  EXPECT_EQ(List({.queues = {"a", "c"}, .limit = 15, .after_job_id = first.back()}),
            JobIdRange(25, 30));
  EXPECT_EQ(List({.queues = {"a", "c"}, .newest_first = true, .limit = 3}),
            (std::vector<std::string>{TestJobId(29), TestJobId(28), TestJobId(27)}));
}

TEST_P(StoreConformanceTest, ListJobsPaging) {
  InsertJobs(0, 250);
  std::vector<std::string> all;
  JobFilter filter{.limit = 100};
  while (true) {
    std::vector<std::string> page = List(filter);
    if (page.empty()) break;
    EXPECT_LE(page.size(), 100u);
    all.insert(all.end(), page.begin(), page.end());
    filter.after_job_id = page.back();
  }
  EXPECT_EQ(all, JobIdRange(0, 250));

  // Newest first, continuing with older ids.
  std::vector<std::string> newest = List({.newest_first = true, .limit = 3});
  EXPECT_EQ(newest, (std::vector<std::string>{TestJobId(249), TestJobId(248), TestJobId(247)}));
  EXPECT_EQ(List({.newest_first = true, .limit = 2, .after_job_id = TestJobId(247)}),
            (std::vector<std::string>{TestJobId(246), TestJobId(245)}));
  // Limits: default 100 for <= 0.
  EXPECT_EQ(List({.limit = 0}).size(), 100u);
}

TEST_P(StoreConformanceTest, ListJobsLargePage) {
  // Batches like the ingester's: many jobs per transaction.
  for (int begin = 0; begin < 12000; begin += 2000) InsertJobs(begin, begin + 2000);
  // The API asks for one more than its largest page (10 000) to see whether there is another.
  std::vector<std::string> page = List({.limit = 10001});
  ASSERT_EQ(page.size(), 10001u);
  EXPECT_EQ(page.front(), TestJobId(0));
  EXPECT_EQ(page.back(), TestJobId(10000));
  EXPECT_EQ(List({.limit = 10000, .after_job_id = page.back()}).size(), 1999u);
  EXPECT_EQ(List({.limit = kMaxListJobsLimit + 1}).size(), 12000u);
}

TEST_P(StoreConformanceTest, ListJobsInLogOrder) {
  // Ids from two API servers with skewed clocks: the log order wins, for paging too.
  std::vector<Mutation> inserts;
  for (int i : {5, 3, 9, 1}) inserts.push_back(JobInsert{MakeTestJob({.index = i})});
  Apply(std::move(inserts));
  InsertJobs(0, 1);
  std::vector<std::string> expected = {TestJobId(5), TestJobId(3), TestJobId(9), TestJobId(1),
                                       TestJobId(0)};
  EXPECT_EQ(List({}), expected);
  EXPECT_EQ(List({.limit = 2, .after_job_id = TestJobId(3)}),
            (std::vector<std::string>{TestJobId(9), TestJobId(1)}));
  EXPECT_EQ(List({.newest_first = true, .limit = 2, .after_job_id = TestJobId(9)}),
            (std::vector<std::string>{TestJobId(3), TestJobId(5)}));
  EXPECT_EQ(List({.queue = "q", .after_job_id = TestJobId(1)}),
            std::vector<std::string>{TestJobId(0)});
  // An unknown cursor gives an empty page rather than starting over.
  EXPECT_EQ(List({.after_job_id = TestJobId(77)}), std::vector<std::string>{});
}

TEST_P(StoreConformanceTest, LabelFiltersMatchExactly) {
  // Separators and escapes inside keys and values must not make near misses match.
  Apply({JobInsert{MakeTestJob({.index = 1, .labels = {{"a", "b=c"}}})},
         JobInsert{MakeTestJob({.index = 2, .labels = {{"a=b", "c"}}})},
         JobInsert{MakeTestJob({.index = 3, .labels = {{"a", "b"}, {"c", "d"}}})},
         JobInsert{MakeTestJob({.index = 4, .labels = {{"a", "bc"}, {"k", "\\x"}}})},
         JobInsert{MakeTestJob({.index = 5, .labels = {{"x", ""}}})}});
  EXPECT_EQ(List({.labels = {{"a", "b=c"}}}), std::vector<std::string>{TestJobId(1)});
  EXPECT_EQ(List({.labels = {{"a=b", "c"}}}), std::vector<std::string>{TestJobId(2)});
  EXPECT_EQ(List({.labels = {{"a", "b"}}}), std::vector<std::string>{TestJobId(3)});
  EXPECT_EQ(List({.labels = {{"c", "d"}, {"a", "b"}}}), std::vector<std::string>{TestJobId(3)});
  EXPECT_EQ(List({.labels = {{"b", "c"}}}), std::vector<std::string>{});
  EXPECT_EQ(List({.labels = {{"k", "\\x"}}}), std::vector<std::string>{TestJobId(4)});
  EXPECT_EQ(List({.labels = {{"x", ""}}}), std::vector<std::string>{TestJobId(5)});
  EXPECT_EQ(List({.labels = {{"a", ""}}}), std::vector<std::string>{});
}

TEST_P(StoreConformanceTest, GetJobDetails) {
  TestJob t{.index = 3, .labels = {{"app", "x"}}};
  Apply({JobInsert{MakeTestJob(t)}});
  InsertJobs(4, 5);
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
      store_->GetJobDetails({TestJobId(3), TestJobId(404), TestJobId(4)}, /*expand_spec=*/false);
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_EQ(details->size(), 2u);  // unknown ids are left out
  EXPECT_FALSE((*details)[0].has_job());
  EXPECT_EQ((*details)[0].summary().job_id(), TestJobId(3));
  EXPECT_EQ((*details)[1].summary().job_id(), TestJobId(4));

  details = store_->GetJobDetails({TestJobId(3)}, /*expand_spec=*/true);
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_EQ(details->size(), 1u);
  const regatta::v1::Job& job = (*details)[0].job();
  EXPECT_EQ(job.id(), TestJobId(3));
  EXPECT_EQ(job.labels().at("app"), "x");
  EXPECT_EQ(job.annotations().at("note"), "job 3");
  EXPECT_EQ(job.task().command(0), "/bin/echo");
  EXPECT_EQ(job.task().env().at("INDEX"), "3");
  EXPECT_EQ(job.groups(0), "team");
  EXPECT_EQ(job.submit_time().seconds(), TestTimestamp(3).seconds());
  EXPECT_FALSE((*details)[0].has_error());

  details = store_->GetJobDetails({}, true);
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_TRUE(details->empty());
}

TEST_P(StoreConformanceTest, JobLocationsAndJobSetJobs) {
  InsertJobs(0, 3, {.job_set = "a"});
  InsertJobs(3, 5, {.job_set = "b"});
  Apply({MakeRunInsert(1, 1, 5), MakeJobSetState(1, regatta::v1::JOB_STATE_RUNNING, 5),
         MakeJobSetState(2, regatta::v1::JOB_STATE_CANCELLED, 5)});

  absl::StatusOr<std::vector<JobLocation>> locations =
      store_->GetJobLocations({TestJobId(4), TestJobId(99), TestJobId(1)});
  ASSERT_TRUE(locations.ok()) << locations.status();
  ASSERT_EQ(locations->size(), 2u);
  EXPECT_EQ((*locations)[0].job_id, TestJobId(4));
  EXPECT_EQ((*locations)[0].queue, "q");
  EXPECT_EQ((*locations)[0].job_set, "b");
  EXPECT_EQ((*locations)[0].state, regatta::v1::JOB_STATE_QUEUED);
  EXPECT_EQ((*locations)[1].state, regatta::v1::JOB_STATE_RUNNING);

  absl::StatusOr<std::vector<JobLocation>> set = store_->GetJobSetJobs("q", "a", {});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(JobIds(*set), (std::vector<std::string>{TestJobId(0), TestJobId(1)}));
  set = store_->GetJobSetJobs("q", "a", {regatta::v1::JOB_STATE_CANCELLED});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(JobIds(*set), std::vector<std::string>{TestJobId(2)});
  set = store_->GetJobSetJobs("q", "a",
                              {regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_RUNNING});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(set->size(), 2u);
  set = store_->GetJobSetJobs("other", "a", {});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(set->empty());
}

TEST_P(StoreConformanceTest, FindJobsMatchesEachFilterAndOnlyLiveJobs) {
  using regatta::v1::JOB_STATE_CANCELLED;
  using regatta::v1::JOB_STATE_LEASED;
  using regatta::v1::JOB_STATE_QUEUED;
  using regatta::v1::JOB_STATE_RUNNING;
  auto ids = [](std::vector<int> jobs) {
    std::vector<std::string> out;
    for (int j : jobs) out.push_back(TestJobId(j));
    return out;
  };
  InsertJobs(0, 3, {.queue = "a", .job_set = "s1"});
  InsertJobs(3, 4, {.queue = "a", .job_set = "s2", .priority_class = "urgent"});
  InsertJobs(4, 6, {.queue = "b"});
  InsertJobs(6, 8, {.queue = "a", .job_set = "s1"});
  // MakeRunInsert(run, job) puts run r on exec-1, node-(r % 3).
  RunInsert on_exec2 = MakeRunInsert(5, 5, 10);
  on_exec2.run.set_executor_id("exec-2");
  Apply({MakeRunInsert(1, 1, 10), MakeJobSetState(1, JOB_STATE_RUNNING, 10, TestRunId(1)),
         MakeRunInsert(2, 3, 10), MakeJobSetState(3, JOB_STATE_LEASED, 10, TestRunId(2)),
         MakeRunInsert(4, 4, 10), MakeJobSetState(4, JOB_STATE_RUNNING, 10, TestRunId(4)), on_exec2,
         MakeJobSetState(5, regatta::v1::JOB_STATE_PENDING, 10, TestRunId(5)),
         // Job 6 ended on exec-1; job 7's run there ended and the job is queued again.
         MakeRunInsert(6, 6, 10), MakeRunSetState(6, regatta::v1::RUN_STATE_CANCELLED, 11),
         MakeJobSetState(6, JOB_STATE_CANCELLED, 11), MakeRunInsert(7, 7, 10),
         MakeRunSetState(7, regatta::v1::RUN_STATE_LEASE_RETURNED, 11),
         MakeJobSetState(7, JOB_STATE_QUEUED, 11)});

  EXPECT_EQ(Find({}), ids({0, 1, 2, 3, 4, 5, 7}));
  EXPECT_EQ(Find({.queues = {"a"}}), ids({0, 1, 2, 3, 7}));
  EXPECT_EQ(Find({.queues = {"b", "a", "b"}}), ids({0, 1, 2, 3, 4, 5, 7}));
  EXPECT_EQ(Find({.queues = {"nope"}}), ids({}));
  EXPECT_EQ(Find({.queues = {"a", "b"}, .priority_classes = {"urgent"}}), ids({3}));
  EXPECT_EQ(Find({.states = {JOB_STATE_RUNNING}}), ids({1, 4}));
  EXPECT_EQ(Find({.queues = {"a"}, .states = {JOB_STATE_QUEUED}}), ids({0, 2, 7}));
  // Terminal states never match, even when asked for.
  EXPECT_EQ(Find({.states = {JOB_STATE_CANCELLED}}), ids({}));
  EXPECT_EQ(Find({.states = {JOB_STATE_CANCELLED, JOB_STATE_LEASED}}), ids({3}));

  // Executor and node: the job's latest run must be live there (not job 6, not job 7).
  EXPECT_EQ(Find({.executor_id = "exec-1"}), ids({1, 3, 4}));
  EXPECT_EQ(Find({.executor_id = "exec-1", .node_id = "node-1"}), ids({1, 4}));
  EXPECT_EQ(Find({.queues = {"a"}, .executor_id = "exec-1", .node_id = "node-1"}), ids({1}));
  EXPECT_EQ(Find({.executor_id = "exec-1", .priority_classes = {"urgent"}}), ids({3}));
  EXPECT_EQ(Find({.executor_id = "exec-1", .states = {JOB_STATE_LEASED}}), ids({3}));
  EXPECT_EQ(Find({.node_id = "node-2"}), ids({3, 5}));
  EXPECT_EQ(Find({.executor_id = "exec-9"}), ids({}));
  EXPECT_EQ(Find({.executor_id = "exec-2", .node_id = "node-1"}), ids({}));

  // A job that ends leaves every selection.
  Apply({MakeRunSetState(1, regatta::v1::RUN_STATE_SUCCEEDED, 20),
         MakeJobSetState(1, regatta::v1::JOB_STATE_SUCCEEDED, 20)});
  EXPECT_EQ(Find({.executor_id = "exec-1", .node_id = "node-1"}), ids({4}));
  EXPECT_EQ(Find({.queues = {"a"}}), ids({0, 2, 3, 7}));

  absl::StatusOr<std::vector<JobLocation>> located =
      store_->FindJobs({.priority_classes = {"urgent"}});
  ASSERT_TRUE(located.ok()) << located.status();
  ASSERT_EQ(located->size(), 1u);
  EXPECT_EQ((*located)[0].queue, "a");
  EXPECT_EQ((*located)[0].job_set, "s2");
  EXPECT_EQ((*located)[0].state, JOB_STATE_LEASED);

  // Streamed in chunks: the same rows, never more than asked for at once.
  std::vector<size_t> sizes;
  std::vector<std::string> streamed;
  absl::Status status =
      store_->StreamJobs({.queues = {"a", "b"}}, 2, [&](std::vector<JobLocation>& chunk) {
        sizes.push_back(chunk.size());
        for (const JobLocation& loc : chunk) streamed.push_back(loc.job_id);
        return absl::OkStatus();
      });
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(sizes, ::testing::ElementsAre(2, 2, 2));
  std::sort(streamed.begin(), streamed.end());
  EXPECT_EQ(streamed, ids({0, 2, 3, 4, 5, 7}));
  int calls = 0;
  status = store_->StreamJobs({}, 1, [&](std::vector<JobLocation>&) {
    return ++calls == 2 ? absl::AbortedError("enough") : absl::OkStatus();
  });
  EXPECT_TRUE(absl::IsAborted(status)) << status;
  EXPECT_EQ(calls, 2);
}

// ---- Deduplication --------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ClientIdDeduplication) {
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found =
      store_->LookupClientIds("q", {"c1", "c2"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_TRUE(found->empty());

  ASSERT_TRUE(store_->StoreClientIds("q", {{"c1", "job-1"}, {"c2", "job-2"}}).ok());
  // The first job id of a client id wins.
  ASSERT_TRUE(store_->StoreClientIds("q", {{"c1", "job-9"}, {"c3", "job-3"}}).ok());
  ASSERT_TRUE(store_->StoreClientIds("other", {{"c1", "job-7"}}).ok());

  found = store_->LookupClientIds("q", {"c1", "c2", "c3", "c4"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->size(), 3u);
  EXPECT_EQ(found->at("c1"), "job-1");
  EXPECT_EQ(found->at("c2"), "job-2");
  EXPECT_EQ(found->at("c3"), "job-3");
  found = store_->LookupClientIds("other", {"c1"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->at("c1"), "job-7");
  // Not a view: absent from the dump.
  absl::StatusOr<std::string> dump = store_->DumpViews();
  ASSERT_TRUE(dump.ok()) << dump.status();
  EXPECT_FALSE(absl::StrContains(*dump, "job-7"));
}

TEST_P(StoreConformanceTest, IngestedJobsRecordTheirClientIds) {
  // The submit path stores ids unsynced; the log is their durable copy through the ingest.
  ASSERT_TRUE(store_->StoreClientIds("q", {{"client-1", "job-from-submit"}}).ok());
  InsertJobs(0, 2);
  TestJob other;
  other.queue = "other";
  other.index = 5;
  Apply({JobInsert{MakeTestJob(other)}});
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> found =
      store_->LookupClientIds("q", {"client-0", "client-1", "client-5"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->size(), 2u);
  EXPECT_EQ(found->at("client-0"), TestJobId(0));
  // The first job id of a client id wins, whoever wrote it.
  EXPECT_EQ(found->at("client-1"), "job-from-submit");
  found = store_->LookupClientIds("other", {"client-5"});
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(found->at("client-5"), TestJobId(5));
}

// ---- Offsets --------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ConsumerOffsetStoredWithTheBatch) {
  absl::StatusOr<int64_t> offset = store_->GetConsumerOffset("query");
  ASSERT_TRUE(offset.ok()) << offset.status();
  EXPECT_EQ(*offset, 0);

  InsertJobs(0, 1);  // offset 1
  ApplyAt({{7, JobSetPriority{TestJobId(0), 7}}}, 7);
  EXPECT_EQ(*store_->GetConsumerOffset("query"), 7);
  EXPECT_EQ(*store_->GetConsumerOffset("scheduler"), 0);

  // A batch not past the stored offset was applied before: ignored as a whole.
  ApplyAt({{7, JobSetPriority{TestJobId(0), 99}}, {7, JobInsert{MakeTestJob({.index = 1})}}}, 7);
  EXPECT_EQ(Summary(0).priority(), 7u);
  EXPECT_EQ(List({}).size(), 1u);
  EXPECT_EQ(*store_->GetConsumerOffset("query"), 7);

  // Consumers are independent; an empty batch still moves the offset.
  ApplyAt({}, 3, nullptr, "scheduler");
  EXPECT_EQ(*store_->GetConsumerOffset("scheduler"), 3);
  ApplyAt({}, 9);
  EXPECT_EQ(*store_->GetConsumerOffset("query"), 9);
}

// ---- Dumps ----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, DumpViewsEqualForSameBatches) {
  std::unique_ptr<Store> other = NewStore();
  ASSERT_NE(other, nullptr);
  auto apply_both = [&](std::vector<Mutation> mutations) {
    int64_t offset = offset_ + 1;
    Apply(mutations);
    offset_ = offset - 1;
    Apply(std::move(mutations), other.get());
  };
  apply_both({MakeQueueUpsert("alpha", 1), MakeQueueUpsert("beta", 1)});
  std::vector<Mutation> inserts;
  for (int i = 0; i < 50; ++i) {
    inserts.push_back(
        JobInsert{MakeTestJob({.index = i, .labels = {{"a", "1"}, {"b", absl::StrCat(i % 3)}}})});
  }
  apply_both(inserts);
  regatta::v1::Error error;
  error.set_message("boom");
  JobSetState failed = MakeJobSetState(3, regatta::v1::JOB_STATE_FAILED, 9);
  failed.error = error;
  apply_both({MakeRunInsert(1, 1, 5), MakeJobSetState(1, regatta::v1::JOB_STATE_LEASED, 5),
              MakeRunSetState(1, regatta::v1::RUN_STATE_RUNNING, 6), failed,
              JobSetCancelRequested{"q", "set", {}, "stop", "alice"}, QueueDelete{"beta"},
              QueueSetCordoned{"alpha", true, TestTime(7)}, JobSetPriority{TestJobId(4), 3}});

  absl::StatusOr<std::string> a = store_->DumpViews();
  absl::StatusOr<std::string> b = other->DumpViews();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_FALSE(a->empty());
  EXPECT_EQ(*a, *b);

  // Any difference shows.
  Apply({JobSetPriority{TestJobId(5), 8}});
  a = store_->DumpViews();
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_NE(*a, *b);
}

// ---- Concurrency ----------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ReadersRunAlongsideTheWriter) {
  InsertJobs(0, 100);
  std::atomic<bool> done{false};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        absl::StatusOr<std::vector<regatta::v1::JobSummary>> jobs =
            store_->ListJobs({.limit = 1000});
        ASSERT_TRUE(jobs.ok()) << jobs.status();
        EXPECT_GE(jobs->size(), 100u);
        absl::StatusOr<std::vector<regatta::v1::JobDetails>> details =
            store_->GetJobDetails({TestJobId(0), TestJobId(1)}, true);
        ASSERT_TRUE(details.ok()) << details.status();
        ++reads;
      }
    });
  }
  for (int begin = 100; begin < 2100; begin += 100) {
    InsertJobs(begin, begin + 100);
    ASSERT_TRUE(store_->StoreClientIds("q", {{absl::StrCat("c", begin), "j"}}).ok());
  }
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(List({.limit = 10000}).size(), 2100u);
}

// ---- Scheduler loads ---------------------------------------------------------------------------

TEST_P(StoreConformanceTest, SchedulerInitialLoadHoldsQueuesActiveJobsAndTheirRuns) {
  Apply({MakeQueueUpsert("q", 10, 2.0), MakeQueueUpsert("gone", 10)});
  Apply({QueueDelete{"gone"}});
  InsertJobs(0, 4, {.queue = "q"});
  Apply({MakeRunInsert(0, 0, 20), MakeRunInsert(1, 1, 20)});
  Apply({MakeRunSetState(1, regatta::v1::RUN_STATE_SUCCEEDED, 21),
         MakeJobSetState(1, regatta::v1::JOB_STATE_SUCCEEDED, 21)});
  absl::StatusOr<SchedulerDelta> delta = store_->LoadSchedulerDelta("query", 0);
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_EQ(delta->offset, offset_);
  ASSERT_EQ(delta->queues.size(), 1u);  // the deleted queue is left out
  EXPECT_EQ(delta->queues[0].queue.name(), "q");
  EXPECT_DOUBLE_EQ(delta->queues[0].queue.priority_factor(), 2.0);
  std::vector<std::string> jobs;
  for (const auto& j : delta->jobs) jobs.push_back(j.job_id);
  // Job 1 succeeded: not loaded, and neither is its run.
  EXPECT_THAT(jobs, ::testing::UnorderedElementsAre(TestJobId(0), TestJobId(2), TestJobId(3)));
  ASSERT_EQ(delta->runs.size(), 1u);
  EXPECT_EQ(delta->runs[0].run_id, TestRunId(0));
  EXPECT_EQ(delta->runs[0].state, regatta::v1::RUN_STATE_LEASED);
  EXPECT_EQ(delta->runs[0].executor_id, "exec-1");
  EXPECT_EQ(delta->runs[0].leased_time, TestTime(20));
  for (const auto& j : delta->jobs) {
    EXPECT_EQ(j.queue, "q");
    EXPECT_EQ(j.priority_class, "default");
  }
}

TEST_P(StoreConformanceTest, SchedulerDeltaHoldsOnlyRowsChangedAfterTheOffset) {
  Apply({MakeQueueUpsert("q", 10)});
  InsertJobs(0, 3, {.queue = "q"});
  absl::StatusOr<SchedulerDelta> first = store_->LoadSchedulerDelta("query", 0);
  ASSERT_TRUE(first.ok()) << first.status();
  const int64_t seen = first->offset;

  // Nothing new: an empty delta at the same offset.
  absl::StatusOr<SchedulerDelta> none = store_->LoadSchedulerDelta("query", seen);
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(none->offset, seen);
  EXPECT_TRUE(none->jobs.empty() && none->runs.empty() && none->queues.empty());

  Apply({MakeRunInsert(7, 1, 30), MakeJobSetState(1, regatta::v1::JOB_STATE_LEASED, 30)});
  Apply({JobSetPriority{TestJobId(2), 5}, JobCancelRequested{TestJobId(0), "no", "alice"}});
  Apply({MakeRunSetState(7, regatta::v1::RUN_STATE_FAILED, 31)});
  absl::StatusOr<SchedulerDelta> delta = store_->LoadSchedulerDelta("query", seen);
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_EQ(delta->offset, offset_);
  EXPECT_TRUE(delta->queues.empty());
  absl::flat_hash_map<std::string, SchedulerJobRow> jobs;
  for (const auto& j : delta->jobs) jobs[j.job_id] = j;
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[TestJobId(1)].state, regatta::v1::JOB_STATE_LEASED);
  EXPECT_EQ(jobs[TestJobId(1)].latest_run_id, TestRunId(7));
  EXPECT_EQ(jobs[TestJobId(2)].priority, 5u);
  EXPECT_TRUE(jobs[TestJobId(0)].cancel_requested);
  EXPECT_EQ(jobs[TestJobId(0)].cancel_reason, "no");
  ASSERT_EQ(delta->runs.size(), 1u);
  EXPECT_EQ(delta->runs[0].state, regatta::v1::RUN_STATE_FAILED);
  // Rows come in the order they last changed.
  for (size_t i = 1; i < delta->jobs.size(); ++i) {
    EXPECT_LE(delta->jobs[i - 1].last_offset, delta->jobs[i].last_offset);
  }

  absl::StatusOr<std::vector<regatta::v1::Job>> specs =
      store_->GetJobSpecs({TestJobId(2), "no-such-job", TestJobId(2)});
  ASSERT_TRUE(specs.ok()) << specs.status();
  ASSERT_EQ(specs->size(), 1u);
  EXPECT_EQ((*specs)[0].id(), TestJobId(2));
  EXPECT_EQ((*specs)[0].task().command(0), "/bin/echo");
}

TEST_P(StoreConformanceTest, SchedulerLoadSharesOneTemplatePerSchedulingSpec) {
  Apply({MakeQueueUpsert("q", 10)});
  // Jobs 0-2 differ only in id (and submit order); job 3 asks for more; job 4 is in a gang.
  InsertJobs(0, 3, {.queue = "q"});
  regatta::v1::Job bigger = MakeTestJob({.index = 3, .queue = "q"});
  (*bigger.mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "64";
  regatta::v1::Job member = MakeTestJob({.index = 4, .queue = "q"});
  member.mutable_gang()->set_id("g1");
  member.mutable_gang()->set_cardinality(2);
  Apply({JobInsert{bigger}, JobInsert{member}});

  absl::StatusOr<SchedulerDelta> delta = store_->LoadSchedulerDelta("query", 0);
  ASSERT_TRUE(delta.ok()) << delta.status();
  absl::flat_hash_map<std::string, SchedulerJobRow> jobs;
  for (const auto& j : delta->jobs) jobs[j.job_id] = j;
  ASSERT_EQ(jobs.size(), 5u);
  const int64_t shared = jobs[TestJobId(0)].template_id;
  EXPECT_NE(shared, 0);
  EXPECT_EQ(jobs[TestJobId(1)].template_id, shared);
  EXPECT_EQ(jobs[TestJobId(2)].template_id, shared);
  EXPECT_NE(jobs[TestJobId(3)].template_id, shared);
  EXPECT_NE(jobs[TestJobId(4)].template_id, shared);
  EXPECT_EQ(jobs[TestJobId(4)].gang_id, "g1");
  EXPECT_TRUE(jobs[TestJobId(0)].gang_id.empty());
  EXPECT_EQ(delta->templates.size(), 3u);

  // A template is the job's scheduling spec, whatever job it came from.
  ASSERT_TRUE(delta->templates.contains(shared));
  const regatta::v1::Job& tmpl = delta->templates.at(shared);
  regatta::v1::Job job0 = MakeTestJob({.index = 0, .queue = "q"});
  EXPECT_EQ(SerializeDeterministic(tmpl), SerializeDeterministic(SchedulingSpec(job0)));
  EXPECT_TRUE(tmpl.id().empty());
  EXPECT_TRUE(tmpl.task().command().empty());
  EXPECT_EQ(tmpl.task().resources().requests().at("cpu"),
            job0.task().resources().requests().at("cpu"));
  EXPECT_EQ(
      delta->templates.at(jobs[TestJobId(3)].template_id).task().resources().requests().at("cpu"),
      "64");
  EXPECT_EQ(delta->templates.at(jobs[TestJobId(4)].template_id).gang().cardinality(), 2u);

  // Later deltas name the same templates.
  InsertJobs(5, 6, {.queue = "q"});
  absl::StatusOr<SchedulerDelta> later = store_->LoadSchedulerDelta("query", delta->offset);
  ASSERT_TRUE(later.ok()) << later.status();
  ASSERT_EQ(later->jobs.size(), 1u);
  EXPECT_EQ(later->jobs[0].template_id, shared);
  EXPECT_TRUE(later->templates.contains(shared));
}

TEST_P(StoreConformanceTest, SchedulerLoadStreamsInChunks) {
  Apply({MakeQueueUpsert("q", 10)});
  InsertJobs(0, 3, {.queue = "q"});
  for (int i = 3; i < 7; ++i) {
    regatta::v1::Job job = MakeTestJob({.index = i, .queue = "q"});
    if (i < 6) {
      (*job.mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "64";
    } else {
      job.mutable_gang()->set_id("g1");
      job.mutable_gang()->set_cardinality(2);
    }
    Apply({JobInsert{job}});
  }
  Apply({MakeRunInsert(0, 0, 20)});
  absl::StatusOr<SchedulerDelta> whole = store_->LoadSchedulerDelta("query", 0);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_EQ(whole->jobs.size(), 7u);
  EXPECT_EQ(whole->jobs_in_load, 7u);
  EXPECT_EQ(whole->templates.size(), 3u);

  std::vector<size_t> sizes;
  std::vector<std::string> job_ids;
  absl::flat_hash_set<int64_t> templates_seen;
  size_t chunks_with_queues = 0;
  size_t runs = 0;
  absl::Status streamed =
      store_->StreamSchedulerDelta("query", 0, 3, [&](SchedulerDelta& chunk) -> absl::Status {
        EXPECT_EQ(chunk.offset, whole->offset);
        sizes.push_back(chunk.jobs.size());
        if (!chunk.queues.empty()) ++chunks_with_queues;
        EXPECT_EQ(chunk.queues.empty(), sizes.size() > 1) << "queues come in the first chunk";
        EXPECT_EQ(chunk.jobs_in_load, sizes.size() == 1 ? 7u : 0u);
        for (const auto& [id, spec] : chunk.templates) {
          EXPECT_TRUE(templates_seen.insert(id).second) << "template " << id << " sent twice";
        }
        for (const SchedulerJobRow& row : chunk.jobs) {
          job_ids.push_back(row.job_id);
          EXPECT_TRUE(templates_seen.contains(row.template_id))
              << row.job_id << ": its template comes with or before it";
        }
        runs += chunk.runs.size();
        return absl::OkStatus();
      });
  ASSERT_TRUE(streamed.ok()) << streamed;
  EXPECT_THAT(sizes, ::testing::ElementsAre(3, 3, 1));
  EXPECT_EQ(chunks_with_queues, 1u);
  EXPECT_EQ(runs, 1u);
  std::vector<std::string> whole_ids;
  for (const SchedulerJobRow& row : whole->jobs) whole_ids.push_back(row.job_id);
  EXPECT_EQ(job_ids, whole_ids);

  // Read ahead on another thread: the caller swaps buffers and sees the same rows in order.
  std::vector<std::string> ahead_ids;
  std::vector<SchedulerDelta> kept(1);
  absl::Status ahead =
      StreamSchedulerDeltaAhead(*store_, "query", 0, 2, [&](SchedulerDelta& chunk) -> absl::Status {
        EXPECT_EQ(chunk.offset, whole->offset);
        for (const SchedulerJobRow& row : chunk.jobs) ahead_ids.push_back(row.job_id);
        std::swap(chunk, kept[0]);  // hands a stale buffer back: the store must not mind
        return absl::OkStatus();
      });
  ASSERT_TRUE(ahead.ok()) << ahead;
  EXPECT_EQ(ahead_ids, whole_ids);

  // A caller's error ends the load and comes back.
  for (bool read_ahead : {false, true}) {
    int calls = 0;
    auto stop_at_second = [&](SchedulerDelta&) -> absl::Status {
      return ++calls == 2 ? absl::AbortedError("enough") : absl::OkStatus();
    };
    absl::Status stopped = read_ahead
                               ? StreamSchedulerDeltaAhead(*store_, "query", 0, 1, stop_at_second)
                               : store_->StreamSchedulerDelta("query", 0, 1, stop_at_second);
    EXPECT_TRUE(absl::IsAborted(stopped)) << stopped;
    EXPECT_EQ(calls, 2);
  }
}

}  // namespace regatta::store::testing

// The pipeline views' cases, on the same fixture.
#include "tests/conformance/pipeline_views_conformance.h"  // IWYU pragma: export
// The device views' cases, on the same fixture.
#include "tests/conformance/device_views_conformance.h"  // IWYU pragma: export

#endif  // REGATTA_TESTS_CONFORMANCE_STORE_CONFORMANCE_H_
