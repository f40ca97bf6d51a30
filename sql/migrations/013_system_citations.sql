-- What a release says about a system's citations (Wiki Live agencies.json `has_citations`):
-- false = the system writes without citations, so citation metrics are N/A for it; NULL = unknown.
ALTER TABLE registered_systems ADD COLUMN IF NOT EXISTS has_citations BOOLEAN;
