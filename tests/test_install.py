"""The install is what the lock says, and every optional code path the product uses at run time imports and works.

A green run proves something only if the venv holds exactly the locked tree: these tests fail when a
package is missing from the lock, pinned at another version, or when a runtime import (HTML cleaning,
PDF, charset detection) is absent, as lxml_html_clean once was."""
from __future__ import annotations

import importlib
import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from dreval_assets.fetch.extract import extract_page
from pdf_fixture import make_pdf

ROOT = Path(__file__).resolve().parents[1]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"requirements.lock: {line!r} is not an exact pin"
            pins[_canonical(name)] = version
    return pins


def test_every_installed_distribution_is_locked_at_its_version():
    pins = _lock()
    installed = {_canonical(d.metadata["Name"]): d.version for d in metadata.distributions()}
    installed.pop("dreval", None)  # the project itself, installed editable
    unlocked = sorted(n for n in installed if n not in pins)
    moved = sorted(f"{n} {installed[n]} (lock {pins[n]})" for n in installed if n in pins and pins[n] != installed[n])
    assert not unlocked, f"installed but not in requirements.lock (run .ci/relock): {unlocked}"
    assert not moved, f"installed at another version than the lock: {moved}"


def test_every_declared_dependency_is_in_the_lock_at_the_declared_pin():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    declared = [*project["project"]["dependencies"], *project["project"]["optional-dependencies"]["test"],
                *project["build-system"]["requires"]]
    pins = _lock()
    for requirement in declared:
        name, _, version = re.split(r"(==)", requirement, maxsplit=1) if "==" in requirement else (requirement, "", "")
        name = _canonical(re.split(r"[<>=!~\[; ]", name)[0])
        assert name in pins, f"{requirement} is declared but not locked"
        if version:
            assert pins[name] == version.strip(), f"{requirement} declared, {pins[name]} locked"


@pytest.mark.parametrize("module", ["trafilatura", "justext", "lxml.html.clean", "lxml_html_clean", "pypdf",
                                    "charset_normalizer", "instructor", "openai", "httpx", "duckdb", "polars",
                                    "jinja2", "starlette", "uvicorn"])
def test_runtime_modules_import(module):
    importlib.import_module(module)


ARTICLE = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Port of Rotterdam handled 438 million tonnes in 2023 | Harbour Weekly</title>
<script>window.dataLayer = window.dataLayer || [];</script><style>body{margin:0}</style></head>
<body><nav><a href="/">Home</a> <a href="/shipping">Shipping</a> <a href="/ports">Ports</a></nav>
<div class="cookie-banner">We use cookies to improve your experience. <button>Accept</button></div>
<article><h1>Port of Rotterdam handled 438 million tonnes in 2023</h1>
<p class="byline">By Anneke de Vries, 14 February 2024</p>
<p>The Port of Rotterdam handled 438.8 million tonnes of cargo in 2023, a fall of 6.1 percent on the year before,
the port authority said on Wednesday. Container throughput fell to 13.4 million TEU.</p>
<p>The authority blamed lower coal imports and weaker demand for oil products, while liquefied natural gas volumes
rose sharply after new terminal capacity opened at the Maasvlakte. Officials expect volumes to stabilise in 2024.</p>
<p>Investment in shore power and hydrogen import terminals continued, with 340 million euros committed during the
year, according to the annual report published alongside the figures.</p>
</article><footer>Harbour Weekly &copy; 2024. All rights reserved. <a href="/privacy">Privacy</a></footer>
</body></html>"""


def test_a_real_looking_html_page_extracts_to_ok_through_trafilatura():
    page = extract_page(ARTICLE.encode(), "text/html; charset=utf-8", url="https://harbour.example/rotterdam-2023")
    assert page.status == "ok", page.detail
    assert "by trafilatura" in page.detail  # the HTML cleaning path ran, not the tag-stripping fallback
    assert "438.8 million tonnes" in page.text and "340 million euros" in page.text
    assert "Accept" not in page.text and "window.dataLayer" not in page.text


def test_a_pdf_extracts_to_ok():
    body = make_pdf(["Container throughput fell to 13.4 million TEU in 2023.",
                     "Liquefied natural gas volumes rose after new terminal capacity opened."], title="Annual report")
    page = extract_page(body, "application/pdf")
    assert page.status == "ok", page.detail
    assert "13.4 million TEU" in page.text
