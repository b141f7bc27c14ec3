"""The built book as a reader's browser shows it (Chromium, served on 127.0.0.1).

For pages in each language: every formula typeset by MathJax (no raw TeX left), every
image loaded, the glued values of the page's ``{glue:text}`` roles (read from the
build's executed notebook) in the page's text, ``<html lang>`` zh-Hans or en, captions
and table notes at WCAG AA contrast (4.5:1) in the light and the dark theme, the 💻
marker drawn by an emoji font, no request leaving 127.0.0.1 and none failing, no
sideways scroll of the page at 412 px, and the 中文 / English switch landing on the
same section of the twin.  Demo 02-1's table fits a desktop text column and keeps its
last column reachable at 412 px.  The search page finds every page that contains
延迟, 带宽 and all-reduce (the expected set is computed from the built pages' text, as
tests/test_site.py does for the index).  Screenshots (desktop and 412 px) go to
``_build/screenshots/``; a summary table is printed at the end.
"""

from __future__ import annotations

import ast
import functools
import json
import re
import statistics
from pathlib import Path
from urllib.parse import quote, urljoin, urlsplit

import pytest
from test_site import article_text, contains, twin

from . import probes
from .conftest import DESKTOP, PHONE, SUMMARY

LANGS = ("zh", "en")
PAGES = ["chapters/{lang}/p5/02-links", "chapters/{lang}/p5/04-collectives",
         "chapters/{lang}/p5/05-allreduce", "chapters/{lang}/p5/07-llm-inference",
         "chapters/{lang}/ch1/02-performance-models", "chapters/{lang}/ch1/04-allreduce-algorithms",
         "chapters/{lang}/measure/measuring", "exercises/{lang}/p5"]
# The 中文 / English switch is followed from one page of each pair (a second page load):
# from the Chinese page for every other pair, from the English page for the rest.
TWIN_FROM = {template.format(lang=LANGS[i % 2]) for i, template in enumerate(PAGES)}
SEARCH_TERMS = ["延迟", "带宽", "all-reduce", "环", "α-β", "交换机内归约"]
HTML_LANG = {"zh": "zh-Hans", "en": "en"}
MIN_CONTRAST = 4.5  # WCAG 2 AA, normal text
EMOJI = "💻"  # marks the exercises a reader can check with commbook
DEMO_02_1 = 'table.commbook-table[data-demo="02-1"]'
# The twin-switch check scrolls a leaf section to the top of a window at most this high and
# at most 2.5 times the section (the switch takes the last section whose top is above a
# third of the window, so the next one must start below it).
TWIN_WINDOW = {"width": 1280, "height": 450}
TWIN_MIN_HEIGHT = 240  # below this the sticky header covers too much of the window
GLUE_ROLE = re.compile(r"\{glue(?::text)?\}`([^`:]+)`")
# TeX that MathJax would have replaced: delimiters and control words, outside code.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|alpha|beta|sum|cdot|times|log|mathrm|text)\b")
# Sphinx's smart quotes: the page shows “rd” where the glued text says "rd".
QUOTES = str.maketrans({"\u201c": '"', "\u201d": '"', "\u2018": "'", "\u2019": "'", "\u00a0": " "})


def docnames(template: str) -> list[str]:
    return [template.format(lang=lang) for lang in LANGS]


def glued_values(executed: Path, docname: str) -> dict[str, str]:
    """The values of the glue keys that the page's text pastes, as MyST-NB renders them
    (the build keeps the page's glued outputs in ``<page>.glue.json`` beside the executed
    notebook, whose markdown cells hold the ``{glue:text}`` roles)."""
    nb = json.loads((executed / f"{docname}.ipynb").read_text(encoding="utf-8"))
    used = {key for cell in nb["cells"] if cell["cell_type"] == "markdown"
            for key in GLUE_ROLE.findall("".join(cell["source"]))}
    if not used:
        return {}
    outputs = json.loads((executed / f"{docname}.glue.json").read_text(encoding="utf-8"))
    values = {}
    for key in used:
        assert "text/plain" in outputs.get(key, {}).get("data", {}), f"{docname}: glue key {key!r} has no text value"
        text = outputs[key]["data"]["text/plain"]
        try:
            values[key] = str(ast.literal_eval(text))
        except (SyntaxError, ValueError):
            values[key] = text
    return values


def squash(text: str) -> str:
    return re.sub(r"\s+", " ", text.translate(QUOTES)).strip()


