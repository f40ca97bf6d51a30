"""Wiki Live Challenge release loader, on a miniature release in the official layout."""
from __future__ import annotations

import inspect
import json
import shutil

import pytest
from release_helpers import (
    RELEASES,
    layout_problems,
    load_reports,
    load_tasks,
    problems,
)

from dreval_assets.benchmarks.wlc import loader as load_wlc
from dreval_assets.releases.records import ImportLog, SystemInfo
from dreval_assets.core.report_parser import parse_report

ROOT = RELEASES / "wlc"
R1 = "data/2025-12/wiki_data"
T1 = "data/2025-12/test_data"


@pytest.fixture
def tasks():
    return load_tasks(load_wlc, ROOT)


@pytest.fixture
def reports():
    return load_reports(load_wlc, ROOT)


def test_layout_problem(tmp_path):
    assert layout_problems(load_wlc, ROOT, tmp_path) == (
        None, "no data/<release>/wiki_data/ga_100.json: not a Wiki Live Challenge release",
        f"{tmp_path / 'absent'} is not a folder")


def test_tasks_get_release_qualified_keys_and_keep_their_ids(tasks):
    by_key, _ = tasks
    assert [(k, t.original_id) for k, t in by_key.items()] == [
        ("wlc.2025-12-1", "1"), ("wlc.2025-12-2", "2"), ("wlc.2025-12-3", "3"), ("wlc.2025-12-8", "8"),
        ("wlc.2026-02-1", "1"), ("wlc.2026-02-2", "2")]  # id 1 in both releases, two tasks


def test_task_fields_come_from_json_csv_article_and_statements(tasks):
    task = tasks[0]["wlc.2025-12-1"]
    record = json.loads((ROOT / R1 / "ga_100.json").read_text().split("\n")[1].rstrip(","))
    assert task.query == record["question"] and task.benchmark == "wlc" and task.language == "en"
    assert task.domain == "Culture"
    criteria = json.loads(task.attributes.pop("writing_criteria"))  # the release's texts, paired with ours
    assert {c: len(t) for c, t in criteria.items()} == {"well_written": 21, "broad": 8, "neutral": 10}
    assert criteria["well_written"][10].startswith("No puffery: peacock terms")  # words to watch, first
    assert task.attributes == {
        "release": "2025-12", "title": "Harbor Lantern Festival",
        "url": "https://en.wikipedia.org/wiki/Harbor_Lantern_Festival", "created_ts": "2025-03-04T10:00:00Z",
        "bytes": "41230", "views_total": "5120", "ga_date": "2025-07-01", "ga_topic_keyword": "Festivals, lanterns"}
    assert task.reference_article == (ROOT / R1 / "cleaned_data/article/Harbor Lantern Festival.md").read_text()
    assert task.gold_facts == ["The Harbor Lantern Festival is held every autumn in Kestrel Bay.",
                               "The festival was first held in 1987."]
    assert task.modality == "text" and not task.attachments and task.race_criteria is None


def test_raw_wiki_extract_replaces_a_missing_cleaned_article(tasks):
    by_key, log = tasks
    task = by_key["wlc.2025-12-2"]  # files saved as Mira_Valdés_(cyclist).*
    assert task.reference_article == "Mira Valdés is a retired road cyclist from the invented town of Porto Lume."
    assert task.gold_facts == ["Mira Valdés won the 2019 Coastal Tour.", "Valdés retired in 2024."]
    assert f"{R1}/raw_wiki/Mira_Valdés_(cyclist).json: reference article taken from raw_wiki (cleaned article missing)" \
        in problems(log.notes)
    assert f"{R1}/cleaned_data/statement/Mira_Valdés_(cyclist)_statements.json: 1 statement(s) without text left out" \
        in problems(log.notes)


def test_titles_with_slashes_find_their_files(tasks):
    task = tasks[0]["wlc.2025-12-8"]
    assert task.reference_article.startswith("# AC/DC Tribute Night")
    assert task.gold_facts == ["AC/DC Tribute Night raises money for the Marlow Flats library."]
    assert task.attributes["ga_topic_keyword"] == "Concerts\nand tributes"  # quoted multi-line CSV field


