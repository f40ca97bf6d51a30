-- Report-level judgments (checklists now; rubrics and pairwise criteria later), one row per item.
CREATE TABLE IF NOT EXISTS report_judgments (
    system        VARCHAR NOT NULL,
    task          VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,      -- checklist
    item_id       VARCHAR NOT NULL,
    item          VARCHAR NOT NULL,
    credit        DOUBLE,                -- 1 / 0.5 / 0; NULL when N/A
    reason        VARCHAR,
    na_reason     VARCHAR,
    judge         VARCHAR NOT NULL,
    template      VARCHAR NOT NULL,
    template_hash VARCHAR NOT NULL,
    cache_key     VARCHAR
);
