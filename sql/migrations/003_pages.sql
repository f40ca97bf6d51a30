-- Fetch layer: one row per normalised URL across all systems, tasks and benchmarks.
-- The text itself lives once in page_texts (by content hash); fetched_references links partitions here.
CREATE TABLE IF NOT EXISTS pages (
    url_norm     VARCHAR PRIMARY KEY,
    url          VARCHAR NOT NULL,          -- the URL as first cited
    status       VARCHAR NOT NULL,          -- ok | unknown
    backend      VARCHAR NOT NULL,          -- live
    final_url    VARCHAR,                   -- after redirects
    http_status  INTEGER,
    content_type VARCHAR,
    charset      VARCHAR,
    title        VARCHAR,
    text_hash    VARCHAR,                   -- page_texts.text_hash when status = ok
    n_bytes      INTEGER,
    truncated    BOOLEAN,                   -- the body hit the byte cap
    blocked      VARCHAR,                   -- bot_wall, captcha, login_wall, paywall, cookie_wall, empty, ...
    na_reason    VARCHAR,
    detail       VARCHAR NOT NULL DEFAULT '',
    attempts     INTEGER,
    fetched_at   TIMESTAMP NOT NULL
);

ALTER TABLE fetched_references ADD COLUMN IF NOT EXISTS http_status INTEGER;
ALTER TABLE fetched_references ADD COLUMN IF NOT EXISTS charset VARCHAR;
ALTER TABLE fetched_references ADD COLUMN IF NOT EXISTS blocked VARCHAR;
ALTER TABLE fetched_references ADD COLUMN IF NOT EXISTS truncated BOOLEAN;
