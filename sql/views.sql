-- Views users query. Recreated on every schema check; they hold no data of their own.

-- Per system x suite x metric x judge, live over metric_scores (the leaderboard asset adds CIs, ranks
-- and coverage notes). A mean is over scored tasks only; shared_mean is over the tasks every system
-- with a score on this suite x metric x judge has scored, the fair basis for comparing them.
-- Plain means only: the `leaderboard` table aggregates each metric as its paper does (pooled ratios,
-- composites from their parts; its `aggregation` column says which), so read published-comparable
-- numbers there.
CREATE OR REPLACE VIEW leaderboard_live AS
WITH scored AS (
    SELECT system, task, suite, metric, judge, value FROM metric_scores WHERE value IS NOT NULL
), compared AS (
    SELECT suite, metric, judge, count(DISTINCT system) AS n_systems FROM scored GROUP BY ALL
), shared AS (
    SELECT s.suite, s.metric, s.judge, s.task
    FROM scored s JOIN compared c USING (suite, metric, judge)
    GROUP BY s.suite, s.metric, s.judge, s.task, c.n_systems
    HAVING count(DISTINCT s.system) = c.n_systems
), shared_means AS (
    SELECT s.system, s.suite, s.metric, s.judge, avg(s.value) AS shared_mean
    FROM scored s JOIN shared USING (suite, metric, judge, task)
    GROUP BY ALL
), shared_counts AS (
    SELECT suite, metric, judge, count(*) AS n_shared FROM shared GROUP BY ALL
)
SELECT m.system, m.suite, m.metric, m.judge, any_value(m.scale) AS scale,
       avg(m.value)                                  AS mean,
       count(*)                                      AS n_tasks,
       count(m.value)                                AS n_scored,
       count(m.value) / count(*)                     AS coverage,
       any_value(sm.shared_mean)                     AS shared_mean,
       coalesce(any_value(sc.n_shared), 0)           AS n_shared
FROM metric_scores m
LEFT JOIN shared_means sm USING (system, suite, metric, judge)
LEFT JOIN shared_counts sc USING (suite, metric, judge)
GROUP BY m.system, m.suite, m.metric, m.judge;

-- Every verdict with the claim, the report and the task it came from.
CREATE OR REPLACE VIEW claim_verdicts_in_context AS
SELECT v.system, v.task, t.benchmark, t.query,
       c.claim_id, c.kind, c.section, c.text AS claim, c.citation_indices,
       v.source, f.title AS source_title, f.sandbox_role, f.status AS fetch_status,
       v.verdict, v.score, v.evidence, v.reason, v.na_reason, v.judge, v.template_hash
FROM claim_verdicts v
JOIN report_claims c USING (system, task, claim_id)
JOIN tasks t USING (task)
LEFT JOIN fetched_references f ON f.system = v.system AND f.task = v.task AND f.url = v.source;

-- Every N/A score with its reason, for triage.
CREATE OR REPLACE VIEW na_scores AS
SELECT system, task, suite, metric, na_reason, detail, judge
FROM metric_scores
WHERE na_reason IS NOT NULL;

