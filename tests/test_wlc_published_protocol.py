"""Wiki Live as published, end to end on a release in the published shape, with an OpenAI-compatible
judge whose prompts are captured: writing is one call per category with the release's criteria
texts and the topic, the Wikipedia article first, no citation marker or reference list on either
side; Ref. Acc. is computed offline from the release's `citation_contents`."""
import json
import re
from pathlib import Path

import pytest

from dreval_assets.cli import main
from dreval_assets.store.db import Store
from loopback_llm import message_text

RELEASE = Path(__file__).parent / "fixtures" / "releases" / "wlc-published"
CRITERIA = json.loads((RELEASE / "evaluation/data/wiki_writing_criteria.json").read_text())
TASK, SYSTEM = "wlc.2025-12-1", "web-agent"
MARKER = re.compile(r"\[\d+\]|\\\[\d+\\\]|［\d+］|【\d+】")


def release_texts(category_id: str) -> list[str]:
    category = next(c for c in CRITERIA["categories"] if c["id"] == category_id)
    groups = [s["criteria"] for s in category.get("subcategories", [])] + [category.get("criteria", [])]
    return [c["text"] for group in groups for c in group]


def prompts_of(llm, opening: str) -> list[str]:
    found = []
    for request in llm.requests:
        for message in request.get("messages", []):
            text = message_text(message.get("content"))
            if opening in text:
                found.append(text)
    return found


@pytest.fixture(scope="module")
def run():
    from loopback_llm import LoopbackLLM
    from judge_answers import dreval_answer

    with pytest.MonkeyPatch.context() as env, LoopbackLLM(answer=dreval_answer) as llm:
        import tempfile
        home = Path(tempfile.mkdtemp()) / "home"
        env.setenv("DREVAL_JUDGE", "openai")
        env.setenv("DREVAL_JUDGE_MODEL", "loopback-model")
        env.setenv("OPENAI_BASE_URL", llm.base_url)
        env.setenv("OPENAI_API_KEY", "k")
        assert main(["--home", str(home), "import", "wlc", str(RELEASE)]) == 0
        assert main(["--home", str(home), "run", "--system", SYSTEM]) == 0
        yield llm, Store(home / "dreval.duckdb")


def test_writing_is_three_calls_with_the_release_criteria_the_topic_and_clean_articles(run):
    llm, _ = run
    writing = prompts_of(llm, "You compare two encyclopedia articles")
    assert len(writing) == 3  # one call per category, the Wikipedia article first, never both orders
    for prompt in writing:
        assert "Topic: Kestrel Bay Lighthouse" in prompt and "Ties are not allowed" in prompt
        a = prompt.split("<<<ARTICLE A\n", 1)[1].split("\nARTICLE A>>>", 1)[0]
        b = prompt.split("<<<ARTICLE B\n", 1)[1].split("\nARTICLE B>>>", 1)[0]
        assert "Gannet Point survey" not in a and "first lit in 1871 and automated in 1989." in a  # Wikipedia
        assert "36 metres" in b and "该灯塔于1871年首次点亮。" in b  # the generated article
        for side in (a, b):
            assert not MARKER.search(side), side
            assert "References" not in side and "https://" not in side
    by_category = {}
    for prompt in writing:
        category = prompt.split("Category: ", 1)[1].split("\n", 1)[0]
        by_category[category] = prompt.split("<<<ARTICLE A", 1)[0]
    for ours, theirs in (("well written", "well_written"), ("broad", "broad_coverage"), ("neutral", "neutral")):
        assert all(text in by_category[ours] for text in release_texts(theirs)), ours
    assert "no puffery or promotional language" not in "".join(by_category.values())  # our paraphrase is not shown


