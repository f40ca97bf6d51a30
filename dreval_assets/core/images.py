"""Images measured, compared and made ready for a vision judge (Pillow and numpy; no judge here).

- `measure(data)`: dimensions, sharpness (variance of a Laplacian of the grey image), RMS contrast
  and a perceptual hash (`perceptual_hash`); raises `UnreadableImage` for bytes Pillow cannot decode.
- `image_quality(m)`: TVIR's per-image Q = 0.25·resolution + 0.15·aspect + 0.35·sharpness + 0.25·contrast
  (methods/tvir.md), each part normalised to [0, 1] by the scales below (ours, documented).
- `near_duplicates(hashes)`: which images repeat an earlier one (perceptual-hash distance).
- `for_judge(data)`: the bytes a judge is sent: downscaled so the longer side fits and re-encoded when
  over the byte cap.

An image is refused before it is decoded when its header gives more pixels than DREVAL_MAX_IMAGE_PIXELS
(a one-colour PNG of 13,000 x 13,000 px is 657 KB on disk and 2.7 GB decoded), and decoded at most once
per process: `measure` and `for_judge` of the same bytes come from one decode, kept by content hash.
"""
from __future__ import annotations

import base64
import hashlib
import io
import threading
import warnings
from collections import OrderedDict
from dataclasses import asdict, dataclass

import numpy as np
from PIL import Image, ImageFilter, ImageStat, UnidentifiedImageError

from ..environment import max_image_pixels

MAX_IMAGE_BYTES = 20_000_000  # refused above this when read (a report's image, an attachment, a page)
JUDGE_MAX_SIDE = 1024  # longer side sent to a vision judge
JUDGE_MAX_BYTES = 1_500_000  # re-encoded as JPEG when the downscaled PNG is still over this
DECODED_CACHE_BYTES = 256_000_000  # what the per-process cache of decode results may hold (judge bytes)
DUPLICATE_DISTANCE = 6  # pHash Hamming distance (of 64 bits) at or under which two images are the same figure

# Normalisation of the IQ parts (ours): full marks at these values, linear below.
FULL_RESOLUTION_PIXELS = 800 * 600
FULL_SHARPNESS = 400.0  # Laplacian variance of a crisp chart or photo at judge size
FULL_CONTRAST = 0.25  # RMS contrast of grey levels in [0, 1]
ASPECT_RANGE = (0.5, 2.5)  # width / height outside this loses credit


class UnreadableImage(ValueError):
    """Bytes that are not an image Pillow can decode (or too large to read)."""


class ImageOverCap(UnreadableImage):
    """An image with more pixels than DREVAL_MAX_IMAGE_PIXELS: our limit, not a fault of the image."""


@dataclass(frozen=True)
class ImageMeasure:
    width: int
    height: int
    mime: str
    n_bytes: int
    sha256: str
    sharpness: float  # variance of the Laplacian of the grey image, at most JUDGE_MAX_SIDE on the long side
    contrast: float  # RMS contrast: standard deviation of grey levels in [0, 1]
    phash: str  # 64-bit perceptual hash, hex

    def as_row(self) -> dict:
        return asdict(self)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _open(data: bytes) -> Image.Image:
    if len(data) > MAX_IMAGE_BYTES:
        raise UnreadableImage(f"image of {len(data):,} bytes is over the {MAX_IMAGE_BYTES:,}-byte limit")
    if not data:
        raise UnreadableImage("empty file")
    try:
        with warnings.catch_warnings():  # over Pillow's warning size: our own cap decides, below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data))  # lazy: the header only
        width, height = image.size
        cap = max_image_pixels()
        if width * height > cap:
            raise ImageOverCap(f"image of {width:,} x {height:,} pixels is over the cap of {cap:,} pixels "
                               f"(DREVAL_MAX_IMAGE_PIXELS): refused without decoding it")
        image.load()
    except (UnidentifiedImageError, OSError, Image.DecompressionBombError, SyntaxError, ValueError) as exc:
        if isinstance(exc, UnreadableImage):
            raise
        raise UnreadableImage(f"not a readable image: {type(exc).__name__}: {str(exc)[:120]}") from exc
    return image


@dataclass(frozen=True)
class _Decoded:
    """What one decode of an image gave: its measures and the bytes a judge is sent, or why it failed."""

    measure: ImageMeasure | None
    judge: tuple[bytes, str] | None
    error: UnreadableImage | None = None

    def check(self) -> None:
        if self.error is not None:
            raise type(self.error)(str(self.error))


