"""The reader's side of the built site (issue 19 §1, §2, §5), in Chromium:

* the sidebar drawer: on a 412 px phone the visible ☰ opens the navigation drawer and a
  link in it navigates; on a desktop ☰ folds the sidebar and unfolds it again;
* the sidebar lists the reader's language only (its parts without the "中文 · " /
  "English · " prefix), on a page of each language;
* the search page in the reader's language: with ``lang=zh`` its title, heading and
  status line are Chinese, the results shown are Chinese pages (the English ones behind
  one button), and no snippet shows TeX (``\\(k\\)``, ``\\frac``) or cells run together;
* sideways scrolling boxes (wide tables, display formulas) take keyboard focus, and an
  arrow key scrolls them; the counts of wide boxes per page are printed;
* in the dark theme, outputs sit on the page's own background (no light panels) and
  figures are shown inverted;
* ``404.html`` exists and every link on it leads to a page of the site.
"""
from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest

from .conftest import DESKTOP, PHONE, SUMMARY
from .test_browser import RAW_TEX, open_page  # RAW_TEX: TeX that MathJax would have replaced

CHAPTER = {"zh": "chapters/zh/p5/00-navigation.html", "en": "chapters/en/p5/00-navigation.html"}
DARK_PAGE = "chapters/en/ch1/05-hierarchical.html"  # tables, notes and figures in outputs
WIDE_PAGES = ["chapters/en/ch1/04-allreduce-algorithms.html", "chapters/zh/ch1/05-hierarchical.html",
              "chapters/en/ch1/07-libraries.html", "chapters/zh/p5/05-allreduce.html"]


def _open(context: object, url: str, viewport: dict) -> object:
    page, requests = open_page(context, url, viewport)
    page.commbook_errors = requests.errors  # type: ignore[attr-defined]
    return page


def _visible(page: object, selector: str) -> object:
    for handle in page.query_selector_all(selector):
        if handle.is_visible():
            return handle
    raise AssertionError(f"no visible {selector} on {page.url}")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_drawer_opens_on_a_phone_and_navigates(lang: str, browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, CHAPTER[lang]), PHONE)
    try:
        _visible(page, ".primary-toggle").click()
        page.wait_for_function("() => document.getElementById('pst-primary-sidebar-modal').open")
        links = page.locator("#pst-primary-sidebar-modal nav.bd-docs-nav a.reference.internal")
        assert links.count() > 5, f"{lang}: the drawer shows {links.count()} links"
        target = links.nth(2)
        href = target.get_attribute("href")
        target.click()
        page.wait_for_load_state("load")
        assert page.url.split("#")[0].endswith(href.split("#")[0].lstrip("./").split("/")[-1]), \
            f"{lang}: the drawer's link {href} led to {page.url}"
        assert not page.commbook_errors, page.commbook_errors
    finally:
        page.close()


def test_menu_button_folds_the_sidebar_on_a_desktop(browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, CHAPTER["en"]), DESKTOP)
    try:
        sidebar = page.locator("#pst-primary-sidebar")
        assert sidebar.is_visible()
        _visible(page, ".primary-toggle").click()
        page.wait_for_function("() => getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility === 'hidden'")
        _visible(page, ".primary-toggle").click()
        page.wait_for_function("() => getComputedStyle(document.getElementById('pst-primary-sidebar')).visibility === 'visible'")
    finally:
        page.close()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sidebar_lists_the_readers_language(lang: str, browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, CHAPTER[lang]), DESKTOP)
    try:
        captions = page.eval_on_selector_all("#pst-primary-sidebar .caption-text", "els => els.map(e => e.textContent.trim())")
        hrefs = page.eval_on_selector_all("#pst-primary-sidebar nav.bd-docs-nav a.reference.internal",
                                          "els => els.map(a => a.href)")
        other = "en" if lang == "zh" else "zh"
        assert captions and not any(c.startswith(("中文 · ", "English · ")) for c in captions), captions
        strays = [h for h in hrefs if re.search(rf"/(chapters|exercises)/{other}/", h)]
        assert not strays, f"{lang} sidebar links to the other language: {strays[:3]}"
        assert any(f"/chapters/{lang}/" in h for h in hrefs)
    finally:
        page.close()


