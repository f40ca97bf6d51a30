"""Credentials in URLs are never printed or stored: a password in OPENAI_BASE_URL, a search
endpoint's `?apikey=`. What must still work with them (the call itself) works."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from loopback_llm import LoopbackLLM, status  # noqa: E402
from test_search_evidence import FERRY, SearchEngine, store, web, web_search  # noqa: E402,F401

from dreval_assets.cli import main  # noqa: E402
from dreval_assets.errors import redact, redact_url  # noqa: E402
from dreval_assets.judges.context_window import discover  # noqa: E402
from dreval_assets.judges.openai_config import OpenAIJudgeConfig  # noqa: E402
from dreval_assets.judges.preflight import PreflightFailed, check_judge_endpoint  # noqa: E402

PASSWORD = "pw-Hunter2-0123"
SEARCH_KEY = "sk-search-987654"


@pytest.mark.parametrize("url, shown", [
    (f"http://judge:{PASSWORD}@127.0.0.1:8000/v1", "http://judge:***@127.0.0.1:8000/v1"),
    (f"https://s.example/search?apikey={SEARCH_KEY}&q=ferry", "https://s.example/search?apikey=***&q=ferry"),
    (f"https://s.example/search?q=ferry&Api-Key={SEARCH_KEY}", "https://s.example/search?q=ferry&Api-Key=***"),
    ("https://s.example/search?q=ferry&format=json", "https://s.example/search?q=ferry&format=json"),
])
def test_a_url_keeps_everything_but_its_credentials(url, shown):
    assert redact_url(url) == shown
    assert redact(f"failed at {url}: refused") == f"failed at {shown}: refused"


def all_text(store) -> str:
    """Every text cell of every table, to look for a secret in."""
    tables = [t for (t,) in store.query("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_type = 'BASE TABLE'").rows()]
    return "\n".join(str(row) for t in tables for row in store.query(f'SELECT * FROM "{t}"').rows())


def test_a_password_in_the_base_url_is_in_no_message_and_no_table(calls):
    with LoopbackLLM(context_tokens=4096) as llm:
        base = llm.base_url.replace("http://", f"http://judge:{PASSWORD}@")
        llm.fail_next(status(401))
        with pytest.raises(PreflightFailed) as refused:
            check_judge_endpoint(OpenAIJudgeConfig(model="m", base_url=base, api_key="sk-key-0000"), calls,
                                 sleep=lambda _: None)
        window = discover(base, "m", setting="")
    assert PASSWORD not in str(refused.value) and "judge:***@" in str(refused.value)
    assert window.source.endswith("/props") and PASSWORD not in window.source
    assert PASSWORD not in all_text(calls.store)


def test_an_endpoint_system_with_a_password_is_refused_without_showing_it(tmp_path, capsys):
    for url in (f"http://writer:{PASSWORD}@127.0.0.1:9/v1", f"ftp://writer:{PASSWORD}@127.0.0.1/"):
        assert main(["--home", str(tmp_path / "home"), "add-system", "walled", "--endpoint", url,
                     "--model", "m"]) == 2
    out = capsys.readouterr()
    assert PASSWORD not in out.out + out.err and out.err.count("writer:***@") == 2


def test_a_search_key_is_sent_but_never_stored(web, store):  # noqa: F811
    engine = SearchEngine(web, {"ferry": ["/ferry"]})
    engine.url += f"?apikey={SEARCH_KEY}"
    search = web_search(web, engine, store)
    outcome = search.search_many([FERRY], [[]])[0]
    assert outcome.pages and engine.queries  # the endpoint was asked, with its key
    assert SEARCH_KEY not in all_text(store)
    assert store.query("SELECT DISTINCT endpoint FROM search_results").item().endswith("?apikey=***")
    asked = len(engine.queries)
    web_search(web, engine, store).search_many([FERRY], [[]])
    assert len(engine.queries) == asked  # the stored answers are found again under the masked endpoint
