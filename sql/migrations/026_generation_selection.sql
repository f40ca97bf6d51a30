-- MiroEval-style generation: the paper's selection after the three filters (keep 50, choose 35 by
-- diversity of topic and persona). Every candidate says whether it was kept and chosen, and why;
-- only chosen candidates become tasks. Rows written before have no selection (NULL).
ALTER TABLE generated_candidates ADD COLUMN IF NOT EXISTS kept BOOLEAN;
ALTER TABLE generated_candidates ADD COLUMN IF NOT EXISTS chosen BOOLEAN;
ALTER TABLE generated_candidates ADD COLUMN IF NOT EXISTS selection_reason VARCHAR;