-- Which judged metrics each prompt template feeds (a call feeding several metrics counts for each).
CREATE OR REPLACE VIEW metric_templates AS
SELECT * FROM (VALUES
    ('core', 'supported_ratio', 'claim_verdict'), ('core', 'supported_ratio', 'claim_verdicts_batch'),
    ('core', 'contradicted_ratio', 'claim_verdict'), ('core', 'contradicted_ratio', 'claim_verdicts_batch'),
    ('tvir', 'cs', 'claim_verdict'), ('tvir', 'cs', 'claim_verdicts_batch'),
    ('tvir', 'aec', 'claim_verdict'), ('tvir', 'aec', 'claim_verdicts_batch'),
    ('mmdr', 'con', 'claim_verdict'), ('mmdr', 'con', 'claim_verdicts_batch'),
    ('mmdr', 'cov', 'claim_verdict'), ('mmdr', 'cov', 'claim_verdicts_batch'),
    ('mmdr', 'fid', 'claim_verdict'), ('mmdr', 'fid', 'claim_verdicts_batch'),
    ('mmdr', 'evi', 'claim_verdict'), ('mmdr', 'evi', 'claim_verdicts_batch'), ('mmdr', 'evi', 'mmdr/trace_weights'),
    -- MMDR's tasks are verified with its own verdict prompts (the paper's fidelity checks)
    ('core', 'supported_ratio', 'mmdr/claim_verdict'), ('core', 'supported_ratio', 'mmdr/claim_verdicts_batch'),
    ('core', 'contradicted_ratio', 'mmdr/claim_verdict'), ('core', 'contradicted_ratio', 'mmdr/claim_verdicts_batch'),
    ('mmdr', 'con', 'mmdr/claim_verdict'), ('mmdr', 'con', 'mmdr/claim_verdicts_batch'),
    ('mmdr', 'cov', 'mmdr/claim_verdict'), ('mmdr', 'cov', 'mmdr/claim_verdicts_batch'),
    ('mmdr', 'fid', 'mmdr/claim_verdict'), ('mmdr', 'fid', 'mmdr/claim_verdicts_batch'),
    ('mmdr', 'evi', 'mmdr/claim_verdict'), ('mmdr', 'evi', 'mmdr/claim_verdicts_batch'),
    ('dr3', 'fa', 'claim_verdict'), ('dr3', 'fa', 'claim_verdicts_batch'),
    ('wlc', 'ref_acc', 'claim_verdict'), ('wlc', 'ref_acc', 'claim_verdicts_batch'),
    ('wlc', 'ref_conf', 'claim_verdict'), ('wlc', 'ref_conf', 'claim_verdicts_batch'),
    ('drb', 'fact_accuracy', 'claim_verdict'), ('drb', 'fact_accuracy', 'claim_verdicts_batch'),
    ('drb', 'effective_citations', 'claim_verdict'), ('drb', 'effective_citations', 'claim_verdicts_batch'),
    ('miroeval', 'factuality', 'claim_verdict'), ('miroeval', 'factuality', 'claim_verdicts_batch'),
    -- the statements every claim-level metric counts (claims.extraction = llm), extracted once per report
    ('core', 'supported_ratio', 'statement_extraction'), ('core', 'contradicted_ratio', 'statement_extraction'),
    ('tvir', 'cs', 'statement_extraction'), ('tvir', 'aec', 'statement_extraction'),
    ('mmdr', 'con', 'statement_extraction'), ('mmdr', 'cov', 'statement_extraction'),
    ('mmdr', 'fid', 'statement_extraction'), ('mmdr', 'evi', 'statement_extraction'),
    ('dr3', 'fa', 'statement_extraction'), ('wlc', 'ref_acc', 'statement_extraction'),
    ('wlc', 'ref_conf', 'statement_extraction'), ('drb', 'fact_accuracy', 'statement_extraction'),
    ('drb', 'effective_citations', 'statement_extraction'), ('miroeval', 'factuality', 'statement_extraction'),
    ('tvir', 'cs', 'same_statement'), ('tvir', 'aec', 'same_statement'),
    ('drb', 'fact_accuracy', 'same_statement'), ('drb', 'effective_citations', 'same_statement'),
    ('tvir', 'ia', 'checklist_items'), ('dr3', 'if', 'checklist_items'),
    ('tvir', 'wq', 'rubric_scores'), ('tvir', 'adb', 'rubric_scores'), ('dr3', 'dq', 'rubric_scores'),
    ('tvir', 'flc', 'tvir/contradictions'),
    ('wlc', 'well_written', 'wlc/pairwise_criteria'), ('wlc', 'broad', 'wlc/pairwise_criteria'),
    ('wlc', 'neutral', 'wlc/pairwise_criteria'), ('wlc', 'writing', 'wlc/pairwise_criteria'),
    ('wlc', 'cov_wiki', 'wlc/gold_coverage'), ('wlc', 'wiki_conf', 'wlc/gold_coverage'),
    ('wlc', 'wiki_conf', 'wlc/statement_conflicts'), ('wlc', 'cov_wiki', 'embeddings'),
    ('wlc', 'wiki_conf', 'embeddings'),
    ('mmdr', 'flae', 'mmdr/flae_scores'), ('mmdr', 'read', 'mmdr/flae_scores'), ('mmdr', 'insh', 'mmdr/flae_scores'),
    ('mmdr', 'stru', 'mmdr/flae_scores'),
    ('mmdr', 'flae', 'mmdr/flae_judge_scores'), ('mmdr', 'read', 'mmdr/flae_judge_scores'),
    ('mmdr', 'insh', 'mmdr/flae_judge_scores'), ('mmdr', 'stru', 'mmdr/flae_judge_scores'),
    ('mmdr', 'flae', 'mmdr/flae_alpha'), ('mmdr', 'read', 'mmdr/flae_alpha'), ('mmdr', 'insh', 'mmdr/flae_alpha'),
    ('mmdr', 'stru', 'mmdr/flae_alpha'), ('mmdr', 'flae', 'mmdr/flae_weights'),
    ('miroeval', 'synthesis', 'miroeval/criteria_scores'), ('miroeval', 'synthesis', 'miroeval/rubric'),
    ('miroeval', 'grounding', 'miroeval/key_facts'), ('drb', 'race', 'drb/race_scores'),
    ('drb', 'race', 'drb/race_scores_zh'),
    ('miroeval', 'process', 'miroeval/process_findings'), ('miroeval', 'process', 'miroeval/process_intrinsic'),
    ('miroeval', 'process', 'miroeval/process_alignment'),
    ('mmdr', 'vef', 'mmdr/vef'), ('mmdr', 'mosaic', 'mmdr/mosaic_item'),
    ('mmdr', 'sem', 'mmdr/mosaic_item'), ('mmdr', 'acc', 'mmdr/mosaic_item'), ('mmdr', 'vqa', 'mmdr/mosaic_item'),
    -- the names these templates had before prompts/<benchmark>/ (ledgers written then)
    ('miroeval', 'process', 'miroeval/process_scores'),
    ('mmdr', 'evi', 'trace_weights'), ('tvir', 'flc', 'contradictions'),
    ('wlc', 'well_written', 'pairwise_criteria'), ('wlc', 'broad', 'pairwise_criteria'),
    ('wlc', 'neutral', 'pairwise_criteria'), ('wlc', 'writing', 'pairwise_criteria'),
    ('mmdr', 'flae', 'flae_scores'), ('mmdr', 'read', 'flae_scores'), ('mmdr', 'insh', 'flae_scores'),
    ('mmdr', 'stru', 'flae_scores')
) AS t(suite, metric, template);

