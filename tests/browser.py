"""Debian's chromium driven through playwright, for the tests that look at a page as a user does.

Playwright never downloads a browser here: it launches /usr/bin/chromium (`DREVAL_CHROMIUM` overrides)
with the flags a closed network needs. Without chromium the test is skipped, unless
DREVAL_BROWSER_REQUIRED=1 (set by .ci/run, which installs it), when it fails.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("DREVAL_CHROMIUM", "/usr/bin/chromium"))
# Without the background-networking flags chromium keeps trying hosts a closed network refuses.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def require_chromium() -> None:
    if CHROMIUM.is_file():
        return
    if os.environ.get("DREVAL_BROWSER_REQUIRED") == "1":
        pytest.fail(f"DREVAL_BROWSER_REQUIRED=1 but no chromium at {CHROMIUM} (see .ci/run)")
    pytest.skip(f"no chromium at {CHROMIUM}")


@contextmanager
def browser_page(width: int = 1400, height: int = 1000):
    """A fresh page in a headless chromium with an empty profile; closed on exit."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": width, "height": height})
            yield page
        finally:
            browser.close()