def test_search_page_in_chinese(browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, "search.html?q=ring&lang=zh"), DESKTOP)
    try:
        page.wait_for_function("() => /搜索完成|没有找到/.test(document.querySelector('#search-results p.search-summary')?.textContent || '')",
                               timeout=120_000)
        page.wait_for_timeout(1500)  # the snippets are fetched one page after another
        got = page.evaluate("""() => ({
          lang: document.documentElement.lang, title: document.title,
          h1: document.querySelector('.bd-search-container h1').textContent,
          status: document.querySelector('#search-results p.search-summary').textContent,
          shown: [...document.querySelectorAll('#search-results li')].filter(li => li.offsetParent).map(li => li.querySelector('a').href),
          hidden: [...document.querySelectorAll('#search-results li')].filter(li => !li.offsetParent).length,
          snippets: [...document.querySelectorAll('#search-results li p.context')].map(p => p.textContent),
          button: document.querySelector('.commbook-search-other')?.textContent || ''})""")
        assert got["lang"] == "zh-Hans" and got["h1"] == "搜索" and got["title"].startswith("搜索"), got
        assert "搜索完成" in got["status"], got["status"]
        assert got["shown"] and not [h for h in got["shown"] if re.search(r"/(chapters|exercises)/en/", h)], got["shown"][:5]
        assert got["hidden"] > 0 and "英文" in got["button"], (got["hidden"], got["button"])
        raw = [s[:80] for s in got["snippets"] if RAW_TEX.search(s)]
        assert got["snippets"] and not raw, f"snippets with TeX: {raw[:3]}"
        page.click(".commbook-search-other")
        assert page.evaluate("() => [...document.querySelectorAll('#search-results li')].every(li => li.offsetParent)")
        SUMMARY["search"]["lang=zh 'ring'"] = f"{len(got['shown'])} Chinese pages shown, {got['hidden']} English behind the button"
    finally:
        page.close()


SCROLLERS = """() => [...document.querySelectorAll(
    'article table.commbook-table, article .pst-scrollable-table-container, article mjx-container[display="true"]')]
  .filter(b => b.scrollWidth > b.clientWidth + 1)
  .map(b => ({what: b.tagName.toLowerCase() + '.' + b.className.split(' ')[0], tab: b.getAttribute('tabindex'),
              id: b.dataset.demo || (b.querySelector('caption') || {}).textContent || b.textContent.slice(0, 30)}))"""


@pytest.mark.parametrize("path", WIDE_PAGES)
def test_wide_boxes_scroll_from_the_keyboard(path: str, browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, path), PHONE)
    try:
        page.wait_for_timeout(300)
        boxes = page.evaluate(SCROLLERS)
        assert boxes, f"{path}: nothing scrolls sideways at 412 px (pick a page that has a wide table)"
        unfocusable = [b for b in boxes if b["tab"] != "0"]
        assert not unfocusable, f"{path}: wide boxes without keyboard focus: {unfocusable[:3]}"
        # Tab into the first wide box and scroll it with the arrow key.
        page.evaluate("""() => {
          const b = [...document.querySelectorAll('article [tabindex="0"].commbook-scrolls')][0];
          b.scrollIntoView(); b.focus(); }""")
        before = page.evaluate("() => document.activeElement.scrollLeft")
        for _ in range(5):
            page.keyboard.press("ArrowRight")
        try:  # the theme scrolls smoothly: the box may still be moving
            page.wait_for_function("(x) => document.activeElement.scrollLeft > x", arg=before, timeout=10_000)
        except Exception:
            pass
        after = page.evaluate("() => document.activeElement.scrollLeft")
        assert after > before, f"{path}: ArrowRight did not scroll the focused box ({before} -> {after})"
        SUMMARY["pages"][f"{path} @412px"] = f"{len(boxes)} wide boxes, all keyboard-scrollable"
    finally:
        page.close()