class _DecodedCache:
    """Decode results by content hash, least recently used dropped beyond DECODED_CACHE_BYTES: the
    same image in several reports, repeated in one, or read by two stages is decoded once."""

    def __init__(self, budget: int):
        self.budget, self.used, self.lock = budget, 0, threading.Lock()
        self.entries: OrderedDict[str, _Decoded] = OrderedDict()

    def get(self, data: bytes) -> _Decoded:
        key = f"{content_hash(data)}:{max_image_pixels()}"  # a changed cap decides again
        with self.lock:
            if key in self.entries:
                self.entries.move_to_end(key)
                return self.entries[key]
        found = _decode(data)
        size = len(found.judge[0]) if found.judge else 0
        with self.lock:
            if key not in self.entries:
                self.entries[key] = found
                self.used += size
            while self.used > self.budget and len(self.entries) > 1:
                _, dropped = self.entries.popitem(last=False)
                self.used -= len(dropped.judge[0]) if dropped.judge else 0
        return found


def _decode(data: bytes) -> _Decoded:
    try:
        image = _open(data)
        measured, judge = _measure(image, data), _judge_bytes(image, data, JUDGE_MAX_SIDE, JUDGE_MAX_BYTES)
    except UnreadableImage as exc:
        return _Decoded(None, None, exc)
    # a judge reading this image's kind asks for its background share (TVIR, MOSAIC): measured now from
    # the decoded image, not decoded again by the judge step's threads all at once; only for bytes a
    # judge is sent unchanged, so the share is of the same bytes whoever asks first
    if judge[0] is data and measured.sha256 not in _BACKGROUND_SHARES:
        _BACKGROUND_SHARES[measured.sha256] = _share_of(image)
    return _Decoded(measured, judge)


_DECODED = _DecodedCache(DECODED_CACHE_BYTES)


def _grey(image: Image.Image) -> Image.Image:
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        background = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(background, image)
    grey = image.convert("L")
    if max(grey.size) > JUDGE_MAX_SIDE:
        grey.thumbnail((JUDGE_MAX_SIDE, JUDGE_MAX_SIDE))
    return grey


def measure(data: bytes) -> ImageMeasure:
    found = _DECODED.get(data)
    found.check()
    return found.measure


def _measure(image: Image.Image, data: bytes) -> ImageMeasure:
    grey = _grey(image)
    laplacian = grey.filter(ImageFilter.Kernel((3, 3), (0, 1, 0, 1, -4, 1, 0, 1, 0), scale=1, offset=128))
    sharpness = ImageStat.Stat(laplacian).var[0]
    contrast = ImageStat.Stat(grey).stddev[0] / 255
    mime = Image.MIME.get(image.format or "", "application/octet-stream")
    return ImageMeasure(image.width, image.height, mime, len(data), content_hash(data), round(sharpness, 3),
                        round(contrast, 4), perceptual_hash(grey))


def resolution_score(width: int, height: int) -> float:
    return min(1.0, width * height / FULL_RESOLUTION_PIXELS)


def aspect_score(width: int, height: int) -> float:
    """1 inside ASPECT_RANGE; outside, the ratio of the bound to the aspect (or its inverse)."""
    if not width or not height:
        return 0.0
    aspect, (low, high) = width / height, ASPECT_RANGE
    if aspect < low:
        return aspect / low
    if aspect > high:
        return high / aspect
    return 1.0


def image_quality(m: ImageMeasure) -> float:
    """TVIR's Q for one image, in [0, 1]."""
    return (0.25 * resolution_score(m.width, m.height) + 0.15 * aspect_score(m.width, m.height)
            + 0.35 * min(1.0, m.sharpness / FULL_SHARPNESS) + 0.25 * min(1.0, m.contrast / FULL_CONTRAST))


def background_share(data: bytes, sha256: str | None = None) -> float:
    """Share of a small copy of the image covered by its commonest colour: drawn graphics (charts,
    diagrams, rendered tables) have a flat background (0.5-0.85 on the demo's), photos almost none
    (under 0.1). 0.0 for bytes that are not an image. Measured once per image content (TVIR asks at
    every judge run, MOSAIC at every routing); a float per image is kept, never the image. `sha256`:
    a content hash standing for these bytes when the caller has one (a judge's image carries its stored
    image's, which its bytes are made from), so the bytes are not hashed again at every ask."""
    key = sha256 or content_hash(data)
    share = _BACKGROUND_SHARES.get(key)
    if share is None:
        share = _BACKGROUND_SHARES[key] = _measured_background_share(data)
    return share


_BACKGROUND_SHARES: dict[str, float] = {}


