// The pipeline views of the SQLite store (tables of migration 0005_pipelines.sql): applying
// pipeline events at ingest, and the PipelineViews queries.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/descriptor.h"
#include "src/common/status_macros.h"
#include "src/store/sqlite/sqlite_internal.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::store {
namespace sqlite_internal {
namespace {

using regatta::v1::CacheEntry;
using regatta::v1::Event;
using regatta::v1::Experiment;
using regatta::v1::Pipeline;
using regatta::v1::PipelineArtifact;
using regatta::v1::PipelineRun;
using regatta::v1::PipelineRunState;
using regatta::v1::PipelineTask;
using regatta::v1::PipelineTaskState;
using regatta::v1::PipelineVersion;
using regatta::v1::RecurringRun;

// Runs the engine resumes: not terminal. Word for word the WHERE clause of the partial index
// pipeline_runs_active (0005_pipelines.sql), or SQLite will not use it.
constexpr absl::string_view kActiveRunStates = "(0, 1, 2, 6)";

// artifact_events.kind
enum class ArtifactEventKind : int64_t { kInput = 1, kOutput = 2, kRepublished = 3 };

// "SUCCEEDED" for PIPELINE_TASK_STATE_SUCCEEDED.
std::string TaskStateName(PipelineTaskState state) {
  constexpr absl::string_view kPrefix = "PIPELINE_TASK_STATE_";
  std::string name = regatta::v1::PipelineTaskState_Name(state);
  if (absl::StartsWith(name, kPrefix)) name.erase(0, kPrefix.size());
  return name;
}

// Map entries in key order: protobuf map iteration order varies, row numbering must not.
template <typename Value>
std::vector<std::pair<std::string, const Value*>> SortedEntries(
    const google::protobuf::Map<std::string, Value>& map) {
  std::vector<std::pair<std::string, const Value*>> out;
  out.reserve(map.size());
  for (const auto& [key, value] : map) out.emplace_back(key, &value);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// ---- Applying pipeline events ----------------------------------------------------------------

class PipelineApplier {
 public:
  PipelineApplier(Connection* conn, int64_t offset, const Event& event, IngestResult* result)
      : conn_(conn), offset_(offset), event_(event), result_(result) {}

  absl::Status Apply() {
    switch (event_.event_case()) {
      case Event::kPipelineCreated:
        return CreatePipeline(event_.pipeline_created().pipeline());
      case Event::kPipelineDeleted:
        return DeletePipeline(event_.pipeline_deleted().pipeline_id());
      case Event::kPipelineVersionCreated:
        return CreateVersion(event_.pipeline_version_created().version());
      case Event::kPipelineVersionDeleted:
        return DeleteWhere("pipeline_versions", "version_id",
                           event_.pipeline_version_deleted().version_id());
      case Event::kExperimentUpserted:
        return UpsertExperiment(event_.experiment_upserted().experiment());
      case Event::kExperimentDeleted:
        return DeleteWhere("experiments", "experiment_id",
                           event_.experiment_deleted().experiment_id());
      case Event::kPipelineRunCreated:
        return CreateRun(event_.pipeline_run_created().run());
      case Event::kPipelineRunUpdated:
        return UpdateRun(event_.pipeline_run_updated());
      case Event::kPipelineRunArchived:
        return ArchiveRun(event_.pipeline_run_archived());
      case Event::kPipelineRunDeleted:
        return DeleteRun(event_.pipeline_run_deleted().run_id());
      case Event::kPipelineTaskUpdated:
        return UpdateTask(event_.pipeline_task_updated());
      case Event::kCacheEntryCreated:
        return CreateCacheEntry(event_.cache_entry_created().entry());
      case Event::kCacheEntriesDeleted:
        for (const std::string& fingerprint : event_.cache_entries_deleted().fingerprints()) {
          RETURN_IF_ERROR(DeleteWhere("cache_entries", "fingerprint", fingerprint));
        }
        return absl::OkStatus();
      case Event::kRecurringRunUpserted:
        return UpsertRecurringRun(event_.recurring_run_upserted().recurring_run());
      case Event::kRecurringRunDeleted:
        return DeleteWhere("recurring_runs", "recurring_run_id",
                           event_.recurring_run_deleted().recurring_run_id());
      default:
        Skip("", "not a pipeline event");
        return absl::OkStatus();
    }
  }

 private:
  void Skip(absl::string_view row, absl::string_view why) {
    SkipEvent(event_, "PipelineChange", offset_, row, why, result_);
  }

  // The seq of the row whose `column` is `value`, if any.
  absl::StatusOr<std::optional<int64_t>> FindSeq(absl::string_view table, absl::string_view column,
                                                 absl::string_view value) {
    ASSIGN_OR_RETURN(Stmt stmt, conn_->Prepare(absl::StrCat("SELECT seq FROM ", table, " WHERE ",
                                                            column, " = ?1")));
    stmt.BindText(1, value);
    ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) return std::nullopt;
    return stmt.Int(0);
  }

  absl::Status DeleteWhere(absl::string_view table, absl::string_view column,
                           absl::string_view value) {
    return DeleteRowsWhere(conn_, table, column, value);
  }

  absl::Status CreatePipeline(const Pipeline& pipeline) {
    const std::string row = absl::StrCat("pipeline_id=", pipeline.id());
    if (pipeline.id().empty()) {
      Skip(row, "empty pipeline id");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> known,
                     FindSeq("pipelines", "pipeline_id", pipeline.id()));
    if (known.has_value()) return absl::OkStatus();  // the first creation wins
    ASSIGN_OR_RETURN(Stmt taken,
                     conn_->Prepare("SELECT pipeline_id FROM pipelines WHERE name = ?1"));
    taken.BindText(1, pipeline.name());
    ASSIGN_OR_RETURN(bool name_taken, taken.Step());
    if (name_taken) {
      Skip(row, absl::StrCat("name '", pipeline.name(), "' is taken by pipeline ", taken.Text(0)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Stmt insert, conn_->Prepare("INSERT INTO pipelines (pipeline_id, name, body, "
                                                 "last_offset) VALUES (?1, ?2, ?3, ?4)"));
    insert.BindText(1, pipeline.id())
        .BindText(2, pipeline.name())
        .BindBlob(3, Serialize(pipeline))
        .Bind(4, offset_);
    return insert.Run();
  }

  absl::Status DeletePipeline(absl::string_view pipeline_id) {
    // Its versions go with it; runs keep their own copy of the spec.
    RETURN_IF_ERROR(DeleteWhere("pipeline_versions", "pipeline_id", pipeline_id));
    return DeleteWhere("pipelines", "pipeline_id", pipeline_id);
  }

  absl::Status CreateVersion(const PipelineVersion& version) {
    const std::string row = absl::StrCat("version_id=", version.id());
    if (version.id().empty()) {
      Skip(row, "empty version id");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> known,
                     FindSeq("pipeline_versions", "version_id", version.id()));
    if (known.has_value()) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::optional<int64_t> pipeline,
                     FindSeq("pipelines", "pipeline_id", version.pipeline_id()));
    if (!pipeline.has_value()) {
      Skip(row, absl::StrCat("unknown pipeline ", version.pipeline_id()));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Stmt taken, conn_->Prepare("SELECT version_id FROM pipeline_versions "
                                                "WHERE pipeline_id = ?1 AND name = ?2"));
    taken.BindText(1, version.pipeline_id()).BindText(2, version.name());
    ASSIGN_OR_RETURN(bool name_taken, taken.Step());
    if (name_taken) {
      Skip(row, absl::StrCat("name '", version.name(), "' is taken by version ", taken.Text(0),
                             " of pipeline ", version.pipeline_id()));
      return absl::OkStatus();
    }
    PipelineVersion body = version;
    body.clear_spec_json();
    body.clear_platform_spec_json();
    ASSIGN_OR_RETURN(
        Stmt insert,
        conn_->Prepare("INSERT INTO pipeline_versions (version_id, pipeline_id, name, "
                       "create_time_us, body, spec_json, platform_spec_json, last_offset) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"));
    insert.BindText(1, version.id())
        .BindText(2, version.pipeline_id())
        .BindText(3, version.name())
        .Bind(4, ToMicros(version.create_time()))
        .BindBlob(5, Serialize(body))
        .BindTextRef(6, version.spec_json())
        .BindTextRef(7, version.platform_spec_json())
        .Bind(8, offset_);
    return insert.Run();
  }

  absl::Status UpsertExperiment(const Experiment& experiment) {
    const std::string row = absl::StrCat("experiment_id=", experiment.id());
    if (experiment.id().empty()) {
      Skip(row, "empty experiment id");
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Stmt taken, conn_->Prepare("SELECT experiment_id FROM experiments "
                                                "WHERE name = ?1 AND experiment_id != ?2"));
    taken.BindText(1, experiment.name()).BindText(2, experiment.id());
    ASSIGN_OR_RETURN(bool name_taken, taken.Step());
    if (name_taken) {
      Skip(row,
           absl::StrCat("name '", experiment.name(), "' is taken by experiment ", taken.Text(0)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare("INSERT INTO experiments (experiment_id, name, archived, body, "
                       "last_offset) VALUES (?1, ?2, ?3, ?4, ?5) "
                       "ON CONFLICT (experiment_id) DO UPDATE SET name = excluded.name, "
                       "archived = excluded.archived, body = excluded.body, "
                       "last_offset = excluded.last_offset "
                       "WHERE excluded.last_offset >= experiments.last_offset"));
    upsert.BindText(1, experiment.id())
        .BindText(2, experiment.name())
        .Bind(3, experiment.archived() ? 1 : 0)
        .BindBlob(4, Serialize(experiment))
        .Bind(5, offset_);
    return upsert.Run();
  }

  absl::Status CreateRun(const PipelineRun& run) {
    const std::string row = absl::StrCat("run_id=", run.id());
    if (run.id().empty()) {
      Skip(row, "empty run id");
      return absl::OkStatus();
    }
    if (run.state() != regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED &&
        !regatta::v1::PipelineRunState_IsValid(run.state())) {
      Skip(row, absl::StrCat("invalid state ", static_cast<int>(run.state())));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> known, FindSeq("pipeline_runs", "run_id", run.id()));
    if (known.has_value()) return absl::OkStatus();
    PipelineRun body = run;
    body.clear_spec_json();
    body.clear_platform_spec_json();
    body.clear_tasks();  // tasks come with PipelineTaskUpdated
    if (body.state() == regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED) {
      body.set_state(regatta::v1::PIPELINE_RUN_STATE_PENDING);
    }
    ASSIGN_OR_RETURN(
        Stmt insert,
        conn_->Prepare("INSERT INTO pipeline_runs (run_id, experiment_id, pipeline_id, "
                       "pipeline_version_id, recurring_run_id, owner, display_name, state, "
                       "archived, create_time_us, scheduled_time_us, body, spec_json, "
                       "platform_spec_json, last_offset) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, "
                       "?15)"));
    insert.BindText(1, run.id())
        .BindText(2, run.experiment_id())
        .BindText(3, run.pipeline_id())
        .BindText(4, run.pipeline_version_id())
        .BindText(5, run.recurring_run_id())
        .BindText(6, run.owner())
        .BindText(7, run.display_name())
        .Bind(8, body.state())
        .Bind(9, run.archived() ? 1 : 0)
        .Bind(10, ToMicros(run.create_time()));
    if (run.has_scheduled_time()) {
      insert.Bind(11, ToMicros(run.scheduled_time()));
    } else {
      insert.BindNull(11);
    }
    insert.BindBlob(12, Serialize(body))
        .BindTextRef(13, run.spec_json())
        .BindTextRef(14, run.platform_spec_json())
        .Bind(15, offset_);
    RETURN_IF_ERROR(insert.Run());

    if (run.recurring_run_id().empty() || !run.has_scheduled_time()) return absl::OkStatus();
    // An unknown recurring run (deleted meanwhile) has nothing to advance.
    ASSIGN_OR_RETURN(
        Stmt advance,
        conn_->Prepare("UPDATE recurring_runs SET last_scheduled_time_us = ?2, last_offset = ?3 "
                       "WHERE recurring_run_id = ?1 AND (last_scheduled_time_us IS NULL OR "
                       "last_scheduled_time_us < ?2)"));
    advance.BindText(1, run.recurring_run_id())
        .Bind(2, ToMicros(run.scheduled_time()))
        .Bind(3, offset_);
    return advance.Run();
  }

  struct RunRow {
    int64_t seq = 0;
    int64_t last_offset = 0;
    PipelineRun body;
  };

  // The run row an event changes; nullopt (reported) if the run is unknown.
  absl::StatusOr<std::optional<RunRow>> LookupRun(absl::string_view run_id) {
    ASSIGN_OR_RETURN(Stmt stmt, conn_->Prepare("SELECT seq, last_offset, body FROM pipeline_runs "
                                               "WHERE run_id = ?1"));
    stmt.BindText(1, run_id);
    ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) {
      Skip(absl::StrCat("run_id=", run_id), "unknown run");
      return std::nullopt;
    }
    RunRow row;
    row.seq = stmt.Int(0);
    row.last_offset = stmt.Int(1);
    absl::Status parsed =
        ParseBlob(stmt.Blob(2), &row.body, "pipeline_runs", "run_id", run_id, "body");
    if (!parsed.ok()) {
      // A damaged row must not stop the log: the change is reported and left out.
      Skip(absl::StrCat("run_id=", run_id), parsed.message());
      return std::nullopt;
    }
    return row;
  }

  absl::Status WriteRun(const RunRow& row) {
    ASSIGN_OR_RETURN(Stmt update,
                     conn_->Prepare("UPDATE pipeline_runs SET state = ?2, archived = ?3, "
                                    "body = ?4, last_offset = ?5 WHERE seq = ?1"));
    update.Bind(1, row.seq)
        .Bind(2, row.body.state())
        .Bind(3, row.body.archived() ? 1 : 0)
        .BindBlob(4, Serialize(row.body))
        .Bind(5, offset_);
    return update.Run();
  }

  absl::Status UpdateRun(const regatta::v1::PipelineRunUpdated& update) {
    const PipelineRunState next = update.state();
    if (next == regatta::v1::PIPELINE_RUN_STATE_UNSPECIFIED ||
        !regatta::v1::PipelineRunState_IsValid(next)) {
      Skip(absl::StrCat("run_id=", update.run_id()),
           absl::StrCat("invalid state ", static_cast<int>(next)));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<RunRow> row, LookupRun(update.run_id()));
    if (!row.has_value() || offset_ < row->last_offset) return absl::OkStatus();
    PipelineRun& run = row->body;
    const PipelineRunState current = run.state();
    const bool retry = (current == regatta::v1::PIPELINE_RUN_STATE_FAILED ||
                        current == regatta::v1::PIPELINE_RUN_STATE_CANCELED) &&
                       next == regatta::v1::PIPELINE_RUN_STATE_RUNNING;
    if (IsTerminal(current) && !retry) return absl::OkStatus();
    run.set_state(next);
    run.set_error_message(update.error_message());
    if (retry) run.clear_finish_time();
    if (!update.outputs().empty()) *run.mutable_outputs() = update.outputs();
    if (update.has_start_time()) *run.mutable_start_time() = update.start_time();
    if (update.has_finish_time()) *run.mutable_finish_time() = update.finish_time();
    return WriteRun(*row);
  }

  absl::Status ArchiveRun(const regatta::v1::PipelineRunArchived& archived) {
    ASSIGN_OR_RETURN(std::optional<RunRow> row, LookupRun(archived.run_id()));
    if (!row.has_value() || offset_ < row->last_offset) return absl::OkStatus();
    row->body.set_archived(archived.archived());
    return WriteRun(*row);
  }

  absl::Status DeleteRun(absl::string_view run_id) {
    // Its artifacts and their lineage stay: other runs may have read them.
    RETURN_IF_ERROR(DeleteWhere("pipeline_tasks", "run_id", run_id));
    return DeleteWhere("pipeline_runs", "run_id", run_id);
  }

  absl::Status UpdateTask(const regatta::v1::PipelineTaskUpdated& update) {
    const PipelineTask& task = update.task();
    const std::string row = absl::StrCat("run_id=", update.run_id(), " path=", task.path());
    if (task.path().empty()) {
      Skip(row, "empty task path");
      return absl::OkStatus();
    }
    if (task.state() == regatta::v1::PIPELINE_TASK_STATE_UNSPECIFIED ||
        !regatta::v1::PipelineTaskState_IsValid(task.state())) {
      Skip(row, absl::StrCat("invalid state ", static_cast<int>(task.state())));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(std::optional<int64_t> run,
                     FindSeq("pipeline_runs", "run_id", update.run_id()));
    if (!run.has_value()) {
      Skip(row, absl::StrCat("unknown run ", update.run_id()));
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Stmt lookup, conn_->Prepare("SELECT seq, state, last_offset FROM "
                                                 "pipeline_tasks WHERE run_id = ?1 AND path = ?2"));
    lookup.BindText(1, update.run_id()).BindText(2, task.path());
    ASSIGN_OR_RETURN(bool found, lookup.Step());
    if (found) {
      const int64_t seq = lookup.Int(0);
      const auto current = static_cast<PipelineTaskState>(lookup.Int(1));
      if (offset_ < lookup.Int(2)) return absl::OkStatus();
      // Only a retry of the run moves a terminal task (back to PENDING or RUNNING).
      if (IsTerminal(current) && task.state() != regatta::v1::PIPELINE_TASK_STATE_PENDING &&
          task.state() != regatta::v1::PIPELINE_TASK_STATE_RUNNING) {
        return absl::OkStatus();
      }
      ASSIGN_OR_RETURN(Stmt replace, conn_->Prepare("UPDATE pipeline_tasks SET state = ?2, "
                                                    "body = ?3, last_offset = ?4 WHERE seq = ?1"));
      replace.Bind(1, seq).Bind(2, task.state()).BindBlob(3, Serialize(task)).Bind(4, offset_);
      RETURN_IF_ERROR(replace.Run());
    } else {
      ASSIGN_OR_RETURN(Stmt insert,
                       conn_->Prepare("INSERT INTO pipeline_tasks (run_id, path, state, body, "
                                      "last_offset) VALUES (?1, ?2, ?3, ?4, ?5)"));
      insert.BindText(1, update.run_id())
          .BindText(2, task.path())
          .Bind(3, task.state())
          .BindBlob(4, Serialize(task))
          .Bind(5, offset_);
      RETURN_IF_ERROR(insert.Run());
    }
    return RecordLineage(update.run_id(), task);
  }

  // Artifacts and events of one task: what it read, and what it produced or (CACHED) took from
  // the cache. Repeated updates of a task add nothing twice.
  absl::Status RecordLineage(const std::string& run_id, const PipelineTask& task) {
    const bool cached = task.state() == regatta::v1::PIPELINE_TASK_STATE_CACHED;
    for (const auto& [name, list] : SortedEntries(task.input_artifacts())) {
      for (const PipelineArtifact& artifact : list->artifacts()) {
        RETURN_IF_ERROR(RecordArtifact(run_id, task, name, artifact, ArtifactEventKind::kInput));
      }
    }
    for (const auto& [name, list] : SortedEntries(task.output_artifacts())) {
      for (const PipelineArtifact& artifact : list->artifacts()) {
        RETURN_IF_ERROR(
            RecordArtifact(run_id, task, name, artifact,
                           cached ? ArtifactEventKind::kRepublished : ArtifactEventKind::kOutput));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RecordArtifact(const std::string& run_id, const PipelineTask& task,
                              const std::string& io_name, const PipelineArtifact& given,
                              ArtifactEventKind kind) {
    if (given.id().empty()) {
      Skip(absl::StrCat("run_id=", run_id, " path=", task.path(), " artifact ", io_name),
           "artifact without id (not recorded in the lineage)");
      return absl::OkStatus();
    }
    PipelineArtifact artifact = given;
    if (kind == ArtifactEventKind::kOutput) {
      // This task produced it: it is the artifact's home.
      if (artifact.run_id().empty()) artifact.set_run_id(run_id);
      if (artifact.task_path().empty()) artifact.set_task_path(task.path());
      if (artifact.name().empty()) artifact.set_name(io_name);
    } else if (kind == ArtifactEventKind::kRepublished) {
      if (artifact.run_id().empty()) artifact.set_run_id(task.cached_from_run_id());
      if (artifact.task_path().empty()) artifact.set_task_path(task.cached_from_task_path());
    }
    if (!artifact.has_create_time()) *artifact.mutable_create_time() = event_.created();
    // The producing task's later updates (metadata written after the step) replace the row;
    // anyone else only records an artifact not seen before.
    const bool producer = kind == ArtifactEventKind::kOutput && artifact.run_id() == run_id &&
                          artifact.task_path() == task.path();
    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare(producer
                           ? "INSERT INTO artifacts (artifact_id, run_id, task_path, name, uri, "
                             "create_time_us, body, last_offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6, "
                             "?7, ?8) ON CONFLICT (artifact_id) DO UPDATE SET name = "
                             "excluded.name, uri = excluded.uri, create_time_us = "
                             "excluded.create_time_us, body = excluded.body, "
                             "last_offset = excluded.last_offset WHERE artifacts.run_id = "
                             "excluded.run_id AND artifacts.task_path = excluded.task_path AND "
                             "excluded.last_offset >= artifacts.last_offset"
                           : "INSERT OR IGNORE INTO artifacts (artifact_id, run_id, task_path, "
                             "name, uri, create_time_us, body, last_offset) VALUES (?1, ?2, ?3, "
                             "?4, ?5, ?6, ?7, ?8)"));
    upsert.BindText(1, artifact.id())
        .BindText(2, artifact.run_id())
        .BindText(3, artifact.task_path())
        .BindText(4, artifact.name())
        .BindText(5, artifact.uri())
        .Bind(6, ToMicros(artifact.create_time()))
        .BindBlob(7, Serialize(artifact))
        .Bind(8, offset_);
    RETURN_IF_ERROR(upsert.Run());
    ASSIGN_OR_RETURN(Stmt event, conn_->Prepare("INSERT OR IGNORE INTO artifact_events "
                                                "(artifact_id, run_id, task_path, io_name, kind, "
                                                "last_offset) VALUES (?1, ?2, ?3, ?4, ?5, ?6)"));
    event.BindText(1, artifact.id())
        .BindText(2, run_id)
        .BindText(3, task.path())
        .BindText(4, io_name)
        .Bind(5, static_cast<int64_t>(kind))
        .Bind(6, offset_);
    return event.Run();
  }

  absl::Status CreateCacheEntry(const CacheEntry& entry) {
    if (entry.fingerprint().empty()) {
      Skip("fingerprint=\"\"", "empty fingerprint");
      return absl::OkStatus();
    }
    // A newer entry replaces an older one (written after the old one expired or missed).
    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare("INSERT INTO cache_entries (fingerprint, expire_time_us, body, "
                       "last_offset) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (fingerprint) DO "
                       "UPDATE SET expire_time_us = excluded.expire_time_us, "
                       "body = excluded.body, last_offset = excluded.last_offset "
                       "WHERE excluded.last_offset >= cache_entries.last_offset"));
    upsert.BindText(1, entry.fingerprint());
    if (entry.has_expire_time()) {
      upsert.Bind(2, ToMicros(entry.expire_time()));
    } else {
      upsert.BindNull(2);
    }
    upsert.BindBlob(3, Serialize(entry)).Bind(4, offset_);
    return upsert.Run();
  }

  absl::Status UpsertRecurringRun(const RecurringRun& recurring_run) {
    if (recurring_run.id().empty()) {
      Skip("recurring_run_id=\"\"", "empty recurring run id");
      return absl::OkStatus();
    }
    RecurringRun body = recurring_run;
    body.clear_last_scheduled_time();  // output only: advanced by the runs it creates
    ASSIGN_OR_RETURN(
        Stmt upsert,
        conn_->Prepare("INSERT INTO recurring_runs (recurring_run_id, body, last_offset) "
                       "VALUES (?1, ?2, ?3) ON CONFLICT (recurring_run_id) DO UPDATE SET "
                       "body = excluded.body, last_offset = excluded.last_offset "
                       "WHERE excluded.last_offset >= recurring_runs.last_offset"));
    upsert.BindText(1, recurring_run.id()).BindBlob(2, Serialize(body)).Bind(3, offset_);
    return upsert.Run();
  }

  Connection* conn_;
  const int64_t offset_;
  const Event& event_;
  IngestResult* result_;
};

}  // namespace

absl::Status ApplyPipelineChange(Connection* conn, int64_t offset, const PipelineChange& change,
                                 IngestResult* result) {
  return PipelineApplier(conn, offset, change.event, result).Apply();
}

const std::vector<std::pair<absl::string_view, absl::string_view>>& PipelineDumpQueries() {
  // Every column but the seq rowids, in seq order (creation order; what listings follow).
  static const auto* const kQueries = new std::vector<
      std::pair<absl::string_view, absl::string_view>>{
      {"pipelines", "SELECT pipeline_id, name, body, last_offset FROM pipelines ORDER BY seq"},
      {"pipeline_versions",
       "SELECT version_id, pipeline_id, name, create_time_us, body, spec_json, "
       "platform_spec_json, last_offset FROM pipeline_versions ORDER BY seq"},
      {"experiments",
       "SELECT experiment_id, name, archived, body, last_offset FROM experiments ORDER BY seq"},
      {"pipeline_runs",
       "SELECT run_id, experiment_id, pipeline_id, pipeline_version_id, recurring_run_id, owner, "
       "display_name, state, archived, create_time_us, scheduled_time_us, body, spec_json, "
       "platform_spec_json, last_offset FROM pipeline_runs ORDER BY seq"},
      {"pipeline_tasks",
       "SELECT run_id, path, state, body, last_offset FROM pipeline_tasks ORDER BY seq"},
      {"artifacts",
       "SELECT artifact_id, run_id, task_path, name, uri, create_time_us, body, last_offset "
       "FROM artifacts ORDER BY seq"},
      {"artifact_events",
       "SELECT artifact_id, run_id, task_path, io_name, kind, last_offset FROM artifact_events "
       "ORDER BY seq"},
      {"cache_entries",
       "SELECT fingerprint, expire_time_us, body, last_offset FROM cache_entries "
       "ORDER BY fingerprint"},
      {"recurring_runs",
       "SELECT recurring_run_id, last_scheduled_time_us, body, last_offset FROM recurring_runs "
       "ORDER BY seq"},
  };
  return *kQueries;
}

std::unique_ptr<google::protobuf::Message> PipelineBlobMessage(absl::string_view table,
                                                               absl::string_view column) {
  if (column != "body") return nullptr;
  if (table == "pipelines") return std::make_unique<Pipeline>();
  if (table == "pipeline_versions") return std::make_unique<PipelineVersion>();
  if (table == "experiments") return std::make_unique<Experiment>();
  if (table == "pipeline_runs") return std::make_unique<PipelineRun>();
  if (table == "pipeline_tasks") return std::make_unique<PipelineTask>();
  if (table == "artifacts") return std::make_unique<PipelineArtifact>();
  if (table == "cache_entries") return std::make_unique<CacheEntry>();
  if (table == "recurring_runs") return std::make_unique<RecurringRun>();
  return nullptr;
}

namespace {

// ---- Reading rows ----------------------------------------------------------------------------

absl::StatusOr<PipelineRun> ReadRun(const Stmt& stmt, int body_col, int spec_col,
                                    absl::string_view run_id) {
  PipelineRun run;
  RETURN_IF_ERROR(ParseBlob(stmt.Blob(body_col), &run, "pipeline_runs", "run_id", run_id, "body"));
  if (spec_col >= 0) {
    run.set_spec_json(std::string(stmt.Text(spec_col)));
    run.set_platform_spec_json(std::string(stmt.Text(spec_col + 1)));
  }
  return run;
}

absl::StatusOr<PipelineTask> ReadTask(const Stmt& stmt, int body_col, absl::string_view run_id) {
  PipelineTask task;
  RETURN_IF_ERROR(
      ParseBlob(stmt.Blob(body_col), &task, "pipeline_tasks", "run_id", run_id, "body"));
  return task;
}

// The tasks of a run, in creation order.
absl::Status ReadTasks(Connection* conn, absl::string_view run_id, PipelineRun& run) {
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare("SELECT body FROM pipeline_tasks WHERE run_id = ?1 "
                                            "ORDER BY seq"));
  stmt.BindText(1, run_id);
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(*run.add_tasks(), ReadTask(stmt, 0, run_id));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace sqlite_internal

using sqlite_internal::AppendInList;
using sqlite_internal::BindAll;
using sqlite_internal::DecodePageToken;
using sqlite_internal::FinishPage;
using sqlite_internal::GetBody;
using sqlite_internal::kActiveRunStates;
using sqlite_internal::ListByText;
using sqlite_internal::PageKey;
using sqlite_internal::PageSize;
using sqlite_internal::ParseBlob;
using sqlite_internal::ReadRun;
using sqlite_internal::ReadTask;
using sqlite_internal::ReadTasks;
using sqlite_internal::SetMicros;
using sqlite_internal::SqlParams;
using sqlite_internal::Stmt;
using sqlite_internal::ToMicros;
using sqlite_internal::Transaction;

// ---- Pipelines and versions ----

absl::StatusOr<regatta::v1::Pipeline> SqliteStore::GetPipeline(absl::string_view id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::Pipeline>(conn.get(), "pipelines", "pipeline_id", id,
                                        absl::StrCat("pipeline ", id));
}

absl::StatusOr<regatta::v1::Pipeline> SqliteStore::GetPipelineByName(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::Pipeline>(conn.get(), "pipelines", "name", name,
                                        absl::StrCat("pipeline named '", name, "'"));
}

absl::StatusOr<Page<regatta::v1::Pipeline>> SqliteStore::ListPipelines(const PageRequest& page) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return ListByText<regatta::v1::Pipeline>(conn.get(), "pipelines", "name", "", page);
}

namespace {

absl::StatusOr<regatta::v1::PipelineVersion> ReadVersion(const Stmt& stmt, bool with_spec) {
  regatta::v1::PipelineVersion version;
  std::string id(stmt.Text(0));
  RETURN_IF_ERROR(ParseBlob(stmt.Blob(1), &version, "pipeline_versions", "version_id", id, "body"));
  if (with_spec) {
    version.set_spec_json(std::string(stmt.Text(2)));
    version.set_platform_spec_json(std::string(stmt.Text(3)));
  }
  return version;
}

}  // namespace

absl::StatusOr<regatta::v1::PipelineVersion> SqliteStore::GetPipelineVersion(absl::string_view id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare("SELECT version_id, body, spec_json, platform_spec_json FROM "
                                 "pipeline_versions WHERE version_id = ?1"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("pipeline version ", id, " not found"));
  return ReadVersion(stmt, /*with_spec=*/true);
}

absl::StatusOr<Page<regatta::v1::PipelineVersion>> SqliteStore::ListPipelineVersions(
    absl::string_view pipeline_id, const PageRequest& request, bool with_spec) {
  constexpr absl::string_view kListing = "pipeline_versions";
  PageKey after;
  if (!request.page_token.empty()) {
    ASSIGN_OR_RETURN(after, DecodePageToken(kListing, request.page_token));
  }
  const int size = PageSize(request.limit);
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  {
    ASSIGN_OR_RETURN(Stmt known, conn->Prepare("SELECT 1 FROM pipelines WHERE pipeline_id = ?1"));
    known.BindText(1, pipeline_id);
    ASSIGN_OR_RETURN(bool found, known.Step());
    if (!found) return absl::NotFoundError(absl::StrCat("pipeline ", pipeline_id, " not found"));
  }
  // Newest first.
  ASSIGN_OR_RETURN(
      Stmt stmt,
      conn->Prepare(absl::StrCat(
          "SELECT version_id, body, ", with_spec ? "spec_json, platform_spec_json" : "'', ''",
          ", create_time_us, seq FROM pipeline_versions WHERE pipeline_id = ?1 AND "
          "(?2 = 0 OR (create_time_us, seq) < (?3, ?4)) "
          "ORDER BY create_time_us DESC, seq DESC LIMIT ?5")));
  stmt.BindText(1, pipeline_id)
      .Bind(2, request.page_token.empty() ? 0 : 1)
      .Bind(3, after.number)
      .Bind(4, after.seq)
      .Bind(5, size + 1);
  Page<regatta::v1::PipelineVersion> page;
  std::vector<PageKey> keys;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(page.rows.emplace_back(), ReadVersion(stmt, with_spec));
    keys.push_back(PageKey{.seq = stmt.Int(5), .number = stmt.Int(4)});
  }
  FinishPage(page, keys, size, kListing);
  RETURN_IF_ERROR(txn.Commit());
  return page;
}

// ---- Experiments ----

absl::StatusOr<regatta::v1::Experiment> SqliteStore::GetExperiment(absl::string_view id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::Experiment>(conn.get(), "experiments", "experiment_id", id,
                                          absl::StrCat("experiment ", id));
}

absl::StatusOr<regatta::v1::Experiment> SqliteStore::GetExperimentByName(absl::string_view name) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::Experiment>(conn.get(), "experiments", "name", name,
                                          absl::StrCat("experiment named '", name, "'"));
}

absl::StatusOr<Page<regatta::v1::Experiment>> SqliteStore::ListExperiments(const PageRequest& page,
                                                                           bool include_archived) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return ListByText<regatta::v1::Experiment>(conn.get(), "experiments", "name",
                                             include_archived ? "" : " AND archived = 0", page);
}

// ---- Runs and tasks ----

absl::StatusOr<regatta::v1::PipelineRun> SqliteStore::GetPipelineRun(absl::string_view id,
                                                                     bool with_tasks) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  // One snapshot: the run and its tasks agree.
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare("SELECT body, spec_json, platform_spec_json FROM "
                                            "pipeline_runs WHERE run_id = ?1"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("pipeline run ", id, " not found"));
  ASSIGN_OR_RETURN(regatta::v1::PipelineRun run, ReadRun(stmt, 0, 1, id));
  if (with_tasks) RETURN_IF_ERROR(ReadTasks(conn.get(), id, run));
  RETURN_IF_ERROR(txn.Commit());
  return run;
}

absl::StatusOr<Page<regatta::v1::PipelineRun>> SqliteStore::ListPipelineRuns(
    const PipelineRunFilter& filter) {
  const bool by_name = filter.sort_by == "display_name";
  if (!by_name && !filter.sort_by.empty() && filter.sort_by != "create_time") {
    return absl::InvalidArgumentError(absl::StrCat(
        "sort_by: '", filter.sort_by, "' is not a run order (create_time or display_name)"));
  }
  // The token knows its order, so a token of another order is refused.
  const std::string listing =
      absl::StrCat("pipeline_runs/", by_name ? "display_name" : "create_time",
                   filter.descending ? "/desc" : "/asc");
  PageKey after;
  const bool continued = !filter.page.page_token.empty();
  if (continued) {
    ASSIGN_OR_RETURN(after, DecodePageToken(listing, filter.page.page_token));
  }
  const int size = PageSize(filter.page.limit);

  std::string sql =
      "SELECT run_id, body, seq, create_time_us, display_name FROM pipeline_runs WHERE 1";
  SqlParams params;
  auto equals = [&](absl::string_view column, const std::string& value) {
    if (value.empty()) return;
    absl::StrAppend(&sql, " AND ", column, " = ?");
    params.emplace_back(value);
  };
  equals("experiment_id", filter.experiment_id);
  equals("pipeline_id", filter.pipeline_id);
  equals("pipeline_version_id", filter.pipeline_version_id);
  equals("recurring_run_id", filter.recurring_run_id);
  equals("owner", filter.owner);
  AppendInList("state", std::vector<int>(filter.states.begin(), filter.states.end()), sql, params);
  if (filter.only_archived) {
    absl::StrAppend(&sql, " AND archived = 1");
  } else if (!filter.include_archived) {
    absl::StrAppend(&sql, " AND archived = 0");
  }
  const absl::string_view key = by_name ? "display_name" : "create_time_us";
  const absl::string_view direction = filter.descending ? "DESC" : "ASC";
  if (continued) {
    absl::StrAppend(&sql, " AND (", key, ", seq) ", filter.descending ? "<" : ">", " (?, ?)");
    if (by_name) {
      params.emplace_back(after.text);
    } else {
      params.emplace_back(after.number);
    }
    params.emplace_back(after.seq);
  }
  absl::StrAppend(&sql, " ORDER BY ", key, " ", direction, ", seq ", direction, " LIMIT ?");
  params.emplace_back(int64_t{size + 1});

  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare(sql));
  BindAll(stmt, params);
  Page<regatta::v1::PipelineRun> page;
  std::vector<PageKey> keys;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(page.rows.emplace_back(), ReadRun(stmt, 1, -1, stmt.Text(0)));
    PageKey& k = keys.emplace_back();
    k.seq = stmt.Int(2);
    if (by_name) {
      k.text = std::string(stmt.Text(4));
    } else {
      k.number = stmt.Int(3);
    }
  }
  FinishPage(page, keys, size, listing);
  return page;
}

