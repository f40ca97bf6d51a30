-- Systems that write their reports by calling an OpenAI-compatible endpoint (kind = 'endpoint').
-- The API key itself is never stored: only the name of the environment variable that holds it.
ALTER TABLE registered_systems ADD COLUMN IF NOT EXISTS endpoint VARCHAR;
ALTER TABLE registered_systems ADD COLUMN IF NOT EXISTS model VARCHAR;
ALTER TABLE registered_systems ADD COLUMN IF NOT EXISTS api_key_env VARCHAR;