def _measured_background_share(data: bytes) -> float:
    try:
        image = _open(data)
    except UnreadableImage:
        return 0.0
    return _share_of(image)


def _share_of(image: Image.Image) -> float:
    image = image.convert("RGB")
    image.thumbnail((256, 256))
    colours = image.getcolors(image.width * image.height) or []
    return max(n for n, _ in colours) / (image.width * image.height) if colours else 0.0


# pHash (Zauner's perceptual hash, as the common `phash` of 64 bits is made): the grey image at 32 x 32,
# its two-dimensional DCT-II, and of the 8 x 8 lowest frequencies each bit says "above their median".
_PHASH_SIDE, _PHASH_BITS_SIDE = 32, 8
_DCT_ROWS = np.cos(np.pi * np.outer(np.arange(_PHASH_BITS_SIDE), 2 * np.arange(_PHASH_SIDE) + 1) / (2 * _PHASH_SIDE))


def perceptual_hash(grey: Image.Image) -> str:
    """The 64-bit pHash of a grey image, as 16 hex digits (row by row, first bit highest). Only the low
    frequencies are computed (a matrix product, not an FFT library); they are rounded so a flat image's
    coefficients are zeros, not rounding noise that would decide its bits."""
    pixels = np.asarray(grey.resize((_PHASH_SIDE, _PHASH_SIDE), Image.Resampling.LANCZOS), dtype=np.float64)
    low = np.round(_DCT_ROWS @ pixels @ _DCT_ROWS.T, 6)
    bits = (low > np.median(low)).ravel()
    return f"{int(''.join('1' if bit else '0' for bit in bits), 2):016x}"


def hash_distance(a: str, b: str) -> int:
    """Hamming distance of two hex perceptual hashes."""
    return (int(a, 16) ^ int(b, 16)).bit_count()


def near_duplicates(phashes: list[str | None], max_distance: int = DUPLICATE_DISTANCE) -> list[int | None]:
    """For each image, the index of an earlier image it repeats (distance <= max_distance), else None."""
    found: list[int | None] = []
    for i, h in enumerate(phashes):
        match = None
        if h:
            match = next((j for j in range(i) if phashes[j] and hash_distance(h, phashes[j]) <= max_distance), None)
        found.append(match)
    return found


def duplicate_penalty(n_images: int, n_duplicates: int) -> float:
    """p_dup = min(0.5, 0.8 × duplicate ratio) (the reference code's rule, methods/tvir.md)."""
    return min(0.5, 0.8 * n_duplicates / n_images) if n_images else 0.0


def for_judge(data: bytes, max_side: int = JUDGE_MAX_SIDE, max_bytes: int = JUDGE_MAX_BYTES) -> tuple[bytes, str]:
    """The image as a judge is sent it: unchanged when it is a PNG/JPEG/WebP/GIF within both caps, else
    downscaled to `max_side` and PNG, or JPEG when the PNG is still over `max_bytes`."""
    if (max_side, max_bytes) == (JUDGE_MAX_SIDE, JUDGE_MAX_BYTES):
        found = _DECODED.get(data)
        found.check()
        return found.judge
    return _judge_bytes(_open(data), data, max_side, max_bytes)


def _judge_bytes(image: Image.Image, data: bytes, max_side: int, max_bytes: int) -> tuple[bytes, str]:
    mime = Image.MIME.get(image.format or "", "")
    if max(image.size) <= max_side and len(data) <= max_bytes and mime in (
            "image/png", "image/jpeg", "image/webp", "image/gif"):
        return data, mime
    image = image.convert("RGBA" if image.mode in ("RGBA", "LA", "P") else "RGB")
    image.thumbnail((max_side, max_side))
    out = io.BytesIO()
    image.save(out, "PNG", optimize=True)
    if out.tell() <= max_bytes:
        return out.getvalue(), "image/png"
    out = io.BytesIO()
    image.convert("RGB").save(out, "JPEG", quality=85)
    return out.getvalue(), "image/jpeg"


def data_url(data: bytes, mime: str) -> str:
    """`data:<mime>;base64,...`: how an image travels in a prompt, a task record or Markdown."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def from_data_url(url: str) -> tuple[bytes, str]:
    """(bytes, mime) of a `data:<mime>;base64,...` URL; ValueError for anything else."""
    head, sep, body = url.partition(",")
    if not (sep and head.startswith("data:") and head.endswith(";base64")):
        raise ValueError("not a base64 data URL")
    return base64.b64decode(body, validate=True), head[len("data:"):-len(";base64")]