absl::StatusOr<std::vector<regatta::v1::PipelineRun>> SqliteStore::ListActivePipelineRuns() {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  std::vector<regatta::v1::PipelineRun> runs;
  absl::flat_hash_map<std::string, size_t> index;
  {
    ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare(absl::StrCat(
                                    "SELECT run_id, body, spec_json, platform_spec_json FROM "
                                    "pipeline_runs WHERE state IN ",
                                    kActiveRunStates, " ORDER BY seq")));
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      std::string id(stmt.Text(0));
      ASSIGN_OR_RETURN(runs.emplace_back(), ReadRun(stmt, 1, 2, id));
      index.emplace(std::move(id), runs.size() - 1);
    }
  }
  if (runs.empty()) return runs;
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare(absl::StrCat(
                                  "SELECT t.run_id, t.body FROM pipeline_runs r JOIN "
                                  "pipeline_tasks t ON t.run_id = r.run_id WHERE r.state IN ",
                                  kActiveRunStates, " ORDER BY t.seq")));
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    auto it = index.find(stmt.Text(0));
    if (it == index.end()) continue;
    ASSIGN_OR_RETURN(*runs[it->second].add_tasks(), ReadTask(stmt, 1, stmt.Text(0)));
  }
  RETURN_IF_ERROR(txn.Commit());
  return runs;
}

