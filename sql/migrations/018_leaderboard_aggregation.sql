-- Each metric is aggregated over tasks as its paper aggregates it (benchmarks/aggregation.py): the
-- rule (and the policy that chose it) is written on every row, beside the reason-aware validity
-- (scored tasks 1, N/A tasks w(reason): provider 0.8, data 0.9, pipeline 0.5, model 0) and the
-- validity-adjusted score (mean x validity).
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS aggregation VARCHAR DEFAULT '';
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS validity DOUBLE;
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS adjusted_mean DOUBLE;
-- Means written before were all plain means: rebuild the board on the next `dreval run`.
DELETE FROM leaderboard;
DELETE FROM materialized_partitions WHERE asset = 'leaderboard';
