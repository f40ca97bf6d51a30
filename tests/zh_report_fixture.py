"""A Chinese deep-research task and report, realistic in shape: a Chinese query, checklist, RACE
criteria, reference report, attachment and sandbox pages; the report writes some figures in
full-width digits, uses 万/亿, cites with plain [n] markers and changes one figure of its source.
`run_stages` runs the evaluation stages on it, as the assets do, without Dagster."""
from __future__ import annotations

from typing import Sequence

import polars as pl

from dreval_assets.core.models import RaceCriteria, RaceCriterion, SandboxPage, Task
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.fetch import fetch_references
from dreval_assets.fetch.chain import ChainFetcher
from dreval_assets.stages.frames import frame, text_hash
from dreval_assets.benchmarks.judging import JudgmentContext
from dreval_assets.stages.judgments import judge_reports
from dreval_assets.stages.parse import parse_reports
from dreval_assets.stages.scores import score_reports
from dreval_assets.stages.task_rubrics import generate_rubrics
from dreval_assets.stages.tasks import attachments_by_task, task_frames
from dreval_assets.stages.verdicts import judge_claims

ALL_SUITES = ("tvir", "dr3", "mmdr", "miroeval", "wlc")  # with the task's own drb: every suite

CAAM_URL = "https://www.caam.example.cn/2024/01/annual-report"
CUSTOMS_URL = "https://www.customs.example.cn/2024/01/exports"
CHARGING_URL = "https://www.evcipa.example.cn/2024/01/charging"

CAAM_PAGE = """中国汽车工业协会：2023年汽车工业经济运行情况

2023年，我国汽车产销累计完成3016.1万辆和3009.4万辆，同比分别增长11.6%和12%，年产销量双双创历史新高。

新能源汽车产销分别完成958.7万辆和949.5万辆，同比分别增长35.8%和37.9%，市场占有率达到31.6%。其中，纯电动汽车销量668.5万辆，插电式混合动力汽车销量280.4万辆。

中国汽车工业协会预计，2024年我国汽车总销量将超过3100万辆，新能源汽车销量有望达到1150万辆。
"""
CUSTOMS_PAGE = """海关总署：2023年汽车出口情况

据海关统计，2023年我国汽车出口491万辆，同比增长57.9%，出口金额达到1016亿美元。

其中，新能源汽车出口120.3万辆，同比增长77.6%，主要出口市场为欧洲和东南亚。比利时、泰国和英国是新能源汽车出口量最大的三个市场。
"""
CHARGING_PAGE = """中国充电联盟：2023年全国电动汽车充换电基础设施运行情况

截至2023年12月底，全国充电基础设施累计数量为859.6万台，同比增长65%。其中，公共充电桩272.6万台，私人充电桩587万台。

2023年，充电基础设施增量为338.6万台，桩车增量比为1:2.8，充电基础设施建设能够基本满足新能源汽车的快速发展。
"""
ATTACHMENT = """# 2023年新能源汽车产业发展简报

2023年，全国新能源汽车产量为958.7万辆，销量为949.5万辆，市场占有率为31.6%。

全年新能源汽车出口120.3万辆，同比增长77.6%。

截至2023年底，全国充电基础设施累计达到859.6万台。
"""

REPORT = f"""# 2023年中国新能源汽车市场研究报告

## 摘要

2023年，中国新能源汽车产业继续保持高速增长，销量、出口和充电基础设施均创历史新高。本报告基于行业协会、海关和充电联盟发布的数据，分析市场规模、出口、基础设施与竞争格局，并讨论主要风险。

## 一、市场规模

2023年，中国新能源汽车销量达到９４９.５万辆，同比增长３７.９%[1]。新能源汽车市场占有率达到31.6%[1]。其中，纯电动汽车销量668.5万辆，插电式混合动力汽车销量280.4万辆[1]。

## 二、出口

据海关统计，2023年中国汽车出口491万辆，同比增长57.9%[2]。新能源汽车出口150.3万辆，同比增长77.6%，主要出口市场为欧洲和东南亚[2]。

## 三、充电基础设施

截至2023年12月底，全国充电基础设施累计数量为859.6万台，同比增长65%[3]。其中，公共充电桩272.6万台[3]。

## 四、风险与展望

由于价格竞争加剧，行业整体利润率承压，部分中小企业面临淘汰风险。中国汽车工业协会预计，2024年新能源汽车销量有望达到1150万辆[1]。

## 参考文献

[1] 中国汽车工业协会：2023年汽车工业经济运行情况 {CAAM_URL}
[2] 海关总署：2023年汽车出口情况 {CUSTOMS_URL}
[3] 中国充电联盟：2023年全国电动汽车充换电基础设施运行情况 {CHARGING_URL}
"""
SUPPORTED_CLAIM = "2023年，中国新能源汽车销量达到９４９.５万辆，同比增长３７.９%"
CHANGED_CLAIM = "新能源汽车出口150.3万辆，同比增长77.6%，主要出口市场为欧洲和东南亚"