class Requests:
    """What a page asked for and said: requests to hosts other than 127.0.0.1, requests that
    failed or were answered with an error status, and JavaScript errors (uncaught exceptions
    and console errors) — Playwright event handlers."""

    def __init__(self, page: object) -> None:
        self.remote: list[str] = []
        self.failed: list[str] = []
        self.errors: list[str] = []
        page.on("request", self._request)
        page.on("requestfailed", self._failed)
        page.on("response", self._response)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.on("console", lambda msg: self.errors.append(f"console.error: {msg.text}") if msg.type == "error" else None)

    def _request(self, request: object) -> None:
        parts = urlsplit(request.url)
        if parts.scheme not in ("data", "blob", "about") and parts.hostname != "127.0.0.1":
            self.remote.append(request.url)

    def _failed(self, request: object) -> None:
        self.failed.append(f"{request.url} ({request.failure})")

    def _response(self, response: object) -> None:
        if response.status >= 400:
            self.failed.append(f"{response.url} ({response.status})")


def open_page(context: object, url: str, viewport: dict = DESKTOP) -> tuple[object, Requests]:
    """A new page of ``context`` at ``viewport``, loaded, its formulas and fonts ready, and
    what it requests and reports from the first byte."""
    page = context.new_page()
    requests = Requests(page)
    page.set_viewport_size(viewport)
    page.goto(url, wait_until="load")
    page.evaluate(probes.READY)
    return page, requests


def shot_name(docname: str, size: str) -> str:
    return f"{docname.replace('/', '_')}-{size}.png"


@pytest.mark.parametrize("docname", [d for t in PAGES for d in docnames(t)])
def test_page(docname: str, browser_context: object, server: str, executed: Path, screenshots: Path) -> None:
    lang = "zh" if "/zh/" in docname else "en"
    page, requests = open_page(browser_context, urljoin(server, f"{docname}.html"))
    problems: dict[str, list[str]] = {}
    passed: list[str] = []

    def check(name: str, failures: list[str], note: str = "") -> None:
        if failures:
            problems[name] = failures
        else:
            passed.append(f"{name}{note}")

    try:
        got_lang = page.evaluate("() => document.documentElement.lang")
        check("lang", [] if got_lang == HTML_LANG[lang] else [f"<html lang={got_lang!r}>"], f"={got_lang}")

        math = page.evaluate(probes.MATH)
        raw = sorted({m.group(0) for m in RAW_TEX.finditer(math["text"])})
        check("math", [f"not typeset: {t}" for t in math["untypeset"]] + [f"MathJax error: {e}" for e in math["errors"]]
              + [f"raw TeX in the text: {raw}"] * bool(raw), f" {math['count']}")

        images = page.evaluate(probes.IMAGES)
        check("images", [f"not loaded: {i['src']}" for i in images if not i["ok"]], f" {len(images)}")

        text = squash(page.evaluate(probes.TEXT))
        values = glued_values(executed, docname)
        check("glue", [f"{k} = {v!r} not in the page" for k, v in values.items() if squash(v) not in text],
              f" {len(values)}")

        low = [f"{theme}: {c['what']} {c['ratio']}:1 ({c['color']} on {c['bg']}): {c['text']!r}"
               for theme in ("light", "dark") for c in page.evaluate(probes.CONTRAST, theme) if c["ratio"] < MIN_CONTRAST]
        check("contrast", low[:5])

        if EMOJI in text:
            glyph = page.evaluate(probes.EMOJI, EMOJI)
            check("emoji", [] if glyph["colored"] else
                  [f"{EMOJI} has no colour glyph in {glyph['font']} (no emoji font: apt-get install fonts-noto-color-emoji)"])
        page.screenshot(path=screenshots / shot_name(docname, "desktop"))

        if page.locator(DEMO_02_1).count():
            check("table 02-1", demo_table(page, screenshots, docname))

        page.set_viewport_size(PHONE)
        page.evaluate("() => window.scrollTo(0, 0)")
        overflow = page.evaluate(probes.OVERFLOW)
        check("412px", [] if overflow["scroll"] <= overflow["inner"] else
              [f"page scrolls sideways: {overflow['scroll']} > {overflow['inner']} px; too wide: {overflow['wide']}"])
        page.screenshot(path=screenshots / shot_name(docname, "412px"))

        if lang == "zh":
            check("interface", zh_interface(page))

        if docname in TWIN_FROM:
            check("twin", follow_twin(page, docname), f"->{'en' if lang == 'zh' else 'zh'}")
        check("local", requests.remote[:5] + requests.failed[:5])
        check("console", requests.errors[:5])
    finally:
        page.close()
    SUMMARY["pages"][docname] = ", ".join(passed) + (f"; FAILED: {', '.join(problems)}" if problems else "")
    assert not problems, f"{docname}: {json.dumps(problems, ensure_ascii=False, indent=1)}"


