"""Screenshots of the Dagster UI as a user sees it after `dreval demo`: the leaderboard asset's page
(headline tables and plots), a claim_verdicts partition (its own figures), an asset check and the runs.

    python bench/screenshot_ui.py [--home HOME] [--out bench/screenshots] [--chromium /usr/bin/chromium]

Without --home the demo is run into a temporary home first (~1 min). Starts `dagster-webserver` on a
free loopback port with that home's instance, waits until it answers, then drives headless chromium
(Dagster's UI is a JavaScript app: a virtual time budget lets it fetch and render before the shot).
Not a test: CI has no browser. Look at the PNGs it writes.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import httpx

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_webserver(home: Path, port: int, log: Path) -> subprocess.Popen:
    env = {**os.environ, "DREVAL_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
    return subprocess.Popen([sys.executable, "-m", "dagster_webserver", "-w", str(ROOT / "workspace.yaml"),
                             "-h", "127.0.0.1", "-p", str(port)], cwd=ROOT, env=env,
                            stdout=log.open("w"), stderr=subprocess.STDOUT)


def wait_until_loaded(port: int, timeout_s: float = 120) -> None:
    """Until the code location answers GraphQL with its assets (the UI shows nothing before)."""
    query = "{ assetNodes { assetKey { path } } }"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            reply = httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": query}, timeout=5)
            if reply.json()["data"]["assetNodes"]:
                return
        except (httpx.HTTPError, KeyError, ValueError, TypeError):
            pass
        time.sleep(0.5)
    raise RuntimeError(f"dagster-webserver on port {port} did not answer within {timeout_s:.0f} s")


def dismiss_community_prompt(port: int) -> None:
    """What the prompt's Skip button does (the UI asks on loopback origins until it has been answered)."""
    httpx.post(f"http://127.0.0.1:{port}/graphql", json={"query": "mutation { setNuxSeen }"}, timeout=10)


def first_partition(home: Path, asset: str) -> str:
    """The partition of the latest multi-partition run that carries the run totals."""
    sys.path.insert(0, str(ROOT))
    from dagster import AssetKey, DagsterInstance

    os.environ["DAGSTER_HOME"] = str(home / "dagster")  # where the home's event log keeps its shards
    instance = DagsterInstance.from_config(str(home / "dagster"))
    records = instance.fetch_materializations(AssetKey(asset), limit=200).records
    for record in records:
        if "run_totals" in record.asset_materialization.metadata:
            return str(record.asset_materialization.partition)
    return str(records[0].asset_materialization.partition)


