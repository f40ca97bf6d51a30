"""Streaming readers and helpers shared by the release loaders."""
import json

import pytest

from dreval_assets.releases import json_readers as release_json, reports as release_reports
from dreval_assets.releases.attachments import attachment_texts, read_attachments
from dreval_assets.releases.records import (
    ImportLog,
    as_list,
    canonical_id,
    first_of,
    id_and_query,
    labels,
    layout_check,
    make_key,
    text_of,
    trace_text,
)
from dreval_assets.releases.json_readers import (
    JsonlIndex,
    iter_json_array,
    iter_jsonl,
    iter_jsonl_offsets,
    iter_records,
)
from dreval_assets.releases.reports import (
    check_images,
    embedded_reports,
    image_file,
    is_blank,
    local_images,
)


@pytest.fixture(params=[7, 1 << 16])
def chunk(request, monkeypatch):
    for module in (release_json, release_reports):  # both read in chunks: arrays, blank reports
        monkeypatch.setattr(module, "READ_CHUNK", request.param)  # tiny chunks split every token
    return request.param


def test_json_array_streams_every_object_across_chunk_boundaries(tmp_path, chunk):
    records = [{"id": n, "text": "é" * n, "nested": {"list": [1, 2.5, "]"]}} for n in range(40)]
    path = tmp_path / "a.json"
    path.write_text(json.dumps(records, ensure_ascii=False, indent=1), encoding="utf-8")
    log = ImportLog()
    assert [r for _, r in iter_json_array(path, tmp_path, log)] == records
    assert not log.skipped


def test_json_array_numbers_are_not_cut_at_a_chunk_boundary(tmp_path, chunk):
    path = tmp_path / "n.json"
    path.write_text('[{"a": 1}, 12345678901234, {"b": 2}]')
    log = ImportLog()
    assert [r for _, r in iter_json_array(path, tmp_path, log)] == [{"a": 1}, {"b": 2}]
    assert [str(p) for p in log.skipped] == ["n.json:2: expected a JSON object, found int"]


def test_malformed_array_element_is_reported_with_its_record_number(tmp_path, chunk):
    path = tmp_path / "bad.json"
    path.write_text('[{"id": 1}, {"id": 2,}, {"id": 3}]')
    log = ImportLog()
    assert [r["id"] for _, r in iter_json_array(path, tmp_path, log)] == [1]
    assert len(log.skipped) == 1 and log.skipped[0].line == 2 and "malformed JSON" in log.skipped[0].reason


