"""Checks shared by the demo end-to-end tests (heuristic and OpenAI judge)."""

from dreval_assets.benchmarks.suites import SUITES

# as each suite declares its metrics (better = -1), e.g. contradicted_ratio, ref_conf, wiki_conf, wrong
LOWER_IS_BETTER = {(s.name, m.metric) for s in SUITES.values() for m in s.metrics if m.better < 0}
# counts, coverage of the sandbox, and report-level judged metrics: not claim-level quality
NOT_A_QUALITY = {("core", "n_claims"), ("core", "citations_per_claim"), ("core", "unresolved_citations"),
                 ("miroeval", "unknown"), ("miroeval", "conflict"), ("wlc", "leakage"), ("dr3", "cc"),
                 ("tvir", "ia"), ("dr3", "if"), ("tvir", "wq"), ("tvir", "adb"), ("tvir", "flc"), ("dr3", "dq"),
                 ("wlc", "writing"), ("wlc", "well_written"), ("wlc", "broad"), ("wlc", "neutral"),
                 ("mmdr", "flae"), ("mmdr", "read"), ("mmdr", "insh"), ("mmdr", "stru"),
                 *(("miroeval", m) for m in ("synthesis", "synthesis.text", "synthesis.multimodal", "coverage",
                                            "insight", "instruction_following", "clarity", "specificity",
                                            "grounding")),
                 *(("drb", m) for m in ("race", "comprehensiveness", "insight", "instruction_following",
                                        "readability")),
                 # the process dimensions one by one (a loose trace's few findings can all reach its report)
                 *(("miroeval", f"process.{d}") for d in (
                     "search_breadth", "analytical_depth", "progressive_refinement", "critical_thinking",
                     "efficiency", "findings_to_report", "report_to_process", "contradiction"))}


def careful_beats_loose(store) -> int:
    """The careful demo system beats the hallucinating one on every claim-level quality metric;
    returns how many metrics were compared."""
    board = store.query("SELECT suite, metric, system, mean FROM leaderboard WHERE mean IS NOT NULL")
    means = {(r["suite"], r["metric"], r["system"]): r["mean"] for r in board.iter_rows(named=True)}
    compared = 0
    for suite, metric in {(s, m) for s, m, _ in means} - NOT_A_QUALITY:
        split = SUITES[suite].broken_down(metric) if suite in SUITES else None
        base = split[0] if split and SUITES[suite].spec(metric).metric == split[0] else metric
        if (suite, base) in NOT_A_QUALITY:  # a breakdown (dr3 cc.en) of a metric left out
            continue
        careful, loose = means.get((suite, metric, "careful-scholar")), means.get((suite, metric, "loose-cannon"))
        if careful is None or loose is None:
            continue
        compared += 1
        if (suite, base) in LOWER_IS_BETTER:
            assert careful < loose, (suite, metric, careful, loose)
        else:
            assert careful > loose, (suite, metric, careful, loose)
    return compared
