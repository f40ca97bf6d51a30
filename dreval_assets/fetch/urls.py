"""URL normalisation: one key per page, so each page is fetched and stored once."""
from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

_TRACKING = re.compile(r"^(utm_[a-z]+|fbclid|gclid|mc_[a-z]+|ref_src)$")


def normalise_url(url: str) -> str:
    """Lower-case scheme and host, drop default ports, fragments, tracking parameters and a trailing slash."""
    url = url.strip().strip("<>")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets, or its last group reads as a port
    port = parts.port if parts.port and (scheme, parts.port) not in {("http", 80), ("https", 443)} else None
    netloc = f"{host}:{port}" if port else host
    path = re.sub(r"/{2,}", "/", parts.path) or "/"
    if len(path) > 1:
        path = path.rstrip("/")
    query = urlencode(sorted((k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                             if not _TRACKING.match(k)))
    if scheme in {"http", "https"}:
        scheme = "https"  # the same page is often cited over both schemes
    return urlunsplit((scheme, netloc, path, query, ""))


def normalise_title(title: str) -> str:
    return re.sub(r"\W+", " ", title.casefold()).strip()


def url_key(url: str) -> str:
    """`normalise_url`, or the URL as written when it cannot be parsed (hostile or malformed)."""
    try:
        return normalise_url(url)
    except ValueError:
        return url
