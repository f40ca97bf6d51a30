-- Benchmark suites: where a verdict's evidence came from, and how a report cites.
ALTER TABLE claim_verdicts ADD COLUMN IF NOT EXISTS origin VARCHAR;   -- cited | sandbox | attachment
ALTER TABLE parsed_reports ADD COLUMN IF NOT EXISTS citation_style VARCHAR;  -- inline | bibliography_only | none
