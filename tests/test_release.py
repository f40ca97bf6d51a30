"""Streaming readers shared by the release loaders."""
import json

import pytest

from dreval_assets.benchmarks import release
from dreval_assets.benchmarks.release import ImportLog, as_list, first_of, iter_json_array, iter_jsonl, iter_records, make_key


@pytest.fixture(params=[7, 1 << 16])
def chunk(request, monkeypatch):
    monkeypatch.setattr(release, "READ_CHUNK", request.param)  # tiny chunks split every token
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
