"""A report file's bytes as text, one rule for folder systems and imports: a size limit
(DREVAL_REPORT_MAX_BYTES, said in the message), binary refused, any text encoding read.

Reports are not always UTF-8 (a Latin-1 or cp1252 export, a GBK one from a Chinese system). They
are decoded as the fetcher decodes pages with no declared charset (a BOM, UTF-8, charset-normalizer's
guess, cp1252) and the codec used is reported as a warning, so nothing is refused for its encoding
and nothing is decoded silently.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..environment import report_max_bytes
from .records import RefusedFile, open_regular, open_release_file

SNIFF_BYTES = 8192  # NUL bytes this early mean a binary file, not text
# Latin code pages a detector confuses on short texts (one accented letter decides): the benchmarks'
# reports are English or Chinese, so when the bytes are valid cp1252 that reading wins ("Señor", not
# cp1250's "Seńor"); so it does over a UTF-16/32 guess without a BOM (a few bytes of "café" can pass
# for UTF-16). Cyrillic, Greek and CJK guesses are kept.
_LATIN_NEIGHBOURS = {"cp1250", "cp1254", "cp1257", "iso8859-2", "iso8859-4", "iso8859-9", "iso8859-13",
                     "iso8859-15", "mac-latin2", "mac-roman"}
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")  # UTF-16/32 text has NUL bytes and is still text


@dataclass(frozen=True)
class ReportText:
    status: str  # ok | binary | unreadable | empty | refused
    text: str | None
    detail: str = ""  # why it was refused; on an ok report, a warning (the encoding it was decoded from)

    @property
    def na_reason(self) -> str | None:
        """Whose fault a refusal is: binary or empty is the system's output, and so is a file that
        leads out of its folder or is no regular file (as an image outside the report's folders);
        over our size limit, or a file we cannot open, is ours."""
        return None if self.status == "ok" else "pipeline_failure" if self.status == "unreadable" else "model_failure"


def read_report_file(path: Path, max_bytes: int | None = None, root: Path | None = None,
                     what: str = "the release") -> ReportText:
    """The report at `path`, reading no more than the limit (plus one byte, to know it is over). Only
    a regular file is read, and with `root` (the release or the system's folder) only one that stays
    inside it, links followed: a link to a file elsewhere is refused, never read."""
    limit = report_max_bytes() if max_bytes is None else max_bytes
    try:
        with (open_release_file(root, path, what) if root is not None else open_regular(path)) as handle:
            data = handle.read(limit + 1)
    except RefusedFile as exc:
        return ReportText("refused", None, f"report {exc.strerror}")
    except OSError as exc:
        return ReportText("unreadable", None, f"cannot read report: {exc.strerror or exc}")
    return decode_report_bytes(data, limit)


def decode_report_bytes(data: bytes, max_bytes: int | None = None) -> ReportText:
    limit = report_max_bytes() if max_bytes is None else max_bytes
    if len(data) > limit:
        return ReportText("unreadable", None, f"report is larger than the {limit:,}-byte limit "
                                              f"(DREVAL_REPORT_MAX_BYTES)")
    if b"\x00" in data[:SNIFF_BYTES] and not data.startswith(_WIDE_BOMS):
        return ReportText("binary", None, "report file is binary (NUL bytes), not text")
    text, warning = decode_text(data)
    if not text.strip():
        return ReportText("empty", None, "report is empty")
    return ReportText("ok", text, warning)


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, warning): strict UTF-8 (BOM or not) gives no warning; anything else is decoded with
    detection and the warning names the encoding used."""
    try:
        return data.decode("utf-8-sig"), ""
    except UnicodeDecodeError as exc:
        from ..fetch.extract import decode_bytes

        text, codec = decode_bytes(data)
        wide_without_bom = codec.startswith(("utf-16", "utf-32")) and not data.startswith(_WIDE_BOMS)
        if codec in _LATIN_NEIGHBOURS or wide_without_bom:
            try:
                text, codec = data.decode("cp1252"), "cp1252"
            except UnicodeDecodeError:
                pass  # bytes cp1252 leaves undefined: the detector's reading stands
        return text, encoding_warning(codec, exc)


def encoding_warning(codec: str, error: UnicodeDecodeError) -> str:
    return f"not UTF-8 ({error.reason} at byte {error.start}): decoded as {codec} (detected)"
