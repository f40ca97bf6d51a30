"""DR³-Eval (../shared/methods/dr3.md): IR (IR_UF, IR_SC), CC, FA, IF, DQ and Avg; its release loader."""
from ...core import report_features
from ..policies import Policy
from ..protocol import Benchmark
from ..rubric import Rubric
from .heuristic import HANDLERS
from .judgments import evidence_inputs, insight_recall
from .metrics import SUITE

DEPTH_QUALITY = Rubric("dr3.dq", "dr3", "Depth quality", (
    ("depth", "analytical substance and logical rigour, given the query"),
), report_features.depth_quality)

BENCHMARK = Benchmark("dr3", SUITE, loader=__name__ + ".loader", rubrics=(DEPTH_QUALITY,),
                      report_judgments=(insight_recall,), heuristic_handlers=HANDLERS,
                      evidence_inputs=evidence_inputs, policies={
    "dr3.fa.unknown": Policy("zero", ("zero", "exclude"), "DR³ FA: pairs the judge decided unknown count as 0 or "
                                                          "are left out (pairs never judged are always left out)"),
    "dr3.if.partial": Policy("zero", ("zero", "half"), "DR³ IF: a half-met checklist item counts 0 or 0.5"),
    "dr3.ir.partial": Policy("zero", ("zero", "half"), "DR³ IR: a partly covered insight counts 0 (the reference "
                                                      "code counts only full 1s) or 0.5"),
})
