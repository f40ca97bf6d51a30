"""The IO manager serves a run's repeated reads from memory, and never a frame the run has since rewritten."""
import polars as pl

from dreval_assets.defs.resources import RunReads

KEYS = [("s1", "t1"), ("s1", "t2")]


def frames(value: str) -> dict[str, pl.DataFrame]:
    return {"reports": pl.DataFrame({"system": ["s1"], "task": ["t1"], "text": [value]})}


def test_a_read_is_served_again_within_its_run_only():
    reads = RunReads()
    reads.keep("run-1", "reports", KEYS, frames("first"))
    assert reads.get("run-1", "reports", KEYS)["reports"]["text"][0] == "first"
    assert reads.get("run-1", "reports", KEYS[:1]) is None  # other partitions
    assert reads.get("run-2", "reports", KEYS) is None
    reads.keep("run-2", "tasks", KEYS, frames("x"))  # a new run drops the old run's reads
    assert reads.get("run-1", "reports", KEYS) is None


def test_writing_an_asset_drops_its_reads():
    reads = RunReads()
    reads.keep("run-1", "reports", KEYS, frames("before"))
    reads.keep("run-1", "tasks", KEYS, frames("tasks"))
    reads.forget("run-1", "reports")
    assert reads.get("run-1", "reports", KEYS) is None
    assert reads.get("run-1", "tasks", KEYS) is not None
    assert reads.size == frames("tasks")["reports"].estimated_size()


def test_reads_outside_a_run_or_past_the_budget_are_not_kept():
    reads = RunReads(max_bytes=frames("a")["reports"].estimated_size())
    reads.keep(None, "reports", KEYS, frames("a"))
    assert reads.get(None, "reports", KEYS) is None
    reads.keep("run-1", "reports", KEYS, frames("a"))
    reads.keep("run-1", "tasks", KEYS, frames("b"))  # over the budget
    assert reads.get("run-1", "reports", KEYS) is not None
    assert reads.get("run-1", "tasks", KEYS) is None
