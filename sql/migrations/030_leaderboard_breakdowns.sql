-- Leaderboard breakdowns by a task attribute (DESIGN "Suites", Breakdown): a row of metric m over the
-- tasks whose attribute is v is named `<m>.<v>` and says `<attribute>=<v>` here; '' for the rows over
-- every task. MiroEval's per-modality rows move from metric_scores to the leaderboard: rebuild it.
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS breakdown VARCHAR DEFAULT '';
DELETE FROM leaderboard;
DELETE FROM materialized_partitions WHERE asset = 'leaderboard';
