"""report_images: each figure of a report with its image found, checked, measured and stored once.

Where an image is looked for: a relative path (or a `file://` URL) in the report's folder (a folder
system's report file's folder; an imported report's `base_dir`), its `images/` and `charts/`, and the
folders holding the task's attachments (an attachment is also found by its file name); never outside
those folders. `data:` URLs are decoded; http(s) URLs come through `fetch/images.RemoteImages`. A
figure is invalid, with its reason, when its image is missing, empty, unreadable, over the cap, not an
image, or when it is a pseudo-visual (Mermaid source, ASCII art, a figure without an image).

After the figures and pseudo-visuals come the cited images (`origin` cited): references whose URL
names an image file, cited by one of the parser's claims (any form of citation marker) and shown by
no figure; the first such claim is the context. A benchmark decides whether they count (MMDR MOSAIC:
yes; TVIR's figures: no).
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence
from urllib.parse import unquote, urlsplit

import polars as pl

from ..benchmarks.judging import FigureImage
from ..environment import max_figures_per_report
from ..core.figure_text import context_around, figure_kind, figure_span, pseudo_visuals
from ..core.images import (MAX_IMAGE_BYTES, ImageMeasure, ImageOverCap, UnreadableImage, for_judge, measure,
                           near_duplicates)
from ..fetch.images import RemoteImages
from ..judges.base import ImageInput
from ..releases.records import open_regular
from ..store.db import Store
from ..store.images import blob_frame, image_blobs, imported_base_dirs, stored_local_figures, task_sources
from ..store.registry import load_systems
from .frames import frame

DEMO_ROOT = Path(__file__).resolve().parents[1] / "demo"  # the bundled demo's release root
IMAGE_FOLDERS = ("images", "charts")  # looked in beside the report
REMOTE_PREFIXES = ("http://", "https://", "//")
_FILE_URL = re.compile(r"^file:(//)?(localhost(?=/))?", re.I)
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):", re.I)


@dataclass(frozen=True)
class ImageRoots:
    """Where one report's images may be read from."""

    report_dir: Path | None = None
    attachment_dirs: tuple[Path, ...] = ()
    attachments: Mapping[str, Path] | None = None  # file name -> the task's attachment file

    def folders(self) -> list[Path]:
        beside = [self.report_dir, *(self.report_dir / name for name in IMAGE_FOLDERS)] if self.report_dir else []
        return [*beside, *self.attachment_dirs]

    def allowed(self) -> list[Path]:
        return [p.resolve() for p in ([self.report_dir] if self.report_dir else []) + list(self.attachment_dirs)]


@dataclass(frozen=True)
class Found:
    """What was found for one figure: bytes (or why there are none) and where."""

    data: bytes | None
    location: str
    reason: str = ""
    na_reason: str | None = None


def attachment_root(source: str | None) -> Path | None:
    """The release root a task was registered from (`demo`, or `import:<benchmark>:<path>`)."""
    if source == "demo":
        return DEMO_ROOT
    if source and source.startswith("import:"):
        path = Path(source.split(":", 2)[2]) if source.count(":") >= 2 else None
        if path is not None and path.exists():
            return path if path.is_dir() else path.parent
    return None


def task_roots(attachments: Sequence[str] | None, source: str | None) -> tuple[tuple[Path, ...], dict[str, Path]]:
    """(folders holding the task's local attachments, file name -> attachment file)."""
    root = attachment_root(source)
    if root is None:
        return (), {}
    files = [root / name for name in attachments or [] if not name.lower().startswith(REMOTE_PREFIXES)]
    files = [f for f in files if f.is_file()]
    return tuple(dict.fromkeys(f.parent for f in files)), {f.name: f for f in files}


def report_dir(row: Mapping, kind: str | None, base_dir: str | None) -> Path | None:
    """The folder a report's relative image paths start from (None: it has none, e.g. an endpoint's)."""
    if kind == "imported":
        return Path(base_dir) if base_dir else None
    if kind == "folder" and row.get("source_path"):
        return Path(row["source_path"]).parent
    return None


