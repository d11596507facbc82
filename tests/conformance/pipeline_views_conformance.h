#ifndef REGATTA_TESTS_CONFORMANCE_PIPELINE_VIEWS_CONFORMANCE_H_
#define REGATTA_TESTS_CONFORMANCE_PIPELINE_VIEWS_CONFORMANCE_H_

// The PipelineViews part of the Store conformance suite (the rules of src/store/pipeline_views.h).
// Included by store_conformance.h after its fixture; do not include it on its own.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "src/store/pipeline_views.h"

namespace regatta::store::testing {

// ---- Test data ------------------------------------------------------------------------------

using regatta::v1::PipelineRun;
using regatta::v1::PipelineTask;

inline Mutation PipelineEvent(regatta::v1::Event event, int64_t seconds = 0) {
  *event.mutable_created() = TestTimestamp(seconds);
  return PipelineChange{std::move(event)};
}

inline Mutation PipelineCreated(absl::string_view id, absl::string_view name) {
  regatta::v1::Event e;
  auto* p = e.mutable_pipeline_created()->mutable_pipeline();
  p->set_id(std::string(id));
  p->set_name(std::string(name));
  p->set_display_name(absl::StrCat("Pipeline ", name));
  p->set_owner("alice");
  *p->mutable_create_time() = TestTimestamp(1);
  return PipelineEvent(std::move(e));
}

inline Mutation VersionCreated(absl::string_view id, absl::string_view pipeline_id,
                               absl::string_view name, int64_t seconds) {
  regatta::v1::Event e;
  auto* v = e.mutable_pipeline_version_created()->mutable_version();
  v->set_id(std::string(id));
  v->set_pipeline_id(std::string(pipeline_id));
  v->set_name(std::string(name));
  v->set_spec_json(absl::StrCat("{\"pipelineInfo\":{\"name\":\"", name, "\"}}"));
  v->set_platform_spec_json("{\"platforms\":{}}");
  *v->mutable_create_time() = TestTimestamp(seconds);
  return PipelineEvent(std::move(e), seconds);
}

inline Mutation ExperimentUpserted(absl::string_view id, absl::string_view name,
                                   bool archived = false) {
  regatta::v1::Event e;
  auto* x = e.mutable_experiment_upserted()->mutable_experiment();
  x->set_id(std::string(id));
  x->set_name(std::string(name));
  x->set_description(archived ? "archived" : "live");
  x->set_archived(archived);
  *x->mutable_create_time() = TestTimestamp(1);
  return PipelineEvent(std::move(e));
}

inline PipelineRun TestPipelineRun(absl::string_view id, int64_t seconds) {
  PipelineRun run;
  run.set_id(std::string(id));
  run.set_display_name(absl::StrCat("run ", id));
  run.set_experiment_id("exp-1");
  run.set_pipeline_id("pipe-1");
  run.set_pipeline_version_id("ver-1");
  run.set_pipeline_name("hello");
  run.set_spec_json(absl::StrCat("{\"spec\":\"", id, "\"}"));
  run.set_platform_spec_json("{\"platform\":1}");
  (*run.mutable_parameters())["n"] = "3";
  run.set_queue("pipelines");
  run.set_pipeline_root("file:///tmp/artifacts");
  run.set_owner("alice");
  run.set_state(regatta::v1::PIPELINE_RUN_STATE_PENDING);
  *run.mutable_create_time() = TestTimestamp(seconds);
  return run;
}

inline Mutation RunCreated(PipelineRun run) {
  regatta::v1::Event e;
  const int64_t seconds = run.create_time().seconds() - TestTimestamp(0).seconds();
  *e.mutable_pipeline_run_created()->mutable_run() = std::move(run);
  return PipelineEvent(std::move(e), seconds);
}

inline Mutation RunUpdated(absl::string_view id, regatta::v1::PipelineRunState state,
                           absl::string_view error = "", int64_t start = -1, int64_t finish = -1,
                           std::vector<std::pair<std::string, std::string>> outputs = {}) {
  regatta::v1::Event e;
  auto* u = e.mutable_pipeline_run_updated();
  u->set_run_id(std::string(id));
  u->set_state(state);
  u->set_error_message(std::string(error));
  if (start >= 0) *u->mutable_start_time() = TestTimestamp(start);
  if (finish >= 0) *u->mutable_finish_time() = TestTimestamp(finish);
  for (auto& [k, v] : outputs) (*u->mutable_outputs())[k] = v;
  return PipelineEvent(std::move(e));
}

inline Mutation RunArchived(absl::string_view id, bool archived) {
  regatta::v1::Event e;
  e.mutable_pipeline_run_archived()->set_run_id(std::string(id));
  e.mutable_pipeline_run_archived()->set_archived(archived);
  return PipelineEvent(std::move(e));
}

inline Mutation RunDeleted(absl::string_view id) {
  regatta::v1::Event e;
  e.mutable_pipeline_run_deleted()->set_run_id(std::string(id));
  return PipelineEvent(std::move(e));
}

inline regatta::v1::PipelineArtifact TestArtifact(absl::string_view id, absl::string_view name) {
  regatta::v1::PipelineArtifact a;
  a.set_id(std::string(id));
  a.set_name(std::string(name));
  a.set_schema_title("system.Model");
  a.set_uri(absl::StrCat("file:///tmp/artifacts/", id));
  a.set_metadata_json("{\"accuracy\":0.9}");
  return a;
}

inline PipelineTask TestTask(absl::string_view path, regatta::v1::PipelineTaskState state) {
  PipelineTask t;
  t.set_path(std::string(path));
  t.set_name(std::string(path));
  t.set_kind("container");
  t.set_iteration_index(-1);
  t.set_state(state);
  (*t.mutable_input_parameters())["x"] = "1";
  *t.mutable_create_time() = TestTimestamp(2);
  return t;
}

inline Mutation TaskUpdated(absl::string_view run_id, PipelineTask task, int64_t seconds = 3) {
  regatta::v1::Event e;
  e.mutable_pipeline_task_updated()->set_run_id(std::string(run_id));
  *e.mutable_pipeline_task_updated()->mutable_task() = std::move(task);
  return PipelineEvent(std::move(e), seconds);
}

inline regatta::v1::CacheEntry TestCacheEntry(absl::string_view fingerprint, int64_t expire = -1) {
  regatta::v1::CacheEntry c;
  c.set_fingerprint(std::string(fingerprint));
  c.set_pipeline_name("hello");
  c.set_run_id("run-1");
  c.set_task_path("train");
  (*c.mutable_output_parameters())["loss"] = "0.1";
  *(*c.mutable_output_artifacts())["model"].add_artifacts() = TestArtifact("art-1", "model");
  *c.mutable_create_time() = TestTimestamp(1);
  if (expire >= 0) *c.mutable_expire_time() = TestTimestamp(expire);
  return c;
}

inline Mutation CacheEntryCreated(regatta::v1::CacheEntry entry) {
  regatta::v1::Event e;
  *e.mutable_cache_entry_created()->mutable_entry() = std::move(entry);
  return PipelineEvent(std::move(e));
}

inline regatta::v1::RecurringRun TestRecurringRun(absl::string_view id, bool enabled = true) {
  regatta::v1::RecurringRun r;
  r.set_id(std::string(id));
  r.set_display_name(absl::StrCat("every minute ", id));
  r.set_pipeline_version_id("ver-1");
  r.mutable_cron()->set_cron("0 * * * * *");
  r.set_max_concurrency(2);
  r.set_enabled(enabled);
  *r.mutable_create_time() = TestTimestamp(1);
  return r;
}

inline Mutation RecurringRunUpserted(regatta::v1::RecurringRun r) {
  regatta::v1::Event e;
  *e.mutable_recurring_run_upserted()->mutable_recurring_run() = std::move(r);
  return PipelineEvent(std::move(e));
}

template <typename T>
T ValueOr(absl::StatusOr<T> value) {
  EXPECT_TRUE(value.ok()) << value.status();
  return value.ok() ? *std::move(value) : T{};
}

template <typename Message>
std::string RowId(const Message& row) {
  return row.id();
}
inline std::string RowId(const regatta::v1::CacheEntry& row) { return row.fingerprint(); }

template <typename Message>
std::vector<std::string> Ids(const std::vector<Message>& rows) {
  std::vector<std::string> out;
  for (const Message& row : rows) out.push_back(RowId(row));
  return out;
}

inline std::vector<std::string> TaskPaths(const PipelineRun& run) {
  std::vector<std::string> out;
  for (const PipelineTask& task : run.tasks()) out.push_back(task.path());
  return out;
}

inline std::vector<std::string> Refs(const std::vector<ArtifactLineage::TaskRef>& refs) {
  std::vector<std::string> out;
  for (const auto& r : refs) {
    out.push_back(absl::StrCat(r.run_id, "/", r.task_path, ":", r.io_name, ":", r.task_state));
  }
  return out;
}

// Every page of a listing, following next_page_token; the keys (`key_of(rows)`) of each page.
template <typename Message, typename ListFn, typename KeysFn>
std::vector<std::vector<std::string>> PageKeys(ListFn list, KeysFn key_of) {
  std::vector<std::vector<std::string>> pages;
  std::string token;
  for (int guard = 0; guard < 100; ++guard) {
    absl::StatusOr<Page<Message>> page = list(token);
    EXPECT_TRUE(page.ok()) << page.status();
    if (!page.ok()) break;
    pages.push_back(key_of(page->rows));
    token = page->next_page_token;
    if (token.empty()) break;
  }
  return pages;
}

// The ids of every page.
template <typename Message, typename ListFn>
std::vector<std::vector<std::string>> AllPages(ListFn list) {
  return PageKeys<Message>(list, [](const std::vector<Message>& rows) { return Ids(rows); });
}

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ---- Pipelines and versions -----------------------------------------------------------------

TEST_P(StoreConformanceTest, PipelinesCreateGetListAndPage) {
  Apply({PipelineCreated("p3", "delta"), PipelineCreated("p1", "bravo"),
         PipelineCreated("p0", "alpha"), PipelineCreated("p4", "echo"),
         PipelineCreated("p2", "charlie")});
  regatta::v1::Pipeline pipeline = ValueOr(store_->GetPipeline("p1"));
  EXPECT_EQ(pipeline.name(), "bravo");
  EXPECT_EQ(pipeline.display_name(), "Pipeline bravo");
  EXPECT_EQ(pipeline.owner(), "alice");
  EXPECT_EQ(ValueOr(store_->GetPipelineByName("echo")).id(), "p4");
  absl::Status missing = store_->GetPipeline("nope").status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("nope"));
  EXPECT_EQ(store_->GetPipelineByName("zulu").status().code(), absl::StatusCode::kNotFound);

