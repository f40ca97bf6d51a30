"""The offline judge, keeping every request it was given: tests read what a prompt was shown."""
from __future__ import annotations

from dreval_assets.judges.heuristic import HeuristicJudge


class RecordingJudge(HeuristicJudge):
    def __init__(self):
        super().__init__()
        self.requests = []

    def judge_many(self, requests):
        self.requests += requests
        return super().judge_many(requests)
