-- Visual evaluation (issue 16): the images of report figures, stored once by content hash, one row
-- per figure the parser found (asset report_images, partition system x task), remote images fetched
-- once per URL, and what a visual judge call sent.
CREATE TABLE IF NOT EXISTS image_blobs (
    image_hash  VARCHAR PRIMARY KEY,   -- sha256 of the bytes as found
    mime        VARCHAR NOT NULL,
    n_bytes     INTEGER NOT NULL,
    data        BLOB NOT NULL
);

CREATE TABLE IF NOT EXISTS report_images (
    system           VARCHAR NOT NULL,
    task             VARCHAR NOT NULL,
    figure           INTEGER NOT NULL,   -- 0-based index into parsed_reports.figures
    src              VARCHAR NOT NULL,   -- as the report wrote it ('' when the figure has none)
    caption          VARCHAR NOT NULL,
    section          VARCHAR NOT NULL,
    citation_indices INTEGER[],
    context          VARCHAR NOT NULL,   -- report text around the figure, `<figure>` where it stands
    kind             VARCHAR NOT NULL,   -- photo | chart | table | diagram (rule cues)
    status           VARCHAR NOT NULL,   -- ok | invalid
    invalid_reason   VARCHAR NOT NULL DEFAULT '',
    na_reason        VARCHAR,            -- invalid: whose failure (model_failure: the report's; data_accessibility: not reachable)
    location         VARCHAR NOT NULL DEFAULT '',  -- where the image was found (or looked for)
    image_hash       VARCHAR,            -- image_blobs.image_hash
    width            INTEGER,
    height           INTEGER,
    sharpness        DOUBLE,
    contrast         DOUBLE,
    phash            VARCHAR,
    duplicate_of     INTEGER             -- an earlier figure of the same report showing the same image
);

CREATE TABLE IF NOT EXISTS remote_images (
    url_norm     VARCHAR PRIMARY KEY,
    url          VARCHAR NOT NULL,
    status       VARCHAR NOT NULL,       -- ok | invalid
    image_hash   VARCHAR,                -- image_blobs.image_hash when ok
    content_type VARCHAR,
    http_status  INTEGER,
    detail       VARCHAR NOT NULL DEFAULT '',
    na_reason    VARCHAR,                -- invalid: data_accessibility (not reachable) or model_failure (not an image)
    fetched_at   TIMESTAMP NOT NULL
);

ALTER TABLE judge_ledger ADD COLUMN IF NOT EXISTS image_bytes BIGINT DEFAULT 0;   -- image bytes sent (every HTTP request)
ALTER TABLE judge_ledger ADD COLUMN IF NOT EXISTS image_tokens INTEGER;          -- as the endpoint reported them; NULL: not reported
