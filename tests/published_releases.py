"""Miniature MMDR and DeepResearch Bench releases holding only published score files, in the shapes of
../shared/methods/formats.md, with our own numbers. Consistent by construction (hand-computed), so
`dreval verify` finds no mismatch; tests plant one by editing a number.

MMDR run `run-a` (Model "Run A" -> system run-a), 0-100, two decimals; every paper identity holds
(VEF 0 or 100, FLAE between READ/INSH/STRU, EVI between CON/COV/FID, MOSAIC 0 with the gate closed):
  task  FLAE (R/I/S)          EVI(results) CON/COV/FID  Vef.    TRACE  MOSAIC  Overall  Sem.   Acc.   VQA
  Q1    60.00 (62/58/61)      0.50         55/45/52     100.00  70.00  40.00   59.00    50.00  30.00  70.00
  Q2    45.50 (40/50/46)      0.40         41/38/41       0.00  24.00   0.00   21.10    (empty: no visual item)
  Q3     0.00 (0/0/0)         0.20         22/18/20       0.00  12.00   0.00    6.00    (empty: FLAE 0, gate closed)
  Q4    a malformed row (FLAE 'abc'): skipped whole
Leaderboard: means over Q1-Q3 (Overall 28.70 = 86.10/3; Sem./Acc./VQA over Q1 only, where they apply).
results/run-a.jsonl is on 0-1 (FINAL_MMDR = 0.2 GEN + 0.5 (0.6 EVI + 0.4 VEF) + 0.3 MM); Q5's total is null
(its parts show three decimals, so each column reads as written to three: JSON keeps no trailing zeros).

DRB model `Model X`: three raw_results tasks (0-1), race_result.txt their means, fact_result.txt
150 valid of 200 citations; one raw_results line is malformed JSON, one has a non-numeric insight.
"""
from __future__ import annotations

import json
from pathlib import Path

TASK_HEADER = ["Model", "Task ID", "Split", "Overall", "Stored Overall", "Overall Delta", "FLAE", "Read.", "Insh.",
               "Stru.", "TRACE", "Vef.", "Con.", "Cov.", "Fid.", "MOSAIC", "Sem.", "Acc.", "VQA", "Complete",
               "Report Path"]
TASK_ROWS = [
    ["Run A", "Q1", "research", "59.00", "58.90", "0.10", "60.00", "62.00", "58.00", "61.00", "70.00", "100.00",
     "55.00", "45.00", "52.00", "40.00", "50.00", "30.00", "70.00", "true", "reports/Q1.md"],
    ["Run A", "Q2", "daily", "21.10", "21.10", "0.00", "45.50", "40.00", "50.00", "46.00", "24.00", "0.00",
     "41.00", "38.00", "41.00", "0.00", "", "", "", "true", "reports/Q2.md"],
    ["Run A", "Q3", "research", "6.00", "6.00", "0.00", "0.00", "0.00", "0.00", "0.00", "12.00", "0.00",
     "22.00", "18.00", "20.00", "0.00", "", "", "", "true", "reports/Q3.md"],
    ["Run A", "Q4", "research", "10.00", "10.00", "0.00", "abc", "1.00", "1.00", "1.00", "1.00", "1.00",
     "1.00", "1.00", "1.00", "1.00", "", "", "", "false", "reports/Q4.md"],
]
BOARD_HEADER = ["Model", "Overall", "FLAE", "TRACE", "Vef.", "MOSAIC", "Sem.", "Acc.", "VQA"]
BOARD_ROW = ["Run A", "28.70", "35.17", "35.33", "33.33", "13.33", "50.00", "30.00", "70.00"]
MANIFEST = {"model": "Run A", "formulas": {"Overall": "0.2*FLAE + 0.5*TRACE + 0.3*MOSAIC",
                                           "TRACE": "0.6*EVI + 0.4*VEF"},
            "contributing_counts": {"Overall": 3, "MOSAIC": 3, "Sem.": 1, "Acc.": 1, "VQA": 1},
            "notes": ["Sem./Acc./VQA are averaged over the tasks where they apply"]}
RESULTS = [
    {"qid": "Q1", "scores": {"GEN": 0.6, "EVI": 0.5, "MM": 0.4, "VEF": 1.0, "FINAL_MMDR": 0.59}},
    {"qid": "Q2", "scores": {"GEN": 0.455, "EVI": 0.4, "MM": 0.0, "VEF": 0.0, "FINAL_MMDR": 0.211}},
    {"qid": "Q3", "scores": {"GEN": 0.0, "EVI": 0.2, "MM": 0.0, "VEF": 0.0, "FINAL_MMDR": 0.06}},
    {"qid": "Q5", "scores": {"GEN": 0.3, "EVI": 0.137, "MM": 0.215, "VEF": 0.0, "FINAL_MMDR": None}},
]


