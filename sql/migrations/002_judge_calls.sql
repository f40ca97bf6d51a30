-- LLM judge layer: a content-addressed call cache, a ledger of every call, and fuller provenance
-- on verdict rows.

-- One parsed answer per cache key = hash(model, template hash, rendered messages, params, schema).
-- Only successful, validated answers are stored; errors never are.
CREATE TABLE IF NOT EXISTS judge_cache (
    cache_key     VARCHAR PRIMARY KEY,
    judge_id      VARCHAR NOT NULL,
    model         VARCHAR NOT NULL,
    template      VARCHAR NOT NULL,
    template_hash VARCHAR NOT NULL,
    answer        JSON NOT NULL,
    tokens_in     INTEGER NOT NULL,
    tokens_out    INTEGER NOT NULL,
    created_at    TIMESTAMP NOT NULL DEFAULT current_timestamp
);

-- Every judge call, cache hits included; append-only (re-materialising adds rows, it never rewrites).
CREATE TABLE IF NOT EXISTS judge_ledger (
    call_id            VARCHAR PRIMARY KEY,
    called_at          TIMESTAMP NOT NULL,
    run_id             VARCHAR,
    asset              VARCHAR,
    system             VARCHAR,
    task               VARCHAR,
    judge_id           VARCHAR NOT NULL,
    model              VARCHAR NOT NULL,
    template           VARCHAR NOT NULL,
    template_hash      VARCHAR NOT NULL,
    cache_key          VARCHAR NOT NULL,
    cache_hit          BOOLEAN NOT NULL,
    outcome            VARCHAR NOT NULL,   -- ok | cache_hit | provider_failure | pipeline_failure
    attempts           INTEGER NOT NULL,   -- HTTP attempts made by our retry layer
    validation_retries INTEGER NOT NULL,   -- re-asks by instructor after an invalid answer
    tokens_in          INTEGER NOT NULL,
    tokens_out         INTEGER NOT NULL,
    cost               DOUBLE,             -- NULL when the model has no price in the price table
    latency_s          DOUBLE NOT NULL,
    error              VARCHAR NOT NULL DEFAULT ''
);

ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS model VARCHAR;
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS temperature DOUBLE;
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS seed INTEGER;
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS cache_key VARCHAR;
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS batch_size INTEGER;
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS source_truncated BOOLEAN;
