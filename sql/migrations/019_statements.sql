-- Claims as the benchmarks extract them (policy claims.extraction): with `llm`, a report's claims are
-- atomic statements the judge decomposed its parsed sentences into, each grounded in the sentence
-- (table row, caption) it came from, whose citations it takes; with `sentences`, the parser's own.
ALTER TABLE report_claims ADD COLUMN IF NOT EXISTS source_claim VARCHAR;                   -- the parsed unit it comes from
ALTER TABLE report_claims ADD COLUMN IF NOT EXISTS extraction VARCHAR DEFAULT 'sentences';  -- llm | sentences
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS extraction VARCHAR DEFAULT 'sentences';
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS n_statements INTEGER;          -- claims after extraction
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS n_ungrounded INTEGER DEFAULT 0; -- statements dropped: not in the report
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS extraction_na_reason VARCHAR;   -- a chunk's extraction failed (its sentences kept)
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS extraction_detail VARCHAR DEFAULT '';
UPDATE report_claims SET source_claim = claim_id WHERE source_claim IS NULL;
UPDATE parsed_reports SET n_statements = n_claims WHERE n_statements IS NULL;
