"""Response models of the four live query generation templates (`persona_queries`,
`research_necessity`, `closed_book_answer`, `answer_adequacy`)."""
from __future__ import annotations

from pydantic import BaseModel, Field


class PersonaQuery(BaseModel):
    persona: str
    query: str


class PersonaQueries(BaseModel):
    queries: list[PersonaQuery] = Field(default_factory=list)


class Necessity(BaseModel):
    needs_external_sources: bool
    reason: str = ""


class ClosedBookAnswer(BaseModel):
    answer: str


class Adequacy(BaseModel):
    adequate: bool
    reason: str = ""
