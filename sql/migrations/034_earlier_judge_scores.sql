-- A home's judge is switched explicitly (`dreval judge set`); the scores of the judge it switches
-- from are kept here, so two judges' results live side by side: the leaderboard adds a judge's rows
-- for the partitions metric_scores no longer holds under that judge (store/earlier_judges.py).
CREATE TABLE IF NOT EXISTS earlier_judge_scores (
    system          VARCHAR NOT NULL,
    task            VARCHAR NOT NULL,
    suite           VARCHAR NOT NULL,
    metric          VARCHAR NOT NULL,
    value           DOUBLE,
    scale           VARCHAR NOT NULL,
    n_items         INTEGER NOT NULL,
    na_reason       VARCHAR,
    detail          VARCHAR NOT NULL DEFAULT '',
    policy          VARCHAR NOT NULL DEFAULT '',
    judge           VARCHAR NOT NULL,
    judged_share    DOUBLE,
    unjudged_reason VARCHAR,
    kept_at         TIMESTAMP NOT NULL  -- when the switch kept them
);
