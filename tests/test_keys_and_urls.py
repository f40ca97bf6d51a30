import pytest

from dreval_assets.core.keys import InvalidKeyError, slugify, task_key, validate_key
from dreval_assets.core.models import SandboxPage
from dreval_assets.fetch.sandbox import SandboxFetcher
from dreval_assets.fetch.urls import normalise_url


@pytest.mark.parametrize("original, key", [
    ("100001", "tvir.100001"), ("Harrowgate Tidal Barrage", "wlc.harrowgate-tidal-barrage"),
    ('a|b "quoted"', "wlc.a-b-quoted"), ("Q7", "wlc.q7"),
])
def test_task_keys_are_valid_slugs(original, key):
    bench = key.split(".")[0]
    assert task_key(bench, original) == key


def test_non_latin_ids_keep_distinct_keys():
    a, b = slugify("电池储能"), slugify("氢能源")
    assert a != b and validate_key(a) == a


@pytest.mark.parametrize("bad", ["a|b", "A", "-x", "x y", "x'y", "", "x" * 200])
def test_invalid_keys_are_refused(bad):
    with pytest.raises(InvalidKeyError):
        validate_key(bad)


def test_url_normalisation_merges_variants():
    assert normalise_url("HTTP://WWW.Example.org:80/a/b/?utm_source=x&b=2&a=1#frag") == "https://example.org/a/b?a=1&b=2"
    assert normalise_url("https://example.org") == normalise_url("https://example.org/")


def test_sandbox_fetcher_resolves_urls_and_titles_and_marks_the_rest_unknown():
    pages = [SandboxPage(url="https://www.a.example/x", title="Grid Storage 2024", role="supportive", text="text"),
             SandboxPage(url="https://b.example/empty", title="", role="noise", text="  ")]
    got = SandboxFetcher().fetch_many(
        ["http://a.example/x/", "Grid storage 2024", "https://c.example/nope", "https://b.example/empty",
         "http://[::1"], pages)
    assert [r.status for r in got] == ["ok", "ok", "unknown", "unknown", "unknown"]
    assert got[0].role == "supportive" and got[0].text == "text"
    assert all(r.na_reason == "data_accessibility" for r in got[2:])
    assert "not in the task's sandbox" in got[2].detail
