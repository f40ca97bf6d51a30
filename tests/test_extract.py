"""extract_page: fetched bytes -> evidence text, or a reason why they are not evidence."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pdf_fixture import make_pdf  # noqa: E402

from dreval_assets.fetch import extract as ex  # noqa: E402
from dreval_assets.fetch.extract import ExtractedPage, extract_page  # noqa: E402

HTML = "text/html"

# --- realistic pages --------------------------------------------------------------------

ARTICLE_SENTENCES = [
    "The regional council approved a 2.4 billion euro plan on Tuesday to extend the northern tram line by eleven kilometres.",
    "Construction is scheduled to begin next spring and the first trams should run on the new section in 2029.",
    "Council leader Maria Lindqvist said the extension would connect three districts that currently rely on crowded bus routes.",
    "Opposition members argued that the budget ignored the cost of rebuilding two bridges along the route.",
    "An independent audit published last year estimated that delays on the existing line cost commuters forty minutes a week.",
    "Residents near the planned depot have asked for noise barriers and for night work to be limited to weekends.",
    "The transport authority expects ridership on the whole network to grow by a fifth once the extension opens.",
]

NEWS_PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Council approves northern tram extension | The Daily Ledger</title>
  <meta property="og:title" content="Council approves northern tram extension">
  <script>window.dataLayer = window.dataLayer || [];</script>
  <style>.cookie-banner {{ position: fixed; bottom: 0; }}</style>
</head>
<body>
  <header><a href="/">The Daily Ledger</a></header>
  <nav class="main-nav"><ul>
    <li><a href="/world">Worldwide Headlines</a></li><li><a href="/politics">Politics Desk</a></li>
    <li><a href="/business">Business Briefing</a></li><li><a href="/sport">Sport Results</a></li>
  </ul></nav>
  <main>
    <article>
      <h1>Council approves northern tram extension</h1>
      <p class="byline">By Jonas Berg, Transport Correspondent</p>
      <p>{ARTICLE_SENTENCES[0]} {ARTICLE_SENTENCES[1]}</p>
      <p>{ARTICLE_SENTENCES[2]} {ARTICLE_SENTENCES[3]}</p>
      <p>{ARTICLE_SENTENCES[4]}</p>
      <p>{ARTICLE_SENTENCES[5]} {ARTICLE_SENTENCES[6]}</p>
    </article>
  </main>
  <div class="cookie-banner" id="consent">
    <p>We use cookies to personalise content and ads and to analyse our traffic.</p>
    <button>Accept all</button> <button>Manage preferences</button>
  </div>
  <footer><p>Copyright 2024 Ledger Media Group. Contact the newsroom. Terms of service.</p></footer>
  <script src="/static/app.js"></script>
</body>
</html>"""

CLOUDFLARE_PAGE = """<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8">
<meta name="robots" content="noindex,nofollow"><style>*{box-sizing:border-box;margin:0;padding:0}</style>
</head><body><div class="main-wrapper" role="main"><div class="main-content">
<h1 class="zone-name-title h1">www.example.com</h1>
<h2 class="h2" id="challenge-running">Checking if the site connection is secure</h2>
<div id="challenge-body-text" class="core-msg spacer">www.example.com needs to review the security of your connection before proceeding.</div>
<noscript><div id="challenge-error-title"><div class="h2">Enable JavaScript and cookies to continue</div></div></noscript>
</div></div>
<script>(function(){window._cf_chl_opt={cvId: '3',cZone: "www.example.com",cType: 'managed'};}());</script>
</body></html>"""

OLD_CLOUDFLARE_PAGE = """<html><head><title>Please Wait... | Cloudflare</title></head><body>
<div id="cf-wrapper"><h1>Checking your browser before accessing example.org.</h1>
<p>This process is automatic. Your browser will redirect to your requested content shortly.</p>
<p>Please allow up to 5 seconds...</p><p>DDoS protection by Cloudflare</p>
<p>Ray ID: 7a1b2c3d4e5f6789</p></div></body></html>"""

