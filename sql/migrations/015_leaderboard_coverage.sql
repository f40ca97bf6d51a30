-- The leaderboard compares systems on the tasks all of them scored: a mean over a fraction of the
-- tasks is never ranked against a mean over all of them without saying so.
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS shared_mean DOUBLE;     -- mean over the shared tasks
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS n_shared INTEGER;       -- tasks every compared system scored
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS rank INTEGER;           -- 1 = best on the shared tasks; NULL: not ranked
ALTER TABLE leaderboard ADD COLUMN IF NOT EXISTS coverage_note VARCHAR DEFAULT '';  -- why a system lacks tasks others have
-- Rows written before hold no ranks: forget them, so the next `dreval run` rebuilds the board (it is
-- derived from metric_scores in seconds) instead of printing unranked means until a forced run.
DELETE FROM leaderboard;
DELETE FROM materialized_partitions WHERE asset = 'leaderboard';
