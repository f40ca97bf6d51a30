-- Scores a benchmark release publishes for its own systems (per task and per system), read by
-- `dreval import` beside its tasks and reports, so `dreval verify` can recompute the published
-- aggregates with our formulas and the agreement figures can compare our scores with theirs.
-- Re-importing a file replaces that (benchmark, file)'s rows.
CREATE TABLE IF NOT EXISTS published_scores (
    benchmark        VARCHAR NOT NULL,  -- registry name
    system           VARCHAR NOT NULL,  -- slugify(<model/run name in the release>), as dreval import registers systems
    task             VARCHAR NOT NULL,  -- task key '<benchmark>.<slug>', or '' for a system-level aggregate
    metric           VARCHAR NOT NULL,  -- our metric name where one matches, else the published name in lower case
    value            DOUBLE,            -- on our metric's scale; NULL for a null cell
    scale            VARCHAR,           -- scale of `value`: '0-100', '0-1', 'count', ...
    published_metric VARCHAR NOT NULL,  -- the name exactly as in the file (or the formula of a derived row)
    published_value  DOUBLE,            -- the number as written (NULL for null)
    file             VARCHAR NOT NULL,  -- path relative to the release root
    line             INTEGER,           -- 1-based line / row / record number; NULL for whole-file values
    import_id        VARCHAR NOT NULL
);
