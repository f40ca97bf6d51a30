"""Wiki Live Challenge (../shared/methods/wlc.md): writing win rates, coverage of the gold statements, reference
metrics; its release loader."""
from ..policies import Policy
from ..protocol import Benchmark, LiveRefresh
from .coverage import gold_coverage
from .heuristic import HANDLERS
from .inputs import task_inputs
from .judgments import pairwise
from .metrics import SUITE
from .published import PUBLISHED_TASKS, published_checks

BENCHMARK = Benchmark("wlc", SUITE, loader=__name__ + ".loader", report_judgments=(pairwise, gold_coverage),
                      heuristic_handlers=HANDLERS, evidence_inputs=task_inputs, published_checks=published_checks,
                      published_tasks=PUBLISHED_TASKS,
                      live=LiveRefresh(__name__ + ".live.refresh", "0 5 * * 1"),  # weekly, early morning (UTC)
                      policies={
    "wlc.ref_acc.denominator": Policy("drop_unreachable", ("drop_unreachable", "all"),
                                      "Wiki Live reference accuracy: statements the judge found unreadable (unknown) "
                                      "left out or counted; statements with every source unread are always left out"),
    "wlc.statement_label": Policy("support_conflict_not_support", ("support_conflict_not_support", "best_verdict"),
                                  "Wiki Live Ref. Acc./Conf.: a statement's label from its sources, support > conflict"
                                  " > not_support (the paper's), or our generic best verdict"),
    "wlc.position_bias": Policy("published", ("published", "both_orders", "random_order"),
                                "Wiki Live writing: the release's protocol (one call per category, reference first, "
                                "no tie), or ours: both orders (win only if they agree, else tie), one seeded order"),
    "wlc.bot_walls": Policy("judge", ("judge", "drop"),
                            "Wiki Live Ref. Acc./Conf.: a read page our detector flags as a wall (bot wall, captcha, "
                            "...) is judged as the published pipeline does, or ours: dropped as unread"),
    "wlc.wiki_conf": Policy("per_statement", ("per_statement", "gold_side"),
                            "Wiki Live Wiki Conf.: each report statement judged against its own top gold statements "
                            "(the reference code's), or ours: statements the Cov. Wiki calls name as contradicting"),
    "wlc.statements": Policy("release", ("release", "claims"),
                             "Wiki Live statements judged (Ref. Acc./Conf., Cov. Wiki, Wiki Conf.): the release's own "
                             "statement set where its json_data ships one (the published pipeline's), or our claims "
                             "(claims.extraction)"),
    "wlc.seed": Policy("0", None, "Wiki Live writing: seed of the random order"),
})