def shrink(path: Path) -> None:
    """A 256-colour palette PNG: UI screenshots have few colours, so a third of the size, same look."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    small.save(path, optimize=True)


def screenshot(chromium: str, url: str, out: Path, size: str, budget_ms: int) -> None:
    with tempfile.TemporaryDirectory(prefix="dreval-chromium-") as profile:
        subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={size}",
                        f"--virtual-time-budget={budget_ms}", f"--screenshot={out}", url],
                       check=True, timeout=180, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    shrink(out)
    print(f"{out} ({out.stat().st_size // 1024} KiB)  <- {url}")


# Dagster's UI renders a Markdown entry inline only under 1,000 characters; a plot (a PNG data: URI) sits
# behind "[Show Markdown]" and opens in a dialog. Those shots click it, through the DevTools protocol.
CLICK_SHOW_MARKDOWN = """(() => {
  const row = [...document.querySelectorAll('tr')].find(r => r.firstElementChild
      && r.firstElementChild.innerText.trim() === %s);
  const link = row && [...row.querySelectorAll('*')].find(e => e.children.length === 0
      && e.innerText && e.innerText.trim() === '[Show Markdown]');
  if (!link) return false;
  link.click();
  return true;
})()"""
DIALOG_IMAGE_READY = """(() => {
  const img = document.querySelector('[role=dialog] img, .bp5-dialog img, .bp4-dialog img');
  return !!(img && img.complete && img.naturalWidth > 0); })()"""


async def _devtools_shot(ws_url: str, url: str, entry: str, out: Path, timeout_s: float = 90) -> None:
    import base64
    import json

    import websockets

    async with websockets.connect(ws_url, max_size=None) as ws:
        counter = 0

        async def call(method: str, **params):
            nonlocal counter
            counter += 1
            await ws.send(json.dumps({"id": counter, "method": method, "params": params}))
            while True:
                reply = json.loads(await ws.recv())
                if reply.get("id") == counter:
                    return reply.get("result", {})

        async def until(expression: str) -> None:
            deadline = time.monotonic() + timeout_s
            while time.monotonic() < deadline:
                result = await call("Runtime.evaluate", expression=expression, returnByValue=True)
                if result.get("result", {}).get("value") is True:
                    return
                await asyncio.sleep(0.5)
            raise RuntimeError(f"{url}: timed out waiting for {expression[:60]}")

        await call("Page.enable")
        await call("Page.navigate", url=url)
        await until(CLICK_SHOW_MARKDOWN % json.dumps(entry))
        await until(DIALOG_IMAGE_READY)
        await asyncio.sleep(0.5)  # the dialog's opening transition
        shot = await call("Page.captureScreenshot", format="png")
        out.write_bytes(base64.b64decode(shot["data"]))


def dialog_screenshot(chromium: str, url: str, entry: str, out: Path, size: str) -> None:
    """Open `url`, click the "[Show Markdown]" of metadata entry `entry`, and shoot the dialog."""
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="dreval-chromium-") as profile:
        browser = subprocess.Popen([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={size}",
                                    f"--remote-debugging-port={port}", "about:blank"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ws_url = None
            deadline = time.monotonic() + 30
            while ws_url is None and time.monotonic() < deadline:
                try:
                    targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=2).json()
                    ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
                except (httpx.HTTPError, StopIteration, ValueError):
                    time.sleep(0.3)
            if ws_url is None:
                raise RuntimeError("chromium's DevTools endpoint did not answer")
            asyncio.run(_devtools_shot(ws_url, url, entry, out))
        finally:
            browser.terminate()
            browser.wait(timeout=30)
    shrink(out)
    print(f"{out} ({out.stat().st_size // 1024} KiB)  <- {url} [{entry}]")


def pages(home: Path, port: int) -> list[tuple[str, str]]:
    base = f"http://127.0.0.1:{port}"
    partition = quote(first_partition(home, "claim_verdicts"), safe="")
    return [("leaderboard", f"{base}/assets/leaderboard"),
            ("leaderboard_events", f"{base}/assets/leaderboard?view=events"),
            ("claim_verdicts_partition", f"{base}/assets/claim_verdicts?view=partitions&partition={partition}"),
            ("checks", f"{base}/assets/metric_scores?view=checks"),
            ("runs", f"{base}/runs")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, help="a home filled by `dreval demo` (default: run it in a temp dir)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "screenshots")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--size", default="1400,2000")
    parser.add_argument("--budget-ms", type=int, default=15000, help="virtual time the page gets to render")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dreval-ui-") as tmp:
        home = args.home
        if home is None:
            home = Path(tmp) / "home"
            subprocess.run([sys.executable, "-m", "dreval_assets.cli", "--home", str(home), "demo"], check=True,
                           cwd=ROOT, stdout=subprocess.DEVNULL)
        port = free_port()
        server = start_webserver(home, port, Path(tmp) / "webserver.log")
        try:
            wait_until_loaded(port)
            dismiss_community_prompt(port)
            for name, url in pages(home, port):
                screenshot(args.chromium, url, args.out / f"{name}.png", args.size, args.budget_ms)
            events = f"http://127.0.0.1:{port}/assets/leaderboard?view=events"
            for plot in ("headline_ci", "heatmap", "rank_shifts"):
                dialog_screenshot(args.chromium, events, f"plot_{plot}", args.out / f"plot_{plot}.png", args.size)
        finally:
            server.terminate()
            server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
