"""URL safety: nothing inward, nothing odd, checked on resolved addresses."""
import asyncio

import pytest

from dreval_assets.fetch.safety import AllowList, UnsafeURLError, check_syntax, refusal_reason, resolve_target


def fake_resolver(table):
    async def resolve(host, port):
        if host not in table:
            raise OSError(-2, "Name or service not known")
        return table[host]
    return resolve


PUBLIC = fake_resolver({"news.example": ["93.184.216.34"], "inward.example": ["10.1.2.3"],
                        "mixed.example": ["93.184.216.34", "127.0.0.1"], "v6.example": ["2606:4700::1111"],
                        "mapped.example": ["::ffff:127.0.0.1"]})


def resolve(url, allow=AllowList(), resolver=PUBLIC):
    return asyncio.run(resolve_target(url, allow, resolver))


@pytest.mark.parametrize("url, why", [
    ("file:///etc/passwd", "scheme file:"), ("ftp://news.example/x", "scheme ftp:"),
    ("data:text/html,<b>x</b>", "scheme data:"), ("javascript:alert(1)", "scheme javascript:"),
    ("http://user:pw@news.example/", "userinfo"), ("http://news.example@10.0.0.1/", "userinfo"),
    ("http://news.example/" + "a" * 3000, "longer than"), ("http://news.example/a b", "whitespace"),
    ("http:///nohost", "no host"), ("http://news.example:99999/", "port"),
])
def test_syntax_refusals(url, why):
    with pytest.raises(UnsafeURLError, match=why):
        resolve(url)


@pytest.mark.parametrize("address, label", [
    ("127.0.0.1", "loopback"), ("10.0.0.8", "private"), ("192.168.1.1", "private"), ("172.16.5.4", "private"),
    ("169.254.169.254", "metadata"), ("169.254.10.10", "link-local"), ("224.0.0.1", "multicast"),
    ("0.0.0.0", "unspecified"), ("100.64.0.1", "not a globally routable"), ("::1", "loopback"),
    ("fe80::1", "link-local"), ("fd00:ec2::254", "metadata"), ("::ffff:10.0.0.1", "private"),
])
def test_non_public_addresses_are_named(address, label):
    assert label in refusal_reason(address)


def test_public_addresses_pass():
    assert refusal_reason("93.184.216.34") is None and refusal_reason("2606:4700::1111") is None
    target = resolve("https://News.Example/a/b?q=1#frag")
    assert (target.host, target.port, target.address) == ("news.example", 443, "93.184.216.34")
    assert target.pinned_url == "https://93.184.216.34:443/a/b?q=1" and target.host_header == "news.example"
    assert resolve("http://v6.example:8080/").pinned_url == "http://[2606:4700::1111]:8080/"


@pytest.mark.parametrize("url", ["http://inward.example/", "http://mixed.example/", "http://mapped.example/"])
def test_names_resolving_inward_are_refused(url):
    with pytest.raises(UnsafeURLError, match="resolves to"):
        resolve(url)


def test_ip_spellings_resolve_inward_with_the_real_resolver():
    for url in ("http://127.0.0.1/", "http://2130706433/", "http://0x7f.1/", "http://127.1/", "http://[::1]/",
                "http://169.254.169.254/latest/meta-data/", "http://localhost/"):
        with pytest.raises(UnsafeURLError, match="resolves to|metadata"):
            asyncio.run(resolve_target(url))


def test_unknown_hosts_are_refused_with_the_reason():
    with pytest.raises(UnsafeURLError, match="does not resolve"):
        resolve("http://nowhere.example/")


def test_the_allow_list_is_exact_host_and_port():
    allow = AllowList(frozenset({"127.0.0.1:8123"}))
    assert asyncio.run(resolve_target("http://127.0.0.1:8123/x", allow)).address == "127.0.0.1"
    with pytest.raises(UnsafeURLError):
        asyncio.run(resolve_target("http://127.0.0.1:8124/x", allow))
    with pytest.raises(UnsafeURLError):
        asyncio.run(resolve_target("http://169.254.169.254:8123/x", allow))


def test_check_syntax_keeps_a_clean_url():
    assert check_syntax("https://news.example/x?y=1").hostname == "news.example"