REFERENCE_REPORT = """# 2023年中国新能源汽车市场分析

2023年，中国新能源汽车销量为949.5万辆，同比增长37.9%，市场占有率达到31.6%。新能源汽车出口120.3万辆，同比增长77.6%。

## 充电基础设施

截至2023年底，全国充电基础设施累计数量为859.6万台，同比增长65%。

## 竞争格局

价格竞争加剧，行业集中度继续提高。
"""

CHECKLIST = ["报告是否给出2023年新能源汽车的销量和同比增长率？",
             "报告是否说明新能源汽车出口的规模和主要市场？",
             "报告是否分析充电基础设施的建设情况？",
             "报告是否比较主要车企的市场份额？"]

RACE = RaceCriteria(
    dimension_weights={"comprehensiveness": 0.4, "insight": 0.3, "instruction_following": 0.2, "readability": 0.1},
    criteria={
        "comprehensiveness": [RaceCriterion(criterion="市场规模", explanation="给出新能源汽车销量和市场占有率", weight=1),
                              RaceCriterion(criterion="充电基础设施", explanation="说明充电桩数量和增长", weight=1)],
        "insight": [RaceCriterion(criterion="风险分析", explanation="分析价格竞争和利润率的影响", weight=1)],
        "instruction_following": [RaceCriterion(criterion="聚焦2023年", explanation="围绕2023年中国市场展开", weight=1)],
        "readability": [RaceCriterion(criterion="结构清晰", explanation="使用标题和分节组织内容", weight=1)]})

TASK = Task(
    key="drb.zh-ev-2023", benchmark="drb", original_id="zh-ev-2023", language="zh",
    query="请分析2023年中国新能源汽车市场的规模、出口和充电基础设施情况，并讨论行业面临的主要风险。",
    checklist=CHECKLIST, reference_article=REFERENCE_REPORT, race_criteria=RACE,
    sandbox=[SandboxPage(url=CAAM_URL, title="中国汽车工业协会", role="supportive", text=CAAM_PAGE),
             SandboxPage(url=CUSTOMS_URL, title="海关总署", role="supportive", text=CUSTOMS_PAGE),
             SandboxPage(url=CHARGING_URL, title="中国充电联盟", role="supportive", text=CHARGING_PAGE)],
    attachment_texts={"brief.md": ATTACHMENT})


def reports_frame(texts: dict[tuple[str, str], str]) -> pl.DataFrame:
    return frame("reports", [{"system": s, "task": t, "status": "ok", "text": text, "n_chars": len(text),
                              "content_hash": text_hash(text), "source_path": None, "na_reason": None, "detail": ""}
                             for (s, t), text in texts.items()])


def run_stages(tasks: Sequence[Task], texts: dict[tuple[str, str], str], extra_suites: Sequence[str] = ALL_SUITES,
               batch_size: int = 1) -> dict[str, pl.DataFrame]:
    """Every evaluation stage with the heuristic judge, as the assets chain them; the frames by asset."""
    keys = list(texts)
    judge = HeuristicJudge()
    frames = task_frames(list(tasks))
    reports = reports_frame(texts)
    parsed = parse_reports(reports)
    fetched = fetch_references(parsed["report_claims"], {t.key: t.sandbox for t in tasks}, ChainFetcher(), keys)
    pages = {r["text_hash"]: r["text"] for r in fetched["page_texts"].iter_rows(named=True)}
    verdicts = judge_claims(parsed["report_claims"], fetched["fetched_references"], pages, judge, batch_size=batch_size,
                            sandbox_evidence={t.key: t.sandbox for t in tasks})
    page_texts = dict(frames["page_texts"].select("text_hash", "text").iter_rows())
    rubrics = generate_rubrics(frames["tasks"], attachments_by_task(frames["task_sandbox"], page_texts), judge,
                               extra_suites)
    judged = judge_reports(JudgmentContext(keys, reports, frames["tasks"], rubrics, judge, extra_suites))
    scores = score_reports(keys, reports, parsed["parsed_reports"], parsed["report_claims"], verdicts, frames["tasks"],
                           frames["task_sandbox"], judge, extra_suites, judgments=judged, rubrics=rubrics)
    return {"claims": parsed["report_claims"], "verdicts": verdicts, "rubrics": rubrics, "judgments": judged,
            "scores": scores}
