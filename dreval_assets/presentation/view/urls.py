"""Where each page of the results view lives: paths relative to the view's root, the same for the
server and the static export, and the absolute URL the Dagster UI links to."""
from __future__ import annotations

import os

DEFAULT_PORT = 8765
BASE_URL_ENV = "DREVAL_VIEW_URL"  # where `dreval view` is reached, for the links in the Dagster UI
IMAGE_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp",
                    "image/svg+xml": "svg", "image/bmp": "bmp"}


def index_path() -> str:
    return "index.html"


def system_path(system: str) -> str:
    return f"systems/{system}.html"


def report_path(system: str, task: str) -> str:
    return f"reports/{system}/{task}.html"


def compare_path(task: str, first: str, second: str) -> str:
    return f"compare/{task}/{first}/{second}.html"


def image_path(image_hash: str, mime: str | None) -> str:
    return f"images/{image_hash}.{IMAGE_EXTENSIONS.get(mime or '', 'bin')}"


def plot_path(name: str) -> str:
    return f"plots/{name}.png"


def view_base_url() -> str:
    return os.environ.get(BASE_URL_ENV, f"http://127.0.0.1:{DEFAULT_PORT}").rstrip("/")


def report_url(system: str, task: str) -> str:
    """The absolute URL of a system x task partition's page, as the Dagster UI links it."""
    return f"{view_base_url()}/{report_path(system, task)}"


def root_of(path: str) -> str:
    """The relative prefix from a page back to the view's root (`../../` for reports/a/b.html)."""
    return "../" * path.count("/")