CLIENT_CHALLENGE_PAGE = """<!doctype html><html><head><title>Client Challenge</title></head><body>
<p>A required part of this site couldn't load. This may be due to a browser extension,
network issues, or browser settings. Please check your connection, disable any ad blockers,
or try using a different browser.</p><script src="/_fs-ch-1T1wmsGaOgGaSxcX/script.js"></script></body></html>"""

CAPTCHA_PAGE = """<!DOCTYPE html><html><head><title>Are you a robot?</title>
<script src="https://www.google.com/recaptcha/api.js" async defer></script></head>
<body><div class="container"><h1>Please verify you are human</h1>
<p>We detected unusual activity from your network. Complete the check below to continue to the site.</p>
<form action="/verify" method="post"><div class="g-recaptcha" data-sitekey="6Lc_aXkUAAAAAEKt"></div>
<button type="submit">Continue</button></form><p>Reference: 18f2-88ac</p></div></body></html>"""

HCAPTCHA_ONLY_PAGE = """<!DOCTYPE html><html><head><title>Security check</title>
<script src="https://js.hcaptcha.com/1/api.js" async></script></head>
<body><h1>One more step</h1><form method="post"><div class="h-captcha" data-sitekey="10000000-ffff"></div>
<input type="submit" value="Submit"></form></body></html>"""

LOGIN_PAGE = """<!DOCTYPE html><html><head><title>Sign In | ProNet</title></head><body>
<header><a href="/">ProNet</a></header>
<main><h1>Sign in to continue to ProNet</h1>
<p>Stay updated on your professional world.</p>
<form action="/login" method="post"><label>Email or phone</label><input name="user">
<label>Password</label><input type="password" name="pw"><a href="/reset">Forgot password?</a>
<button>Sign in</button></form><p>New to ProNet? <a href="/signup">Join now</a></p></main>
</body></html>"""

PAYWALL_PAGE = """<!DOCTYPE html><html><head><title>Inside the race to build cheaper batteries | Finance Weekly</title></head>
<body><nav><a href="/">Home</a> <a href="/markets">Markets</a></nav>
<article><h1>Inside the race to build cheaper batteries</h1>
<p>Three start-ups say they can halve the cost of grid storage within five years by replacing lithium
with sodium and iron. Investors have poured more than 900 million dollars into the sector since January.</p>
<div class="paywall"><h2>Subscribe to continue reading</h2>
<p>Get unlimited access to Finance Weekly journalism for 1 dollar a week.</p>
<a href="/subscribe">Subscribe now</a> <p>Already a subscriber? <a href="/login">Log in</a></p></div>
</article></body></html>"""

COOKIE_SHELL = """<!DOCTYPE html><html><head><title>Before you continue</title></head><body>
<div class="consent-dialog" role="dialog">
<h2>We value your privacy</h2>
<p>We use cookies and similar technologies to store and access information on your device.</p>
<p>We and our partners use cookies for personalised ads and content, ad and content measurement.</p>
<button>Accept all</button> <button>Reject all</button> <button>Manage preferences</button>
<a href="/cookie-policy">Cookie policy</a>
</div><script src="/consent.js"></script></body></html>"""

