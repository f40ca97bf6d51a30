-- The settings that shaped a partition's rows (judge and model, extra suites, policies), as a short hash:
-- `dreval run` re-runs a partition whose version differs from the current settings'. NULL: made before.
ALTER TABLE materialized_partitions ADD COLUMN IF NOT EXISTS settings_version VARCHAR;
