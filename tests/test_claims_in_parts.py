"""The claims of a run judged in parts, as the parse hands its reports on: the references fetched part by
part and the verdicts judged part by part make the frames the whole run makes at once, row for row,
whatever order the parts come in (the unreadable pages, the citations without a URL and the evidence
search beyond the citations included)."""
import polars as pl

from dreval_assets.core.models import SandboxPage
from dreval_assets.fetch.chain import ChainFetcher
from dreval_assets.judges.heuristic import HeuristicJudge
from dreval_assets.stages.fetch import fetch_outcomes, fetch_references, fetched_frames_of
from dreval_assets.stages.frames import frame
from dreval_assets.stages.verdicts import ClaimsPart, judge_claims, judge_claims_of

TASKS = ("miroeval.ferry", "wlc.tram")
PAGES = {
    "miroeval.ferry": [SandboxPage(url="https://ferry.example/2023", title="Ferry figures", role="supportive",
                                   text="The Lowmarsh ferry carried 41,200 passengers in 2023, up from 36,900."),
                       SandboxPage(url="https://ferry.example/boats", title="Boats", role="noise",
                                   text="Estuary Links added a third vessel named Curlew in March 2023.")],
    "wlc.tram": [SandboxPage(url="https://tram.example/depot", title="Depot", role="supportive",
                             text="Saltcote's tram depot opened in 1911 with twelve cars.")],
}


def claim(system, task, cid, text, urls=(), unresolved=()):
    return {"system": system, "task": task, "claim_id": cid, "kind": "sentence" if urls or unresolved else "uncited",
            "text": text, "section": "", "citation_indices": list(range(1, len(urls) + 1)), "urls": list(urls),
            "unresolved_indices": list(unresolved), "source_claim": cid, "extraction": "llm"}


def the_claims() -> pl.DataFrame:
    rows = []
    for system in ("alpha", "beta", "gamma"):
        rows += [claim(system, "miroeval.ferry", "c0001", "The Lowmarsh ferry carried 41,200 passengers in 2023.",
                       ["https://ferry.example/2023"]),
                 claim(system, "miroeval.ferry", "c0002", "A third vessel, Curlew, joined in March 2023.",
                       ["https://ferry.example/boats", "https://gone.example/page"], unresolved=[7]),
                 claim(system, "miroeval.ferry", "c0003", "Crossings take fourteen minutes."),
                 claim(system, "wlc.tram", "c0001", "The tram depot opened in 1911.", ["https://tram.example/depot"]),
                 claim(system, "wlc.tram", "c0002", "It had twelve cars.", ["https://tram.example/depot"])]
    return frame("report_claims", rows)


KEYS = [(system, task) for system in ("alpha", "beta", "gamma") for task in TASKS]


def test_references_fetched_in_parts_are_the_frames_of_one_fetch():
    claims, fetcher = the_claims(), ChainFetcher()
    at_once = fetch_references(claims, PAGES, fetcher, KEYS)
    outcomes = {}
    for keys in ([KEYS[3]], [KEYS[0], KEYS[5]], [KEYS[1], KEYS[2], KEYS[4]]):  # as the reports came
        part = claims.join(pl.DataFrame(keys, schema=["system", "task"], orient="row"), on=["system", "task"],
                           how="semi")
        outcomes.update(fetch_outcomes(part, PAGES, fetcher, keys))
    in_parts = fetched_frames_of(KEYS, outcomes)
    assert at_once["fetched_references"].height == 12 and at_once["page_texts"].height == 3
    for table in ("fetched_references", "page_texts"):
        assert in_parts[table].equals(at_once[table]), table
    unreadable = at_once["fetched_references"].filter(pl.col("status") != "ok")
    assert unreadable.height == 3 and unreadable.get_column("na_reason").is_not_null().all()


def test_claims_judged_in_parts_are_the_rows_of_one_judgment():
    claims, judge = the_claims(), HeuristicJudge()
    fetched = fetch_references(claims, PAGES, ChainFetcher(), KEYS)
    texts = {r["text_hash"]: r["text"] for r in fetched["page_texts"].iter_rows(named=True)}
    references = fetched["fetched_references"]
    evidence = {"miroeval.ferry": PAGES["miroeval.ferry"]}  # the evidence search beyond the citations
    at_once = judge_claims(claims, references, texts, judge, batch_size=4, labels={"asset": "claim_verdicts"},
                           sandbox_evidence=evidence)

    def part(*systems):
        chosen = pl.col("system").is_in(list(systems))
        return ClaimsPart(claims.filter(chosen), references.filter(chosen), texts)

    in_parts = judge_claims_of(iter([part("gamma"), part("alpha", "beta")]), lambda: claims, judge, batch_size=4,
                               labels={"asset": "claim_verdicts"}, sandbox_evidence=evidence)
    assert in_parts.equals(at_once)
    assert set(at_once.get_column("origin").to_list()) == {"cited", "sandbox"}
    said = at_once.filter(pl.col("na_reason").is_not_null()).select("source", "na_reason").unique().sort("source")
    assert said.to_dicts() == [{"source": "[7]", "na_reason": "model_failure"},
                               {"source": "https://gone.example/page", "na_reason": "data_accessibility"}]