SPA_SHELL = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Dashboard</title><link rel="stylesheet" href="/static/css/main.css">
<script defer="defer" src="/static/js/main.8f2c1a.js"></script></head>
<body><div id="root"></div><script>window.__INITIAL_STATE__ = {"user": null};</script></body></html>"""

APACHE_404 = """<!DOCTYPE HTML PUBLIC "-//IETF//DTD HTML 2.0//EN">
<html><head><title>404 Not Found</title></head><body>
<h1>Not Found</h1><p>The requested URL /reports/2023/q4.html was not found on this server.</p>
<hr><address>Apache/2.4.41 (Ubuntu) Server at example.com Port 443</address></body></html>"""

FANCY_404 = """<!DOCTYPE html><html><head><title>Oops! | Acme Corp</title></head><body>
<nav><a href="/">Home</a> <a href="/products">Products</a> <a href="/about">About</a></nav>
<main><h1>Page not found</h1><p>Sorry, the page you were looking for has moved or never existed.
Try the search box or go back to the home page.</p></main>
<footer>Acme Corp, 12 Harbour Road</footer></body></html>"""

LONG_PARAGRAPHS = [
    "Browser makers have spent the last five years changing how websites can follow people from one page to the next. "
    "Safari and Firefox now block most third-party trackers by default, and Chrome has announced several timelines for doing the same.",
    "For publishers the change matters because advertising still pays for most free journalism. "
    "An industry survey from 2023 found that roughly two thirds of news sites relied on programmatic ads for at least half of their revenue.",
    "Regulators in Europe pushed in the same direction. The ePrivacy rules require consent before non-essential tracking, "
    "which is why so many pages greet visitors with a banner announcing that we use cookies before any article appears.",
    "Researchers at a university in Leuven measured the effect of those banners on twelve thousand sites. "
    "They reported that fewer than one visitor in ten opened the detailed settings, and most simply clicked the largest button.",
    "Some newspapers responded by asking readers for money directly. Membership schemes, donations and metered access grew quickly, "
    "and several outlets now earn more from readers than from advertisers for the first time in their history.",
    "Smaller local titles have found it harder. Their audiences are too small to support a subscription business on their own, "
    "so many have joined regional networks that share printing, technology and sales staff across dozens of towns.",
    "Privacy advocates argue that contextual advertising, which targets the topic of a page rather than the person reading it, "
    "could replace much of the lost revenue. Early trials by two Dutch publishers reported similar prices for both approaches.",
    "Whatever the outcome, analysts expect the next two years to decide which business models survive. "
    "The companies that already know their readers, through logins or newsletters, are thought to be best placed to adapt.",
]


def long_article(footer: str) -> str:
    paras = "".join(f"<p>{p}</p>\n" for p in LONG_PARAGRAPHS)
    return f"""<!DOCTYPE html><html><head><title>How the end of tracking is reshaping news</title></head>