def test_outputs_follow_the_dark_theme(browser_context: object, server: str) -> None:
    page = _open(browser_context, urljoin(server, DARK_PAGE), DESKTOP)
    try:
        got = page.evaluate("""() => {
          document.documentElement.dataset.theme = 'dark';
          const page = getComputedStyle(document.body).backgroundColor;
          const panels = [...document.querySelectorAll('.bd-content div.cell_output .text_html')]
            .map(e => getComputedStyle(e).backgroundColor);
          const imgs = [...document.querySelectorAll('.bd-content figure img, .bd-content div.cell_output img')]
            .map(e => getComputedStyle(e).filter);
          document.documentElement.dataset.theme = 'light';
          return {page, panels, imgs};
        }""")
        light = [p for p in got["panels"] if p not in ("rgba(0, 0, 0, 0)", "transparent", got["page"])]
        assert got["panels"] and not light, f"output panels on their own background in the dark theme: {light[:3]}"
        assert got["imgs"] and all("invert" in f for f in got["imgs"]), got["imgs"][:3]
    finally:
        page.close()


def test_404_page(browser_context: object, server: str, site) -> None:
    assert (site / "404.html").is_file(), "no 404.html"
    page = _open(browser_context, urljoin(server, "404.html"), DESKTOP)
    try:
        text = page.inner_text("article")
        assert "找不到页面" in text and "Page not found" in text
        links = page.eval_on_selector_all("article a[href]", "els => els.map(a => a.href)")
        assert len(links) >= 5
        for link in links:
            response = page.request.get(link)
            assert response.ok, f"404.html links to {link}: {response.status}"
    finally:
        page.close()


ZH_TYPOGRAPHY = ["chapters/zh/ch1/01-parallelism.html", "chapters/zh/p5/05-allreduce.html",
                 "chapters/zh/notes/ch1-sources.html"]


@pytest.mark.parametrize("path", ZH_TYPOGRAPHY)
def test_chinese_typography(path: str, browser_context: object, server: str) -> None:
    """Chinese emphasis is not slanted (dots instead), no h3 is bolder than the page's h2,
    and no English word's apostrophe is the curly ’ (the CJK font draws it full-width)."""
    page = _open(browser_context, urljoin(server, path), DESKTOP)
    try:
        got = page.evaluate("""() => {
          const cjk = /[\\u3400-\\u9fff]/;
          const ems = [...document.querySelectorAll('article em')].filter(e => cjk.test(e.textContent));
          const weight = sel => [...document.querySelectorAll(sel)].map(e => +getComputedStyle(e).fontWeight);
          const text = document.querySelector('article').innerText;
          return {ems: ems.length, slanted: ems.filter(e => getComputedStyle(e).fontStyle !== 'normal').map(e => e.textContent).slice(0, 3),
                  h2: weight('article h2'), h3: weight('article h3'),
                  curly: (text.match(/[A-Za-z]\\u2019[A-Za-z]+/g) || []).slice(0, 3)};
        }""")
        assert not got["slanted"], f"{path}: Chinese emphasis in italics: {got['slanted']}"
        if got["h2"] and got["h3"]:
            assert max(got["h3"]) <= min(got["h2"]), f"{path}: h3 weights {set(got['h3'])} above h2 {set(got['h2'])}"
        assert not got["curly"], f"{path}: curly apostrophes in English words: {got['curly']}"
    finally:
        page.close()


@pytest.mark.parametrize("path", ["exercises/en/p5.html", "exercises/zh/ch1-2.html"])
def test_answers_code_sits_inside_the_answer(path: str, browser_context: object, server: str) -> None:
    """Every code cell of an exercise page but the setup cell is inside a Solution
    dropdown (_ext/commbook_exercises.py), so nothing outside the folds gives an answer away."""
    page = _open(browser_context, urljoin(server, path), DESKTOP)
    try:
        got = page.evaluate("""() => {
          const cells = [...document.querySelectorAll('article div.cell')];
          return {cells: cells.length, dropdowns: document.querySelectorAll('article details.sd-dropdown').length,
                  outside: cells.slice(1).filter(c => !c.closest('details.sd-dropdown')).map(c => c.textContent.trim().slice(0, 60))};
        }""")
        assert got["cells"] > 1 and got["dropdowns"] >= got["cells"] - 1, got
        assert not got["outside"], f"{path}: code cells outside the Solution folds: {got['outside'][:3]}"
    finally:
        page.close()
