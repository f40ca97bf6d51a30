"""The first evaluation's parse and statement grounding on the machine's second core.

`dreval run` with the endpoint judge starts this helper process (`helper_process`) once its judge check
passed, when an evaluation is due. In the seconds before the first claim can be judged the run's own
process was the only one working, on one core (importing Dagster, starting the runs, asking the
statements), and the parse of the reports and the grounding of the judge's statements were ~2 s of it at
10 x 10. The helper does them instead (the run's process takes the newest it has not begun when it would
wait), for the command's first parse, and ends once that parse's statements are grounded, so it stands
beside no later memory peak. What it runs are this process's own functions on the same inputs, so the
rows are the same; whatever it cannot do (never started, gone, an error) is done here, as it would be
without it."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator, Sequence

from ..helper_process import HelperProcess

BATCH = 8  # reports per request: the first ones' statements are asked while the helper parses the next
HELPER = HelperProcess()


def start_parse_helper() -> None:
    """Start the helper (once), the parser and the grounding imported."""
    HELPER.start(_import_what_it_runs)


def each_done(function: Callable[..., Any], items: Sequence[tuple]) -> Iterator[Any]:
    """`function(*item)` of each item, in order: in the helper, a batch at a time, when it runs."""
    if not HELPER.started:
        yield from (function(*item) for item in items)
        return
    batches = [list(items[i:i + BATCH]) for i in range(0, len(items), BATCH)]
    asked = [(batch, HELPER.submit(_each, function, batch)) for batch in batches]
    for batch, future in asked:
        yield from HELPER.result_or_here(future, _each, function, batch)


class Soon:
    """A result to come: `done()` says whether it is in (never waits), calling it gives it (waiting, or
    doing the work here)."""

    def __init__(self, get: Callable[[], Any], done: Callable[[], bool]) -> None:
        self._get, self.done = get, done

    def __call__(self) -> Any:
        return self._get()

    @classmethod
    def now(cls, result: Any) -> Soon:
        return cls(lambda: result, lambda: True)


def done_soon(function: Callable[..., Any], *args: Any) -> Soon:
    """`function(*args)`, begun in the helper when it runs, else done now."""
    future = HELPER.submit(function, *args)
    if future is None:
        return Soon.now(function(*args))
    return Soon(lambda: HELPER.result_or_here(future, function, *args), future.done)


def parse_done() -> None:
    """The parse it served is over, its statements grounded: the helper ends (a later parse is done here)."""
    HELPER.close(wait=False)


def _each(function: Callable[..., Any], items: Iterable[tuple]) -> list[Any]:
    return [function(*item) for item in items]


def _import_what_it_runs() -> None:
    """The helper's warm-up: the modules its work comes from (the parser and the grounding: no polars)."""
    from ..core import report_rows, statements  # noqa: F401
