"""Wiki Live Challenge (methods/wlc.md): writing win rates against the reference; Cov. Wiki and Wiki Conf.
against the gold statements (judged in coverage.py); Ref. Acc., Ref. Conf., leakage."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Mapping, Sequence
from urllib.parse import unquote, urlsplit

from ...core.metrics import MERGE_POLICY, MetricValue, merge_verdicts, not_available
from ..evidence import NOTHING_JUDGED_RULE, UNREAD_RULE, ClaimEvidence, ReportEvidence, SourceVerdict, unread
from ..suite import MetricSpec, Suite, judgment_failure
from .criteria import CATEGORIES

CATEGORY_SIZES = {category: len(criteria) for category, criteria in CATEGORIES.items()}
WRITING_RULE = ("writing = (" + " + ".join(f"{n} {c}" for c, n in CATEGORY_SIZES.items())
                + f") / {sum(CATEGORY_SIZES.values())}: category win rates weighted by their criteria counts; "
                  "a category with no judged criterion makes it N/A")
# The paper's per-statement label over its cited sources (our verdicts: supported, partial,
# unsupported, contradicted, unknown). A partial source must not hide a contradicting one.
PAPER_LABEL_RULE = ("support if any cited source supports the statement, else conflict if any contradicts it, "
                    "else not_support if any was decided (partial, unsupported); unknown only when every source is")
WIKI_LABEL = {"supported": "support", "partial": "not_support", "unsupported": "not_support",
              "contradicted": "conflict", "unknown": "unknown"}
# Report judgments of the gold-statement check (coverage.py): one `gold_fact` row per gold statement
# (score by label), one `gold_conflict` row per report statement contradicting one, and the count.
LABEL_SCORE = {"consistent": 1.0, "not_supported": 0.0, "inconsistent": -1.0}
GOLD_PREFIX, CONFLICT_PREFIX, COUNT_ITEM = "wlc.gold", "wlc.gold_conflict", "wlc.gold_statements.count"
STATEMENT_CONFLICT_PREFIX, RETRIEVER_PREFIX = "wlc.statement_conflict", "wlc.gold_retriever"
CONFLICT_SCORE = {"conflict": 1.0, "no_conflict": 0.0}
COV_RULE = ("the report's statements citing Wikipedia dropped; for each gold statement the top min(10, n) report "
            "statements by {retriever} and one judge label (consistent / inconsistent / not_supported); "
            "cov_wiki = consistent / gold statements judged")
CONF_RULES = {
    "per_statement": "wiki_conf (wlc.wiki_conf = per_statement, the reference's gen_conflict_with_wiki): each report "
                     "statement against its own top min(10, n) gold statements by {retriever}, conflict / "
                     "no_conflict; conflicting / report statements judged",
    "gold_side": "wiki_conf (wlc.wiki_conf = gold_side, ours): report statements the Cov. Wiki calls name as "
                 "contradicting a gold statement / report statements considered"}


def cites_wikipedia(urls: tuple[str, ...]) -> bool:
    for url in urls:
        host = (urlsplit(url).hostname or "").lower()
        if host == "wikipedia.org" or host.endswith(".wikipedia.org"):
            return True
    return False


def wiki_title(url: str) -> str | None:
    """The article title a Wikipedia URL names (`/wiki/<Title>` or `?title=<Title>`), compared
    case- and underscore-insensitively; None for any other URL."""
    if not cites_wikipedia((url,)):
        return None
    parts = urlsplit(url)
    path = unquote(parts.path)
    title = path[len("/wiki/"):] if path.startswith("/wiki/") else next(
        (unquote(q[6:]) for q in parts.query.split("&") if q.startswith("title=")), "")
    return " ".join(title.replace("_", " ").split()).casefold() or None


def cites_own_article(urls: tuple[str, ...], titles: set[str]) -> bool:
    """Does any URL name the task's own Wikipedia article (one of `titles`, from wiki_title)?"""
    return any(wiki_title(url) in titles for url in urls)


def own_article_titles(evidence: ReportEvidence) -> set[str]:
    """The task's own article as wiki_title reads it: from its URL and its title."""
    found = {wiki_title(evidence.inputs.get("wlc.article_url") or "")}
    title = evidence.inputs.get("wlc.title") or ""
    found.add(" ".join(title.replace("_", " ").split()).casefold() or None)
    return {t for t in found if t}


