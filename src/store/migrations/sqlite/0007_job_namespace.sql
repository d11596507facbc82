-- Armada's Kubernetes namespace of a job (Job.namespace), shown in listings and filtered on.
-- Jobs submitted before it have none.
ALTER TABLE jobs ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
CREATE INDEX jobs_by_namespace ON jobs (namespace, seq);