<body><nav><a href="/">Home</a> <a href="/tech">Tech</a></nav>
<article><h1>How the end of tracking is reshaping news</h1>
{paras}</article><footer><p>{footer}</p></footer></body></html>"""


def ok_page(page: ExtractedPage) -> ExtractedPage:
    assert page.status == "ok", page.detail
    assert page.blocked is None
    assert page.detail
    return page


def blocked(page: ExtractedPage, kind: str) -> ExtractedPage:
    assert (page.status, page.blocked) == ("unknown", kind), page.detail
    assert page.text == ""
    assert page.detail
    return page


# --- HTML: real pages -------------------------------------------------------------------

def test_news_article_keeps_article_and_drops_nav_footer_and_cookie_banner():
    page = ok_page(extract_page(NEWS_PAGE.encode("utf-8"), "text/html; charset=UTF-8",
                                url="https://ledger.example/news/tram"))
    for sentence in ARTICLE_SENTENCES:
        assert sentence in page.text
    for chrome in ("Worldwide Headlines", "Business Briefing", "Ledger Media Group",
                   "We use cookies", "Manage preferences", "window.dataLayer", "box-sizing"):
        assert chrome not in page.text
    assert page.title == "Council approves northern tram extension | The Daily Ledger"
    assert page.content_type == "text/html"
    assert page.charset == "utf-8"
    assert "words of text/html" in page.detail


def test_long_article_that_mentions_cookies_and_subscription_stays_ok():
    html = long_article("Already a subscriber? Log in to manage your account. Cookie policy.")
    page = ok_page(extract_page(html.encode(), HTML))
    assert "announcing that we use cookies before any article appears" in page.text
    assert "Whatever the outcome" in page.text


def test_same_subscribe_footer_on_a_short_text_is_a_paywall():
    short = (f"<html><head><title>Markets</title></head><body><article><p>{LONG_PARAGRAPHS[1]}</p>"
             "</article><footer><p>Already a subscriber? Log in</p></footer></body></html>")
    page = blocked(extract_page(short.encode(), HTML), "paywall")
    assert "Already a subscriber" in page.detail


def test_short_real_page_is_kept_by_the_tag_stripping_fallback(monkeypatch):
    import trafilatura

    monkeypatch.setattr(trafilatura, "extract", lambda *a, **k: None)
    html = ("<html><head><title>Opening hours</title><script>var x = 1;</script></head><body>"
            "<nav>Home About Contact</nav><div>The library is open Monday to Friday from nine in the "
            "morning until six in the evening, and on Saturdays from ten until two. It is closed on "
            "public holidays.</div><footer>City of Example</footer></body></html>")
    page = ok_page(extract_page(html.encode(), HTML))
    assert "open Monday to Friday from nine" in page.text
    assert "Home About Contact" not in page.text
    assert "City of Example" not in page.text
    assert "var x" not in page.text
    assert "tag stripping" in page.detail


def test_og_title_is_used_when_there_is_no_title_tag():
    html = NEWS_PAGE.replace("<title>Council approves northern tram extension | The Daily Ledger</title>", "")
    page = ok_page(extract_page(html.encode(), HTML))
    assert page.title == "Council approves northern tram extension"


# --- HTML: not evidence -----------------------------------------------------------------

@pytest.mark.parametrize("html", [CLOUDFLARE_PAGE, OLD_CLOUDFLARE_PAGE, CLIENT_CHALLENGE_PAGE])
def test_bot_walls(html):
    page = blocked(extract_page(html.encode(), "text/html; charset=utf-8"), "bot_wall")
    assert page.detail.startswith("bot wall: page says '")


def test_cloudflare_detail_and_title():
    page = blocked(extract_page(CLOUDFLARE_PAGE.encode(), HTML), "bot_wall")
    assert page.title == "Just a moment..."
    assert "Just a moment..." in page.detail


def test_old_cloudflare_detail_quotes_the_sentence():
    page = blocked(extract_page(OLD_CLOUDFLARE_PAGE.encode(), HTML), "bot_wall")
    assert "Checking your browser before accessing example" in page.detail


def test_challenge_script_marker_with_no_text_is_a_bot_wall():
    html = ("<html><head><title>example.com</title></head><body><div id='cf'></div>"
            "<script>window._cf_chl_opt={cType:'non-interactive'};</script></body></html>")
    page = blocked(extract_page(html.encode(), HTML), "bot_wall")
    assert "_cf_chl_opt" in page.detail


def test_article_about_cloudflare_challenges_stays_ok():
    extra = ("<p>Visitors often see a page titled Just a moment... while Cloudflare is checking your "
             "browser, and the page asks them to enable JavaScript and cookies to continue.</p>")
    html = long_article("Contact us").replace("</article>", extra + "</article>")
    page = ok_page(extract_page(html.encode(), HTML))
    assert "checking your browser" in page.text


def test_captcha_page():
    page = blocked(extract_page(CAPTCHA_PAGE.encode(), HTML), "captcha")
    assert "captcha:" in page.detail
    assert page.title == "Are you a robot?"


def test_captcha_widget_marker_on_a_page_with_little_text():
    page = blocked(extract_page(HCAPTCHA_ONLY_PAGE.encode(), HTML), "captcha")
    assert "'h-captcha'" in page.detail
    assert "3 words" in page.detail


def test_recaptcha_on_a_long_contact_page_stays_ok():
    html = long_article("Write to us").replace(
        "</article>", '</article><form><div class="g-recaptcha" data-sitekey="x"></div></form>')
    ok_page(extract_page(html.encode(), HTML))


def test_login_wall():
    page = blocked(extract_page(LOGIN_PAGE.encode(), HTML), "login_wall")
    assert "Sign in to continue" in page.detail


def test_paywall_teaser():
    page = blocked(extract_page(PAYWALL_PAGE.encode(), HTML), "paywall")
    assert "Subscribe to continue reading" in page.detail


def test_cookie_consent_shell():
    page = blocked(extract_page(COOKIE_SHELL.encode(), HTML), "cookie_wall")
    assert page.detail.startswith("cookie wall:")
    assert page.title == "Before you continue"


def test_short_article_with_cookie_banner_over_the_other_word_threshold_stays_ok():
    body = " ".join(ARTICLE_SENTENCES[:5])  # just over COOKIE_MAX_OTHER_WORDS words
    assert ex.count_words(body) >= ex.COOKIE_MAX_OTHER_WORDS
    html = (f"<html><head><title>Tram</title></head><body><article><p>{body}</p></article>"
            "<div><p>We use cookies.</p><button>Accept all</button></div></body></html>")
    page = ok_page(extract_page(html.encode(), HTML))
    assert ARTICLE_SENTENCES[0] in page.text


def test_empty_spa_shell():
    page = blocked(extract_page(SPA_SHELL.encode(), HTML), "empty")
    assert "JavaScript" in page.detail
    assert page.title == "Dashboard"


@pytest.mark.parametrize("html", [APACHE_404, FANCY_404])
def test_error_pages(html):
    page = blocked(extract_page(html.encode(), HTML), "error_page")
    assert page.detail.startswith("error page:")


def test_error_status_in_title_only():
    html = ("<html><head><title>403</title></head><body><h1>Forbidden</h1>"
            "<p>You don't have permission to view this resource.</p></body></html>")
    blocked(extract_page(html.encode(), HTML), "error_page")


def test_access_denied_on_a_short_page():
    html = ("<html><head><title>Example</title></head><body><h1>Access Denied</h1><p>You don't have "
            "permission to access this page on this server. Reference #18.5c2a1002.1700000000</p></body></html>")
    blocked(extract_page(html.encode(), HTML), "error_page")


# --- charsets ---------------------------------------------------------------------------

FRENCH = ("<html><head><title>Carte du café</title></head><body><h1>Le menu du café</h1>"
          "<p>Un café crème coûte 3,50 € au comptoir, mais le thé à la menthe est à 4 €. "
          "« C’est très cher », dit Hélène, qui préfère le chocolat chaud de la brasserie d’à côté, "
          "où l’on sert aussi des crêpes et des gaufres à prix doux toute la journée.</p></body></html>")

GERMAN = ("<html><head><meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">"
          "<title>Zürich</title></head><body><p>Die Straße in Zürich ist schön. Müller kauft Äpfel, "
          "Öl und Brötchen in der Bäckerei am Fluss, bevor er mit dem Fahrrad über die große Brücke "
          "zur Arbeit fährt.</p></body></html>")

JAPANESE = ("<html><head><meta charset=\"Shift_JIS\"><title>東京の天気</title></head><body>"
            "<p>東京では明日、朝から雨が降る見込みです。気象庁によると、午後には風も強まり、"
            "最高気温は十五度前後にとどまる予報です。外出の際は傘をお持ちください。</p></body></html>")


def test_windows_1252_page_without_charset_anywhere():
    page = ok_page(extract_page(FRENCH.encode("cp1252"), "text/html"))
    assert "Un café crème coûte 3,50 € au comptoir" in page.text
    assert "C’est très cher" in page.text
    assert page.title == "Carte du café"
    assert page.charset == "cp1252"


def test_central_european_page_without_charset_is_not_forced_to_cp1252():
    czech = ("<html><head><title>Zprávy</title></head><body><p>Příliš žluťoučký kůň úpěl ďábelské ódy. "
             "Vláda schválila nový zákon o daních, který začne platit od ledna. Ministr řekl, že změny "
             "pomohou malým podnikům a rodinám s dětmi.</p></body></html>")
    page = ok_page(extract_page(czech.encode("cp1250"), "text/html"))
    assert "Příliš žluťoučký kůň úpěl ďábelské ódy" in page.text
    assert page.charset == "cp1250"


def test_iso_8859_1_page_whose_header_lies():
    page = ok_page(extract_page(GERMAN.encode("iso-8859-1"), "text/html; charset=utf-8"))
    assert "Die Straße in Zürich ist schön" in page.text
    assert page.title == "Zürich"
    assert page.charset == "cp1252"  # iso-8859-1 is decoded as browsers do


def test_shift_jis_page_with_meta_charset_and_a_lying_header():
    page = ok_page(extract_page(JAPANESE.encode("shift_jis"), "text/html; charset=iso-8859-1"))
    assert "東京では明日、朝から雨が降る見込みです" in page.text
    assert page.title == "東京の天気"
    assert page.charset == "cp932"


def test_utf8_page_whose_header_claims_latin1():
    page = ok_page(extract_page(FRENCH.encode("utf-8"), "text/html; charset=ISO-8859-1"))
    assert "Un café crème coûte 3,50 €" in page.text
    assert page.charset == "utf-8"


def test_utf8_page_with_bom():
    html = FRENCH.replace("Un café", "Un café naïve")
    page = ok_page(extract_page(b"\xef\xbb\xbf" + html.encode("utf-8"), "text/html"))
    assert "Un café naïve crème" in page.text
    assert page.charset == "utf-8"
    assert "\ufeff" not in page.text + page.title


def test_utf16_page_with_bom_and_no_header():
    page = ok_page(extract_page(b"\xff\xfe" + FRENCH.encode("utf-16-le"), None))
    assert page.content_type == "text/html"
    assert page.charset == "utf-16-le"
    assert "3,50 €" in page.text


# --- PDF --------------------------------------------------------------------------------

PDF_SENTENCE = "The reservoir held 41 million cubic metres of water at the end of March."
PDF_LINES = [
    "Annual water report",
    PDF_SENTENCE,
    "Rainfall over the catchment was twelve percent above the long term average.",
    "Demand from households fell slightly while industrial use remained stable.",
]


def test_pdf_text_and_metadata_title():
    page = ok_page(extract_page(make_pdf(PDF_LINES, title="Water Report 2024"), "application/pdf"))
    assert PDF_SENTENCE in page.text
    assert page.title == "Water Report 2024"
    assert page.content_type == "application/pdf"
    assert page.charset is None


def test_pdf_title_falls_back_to_first_line_and_compressed_stream_works():
    page = ok_page(extract_page(make_pdf(PDF_LINES, compress=True), "application/pdf"))
    assert PDF_SENTENCE in page.text
    assert page.title == "Annual water report"


def test_pdf_is_sniffed_behind_octet_stream_and_a_wrong_html_header():
    body = make_pdf(PDF_LINES)
    for header in ("application/octet-stream", None, "text/html; charset=utf-8"):
        page = ok_page(extract_page(body, header))
        assert page.content_type == "application/pdf"
        assert PDF_SENTENCE in page.text


def test_broken_pdf_is_unreadable():
    body = b"%PDF-1.7\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R >>\nendobj\ngarbage \x00\x01\x02 trailer"
    page = blocked(extract_page(body, "application/pdf"), "unreadable")
    assert "cut at the byte cap" not in page.detail


def test_truncated_pdf_says_it_was_cut():
    body = make_pdf(PDF_LINES)[:120]
    page = blocked(extract_page(body, "application/pdf", truncated=True), "unreadable")
    assert "cut at the byte cap" in page.detail


def test_encrypted_pdf_is_unreadable():
    import io

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(make_pdf(PDF_LINES))))
    writer.encrypt("secret", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    page = blocked(extract_page(buf.getvalue(), "application/pdf"), "unreadable")
    assert "encrypted" in page.detail


def test_pdf_without_text_is_empty():
    page = blocked(extract_page(make_pdf([]), "application/pdf"), "empty")
    assert "0 words" in page.detail


# --- JSON, plain text, unsupported ------------------------------------------------------

def test_json_is_pretty_printed_evidence():
    data = {"title": "GDP by country", "rows": [{"country": "Chile", "gdp_usd_bn": 301.0}]}
    page = ok_page(extract_page(json.dumps(data).encode(), "application/json; charset=utf-8"))
    assert page.text == json.dumps(data, indent=1, ensure_ascii=False)
    assert page.title == "GDP by country"
    assert page.content_type == "application/json"


def test_json_is_sniffed_behind_octet_stream():
    page = ok_page(extract_page(b'[{"city": "Z\xc3\xbcrich", "pop": 421878}]', "application/octet-stream"))
    assert page.content_type == "application/json"
    assert '"city": "Zürich"' in page.text


def test_empty_json_is_empty():
    blocked(extract_page(b"{}", "application/json"), "empty")


def test_invalid_json_is_kept_as_text():
    body = b'{"note": "cut off here, the rest of the records were not returned by the server'
    page = ok_page(extract_page(body * 2, "application/json"))
    assert page.text.startswith('{"note": "cut off here')


def test_plain_text_as_is():
    body = ("Minutes of the parish meeting\n\nThe parish agreed to repair the footbridge over the mill "
            "stream before winter and to ask the county for a grant towards the cost of new railings.\n")
    page = ok_page(extract_page(body.encode("utf-8"), "text/plain; charset=utf-8"))
    assert page.text == body.strip()
    assert page.title == "Minutes of the parish meeting"
    assert page.charset == "utf-8"
    assert page.content_type == "text/plain"


def test_markdown_title_and_latin1_text():
    body = "# Café notes\n\n" + " ".join(["The café on the corner sells good coffee."] * 4)
    page = ok_page(extract_page(body.encode("latin-1"), "text/markdown"))
    assert page.title == "Café notes"
    assert "The café on the corner" in page.text


def test_plain_text_served_with_no_header():
    body = b"Line one of a plain text file with enough words to count as evidence for the judge, " * 2
    page = ok_page(extract_page(body, None))
    assert page.content_type == "text/plain"


def test_plain_text_error_body_is_an_error_page():
    blocked(extract_page(b"403 Forbidden: access denied", "text/plain"), "error_page")


def test_html_served_as_text_plain_is_html():
    page = ok_page(extract_page(NEWS_PAGE.encode(), "text/plain"))
    assert page.content_type == "text/html"
    assert "Worldwide Headlines" not in page.text


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"


@pytest.mark.parametrize("body,header,media", [
    (PNG, "image/png", "image/png"),
    (b"ID3\x03\x00\x00\x00", "audio/mpeg", "audio/mpeg"),
    (b"\x00\x00\x00\x18ftypmp42", "video/mp4", "video/mp4"),
    (b"PK\x03\x04\x14\x00\x06\x00", "application/zip", "application/zip"),
    (b"\x7fELF\x02\x01\x01\x00" * 4, "application/octet-stream", "application/octet-stream"),
    (PNG, None, "application/octet-stream"),
])
def test_unsupported_types(body, header, media):
    page = blocked(extract_page(body, header), "unsupported_type")
    assert page.content_type == media
    assert media in page.detail


def test_empty_body():
    page = blocked(extract_page(b"", "text/html"), "empty")
    assert page.content_type == "text/html"


# --- never raise ------------------------------------------------------------------------

def test_parser_exception_becomes_unreadable(monkeypatch):
    import trafilatura

    def boom(*args, **kwargs):
        raise RuntimeError("parser exploded")

    monkeypatch.setattr(trafilatura, "extract", boom)
    page = blocked(extract_page(NEWS_PAGE.encode(), "text/html; charset=utf-8"), "unreadable")
    assert "RuntimeError" in page.detail
    assert page.content_type == "text/html"


def test_garbage_input_does_not_raise():
    page = blocked(extract_page(None, "text/html"), "unreadable")  # type: ignore[arg-type]
    assert "TypeError" in page.detail
    for body in (b"\xff" * 5000, b"<html" + b"\x00\xfe" * 100, b"{[", b"%PDF-"):
        for header in ("text/html", None, "application/json", "text/plain; charset=bogus-9"):
            assert isinstance(extract_page(body, header), ExtractedPage)


def test_result_is_frozen():
    page = extract_page(b"hello", "text/plain")
    with pytest.raises(Exception):
        page.status = "ok"  # type: ignore[misc]
