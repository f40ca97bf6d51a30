"""Turn fetched bytes into evidence text, and refuse what is not evidence.

`extract_page(body, content_type_header, url, truncated)` never raises; it returns an
`ExtractedPage` whose `status` is "ok" (``text`` is evidence) or "unknown" (``blocked``
says why, ``detail`` says it in one sentence).

Rules, in the order they are applied:

1. Type. The media type comes from the Content-Type header. Bytes starting with ``%PDF-``
   (within the first 1 KB) are a PDF whatever the header says. When the header is missing
   or generic (octet-stream and friends) the bytes are sniffed: ``<html`` / ``<!doctype
   html`` -> HTML, ``{`` / ``[`` that parses -> JSON, a zip holding a spreadsheet, slides or a
   Word document (also under application/zip) -> that format. A missing header on bytes that look
   like UTF-8 text -> text/plain. ``text/plain`` and XML bodies that sniff as HTML are HTML.
   Images, audio, video, archives, fonts, octet-stream that does not sniff and every other
   type -> unknown/"unsupported_type".
2. Charset (text formats). Tried strictly, first success wins: a BOM; UTF-8 when the bytes
   contain non-ASCII and are valid UTF-8 (a declaration that disagrees is the thing that
   lies); the header's charset; ``<meta charset>`` / ``http-equiv`` in the first 4 KB
   (multi-byte declarations before single-byte ones, since a single-byte decode proves
   nothing); UTF-8; charset_normalizer's best guess (cp1252 wins a tie); finally cp1252
   with replacement.
   Labels are mapped as browsers do (iso-8859-1/ascii -> cp1252, shift_jis -> cp932,
   gb2312 -> gbk, euc-kr -> cp949). ``charset`` reports the Python codec actually used.
3. HTML. Main text by trafilatura (no comments, tables kept, favour recall). When that
   yields fewer than EMPTY_MIN_WORDS words and a tag-stripped body text (script, style,
   noscript, nav and footer dropped) has more, the stripped text is used. Title: <title>,
   else og:title.
4. PDF. pypdf, every page, pages joined by a blank line; an empty user password is tried on
   encrypted files. Title: metadata title, else the first line. Encrypted or broken ->
   "unreadable"; when the body was cut at the byte cap and pypdf fails or finds no text ->
   "unreadable" saying so.
4b. Spreadsheets, slides, Word documents (.xlsx, .pptx, .docx): fetch/office_text.py (sheets as rows
   of cells, slides in order with titles and notes, paragraphs and tables in order; limits said in
   the text). Title: the file's title property, else the first slide's title or the first line.
   Password-protected, legacy binary or broken -> "unreadable" saying which; cut at the byte cap ->
   "unreadable" saying so.
5. text/plain, text/markdown, other text/* and XML: the decoded text as is. JSON: re-dumped
   with ``indent=1``; only an empty container / null / "" is refused ("empty").
6. Non-evidence. Phrases are searched (case-insensitively, curly quotes and "…" normalised)
   in the title, the visible text (noscript, nav and footer included, because a fetcher
   without JavaScript sees them) and the main text. Word thresholds count the longer of the
   main text and the tag-stripped body text (one CJK character counts as one word). The
   first rule that fires wins:
   bot_wall   - a challenge phrase and at most WALL_MAX_WORDS["bot_wall"] words, or a
                challenge-script marker in the HTML and at most MARKER_MAX_WORDS words;
   captcha    - a CAPTCHA phrase and at most WALL_MAX_WORDS["captcha"] words, or a CAPTCHA
                widget marker in the HTML and at most MARKER_MAX_WORDS words;
   login_wall - a login phrase and at most WALL_MAX_WORDS["login_wall"] words;
   paywall    - a paywall phrase and at most WALL_MAX_WORDS["paywall"] words;
   error_page - an error phrase (or a title starting with an HTTP error code) and at most
                WALL_MAX_WORDS["error_page"] words;
   cookie_wall- a cookie-banner phrase and fewer than COOKIE_MAX_OTHER_WORDS words outside
                the sentences that contain cookie-banner phrases;
   empty      - fewer than EMPTY_MIN_WORDS words.
   So a long article that mentions cookies or carries a "subscribe" footer stays "ok".
7. Any exception while parsing -> unknown/"unreadable" naming the exception type.
"""
from __future__ import annotations

