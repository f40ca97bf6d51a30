"""Errors every layer may raise, and how their messages are shown, kept apart so that no layer
imports another just to name one."""
from __future__ import annotations

import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

# Query parameters that carry credentials (compared lower-cased, '-' read as '_').
SECRET_PARAMS = frozenset({"key", "apikey", "api_key", "token", "access_token", "auth", "auth_token", "secret",
                           "client_secret", "password", "pass", "pwd", "sig", "signature", "x_api_key",
                           "subscription_key", "session", "sessionid", "code"})
_URL_RE = re.compile(r"https?://[^\s'\"<>]+?(?=[.,;:)\]]*(?:[\s'\"<>]|$))", re.I)  # trailing punctuation left out


class ConfigError(ValueError):
    """A setting or a name the user gave (environment, policy, suite) is not valid."""


class SelectionError(ValueError):
    """A selection (`--system`, `--suite`, `--task`) that matches nothing: named with the closest names."""


def first_line(value: object, limit: int | None = None) -> str:
    """An error's first line (its type's name when it says nothing), cut at `limit` characters."""
    text = str(value).strip()
    line = text.splitlines()[0] if text else type(value).__name__
    return line if limit is None else line[:limit]


def redact(text: str, secret: str | None = None) -> str:
    """`text` with `secret` (an API key) masked, keys too short to be real left alone, and the
    credentials of every URL in it masked (`redact_url`)."""
    text = text.replace(secret, "***") if secret and len(secret) >= 4 else text
    return _URL_RE.sub(lambda m: redact_url(m.group()), text) if "://" in text else text


def redact_url(url: str) -> str:
    """`url` with a user's password and the values of credential parameters (`SECRET_PARAMS`)
    masked, the rest as written: what may be printed or stored."""
    try:
        parts = urlsplit(url)
    except ValueError:  # not parseable as a URL: mask all of it rather than risk a secret
        return "<unparseable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}:***@{host}" if ":" in user else f"***@{host}"
    query = _PARAM_RE.sub(lambda m: m.group(1) + ("***" if unquote_plus(m.group(2)).lower().replace("-", "_")
                                                  in SECRET_PARAMS else m.group(3)), parts.query)
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_PARAM_RE = re.compile(r"((?:^|(?<=[&;]))([^=&;]+)=)([^&;]*)")
