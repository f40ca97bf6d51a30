"""Which URLs the live fetcher may touch. Checked before every request and on every redirect hop.

Refused: schemes other than http(s); userinfo (`user@host` tricks); over-long URLs; control
characters; and any host that resolves to an address that is not globally routable (loopback,
private, link-local incl. cloud metadata 169.254.169.254, multicast, reserved, CGNAT, unspecified),
checked on the resolved addresses, so decimal/hex/short IP spellings and DNS names pointing inward
are caught too. The connection then goes to the checked address (no second lookup to rebind).
An allow-list of exact `host:port` pairs lets through the endpoints the user configured (search,
news, MediaWiki: `AllowList.for_endpoints`) and tests' loopback servers; it never widens to a host's
other ports or to URLs found in reports, pages or API answers.
"""
from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Awaitable, Callable
from urllib.parse import SplitResult, urlsplit

MAX_URL_LENGTH = 2048
ALLOWED_SCHEMES = ("http", "https")
DEFAULT_PORTS = {"http": 80, "https": 443}
# Metadata endpoints that are not link-local everywhere (Alibaba 100.100.100.200 is CGNAT space,
# refused anyway; listed for clarity).
METADATA_HOSTS = frozenset({"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "metadata.google.internal"})

Resolver = Callable[[str, int], Awaitable[list[str]]]


class UnsafeURLError(ValueError):
    """The URL must not be fetched; the message says why (it ends up on the verdict row)."""


@dataclass(frozen=True)
class Target:
    url: str
    scheme: str
    host: str  # lower-case, IDNA-encoded
    port: int
    path_and_query: str
    address: str  # the checked IP to connect to

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6 literal: bracketed, as in the URL
        default = DEFAULT_PORTS[self.scheme] == self.port
        return host if default else f"{host}:{self.port}"

    @property
    def pinned_url(self) -> str:
        ip = f"[{self.address}]" if ":" in self.address else self.address
        return f"{self.scheme}://{ip}:{self.port}{self.path_and_query}"


@dataclass(frozen=True)
class AllowList:
    """Exact `host:port` pairs allowed despite a non-public address: the endpoints the user configured
    (`for_endpoints`), and tests that serve pages on loopback."""

    pairs: frozenset[str] = frozenset()

    def allows(self, host: str, port: int) -> bool:
        return f"{host}:{port}" in self.pairs

    @classmethod
    def for_endpoints(cls, *urls: str | None) -> "AllowList":
        """The user's own services (a SearXNG on 127.0.0.1, a MediaWiki or news API on the LAN) are
        their choice, not an SSRF: their exact host and port are allowed. The guard stays for every
        URL that comes from a report, a page or an API's answer (another port, another host)."""
        pairs = set()
        for url in urls:
            if not url:
                continue
            try:
                parts = check_syntax(url)
                host = parts.hostname.encode("idna").decode("ascii").lower()
            except (UnsafeURLError, UnicodeError):
                continue  # refused later, with the reason, when it is used
            pairs.add(f"{host}:{parts.port or DEFAULT_PORTS[parts.scheme.lower()]}")
        return cls(frozenset(pairs))


def check_syntax(url: str) -> SplitResult:
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURLError(f"URL longer than {MAX_URL_LENGTH} characters")
    if any(ord(c) < 33 or ord(c) == 127 for c in url):
        raise UnsafeURLError("URL contains whitespace or control characters")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ALLOWED_SCHEMES:
        raise UnsafeURLError(f"scheme {parts.scheme + ':' if parts.scheme else '(none)'} is not fetched; only http and https")
    if "@" in parts.netloc:
        raise UnsafeURLError("URL carries userinfo (user@host), a common way to disguise the real host")
    if not parts.hostname:
        raise UnsafeURLError("URL has no host")
    try:
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError as exc:
        raise UnsafeURLError(f"malformed port: {exc}") from exc
    return parts


def refusal_reason(address: str) -> str | None:
    """Why an address is not a public destination, or None when it is."""
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    if mapped is not None:
        ip = mapped
    if str(ip) in METADATA_HOSTS:
        return f"{ip} is a cloud metadata address"
    for label, flag in (("loopback", ip.is_loopback), ("unspecified", ip.is_unspecified),
                        ("link-local", ip.is_link_local), ("multicast", ip.is_multicast),
                        ("private", ip.is_private), ("reserved", ip.is_reserved)):
        if flag:
            return f"{ip} is a {label} address"
    if not ip.is_global:
        return f"{ip} is not a globally routable address"
    return None


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(info[4][0] for info in infos))


async def resolve_target(url: str, allow: AllowList = AllowList(), resolver: Resolver = system_resolver) -> Target:
    """Check a URL and the addresses its host resolves to; returns where to connect."""
    parts = check_syntax(url)
    scheme = parts.scheme.lower()
    try:
        host = parts.hostname.encode("idna").decode("ascii").lower()
    except UnicodeError as exc:
        raise UnsafeURLError(f"host name cannot be encoded: {exc}") from exc
    if host in METADATA_HOSTS:
        raise UnsafeURLError(f"{host} is a cloud metadata host")
    port = parts.port or DEFAULT_PORTS[scheme]
    try:
        addresses = await resolver(host, port)
    except OSError as exc:
        raise UnsafeURLError(f"host {host} does not resolve ({exc.strerror or exc})") from exc
    if not addresses:
        raise UnsafeURLError(f"host {host} has no address")
    if not allow.allows(host, port):
        for address in addresses:
            reason = refusal_reason(address)
            if reason:
                raise UnsafeURLError(f"{host} resolves to {reason}")
    path = parts.path or "/"
    return Target(url, scheme, host, port, path + (f"?{parts.query}" if parts.query else ""), addresses[0])