import codecs
import io
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from html.parser import HTMLParser
from typing import Callable, Literal, Optional

from .office_text import FORMATS, OfficeUnreadable, office_text, sniff_office

# --- thresholds -------------------------------------------------------------------------

EMPTY_MIN_WORDS = 20
"""Fewer words than this is an empty page."""

WALL_MAX_WORDS = {
    "bot_wall": 300,
    "captcha": 300,
    "login_wall": 250,
    "paywall": 300,
    "error_page": 150,
}
"""A phrase hit blocks a page only when the page has at most this many words."""

MARKER_MAX_WORDS = 60
"""A challenge/CAPTCHA marker in the raw HTML blocks only a page with at most this many words."""

COOKIE_MAX_OTHER_WORDS = 80
# A cookie banner long enough to hide a real page of this size does not exist; skip the scan.
COOKIE_MAX_TOTAL_WORDS = 600
"""A page with a cookie-banner phrase is a cookie wall when fewer words than this lie outside
the sentences holding cookie-banner phrases."""

SNIFF_BYTES = 1024
META_SCAN_BYTES = 4096
TITLE_MAX_CHARS = 300
DETAIL_MAX_CHARS = 300

BlockKind = Literal[
    "bot_wall", "captcha", "login_wall", "paywall", "cookie_wall",
    "empty", "error_page", "unsupported_type", "unreadable",
]


@dataclass(frozen=True)
class ExtractedPage:
    status: Literal["ok", "unknown"]
    text: str  # main text ("" when unknown)
    title: str
    content_type: str  # media type without parameters, lower case
    charset: str | None  # the charset actually used to decode text formats
    blocked: str | None  # None or a BlockKind
    detail: str  # one human sentence


# --- entry point ------------------------------------------------------------------------

def extract_page(
    body: bytes, content_type_header: str | None, url: str = "", truncated: bool = False
) -> ExtractedPage:
    """Extract evidence text from one fetched body; never raises."""
    media = ""
    try:
        media, _ = _parse_content_type(content_type_header)
        return _extract(_as_bytes(body), content_type_header, url, truncated)
    except Exception as exc:  # noqa: BLE001 - the contract is "never raise"
        return _unknown(media or "application/octet-stream", None, "unreadable",
                        f"unreadable: {type(exc).__name__} while extracting: {exc}", "")


def _extract(body: bytes, header: str | None, url: str, truncated: bool) -> ExtractedPage:
    media, header_charset = _parse_content_type(header)
    if not body.strip():
        return _unknown(media or "application/octet-stream", None, "empty",
                        "empty: the response body is empty", "")
    kind, media = _resolve_kind(media, body)
    if kind == "html":
        return _extract_html(body, media, header_charset, url, truncated)
    if kind == "pdf":
        return _extract_pdf(body, media, truncated)
    if kind in _OFFICE_KINDS:
        return _extract_office(body, media, kind, truncated)
    if kind == "json":
        return _extract_json(body, media, header_charset, url, truncated)
    if kind == "text":
        return _extract_text(body, media, header_charset, truncated)
    return _unknown(media, None, "unsupported_type",
                    f"unsupported content type '{media}' is not text evidence", "")


def _as_bytes(body: object) -> bytes:
    if isinstance(body, str):
        return body.encode("utf-8")
    return bytes(body)  # type: ignore[arg-type]


# --- content type -----------------------------------------------------------------------

_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_PDF_TYPES = {"application/pdf", "application/x-pdf", "application/acrobat"}
_JSON_TYPES = {"application/json", "text/json", "application/x-json"}
_XML_TYPES = {"application/xml", "text/xml"}
_OFFICE_TYPES = {
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
}
_OFFICE_KINDS = frozenset(_OFFICE_TYPES.values())
_ZIP_TYPES = {"application/zip", "application/x-zip-compressed"}
_GENERIC_TYPES = {
    "", "application/octet-stream", "binary/octet-stream", "application/unknown",
    "application/binary", "application/download", "application/x-download",
    "application/force-download", "unknown/unknown", "*/*",
}