def test_jsonl_skips_bad_lines_and_keeps_the_rest(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_text('{"id": "a"}\n\n{oops\n[1]\n{"id": "b"}\n', encoding="utf-8")
    log = ImportLog()
    assert [(n, r["id"]) for n, r in iter_jsonl(path, tmp_path, log)] == [(1, "a"), (5, "b")]
    assert [(p.line, p.reason.split(" (")[0]) for p in log.skipped] == [(3, "malformed JSON"),
                                                                      (4, "expected a JSON object, found list")]


def test_wrong_encoding_is_reported_not_raised(tmp_path):
    path = tmp_path / "latin.jsonl"
    path.write_bytes('{"id": "a"}\n{"id": "caf\u00e9"}\n'.encode("latin-1"))
    log = ImportLog()
    assert [r["id"] for _, r in iter_jsonl(path, tmp_path, log)] == ["a"]
    assert log.skipped[0].line == 2 and "not UTF-8" in log.skipped[0].reason


def test_iter_records_detects_array_or_lines(tmp_path):
    (tmp_path / "x.json").write_text('\ufeff  [{"a": 1}]', encoding="utf-8")
    (tmp_path / "y.json").write_text('{"a": 2}\n{"a": 3}\n')
    log = ImportLog()
    assert [r["a"] for _, r in iter_records(tmp_path / "x.json", tmp_path, log)] == [1]
    assert [r["a"] for _, r in iter_records(tmp_path / "y.json", tmp_path, log)] == [2, 3]
    assert list(iter_records(tmp_path / "missing.json", tmp_path, log)) == []
    assert log.missing[0].file == "missing.json"


def test_field_variants_and_keys():
    assert first_of({"qid": "", "id": "Q1"}, "qid", "id") == "Q1"
    assert as_list("a.png") == ["a.png"] and as_list(["a", "b"]) == ["a", "b"] and as_list(None) == []
    log, seen = ImportLog(), {}
    assert make_key("mmdr", "Q1", "quiz.jsonl", 1, log, seen) == "mmdr.q1"
    assert make_key("mmdr", "Q1", "quiz.jsonl", 9, log, seen) is None
    assert make_key("mmdr", "", "quiz.jsonl", 10, log, seen) is None
    assert [str(p) for p in log.skipped] == ["quiz.jsonl:9: duplicate task id 'Q1' (first seen at quiz.jsonl:1)",
                                             "quiz.jsonl:10: record has no id"]


def test_make_key_messages_show_the_id_as_given():
    log, seen = ImportLog(), {}
    assert make_key("wlc", "2025-12-1", "ga.json", 1, log, seen, shown_id="1") == "wlc.2025-12-1"
    assert make_key("wlc", "2025-12-1", "ga.json", 4, log, seen, shown_id="1") is None
    assert [str(p) for p in log.skipped] == ["ga.json:4: duplicate task id '1' (first seen at ga.json:1)"]


def test_jsonl_offsets_point_at_their_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes('\ufeff{"id": "a"}\n\n{"id": "é"}\n'.encode("utf-8"))
    rows = list(iter_jsonl_offsets(path, tmp_path, ImportLog()))
    assert [(n, r["id"]) for n, _, r in rows] == [(1, "a"), (3, "é")]
    data = path.read_bytes()
    assert [data[offset:].split(b"\n")[0] for _, offset, _ in rows] == [data.split(b"\n")[0], '{"id": "é"}'.encode()]


def test_jsonl_index_keeps_offsets_and_reads_records_back(tmp_path):
    path = tmp_path / "side.jsonl"
    path.write_text('{"id": "a", "v": 1}\n{"id": "b", "v": ""}\n{oops\n{"v": 3}\n{"id": "a", "v": 4}\n'
                    '{"id": "c", "v": 5, "extra": 1}\n', encoding="utf-8")
    log = ImportLog()
    index = JsonlIndex(path, tmp_path, log, lambda r: str(r.get("id", "")), known={"id", "v"},
                       problem=lambda rid, r: None if r["v"] != "" else f"{rid}: empty v")
    assert index.entries == {"a": [(1, 0)], "c": [(6, path.read_bytes().index(b'{"id": "c"'))]}
    assert index.read("a") == {"id": "a", "v": 1} and index.line("c") == 6 and index.read("zz") is None
    assert [str(p) for p in log.skipped] == [
        "side.jsonl:2: b: empty v",
        "side.jsonl:3: malformed JSON (Expecting property name enclosed in double quotes at column 2)",
        "side.jsonl:4: record has no id",
        "side.jsonl:5: duplicate id 'a' (first seen at side.jsonl:1)"]
    assert [str(p) for p in log.notes] == ["side.jsonl:6: unknown field(s) kept out: extra"]
    index.claim("a")
    assert list(index.unclaimed()) == [("c", 6)]


def test_jsonl_index_with_repeated_ids_and_a_file_changed_behind_it(tmp_path):
    path = tmp_path / "pages.jsonl"
    path.write_text('{"t": "x", "n": 1}\n{"t": "y", "n": 2}\n{"t": "x", "n": 3}\n')
    log = ImportLog()
    index = JsonlIndex(path, tmp_path, log, lambda r: r["t"], label="t", repeated=True)
    assert [(n, r["n"]) for n, r in index.read_all("x")] == [(1, 1), (3, 3)]
    path.write_text('{"t": "x", "n": 1}\n{"t": "y", "n": 2}\n{"t": "x", broken\n')
    assert [r["n"] for _, r in index.read_all("x")] == [1]
    assert [str(p) for p in log.skipped] == [
        "pages.jsonl:3: malformed JSON (Expecting property name enclosed in double quotes at column 12)"]


def test_a_task_skipped_for_missing_files_gets_one_miss_per_file_and_one_skip():
    log = ImportLog()
    log.skip_for_missing("q.jsonl", 3, "Q9", ["a.png", "b.png"], "image")
    assert [str(p) for p in log.missing] == ["q.jsonl:3: task Q9: image not found: a.png",
                                             "q.jsonl:3: task Q9: image not found: b.png"]
    assert [str(p) for p in log.skipped] == ["q.jsonl:3: task Q9 skipped: 2 image(s) missing"]


def test_is_blank_reads_only_what_it_needs(tmp_path, chunk):
    blank, text = tmp_path / "blank.md", tmp_path / "text.md"
    blank.write_text(" \n\t\n" * 1000)
    text.write_text(" " * 20 + "x")
    assert is_blank(blank) and not is_blank(text)


def test_report_images_resolve_against_the_first_folder_that_has_them(tmp_path):
    report, shared = tmp_path / "sys", tmp_path / "root"
    (report / "images").mkdir(parents=True)
    (shared / "img").mkdir(parents=True)
    (report / "images" / "a b.png").write_bytes(b"png")
    (shared / "img" / "c.png").write_bytes(b"png")
    text = ('![a](<images/a b.png>) ![a](images/a%20b.png "title")\n<img alt="x" src="img/c.png">\n'
            f'![abs]({(shared / "img" / "c.png").as_uri()}) ![web](https://x.example/y.png) <img src=gone.png>\n')
    assert [src for _, src in local_images(text)] == ["images/a b.png", "images/a%20b.png", "img/c.png",
                                                      (shared / "img" / "c.png").as_uri(), "gone.png"]
    log = ImportLog()
    assert check_images(text, [report, shared], "r.md", log) == report  # no single folder holds every image
    assert [str(p) for p in log.missing] == ["r.md:3: image not found: gone.png"]
    assert check_images("<img src='img/c.png'>", [report, shared], "r.md", ImportLog()) == shared
    assert image_file("file://img/c.png", [shared]) == shared / "img" / "c.png"


def test_embedded_reports_resolve_skip_and_note_once(tmp_path):
    path = tmp_path / "m.jsonl"
    rows = [{"id": "1", "answer": "A.", "steps": ["s"], "x": 1}, {"id": "2", "answer": " "},
            {"id": "9", "answer": "B."}, {"id": "1", "answer": "C.", "x": 2}, {"answer": "D."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    log = ImportLog()
    found = list(embedded_reports(path, tmp_path, "m", {"1": "b.1", "2": "b.2"}.get, log, id_fields=("id",),
                                  text_fields=("answer",), trace_fields=("steps",), known={"id", "answer", "steps"}))
    assert [(r.task, r.task_id, r.text, r.trace, r.where) for r in found] == [("b.1", "1", "A.", '["s"]', "m.jsonl:1")]
    assert [str(p) for p in log.skipped] == ["m.jsonl:2: empty report", "m.jsonl:3: no task with id '9'",
                                             "m.jsonl:4: second report of m for task 1 (first: m.jsonl:1)",
                                             "m.jsonl:5: record has no id"]
    assert [str(p) for p in log.notes] == ["m.jsonl:1: unknown field(s) kept out: x"]


def test_small_field_helpers():
    log = ImportLog()
    assert id_and_query({"number": 12, "query": "q"}, ("task", "number"), "f", 1, log) == ("12", "q")
    assert id_and_query({"query": ""}, ("id",), "f", 2, log) == ("", "")  # make_key reports the missing id
    assert id_and_query({"id": [1], "query": "q"}, ("id",), "f", 3, log) is None
    assert id_and_query({"id": "a", "query": " "}, ("id",), "f", 4, log) is None
    assert [str(p) for p in log.skipped] == ["f:3: task id is a list, expected a string or number", "f:4: empty query"]
    assert labels({"a": 1, "b": True, "c": None, "d": [1], "lang": "en"}, "f", 5, log, taken={"lang"}) == {
        "a": "1", "b": "true"}
    assert [str(p) for p in log.notes] == ["f:5: label(s) not scalar, kept out: d"]
    assert text_of(" x ") == "x" and text_of({"a": 1}) == "" and text_of(None) == ""
    assert canonical_id("0042") == "42" and canonical_id("q-7") == "q-7"
    assert trace_text([]) is None and trace_text(" ") is None and trace_text({"k": "é"}) == '{"k": "é"}'


def test_layout_check(tmp_path):
    assert layout_check(tmp_path, lambda r: True, "x", "a Y release") is None
    assert layout_check(tmp_path, lambda r: False, "x.json", "a Y release") == "no x.json: not a Y release"
    assert layout_check(tmp_path / "no", lambda r: True, "x", "a Y release") == f"{tmp_path / 'no'} is not a folder"


def test_unreadable_attachments_come_back_with_their_reason(tmp_path):
    (tmp_path / "long.md").write_text("The council counted thirty nine thousand ferry passengers in 2023 " * 3)
    (tmp_path / "short.txt").write_text("Too short.")
    (tmp_path / "photo.jpg").write_bytes(b"\xff\xd8")
    texts, unreadable = read_attachments(tmp_path, ["long.md", "short.txt", "photo.jpg", "gone.pdf"])
    assert list(texts) == ["long.md"]
    assert unreadable == {"short.txt": "empty: only 2 words of text",
                          "gone.pdf": "cannot read: No such file or directory"}
    log = ImportLog()
    assert list(attachment_texts(tmp_path, ["long.md", "short.txt"], "t.jsonl", 2, "T1", log)) == ["long.md"]
    assert [str(p) for p in log.notes] == [
        "t.jsonl:2: task T1: attachment short.txt left out of the evidence (empty: only 2 words of text)"]