// ---- Artifacts and lineage ----

absl::StatusOr<regatta::v1::PipelineArtifact> SqliteStore::GetArtifact(absl::string_view id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return GetBody<regatta::v1::PipelineArtifact>(conn.get(), "artifacts", "artifact_id", id,
                                                absl::StrCat("artifact ", id));
}

absl::StatusOr<std::vector<regatta::v1::PipelineArtifact>> SqliteStore::ListRunArtifacts(
    absl::string_view run_id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare("SELECT artifact_id, body FROM artifacts "
                                            "WHERE run_id = ?1 ORDER BY seq"));
  stmt.BindText(1, run_id);
  std::vector<regatta::v1::PipelineArtifact> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    RETURN_IF_ERROR(ParseBlob(stmt.Blob(1), &out.emplace_back(), "artifacts", "artifact_id",
                              stmt.Text(0), "body"));
  }
  return out;
}

absl::StatusOr<ArtifactLineage> SqliteStore::GetArtifactLineage(absl::string_view artifact_id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  ArtifactLineage lineage;
  ASSIGN_OR_RETURN(lineage.artifact, GetBody<regatta::v1::PipelineArtifact>(
                                         conn.get(), "artifacts", "artifact_id", artifact_id,
                                         absl::StrCat("artifact ", artifact_id)));
  // The task's current state: the body's, which the state column mirrors (empty once the
  // task's run was deleted).
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare("SELECT e.kind, e.run_id, e.task_path, e.io_name, t.state "
                                 "FROM artifact_events e LEFT JOIN pipeline_tasks t ON "
                                 "t.run_id = e.run_id AND t.path = e.task_path "
                                 "WHERE e.artifact_id = ?1 ORDER BY e.seq"));
  stmt.BindText(1, artifact_id);
  bool have_producer = false;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ArtifactLineage::TaskRef ref;
    ref.run_id = std::string(stmt.Text(1));
    ref.task_path = std::string(stmt.Text(2));
    ref.io_name = std::string(stmt.Text(3));
    if (!stmt.IsNull(4)) {
      ref.task_state =
          sqlite_internal::TaskStateName(static_cast<regatta::v1::PipelineTaskState>(stmt.Int(4)));
    }
    switch (stmt.Int(0)) {
      case static_cast<int64_t>(sqlite_internal::ArtifactEventKind::kInput):
        lineage.consumers.push_back(std::move(ref));
        break;
      case static_cast<int64_t>(sqlite_internal::ArtifactEventKind::kOutput):
        if (!have_producer) lineage.producer = std::move(ref);
        have_producer = true;
        break;
      default:
        lineage.republished_by.push_back(std::move(ref));
        break;
    }
  }
  if (!have_producer) {
    // Known only from readers (e.g. an artifact of a run ingested before lineage was kept).
    lineage.producer.run_id = lineage.artifact.run_id();
    lineage.producer.task_path = lineage.artifact.task_path();
    lineage.producer.io_name = lineage.artifact.name();
  }
  RETURN_IF_ERROR(txn.Commit());
  return lineage;
}