def _parse_content_type(header: str | None) -> tuple[str, str | None]:
    """("text/html", "utf-8") from 'text/html; charset="UTF-8"'."""
    if not header:
        return "", None
    parts = str(header).split(";")
    media = parts[0].strip().lower()
    charset = None
    for param in parts[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'").strip()
    return media, charset


def _kind_of(media: str) -> str:
    if media in _GENERIC_TYPES:
        return "generic"
    if media in _HTML_TYPES:
        return "html"
    if media in _PDF_TYPES:
        return "pdf"
    if media in _OFFICE_TYPES:
        return _OFFICE_TYPES[media]
    if media in _JSON_TYPES or media.endswith("+json"):
        return "json"
    if media.startswith("text/") or media in _XML_TYPES or media.endswith("+xml"):
        return "text"
    return "unsupported"


def _resolve_kind(media: str, body: bytes) -> tuple[str, str]:
    if b"%PDF-" in body[:SNIFF_BYTES]:
        return "pdf", "application/pdf"
    kind = _kind_of(media)
    if kind == "generic" or media in _ZIP_TYPES:
        office = sniff_office(body)
        if office:
            return office, next(m for m, k in _OFFICE_TYPES.items() if k == office)
    if kind == "text" and media not in ("text/markdown", "text/x-markdown", "text/csv"):
        if _sniff(body) == "html":
            return "html", "text/html"
    if kind != "generic":
        return kind, media
    sniffed = _sniff(body)
    if sniffed == "html":
        return "html", "text/html"
    if sniffed == "json":
        return "json", "application/json"
    if not media and _looks_like_text(body):
        return "text", "text/plain"
    return "unsupported", media or "application/octet-stream"


def _sniff_head(body: bytes) -> str:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):SNIFF_BYTES * 4].decode(codec, errors="replace")
    return body[:SNIFF_BYTES].decode("latin-1")


def _sniff(body: bytes) -> str | None:
    head = _sniff_head(body).lstrip().lower()
    if head.startswith("<") and ("<!doctype html" in head or "<html" in head):
        return "html"
    if head[:1] in ("{", "["):
        try:
            json.loads(_decode(body, None, False)[0])
            return "json"
        except ValueError:
            return None
    return None


def _looks_like_text(body: bytes) -> bool:
    head = body[:SNIFF_BYTES]
    if b"\x00" in head:
        return False
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
        return True
    except UnicodeDecodeError:
        return False


# --- charset ----------------------------------------------------------------------------

_BOMS = [
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
]
# What browsers actually decode these labels as (WHATWG Encoding Standard).
_BROWSER_CODEC = {
    "iso8859-1": "cp1252", "ascii": "cp1252", "shift_jis": "cp932",
    "gb2312": "gbk", "euc_kr": "cp949", "iso8859-9": "cp1254", "iso8859-11": "cp874",
}
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]+)", re.I)


