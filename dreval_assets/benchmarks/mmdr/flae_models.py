"""What the judge answers to FLAE's separate prompts (policy `mmdr.flae.protocol=separate`): the
judge channel, the task-adaptive weights and alpha, each its own call as in the paper. The single
call answers `core.models.FlaeScores`, which holds all three."""
from __future__ import annotations

from pydantic import BaseModel, Field


class FlaeJudgeScores(BaseModel):
    """The judge channel: READ, INSH, STRU in [0, 1]."""

    read: float = Field(ge=0, le=1)
    insh: float = Field(ge=0, le=1)
    stru: float = Field(ge=0, le=1)


class FlaeWeights(BaseModel):
    """Task-adaptive weights over READ, INSH, STRU (non-negative; FLAE normalises them)."""

    weight_read: float = Field(ge=0)
    weight_insh: float = Field(ge=0)
    weight_stru: float = Field(ge=0)
    rationale: str = ""


class FlaeAlpha(BaseModel):
    """The judge-set fusion weight of the formula channel; None: the judge set none (alpha_det stands)."""

    alpha: float | None = Field(default=None, ge=0, le=1)
    reason: str = ""
