-- MiroEval process evaluation: the report's research trace travels with it (NULL: the release has
-- none), and the trace's parsed steps are data (asset trace_steps, partition system x task).
ALTER TABLE reports ADD COLUMN IF NOT EXISTS trace VARCHAR;

CREATE TABLE IF NOT EXISTS trace_steps (
    system      VARCHAR NOT NULL,
    task        VARCHAR NOT NULL,
    step        INTEGER NOT NULL,     -- 1-based, in trace order
    kind        VARCHAR NOT NULL,     -- plan | search | read | analyze | synthesize | verify
    text        VARCHAR NOT NULL,
    queries     VARCHAR[],
    urls        VARCHAR[],
    depends_on  INTEGER[],            -- earlier steps this one builds on
    shape       VARCHAR NOT NULL,     -- json_steps | messages | tagged | numbered | prose
    warnings    VARCHAR[]             -- what the parser could not read (same on every step of a trace)
);