# Interface strings a Chinese page must not show in English: the folded cells' prompts
# (MyST-NB) and the dropdowns' hints (sphinx-togglebutton, shown from data-toggle-hint).
ZH_UI_ENGLISH = ("Click to show", "Click to hide", "Show code cell", "Hide code cell")


def zh_interface(page: object) -> list[str]:
    """The English interface strings a Chinese page shows: in its text, or as the hint of
    a toggle button (an attribute the theme's CSS displays)."""
    text = page.evaluate("() => document.body.innerText")
    hints = page.evaluate("() => [...document.querySelectorAll('[data-toggle-hint]')]"
                          ".map(b => b.getAttribute('data-toggle-hint'))")
    return ([f"text: {w!r}" for w in ZH_UI_ENGLISH if w in text]
            + sorted({f"toggle hint: {h!r}" for h in hints if re.search("[A-Za-z]", h or "")}))


def demo_table(page: object, screenshots: Path, docname: str) -> list[str]:
    """Demo 02-1's table fits a desktop text column; at 412 px it may scroll inside its
    own box, and its last column is inside that box once scrolled to the end."""
    table = page.locator(DEMO_02_1)
    failures = []
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        table.evaluate("t => { t.scrollIntoView(); t.scrollLeft = t.scrollWidth; }")
        fit = table.evaluate("t => ({scroll: t.scrollWidth, client: t.clientWidth, overflow: getComputedStyle(t).overflowX})")
        box = table.bounding_box()
        cells = [table.locator("thead th").last.bounding_box(), table.locator("tbody tr td:last-child").last.bounding_box()]
        table.screenshot(path=screenshots / shot_name(docname, f"demo-02-1-{size['width']}px"))
        if size is DESKTOP and fit["scroll"] > fit["client"] + 1:
            failures.append(f"{size['width']} px: the table is {fit['scroll']} px wide in a {fit['client']} px box")
        if fit["scroll"] > fit["client"] + 1 and fit["overflow"] not in ("auto", "scroll"):
            failures.append(f"{size['width']} px: the table overflows ({fit}) and does not scroll")
        for cell in cells:
            if not box["x"] - 1 <= cell["x"] <= cell["x"] + cell["width"] <= box["x"] + box["width"] + 1:
                failures.append(f"{size['width']} px: the last column ({cell}) is cut off by the table box ({box})")
    page.set_viewport_size(DESKTOP)
    return failures


def follow_twin(page: object, docname: str) -> list[str]:
    """Scroll to a section, follow the 中文 / English switch, land on the twin's section at
    the same position among the page's sections (twins have the same sections)."""
    page.set_viewport_size(TWIN_WINDOW)
    sections = page.evaluate(probes.SECTIONS)
    leaf = sections["leaf"]
    if not any(leaf):
        return [f"no leaf section among {sections['ids']}"]
    # The first section tall enough for the full window, else the tallest (fonts differ
    # between machines: a short exercise section gets a lower window).
    ordinal = next((i for i, h in enumerate(leaf) if h * 2.5 >= TWIN_WINDOW["height"]),
                   max(range(len(leaf)), key=leaf.__getitem__))
    height = min(TWIN_WINDOW["height"], int(leaf[ordinal] * 2.5))
    if height < TWIN_MIN_HEIGHT:
        return [f"no leaf section taller than {TWIN_MIN_HEIGHT / 2.5:.0f} px among {sections['ids']}"]
    page.set_viewport_size({"width": TWIN_WINDOW["width"], "height": height})
    source_id = sections["ids"][ordinal]
    page.evaluate("(id) => document.getElementById(id).scrollIntoView()", source_id)
    page.evaluate(probes.SETTLED)
    link = page.locator("nav.commbook-lang-switch a.commbook-twin-link")
    if link.count() != 1:
        return [f"{link.count()} twin links in the header"]
    # The mouse, not Locator.click(), which would scroll the sticky header "into view".
    box = link.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    with page.expect_navigation(wait_until="load"):
        page.mouse.click(x, y)
    page.evaluate(probes.READY)
    url = urlsplit(page.url)
    if not url.path.endswith(f"/{twin(docname)}.html"):
        return [f"the switch went to {page.url}, not {twin(docname)}"]
    landed = page.evaluate(probes.SECTIONS)
    if len(landed["ids"]) != len(sections["ids"]):
        return [f"twins differ in sections: {len(sections['ids'])} vs {len(landed['ids'])}"]
    target = landed["ids"][ordinal]
    if url.fragment != quote(target, safe=""):
        return [f"from #{source_id} the switch went to #{url.fragment}, not #{target}"]
    top = page.evaluate(probes.TOP_OF, target)
    if top is None or not -2 <= top <= height / 3:
        return [f"#{target} is at {top} px after the switch, not at the top of the window"]
    return []


