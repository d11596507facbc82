-- The pipeline views (src/store/pipeline_views.h): pipelines and versions, experiments, runs and
-- their tasks, artifacts and their lineage events, cache entries, recurring runs. Each row keeps
-- its resource as a protobuf blob (`body`) plus the columns that filters, sorts and joins read;
-- big spec texts sit in their own columns so listings do not parse them. Times are microseconds
-- since the Unix epoch; `seq` rowids number rows in ingest order (creation order, and the
-- tiebreaker of every page token).

CREATE TABLE pipelines (
  seq INTEGER PRIMARY KEY,
  pipeline_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  body BLOB NOT NULL,              -- regatta.v1.Pipeline
  last_offset INTEGER NOT NULL
);

CREATE TABLE pipeline_versions (
  seq INTEGER PRIMARY KEY,
  version_id TEXT NOT NULL UNIQUE,
  pipeline_id TEXT NOT NULL,
  name TEXT NOT NULL,
  create_time_us INTEGER NOT NULL,
  body BLOB NOT NULL,              -- regatta.v1.PipelineVersion without the spec texts
  spec_json TEXT NOT NULL,
  platform_spec_json TEXT NOT NULL,
  last_offset INTEGER NOT NULL,
  UNIQUE (pipeline_id, name)
);
CREATE INDEX pipeline_versions_by_pipeline ON pipeline_versions (pipeline_id, create_time_us, seq);

CREATE TABLE experiments (
  seq INTEGER PRIMARY KEY,
  experiment_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL UNIQUE,
  archived INTEGER NOT NULL,
  body BLOB NOT NULL,              -- regatta.v1.Experiment
  last_offset INTEGER NOT NULL
);

CREATE TABLE pipeline_runs (
  seq INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  experiment_id TEXT NOT NULL,
  pipeline_id TEXT NOT NULL,
  pipeline_version_id TEXT NOT NULL,
  recurring_run_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  display_name TEXT NOT NULL,
  state INTEGER NOT NULL,          -- regatta.v1.PipelineRunState
  archived INTEGER NOT NULL,
  create_time_us INTEGER NOT NULL,
  scheduled_time_us INTEGER,       -- NULL: not a run of a recurring run
  body BLOB NOT NULL,              -- regatta.v1.PipelineRun without spec texts and tasks
  spec_json TEXT NOT NULL,
  platform_spec_json TEXT NOT NULL,
  last_offset INTEGER NOT NULL
);
CREATE INDEX pipeline_runs_by_create_time ON pipeline_runs (create_time_us, seq);
CREATE INDEX pipeline_runs_by_experiment ON pipeline_runs (experiment_id, create_time_us, seq);
CREATE INDEX pipeline_runs_by_recurring_run
  ON pipeline_runs (recurring_run_id, create_time_us, seq);
-- What the engine resumes after a restart: the runs not yet terminal (PENDING, RUNNING,
-- CANCELING, and UNSPECIFIED should a writer leave it unset). Must match kActiveRunStates in
-- sqlite_pipeline_views.cc word for word.
CREATE INDEX pipeline_runs_active ON pipeline_runs (state) WHERE state IN (0, 1, 2, 6);

CREATE TABLE pipeline_tasks (
  seq INTEGER PRIMARY KEY,         -- creation order of the run's tasks
  run_id TEXT NOT NULL,
  path TEXT NOT NULL,
  state INTEGER NOT NULL,          -- regatta.v1.PipelineTaskState
  body BLOB NOT NULL,              -- regatta.v1.PipelineTask
  last_offset INTEGER NOT NULL,
  UNIQUE (run_id, path)
);
CREATE INDEX pipeline_tasks_by_run ON pipeline_tasks (run_id, seq);

-- Artifacts outlive their run (other runs may have read them, or reuse them from the cache).
CREATE TABLE artifacts (
  seq INTEGER PRIMARY KEY,
  artifact_id TEXT NOT NULL UNIQUE,
  run_id TEXT NOT NULL,            -- where it was produced
  task_path TEXT NOT NULL,
  name TEXT NOT NULL,
  uri TEXT NOT NULL,
  create_time_us INTEGER NOT NULL,
  body BLOB NOT NULL,              -- regatta.v1.PipelineArtifact
  last_offset INTEGER NOT NULL
);
CREATE INDEX artifacts_by_run ON artifacts (run_id, seq);

-- Lineage: which task read (INPUT), produced (OUTPUT) or took from the cache (REPUBLISHED)
-- which artifact, under which input or output name.
CREATE TABLE artifact_events (
  seq INTEGER PRIMARY KEY,
  artifact_id TEXT NOT NULL,
  run_id TEXT NOT NULL,
  task_path TEXT NOT NULL,
  io_name TEXT NOT NULL,
  kind INTEGER NOT NULL,           -- 1 INPUT, 2 OUTPUT, 3 REPUBLISHED
  last_offset INTEGER NOT NULL,
  UNIQUE (artifact_id, kind, run_id, task_path, io_name)
);
CREATE INDEX artifact_events_by_task ON artifact_events (run_id, task_path);

CREATE TABLE cache_entries (
  fingerprint TEXT PRIMARY KEY NOT NULL,
  expire_time_us INTEGER,          -- NULL: never expires
  body BLOB NOT NULL,              -- regatta.v1.CacheEntry
  last_offset INTEGER NOT NULL
);

CREATE TABLE recurring_runs (
  seq INTEGER PRIMARY KEY,
  recurring_run_id TEXT NOT NULL UNIQUE,
  -- Kept apart from the body: upserts replace the body, runs created advance this.
  last_scheduled_time_us INTEGER,
  body BLOB NOT NULL,              -- regatta.v1.RecurringRun without last_scheduled_time
  last_offset INTEGER NOT NULL
);
