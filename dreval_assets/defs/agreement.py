"""The `agreement` asset: our scores against the scores benchmarks publish (stages/agreement.py).
Declared like the leaderboard: unpartitioned, after metric_scores and the leaderboard (published
system-level aggregates are compared with its numbers), reading what it needs in SQL."""

from dagster import AssetCheckResult, AssetCheckSpec, AssetExecutionContext, MetadataValue, Output, asset

from ..stages.agreement import agreement_markdown, build_agreement, empty_note, invalid_figures
from .resources import DrevalResource

CHECK = "figures_in_range_or_explained"


@asset(deps=["metric_scores", "leaderboard"], io_manager_key="dreval_io", group_name="scores",
       check_specs=[AssetCheckSpec(CHECK, asset="agreement", description="Correlations lie in [-1, 1] and PAR in "
                                   "[0, 1]; a figure that cannot be computed is NULL with a note saying why.")])
def agreement(context: AssetExecutionContext, dreval: DrevalResource):
    """Per benchmark x metric x judge, where a system has our score and the published score for the
    same task: item-level Pearson r and Kendall tau-b, PAR, OPC, OSC and the mean difference."""
    store = dreval.store()
    pairs = store.query("SELECT * FROM agreement_pairs ORDER BY benchmark, metric, judge, system, task")
    n_published = store.query("SELECT count(*) AS n FROM published_scores").item()
    frame = build_agreement(pairs)
    metadata = {"rows": frame.height, "pairs": pairs.height, "published_scores": n_published}
    note = empty_note(n_published, frame.height)
    metadata |= {"note": note} if note else {"agreement": MetadataValue.md(agreement_markdown(frame))}
    yield Output(frame, metadata=metadata)
    failures = invalid_figures(frame)
    yield AssetCheckResult(check_name=CHECK, asset_key="agreement", passed=failures == 0,
                           metadata={"failures": failures, "what": "correlations outside [-1, 1], PAR outside "
                                                                   "[0, 1], or a NULL figure without a note"})
