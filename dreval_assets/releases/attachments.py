"""The evidence text of a task's attachments: documents are extracted, media are left to a vision judge."""
from __future__ import annotations

import mimetypes
from pathlib import Path

from .records import ImportLog, read_release_bytes


def read_attachments(folder: Path, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> text of the attachments we can read as evidence, name -> why one could not be read).
    Images, audio and video are in neither: they are not text evidence (a vision judge sees them).
    Names are relative to `folder`, the release: a file that leads outside it is not read."""
    from ..fetch.extract import extract_page

    texts, unreadable = {}, {}
    for name in names:
        media = mimetypes.guess_type(name)[0] or ""
        if media.startswith(("image/", "audio/", "video/")):
            continue
        try:
            body = read_release_bytes(Path(folder), Path(folder) / name)
        except OSError as exc:
            unreadable[name] = f"cannot read: {exc.strerror}"
            continue
        page = extract_page(body, media or None, name)
        if page.status == "ok":
            texts[name] = page.text
        else:
            unreadable[name] = page.detail
    return texts, unreadable


def attachment_texts(root: Path, names: list[str], file: str, line: int | None, task: str,
                     log: ImportLog) -> dict[str, str]:
    """The text of the task's readable attachments (root-relative names); one note per attachment
    that could not be read, so a task's evidence never shrinks silently."""
    texts, unreadable = read_attachments(root, names)
    for name, reason in unreadable.items():
        log.note(file, line, f"task {task}: attachment {name} left out of the evidence ({reason})")
    return texts