def image_roots(store: Store, reports: pl.DataFrame, tasks: pl.DataFrame) -> dict[tuple[str, str], ImageRoots]:
    """Where each report's images may be read from: its folder and its task's attachment folders."""
    systems = load_systems(store)
    keys = [(r["system"], r["task"]) for r in reports.iter_rows(named=True)]
    base_dirs = imported_base_dirs(store, [k for k in keys if getattr(systems.get(k[0]), "kind", "") == "imported"])
    sources = task_sources(store, tasks.get_column("task").to_list())
    attached = {t: task_roots(a, sources.get(t)) for t, a in tasks.select("task", "attachments").iter_rows()}
    roots = {}
    for row in reports.iter_rows(named=True):
        key = (row["system"], row["task"])
        entry = systems.get(row["system"])
        dirs, by_name = attached.get(row["task"], ((), {}))
        roots[key] = ImageRoots(report_dir(row, entry.kind if entry else None, base_dirs.get(key)), dirs, by_name)
    return roots


def locate_local(src: str, roots: ImageRoots) -> Found:
    """The file a local image source names, read (bounded), or why there is none."""
    path = unquote(_FILE_URL.sub("", src).split("#", 1)[0].split("?", 1)[0]).strip()
    if "\x00" in path:  # `%00`: no file system names it, and asking one raises
        return Found(None, "", f"refused: {src} names no file (a NUL byte in the path)", "model_failure")
    if not roots.folders() and not roots.attachments:
        return Found(None, "", f"missing file: {src} (the report has no folder to look in)", "model_failure")
    allowed = roots.allowed()
    name = Path(path).name
    candidates = [Path(path)] if Path(path).is_absolute() else [folder / path for folder in roots.folders()]
    candidates += [folder / name for folder in roots.folders()]
    if roots.attachments and name in roots.attachments:
        candidates.append(roots.attachments[name])
    refused = False
    for candidate in dict.fromkeys(candidates):
        try:
            resolved = candidate.resolve()
        except (OSError, RuntimeError, ValueError):
            continue
        if not any(resolved.is_relative_to(root) for root in allowed):  # both resolved: links followed
            refused = True  # `..` or an absolute path leading out of the report's folders
            continue
        if resolved.is_file():
            return _read_file(resolved, _where(resolved, roots))
    if refused:
        return Found(None, "", f"refused: {src} is outside the report's folders", "model_failure")
    looked = (["the report's folder", *(f"{f}/" for f in IMAGE_FOLDERS)] if roots.report_dir else []) + (
        ["the task's attachments"] if roots.attachment_dirs else [])
    return Found(None, "", f"missing file: {src} (looked in {', '.join(looked)})", "model_failure")


def _where(path: Path, roots: ImageRoots) -> str:
    """Where a file was found, relative to the folder it was found under (no machine path)."""
    for label, root in (("report folder", roots.report_dir), *(("attachments", d) for d in roots.attachment_dirs)):
        real = root.resolve() if root is not None else None
        if real is not None and path.is_relative_to(real):
            return f"{label}: {path.relative_to(real).as_posix()}"
    return path.name


def _read_file(path: Path, location: str) -> Found:
    try:
        size = path.stat().st_size
        if size > MAX_IMAGE_BYTES:
            return Found(None, location, f"file over the {MAX_IMAGE_BYTES:,}-byte cap ({size:,} bytes)",
                         "model_failure")
        with open_regular(path) as handle:  # no named pipe, even one swapped in after the check
            return Found(handle.read(MAX_IMAGE_BYTES + 1), location)
    except OSError as exc:
        return Found(None, location, f"unreadable file: {exc.strerror or exc}", "model_failure")


def decode_data_url(src: str) -> Found:
    head, _, payload = src.partition(",")
    if not head.lower().endswith(";base64"):
        return Found(None, "data URL", "data URL is not base64 image data", "model_failure")
    try:
        return Found(base64.b64decode(payload, validate=False), "data URL")
    except (binascii.Error, ValueError):
        return Found(None, "data URL", "data URL does not decode", "model_failure")