  // Name order, two per page.
  auto pages = AllPages<regatta::v1::Pipeline>([&](const std::string& token) {
    return store_->ListPipelines({token, 2});
  });
  EXPECT_THAT(pages,
              ElementsAre(ElementsAre("p0", "p1"), ElementsAre("p2", "p3"), ElementsAre("p4")));
  Page<regatta::v1::Pipeline> all = ValueOr(store_->ListPipelines({}));
  EXPECT_EQ(all.rows.size(), 5u);
  EXPECT_TRUE(all.next_page_token.empty());

  // The first creation wins; a name held by another id is skipped, naming the row.
  IngestResult result = Apply({PipelineCreated("p1", "other"), PipelineCreated("p9", "alpha")});
  EXPECT_EQ(ValueOr(store_->GetPipeline("p1")).name(), "bravo");
  EXPECT_EQ(store_->GetPipeline("p9").status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_THAT(result.skipped[0], HasSubstr("PipelineCreated"));
  EXPECT_THAT(result.skipped[0], HasSubstr("p9"));
  EXPECT_THAT(result.skipped[0], HasSubstr("alpha"));

  // Tokens are the listing's own.
  EXPECT_EQ(store_->ListPipelines({"garbage!", 2}).status().code(),
            absl::StatusCode::kInvalidArgument);
  Page<regatta::v1::Experiment> experiments = ValueOr(store_->ListExperiments({}, false));
  EXPECT_TRUE(experiments.rows.empty());
  std::string pipeline_token = ValueOr(store_->ListPipelines({"", 1})).next_page_token;
  ASSERT_FALSE(pipeline_token.empty());
  EXPECT_EQ(store_->ListExperiments({pipeline_token, 1}, false).status().code(),
            absl::StatusCode::kInvalidArgument);

  // Deleting a pipeline; an unknown id is ignored.
  regatta::v1::Event del;
  del.mutable_pipeline_deleted()->set_pipeline_id("p0");
  regatta::v1::Event ghost;
  ghost.mutable_pipeline_deleted()->set_pipeline_id("ghost");
  result = Apply({PipelineEvent(del), PipelineEvent(ghost)});
  EXPECT_THAT(result.skipped, IsEmpty());
  EXPECT_EQ(store_->GetPipeline("p0").status().code(), absl::StatusCode::kNotFound);
  // Its name is free again.
  Apply({PipelineCreated("p5", "alpha")});
  EXPECT_EQ(ValueOr(store_->GetPipelineByName("alpha")).id(), "p5");
}

TEST_P(StoreConformanceTest, PipelineVersionsNewestFirstWithSpecOnRequest) {
  Apply({PipelineCreated("p1", "hello"), PipelineCreated("p2", "other")});
  Apply({VersionCreated("v1", "p1", "one", 10), VersionCreated("v3", "p1", "three", 30),
         VersionCreated("v2", "p1", "two", 20), VersionCreated("w1", "p2", "one", 5)});
  regatta::v1::PipelineVersion v2 = ValueOr(store_->GetPipelineVersion("v2"));
  EXPECT_EQ(v2.name(), "two");
  EXPECT_EQ(v2.pipeline_id(), "p1");
  EXPECT_EQ(v2.spec_json(), "{\"pipelineInfo\":{\"name\":\"two\"}}");
  EXPECT_EQ(v2.platform_spec_json(), "{\"platforms\":{}}");
  EXPECT_EQ(v2.create_time().seconds(), TestTimestamp(20).seconds());
  EXPECT_EQ(store_->GetPipelineVersion("v9").status().code(), absl::StatusCode::kNotFound);

  auto pages = AllPages<regatta::v1::PipelineVersion>([&](const std::string& token) {
    return store_->ListPipelineVersions("p1", {token, 2}, false);
  });
  EXPECT_THAT(pages, ElementsAre(ElementsAre("v3", "v2"), ElementsAre("v1")));
  Page<regatta::v1::PipelineVersion> bare =
      ValueOr(store_->ListPipelineVersions("p1", {}, /*with_spec=*/false));
  ASSERT_EQ(bare.rows.size(), 3u);
  EXPECT_TRUE(bare.rows[0].spec_json().empty());
  EXPECT_EQ(bare.rows[0].name(), "three");
  Page<regatta::v1::PipelineVersion> full =
      ValueOr(store_->ListPipelineVersions("p1", {}, /*with_spec=*/true));
  ASSERT_EQ(full.rows.size(), 3u);
  EXPECT_EQ(full.rows[0].spec_json(), "{\"pipelineInfo\":{\"name\":\"three\"}}");
  EXPECT_EQ(store_->ListPipelineVersions("p9", {}, false).status().code(),
            absl::StatusCode::kNotFound);

  // First creation wins; a name taken within the pipeline and an unknown pipeline are skipped;
  // the same name in another pipeline is fine.
  IngestResult result =
      Apply({VersionCreated("v1", "p1", "renamed", 40), VersionCreated("v4", "p1", "two", 40),
             VersionCreated("v5", "p7", "five", 40), VersionCreated("w2", "p2", "two", 40)});
  EXPECT_EQ(ValueOr(store_->GetPipelineVersion("v1")).name(), "one");
  EXPECT_EQ(store_->GetPipelineVersion("v4").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ValueOr(store_->GetPipelineVersion("w2")).name(), "two");
  ASSERT_EQ(result.skipped.size(), 2u);
  EXPECT_THAT(result.skipped[0], HasSubstr("v4"));
  EXPECT_THAT(result.skipped[1], HasSubstr("unknown pipeline p7"));

  // Deleting a version, then the pipeline with the rest of its versions.
  regatta::v1::Event del_version;
  del_version.mutable_pipeline_version_deleted()->set_version_id("v3");
  Apply({PipelineEvent(del_version)});
  EXPECT_EQ(Ids(ValueOr(store_->ListPipelineVersions("p1", {}, false)).rows),
            (std::vector<std::string>{"v2", "v1"}));
  regatta::v1::Event del_pipeline;
  del_pipeline.mutable_pipeline_deleted()->set_pipeline_id("p1");
  Apply({PipelineEvent(del_pipeline)});
  EXPECT_EQ(store_->GetPipelineVersion("v1").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ValueOr(store_->GetPipelineVersion("w1")).pipeline_id(), "p2");
}

// ---- Experiments ----------------------------------------------------------------------------

TEST_P(StoreConformanceTest, ExperimentsUpsertArchiveAndList) {
  Apply({ExperimentUpserted("e2", "nightly"), ExperimentUpserted("e1", "adhoc"),
         ExperimentUpserted("e3", "old", /*archived=*/true)});
  EXPECT_EQ(ValueOr(store_->GetExperiment("e2")).name(), "nightly");
  EXPECT_EQ(ValueOr(store_->GetExperimentByName("adhoc")).id(), "e1");
  EXPECT_EQ(store_->GetExperiment("e9").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Ids(ValueOr(store_->ListExperiments({}, false)).rows),
            (std::vector<std::string>{"e1", "e2"}));
  EXPECT_EQ(Ids(ValueOr(store_->ListExperiments({}, true)).rows),
            (std::vector<std::string>{"e1", "e2", "e3"}));
  auto pages = AllPages<regatta::v1::Experiment>([&](const std::string& token) {
    return store_->ListExperiments({token, 1}, true);
  });
  EXPECT_THAT(pages, ElementsAre(ElementsAre("e1"), ElementsAre("e2"), ElementsAre("e3")));

  // Upserts replace (archiving, renaming); a name held by another id is skipped.
  IngestResult result =
      Apply({ExperimentUpserted("e2", "nightly", /*archived=*/true),
             ExperimentUpserted("e1", "renamed"), ExperimentUpserted("e4", "renamed")});
  EXPECT_TRUE(ValueOr(store_->GetExperiment("e2")).archived());
  EXPECT_EQ(ValueOr(store_->GetExperiment("e2")).description(), "archived");
  EXPECT_EQ(ValueOr(store_->GetExperimentByName("renamed")).id(), "e1");
  EXPECT_EQ(store_->GetExperimentByName("adhoc").status().code(), absl::StatusCode::kNotFound);
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_THAT(result.skipped[0], HasSubstr("ExperimentUpserted experiment_id=e4"));
  EXPECT_EQ(Ids(ValueOr(store_->ListExperiments({}, false)).rows),
            (std::vector<std::string>{"e1"}));

  regatta::v1::Event del;
  del.mutable_experiment_deleted()->set_experiment_id("e1");
  Apply({PipelineEvent(del)});
  EXPECT_EQ(store_->GetExperiment("e1").status().code(), absl::StatusCode::kNotFound);
}

// ---- Runs -----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, PipelineRunCreateGetAndFirstCreateWins) {
  PipelineRun run = TestPipelineRun("r1", 10);
  Apply({RunCreated(run)});
  PipelineRun got = ValueOr(store_->GetPipelineRun("r1", /*with_tasks=*/true));
  EXPECT_EQ(got.display_name(), "run r1");
  EXPECT_EQ(got.spec_json(), run.spec_json());
  EXPECT_EQ(got.platform_spec_json(), run.platform_spec_json());
  EXPECT_EQ(got.parameters().at("n"), "3");
  EXPECT_EQ(got.state(), regatta::v1::PIPELINE_RUN_STATE_PENDING);
  EXPECT_EQ(got.create_time().seconds(), TestTimestamp(10).seconds());
  EXPECT_EQ(got.tasks_size(), 0);
  absl::Status missing = store_->GetPipelineRun("r9", false).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.message()), HasSubstr("r9"));

  PipelineRun again = TestPipelineRun("r1", 20);
  again.set_display_name("second");
  Apply({RunCreated(again)});
  EXPECT_EQ(ValueOr(store_->GetPipelineRun("r1", false)).display_name(), "run r1");
}

