"""Image attachments in the pipeline: the images the task artifacts show a vision judge, and the key
facts read from them as the image's evidence text.

- `task_images`: each task's image attachments, for report judgments that show the task's images.
- `with_image_attachments`: the task artifacts' attachments (task -> name -> text) plus each task's
  image attachments (name -> ImageInput), decoded from the data URLs the registered task carries.
- `with_image_facts`: sandbox corpora plus one `attachment` page per image whose key facts a judge
  read (`task_rubrics` kind `key_facts` with the image's hash): the cited-URL fetcher resolves
  `attachment:<image>` to it, and every claim of a task with attachment evidence is compared with it,
  so a statement the web supports and the image's facts contradict is a conflict. An image without
  facts (the offline judge cannot see it) gives no page: it is no evidence, and the fetcher says so.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

import polars as pl

from ..benchmarks.judging import task_artifacts
from ..core.images import content_hash
from ..core.models import SandboxPage, Task
from ..judges.base import ImageInput
from ..core.images import from_data_url

KEY_FACTS_KIND = "key_facts"


def image_inputs(task: Task) -> dict[str, ImageInput]:
    found = {}
    for name, url in task.attachment_images.items():
        data, mime = from_data_url(url)
        found[name] = ImageInput(name=name, sha256=content_hash(data), mime=mime, data=data)
    return found


def task_images(tasks: Mapping[str, Task]) -> dict[str, list[ImageInput]]:
    """task -> its image attachments as a vision judge is shown them, in attachment order."""
    return {key: list(image_inputs(task).values()) for key, task in tasks.items() if task.attachment_images}


def with_image_attachments(attachments: Mapping[str, Mapping[str, str]],
                           tasks: Iterable[Task]) -> dict[str, dict[str, str | ImageInput]]:
    merged: dict[str, dict[str, str | ImageInput]] = {t: dict(found) for t, found in attachments.items()}
    for task in tasks:
        if task.attachment_images:
            merged.setdefault(task.key, {}).update(image_inputs(task))
    return merged


def image_fact_pages(rubrics: pl.DataFrame | None) -> dict[str, list[SandboxPage]]:
    """task -> one attachment page per image attachment with key facts, in attachment order."""
    pages: dict[str, list[SandboxPage]] = {}
    for task, artifacts in task_artifacts(rubrics, KEY_FACTS_KIND).items():
        for artifact in artifacts:
            if artifact.get("image") and artifact.get("facts"):
                name = artifact["attachment"]
                pages.setdefault(task, []).append(SandboxPage(
                    url=f"attachment:{name}", title=f"{name} (key facts read from the image)", role="attachment",
                    text="\n".join(str(fact) for fact in artifact["facts"])))
    return pages


def with_image_facts(pages: Mapping[str, Sequence[SandboxPage]], rubrics: pl.DataFrame | None,
                     listed_only: bool = False) -> dict[str, list[SandboxPage]]:
    """`pages` plus the image fact pages; with `listed_only`, only for the tasks `pages` lists (the
    tasks whose suites look for evidence beyond their citations)."""
    merged = {task: list(found) for task, found in pages.items()}
    for task, extra in image_fact_pages(rubrics).items():
        if task in merged or not listed_only:
            merged.setdefault(task, []).extend(extra)
    return merged
