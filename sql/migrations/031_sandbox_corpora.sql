-- A task's sandbox may come as several named corpora (DR³: one per size, 32k ... 512k, every size
-- holding all supportive pages): each page says which corpora hold it (comma-joined; '' = the task's
-- only corpus, or every corpus: attachments), so each run is served from the corpus it searched.
ALTER TABLE task_sandbox ADD COLUMN IF NOT EXISTS corpora VARCHAR DEFAULT '';
