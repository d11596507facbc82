-- The scheduler loads what changed since its last load by the log offset that last changed a
-- row (rows only ever move forwards), so these indexes make each load a range scan.
CREATE INDEX jobs_by_last_offset ON jobs (last_offset);
CREATE INDEX runs_by_last_offset ON runs (last_offset);
CREATE INDEX runs_by_state ON runs (state);