def test_writing_rows_say_protocol_and_criteria_source(run):
    _, store = run
    row = store.query(f"SELECT value, policy FROM metric_scores WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                      "AND metric = 'writing'").row(0, named=True)
    assert row["value"] is not None
    assert "position bias: published" in row["policy"]
    assert "the release's (evaluation/data/wiki_writing_criteria.json)" in row["policy"]


def test_ref_acc_has_a_value_offline_from_the_release_pages(run):
    _, store = run
    fetched = store.query(f"SELECT url, status, backend, blocked FROM fetched_references WHERE system = '{SYSTEM}'")
    by_url = {r["url"]: r for r in fetched.iter_rows(named=True)}
    assert by_url["https://harbour.example.org/gannet-point"]["status"] == "ok"
    assert by_url["https://harbour.example.org/gannet-point"]["backend"] == "release"
    wall = by_url["https://lights.example.gov/automation"]
    assert wall["status"] == "ok" and wall["blocked"] == "bot_wall"  # 209 characters: judged, as published
    assert by_url["https://archive.example.net/penrose"]["status"] == "unknown"  # 29 characters: not judged
    m = {r["metric"]: r for r in store.query(f"SELECT metric, value, na_reason, detail FROM metric_scores "
                                             f"WHERE system = '{SYSTEM}' AND task = '{TASK}'").iter_rows(named=True)}
    assert m["ref_acc"]["value"] is not None and "sources judged" in m["ref_acc"]["detail"]
    # the automation page is a bot wall: judged as published, and the row says so
    assert "bot walls among the sources: 1 (1 bot_wall), judged as published" in m["ref_acc"]["detail"]


def test_leakage_counts_the_task_s_own_article_only(run):
    _, store = run
    leakage = store.query(f"SELECT value, detail, n_items FROM metric_scores WHERE system = '{SYSTEM}' "
                          f"AND task = '{TASK}' AND metric = 'leakage'").row(0, named=True)
    # the release's statements: two cite [4], the task's own article (one by the index alone, its URL from
    # citation_urls), one [5], another Wikipedia article: a legitimate source
    assert leakage["detail"].startswith("2 of 8 ") and "1 cite other Wikipedia articles" in leakage["detail"]
    assert leakage["value"] == pytest.approx(100 * 2 / leakage["n_items"])


def test_every_gold_fact_gets_min_10_n_candidate_statements(run):
    llm, store = run
    prompts = prompts_of(llm, "You check whether an encyclopedia article written by a research system")
    n = int(store.query(f"SELECT score FROM report_judgments WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                        "AND item_id = 'wlc.gold_statements.count'").item())
    related = [line for p in prompts for line in p.split("\n") if line.startswith("  related statements:")]
    assert n >= 1 and len(related) == 12  # every gold statement with text, each with its candidates
    assert all(len(line.split(":", 1)[1].split(",")) == min(10, n) for line in related)


def test_wiki_conf_judges_each_statement_against_its_own_top_gold_facts(run):
    llm, store = run
    prompts = prompts_of(llm, "You check statements from an encyclopedia article")
    n = int(store.query(f"SELECT score FROM report_judgments WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                        "AND item_id = 'wlc.gold_statements.count'").item())
    related = [line for p in prompts for line in p.split("\n") if line.startswith("  related facts:")]
    assert len(related) == n and all(len(line.split(":", 1)[1].split(",")) == min(10, 12) for line in related)
    rows = store.query(f"SELECT item_id, score FROM report_judgments WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                       "AND kind = 'statement_conflict'")
    assert rows.height == n and rows["score"].null_count() == 0
    m = {r["metric"]: r for r in store.query(f"SELECT metric, value, n_items, detail, policy FROM metric_scores "
                                             f"WHERE system = '{SYSTEM}' AND task = '{TASK}'").iter_rows(named=True)}
    assert m["wiki_conf"]["n_items"] == n and "gen_conflict_with_wiki" in m["wiki_conf"]["policy"]
    assert m["wiki_conf"]["value"] == pytest.approx(100 * rows["score"].sum() / n)
    assert "retriever: bm25" in m["cov_wiki"]["detail"] and "by bm25" in m["cov_wiki"]["policy"]


def test_the_release_statements_are_the_claims_judged_by_default(run):
    llm, store = run
    claims = store.query(f"SELECT claim_id, text, urls, extraction FROM report_claims WHERE system = '{SYSTEM}' "
                         f"AND task = '{TASK}' ORDER BY claim_id")
    assert claims.height == 8 and set(claims["extraction"]) == {"release"}
    assert claims["text"][0] == "The Kestrel Bay Lighthouse stands on Gannet Point at the mouth of Kestrel Bay."
    # the judge reads the release's facts against their pages: the wall page's statement among them
    verdict_prompts = "".join(json.dumps(r) for r in llm.requests if "harbour" in json.dumps(r) or "automation"
                              in json.dumps(r))
    assert "The lighthouse was automated in 1989." in verdict_prompts
    row = store.query(f"SELECT policy FROM metric_scores WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                      "AND metric = 'ref_acc'").item()
    assert "claims: the release's 8 statements (wlc.statements = release)" in row  # the row names the statement set


def test_embeddings_and_dropped_bot_walls_end_to_end_through_dreval_run(tmp_path, monkeypatch):
    """The embedding retriever (DREVAL_JUDGE_EMBEDDING_MODEL) and policy wlc.bot_walls=drop through
    `dreval run`: vectors asked through /v1/embeddings and ledgered, the retriever named on Cov. Wiki,
    the wall page unread on Ref. Acc.; a second run asks nothing."""
    from loopback_llm import LoopbackLLM
    from judge_answers import dreval_answer

    with LoopbackLLM(answer=dreval_answer) as llm:
        home = str(tmp_path / "home")
        for name, value in {"DREVAL_JUDGE": "openai", "DREVAL_JUDGE_MODEL": "loopback-model",
                            "OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "k",
                            "DREVAL_JUDGE_EMBEDDING_MODEL": "loopback-embed",
                            "DREVAL_POLICIES": json.dumps({"wlc.bot_walls": "drop"})}.items():
            monkeypatch.setenv(name, value)
        assert main(["--home", home, "import", "wlc", str(RELEASE)]) == 0
        assert main(["--home", home, "run", "--system", SYSTEM]) == 0
        asked = len(llm.requests)
        assert main(["--home", home, "run", "--system", SYSTEM]) == 0
        assert len(llm.requests) <= asked + 1  # the CLI's preflight at most: every answer and vector cached
    store = Store(Path(home) / "dreval.duckdb")
    assert store.query("SELECT count(*) FROM judge_ledger WHERE template = 'embeddings' AND NOT cache_hit").item() > 0
    cov = store.query(f"SELECT value, detail, policy FROM metric_scores WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                      "AND metric = 'cov_wiki'").row(0, named=True)
    assert "embeddings (loopback-embed)" in cov["policy"] + cov["detail"] and "bm25" not in cov["policy"]
    ref = store.query(f"SELECT detail FROM metric_scores WHERE system = '{SYSTEM}' AND task = '{TASK}' "
                      "AND metric = 'ref_acc'").item()
    assert "dropped as unread (wlc.bot_walls=drop)" in ref
