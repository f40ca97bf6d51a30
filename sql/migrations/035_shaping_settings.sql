-- The settings behind each settings version (materialized_partitions.settings_version, a hash): the
-- planner reads which setting changed (judge, a policy, suites, ...) and, for a policy, whether it
-- is declared by a benchmark that scores the partition at all (a DR³ policy re-runs DR³'s partitions only).
CREATE TABLE IF NOT EXISTS shaping_settings (
    version    VARCHAR PRIMARY KEY,
    settings   VARCHAR NOT NULL,   -- JSON: setting name -> value, as hashed
    first_seen TIMESTAMP NOT NULL
);
