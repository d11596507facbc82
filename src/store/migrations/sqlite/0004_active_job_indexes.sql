-- Bulk cancel and preempt (a whole queue, executor or node) look only at live jobs and runs.
-- These partial indexes hold just those rows, so the lookup does not scan a queue's terminal
-- history. Their WHERE clauses must stay identical to the ones SqliteStore::FindJobs writes
-- (kActiveJobStates, kActiveRunStates), or SQLite will not use them.
CREATE INDEX jobs_active_by_queue ON jobs (queue, priority_class) WHERE state IN (1, 2, 3, 4, 5);
CREATE INDEX runs_active_by_node ON runs (executor_id, node_id) WHERE state IN (1, 2, 3);