def test_task_with_article_but_no_statements_is_kept_and_the_gap_logged(tasks):
    by_key, log = tasks
    assert by_key["wlc.2025-12-3"].gold_facts == [] and by_key["wlc.2025-12-3"].reference_article
    assert problems(log.missing) == [
        f"{R1}/cleaned_data/statement/Blue Fern Bridge_statements.json: gold statements missing: fact coverage will be N/A",
        (f"{R1}/cleaned_data/article/Lost Article.md: reference article missing (no raw_wiki/Lost Article.json either): "
        "writing metrics will be N/A"),
        f"{R1}/cleaned_data/statement/Lost Article_statements.json: gold statements missing: fact coverage will be N/A",
        "data/2026-02/wiki_data/ga_100.csv: metadata file missing: tasks have no category, GA date or page views"]


def test_bad_task_records_are_skipped_with_file_record_and_reason(tasks):
    by_key, log = tasks
    assert problems(log.skipped) == [
        f"{R1}/ga_100.json:4: no reference article and no gold statements: nothing to compare with",
        f"{R1}/ga_100.json:5: duplicate task id '1' (first seen at {R1}/ga_100.json:1)",
        f"{R1}/ga_100.json:6: record has no title (reference and reports are named by title)",
        f"{R1}/ga_100.json:7: empty question",
        f"{R1}/ga_100.json:9: malformed JSON (Expecting property name enclosed in double quotes); rest of file skipped"]
    assert problems(log.notes, f"{R1}/ga_100") == [
        f"{R1}/ga_100.csv:4: row has no title: not matched to a task",
        f"{R1}/ga_100.json:3: unknown field(s) kept out: difficulty"]
    assert not any(t.attributes["title"] in {"Lost Article", "Second Harbor", "Copper Kettle Inn"} for t in by_key.values())


def test_a_repeated_title_is_skipped(tmp_path):
    wiki = tmp_path / "data/r1/wiki_data"
    (wiki / "cleaned_data/article").mkdir(parents=True)
    (wiki / "cleaned_data/article/Same.md").write_text("# Same\n\nText.\n")
    (wiki / "ga_100.json").write_text(json.dumps([{"id": "a", "title": "Same", "question": "q"},
                                                  {"id": "b", "title": "Same", "question": "q"}]))
    log = ImportLog()
    assert [t.key for t in load_wlc.iter_tasks(tmp_path, log)] == ["wlc.r1-a"]
    assert problems(log.skipped) == [("data/r1/wiki_data/ga_100.json:2: duplicate title 'Same' (first at record 1): "
                                     "its files and reports could not be told apart")]


def test_systems_come_from_agencies_of_every_test_data_folder():
    log = ImportLog()
    assert list(load_wlc.iter_systems(ROOT, log)) == [
        SystemInfo("gemini-dr", "Web research agent with citations", True, "Gemini Deep Research", True),
        SystemInfo("plain-writer", "", False, "Plain Writer", True),
        SystemInfo("old-bot", "Retired agent", True, "Old Bot", False),  # disabled, still listed
        SystemInfo("stray-system"),  # an output folder agencies.json does not name
        SystemInfo("ghost-agent", "Listed without outputs", False, "Ghost", True)]
    assert problems(log.notes) == [f"{T1}/agencies.json:2: unknown field(s) kept out: tier"]


