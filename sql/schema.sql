-- dreval schema, version 1. Every table dreval writes is declared here.
-- Later changes go in sql/migrations/NNN_name.sql; never CREATE TABLE AS from a frame.

CREATE TABLE IF NOT EXISTS schema_migrations (
    version     INTEGER PRIMARY KEY,
    name        VARCHAR NOT NULL,
    applied_at  TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Registry: what the user registered (source of truth for the dynamic partitions).
CREATE TABLE IF NOT EXISTS registered_tasks (
    task          VARCHAR PRIMARY KEY,      -- partition key <benchmark>.<slug>
    benchmark     VARCHAR NOT NULL,
    original_id   VARCHAR NOT NULL,
    payload       JSON NOT NULL,            -- the Task as JSON, sandbox included
    content_hash  VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,         -- where it came from (demo, import path, inbox)
    registered_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

CREATE TABLE IF NOT EXISTS registered_systems (
    system        VARCHAR PRIMARY KEY,      -- partition key
    display_name  VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,         -- folder (endpoint systems come later)
    reports_dir   VARCHAR,
    description   VARCHAR NOT NULL DEFAULT '',
    registered_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Which partitions of which asset hold data, written in the same transaction as the rows.
CREATE TABLE IF NOT EXISTS materialized_partitions (
    asset           VARCHAR NOT NULL,
    system          VARCHAR NOT NULL,       -- '' for task-only and unpartitioned assets
    task            VARCHAR NOT NULL,       -- '' for unpartitioned assets
    n_rows          INTEGER NOT NULL,
    run_id          VARCHAR NOT NULL,
    materialized_at TIMESTAMP NOT NULL,
    PRIMARY KEY (asset, system, task)
);

-- Content-addressed page texts: stored once, shared by every task, system and benchmark.
CREATE TABLE IF NOT EXISTS page_texts (
    text_hash VARCHAR PRIMARY KEY,
    text      VARCHAR NOT NULL,
    n_chars   INTEGER NOT NULL
);

-- asset: tasks (partition: task)
CREATE TABLE IF NOT EXISTS tasks (
    task              VARCHAR NOT NULL,
    benchmark         VARCHAR NOT NULL,
    original_id       VARCHAR NOT NULL,
    query             VARCHAR NOT NULL,
    language          VARCHAR,
    domain            VARCHAR,
    modality          VARCHAR,
    attachments       VARCHAR[],
    checklist         VARCHAR[],
    reference_article VARCHAR,
    gold_facts        VARCHAR[],
    n_sandbox_pages   INTEGER NOT NULL,
    content_hash      VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS task_sandbox (
    task      VARCHAR NOT NULL,
    url       VARCHAR NOT NULL,
    url_norm  VARCHAR NOT NULL,
    title     VARCHAR,
    role      VARCHAR NOT NULL,             -- supportive | distractor | noise
    text_hash VARCHAR NOT NULL
);

-- asset: reports (partition: system x task)
CREATE TABLE IF NOT EXISTS reports (
    system        VARCHAR NOT NULL,
    task          VARCHAR NOT NULL,
    status        VARCHAR NOT NULL,         -- ok | empty | missing | binary | unreadable
    text          VARCHAR,
    n_chars       INTEGER NOT NULL,
    content_hash  VARCHAR,
    source_path   VARCHAR,
    na_reason     VARCHAR,
    detail        VARCHAR NOT NULL DEFAULT ''
);

-- asset: parsed_reports (partition: system x task); claims go to report_claims in the same write
CREATE TABLE IF NOT EXISTS parsed_reports (
    system               VARCHAR NOT NULL,
    task                 VARCHAR NOT NULL,
    parser_version       VARCHAR NOT NULL,
    n_sections           INTEGER NOT NULL,
    n_sentences          INTEGER NOT NULL,
    n_claims             INTEGER NOT NULL,
    n_cited_claims       INTEGER NOT NULL,
    n_references         INTEGER NOT NULL,
    n_figures            INTEGER NOT NULL,
    n_tables             INTEGER NOT NULL,
    has_inline_citations BOOLEAN NOT NULL,
    has_reference_list   BOOLEAN NOT NULL,
    bibliography_only    BOOLEAN NOT NULL,  -- a reference list but no inline markers
    unresolved_indices   INTEGER[],
    sections             JSON,
    "references"         JSON,
    figures              JSON,
    tables               JSON,
    warnings             VARCHAR[]
);
CREATE TABLE IF NOT EXISTS report_claims (
    system             VARCHAR NOT NULL,
    task               VARCHAR NOT NULL,
    claim_id           VARCHAR NOT NULL,
    kind               VARCHAR NOT NULL,    -- sentence | table_row | figure_caption | uncited
    text               VARCHAR NOT NULL,
    section            VARCHAR,
    citation_indices   INTEGER[],
    urls               VARCHAR[],
    unresolved_indices INTEGER[]
);

-- asset: fetched_references (partition: system x task); one row per cited URL
CREATE TABLE IF NOT EXISTS fetched_references (
    system       VARCHAR NOT NULL,
    task         VARCHAR NOT NULL,
    url          VARCHAR NOT NULL,
    url_norm     VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,          -- ok | unknown
    backend      VARCHAR NOT NULL,          -- sandbox | cache | live
    final_url    VARCHAR,
    title        VARCHAR,
    content_type VARCHAR,
    page_hash    VARCHAR,                   -- page_texts.text_hash when status = ok
    sandbox_role VARCHAR,
    na_reason    VARCHAR,
    detail       VARCHAR NOT NULL DEFAULT ''
);

-- asset: claim_verdicts (partition: system x task); one row per claim x cited source
CREATE TABLE IF NOT EXISTS claim_verdicts (
    system        VARCHAR NOT NULL,
    task          VARCHAR NOT NULL,
    claim_id      VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,         -- the cited URL, or '[n]' for an index with no URL
    verdict       VARCHAR NOT NULL,         -- supported | partial | unsupported | contradicted | unknown
    score         DOUBLE,
    evidence      VARCHAR,
    reason        VARCHAR,
    na_reason     VARCHAR,
    judge         VARCHAR NOT NULL,         -- heuristic-v1 or a model name
    template      VARCHAR NOT NULL,
    template_hash VARCHAR NOT NULL
);

-- asset: metric_scores (partition: system x task); long format
CREATE TABLE IF NOT EXISTS metric_scores (
    system    VARCHAR NOT NULL,
    task      VARCHAR NOT NULL,
    suite     VARCHAR NOT NULL,
    metric    VARCHAR NOT NULL,
    value     DOUBLE,                       -- NULL exactly when na_reason is set
    scale     VARCHAR NOT NULL,             -- 0-100 | count | ratio
    n_items   INTEGER NOT NULL,
    na_reason VARCHAR,
    detail    VARCHAR NOT NULL DEFAULT '',
    policy    VARCHAR NOT NULL DEFAULT '',
    judge     VARCHAR NOT NULL
);

-- asset: leaderboard (unpartitioned)
CREATE TABLE IF NOT EXISTS leaderboard (
    system      VARCHAR NOT NULL,
    suite       VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    judge       VARCHAR NOT NULL,
    scale       VARCHAR NOT NULL,
    mean        DOUBLE,
    ci_low      DOUBLE,
    ci_high     DOUBLE,
    n_tasks     INTEGER NOT NULL,
    n_scored    INTEGER NOT NULL,
    coverage    DOUBLE NOT NULL,
    computed_at TIMESTAMP NOT NULL
);