def find_image(src: str, roots: ImageRoots, remote: Mapping[str, object]) -> Found:
    """The bytes a figure's src names, wherever the rules allow, or why there are none."""
    src = src.strip().strip("<>")
    lowered = src.lower()
    if lowered.startswith("data:"):
        return decode_data_url(src)
    if lowered.startswith(REMOTE_PREFIXES):
        got = remote.get(src)
        if got is None:
            return Found(None, src, "remote image not fetched", "pipeline_failure")
        return Found(got.data, f"{got.backend}: {src}", got.detail if got.status != "ok" else "", got.na_reason)
    scheme = _SCHEME.match(src)
    if scheme and not lowered.startswith("file:") and len(scheme.group(1)) > 1:  # `C:` is a drive, not a scheme
        return Found(None, "", f"unsupported image source scheme {scheme.group(1).lower()!r}", "model_failure")
    return locate_local(src, roots)


def remote_url(src: str) -> str | None:
    src = src.strip().strip("<>")
    if src.startswith("//"):
        return "https:" + src
    return src if src.lower().startswith(("http://", "https://")) else None


def find_report_images(reports: pl.DataFrame, parsed: pl.DataFrame, roots: Mapping[tuple[str, str], ImageRoots],
                       remote: RemoteImages, claims: pl.DataFrame | None = None) -> dict[str, pl.DataFrame]:
    """`report_images` rows (one per figure the parser found, then the report's pseudo-visuals, then the
    images its claims cite: `claims`, the parser's report_claims) and the `image_blobs` of every
    readable image."""
    texts = {(r["system"], r["task"]): r["text"] or "" for r in reports.iter_rows(named=True)}
    figures_of = {(r["system"], r["task"]): json.loads(r["figures"] or "[]") for r in parsed.iter_rows(named=True)}
    references_of = {(r["system"], r["task"]): json.loads(r["references"] or "[]") for r in parsed.iter_rows(named=True)}
    claims_of = _claims_of(claims, {key for key, refs in references_of.items() if any(_image_url(ref) for ref in refs)})
    cited_of = {key: cited_images(refs, figures_of[key], claims_of.get(key, [])) for key, refs in references_of.items()}
    srcs = {src: url for figures in figures_of.values() for f in figures
            if (url := remote_url(src := (f.get("src") or "").strip().strip("<>")))}
    srcs.update({ref["url"]: ref["url"] for refs in cited_of.values() for ref in refs})
    answers = remote.get_many(list(srcs.values())) if srcs else {}
    fetched = {src: answers[url] for src, url in srcs.items()}
    rows, blobs = [], []
    for key, figures in figures_of.items():
        report_rows, report_blobs = _report_rows(key, texts.get(key, ""), figures, roots.get(key, ImageRoots()),
                                                 fetched, cited_of.get(key, []))
        rows.extend(report_rows)
        blobs.extend(report_blobs)
    return {"report_images": frame("report_images", rows), "image_blobs": blob_frame(blobs)}


IMAGE_URL = re.compile(r"\.(?:png|jpe?g|gif|webp|bmp|tiff?)$", re.I)  # a URL whose path names an image file


def cited_images(references: list[dict], figures: list[dict], claims: Sequence[dict]) -> list[dict]:
    """The references whose URL is an image (by its path's extension), cited by one of the report's
    claims (the parser's, which read every form of citation marker) and shown by none of its figures:
    the claim speaks of a visual (MMDR MOSAIC judges it), and is its context."""
    shown = {remote_url((f.get("src") or "").strip()) for f in figures}
    found, seen = [], set()
    for ref in references:
        url = _image_url(ref)
        if not url or url in shown or url in seen:
            continue
        citing = next((c for c in claims if ref.get("index") in (c["citation_indices"] or ())), None)
        if citing is not None:  # listed but cited by no claim: nothing in the report speaks of it
            seen.add(url)
            found.append({"index": ref["index"], "url": url, "title": str(ref.get("title") or ""),
                          "context": citing["text"]})
    return found


def _image_url(reference: dict) -> str | None:
    """The reference's URL when its path names an image file."""
    url = remote_url(str(reference.get("url") or ""))
    return url if url and IMAGE_URL.search(urlsplit(url).path) else None


