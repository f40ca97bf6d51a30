-- Per-task judge artifacts shared by every system (MiroEval adaptive rubrics now).
CREATE TABLE IF NOT EXISTS task_rubrics (
    task          VARCHAR NOT NULL,
    kind          VARCHAR NOT NULL,      -- miroeval_rubric
    rubric        JSON,                  -- the generated artifact; NULL when N/A
    judge         VARCHAR NOT NULL,
    template      VARCHAR NOT NULL,
    template_hash VARCHAR NOT NULL,
    cache_key     VARCHAR,
    na_reason     VARCHAR,
    detail        VARCHAR NOT NULL DEFAULT ''
);
