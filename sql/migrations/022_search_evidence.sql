-- MiroEval's agentic evidence on the live web (DREVAL_EVIDENCE_SEARCH=web): a claim verdict found by
-- search records the query that found it; each query's answer is kept once per search endpoint, so a
-- rerun (or another system with the same statement) asks the endpoint nothing again.
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS search_query VARCHAR;   -- origin search: the query that found the page
CREATE TABLE IF NOT EXISTS search_results (
    endpoint    VARCHAR NOT NULL,   -- the search URL (DREVAL_SEARCH_URL)
    query       VARCHAR NOT NULL,
    results     VARCHAR NOT NULL,   -- JSON [{url, title}], in the endpoint's rank order
    n_results   INTEGER NOT NULL,
    searched_at TIMESTAMP NOT NULL,
    PRIMARY KEY (endpoint, query)
);
