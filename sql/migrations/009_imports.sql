-- Reports read from a benchmark release or a user's folder by `dreval import`, and what each import
-- could not use. Imported systems (registered_systems.kind = 'imported') read their reports here.
CREATE TABLE IF NOT EXISTS imported_reports (
    system        VARCHAR NOT NULL,
    task          VARCHAR NOT NULL,
    original_id   VARCHAR NOT NULL,     -- the task id as the release gives it
    text          VARCHAR NOT NULL,
    content_hash  VARCHAR NOT NULL,
    trace         VARCHAR,              -- the system's research trace as given (NULL: none)
    source        VARCHAR NOT NULL,     -- file[:line] in the release
    base_dir      VARCHAR,              -- where the report's relative image paths resolve
    import_id     VARCHAR NOT NULL,
    PRIMARY KEY (system, task)
);

CREATE TABLE IF NOT EXISTS imports (
    import_id     VARCHAR PRIMARY KEY,
    benchmark     VARCHAR NOT NULL,
    source        VARCHAR NOT NULL,     -- the release folder as given on the command line
    started_at    TIMESTAMP NOT NULL,
    summary       JSON NOT NULL         -- counts: tasks new/changed/unchanged, reports ..., problems
);

CREATE TABLE IF NOT EXISTS import_problems (
    import_id VARCHAR NOT NULL,
    kind      VARCHAR NOT NULL,         -- skipped | missing | note
    file      VARCHAR NOT NULL,
    line      INTEGER,
    reason    VARCHAR NOT NULL
);