-- Judge spend per system (cache hits cost nothing; NULL cost = model missing from the price table;
-- NULL system = task-level judgments shared by every system, e.g. MMDR's TRACE weights; image bytes
-- sent by visual requests, image tokens where the endpoint reported them; a vision model is its own row).
CREATE OR REPLACE VIEW judge_cost_by_system AS
SELECT system, judge_id, model,
       count(*) AS calls, count(*) FILTER (WHERE cache_hit) AS cache_hits,
       sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out,
       sum(cost) AS cost, count(*) FILTER (WHERE cost IS NULL AND NOT cache_hit) AS unpriced_calls,
       sum(image_bytes) AS image_bytes, sum(image_tokens) AS image_tokens   -- visual requests (migration 024)
FROM judge_ledger
WHERE asset IS DISTINCT FROM 'reports'
GROUP BY ALL;

-- What endpoint systems spent writing their reports (not judging: the ledger's `reports` rows).
CREATE OR REPLACE VIEW generation_cost_by_system AS
SELECT system, model,
       count(*) AS calls, count(*) FILTER (WHERE cache_hit) AS cache_hits,
       sum(tokens_in) AS tokens_in, sum(tokens_out) AS tokens_out, sum(cost) AS cost
FROM judge_ledger
WHERE asset = 'reports'
GROUP BY ALL;

-- Judge spend per metric it feeds.
CREATE OR REPLACE VIEW judge_cost_by_metric AS
SELECT m.suite, m.metric, l.judge_id, l.model,
       count(*) AS calls, sum(l.tokens_in) AS tokens_in, sum(l.tokens_out) AS tokens_out, sum(l.cost) AS cost
FROM judge_ledger l JOIN metric_templates m USING (template)
GROUP BY ALL;

-- Our score beside the score the benchmark publishes, per system x task x metric (what the
-- `agreement` asset summarises), and a published system-level aggregate (task = '', e.g. DRB's
-- fact_result.txt) beside our leaderboard number for that system (task '' here too). Only items both
-- sides scored: N/A rows and null published cells are left out.
CREATE OR REPLACE VIEW agreement_pairs AS
SELECT m.suite AS benchmark, m.metric, m.judge, m.system, m.task, m.scale,
       m.value AS ours, p.value AS published, m.value - p.value AS difference,
       p.scale AS published_scale, p.published_metric, p.published_value, p.file, p.line
FROM metric_scores m
JOIN published_scores p ON p.benchmark = m.suite AND p.system = m.system AND p.task = m.task AND p.metric = m.metric
WHERE m.value IS NOT NULL AND p.value IS NOT NULL AND p.task <> ''
UNION ALL
SELECT l.suite AS benchmark, l.metric, l.judge, l.system, '' AS task, l.scale,
       l.mean AS ours, p.value AS published, l.mean - p.value AS difference,
       p.scale AS published_scale, p.published_metric, p.published_value, p.file, p.line
FROM leaderboard l
JOIN published_scores p ON p.benchmark = l.suite AND p.system = l.system AND p.metric = l.metric AND p.task = ''
WHERE l.mean IS NOT NULL AND p.value IS NOT NULL;