def _codec(label: str | None) -> str | None:
    """Canonical Python codec name for a charset label, or None when unknown."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip().strip("\"'")).name
    except (LookupError, ValueError):
        return None
    return _BROWSER_CODEC.get(name, name)


@lru_cache(maxsize=64)
def _is_single_byte(codec: str) -> bool:
    """True for codecs where any byte decodes alone (a successful decode proves nothing)."""
    try:
        return len(bytes(range(0xA0, 0x100)).decode(codec)) == 0x60
    except (UnicodeDecodeError, LookupError):
        return False


def decode_bytes(body: bytes) -> tuple[str, str]:
    """(text, codec) of bytes with no declared charset (a report file): rule 2 without a header."""
    return _decode(body, None, False)


def _decode(body: bytes, header_charset: str | None, scan_meta: bool) -> tuple[str, str]:
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(codec, errors="replace"), codec
    for codec in _charset_candidates(body, header_charset, scan_meta):
        try:
            return body.decode(codec), codec
        except (UnicodeDecodeError, LookupError):
            continue
    return body.decode("cp1252", errors="replace"), "cp1252"


def _charset_candidates(body: bytes, header_charset: str | None, scan_meta: bool) -> list[str]:
    declared = [c for c in (_codec(header_charset), _meta_charset(body) if scan_meta else None) if c]
    candidates: list[str] = []
    wide = any(c.startswith(("utf-16", "utf-32")) for c in declared)
    if not body.isascii() and not wide:
        candidates.append("utf-8")
    candidates += [c for c in declared if not _is_single_byte(c)]
    candidates += [c for c in declared if _is_single_byte(c)]
    candidates.append("utf-8")
    guess = _normalizer_guess(body)
    if guess:
        candidates.append(guess)
    return list(dict.fromkeys(candidates))


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:META_SCAN_BYTES])
    if not match:
        return None
    codec = _codec(match.group(1).decode("ascii", errors="ignore"))
    if codec and (codec.startswith("utf-16") or codec.startswith("utf-32")):
        return "utf-8"  # the meta tag was readable as ASCII, so the page is not UTF-16
    return codec


def _normalizer_guess(body: bytes) -> str | None:
    if body.isascii():
        return None
    from charset_normalizer import from_bytes

    matches = from_bytes(body)
    best = matches.best()
    if best is None:
        return None
    tied = {_codec(m.encoding) for m in matches
            if abs(m.chaos - best.chaos) < 1e-9 and abs(m.coherence - best.coherence) < 1e-9}
    # Latin texts often tie between cp1250/cp1252/cp1257; the web's default wins the tie.
    return "cp1252" if "cp1252" in tied else _codec(best.encoding)


# --- HTML -------------------------------------------------------------------------------

_HIDDEN_TAGS = {"script", "style", "template", "svg", "title"}
_CHROME_TAGS = {"noscript", "nav", "footer"}
_BLOCK_TAGS = {
    "p", "div", "br", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "td",
    "th", "table", "section", "article", "header", "footer", "nav", "aside", "main",
    "blockquote", "pre", "dd", "dt", "dl", "figcaption", "form", "button", "label",
    "noscript", "hr", "body",
}


class _TextCollector(HTMLParser):
    """Visible text (for detection), body text (visible minus chrome) and the title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.visible: list[str] = []
        self.body: list[str] = []
        self.title_parts: list[str] = []
        self.og_title = ""
        self._hidden = 0
        self._chrome = 0
        self._in_title = False
        self._title_done = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self._hidden and not self._title_done:
            self._in_title = True
        if tag == "meta":
            self._meta(dict(attrs))
        self._count(tag, +1)
        self._break(tag)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._in_title:
            self._in_title, self._title_done = False, True
        self._count(tag, -1)
        self._break(tag)

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
            return
        if self._hidden:
            return
        self.visible.append(data)
        if not self._chrome:
            self.body.append(data)

    def _meta(self, attrs: dict[str, str | None]) -> None:
        if (attrs.get("property") or attrs.get("name") or "").lower() == "og:title":
            self.og_title = attrs.get("content") or ""

    def _count(self, tag: str, step: int) -> None:
        if tag in _HIDDEN_TAGS:
            self._hidden = max(0, self._hidden + step)
        elif tag in _CHROME_TAGS:
            self._chrome = max(0, self._chrome + step)

    def _break(self, tag: str) -> None:
        if tag in _BLOCK_TAGS:
            self.visible.append("\n")
            self.body.append("\n")


@dataclass(frozen=True)
class _HtmlParts:
    visible: str
    body: str
    title: str


def _strip_html(html: str) -> _HtmlParts:
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    title = _clean_line("".join(collector.title_parts)) or _clean_line(collector.og_title)
    return _HtmlParts(_tidy("".join(collector.visible)), _tidy("".join(collector.body)),
                      title[:TITLE_MAX_CHARS])


_XML_DECL = re.compile(r"^\s*<\?xml[^>]*\?>", re.I)


def _trafilatura_text(html: str, url: str) -> str:
    import trafilatura

    text = trafilatura.extract(
        _XML_DECL.sub("", html, count=1), url=url or None, include_comments=False,
        include_tables=True, favor_recall=True, with_metadata=False, deduplicate=False,
    )
    return _tidy(text or "")


