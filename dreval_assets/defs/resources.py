"""Resources: settings, and the IO manager that writes partitions into DuckDB."""
from __future__ import annotations

from pathlib import Path

from dagster import (ConfigurableIOManager, ConfigurableResource, DagsterInvariantViolationError, InputContext,
                     MultiPartitionsDefinition, OutputContext)

from ..config import Settings
from ..fetch.base import Fetcher
from ..fetch.api import JsonApi
from ..fetch.factory import make_fetcher
from ..fetch.live import LiveFetchConfig, LiveFetcher
from ..fetch.safety import AllowList
from ..fetch.images import RemoteImages
from ..fetch.search import EvidenceSearch, make_search
from ..judges.base import Judge
from ..judges.factory import make_judge, make_writer
from ..store.db import Store
from ..store.images import RemoteImageStore
from ..store.search_cache import StoredSearchCache
from ..store.tables import ASSET_STORAGE
from .partitions import split_system_task


class DrevalResource(ConfigurableResource):
    """Where the home is, and which judge and fetcher to use."""

    home: str
    judge_kind: str = "heuristic"
    fetch_kind: str = "sandbox"
    judge_batch_size: int = 8
    refetch_failed: bool = False
    extra_suites: list[str] = []
    policies: str = "{}"
    evidence_search: str = "sandbox"  # sandbox | web (fetch/search.py)
    search_url: str = ""
    search_max_queries: int = 2
    search_max_pages: int = 3

    def policy_map(self) -> dict[str, str]:
        return Settings(Path(self.home), policies=self.policies).policy_map()

    def extraction(self) -> str:
        """`llm` or `sentences`: how this run makes claims (policy claims.extraction, by the judge)."""
        return Settings(Path(self.home), judge=self.judge_kind, policies=self.policies).extraction()

    def store(self) -> Store:
        return Store(Settings(Path(self.home)).db_path)

    def judge(self) -> Judge:
        return make_judge(self.judge_kind, self.store(), Path(self.home))

    def writer(self, entry) -> Judge:
        """The client an endpoint system writes its reports with (cached and ledgered like the judge)."""
        return make_writer(entry, self.store(), Path(self.home))

    def fetcher(self) -> Fetcher:
        return make_fetcher(self.fetch_kind, self.store(), self.refetch_failed)

    def remote_images(self) -> RemoteImages:
        """Report figures on the web: the pages' safety and limits, once per URL; offline, stored ones only."""
        live = LiveFetcher(LiveFetchConfig.from_env()) if self.fetch_kind == "live" else None
        return RemoteImages(RemoteImageStore(self.store()), live, self.refetch_failed)

    def searcher(self) -> EvidenceSearch:
        """Where a statement no citation decided is checked: the task's sandbox, or the web search."""
        if self.evidence_search == "sandbox":
            return make_search("sandbox")
        # the search endpoint is the user's (maybe a SearXNG on 127.0.0.1); the pages it finds are not
        api = JsonApi(LiveFetcher(LiveFetchConfig.from_env(), allow=AllowList.for_endpoints(self.search_url)))
        return make_search("web", self.search_url, self.search_max_queries, self.search_max_pages,
                           fetcher=self.fetcher(), api=api, cache=StoredSearchCache(self.store()))


class PartitionedDuckDBIOManager(ConfigurableIOManager):
    """Replaces exactly the materialised partitions' rows, in one transaction, by column name."""

    home: str
    settings_versions: dict[str, str] = {}  # asset -> hash of the settings that shape its rows

    def _store(self) -> Store:
        return Store(Settings(Path(self.home)).db_path)

    def handle_output(self, context: OutputContext, obj) -> None:
        asset = context.asset_key.path[-1]
        storage = ASSET_STORAGE[asset]
        frames = obj if isinstance(obj, dict) else {storage.tables[0]: obj}
        keys = _partition_tuples(context) if storage.key_columns else []
        written = self._store().replace_partitions(asset, keys, frames, context.run_id,
                                                   self.settings_versions.get(asset))
        RUN_READS.forget(context.run_id, asset)
        # the whole write's counts; a partitioned asset's body replaces them with each partition's own
        # (defs/metadata.record_partitions), and its run totals say how many partitions were written
        context.add_output_metadata({f"rows_{table}": n for table, n in written.items()})

    def load_input(self, context: InputContext):
        asset = context.asset_key.path[-1]
        storage = ASSET_STORAGE[asset]
        keys = _partition_tuples(context) if storage.key_columns else []
        run_id = _input_run_id(context)
        frames = RUN_READS.get(run_id, asset, keys)
        if frames is None:
            frames = self._store().read_partitions(asset, keys)
            RUN_READS.keep(run_id, asset, keys, frames)
        return dict(frames) if len(storage.tables) > 1 else frames[storage.tables[0]]


class RunReads:
    """Frames read in the current run, served again to the run's later steps: `tasks` is an input of
    six assets, `parsed_reports` of four. Only the newest run's reads are kept, an asset's are dropped
    when the run writes it, and nothing past `max_bytes`. Polars frames are immutable, so sharing
    them is safe; a multi-table asset's dict is copied on the way out."""

    def __init__(self, max_bytes: int = 128 * 2**20) -> None:
        self.max_bytes = max_bytes
        self.run_id: str | None = None
        self.frames: dict[tuple[str, tuple], dict] = {}
        self.size = 0

    def get(self, run_id: str | None, asset: str, keys: list[tuple[str, ...]]) -> dict | None:
        return self.frames.get((asset, tuple(keys))) if run_id and run_id == self.run_id else None

    def keep(self, run_id: str | None, asset: str, keys: list[tuple[str, ...]], frames: dict) -> None:
        if run_id is None:
            return
        if run_id != self.run_id:
            self.run_id, self.frames, self.size = run_id, {}, 0
        size = sum(frame.estimated_size() for frame in frames.values())
        if self.size + size <= self.max_bytes:
            self.frames[(asset, tuple(keys))] = frames
            self.size += size

    def forget(self, run_id: str, asset: str) -> None:
        if run_id == self.run_id:
            for key in [key for key in self.frames if key[0] == asset]:
                self.size -= sum(frame.estimated_size() for frame in self.frames.pop(key).values())

    def clear(self) -> None:
        self.run_id, self.frames, self.size = None, {}, 0


RUN_READS = RunReads()


def _input_run_id(context: InputContext) -> str | None:
    try:
        return context.step_context.run_id
    except DagsterInvariantViolationError:  # an input loaded outside a run (build_input_context)
        return None


def _partition_tuples(context: OutputContext | InputContext) -> list[tuple[str, ...]]:
    if not context.has_asset_partitions:
        raise ValueError(f"{context.asset_key.to_user_string()} is partitioned but the run has no partition")
    keys = context.asset_partition_keys
    if isinstance(context.asset_partitions_def, MultiPartitionsDefinition):
        return [split_system_task(_as_multi(context, k)) for k in keys]
    return [(k,) for k in keys]


def _as_multi(context, key):
    return context.asset_partitions_def.get_partition_key_from_str(key) if isinstance(key, str) else key

