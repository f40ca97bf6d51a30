-- Rubric dimensions are scored 1-10 and contradiction checks count; checklists keep `credit`.
ALTER TABLE report_judgments ADD COLUMN IF NOT EXISTS score DOUBLE;
