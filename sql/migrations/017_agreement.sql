-- asset: agreement (unpartitioned). Our scores against the scores a benchmark publishes for the same
-- system, task and metric (published_scores), per benchmark x metric x judge, with the papers'
-- agreement figures (../shared/methods/README.md). A statistic that cannot be computed is NULL and
-- `note` says why (too few items, a constant series): never 0.
CREATE TABLE IF NOT EXISTS agreement (
    benchmark   VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    judge       VARCHAR NOT NULL,   -- our judge; judges never mix in one row
    scale       VARCHAR NOT NULL,   -- our metric's scale (published values are imported on it)
    n_pairs     INTEGER NOT NULL,   -- system x task items scored by both
    n_systems   INTEGER NOT NULL,
    n_tasks     INTEGER NOT NULL,
    pearson_r   DOUBLE,             -- item level, over the n_pairs items
    kendall_tau DOUBLE,             -- item level, tau-b (ties discounted)
    par         DOUBLE,             -- share of same-task system pairs both order alike (a tie is an outcome)
    par_pairs   INTEGER NOT NULL,   -- the system pairs PAR compared
    opc         DOUBLE,             -- Pearson between per-system means over the tasks both scored
    osc         DOUBLE,             -- Spearman between the same means
    mean_diff   DOUBLE,             -- mean of ours - published over the items
    note        VARCHAR NOT NULL DEFAULT '',
    computed_at TIMESTAMP NOT NULL
);