// ---- Cache ----

absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>>
SqliteStore::LookupCacheEntries(const std::vector<std::string>& fingerprints, absl::Time now) {
  // IN lists of at most kChunk keys, padded to a power of two (repeating the last key), so a
  // few cached statements serve every call.
  constexpr size_t kChunk = 256;
  absl::flat_hash_map<std::string, regatta::v1::CacheEntry> out;
  if (fingerprints.empty()) return out;
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(conn.get(), /*immediate=*/false));
  const int64_t now_us = ToMicros(now);
  for (size_t begin = 0; begin < fingerprints.size(); begin += kChunk) {
    const size_t count = std::min(kChunk, fingerprints.size() - begin);
    size_t slots = 1;
    while (slots < count) slots *= 2;
    std::string sql =
        "SELECT fingerprint, body FROM cache_entries WHERE (expire_time_us IS NULL OR "
        "expire_time_us > ?1) AND fingerprint IN (?2";
    for (size_t i = 1; i < slots; ++i) absl::StrAppend(&sql, ", ?", i + 2);
    sql += ")";
    ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare(sql));
    stmt.Bind(1, now_us);
    for (size_t i = 0; i < slots; ++i) {
      stmt.BindTextRef(static_cast<int>(i) + 2, fingerprints[begin + std::min(i, count - 1)]);
    }
    while (true) {
      ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      std::string fingerprint(stmt.Text(0));
      regatta::v1::CacheEntry entry;
      RETURN_IF_ERROR(
          ParseBlob(stmt.Blob(1), &entry, "cache_entries", "fingerprint", fingerprint, "body"));
      out.insert_or_assign(std::move(fingerprint), std::move(entry));
    }
  }
  RETURN_IF_ERROR(txn.Commit());
  return out;
}

