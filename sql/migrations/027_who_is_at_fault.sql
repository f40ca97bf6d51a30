-- Who is at fault (DESIGN "Who is at fault"): `not_applicable` is a fifth N/A status (no new column:
-- metric_scores.na_reason holds it). A value built from k of n judgeable items carries k/n and the
-- unjudged items' bucket, which the leaderboard's validity counts. The leaderboard says per row whether
-- the number stands (`scored`), the metric does not apply to the system (`not_applicable`), the
-- system's rows rest on what our judge cannot judge (`not_comparable`: no rank), or nothing was scored.
ALTER TABLE metric_scores ADD COLUMN IF NOT EXISTS judged_share DOUBLE;
ALTER TABLE metric_scores ADD COLUMN IF NOT EXISTS unjudged_reason VARCHAR;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS status VARCHAR DEFAULT 'scored';
-- Boards written before counted judge limits as the systems' failures: rebuild on the next `dreval run`.
DELETE FROM leaderboard;
DELETE FROM materialized_partitions WHERE asset = 'leaderboard';
-- A system the metric does not apply to has no coverage at all (not 0 of 0).
ALTER TABLE leaderboard ALTER COLUMN coverage DROP NOT NULL;