def _extract_html(body: bytes, media: str, header_charset: str | None, url: str,
                  truncated: bool) -> ExtractedPage:
    html, charset = _decode(body, header_charset, scan_meta=True)
    parts = _strip_html(html)
    main = _trafilatura_text(html, url)
    fallback = count_words(main) < EMPTY_MIN_WORDS and count_words(parts.body) > count_words(main)
    if fallback:
        main = parts.body
    ev = _evidence(main, parts.title, [parts.visible, main], [main, parts.body], html.lower())
    how = "tag stripping" if fallback else "trafilatura"
    return _finish(ev, media, charset, truncated, f"by {how}")


# --- PDF --------------------------------------------------------------------------------

_CUT_DETAIL = "unreadable: the PDF was cut at the byte cap and cannot be parsed"


def _extract_pdf(body: bytes, media: str, truncated: bool) -> ExtractedPage:
    from pypdf import PdfReader

    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            return _unknown(media, None, "unreadable",
                            "unreadable: the PDF is encrypted with a password", "")
        pages = _pdf_pages(reader)
        meta_title = _pdf_meta_title(reader)
    except Exception as exc:  # noqa: BLE001
        failed = f"unreadable: pypdf failed with {type(exc).__name__}: {exc}"
        detail = _CUT_DETAIL if truncated else failed
        return _unknown(media, None, "unreadable", detail, "")
    text = "\n\n".join(p for p in pages if p)
    if truncated and not text:
        return _unknown(media, None, "unreadable", _CUT_DETAIL, meta_title)
    title = meta_title or _first_line(text)
    ev = _evidence(text, title, [text], [text], "")
    return _finish(ev, media, None, truncated, f"from {len(pages)} page(s) by pypdf")


def _pdf_pages(reader: object) -> list[str]:
    out = []
    for page in reader.pages:  # type: ignore[attr-defined]
        try:
            out.append(_tidy(page.extract_text() or ""))
        except Exception:  # noqa: BLE001 - one bad page must not lose the others
            out.append("")
    return out


def _pdf_meta_title(reader: object) -> str:
    try:
        meta = reader.metadata  # type: ignore[attr-defined]
        return _clean_line(str(meta.title or ""))[:TITLE_MAX_CHARS] if meta else ""
    except Exception:  # noqa: BLE001
        return ""


# --- spreadsheets, slides, Word documents -----------------------------------------------

def _extract_office(body: bytes, media: str, kind: str, truncated: bool) -> ExtractedPage:
    try:
        got = office_text(body, kind)
    except OfficeUnreadable as exc:
        detail = f"unreadable: the {FORMATS[kind]} was cut at the byte cap and cannot be parsed" if truncated \
            else str(exc)
        return _unknown(media, None, "unreadable", detail, "")
    title = got.title[:TITLE_MAX_CHARS] or _first_line(got.text)
    ev = _evidence(got.text, title, [got.text], [got.text], "")
    return _finish(ev, media, None, truncated, got.how)


# --- JSON and plain text ----------------------------------------------------------------

def _extract_json(body: bytes, media: str, header_charset: str | None, url: str,
                  truncated: bool) -> ExtractedPage:
    raw, charset = _decode(body, header_charset, scan_meta=False)
    try:
        value = json.loads(raw)
    except ValueError:
        if _sniff(body) == "html":
            return _extract_html(body, "text/html", header_charset, url, truncated)
        return _extract_text(body, media, header_charset, truncated)
    title = value["title"] if isinstance(value, dict) and isinstance(value.get("title"), str) else ""
    if value in (None, "", [], {}):
        return _unknown(media, charset, "empty", "empty: the JSON document holds no data", title)
    text = json.dumps(value, indent=1, ensure_ascii=False)
    return ExtractedPage("ok", text, _clean_line(title)[:TITLE_MAX_CHARS], media, charset, None,
                         f"ok: JSON document of {len(text)} characters re-dumped as text")


def _extract_text(body: bytes, media: str, header_charset: str | None,
                  truncated: bool) -> ExtractedPage:
    raw, charset = _decode(body, header_charset, scan_meta=False)
    text = raw.replace("\r\n", "\n").strip()
    ev = _evidence(text, _first_line(text), [text], [text], "")
    return _finish(ev, media, charset, truncated, "as plain text")


# --- detection of non-evidence ----------------------------------------------------------