TEST_P(StoreConformanceTest, PipelineRunsFilterSortAndPage) {
  std::vector<Mutation> creates;
  for (int i = 0; i < 7; ++i) {
    PipelineRun run = TestPipelineRun(absl::StrCat("r", i), 100 + i);
    run.set_display_name(absl::StrCat("name-", (i * 3) % 7));  // names in another order
    run.set_experiment_id(i % 2 == 0 ? "even" : "odd");
    run.set_owner(i < 5 ? "alice" : "bob");
    if (i == 6) {
      run.set_recurring_run_id("rr");
      *run.mutable_scheduled_time() = TestTimestamp(106);
    }
    creates.push_back(RunCreated(run));
  }
  Apply(std::move(creates));
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING),
         RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_RUNNING), RunArchived("r3", true)});

  auto list = [&](PipelineRunFilter filter) {
    return Ids(ValueOr(store_->ListPipelineRuns(filter)).rows);
  };
  // Newest first by default; archived runs left out.
  EXPECT_THAT(list({}), ElementsAre("r6", "r5", "r4", "r2", "r1", "r0"));
  EXPECT_THAT(list({.descending = false}), ElementsAre("r0", "r1", "r2", "r4", "r5", "r6"));
  EXPECT_THAT(list({.include_archived = true}),
              ElementsAre("r6", "r5", "r4", "r3", "r2", "r1", "r0"));
  EXPECT_THAT(list({.only_archived = true}), ElementsAre("r3"));
  EXPECT_THAT(list({.experiment_id = "odd"}), ElementsAre("r5", "r1"));
  EXPECT_THAT(list({.owner = "bob"}), ElementsAre("r6", "r5"));
  EXPECT_THAT(list({.recurring_run_id = "rr"}), ElementsAre("r6"));
  EXPECT_THAT(list({.pipeline_version_id = "ver-x"}), IsEmpty());
  EXPECT_THAT(list({.states = {regatta::v1::PIPELINE_RUN_STATE_RUNNING}}), ElementsAre("r2", "r1"));
  // display_name: r0 name-0, r5 name-1, r3 name-2 (archived), r1 name-3, r6 name-4, r4 name-5,
  // r2 name-6.
  EXPECT_THAT(list({.sort_by = "display_name", .descending = false}),
              ElementsAre("r0", "r5", "r1", "r6", "r4", "r2"));
  EXPECT_THAT(list({.sort_by = "display_name"}), ElementsAre("r2", "r4", "r6", "r1", "r5", "r0"));
  EXPECT_EQ(store_->ListPipelineRuns({.sort_by = "owner"}).status().code(),
            absl::StatusCode::kInvalidArgument);

  // Listings leave out the spec and tasks.
  Page<PipelineRun> page = ValueOr(store_->ListPipelineRuns({}));
  ASSERT_FALSE(page.rows.empty());
  EXPECT_TRUE(page.rows[0].spec_json().empty());
  EXPECT_EQ(page.rows[0].parameters().at("n"), "3");

  // Pages in both orders; a token of one order is refused by the other.
  for (bool by_name : {false, true}) {
    PipelineRunFilter filter{.include_archived = true,
                             .sort_by = by_name ? "display_name" : "create_time"};
    std::vector<std::string> whole = list(filter);
    std::vector<std::string> paged;
    auto pages = AllPages<PipelineRun>([&](const std::string& token) {
      PipelineRunFilter f = filter;
      f.page = {token, 3};
      return store_->ListPipelineRuns(f);
    });
    ASSERT_EQ(pages.size(), 3u);
    for (const auto& p : pages) paged.insert(paged.end(), p.begin(), p.end());
    EXPECT_EQ(paged, whole);
  }
  std::string token = ValueOr(store_->ListPipelineRuns({.page = {"", 2}})).next_page_token;
  ASSERT_FALSE(token.empty());
  EXPECT_EQ(
      store_->ListPipelineRuns({.sort_by = "display_name", .page = {token, 2}}).status().code(),
      absl::StatusCode::kInvalidArgument);
}