@functools.cache
def page_texts(site: Path) -> dict[str, str]:
    """The content of every built page (not search/genindex, nor viewcode's _modules/ source
    pages, which Sphinx does not index), by docname."""
    texts = {}
    for path in site.rglob("*.html"):
        docname = path.relative_to(site).with_suffix("").as_posix()
        if docname not in ("search", "genindex") and not docname.startswith(("_static/", "_sources/", "_modules/")):
            texts[docname] = article_text(path.read_text(encoding="utf-8"))
    return texts


@pytest.mark.parametrize("term", SEARCH_TERMS)
def test_search(term: str, site: Path, browser_context: object, server: str) -> None:
    expected = {d for d, text in page_texts(site).items() if contains(text, term)}
    assert expected, f"no built page contains {term!r}"
    page = browser_context.new_page()
    requests = Requests(page)
    try:
        page.goto(urljoin(server, f"search.html?q={quote(term)}"), wait_until="load")
        page.wait_for_function("() => (document.querySelector('#search-results p.search-summary') || {}).textContent")
        hrefs = page.eval_on_selector_all("#search-results ul.search li > a", "els => els.map(a => a.href)")
    finally:
        page.close()
    found = {urlsplit(h).path.removeprefix(urlsplit(server).path).removesuffix(".html") for h in hrefs}
    zh = sum("/zh/" in d for d in found)
    SUMMARY["search"][term] = (f"{len(found)} pages ({zh} zh, {sum('/en/' in d for d in found)} en); "
                               f"{len(expected & found)} of the {len(expected)} pages that contain it")
    assert not requests.remote and not requests.failed, f"search: {requests.remote[:5]} {requests.failed[:5]}"
    missing = expected - found
    assert not missing, f"searching {term!r} misses {sorted(missing)}"


# What one page of the book costs a reader with an empty cache (issue 19 §5: median page
# <= 2 MB, heaviest <= 3 MB).  Before _ext/commbook_weight.py a page took 3.5-6 MB, 2.8 MB
# of it the search index and fontawesome.js; before _ext/commbook_math.py typeset the
# formulas at build time, MathJax's tex-chtml.js (1.16 MB) came with every page: median
# 2.51 MB, heaviest 3.19 MB.
MAX_PAGE_BYTES = 3.0e6
MAX_MEDIAN_BYTES = 2.0e6


def test_page_weight(browser_context: object, server: str) -> None:
    weights = {}
    for docname in [d for t in PAGES for d in docnames(t)] + ["index"]:
        page = browser_context.new_page()
        sizes: dict[str, int] = {}

        def count(response: object) -> None:
            try:
                sizes[response.url] = len(response.body())
            except Exception:       # a redirect or an aborted request has no body
                pass

        try:
            page.context.new_cdp_session(page).send("Network.setCacheDisabled", {"cacheDisabled": True})
            page.on("response", count)
            page.goto(urljoin(server, f"{docname}.html"), wait_until="networkidle")
            page.evaluate(probes.READY)
        finally:
            page.close()
        weights[docname] = sum(sizes.values())
    ranked = sorted(weights.values())
    heaviest = max(weights, key=weights.get)
    SUMMARY["search"]["(page weight)"] = (f"median {statistics.median(ranked) / 1e6:.2f} MB, heaviest "
                                          f"{weights[heaviest] / 1e6:.2f} MB ({heaviest}), over {len(weights)} pages")
    over = {d: f"{w / 1e6:.2f} MB" for d, w in weights.items() if w > MAX_PAGE_BYTES}
    assert not over, f"pages over {MAX_PAGE_BYTES / 1e6:.1f} MB: {over}"
    assert statistics.median(ranked) <= MAX_MEDIAN_BYTES, \
        f"median page {statistics.median(ranked) / 1e6:.2f} MB > {MAX_MEDIAN_BYTES / 1e6:.1f} MB"
