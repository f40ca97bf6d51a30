"""Which runs evaluate a plan: systems due on the same tasks share a run, and the blocks cover exactly
the planned system x task pairs (a Dagster range is the product of its systems and its tasks)."""
import itertools

import pytest

from dreval_assets.operations.planner import evaluation_blocks

SYSTEMS = ["alpha", "beta", "gamma", "delta"]
TASKS = ["t1", "t2", "t3", "t4", "t5"]


def covered(blocks):
    pairs = []
    for first_system, last_system, first, last in blocks:
        systems = SYSTEMS[SYSTEMS.index(first_system):SYSTEMS.index(last_system) + 1]
        tasks = TASKS[TASKS.index(first):TASKS.index(last) + 1]
        pairs += itertools.product(systems, tasks)
    return pairs


def planned(per_system):
    return sorted((system, task) for system, tasks in per_system.items() for task in tasks)


def test_systems_due_on_the_same_tasks_share_one_run():
    per_system = {system: list(TASKS) for system in SYSTEMS}
    assert evaluation_blocks(per_system, SYSTEMS, TASKS) == [("alpha", "delta", "t1", "t5")]


def test_blocks_cover_exactly_the_plan_and_never_a_pair_twice():
    per_system = {"alpha": ["t1", "t2", "t4"], "beta": ["t1", "t2", "t4"], "gamma": ["t3"],
                  "delta": ["t1", "t2", "t4"]}
    blocks = evaluation_blocks(per_system, SYSTEMS, TASKS)
    assert sorted(covered(blocks)) == planned(per_system)
    # alpha and beta are adjacent; delta is not (gamma, due on other tasks, lies between)
    assert blocks == [("alpha", "beta", "t1", "t2"), ("alpha", "beta", "t4", "t4"), ("gamma", "gamma", "t3", "t3"),
                      ("delta", "delta", "t1", "t2"), ("delta", "delta", "t4", "t4")]


def test_a_system_with_nothing_due_gets_no_run():
    assert evaluation_blocks({"alpha": [], "beta": ["t5"]}, SYSTEMS, TASKS) == [("beta", "beta", "t5", "t5")]


def test_a_system_or_task_that_is_no_partition_is_refused_not_dropped():
    with pytest.raises(ValueError, match="epsilon"):
        evaluation_blocks({"epsilon": ["t1"]}, SYSTEMS, TASKS)
    with pytest.raises(ValueError, match="t9"):
        evaluation_blocks({"alpha": ["t1", "t9"]}, SYSTEMS, TASKS)


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 6, 7, 19, 20, 100])
def test_a_block_over_the_run_size_is_cut_into_slices_that_cover_it_exactly(limit):
    per_system = {system: list(TASKS) for system in SYSTEMS}
    per_system["delta"] = ["t2", "t3"]  # a second block
    blocks = evaluation_blocks(per_system, SYSTEMS, TASKS, max_partitions=limit)
    assert sorted(covered(blocks)) == planned(per_system)  # every planned pair once, nothing else
    assert all(len(covered([block])) <= limit for block in blocks)
    if limit >= 15:
        assert len(blocks) == 2  # nothing to cut: the blocks as without a limit
    assert blocks == sorted(blocks, key=lambda b: (SYSTEMS.index(b[0]), TASKS.index(b[2])))


def test_the_run_size_setting_is_checked(monkeypatch):
    from dreval_assets.errors import ConfigError
    from dreval_assets.operations.planner import DEFAULT_RUN_PARTITIONS, run_partitions_setting

    monkeypatch.delenv("DREVAL_RUN_PARTITIONS", raising=False)
    assert run_partitions_setting() == DEFAULT_RUN_PARTITIONS
    monkeypatch.setenv("DREVAL_RUN_PARTITIONS", "0")
    with pytest.raises(ConfigError, match="DREVAL_RUN_PARTITIONS"):
        run_partitions_setting()
