-- When a registered task or system last changed (registered_at keeps its first registration):
-- the registry sensor's cursor follows this column.
ALTER TABLE registered_tasks ADD COLUMN IF NOT EXISTS changed_at TIMESTAMP;
ALTER TABLE registered_systems ADD COLUMN IF NOT EXISTS changed_at TIMESTAMP;
