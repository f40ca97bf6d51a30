-- The rest of what a release says about a task (issue 7 loaders; RACE criteria for issue 6).
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS gold_insights VARCHAR[];
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS visual_ground_truth VARCHAR;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS visual_ground_truth_version VARCHAR;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS race_criteria JSON;     -- DeepResearch Bench RACE criteria as loaded
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS attributes JSON;        -- release labels kept as given