def _claims_of(claims: pl.DataFrame | None, keys: set[tuple[str, str]]) -> dict[tuple[str, str], list[dict]]:
    """The claim rows of these reports only (those citing an image URL are all `cited_images` reads):
    the rows of every report, made Python dicts, were ~0.15 s of a 100-report step."""
    found: dict[tuple[str, str], list[dict]] = {}
    if claims is None or not keys:
        return found
    near = claims.filter(pl.col("system").is_in([k[0] for k in keys]) & pl.col("task").is_in([k[1] for k in keys]))
    for c in near.iter_rows(named=True):  # a filter keeps the claims' order: the first citing claim is the context
        if (c["system"], c["task"]) in keys:
            found.setdefault((c["system"], c["task"]), []).append(c)
    return found


def _report_rows(key: tuple[str, str], text: str, figures: list[dict], roots: ImageRoots,
                 fetched: Mapping[str, object], cited: Sequence[dict] = ()) -> tuple[list[dict], list[tuple[bytes, str]]]:
    system, task = key
    rows, blobs, after = [], [], 0
    for index, figure in enumerate(figures):
        src, caption = (figure.get("src") or "").strip(), figure.get("caption") or ""
        span = figure_span(text, src, caption, after) or figure_span(text, src, caption)
        after = span[1] if span else after
        row = {"system": system, "task": task, "figure": index, "src": src, "caption": caption,
               "section": figure.get("section") or "", "citation_indices": figure.get("citation_indices") or [],
               "context": context_around(text, span), "kind": figure_kind(src, caption)}
        if not src:
            rows.append(_invalid(row, "figure has no image (no src)", "model_failure"))
            continue
        found = find_image(src, roots, fetched)
        rows.append(_measured(row, found, blobs))
    for offset, pseudo in enumerate(pseudo_visuals(text)):
        row = {"system": system, "task": task, "figure": len(figures) + offset, "src": "", "caption": pseudo.caption,
               "section": "", "citation_indices": [], "context": context_around(text, (pseudo.start, pseudo.end)),
               "kind": pseudo.kind}
        rows.append(_invalid({**row, "origin": "pseudo"}, f"pseudo-visual: {pseudo.what} in a code block, not an "
                             "image", "model_failure", location=f"text: characters {pseudo.start}-{pseudo.end}"))
    for ref in cited:
        row = {"system": system, "task": task, "figure": len(rows), "src": ref["url"], "caption": ref["title"],
               "section": "", "citation_indices": [ref["index"]], "context": ref["context"],
               "kind": figure_kind(ref["url"], ref["title"]), "origin": "cited"}
        rows.append(_measured(row, find_image(ref["url"], roots, fetched), blobs))
    duplicates = near_duplicates([r["phash"] for r in rows])
    for row, duplicate in zip(rows, duplicates):
        row["duplicate_of"] = rows[duplicate]["figure"] if duplicate is not None else None
    return rows, blobs


def _measured(row: dict, found: Found, blobs: list[tuple[bytes, str]]) -> dict:
    if found.data is None:
        return _invalid(row, found.reason, found.na_reason or "model_failure", location=found.location)
    image_hash = hashlib.sha256(found.data).hexdigest()
    if not found.data:
        return _invalid(row, "empty file", "model_failure", location=found.location, image_hash=image_hash)
    try:
        m = measure(found.data)
    except ImageOverCap as exc:  # our limit: never the report's fault
        return _invalid(row, str(exc), "pipeline_failure", location=found.location, image_hash=image_hash)
    except UnreadableImage as exc:
        return _invalid(row, f"unreadable image: {exc}", "model_failure", location=found.location,
                        image_hash=image_hash)
    blobs.append((found.data, m.mime))
    return {**row, "status": "ok", "invalid_reason": "", "na_reason": None, "location": found.location,
            "image_hash": m.sha256, "width": m.width, "height": m.height, "sharpness": m.sharpness,
            "contrast": m.contrast, "phash": m.phash, "duplicate_of": None}


def _invalid(row: dict, reason: str, na_reason: str, location: str = "", image_hash: str | None = None) -> dict:
    return {**row, "status": "invalid", "invalid_reason": reason, "na_reason": na_reason, "location": location,
            "image_hash": image_hash, "width": None, "height": None, "sharpness": None, "contrast": None,
            "phash": None, "duplicate_of": None}


