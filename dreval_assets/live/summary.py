"""What every live refresh reports, and how it fails: below the refresh dispatch and the benchmarks'
own refreshes (`benchmarks/<name>/live/`), which all return a `RefreshSummary`."""
from __future__ import annotations

from dataclasses import dataclass, field


class RefreshFailed(RuntimeError):
    """The refresh could not run at all (configuration, the source's API); the cursor is kept."""


@dataclass
class RefreshSummary:
    source: str
    new_tasks: list[str] = field(default_factory=list)
    changed_tasks: list[str] = field(default_factory=list)
    counts: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    cursor: str | None = None
    filter_rates: dict = field(default_factory=dict)  # generation: filter -> entered, passed, rate, not_judged, paper
    notes: list[str] = field(default_factory=list)  # Wiki Live: the window, new versions with their lineage
    no_call_answered: bool = False  # every call of the stage the refresh stopped at failed

    def lines(self, shown: int = 20) -> list[str]:
        out = [f"refresh {self.source}: {len(self.new_tasks)} new task(s)"
               + (f", {len(self.changed_tasks)} changed" if self.changed_tasks else "")]
        out += [f"  {key}" for key in self.new_tasks[:shown]]
        out += [f"  {name}: {value}" for name, value in self.counts.items()]
        out += self.notes
        if self.filter_rates:
            out.append("filter pass rates (passed/decided; N/A judgments and answers are not in the rate):")
            out += [f"  {line}" for line in _rate_lines(self.filter_rates)]
        if self.skipped:
            out.append(f"skipped: {len(self.skipped)}")
            out += [f"  {reason}" for reason in self.skipped[:shown]]
        if self.cursor:
            out.append(f"next refresh starts after {self.cursor}")
        return out


    def every_call_failed(self) -> bool:
        """Nothing registered, and the stage the refresh stopped at got no answer at all (its benchmark's
        refresh tells, by its own stages: `no_call_answered`): the user's endpoint or judge is down,
        which is an error, not "0 new tasks"."""
        return not (self.new_tasks or self.changed_tasks) and self.no_call_answered

    def metadata(self) -> dict:
        """Numbers for the refresh op's metadata: counts, and each filter's pass rate and its parts."""
        found = {k: v for k, v in self.counts.items() if isinstance(v, int)}
        for name, rate in self.filter_rates.items():
            found.update({f"{name}_{part}": value for part, value in rate.items() if value is not None})
        return found


def _rate_lines(rates: dict) -> list[str]:
    lines = []
    for name, r in rates.items():
        shown = "n/a" if r["rate"] is None else f"{r['rate']:.1f} %"
        na = f"; {r['not_judged']} N/A" if r["not_judged"] else ""
        lines.append(f"{name}: {r['passed']}/{r['entered']} = {shown} (paper {r['paper']:.1f} %){na}")
    return lines
