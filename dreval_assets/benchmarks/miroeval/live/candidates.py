"""A generated MiroEval query and how far it got through the filters and the selection: the one type
the generation, the selection and the filter rates share, below all three."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from ....core.models import Task

RejectedBy = Literal["search", "necessity", "inverse_quality", "judge_failure", "endpoint_failure",
                     "known", "duplicate"]


@dataclass
class Candidate:
    """One generated query and how far it got. Outcomes of filters it never reached stay None."""

    topic: str
    subtopic: str
    headline: str
    headline_url: str
    published_at: str
    persona: str
    query: str
    headline_description: str = ""
    task_key: str = ""  # the key it has (or would have) as a task
    search_results: list[dict[str, str]] = field(default_factory=list)  # url, title, content (cut)
    n_search_results: int = 0  # valid results counted (search_results keeps the first few)
    distinct_domains: int = 0
    passed_search: bool | None = None
    needs_external: bool | None = None
    necessity_reason: str = ""
    closed_book_answer: str | None = None
    adequate: bool | None = None
    adequacy_reason: str = ""
    accepted: bool = False  # passed all three filters
    rejected_by: RejectedBy | None = None
    rejection_detail: str = ""  # why, beyond rejected_by: the failure text, counts, the judge's reason
    kept: bool = False  # among the `keep` best accepted (query_selection)
    chosen: bool = False  # among the `choose` picked for diversity: only these become tasks
    selection_reason: str = ""  # why chosen, kept or not, or what stopped it
    task: Task | None = None

    @property
    def pending(self) -> bool:
        return not self.accepted and self.rejected_by is None

    def reject(self, by: RejectedBy, detail: str = "") -> None:
        self.rejected_by, self.rejection_detail = by, detail

    def as_row(self) -> dict[str, Any]:
        """A flat record for a table: the task is replaced by its key, search results stay a list."""
        row = asdict(self)
        row.pop("task")
        row["task_key"] = self.task_key
        return row
