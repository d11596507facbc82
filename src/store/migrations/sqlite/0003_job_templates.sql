-- The scheduling part of job specs (store::SchedulingSpec), one row per distinct part, so the
-- scheduler's initial load reads one small spec per template instead of every job's spec.
-- Jobs stored before this migration keep template_id 0: the scheduler reads their full spec.
CREATE TABLE job_templates (
  id INTEGER PRIMARY KEY,
  spec BLOB NOT NULL UNIQUE        -- regatta.v1.Job, deterministic, scheduling fields only
);
ALTER TABLE jobs ADD COLUMN template_id INTEGER NOT NULL DEFAULT 0;
ALTER TABLE jobs ADD COLUMN gang_id TEXT NOT NULL DEFAULT '';