TEST_P(StoreConformanceTest, PipelineRunStateRulesAndRetry) {
  Apply({RunCreated(TestPipelineRun("r1", 10))});
  auto get = [&] { return ValueOr(store_->GetPipelineRun("r1", false)); };

  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING, "", /*start=*/11)});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_RUNNING);
  EXPECT_EQ(get().start_time().seconds(), TestTimestamp(11).seconds());

  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_FAILED, "task train failed", -1,
                    /*finish=*/12)});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_FAILED);
  EXPECT_EQ(get().error_message(), "task train failed");
  EXPECT_EQ(get().start_time().seconds(), TestTimestamp(11).seconds());  // not given: kept
  EXPECT_EQ(get().finish_time().seconds(), TestTimestamp(12).seconds());

  // A terminal run moves only to RUNNING (a retry).
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED)});
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_CANCELING)});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_FAILED);
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING)});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_RUNNING);
  EXPECT_EQ(get().error_message(), "");
  EXPECT_FALSE(get().has_finish_time());

  Apply(
      {RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED, "", -1, 20, {{"acc", "0.9"}})});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(get().outputs().at("acc"), "0.9");
  EXPECT_EQ(get().finish_time().seconds(), TestTimestamp(20).seconds());
  // SUCCEEDED is final: no retry from it.
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING)});
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED);

  // CANCELED can be retried too; outputs are kept when an update gives none.
  Apply({RunCreated(TestPipelineRun("r2", 10))});
  Apply({RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_CANCELING),
         RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_CANCELED, "", -1, 15)});
  Apply({RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_RUNNING)});
  EXPECT_EQ(ValueOr(store_->GetPipelineRun("r2", false)).state(),
            regatta::v1::PIPELINE_RUN_STATE_RUNNING);

  // Archiving flips the flag only.
  Apply({RunArchived("r1", true)});
  EXPECT_TRUE(get().archived());
  EXPECT_EQ(get().state(), regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED);
  Apply({RunArchived("r1", false)});
  EXPECT_FALSE(get().archived());
}