def writing_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """Win rates of the report against the reference article per category, and the writing overall
    (category win rates weighted by their criteria counts)."""
    j = evidence.judge
    names = ("well_written", "broad", "neutral", "writing")
    outcomes: dict[str, list[str]] = {}
    unjudged: dict[str, int] = {}
    for key, score in evidence.rubric_scores.items():
        parts = key.split(".")
        if len(parts) == 3 and parts[0] == "wlc" and parts[1] in CATEGORIES:
            if score is None:
                unjudged[parts[1]] = unjudged.get(parts[1], 0) + 1
                continue
            outcomes.setdefault(parts[1], []).append({1.0: "generated", 0.0: "reference"}.get(score, "tie"))
    missing = sum(unjudged.values())
    if not outcomes:
        first = next((c for c in CATEGORIES if unjudged.get(c)), None)
        reason, detail = (judgment_failure(evidence, f"wlc.{first}", "no criterion was judged") if first
                          else ("pipeline_failure", "no reference article to compare with"))
        return [not_available("wlc", m, "0-100", reason, detail, j) for m in names]
    rates = win_rates(outcomes)
    texts = evidence.inputs.get("wlc.criteria_texts") or "ours"
    shown = "ours (the task has none from a release)" if texts == "ours" else f"the release's ({texts})"
    policy = (f"generated wins / criteria judged, ties count as no win; "
              f"position bias: {evidence.policy('wlc.position_bias')} (wlc.position_bias); criteria texts: {shown}; "
              "both articles without citation markers or reference lists, the topic given")
    counts = {c: len(v) for c, v in outcomes.items()}

    def carried(row: MetricValue, categories: tuple[str, ...]) -> MetricValue:
        """`row`, carrying the share of its categories' criteria judged and the first unjudged one's bucket."""
        judged, missed = sum(counts.get(c, 0) for c in categories), sum(unjudged.get(c, 0) for c in categories)
        bucket = next((judgment_failure(evidence, f"wlc.{c}", "", "pipeline_failure")[0]
                       for c in categories if unjudged.get(c)), None)
        return row.partly_judged(judged, judged + missed, bucket)

    rows = [carried(MetricValue("wlc", c, 100 * rates[c], "0-100", counts[c], detail=f"unjudged={unjudged.get(c, 0)}",
                                policy=policy, judge=j), (c,))
            if c in rates
            else not_available("wlc", c, "0-100", *judgment_failure(evidence, f"wlc.{c}", "no criterion judged"), j)
            for c in CATEGORIES]
    absent = [c for c in CATEGORIES if c not in rates]
    if absent:
        reason, detail = judgment_failure(evidence, f"wlc.{absent[0]}", "no criterion judged")
        return rows + [not_available("wlc", "writing", "0-100", reason,
                                     f"writing weighs every category and {', '.join(absent)} has none judged: "
                                     f"{detail}"[:500], j)]
    return rows + [carried(MetricValue("wlc", "writing", 100 * writing_overall(rates), "0-100", sum(counts.values()),
                                       detail=f"unjudged={missing}", policy=f"{policy}; {WRITING_RULE}", judge=j),
                           tuple(CATEGORIES))]


def writing_overall(category_rates: Mapping[str, float]) -> float:
    """The paper's writing overall: category win rates weighted by their criteria counts
    ((21 WW + 8 B + 10 N) / 39). Raises ValueError when a category has no rate."""
    absent = [c for c in CATEGORY_SIZES if c not in category_rates]
    if absent:
        raise ValueError(f"no win rate for {', '.join(absent)}")
    return sum(n * category_rates[c] for c, n in CATEGORY_SIZES.items()) / sum(CATEGORY_SIZES.values())


def compute(evidence: ReportEvidence) -> list[MetricValue]:
    return writing_metrics(evidence) + fact_metrics(evidence) + reference_metrics(evidence)


def cov_wiki(labels: Sequence[str]) -> float:
    """Cov. Wiki: consistent gold statements / gold statements judged, x100."""
    if not labels:
        raise ValueError("no gold statement judged")
    return 100 * sum(1 for label in labels if label == "consistent") / len(labels)


