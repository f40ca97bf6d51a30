-- A judge call's wait for a concurrency slot or the rate limiter, apart from `latency_s` (the
-- request's own time): at high concurrency the queue dominated the recorded latency. NULL: not known
-- (rows written before this column, embedding requests).
ALTER TABLE judge_ledger ADD COLUMN IF NOT EXISTS wait_s DOUBLE;