def test_reports_resolve_titles_to_task_keys(reports):
    found, _ = reports
    assert [(r.system, r.task, r.task_id, r.where, r.path is not None) for r in found] == [
        ("gemini-dr", "wlc.2025-12-3", "3", f"{T1}/gemini-dr/md_data/Blue_Fern_Bridge.md", True),
        ("gemini-dr", "wlc.2025-12-1", "1", f"{T1}/gemini-dr/md_data/Harbor Lantern Festival.md", False),
        ("gemini-dr", "wlc.2025-12-2", "2", f"{T1}/gemini-dr/json_data/Mira_Valdés_(cyclist).json", False),
        ("plain-writer", "wlc.2025-12-3", "3", f"{T1}/plain-writer/md_data/Blue Fern Bridge.md", True),  # Latin-1
        ("plain-writer", "wlc.2025-12-1", "1", f"{T1}/plain-writer/md_data/Harbor Lantern Festival.md", True),
        ("stray-system", "wlc.2025-12-1", "1", f"{T1}/stray-system/md_data/Harbor Lantern Festival.md", True),
        ("gemini-dr", "wlc.2026-02-1", "1", "test_data/gemini-dr/md_data/Glass Owl Observatory.md", True)]
    keys = {t.key for t in load_wlc.iter_tasks(ROOT, ImportLog())}
    assert {r.task for r in found} <= keys
    file_report = found[0]
    assert file_report.text is None and file_report.base_dir == file_report.path.parent


def test_md_without_reference_list_gets_the_json_citation_urls(reports):
    found, log = reports
    report = found[1]
    md = ROOT / T1 / "gemini-dr/md_data/Harbor Lantern Festival.md"
    assert report.path is None and report.base_dir == md.parent
    assert report.text == md.read_text().rstrip() + ("\n\nReferences\n[1] https://kestrelbay.example.gov/history\n"
                                                     "[2] https://news.example.org/lanterns-crowd\n")
    assert [c.urls for c in parse_report(report.text).claims] == [["https://kestrelbay.example.gov/history"],
                                                                  ["https://news.example.org/lanterns-crowd"]]
    assert f"{T1}/gemini-dr/md_data/Harbor Lantern Festival.md: article has no reference list: added from " \
           "json_data citation_urls" in problems(log.notes)


def test_json_only_report_uses_its_extract_and_references(reports):
    report = reports[0][2]
    assert report.text == ("Mira Valdés won the Coastal Tour in 2019 [1].\n\nReferences\n"
                           "[1] https://cycling.example.com/coastal-2019\n")
    assert report.path is None and report.trace is None


def test_report_problems_are_logged_and_nothing_half_imported(reports):
    _, log = reports
    assert problems(log.skipped) == [
        f"{T1}/gemini-dr/md_data/AC_DC Tribute Night.md: empty report",
        f"{T1}/gemini-dr/md_data/Lost Article.md: no imported task has this title",
        f"{T1}/gemini-dr/md_data/Unknown Topic.md: no imported task has this title",
        ("test_data/gemini-dr/md_data/Blue Fern Bridge.md: title is in several releases: put test_data under "
        "data/<release>/ to say which")]
    assert problems(log.missing) == ["test_data/ghost-agent: no outputs for agency 'ghost-agent'"]
    assert problems(log.notes) == [
        f"{T1}/agencies.json: agency 'old-bot' is disabled: its reports are not imported",
        f"{T1}/stray-system: system folder not listed in agencies.json; imported",
        (f"{T1}/gemini-dr/md_data/Harbor Lantern Festival.md: article has no reference list: added from json_data "
        "citation_urls"),
        (f"{T1}/plain-writer/md_data/Blue Fern Bridge.md: not UTF-8 (invalid continuation byte at byte 25): "
         "decoded as cp1252 (detected)")]


def test_loaders_are_lazy(tmp_path):
    assert inspect.isgenerator(load_wlc.iter_tasks(tmp_path / "nowhere", ImportLog()))
    assert inspect.isgenerator(load_wlc.iter_reports(tmp_path / "nowhere", ImportLog()))
    assert inspect.isgenerator(load_wlc.iter_systems(tmp_path / "nowhere", ImportLog()))
    root = tmp_path / "wlc"
    shutil.copytree(ROOT, root)
    ga = root / R1 / "ga_100.json"
    first = ga.read_text().split("\n")[1].rstrip(",")
    ga.write_text("[\n" + first + ",\n" + "{garbage " * 20000 + "\n")
    log = ImportLog()
    tasks = load_wlc.iter_tasks(root, log)
    assert next(tasks).key == "wlc.2025-12-1"
    assert not problems(log.skipped, f"{R1}/ga_100.json")  # the garbage is not read yet
    assert next(tasks).key == "wlc.2026-02-1"
    assert problems(log.skipped, f"{R1}/ga_100.json") == [
        f"{R1}/ga_100.json:2: malformed JSON (Expecting property name enclosed in double quotes); rest of file skipped"]


