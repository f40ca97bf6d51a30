"""Live refresh settings from the environment (README, Configuration). Off by default."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..environment import env_int
from ..errors import ConfigError

# Our default topics for MiroEval-style generation: 12 topics x 3 subtopics, as in the paper's design.
DEFAULT_TOPICS: dict[str, list[str]] = {
    "technology": ["semiconductors", "artificial intelligence regulation", "quantum computing"],
    "energy": ["grid storage", "offshore wind", "hydrogen"],
    "health": ["vaccines", "drug pricing", "hospital capacity"],
    "finance": ["central banks", "bank failures", "crypto regulation"],
    "climate": ["heatwaves", "carbon markets", "glacier loss"],
    "transport": ["electric vehicles", "high-speed rail", "aviation fuel"],
    "science": ["space missions", "gene editing", "particle physics"],
    "politics": ["elections", "trade agreements", "sanctions"],
    "education": ["school funding", "university admissions", "student debt"],
    "agriculture": ["crop yields", "fertiliser prices", "water rights"],
    "business": ["mergers", "supply chains", "labour strikes"],
    "culture": ["film industry", "museum restitution", "streaming music"],
}


@dataclass(frozen=True)
class LiveConfig:
    enabled: bool = False  # DREVAL_LIVE_REFRESH=1 starts the refresh schedules
    wlc_api: str = "https://en.wikipedia.org/w/api.php"
    wlc_limit: int = 50
    # Wiki Live contamination window: articles created in (after, before]. Unset: after = the last
    # refresh's window end (first refresh: before - wlc_window_days), before = now.
    wlc_created_after: str | None = None
    wlc_created_before: str | None = None
    wlc_window_days: int = 90
    wlc_gold_chunk_chars: int = 12_000  # article characters per gold_statements call
    news_url: str | None = None
    news_key_param: str = "apiKey"
    news_key: str = field(default="", repr=False)
    search_url: str | None = None
    topics: dict[str, list[str]] = field(default_factory=lambda: dict(DEFAULT_TOPICS))
    # the paper's scale: 36 subtopics x 5 headlines x 1 query = 180 candidates, then 50 kept, 35 chosen
    headlines_per_subtopic: int = 5
    queries_per_headline: int = 1
    keep: int = 50
    choose: int = 35

    @classmethod
    def from_env(cls) -> "LiveConfig":
        env = os.environ
        return cls(
            enabled=env.get("DREVAL_LIVE_REFRESH", "") in ("1", "true", "yes"),
            wlc_api=env.get("DREVAL_WLC_API") or cls.wlc_api,
            wlc_limit=env_int("DREVAL_WLC_LIMIT", 50, minimum=1),
            wlc_created_after=env.get("DREVAL_WLC_CREATED_AFTER") or None,
            wlc_created_before=env.get("DREVAL_WLC_CREATED_BEFORE") or None,
            wlc_window_days=env_int("DREVAL_WLC_WINDOW_DAYS", 90, minimum=1),
            wlc_gold_chunk_chars=env_int("DREVAL_WLC_GOLD_CHUNK_CHARS", 12_000, minimum=1000),
            news_url=env.get("DREVAL_NEWS_URL") or None,
            news_key_param=env.get("DREVAL_NEWS_KEY_PARAM") or "apiKey",
            news_key=env.get("DREVAL_NEWS_API_KEY", ""),
            search_url=env.get("DREVAL_SEARCH_URL") or None,
            topics=load_topics(env.get("DREVAL_LIVE_TOPICS")),
            headlines_per_subtopic=env_int("DREVAL_LIVE_HEADLINES", 5, minimum=1),
            queries_per_headline=env_int("DREVAL_LIVE_QUERIES", 1, minimum=1),
            keep=env_int("DREVAL_LIVE_KEEP", 50, minimum=1),
            choose=env_int("DREVAL_LIVE_CHOOSE", 35, minimum=1),
        )


def load_topics(path: str | None) -> dict[str, list[str]]:
    """DREVAL_LIVE_TOPICS: a JSON file {topic: [subtopic, ...]}; our 12 x 3 default otherwise."""
    if not path:
        return dict(DEFAULT_TOPICS)
    try:
        topics = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"DREVAL_LIVE_TOPICS={path}: {exc}") from exc
    if not isinstance(topics, dict) or not all(isinstance(v, list) and v for v in topics.values()):
        raise ConfigError(f"DREVAL_LIVE_TOPICS={path}: expected a JSON object of topic -> [subtopic, ...]")
    return {str(k): [str(s) for s in v] for k, v in topics.items()}
