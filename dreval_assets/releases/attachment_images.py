"""Image attachments carried with their task, as the data URLs of the bytes a vision judge is sent.

A document attachment becomes text at load time (attachments.py); an image cannot, so the task keeps
the image itself, made judge-ready once here (core/images.for_judge: downscaled, size-capped), and a
vision judge reads it into key facts once per task (task_rubrics). Keeping the bytes in the task
means a changed image changes the task's hash, so only that task's facts are asked again.
"""
from __future__ import annotations

import mimetypes
import re
from pathlib import Path

from ..core.images import MAX_IMAGE_BYTES, UnreadableImage, data_url, for_judge
from .records import ImportLog, read_release_bytes


_OBJECT_REPR_RE = re.compile(r" <[^<>]* at 0x[0-9a-fA-F]+>")  # Pillow names its buffer: not for a log


def is_image(name: str) -> bool:
    return (mimetypes.guess_type(name)[0] or "").startswith("image/")


def read_attachment_images(folder: Path, names: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """(name -> data URL of each readable image attachment, name -> why one could not be read)."""
    images, unreadable = {}, {}
    for name in names:
        if not is_image(name):
            continue
        try:
            shown, mime = for_judge(read_release_bytes(Path(folder), Path(folder) / name, MAX_IMAGE_BYTES + 1))
        except OSError as exc:
            unreadable[name] = f"cannot read: {exc.strerror}"
        except UnreadableImage as exc:
            unreadable[name] = _OBJECT_REPR_RE.sub("", str(exc))
        else:
            images[name] = data_url(shown, mime)
    return images, unreadable


def attachment_images(root: Path, names: list[str], file: str, line: int | None, task: str,
                      log: ImportLog) -> dict[str, str]:
    """The task's image attachments (root-relative names) as data URLs; one note per image that could
    not be read, so a task's evidence never shrinks silently."""
    images, unreadable = read_attachment_images(root, names)
    for name, reason in unreadable.items():
        log.note(file, line, f"task {task}: image attachment {name} left out of the evidence ({reason})")
    return images