def test_has_citations_from_agencies_is_kept_on_the_registered_system(tmp_path):
    from dreval_assets.operations.importer import import_release
    from dreval_assets.store.db import Store
    from dreval_assets.store.registry import SystemEntry, load_systems, register_system

    store = Store(tmp_path / "t.duckdb")
    store.ensure_schema()
    import_release(store, "wlc", ROOT)
    systems = load_systems(store)
    assert systems["plain-writer"].has_citations is False  # agencies.json: has_citations false
    assert systems["gemini-dr"].has_citations is True
    assert systems["stray-system"].has_citations is None  # not in agencies.json: unknown
    # a folder system nobody describes stays unknown, and re-importing changes nothing
    register_system(store, SystemEntry("my-folder", "my-folder", "folder", str(tmp_path)))
    assert load_systems(store)["my-folder"].has_citations is None
    before = store.query("SELECT system, changed_at FROM registered_systems ORDER BY system").rows()
    import_release(store, "wlc", ROOT)
    assert store.query("SELECT system, changed_at FROM registered_systems ORDER BY system").rows() == before


SHAPES = RELEASES.parent / "report_shapes"


def _release_with_one_report(tmp_path, md_text: str, citation_urls: dict) -> tuple:
    wiki = tmp_path / "data/r1/wiki_data"
    (wiki / "cleaned_data/article").mkdir(parents=True)
    (wiki / "cleaned_data/article/Kestrel Bay Lighthouse.md").write_text("# Kestrel Bay Lighthouse\n\nA lighthouse.\n")
    (wiki / "ga_100.json").write_text(json.dumps([{"id": "7", "title": "Kestrel Bay Lighthouse", "question": "Write it."}]))
    outputs = tmp_path / "data/r1/test_data/agent"
    (outputs / "md_data").mkdir(parents=True)
    (outputs / "json_data").mkdir()
    (outputs / "md_data/Kestrel_Bay_Lighthouse.md").write_text(md_text)
    page = {"title": "Kestrel Bay Lighthouse", "extract": "unused", "citation_urls": citation_urls}
    (outputs / "json_data/Kestrel_Bay_Lighthouse.json").write_text(json.dumps({"query": {"pages": {"99": page}}}))
    log = ImportLog()
    return list(load_wlc.iter_reports(tmp_path, log)), log


def test_citation_map_fills_the_indices_the_article_list_leaves_unresolved(tmp_path):
    md = (SHAPES / "wlc_footnotes.md").read_text()  # footnotes [^1]..[^5] (5 without a URL), [^6] undefined
    assert parse_report(md).unresolved_indices == [5, 6]
    urls = {"1": "https://elsewhere.example/one", "5": "https://gazette.example/2019/03/14/sale",
            "6": "https://kestrelbaytrust.example.org/reopening-2022"}
    (report,), log = _release_with_one_report(tmp_path, md, urls)
    parsed = parse_report(report.text)
    assert parsed.unresolved_indices == []
    by_index = {r.index: r.url for r in parsed.references}
    assert by_index[1] == "https://maritimeheritage.example.org/lights/kestrel-bay"  # the article's own URL wins
    assert by_index[5] == "https://gazette.example/2019/03/14/sale"
    assert by_index[6] == "https://kestrelbaytrust.example.org/reopening-2022"
    claims = {c.text: c.urls for c in parsed.claims}
    assert claims["A local trust bought the lighthouse in 2019 for £1.2 million."] == [
        "https://gazette.example/2019/03/14/sale"]
    assert report.text.endswith("References\n[5] https://gazette.example/2019/03/14/sale\n"
                                "[6] https://kestrelbaytrust.example.org/reopening-2022\n")
    assert problems(log.notes) == [
        "data/r1/test_data/agent/md_data/Kestrel_Bay_Lighthouse.md: json_data citation_urls resolve 2 index(es) "
        "the article's reference list leaves without a URL: 5, 6"]


