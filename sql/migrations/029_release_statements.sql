-- A release may ship the benchmark's own statements of a report (Wiki Live's json_data `statements`:
-- {fact, ref_idx, url}), which its published pipeline judges; a policy the JSON names chooses them as
-- the report's claims. JSON {"policy", "statements": [{"text", "urls", "indices"}]}; NULL: none.
ALTER TABLE imported_reports ADD COLUMN IF NOT EXISTS release_statements VARCHAR;
ALTER TABLE reports ADD COLUMN IF NOT EXISTS release_statements VARCHAR;
