-- The query views (queues, jobs, runs) built by the ingester from the event log, the submit
-- deduplication table and the ingesters' log offsets. Times are microseconds since the Unix
-- epoch; protobuf blobs are serialized deterministically so two replays compare equal.
-- Every view row remembers the log offset that last changed it (last_offset), so an older
-- event never moves it backwards.

CREATE TABLE queues (
  name TEXT PRIMARY KEY NOT NULL,
  spec BLOB NOT NULL,              -- regatta.v1.Queue without cordoned and times
  cordoned INTEGER NOT NULL,
  -- A deleted queue stays as a tombstone so older events cannot bring it back.
  deleted INTEGER NOT NULL DEFAULT 0,
  create_time_us INTEGER NOT NULL,
  update_time_us INTEGER NOT NULL,
  last_offset INTEGER NOT NULL
);

CREATE TABLE jobs (
  -- Rowid in ingest (log) order: listings come in this order and indexes end in it, so pages
  -- come out of an index already sorted. job_specs shares it.
  seq INTEGER PRIMARY KEY,
  job_id TEXT NOT NULL UNIQUE,
  queue TEXT NOT NULL,
  job_set TEXT NOT NULL,
  owner TEXT NOT NULL,
  client_id TEXT NOT NULL,
  state INTEGER NOT NULL,          -- regatta.v1.JobState
  priority INTEGER NOT NULL,
  priority_class TEXT NOT NULL,
  submit_time_us INTEGER NOT NULL,
  last_transition_time_us INTEGER NOT NULL,
  requests BLOB NOT NULL,          -- regatta.v1.ResourceRequirements, requests only
  -- Every label as US key=value US, keys sorted and escaped, so a label filter is one instr().
  labels TEXT NOT NULL,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  cancel_reason TEXT NOT NULL DEFAULT '',
  cancel_user TEXT NOT NULL DEFAULT '',
  preempt_requested INTEGER NOT NULL DEFAULT 0,
  preempt_reason TEXT NOT NULL DEFAULT '',
  latest_run_id TEXT NOT NULL DEFAULT '',
  state_reason TEXT NOT NULL DEFAULT '',  -- why it was cancelled, preempted or rejected
  error BLOB,                      -- regatta.v1.Error that ended the job
  last_offset INTEGER NOT NULL
);
CREATE INDEX jobs_by_job_set ON jobs (queue, job_set, seq);
CREATE INDEX jobs_by_queue ON jobs (queue, seq);
CREATE INDEX jobs_by_state ON jobs (state, seq);
CREATE INDEX jobs_by_owner ON jobs (owner, seq);

-- The job as submitted, apart from the listing columns so list scans stay small.
CREATE TABLE job_specs (
  seq INTEGER PRIMARY KEY,         -- jobs.seq
  spec BLOB NOT NULL               -- regatta.v1.Job
);

CREATE TABLE runs (
  seq INTEGER PRIMARY KEY,         -- insertion order: a job's runs oldest first
  run_id TEXT NOT NULL UNIQUE,
  job_id TEXT NOT NULL,
  executor_id TEXT NOT NULL,
  node_id TEXT NOT NULL,
  pool TEXT NOT NULL,
  state INTEGER NOT NULL,          -- regatta.v1.RunState
  leased_time_us INTEGER,
  pending_time_us INTEGER,
  started_time_us INTEGER,
  finished_time_us INTEGER,
  error BLOB,                      -- regatta.v1.Error
  last_offset INTEGER NOT NULL
);
CREATE INDEX runs_by_job ON runs (job_id);

-- Submit deduplication, written by the API server: the first job id of a client id wins.
CREATE TABLE client_ids (
  queue TEXT NOT NULL,
  client_id TEXT NOT NULL,
  job_id TEXT NOT NULL,
  PRIMARY KEY (queue, client_id)
) WITHOUT ROWID;

-- Written in the same transaction as the batch it covers.
CREATE TABLE consumer_offsets (
  consumer TEXT PRIMARY KEY NOT NULL,
  log_offset INTEGER NOT NULL
) WITHOUT ROWID;