@dataclass(frozen=True)
class _Evidence:
    text: str  # the main text returned when ok
    title: str
    haystack: str  # normalised title + visible + main text, for phrase search
    page_text: str  # longer of main and body text, for word thresholds
    words: int  # words in page_text
    html: str  # lower-cased raw HTML ("" for other formats)


def _evidence(text: str, title: str, seen: list[str], lengths: list[str], html: str) -> _Evidence:
    page_text = max(lengths, key=count_words)
    haystack = _normalise("\n".join([title, *seen]))
    return _Evidence(text, title, haystack, page_text, count_words(page_text), html)


def _phrases(*phrases: str) -> re.Pattern[str]:
    return re.compile("|".join(re.escape(p) for p in phrases), re.I)


_BOT_PHRASES = _phrases(
    "just a moment...", "checking your browser", "checking if the site connection is secure",
    "client challenge", "a required part of this site couldn't load",
    "enable javascript and cookies to continue", "ddos protection by",
    "attention required! | cloudflare", "verifying you are human", "performing security verification",
    "pardon our interruption", "request unsuccessful. incapsula incident",
    "please wait while your request is being verified",
)
_BOT_MARKERS = ("_cf_chl_opt", "cf-browser-verification", "cf_chl_prog", "_incapsula_resource",
                "ddos-guard")
_CAPTCHA_PHRASES = _phrases(
    "verify you are human", "verify that you are human", "are you a robot", "i'm not a robot",
    "i am not a robot", "confirm you are not a robot", "prove you are human",
    "complete the captcha", "solve the captcha", "complete the security check",
    "unusual traffic from your computer network", "press & hold to confirm",
)
_CAPTCHA_MARKERS = ("g-recaptcha", "google.com/recaptcha", "recaptcha/api.js", "h-captcha",
                    "hcaptcha.com", "cf-turnstile", "px-captcha", "captcha-delivery.com")
_LOGIN_PHRASES = _phrases(
    "sign in to continue", "log in to continue", "login to continue", "log in to view",
    "login to view", "sign in to view", "you must be logged in", "you need to be logged in",
    "you must log in", "you must sign in", "sign in to read", "log in to read",
    "please log in to", "please sign in to", "create a free account to continue",
    "log in or sign up to view",
)
_PAYWALL_PHRASES = _phrases(
    "subscribe to continue reading", "subscribe to read", "this article is for subscribers",
    "this content is for subscribers", "for subscribers only", "subscriber-only",
    "subscriber exclusive", "already a subscriber", "to continue reading, subscribe",
    "reached your limit of free articles", "reached your free article limit",
    "become a subscriber to read", "unlock this article",
)
_ERROR_PHRASES = _phrases(
    "404 not found", "404 - not found", "error 404", "404 error", "page not found",
    "this page does not exist", "page doesn't exist", "page does not exist",
    "could not be found", "couldn't be found", "the requested url was not found",
    "access denied", "403 forbidden", "500 internal server error", "502 bad gateway",
    "503 service unavailable", "504 gateway time", "this page isn't available",
)
_ERROR_TITLE = re.compile(r"^\s*(?:error\s*)?(?:400|401|403|404|410|429|500|502|503|504)\b", re.I)
_COOKIE_PHRASES = _phrases(
    "we use cookies", "this site uses cookies", "this website uses cookies", "uses cookies to",
    "accept all", "accept cookies", "reject all", "allow all cookies", "manage preferences",
    "manage cookies", "cookie settings", "cookie preferences", "cookie policy",
    "use of cookies",
)


_Found = Optional[tuple[str, str]]  # (blocked kind, detail) or None
_Rule = Callable[[_Evidence], _Found]


def _phrase_rule(kind: str, pattern: re.Pattern[str], label: str) -> _Rule:
    def rule(ev: _Evidence) -> _Found:
        if ev.words > WALL_MAX_WORDS[kind]:  # cheap test first: most real pages are long
            return None
        match = pattern.search(ev.haystack)
        if match is None:
            return None
        quote = _quote(ev.haystack, match)
        return kind, f"{label}: page says '{quote}' and has only {_n_words(ev.words)}"
    return rule


