"""A report cut into claim spans for `dreval view`: claims are found where they stand, with or
without the citation markers the parser dropped, and a claim not in the text is said to be missing."""
from __future__ import annotations

from dreval_assets.presentation.view.highlight import Segment, segments
from dreval_assets.presentation.view.urls import BASE_URL_ENV, report_url, root_of

REPORT = ("# Title\n\nThe plant produced 4.2 TWh in 2023 [1]. Output fell by 7 percent [2].\n\n"
          "Costs rose to 1.9 billion dollars, according to the operator [1].")


def test_claims_are_marked_where_they_stand_and_the_rest_is_plain_text():
    parts, missing = segments(REPORT, [("c1", "The plant produced 4.2 TWh in 2023."),
                                       ("c2", "Output fell by 7 percent."),
                                       ("c3", "Costs rose to 1.9 billion dollars, according to the operator.")])
    assert missing == []
    assert "".join(p.text for p in parts) == REPORT  # nothing lost, nothing added
    marked = {p.claim_id: p.text for p in parts if p.claim_id}
    assert marked["c1"] == "The plant produced 4.2 TWh in 2023"
    assert marked["c2"] == "Output fell by 7 percent"
    assert marked["c3"].startswith("Costs rose") and marked["c3"].endswith("operator")
    assert parts[0] == Segment("# Title\n\n")


def test_a_claim_not_in_the_text_is_missing_and_marks_nothing():
    parts, missing = segments(REPORT, [("c1", "A sentence the report never wrote about reactors."),
                                       ("c2", "Output fell by 7 percent.")])
    assert missing == ["c1"] and [p.claim_id for p in parts if p.claim_id] == ["c2"]
    assert "".join(p.text for p in parts) == REPORT


def test_a_repeated_sentence_marks_each_occurrence_in_order():
    text = "Prices rose. Prices rose."
    parts, missing = segments(text, [("a", "Prices rose."), ("b", "Prices rose.")])
    assert missing == [] and [(p.text, p.claim_id) for p in parts if p.claim_id] == [
        ("Prices rose", "a"), ("Prices rose", "b")]


def test_page_links_are_relative_and_the_dagster_link_follows_the_configured_base(monkeypatch):
    assert root_of("reports/sys/task.html") == "../../" and root_of("index.html") == ""
    monkeypatch.setenv(BASE_URL_ENV, "http://viewer.internal:9000/")
    assert report_url("careful-scholar", "wlc.spore-drive") == \
        "http://viewer.internal:9000/reports/careful-scholar/wlc.spore-drive.html"
    monkeypatch.delenv(BASE_URL_ENV)
    assert report_url("a", "b").startswith("http://127.0.0.1:8765/")