def wiki_conf(contradicting: int, n_statements: int) -> float:
    """Wiki Conf.: report statements contradicting some gold statement / report statements, x100."""
    if n_statements <= 0:
        raise ValueError("no report statement")
    return 100 * contradicting / n_statements


def fact_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    """Cov. Wiki and Wiki Conf. from the gold-statement judgments (coverage.py)."""
    j, names = evidence.judge, ("cov_wiki", "wiki_conf")
    n_gold = evidence.inputs.get("wlc.gold_facts")
    if not n_gold:
        return [not_available("wlc", m, "0-100", "pipeline_failure", "the task has no gold statements", j)
                for m in names]
    by_score = {v: k for k, v in LABEL_SCORE.items()}
    judged = [by_score[v] for v in evidence.rubric(GOLD_PREFIX).values() if v in by_score]
    n_statements = evidence.rubric_scores.get(COUNT_ITEM)
    retriever = next(iter(evidence.rubric(RETRIEVER_PREFIX)), "bm25")
    conf_policy = evidence.policy("wlc.wiki_conf")
    conf_rule = CONF_RULES[conf_policy].format(retriever=retriever)
    if len(judged) < int(n_gold):
        # the paper's denominator is every gold statement: a share of those judged would be another number
        reason, detail = judgment_failure(evidence, GOLD_PREFIX, "no gold statement was judged", "pipeline_failure")
        rows = [not_available("wlc", "cov_wiki", "0-100", reason, f"{int(n_gold) - len(judged)} of {int(n_gold)} gold "
                              f"statements unjudged; retriever: {retriever}; {detail}"[:500], j)]
        judged = []
    else:
        counts = (f"gold {len(judged)} judged of {n_gold} (consistent {judged.count('consistent')}, inconsistent "
                  f"{judged.count('inconsistent')}, not_supported {judged.count('not_supported')}); "
                  f"retriever: {retriever}")
        rows = [MetricValue("wlc", "cov_wiki", cov_wiki(judged), "0-100", len(judged), detail=counts,
                            policy=COV_RULE.format(retriever=retriever), judge=j)]
    if not n_statements:  # none written, or every one cites Wikipedia (dropped by the ban): the system's
        return rows + [not_available("wlc", "wiki_conf", "0-100", "model_failure", "the report has no statements "
                                     "to check against the gold statements (none, or all citing Wikipedia)", j)]
    if conf_policy == "gold_side":
        if not judged:
            return rows + [not_available("wlc", "wiki_conf", "0-100", rows[0].na_reason, rows[0].detail, j)]
        conflicting = len(evidence.rubric(CONFLICT_PREFIX))
        return rows + [MetricValue("wlc", "wiki_conf", wiki_conf(conflicting, int(n_statements)), "0-100",
                                   int(n_statements), detail=f"{conflicting} of {int(n_statements)} report statements "
                                   f"contradict a gold statement; retriever: {retriever}", policy=conf_rule,
                                   judge=j)]
    labels = evidence.rubric(STATEMENT_CONFLICT_PREFIX)
    decided = [v for v in labels.values() if v is not None]
    if len(decided) < len(labels) or not decided:  # some statements unjudged: not a share of the others
        reason, detail = judgment_failure(evidence, STATEMENT_CONFLICT_PREFIX, "no report statement was judged "
                                          "against the gold statements", "pipeline_failure")
        return rows + [not_available("wlc", "wiki_conf", "0-100", reason, f"retriever: {retriever}; {detail}"[:500],
                                     j)]
    conflicting = sum(1 for v in decided if v == CONFLICT_SCORE["conflict"])
    unjudged = judgment_failure(evidence, STATEMENT_CONFLICT_PREFIX, "", "pipeline_failure")[0]
    return rows + [MetricValue("wlc", "wiki_conf", wiki_conf(conflicting, len(decided)), "0-100", len(decided),
                               detail=f"{conflicting} of {len(decided)} report statements judged conflict with their "
                                      f"top gold statements ({int(n_statements)} considered); retriever: {retriever}",
                               policy=conf_rule, judge=j).partly_judged(len(decided), int(n_statements), unjudged)]