# -- what report judgments are given --------------------------------------------------------

def figure_images(report_images: pl.DataFrame, blobs: Mapping[str, tuple[str, bytes]],
                  max_figures: int | None = None) -> dict[tuple[str, str], list[FigureImage]]:
    """(system, task) -> its figures in order, each valid one with the bytes a judge is sent
    (`core/images.for_judge` of the stored image). Only the first `max_figures` usable figures of a
    report (DREVAL_MAX_FIGURES_PER_REPORT) go to a judge: each costs one to three vision calls, so a
    report of hundreds would cost hundreds; the rest are N/A, our limit (`pipeline_failure`), and say
    how many the report has."""
    cap = max_figures_per_report() if max_figures is None else max_figures
    ok = report_images.filter(pl.col("status") == "ok")
    usable = {(s, t): n for s, t, n in ok.group_by("system", "task").len().iter_rows()}
    judged: Counter = Counter()
    found: dict[tuple[str, str], list[FigureImage]] = {}
    for r in report_images.sort("system", "task", "figure").iter_rows(named=True):
        status, reason, image, m = r["status"], r["invalid_reason"], None, None
        bucket = r["na_reason"] or "pipeline_failure"
        key = (r["system"], r["task"])
        if status == "ok" and judged[key] >= cap:
            status, bucket = "invalid", "pipeline_failure"
            reason = (f"over the cap of {cap} figures per report (DREVAL_MAX_FIGURES_PER_REPORT): the report has "
                      f"{usable[key]} usable figures and its first {cap} are judged")
        elif status == "ok":
            judged[key] += 1
            stored = blobs.get(r["image_hash"])
            try:
                if stored is None:
                    raise UnreadableImage("stored image bytes not found")
                data, mime = for_judge(stored[1])
                m = ImageMeasure(r["width"], r["height"], stored[0], len(stored[1]), r["image_hash"],
                                 r["sharpness"], r["contrast"], r["phash"])
                image = ImageInput(name=r["src"], sha256=r["image_hash"], mime=mime, data=data)
            except UnreadableImage as exc:
                status, reason = "invalid", f"unreadable image: {exc}"
        found.setdefault(key, []).append(FigureImage(
            system=r["system"], task=r["task"], figure=r["figure"], src=r["src"], caption=r["caption"],
            section=r["section"], citation_indices=tuple(r["citation_indices"] or ()), context=r["context"],
            kind=r["kind"], status=status, invalid_reason=reason, measure=m, duplicate_of=r["duplicate_of"],
            image=image, invalid_bucket=None if status == "ok" else bucket, origin=r.get("origin") or "figure"))
    return found


def judgment_figures(store: Store, report_images: pl.DataFrame) -> dict[tuple[str, str], list[FigureImage]]:
    """`figure_images` with the stored bytes of these figures."""
    hashes = report_images.filter(pl.col("status") == "ok").get_column("image_hash").to_list()
    return figure_images(report_images, image_blobs(store, hashes))


# -- the planner: has an image file beside a folder system's report changed? ---------------------

def changed_local_images(stored: pl.DataFrame) -> set[tuple[str, str]]:
    """Partitions whose local image files hash differently now (changed, appeared or gone) than when
    `report_images` was materialised (`stored`: store/images.stored_local_figures)."""
    changed, roots = set(), {}
    for r in stored.iter_rows(named=True):
        key = (r["system"], r["task"])
        if key in changed:
            continue
        if key not in roots:
            dirs, by_name = task_roots(r["attachments"], r["source"])
            roots[key] = ImageRoots(report_dir(r, "folder", None), dirs, by_name)
        found = locate_local(r["src"], roots[key])
        now = hashlib.sha256(found.data).hexdigest() if found.data is not None else None
        if now != r["image_hash"]:
            changed.add(key)
    return changed


def changed_image_partitions(store: Store) -> set[tuple[str, str]]:
    """The planner's question: which folder systems' partitions have an image file that changed."""
    return changed_local_images(stored_local_figures(store))
