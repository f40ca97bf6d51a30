-- DR³ keeps its two gold sources apart (issue 15): `gold_insights` holds the insights drawn from the
-- task's user files (I_UF), this column those drawn from its sandbox corpus (I_SC).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS gold_insights_sandbox VARCHAR[];