def leakage_metric(evidence: ReportEvidence, statements: Sequence) -> MetricValue:
    """Leakage as the paper: statements citing the task's own Wikipedia article (another Wikipedia
    article may be a legitimate source); N/A when the task does not say which article it is."""
    titles = own_article_titles(evidence)
    if not titles:
        return not_available("wlc", "leakage", "0-100", "pipeline_failure",
                             "the task names no Wikipedia article (no URL or title)", "none")
    own = [cites_own_article(c.urls, titles) for c in statements]
    leaked = sum(own)
    other = sum(1 for c, is_own in zip(statements, own) if not is_own and cites_wikipedia(c.urls))
    return MetricValue("wlc", "leakage", 100 * leaked / len(statements), "0-100", len(statements),
                       detail=f"{leaked} of {len(statements)} statements cite the task's own Wikipedia article; "
                              f"{other} cite other Wikipedia articles (not leakage)",
                       policy="a cited URL naming the task's own article (/wiki/<title> on a wikipedia.org host)")


def statement_label(verdicts: Sequence[str], rule: str) -> str:
    """A statement's Wiki Live label (support | conflict | not_support | unknown) from the verdicts of
    its cited sources. `rule` is policy `wlc.statement_label`: the paper's support > conflict >
    not_support, or `best_verdict` (our generic merge, then mapped)."""
    if rule == "best_verdict":
        return WIKI_LABEL[merge_verdicts(verdicts)]
    found = set(verdicts)
    if "supported" in found:
        return "support"
    if "contradicted" in found:
        return "conflict"
    return "not_support" if found & {"partial", "unsupported"} else "unknown"


def with_walls_dropped(statements: Sequence[ClaimEvidence], flagged: Mapping[str, str]) -> list[ClaimEvidence]:
    """Policy `wlc.bot_walls = drop` (ours): a verdict on a page our detector flags as a wall becomes
    unread (data_accessibility), as a live fetch of that page would be, so it decides nothing."""
    def dropped(v: SourceVerdict) -> SourceVerdict:
        if v.source not in flagged or v.na_reason is not None:
            return v
        return replace(v, verdict="unknown", na_reason="data_accessibility",
                       note=f"{v.source}: our detector reads the page as {flagged[v.source]} (wlc.bot_walls=drop)")
    return [replace(c, verdicts=tuple(dropped(v) for v in c.verdicts)) for c in statements]


def walls_text(statements: Sequence[ClaimEvidence], flagged: Mapping[str, str], policy: str) -> str:
    """How many of the statements' cited pages our detector flags as walls, and what was done with them."""
    walls = sorted({url for c in statements for url in c.urls if url in flagged})
    kinds = ", ".join(f"{n} {kind}" for kind, n in sorted(Counter(flagged[u] for u in walls).items()))
    what = ("judged as published (wlc.bot_walls=judge)" if policy == "judge"
            else "dropped as unread (wlc.bot_walls=drop)")
    return f"bot walls among the sources: {len(walls)}" + (f" ({kinds}), {what}" if walls else "")


def with_detail(row: MetricValue, more: str) -> MetricValue:
    return replace(row, detail=f"{row.detail}; {more}"[:500])


