"""`dreval view --export DIR`: every page of the view, and the images and plots they show, as files
whose links are relative, so the folder opens from the file system (or any static host) with no server."""
from __future__ import annotations

from pathlib import Path

from .pages import Site


def export(site: Site, folder: Path) -> int:
    """Write every path of the site under `folder`; returns how many files were written."""
    written = 0
    with site.reading():
        for path in site.paths():
            page = site.page(path)
            if page is None:
                continue
            target = folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(page.body)
            written += 1
    return written