def _marker_rule(kind: str, markers: tuple[str, ...], label: str) -> _Rule:
    def rule(ev: _Evidence) -> _Found:
        if ev.words > MARKER_MAX_WORDS:
            return None
        hit = next((m for m in markers if m in ev.html), None)
        if hit is None:
            return None
        return kind, f"{label}: the HTML holds '{hit}' and the page has only {_n_words(ev.words)}"
    return rule


_error_phrase_rule = _phrase_rule("error_page", _ERROR_PHRASES, "error page")


def _error_rule(ev: _Evidence) -> _Found:
    found = _error_phrase_rule(ev)
    if found or ev.words > WALL_MAX_WORDS["error_page"] or not _ERROR_TITLE.match(ev.title):
        return found
    words = _n_words(ev.words)
    return "error_page", f"error page: the title is '{ev.title}' and the page has only {words}"


def _cookie_rule(ev: _Evidence) -> _Found:
    if ev.words > COOKIE_MAX_TOTAL_WORDS:
        return None
    match = _COOKIE_PHRASES.search(ev.haystack)
    if match is None:
        return None
    sentences = re.split(r"(?<=[.!?])\s+|\n", ev.page_text)
    other = sum(count_words(s) for s in sentences if not _COOKIE_PHRASES.search(_normalise(s)))
    if other >= COOKIE_MAX_OTHER_WORDS:
        return None
    quote = _quote(ev.haystack, match)
    return "cookie_wall", (f"cookie wall: the page is mostly a cookie banner ('{quote}') "
                           f"with only {_n_words(other)} outside it")


def _empty_rule(ev: _Evidence) -> _Found:
    if ev.words >= EMPTY_MIN_WORDS:
        return None
    why = "; the page is probably rendered by JavaScript" if "<script" in ev.html else ""
    return "empty", f"empty: only {_n_words(ev.words)} of text{why}"


_RULES: list[_Rule] = [
    _phrase_rule("bot_wall", _BOT_PHRASES, "bot wall"),
    _marker_rule("bot_wall", _BOT_MARKERS, "bot wall"),
    _phrase_rule("captcha", _CAPTCHA_PHRASES, "captcha"),
    _marker_rule("captcha", _CAPTCHA_MARKERS, "captcha"),
    _phrase_rule("login_wall", _LOGIN_PHRASES, "login wall"),
    _phrase_rule("paywall", _PAYWALL_PHRASES, "paywall"),
    _error_rule,
    _cookie_rule,
    _empty_rule,
]


def _detect(ev: _Evidence) -> _Found:
    for rule in _RULES:
        found = rule(ev)
        if found:
            return found
    return None


def _finish(ev: _Evidence, media: str, charset: str | None, truncated: bool, how: str) -> ExtractedPage:
    found = _detect(ev)
    if found:
        return _unknown(media, charset, found[0], found[1], ev.title)
    cut = "; the body was cut at the byte cap" if truncated else ""
    detail = f"ok: {count_words(ev.text)} words of {media} text extracted {how}{cut}"
    return ExtractedPage("ok", ev.text, ev.title, media, charset, None, detail)


def _unknown(media: str, charset: str | None, kind: str, detail: str, title: str) -> ExtractedPage:
    detail = " ".join(detail.split())[:DETAIL_MAX_CHARS]
    return ExtractedPage("unknown", "", title, media, charset, kind, detail)


# --- small text helpers -----------------------------------------------------------------

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u00a0": " "})


def count_words(text: str) -> int:
    """Words in text; each CJK character counts as one word."""
    return len(_WORD.findall(text))


def _n_words(n: int) -> str:
    return f"{n} word" if n == 1 else f"{n} words"


def _normalise(text: str) -> str:
    return text.translate(_QUOTES).replace("\u2026", "...")


def _quote(haystack: str, match: re.Match[str]) -> str:
    """The matched phrase extended to the end of its sentence (at most 80 characters)."""
    tail = re.match(r"[^.!?\n]{0,60}", haystack[match.end():])
    return (match.group(0) + (tail.group(0) if tail else "")).strip()[:80]


def _tidy(text: str) -> str:
    lines = (" ".join(line.split()) for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _clean_line(text: str) -> str:
    return " ".join(text.split())


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line[:TITLE_MAX_CHARS]
    return ""
