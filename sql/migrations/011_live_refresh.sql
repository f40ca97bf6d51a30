-- Live refresh: where each source's last refresh stopped, and every generated query candidate with
-- its filter outcomes (MiroEval-style generation keeps what it dropped and why).
CREATE TABLE IF NOT EXISTS refresh_state (
    source       VARCHAR PRIMARY KEY,   -- wlc | miroeval
    cursor       VARCHAR,               -- Wiki Live: the category-addition timestamp settled up to
    refreshed_at TIMESTAMP NOT NULL,
    summary      JSON NOT NULL
);

CREATE TABLE IF NOT EXISTS generated_candidates (
    refresh_id           VARCHAR NOT NULL,
    generated_at         TIMESTAMP NOT NULL,
    topic                VARCHAR NOT NULL,
    subtopic             VARCHAR NOT NULL,
    headline             VARCHAR NOT NULL,
    headline_url         VARCHAR,
    headline_description VARCHAR,
    published_at         VARCHAR,
    persona              VARCHAR,
    query                VARCHAR NOT NULL,
    task_key             VARCHAR NOT NULL,
    search_results       JSON,
    n_search_results     INTEGER,
    distinct_domains     INTEGER,
    passed_search        BOOLEAN,
    needs_external       BOOLEAN,
    necessity_reason     VARCHAR,
    closed_book_answer   VARCHAR,
    adequate             BOOLEAN,
    adequacy_reason      VARCHAR,
    accepted             BOOLEAN NOT NULL,
    rejected_by          VARCHAR,        -- search | necessity | inverse_quality | judge_failure | endpoint_failure | known | duplicate
    rejection_detail     VARCHAR
);
