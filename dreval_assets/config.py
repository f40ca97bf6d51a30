"""Settings from the environment (see README, Configuration)."""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .benchmarks.policies import all_policies, check_policies, policy_value
from .benchmarks.suites import scoring_version, suites_for
from .environment import (DEFAULT_MAX_FIGURES_PER_REPORT, DEFAULT_MAX_IMAGE_PIXELS, env_int, max_figures_per_report,
                          max_image_pixels, report_max_bytes)
from .errors import ConfigError

JUDGES = ("heuristic", "openai")
# Which settings shape which asset's rows: a change makes those partitions due again.
SHAPING_SETTINGS = {
    "parsed_reports": ("extraction", "release_statements"),
    "task_rubrics": ("judge",),
    "claim_verdicts": ("judge", "evidence_search"),
    "report_judgments": ("judge", "suites", "policies", "limits"),
    "metric_scores": ("judge", "suites", "policies", "scoring"),
}
FETCHERS = ("sandbox", "live")
EVIDENCE_SEARCHES = ("sandbox", "web")  # where an undecided statement's evidence is looked for (fetch/search.py)




@dataclass(frozen=True)
class Settings:
    home: Path
    judge: str = "heuristic"
    fetch: str = "sandbox"
    judge_batch_size: int = 8  # claims citing one source verified per judge call (1 = per claim)
    refetch_failed: bool = False  # set by `dreval run --refetch-failed`, not by the environment
    extra_suites: tuple[str, ...] = ()  # suites applied to every task besides its own benchmark's
    policies: str = "{}"  # JSON: metric policy overrides, e.g. {"wlc.ref_acc.denominator": "all"}
    judge_model: str = ""  # DREVAL_JUDGE_MODEL: with an LLM judge, which model judges (part of what a row means)
    judge_vision_model: str = ""  # DREVAL_JUDGE_VISION_MODEL: the model for requests with images ('' = judge_model)
    judge_embedding_model: str = ""  # DREVAL_JUDGE_EMBEDDING_MODEL: the endpoint's embedding model ('' = none)
    evidence_search: str = "sandbox"  # DREVAL_EVIDENCE_SEARCH: sandbox (offline) | web (DREVAL_SEARCH_URL)
    search_url: str = ""  # DREVAL_SEARCH_URL: a SearXNG-compatible JSON search endpoint
    search_max_queries: int = 2  # DREVAL_SEARCH_MAX_QUERIES: web searches per statement
    search_max_pages: int = 3  # DREVAL_SEARCH_MAX_PAGES: pages read per statement
    # why the environment's judge is not the one the home was scored with ('' when it is): judging
    # commands refuse it (`check_judge_is_the_homes`), reading ones do not care
    judge_conflict: str = ""

    @classmethod
    def from_env(cls, home: str | Path | None = None) -> "Settings":
        """The environment's settings for the home (`--home`, else DREVAL_HOME, else the nearest
        `.dreval`: home.find_home), the judge being the home's unless the environment names one."""
        from .home import find_home, resolve_judge

        path = find_home(home).path
        judge = resolve_judge(path)
        settings = cls(
            home=path,
            judge=judge.choice.kind,
            fetch=os.environ.get("DREVAL_FETCH", "sandbox"),
            judge_batch_size=env_int("DREVAL_JUDGE_BATCH_SIZE", 8, minimum=1),
            extra_suites=tuple(s.strip() for s in os.environ.get("DREVAL_SUITES", "").split(",") if s.strip()),
            policies=os.environ.get("DREVAL_POLICIES", "") or "{}",
            judge_model=judge.choice.model,
            judge_vision_model=judge.choice.vision_model,
            judge_embedding_model=judge.choice.embedding_model,
            evidence_search=os.environ.get("DREVAL_EVIDENCE_SEARCH", "") or "sandbox",
            search_url=os.environ.get("DREVAL_SEARCH_URL", ""),
            search_max_queries=env_int("DREVAL_SEARCH_MAX_QUERIES", 2, minimum=1),
            search_max_pages=env_int("DREVAL_SEARCH_MAX_PAGES", 3, minimum=1),
            judge_conflict=judge.conflict,
        )
        settings.validate()
        return settings

    def check_judge_is_the_homes(self) -> None:
        """Before anything is judged: refuse, in one line saying how to switch, an environment naming
        another judge than the one the home was scored with (its scores would be replaced)."""
        if self.judge_conflict:
            raise ConfigError(self.judge_conflict)

    def policy_map(self) -> dict[str, str]:
        try:
            value = json.loads(self.policies)
        except ValueError as exc:
            raise ConfigError(f"DREVAL_POLICIES is not JSON: {exc}") from exc
        if not isinstance(value, dict):
            raise ConfigError('DREVAL_POLICIES must be a JSON object, e.g. {"dr3.fa.unknown": "exclude"}')
        overrides = {str(k): str(v) for k, v in value.items()}
        try:
            check_policies(overrides)
        except ValueError as exc:
            raise ConfigError(f"DREVAL_POLICIES: {exc}") from exc
        return overrides

    def extraction(self) -> str:
        """How claims are made: `llm` statements or the parser's `sentences` (policy `claims.extraction`,
        `auto` by the judge). The offline judge extracts no statements: asking it to is refused."""
        chosen = policy_value(self.policy_map(), "claims.extraction")
        if chosen == "auto":
            return "sentences" if self.judge == "heuristic" else "llm"
        if chosen == "llm" and self.judge == "heuristic":
            raise ConfigError("claims.extraction=llm needs an LLM judge (DREVAL_JUDGE=openai); the offline judge "
                              "keeps the parser's sentences (claims.extraction=sentences or auto)")
        return chosen

    def validate(self) -> None:
        if self.judge not in JUDGES:
            raise ConfigError(f"DREVAL_JUDGE={self.judge!r}: choose one of {', '.join(JUDGES)}")
        if self.fetch not in FETCHERS:
            raise ConfigError(f"DREVAL_FETCH={self.fetch!r}: choose one of {', '.join(FETCHERS)}")
        if self.evidence_search not in EVIDENCE_SEARCHES:
            raise ConfigError(f"DREVAL_EVIDENCE_SEARCH={self.evidence_search!r}: choose one of "
                              f"{', '.join(EVIDENCE_SEARCHES)}")
        if self.evidence_search == "web" and not self.search_url:
            raise ConfigError("DREVAL_EVIDENCE_SEARCH=web needs DREVAL_SEARCH_URL (a SearXNG-compatible JSON endpoint)")
        if self.evidence_search == "web" and self.fetch != "live":
            raise ConfigError("DREVAL_EVIDENCE_SEARCH=web reads the pages it finds on the live web: set DREVAL_FETCH=live")
        self.extraction()  # also checks DREVAL_POLICIES
        report_max_bytes()  # a malformed limit fails here, before any run
        max_image_pixels()
        max_figures_per_report()
        suites_for("generic", self.extra_suites)  # unknown suite names fail here, before any run

    def shaping_values(self, asset: str) -> dict[str, object] | None:
        """The settings that shape `asset`'s rows, by name (None: no setting does); a setting at its
        offline default is left out, so existing rows stay current when it is introduced."""
        names = SHAPING_SETTINGS.get(asset)
        if names is None:
            return None
        values = {
            "judge": lambda: self.judge if self.judge == "heuristic" else f"{self.judge}:{self.judge_model}" + (
                f"+vision:{self.judge_vision_model}" if self.judge_vision_model else "") + (
                f"+embeddings:{self.judge_embedding_model}" if self.judge_embedding_model else ""),
            "suites": lambda: sorted(set(self.extra_suites)),
            "policies": lambda: dict(sorted(self.policy_map().items())),
            "scoring": scoring_version,
            # None (left out of the hash) for the offline default, so existing verdicts stay current
            "evidence_search": lambda: (None if self.evidence_search == "sandbox" else
                                        [self.evidence_search, self.search_url, self.search_max_queries,
                                         self.search_max_pages]),
            # a policy choosing between a release's own statements and ours, when overridden (None: defaults)
            "release_statements": lambda: ({n: v for n, v in sorted(self.policy_map().items())
                                            if "release" in (all_policies()[n].allowed or ())} or None),
            # the image and figure caps, when changed (None: the defaults, so existing rows stay current)
            "limits": lambda: ({"max_image_pixels": max_image_pixels(), "max_figures": max_figures_per_report()}
                               if (max_image_pixels(), max_figures_per_report())
                               != (DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_FIGURES_PER_REPORT) else None),
            "extraction": lambda: (self.extraction() if self.extraction() == "sentences"
                                   else f"llm:{self.judge}:{self.judge_model}"),
        }
        return {n: v for n in names if (v := values[n]()) is not None}

    def shaping_version(self, asset: str) -> str | None:
        """A short hash of the settings that shape `asset`'s rows (None: no setting does). Stored with
        each materialised partition and used as the asset's code version, so a change of judge, model,
        suites or policies (or, for metric_scores, of the scoring code) makes the affected partitions
        due, and Dagster shows them stale. Which setting changed, and whether it shapes a partition's
        benchmark at all (a policy is its benchmark's), the planner reads from `shaping_settings`."""
        values = self.shaping_values(asset)
        return None if values is None else shaping_hash(values)

    @property
    def db_path(self) -> Path:
        return self.home / "dreval.duckdb"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"



def shaping_hash(values: dict[str, object]) -> str:
    return "settings-" + hashlib.sha256(json.dumps(values, sort_keys=True).encode()).hexdigest()[:12]


# Settings whose values are policies by name: a change of one shapes only the partitions of the
# benchmarks that declare it (benchmarks/policies.policies_shaping).
POLICY_SETTINGS = ("policies", "release_statements")
