-- A benchmark may ship its own cleaned rewrite of a report (DeepResearch Bench's cleaned_data: the
-- article with citations removed by the benchmark's cleaning), which its judge reads instead of the
-- raw report. It travels with the report; NULL: the release has none.
ALTER TABLE imported_reports ADD COLUMN IF NOT EXISTS cleaned_text VARCHAR;
ALTER TABLE reports ADD COLUMN IF NOT EXISTS cleaned_text VARCHAR;