// ---- Tasks ----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, PipelineTasksReplaceRulesAndCreationOrder) {
  Apply({RunCreated(TestPipelineRun("r1", 10))});
  Apply({TaskUpdated("r1", TestTask("train", regatta::v1::PIPELINE_TASK_STATE_PENDING)),
         TaskUpdated("r1", TestTask("prep", regatta::v1::PIPELINE_TASK_STATE_PENDING)),
         TaskUpdated("r1", TestTask("loop[0].step", regatta::v1::PIPELINE_TASK_STATE_PENDING))});
  auto task = [&](absl::string_view path) -> PipelineTask {
    PipelineRun run = ValueOr(store_->GetPipelineRun("r1", true));
    for (const PipelineTask& t : run.tasks()) {
      if (t.path() == path) return t;
    }
    ADD_FAILURE() << "no task " << path;
    return {};
  };
  EXPECT_THAT(TaskPaths(ValueOr(store_->GetPipelineRun("r1", true))),
              ElementsAre("train", "prep", "loop[0].step"));

  // Replaced whole, keeping its place.
  PipelineTask running = TestTask("train", regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  running.add_job_ids("job-1");
  running.set_attempts(1);
  Apply({TaskUpdated("r1", running)});
  EXPECT_EQ(task("train").state(), regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  EXPECT_THAT(task("train").job_ids(), ElementsAre("job-1"));
  EXPECT_THAT(TaskPaths(ValueOr(store_->GetPipelineRun("r1", true))),
              ElementsAre("train", "prep", "loop[0].step"));

  // A terminal task is replaced only by PENDING or RUNNING (the run's retry).
  PipelineTask failed = TestTask("train", regatta::v1::PIPELINE_TASK_STATE_FAILED);
  failed.set_error_message("exit 1");
  Apply({TaskUpdated("r1", failed)});
  Apply({TaskUpdated("r1", TestTask("train", regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED)),
         TaskUpdated("r1", TestTask("train", regatta::v1::PIPELINE_TASK_STATE_CANCELED))});
  EXPECT_EQ(task("train").state(), regatta::v1::PIPELINE_TASK_STATE_FAILED);
  EXPECT_EQ(task("train").error_message(), "exit 1");
  Apply({TaskUpdated("r1", TestTask("train", regatta::v1::PIPELINE_TASK_STATE_RUNNING))});
  EXPECT_EQ(task("train").state(), regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  Apply({TaskUpdated("r1", TestTask("prep", regatta::v1::PIPELINE_TASK_STATE_NOT_TRIGGERED))});
  Apply({TaskUpdated("r1", TestTask("prep", regatta::v1::PIPELINE_TASK_STATE_PENDING))});
  EXPECT_EQ(task("prep").state(), regatta::v1::PIPELINE_TASK_STATE_PENDING);

  // Without tasks unless asked for.
  EXPECT_EQ(ValueOr(store_->GetPipelineRun("r1", false)).tasks_size(), 0);
}

TEST_P(StoreConformanceTest, ActivePipelineRunsComeWithSpecAndTasks) {
  std::vector<Mutation> creates;
  for (int i = 0; i < 5; ++i)
    creates.push_back(RunCreated(TestPipelineRun(absl::StrCat("r", i), i)));
  Apply(std::move(creates));
  Apply({RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING),
         RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_RUNNING),
         RunUpdated("r2", regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED),
         RunUpdated("r3", regatta::v1::PIPELINE_RUN_STATE_CANCELING),
         RunUpdated("r4", regatta::v1::PIPELINE_RUN_STATE_SKIPPED),
         TaskUpdated("r1", TestTask("b", regatta::v1::PIPELINE_TASK_STATE_RUNNING)),
         TaskUpdated("r2", TestTask("x", regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED)),
         TaskUpdated("r1", TestTask("a", regatta::v1::PIPELINE_TASK_STATE_PENDING)),
         TaskUpdated("r3", TestTask("c", regatta::v1::PIPELINE_TASK_STATE_CANCELING))});
  std::vector<PipelineRun> active = ValueOr(store_->ListActivePipelineRuns());
  ASSERT_THAT(Ids(active), ElementsAre("r0", "r1", "r3"));
  EXPECT_EQ(active[0].spec_json(), "{\"spec\":\"r0\"}");
  EXPECT_EQ(active[0].tasks_size(), 0);
  EXPECT_THAT(TaskPaths(active[1]), ElementsAre("b", "a"));
  EXPECT_EQ(active[1].tasks(0).state(), regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  EXPECT_THAT(TaskPaths(active[2]), ElementsAre("c"));

  // A retried run is active again.
  Apply({RunUpdated("r3", regatta::v1::PIPELINE_RUN_STATE_CANCELED)});
  EXPECT_THAT(Ids(ValueOr(store_->ListActivePipelineRuns())), ElementsAre("r0", "r1"));
  Apply({RunUpdated("r3", regatta::v1::PIPELINE_RUN_STATE_RUNNING)});
  EXPECT_THAT(Ids(ValueOr(store_->ListActivePipelineRuns())), ElementsAre("r0", "r1", "r3"));
}

// ---- Artifacts and lineage ------------------------------------------------------------------

// r1: "train" produces model (a1) and metrics (a2); "eval" reads a1. r2: "train" is CACHED
// (republishes a1 and a2 from r1); "eval" reads a1.
inline std::vector<Mutation> LineageScenario() {
  std::vector<Mutation> out;
  out.push_back(RunCreated(TestPipelineRun("r1", 10)));
  out.push_back(RunCreated(TestPipelineRun("r2", 20)));
  // Output URIs are known when the step starts; its metadata once it succeeded.
  PipelineTask train = TestTask("train", regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  regatta::v1::PipelineArtifact model = TestArtifact("a1", "");  // name from the output key
  model.set_metadata_json("{}");
  *(*train.mutable_output_artifacts())["model"].add_artifacts() = model;
  *(*train.mutable_output_artifacts())["metrics"].add_artifacts() = TestArtifact("a2", "metrics");
  train.set_fingerprint(std::string(64, 'f'));
  out.push_back(TaskUpdated("r1", train, 4));
  train.set_state(regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED);
  model.set_metadata_json("{\"accuracy\":0.9}");
  *(*train.mutable_output_artifacts())["model"].mutable_artifacts(0) = model;
  out.push_back(TaskUpdated("r1", train, 11));
  PipelineTask eval = TestTask("eval", regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  regatta::v1::PipelineArtifact as_input = TestArtifact("a1", "model");
  as_input.set_run_id("r1");
  as_input.set_task_path("train");
  *(*eval.mutable_input_artifacts())["in_model"].add_artifacts() = as_input;
  out.push_back(TaskUpdated("r1", eval, 12));
  eval.set_state(regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED);
  out.push_back(TaskUpdated("r1", eval, 13));  // the same input again: recorded once

  PipelineTask cached = TestTask("train", regatta::v1::PIPELINE_TASK_STATE_CACHED);
  cached.set_cached_from_run_id("r1");
  cached.set_cached_from_task_path("train");
  *(*cached.mutable_output_artifacts())["model"].add_artifacts() = as_input;
  regatta::v1::PipelineArtifact metrics = TestArtifact("a2", "metrics");
  metrics.set_run_id("r1");
  metrics.set_task_path("train");
  metrics.set_uri("file:///somewhere/else");  // a reader's copy never replaces the row
  *(*cached.mutable_output_artifacts())["metrics"].add_artifacts() = metrics;
  out.push_back(TaskUpdated("r2", cached, 21));
  PipelineTask eval2 = TestTask("eval", regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  *(*eval2.mutable_input_artifacts())["in_model"].add_artifacts() = as_input;
  out.push_back(TaskUpdated("r2", eval2, 22));
  return out;
}

TEST_P(StoreConformanceTest, ArtifactLineageProducerConsumersRepublished) {
  for (Mutation& m : LineageScenario()) Apply({std::move(m)});  // one event per batch

  regatta::v1::PipelineArtifact a1 = ValueOr(store_->GetArtifact("a1"));
  EXPECT_EQ(a1.name(), "model");
  EXPECT_EQ(a1.run_id(), "r1");
  EXPECT_EQ(a1.task_path(), "train");
  EXPECT_EQ(a1.uri(), "file:///tmp/artifacts/a1");
  EXPECT_EQ(a1.create_time().seconds(), TestTimestamp(11).seconds());  // the event's time
  EXPECT_EQ(ValueOr(store_->GetArtifact("a2")).uri(), "file:///tmp/artifacts/a2");
  EXPECT_EQ(store_->GetArtifact("a9").status().code(), absl::StatusCode::kNotFound);

  ArtifactLineage lineage = ValueOr(store_->GetArtifactLineage("a1"));
  EXPECT_EQ(lineage.artifact.id(), "a1");
  EXPECT_EQ(Refs({lineage.producer}), (std::vector<std::string>{"r1/train:model:SUCCEEDED"}));
  EXPECT_THAT(Refs(lineage.consumers),
              ElementsAre("r1/eval:in_model:SUCCEEDED", "r2/eval:in_model:RUNNING"));
  EXPECT_THAT(Refs(lineage.republished_by), ElementsAre("r2/train:model:CACHED"));
  ArtifactLineage metrics = ValueOr(store_->GetArtifactLineage("a2"));
  EXPECT_THAT(Refs(metrics.consumers), IsEmpty());
  EXPECT_THAT(Refs(metrics.republished_by), ElementsAre("r2/train:metrics:CACHED"));
  EXPECT_EQ(store_->GetArtifactLineage("a9").status().code(), absl::StatusCode::kNotFound);

  // The run that produced them lists them; the one that reused them does not.
  EXPECT_THAT(Ids(ValueOr(store_->ListRunArtifacts("r1"))), ElementsAre("a2", "a1"));
  EXPECT_THAT(Ids(ValueOr(store_->ListRunArtifacts("r2"))), IsEmpty());

  // The producer's update at success (metadata read after the step) replaced the row; an
  // update of the task once terminal is ignored, its artifacts too.
  EXPECT_EQ(a1.metadata_json(), "{\"accuracy\":0.9}");
  PipelineTask train = TestTask("train", regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED);
  regatta::v1::PipelineArtifact late = TestArtifact("a1", "model");
  late.set_metadata_json("{\"accuracy\":0.1}");
  *(*train.mutable_output_artifacts())["model"].add_artifacts() = late;
  Apply({TaskUpdated("r1", train)});
  EXPECT_EQ(ValueOr(store_->GetArtifact("a1")).metadata_json(), "{\"accuracy\":0.9}");
  EXPECT_EQ(ValueOr(store_->GetArtifactLineage("a1")).consumers.size(), 2u);
}

TEST_P(StoreConformanceTest, DeletingARunKeepsItsArtifactsAndLineage) {
  Apply(LineageScenario());
  Apply({RunDeleted("r1"), RunDeleted("never-existed")});
  EXPECT_EQ(store_->GetPipelineRun("r1", true).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Ids(ValueOr(store_->ListPipelineRuns({})).rows), ElementsAre("r2"));
  EXPECT_EQ(ValueOr(store_->GetArtifact("a1")).run_id(), "r1");
  EXPECT_THAT(Ids(ValueOr(store_->ListRunArtifacts("r1"))), ElementsAre("a2", "a1"));
  ArtifactLineage lineage = ValueOr(store_->GetArtifactLineage("a1"));
  EXPECT_EQ(Refs({lineage.producer}), (std::vector<std::string>{"r1/train:model:"}));
  EXPECT_THAT(Refs(lineage.consumers),
              ElementsAre("r1/eval:in_model:", "r2/eval:in_model:RUNNING"));
  EXPECT_THAT(Refs(lineage.republished_by), ElementsAre("r2/train:model:CACHED"));

  // Its tasks are gone with it: a late task event is skipped, not a new task.
  IngestResult result =
      Apply({TaskUpdated("r1", TestTask("train", regatta::v1::PIPELINE_TASK_STATE_RUNNING))});
  ASSERT_EQ(result.skipped.size(), 1u);
  EXPECT_THAT(result.skipped[0], HasSubstr("PipelineTaskUpdated run_id=r1 path=train"));
  EXPECT_THAT(result.skipped[0], HasSubstr("unknown run"));
}

// ---- Cache ----------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, CacheLookupHonoursExpiry) {
  Apply({CacheEntryCreated(TestCacheEntry("fp-forever")),
         CacheEntryCreated(TestCacheEntry("fp-100", 100)),
         CacheEntryCreated(TestCacheEntry("fp-50", 50))});
  auto lookup = [&](int64_t now) {
    absl::flat_hash_map<std::string, regatta::v1::CacheEntry> found = ValueOr(
        store_->LookupCacheEntries({"fp-forever", "fp-100", "fp-50", "fp-none"}, TestTime(now)));
    std::vector<std::string> keys;
    for (const auto& [fingerprint, entry] : found) {
      EXPECT_EQ(entry.fingerprint(), fingerprint);
      keys.push_back(fingerprint);
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  EXPECT_THAT(lookup(10), ElementsAre("fp-100", "fp-50", "fp-forever"));
  EXPECT_THAT(lookup(60), ElementsAre("fp-100", "fp-forever"));
  EXPECT_THAT(lookup(100), ElementsAre("fp-forever"));  // expired at its expire_time
  regatta::v1::CacheEntry entry =
      ValueOr(store_->LookupCacheEntries({"fp-forever"}, TestTime(0))).at("fp-forever");
  EXPECT_EQ(entry.output_parameters().at("loss"), "0.1");
  EXPECT_EQ(entry.output_artifacts().at("model").artifacts(0).id(), "art-1");
  EXPECT_TRUE(ValueOr(store_->LookupCacheEntries({}, TestTime(0))).empty());

  // Listed in fingerprint order, expired ones included.
  auto pages = AllPages<regatta::v1::CacheEntry>([&](const std::string& token) {
    return store_->ListCacheEntries({token, 2});
  });
  ASSERT_EQ(pages.size(), 2u);

  // A new entry replaces an expired one; deleted entries are gone.
  regatta::v1::CacheEntry fresh = TestCacheEntry("fp-50", 500);
  fresh.set_run_id("run-2");
  regatta::v1::Event del;
  del.mutable_cache_entries_deleted()->add_fingerprints("fp-forever");
  del.mutable_cache_entries_deleted()->add_fingerprints("fp-unknown");
  Apply({CacheEntryCreated(fresh), PipelineEvent(del)});
  EXPECT_THAT(lookup(60), ElementsAre("fp-100", "fp-50"));
  EXPECT_EQ(ValueOr(store_->LookupCacheEntries({"fp-50"}, TestTime(60))).at("fp-50").run_id(),
            "run-2");
}

TEST_P(StoreConformanceTest, CacheLookupOfManyFingerprints) {
  std::vector<Mutation> creates;
  std::vector<std::string> wanted;
  for (int i = 0; i < 1200; ++i) {
    std::string fingerprint = absl::StrFormat("%064d", i);
    if (i % 2 == 0) creates.push_back(CacheEntryCreated(TestCacheEntry(fingerprint)));
    wanted.push_back(fingerprint);
  }
  wanted.push_back(wanted[0]);  // a repeat is harmless
  Apply(std::move(creates));
  absl::flat_hash_map<std::string, regatta::v1::CacheEntry> found =
      ValueOr(store_->LookupCacheEntries(wanted, TestTime(0)));
  EXPECT_EQ(found.size(), 600u);
  EXPECT_TRUE(found.contains(absl::StrFormat("%064d", 1198)));
  EXPECT_FALSE(found.contains(absl::StrFormat("%064d", 1199)));
  Page<regatta::v1::CacheEntry> capped = ValueOr(store_->ListCacheEntries({"", 50'000}));
  EXPECT_EQ(capped.rows.size(), 600u);  // under the 10 000 cap: one page
  EXPECT_TRUE(capped.next_page_token.empty());
}

// ---- Recurring runs -------------------------------------------------------------------------

TEST_P(StoreConformanceTest, RecurringRunsAndLastScheduledTime) {
  Apply({RecurringRunUpserted(TestRecurringRun("rr-b")),
         RecurringRunUpserted(TestRecurringRun("rr-a"))});
  regatta::v1::RecurringRun rr = ValueOr(store_->GetRecurringRun("rr-b"));
  EXPECT_EQ(rr.cron().cron(), "0 * * * * *");
  EXPECT_FALSE(rr.has_last_scheduled_time());
  EXPECT_EQ(store_->GetRecurringRun("rr-z").status().code(), absl::StatusCode::kNotFound);
  auto pages = AllPages<regatta::v1::RecurringRun>([&](const std::string& token) {
    return store_->ListRecurringRuns({token, 1});
  });
  EXPECT_THAT(pages, ElementsAre(ElementsAre("rr-b"), ElementsAre("rr-a")));  // creation order

  auto scheduled_run = [](absl::string_view id, int64_t at) {
    PipelineRun run = TestPipelineRun(id, at + 1);
    run.set_recurring_run_id("rr-b");
    *run.mutable_scheduled_time() = TestTimestamp(at);
    return RunCreated(run);
  };
  Apply({scheduled_run("s1", 60)});
  EXPECT_EQ(ValueOr(store_->GetRecurringRun("rr-b")).last_scheduled_time().seconds(),
            TestTimestamp(60).seconds());
  Apply({scheduled_run("s0", 0), scheduled_run("s2", 120)});
  EXPECT_EQ(ValueOr(store_->GetRecurringRun("rr-b")).last_scheduled_time().seconds(),
            TestTimestamp(120).seconds());
  Apply({scheduled_run("s1b", 90)});  // an earlier time does not move it back
  EXPECT_EQ(ValueOr(store_->GetRecurringRun("rr-b")).last_scheduled_time().seconds(),
            TestTimestamp(120).seconds());
  EXPECT_FALSE(ValueOr(store_->GetRecurringRun("rr-a")).has_last_scheduled_time());

  // An upsert (disable) replaces the definition, not the output-only time.
  Apply({RecurringRunUpserted(TestRecurringRun("rr-b", /*enabled=*/false))});
  rr = ValueOr(store_->GetRecurringRun("rr-b"));
  EXPECT_FALSE(rr.enabled());
  EXPECT_EQ(rr.last_scheduled_time().seconds(), TestTimestamp(120).seconds());
  EXPECT_THAT(Ids(ValueOr(store_->ListPipelineRuns({.recurring_run_id = "rr-b"})).rows),
              ElementsAre("s2", "s1b", "s1", "s0"));

  regatta::v1::Event del;
  del.mutable_recurring_run_deleted()->set_recurring_run_id("rr-b");
  Apply({PipelineEvent(del)});
  EXPECT_EQ(store_->GetRecurringRun("rr-b").status().code(), absl::StatusCode::kNotFound);
  Apply({scheduled_run("s3", 180)});  // its runs may still arrive: nothing to advance
  EXPECT_EQ(ValueOr(store_->GetPipelineRun("s3", false)).recurring_run_id(), "rr-b");
}

// ---- Bad rows -------------------------------------------------------------------------------

TEST_P(StoreConformanceTest, PipelineChangesThatCannotApplyAreSkippedNotFatal) {
  Apply({RunCreated(TestPipelineRun("r1", 10))});
  PipelineTask no_path = TestTask("", regatta::v1::PIPELINE_TASK_STATE_RUNNING);
  PipelineTask no_state = TestTask("t", regatta::v1::PIPELINE_TASK_STATE_UNSPECIFIED);
  PipelineTask bad_artifact = TestTask("u", regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED);
  *(*bad_artifact.mutable_output_artifacts())["out"].add_artifacts() = TestArtifact("", "out");
  IngestResult result =
      ApplyAt({{20, TaskUpdated("ghost", TestTask("t", regatta::v1::PIPELINE_TASK_STATE_RUNNING))},
               {21, RunUpdated("ghost", regatta::v1::PIPELINE_RUN_STATE_RUNNING)},
               {22, RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED)},
               {23, PipelineCreated("", "nameless")},
               {24, TaskUpdated("r1", no_path)},
               {25, TaskUpdated("r1", no_state)},
               {26, TaskUpdated("r1", bad_artifact)},
               {27, RunArchived("ghost", true)},
               {28, PipelineCreated("p1", "fine")}},
              28);
  ASSERT_EQ(result.skipped.size(), 8u) << absl::StrJoin(result.skipped, "\n");
  EXPECT_THAT(result.skipped[0],
              HasSubstr("offset 20: PipelineTaskUpdated run_id=ghost path=t: unknown run ghost"));
  EXPECT_THAT(result.skipped[1], HasSubstr("offset 21: PipelineRunUpdated run_id=ghost"));
  EXPECT_THAT(result.skipped[2], HasSubstr("offset 22: PipelineRunUpdated run_id=r1"));
  EXPECT_THAT(result.skipped[2], HasSubstr("invalid state"));
  EXPECT_THAT(result.skipped[3], HasSubstr("offset 23: PipelineCreated"));
  EXPECT_THAT(result.skipped[4], HasSubstr("offset 24: PipelineTaskUpdated run_id=r1 path="));
  EXPECT_THAT(result.skipped[5], HasSubstr("offset 25"));
  EXPECT_THAT(result.skipped[6], HasSubstr("offset 26"));
  EXPECT_THAT(result.skipped[6], HasSubstr("artifact without id"));
  EXPECT_THAT(result.skipped[7], HasSubstr("offset 27: PipelineRunArchived run_id=ghost"));
  // The rest applied: the task with the bad artifact, the valid pipeline, the offset.
  EXPECT_THAT(TaskPaths(ValueOr(store_->GetPipelineRun("r1", true))), ElementsAre("u"));
  EXPECT_EQ(ValueOr(store_->GetPipelineRun("r1", false)).state(),
            regatta::v1::PIPELINE_RUN_STATE_PENDING);
  EXPECT_EQ(ValueOr(store_->GetPipeline("p1")).name(), "fine");
  EXPECT_EQ(ValueOr(store_->GetConsumerOffset("query")), 28);
}

// ---- Dumps ----------------------------------------------------------------------------------

// Every kind of pipeline row, through creations, updates and deletions.
inline std::vector<Mutation> PipelineHistory() {
  std::vector<Mutation> out = LineageScenario();
  out.push_back(PipelineCreated("p1", "hello"));
  out.push_back(PipelineCreated("p2", "bye"));
  out.push_back(VersionCreated("v1", "p1", "one", 5));
  out.push_back(VersionCreated("v2", "p2", "one", 6));
  regatta::v1::Event del_pipeline;
  del_pipeline.mutable_pipeline_deleted()->set_pipeline_id("p2");
  out.push_back(PipelineEvent(del_pipeline));
  out.push_back(ExperimentUpserted("e1", "nightly"));
  out.push_back(ExperimentUpserted("e1", "nightly", true));
  out.push_back(RecurringRunUpserted(TestRecurringRun("rr")));
  PipelineRun scheduled = TestPipelineRun("r3", 30);
  scheduled.set_recurring_run_id("rr");
  *scheduled.mutable_scheduled_time() = TestTimestamp(29);
  out.push_back(RunCreated(scheduled));
  out.push_back(RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_RUNNING, "", 11));
  out.push_back(
      RunUpdated("r1", regatta::v1::PIPELINE_RUN_STATE_SUCCEEDED, "", -1, 14, {{"out", "\"x\""}}));
  out.push_back(RunArchived("r1", true));
  out.push_back(CacheEntryCreated(TestCacheEntry("fp-1", 100)));
  out.push_back(CacheEntryCreated(TestCacheEntry("fp-2")));
  regatta::v1::Event del_cache;
  del_cache.mutable_cache_entries_deleted()->add_fingerprints("fp-2");
  out.push_back(PipelineEvent(del_cache));
  out.push_back(RunDeleted("r2"));
  return out;
}

TEST_P(StoreConformanceTest, PipelineViewsReplayToTheSameDump) {
  // One store gets an event per batch, the other the whole history in one batch, at the same
  // offsets: the same views.
  ExpectReplayEquality(
      PipelineHistory(),
      {"pipelines", "pipeline_versions", "experiments", "pipeline_runs", "pipeline_tasks",
       "artifacts", "artifact_events", "cache_entries", "recurring_runs"},
      "", {TaskUpdated("r3", TestTask("new", regatta::v1::PIPELINE_TASK_STATE_PENDING))});
}

}  // namespace regatta::store::testing

#endif  // REGATTA_TESTS_CONFORMANCE_PIPELINE_VIEWS_CONFORMANCE_H_