absl::StatusOr<Page<regatta::v1::CacheEntry>> SqliteStore::ListCacheEntries(
    const PageRequest& page) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  return ListByText<regatta::v1::CacheEntry>(conn.get(), "cache_entries", "fingerprint", "", page);
}

// ---- Recurring runs ----

namespace {

absl::StatusOr<regatta::v1::RecurringRun> ReadRecurringRun(const Stmt& stmt) {
  regatta::v1::RecurringRun recurring_run;
  RETURN_IF_ERROR(ParseBlob(stmt.Blob(1), &recurring_run, "recurring_runs", "recurring_run_id",
                            stmt.Text(0), "body"));
  if (!stmt.IsNull(2)) SetMicros(stmt.Int(2), recurring_run.mutable_last_scheduled_time());
  return recurring_run;
}

}  // namespace

absl::StatusOr<regatta::v1::RecurringRun> SqliteStore::GetRecurringRun(absl::string_view id) {
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare("SELECT recurring_run_id, body, last_scheduled_time_us FROM "
                                 "recurring_runs WHERE recurring_run_id = ?1"));
  stmt.BindText(1, id);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat("recurring run ", id, " not found"));
  return ReadRecurringRun(stmt);
}

absl::StatusOr<Page<regatta::v1::RecurringRun>> SqliteStore::ListRecurringRuns(
    const PageRequest& request) {
  constexpr absl::string_view kListing = "recurring_runs";
  PageKey after;
  if (!request.page_token.empty()) {
    ASSIGN_OR_RETURN(after, DecodePageToken(kListing, request.page_token));
  }
  const int size = PageSize(request.limit);
  ASSIGN_OR_RETURN(ReaderLease conn, AcquireReader());
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare("SELECT recurring_run_id, body, last_scheduled_time_us, seq "
                                 "FROM recurring_runs WHERE seq > ?1 ORDER BY seq LIMIT ?2"));
  stmt.Bind(1, after.seq).Bind(2, size + 1);
  Page<regatta::v1::RecurringRun> page;
  std::vector<PageKey> keys;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    ASSIGN_OR_RETURN(page.rows.emplace_back(), ReadRecurringRun(stmt));
    keys.push_back(PageKey{.seq = stmt.Int(3)});
  }
  FinishPage(page, keys, size, kListing);
  return page;
}

}  // namespace regatta::store