def csv_text(header: list[str], rows: list[list[str]]) -> str:
    """Comma-separated with CRLF line ends, as the release writes it (the caller adds the BOM)."""
    return "".join(",".join(cells) + "\r\n" for cells in [header, *rows])


def write_mmdr(root: Path, task_rows: list[list[str]] = TASK_ROWS, board_row: list[str] = BOARD_ROW,
               manifest: dict = MANIFEST, results: list[dict] = RESULTS) -> Path:
    run = root / "reference_outputs" / "run-a"
    run.mkdir(parents=True, exist_ok=True)
    (run / "run-a.task_scores.csv").write_bytes(b"\xef\xbb\xbf" + csv_text(TASK_HEADER, task_rows).encode())
    (run / "run-a.leaderboard.csv").write_bytes(b"\xef\xbb\xbf" + csv_text(BOARD_HEADER, [board_row]).encode())
    (run / "run-a.leaderboard_manifest.json").write_text(json.dumps(manifest, indent=2))
    (root / "results").mkdir(exist_ok=True)
    (root / "results" / "run-a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in results))
    return root


RAW_RESULTS = [
    {"id": 1, "prompt": "p1", "comprehensiveness": 0.40, "insight": 0.50, "instruction_following": 0.45,
     "readability": 0.42, "overall_score": 0.44},
    {"id": 2, "prompt": "p2", "comprehensiveness": 0.30, "insight": 0.35, "instruction_following": 0.50,
     "readability": 0.48, "overall_score": 0.38},
    {"id": 3, "prompt": "p3", "comprehensiveness": 0.50, "insight": 0.47, "instruction_following": 0.40,
     "readability": 0.45, "overall_score": 0.46},
]
RACE_RESULT = ("Comprehensiveness: 0.4000\nInsight: 0.4400\nInstruction Following: 0.4500\n"
               "Readability: 0.4500\nOverall Score: 0.4267\n")
FACT_RESULT = "total_citations: 200\ntotal_valid_citations: 150\nvalid_rate: 0.7500\n"


def write_drb(root: Path, race_result: str = RACE_RESULT, fact_result: str = FACT_RESULT) -> Path:
    race = root / "results" / "race" / "Model X"
    race.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in RAW_RESULTS]
    lines.insert(1, '{"id": 9, "comprehensiveness": 0.4,')  # malformed JSON: skipped
    lines.append(json.dumps({"id": 4, "comprehensiveness": 0.5, "insight": "high"}))  # not a number: skipped whole
    (race / "raw_results.jsonl").write_text("\n".join(lines) + "\n")
    (race / "race_result.txt").write_text(race_result)
    fact = root / "results" / "fact" / "Model X"
    fact.mkdir(parents=True, exist_ok=True)
    (fact / "fact_result.txt").write_text(fact_result)
    return root


def drb_task(i: int) -> dict:
    """Task i of a generated 100-task DeepResearch Bench release (0-1, four decimals as the reference code
    rounds them): its overall the mean of its dimensions, so within them. Task 1's dimensions are all 0.44,
    so its overall can only be 0.44."""
    if i == 1:
        dims = (0.44, 0.44, 0.44, 0.44)
    else:
        fine = (i % 9) * 0.0007  # four decimals shown, as the reference code's numbers
        dims = (0.30 + (i % 7) / 100 + fine, 0.35 + (i % 5) / 50 + fine, 0.40 + (i % 3) * 0.03 + fine,
                0.45 + (i % 4) / 100 + fine)
    names = ("comprehensiveness", "insight", "instruction_following", "readability")
    return {"id": i, "prompt": f"p{i}", **{n: round(d, 4) for n, d in zip(names, dims)},
            "overall_score": round(sum(dims) / 4, 4)}


DRB_TASKS = [drb_task(i) for i in range(1, 101)]
DRB_LABELS = {"comprehensiveness": "Comprehensiveness", "insight": "Insight",
              "instruction_following": "Instruction Following", "readability": "Readability",
              "overall_score": "Overall Score"}


def drb_race_result(tasks: list[dict]) -> str:
    """race_result.txt over `tasks`: each mean to four decimals."""
    return "".join(f"{label}: {sum(t[name] for t in tasks) / len(tasks):.4f}\n" for name, label in DRB_LABELS.items())


DRB_FACT_ALL = "total_citations: 23.4500\ntotal_valid_citations: 18.7600\nvalid_rate: 0.8000\n"  # per task with citations


def write_drb_release(root: Path, tasks: list[dict], race_result: str, fact_result: str = DRB_FACT_ALL) -> Path:
    """A DeepResearch Bench release of model `Model Y` holding `tasks`' raw_results and the given files."""
    race = root / "results" / "race" / "Model Y"
    race.mkdir(parents=True, exist_ok=True)
    (race / "raw_results.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks))
    (race / "race_result.txt").write_text(race_result)
    fact = root / "results" / "fact" / "Model Y"
    fact.mkdir(parents=True, exist_ok=True)
    (fact / "fact_result.txt").write_text(fact_result)
    return root