def reference_metrics(evidence: ReportEvidence) -> list[MetricValue]:
    j = evidence.judge
    statements = [c for c in evidence.cited_claims if c.kind in ("sentence", "table_row")]
    walls_policy = evidence.policy("wlc.bot_walls")
    walls = walls_text(statements, evidence.flagged_pages, walls_policy)
    if walls_policy == "drop":
        statements = with_walls_dropped(statements, evidence.flagged_pages)
    if not statements:
        reason = ("a bibliography but no inline citations" if evidence.citation_style == "bibliography_only"
                  else "no statement carries a citation")
        return [not_available("wlc", m, "0-100", "model_failure", reason, j if m != "leakage" else "none")
                for m in ("ref_acc", "ref_conf", "leakage")]
    leakage = leakage_metric(evidence, statements)
    coverage = evidence.coverage(statements)
    if coverage.nothing_judged:
        return [with_detail(coverage.not_available("wlc", m, "0-100", j), walls)
                for m in ("ref_acc", "ref_conf")] + [leakage]
    rule = evidence.policy("wlc.statement_label")
    judged = [c for c in statements if not unread(c.cited_verdicts())]  # every source unread: left out
    labels = [statement_label([v.verdict for v in c.cited_verdicts()], rule) for c in judged]
    denominator = evidence.policy("wlc.ref_acc.denominator")
    evaluated = [v for v in labels if v != "unknown"] if denominator == "drop_unreachable" else labels
    label_rule = MERGE_POLICY if rule == "best_verdict" else PAPER_LABEL_RULE
    policy = (f"denominator: {denominator} (wlc.ref_acc.denominator = drop_unreachable | all: the judge's "
              f"unknown statements left out or counted); {UNREAD_RULE}; "
              f"statement label ({rule}, wlc.statement_label): {label_rule}; "
              f"only 'support' counts as fully supported; {NOTHING_JUDGED_RULE}; pages our detector flags as walls: "
              f"{walls_policy} (wlc.bot_walls = judge | drop)")
    if not evaluated:  # every judged statement is unknown: pages the judge could not read, or "[n]" citations
        read = any(v.na_reason is None and not v.source.startswith("[") for c in judged for v in c.cited_verdicts())
        bucket, why = (("data_accessibility", "the judge decided no statement (unknown: pages it could not read)")
                       if read else ("model_failure", "the statements cite only indices with no URL"))
        reason = f"{why}, and undecided ones are dropped; {coverage.text()}; {walls}"
        return [not_available("wlc", "ref_acc", "0-100", bucket, reason, j),
                not_available("wlc", "ref_conf", "0-100", bucket, reason, j), leakage]
    detail = (f"evaluated={len(evaluated)} of {len(statements)} statements "
              f"(support {labels.count('support')}, conflict {labels.count('conflict')}, "
              f"not_support {labels.count('not_support')}, unknown {labels.count('unknown')}, "
              f"not judged {len(statements) - len(judged)}); {coverage.text()}; {walls}")
    return [
        coverage.carried(MetricValue("wlc", "ref_acc", 100 * evaluated.count("support") / len(evaluated), "0-100",
                                     len(evaluated), detail=detail, policy=policy, judge=j)),
        coverage.carried(MetricValue("wlc", "ref_conf", 100 * evaluated.count("conflict") / len(evaluated), "0-100",
                                     len(evaluated), detail=detail, policy=policy, judge=j)),
        leakage,
    ]


SUITE = Suite(
    "wlc", "Wiki Live Challenge",
    (MetricSpec("well_written", "0-100", True, "win rate against the reference on the 21 well-written criteria"),
     MetricSpec("broad", "0-100", True, "win rate on the 8 broad-coverage criteria"),
     MetricSpec("neutral", "0-100", True, "win rate on the 10 neutrality criteria"),
     MetricSpec("writing", "0-100", True, "category win rates weighted by their criteria counts (21 WW + 8 B + 10 N) / 39"),
     MetricSpec("cov_wiki", "0-100", True, "share of the reference's gold statements the report states consistently",
                claims=True),
     MetricSpec("wiki_conf", "0-100", True, "share of the report's statements contradicting the gold statements",
                better=-1, claims=True),
     MetricSpec("ref_acc", "0-100", True, "share of evaluated statements fully supported by their citations", cites=True,
                claims=True),
     MetricSpec("ref_conf", "0-100", True, "share of evaluated statements contradicting their own citation", cites=True, better=-1,
                claims=True),
     MetricSpec("leakage", "0-100", False, "share of statements citing Wikipedia despite the ban", cites=True, better=-1,
                claims=True)),
    compute, headline=("writing", "well_written", "broad", "neutral", "cov_wiki", "ref_acc", "wiki_conf", "ref_conf",
                       "leakage"))


def combine_orders(first_order: str, swapped_order: str) -> str:
    """Both-orders policy: a win counts only when both presentations agree, otherwise a tie.

    Each argument is the winner as judged in that order: "generated", "reference" or "tie"."""
    return first_order if first_order == swapped_order else "tie"


def win_rates(outcomes: dict[str, list[str]]) -> dict[str, float]:
    """Per category and overall generated-win rates. `overall` is micro (all wins over all criteria),
    as a release's per-article aggregate is; with every criterion judged it equals `writing_overall`."""
    rates = {cat: sum(o == "generated" for o in results) / len(results) for cat, results in outcomes.items() if results}
    every = [o for results in outcomes.values() for o in results]
    if not every:
        raise ValueError("no criterion outcomes")
    rates["overall"] = sum(o == "generated" for o in every) / len(every)
    return rates
