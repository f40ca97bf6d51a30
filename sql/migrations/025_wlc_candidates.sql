-- Wiki Live refresh as the benchmark builds it (issue 18): every Good Article a refresh looked at, with
-- its metadata and why it was kept or dropped, and task versions with lineage (for every live source).
CREATE TABLE IF NOT EXISTS wlc_candidates (
    refresh_id      VARCHAR NOT NULL,
    refreshed_at    TIMESTAMP NOT NULL,
    window_after    TIMESTAMP,            -- the contamination window: created_at in (window_after, window_before]
    window_before   TIMESTAMP,
    pageid          BIGINT NOT NULL,
    title           VARCHAR NOT NULL,
    created_at      TIMESTAMP,            -- the first revision's timestamp; NULL: not asked (or the call failed)
    ga_at           TIMESTAMP,            -- when it entered Category:Good articles
    in_window       BOOLEAN,
    bytes           BIGINT,               -- page length (prop=info)
    views           BIGINT,               -- page views of the last 60 days (PageViewInfo); NULL: not given
    external_links  INTEGER,              -- prop=extlinks
    reference_urls  INTEGER,              -- distinct URLs in <ref> tags and citation templates of the wikitext
    sections        INTEGER,              -- level-2 headings with content (navigation sections left out)
    subsections     INTEGER,              -- deeper headings with content
    topic           VARCHAR,              -- one of the 15 GA topics, or 'other' (rule: benchmarks/wlc/live/wikilive_topics.py)
    category        VARCHAR,              -- the page category that decided the topic
    list_like       BOOLEAN,
    rank            INTEGER,              -- 1 = best by reference URLs, then structural depth; NULL: not ranked
    kept            BOOLEAN NOT NULL,     -- selected (top N across topics) or an edited article already a task
    outcome         VARCHAR NOT NULL,     -- task | new_version | unchanged | dropped | retry | failed
    reason          VARCHAR NOT NULL,
    na_reason       VARCHAR,              -- retry/failed: the N/A reason bucket
    task_key        VARCHAR,              -- the task registered (or already registered) for it
    supersedes      VARCHAR,              -- new_version: the task it follows
    revid           BIGINT,               -- the revision the task was taken from
    n_statements    INTEGER,              -- gold statements extracted (all chunks, deduplicated)
    gold_chunks     INTEGER,              -- gold_statements judgments asked (one per chunk)
    content_hash    VARCHAR
);

-- Versions of a live task: a changed upstream source (an article edited after promotion) is registered
-- under a new key that names the task it supersedes; the old version keeps its key and its results.
CREATE TABLE IF NOT EXISTS task_versions (
    task          VARCHAR PRIMARY KEY,    -- registered_tasks.task
    lineage       VARCHAR NOT NULL,       -- the first version's key: every version of one source shares it
    version       INTEGER NOT NULL,       -- 1, 2, ...
    supersedes    VARCHAR,                -- the previous version's key (NULL for version 1)
    source_revision VARCHAR,              -- what upstream version it was taken from (a MediaWiki revid)
    registered_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