def test_article_whose_list_resolves_everything_is_imported_as_its_file(tmp_path):
    md = "# Kestrel Bay Lighthouse\n\nIt was built in 1871 [1].\n\n## References\n[1] https://a.example/built\n"
    (report,), log = _release_with_one_report(tmp_path, md, {"1": "https://b.example/other"})
    assert report.path is not None and report.text is None
    assert problems(log.notes) == []


def test_criteria_file_in_another_shape_falls_back_to_our_texts_with_a_reason(tmp_path):
    from dreval_assets.benchmarks.wlc.criteria import CriteriaShapeError, release_criteria
    from dreval_assets.benchmarks.wlc.loader import writing_criteria

    shipped = json.loads((ROOT / "evaluation/data/wiki_writing_criteria.json").read_text())
    short = json.loads(json.dumps(shipped))
    short["categories"][2]["criteria"].pop()  # neutral with 9 criteria cannot pair by position with our 10
    with pytest.raises(CriteriaShapeError, match="9 criteria"):
        release_criteria(short)
    (tmp_path / "evaluation/data").mkdir(parents=True)
    (tmp_path / "evaluation/data/wiki_writing_criteria.json").write_text(json.dumps(short))
    log = ImportLog()
    assert writing_criteria(tmp_path, log) is None and "our paraphrases" in problems(log.skipped)[0]
    assert writing_criteria(tmp_path / "none", log) is None and "our paraphrases" in problems(log.missing)[0]


def test_release_statements_travel_with_the_report_and_become_its_claims():
    from pathlib import Path

    import polars as pl

    from dreval_assets.stages.frames import frame
    from dreval_assets.stages.parse import parse_reports, release_statement_keys, with_release_statements

    root = Path(__file__).parent / "fixtures" / "releases" / "wlc-published"
    log = ImportLog()
    report = next(r for r in load_wlc.iter_reports(root, log) if r.system == "web-agent")
    shipped = json.loads(report.release_statements)
    assert shipped["policy"] == "wlc.statements"
    by_text = {s["text"]: s for s in shipped["statements"]}
    assert len(shipped["statements"]) == 8  # the empty fact and the entry that is no object left out, noted
    assert any("2 statements entries without a fact" in str(p) for p in log.notes)
    assert by_text["The tower is 36 metres tall."]["urls"] == ["https://en.wikipedia.org/wiki/Kestrel_Bay_Lighthouse"]
    assert by_text["The Kestrel Bay Lighthouse was first lit in 1871."]["indices"] == ["1", "4"]
    assert by_text["Its light flashes white every ten seconds."] == {
        "text": "Its light flashes white every ten seconds.", "urls": [], "indices": ["9"]}  # [9]: no URL anywhere
    assert by_text["该灯塔于1871年首次点亮。"]["indices"] == ["6"]  # a number as ref_idx

    text = (root / report.where).read_text()
    reports = frame("reports", [{"system": "web-agent", "task": report.task, "status": "ok", "text": text,
                                 "n_chars": len(text), "content_hash": "h", "source_path": None, "na_reason": None,
                                 "detail": "", "release_statements": report.release_statements}])
    frames = parse_reports(reports)
    assert release_statement_keys(reports, {"wlc.statements": "claims"}) == set()  # ours: the parser's claims
    chosen = release_statement_keys(reports, {})
    assert chosen == {("web-agent", report.task)}  # the default: the release's statements, as published
    claims = with_release_statements(frames, reports, chosen)["report_claims"]
    assert claims.height == 8 and set(claims["extraction"]) == {"release"}
    flash = claims.filter(pl.col("text").str.starts_with("Its light")).row(0, named=True)
    assert flash["kind"] == "sentence" and flash["urls"] == [] and flash["unresolved_indices"] == [9]
    parsed = with_release_statements(frames, reports, chosen)["parsed_reports"].row(0, named=True)
    assert parsed["extraction"] == "release" and parsed["n_statements"] == 8
    assert "the release's 8 statements (wlc.statements = release)" in parsed["extraction_detail"]
