"""The explorers on the built pages (issue 19 §3), in a real browser.

On one English and one Chinese page: the view is drawn from its precomputed states (the
static rendering hidden), every control has a label (Chinese on the Chinese page), Tab
reaches the controls in order, an arrow key on a slider redraws the chart and swaps the
table, the chart's background follows the theme's dark mode, the chart library comes
from the site (no other host), and the page logs no error.  Needs the built book
(``COMMBOOK_SITE``, see conftest.py).
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlparse

import pytest

from .conftest import SUMMARY

PAGES = {"chapters/en/p5/05-allreduce": "en", "chapters/zh/p5/07-llm-inference": "zh"}
CJK = re.compile(r"[\u4e00-\u9fff]")

CONTROLS = """(root) => [...root.querySelectorAll('.commbook-interactive-controls select, '
  + '.commbook-interactive-controls input')].map(el => {
    const label = document.querySelector(`label[for="${el.id}"]`);
    return {id: el.id, tag: el.tagName.toLowerCase(), type: el.type, label: label ? label.textContent : null,
            max: el.max, value: el.value};
  })"""
# The element Tab reaches just before the first control: the last tabbable one above it.
FOCUS_BEFORE = """(id) => {
  const first = document.getElementById(id);
  const all = [...document.querySelectorAll('a[href], button, input, select, textarea, [tabindex]')]
    .filter(el => el.tabIndex >= 0 && !el.disabled && el.offsetParent !== null);
  const before = all.filter(el => el.compareDocumentPosition(first) & Node.DOCUMENT_POSITION_FOLLOWING);
  const prev = before[before.length - 1];
  prev.focus();
  return prev === document.activeElement;
}"""
BACKGROUND = """() => getComputedStyle(document.querySelector('.commbook-interactive-chart svg')).backgroundColor"""


def _luminance(css: str) -> float:
    r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
    return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255


@pytest.mark.parametrize("docname", list(PAGES))
def test_explorer_on_the_page(browser_context: object, server: str, docname: str) -> None:
    lang = PAGES[docname]
    page = browser_context.new_page()
    errors: list[str] = []
    hosts: set[str] = set()
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: hosts.add(urlparse(r.url).netloc))
    try:
        page.goto(urljoin(server, f"{docname}.html"), wait_until="networkidle")
        root = page.locator("div.commbook-interactive").first
        root.scroll_into_view_if_needed()
        page.wait_for_selector("div.commbook-interactive-live .commbook-interactive-chart svg", timeout=30_000)
        assert not page.locator("div.commbook-interactive-live > .commbook-interactive-static").first.is_visible()

        controls = root.evaluate(CONTROLS)
        assert controls, docname
        for c in controls:
            assert c["label"], (docname, c)
            if lang == "zh":
                assert CJK.search(c["label"]), (docname, c["label"])

        # Tab walks into the controls, in order
        assert page.evaluate(FOCUS_BEFORE, controls[0]["id"])
        for c in controls[:3]:
            page.keyboard.press("Tab")
            assert page.evaluate("() => document.activeElement.id") == c["id"], (docname, c["id"])

        # an arrow key on a slider redraws the chart and swaps the table
        slider = next(c for c in controls if c["type"] == "range")
        chart = root.locator(".commbook-interactive-chart")
        table = root.locator(".commbook-interactive-table")
        before = chart.get_attribute("data-state"), chart.inner_html(), table.inner_html()
        page.focus(f"#{slider['id']}")
        page.keyboard.press("ArrowLeft" if slider["value"] == slider["max"] else "ArrowRight")
        page.wait_for_function("([el, s]) => el.getAttribute('data-state') !== s",
                               arg=[chart.element_handle(), before[0]])
        page.wait_for_timeout(300)
        after = chart.get_attribute("data-state"), chart.inner_html(), table.inner_html()
        assert after[1] != before[1] and after[2] != before[2], docname

        # dark mode: the chart's background turns dark, and back
        light = page.evaluate(BACKGROUND)
        page.evaluate("() => document.documentElement.setAttribute('data-theme', 'dark')")
        page.wait_for_function("() => document.querySelector('.commbook-interactive-chart')"
                               ".getAttribute('data-theme') === 'dark'")
        page.wait_for_timeout(300)
        dark = page.evaluate(BACKGROUND)
        assert _luminance(light) > 0.8 and _luminance(dark) < 0.3, (light, dark)
        page.evaluate("() => document.documentElement.setAttribute('data-theme', 'light')")

        site_host = urlparse(server).netloc
        assert hosts <= {site_host}, f"requests to other hosts: {hosts - {site_host}}"
        assert not errors, errors
        SUMMARY["pages"][f"{docname} (explorer)"] = (f"{len(controls)} controls, Tab order, keyboard redraw, "
                                                      f"dark {dark}")
    finally:
        page.close()


def test_bundle_only_where_needed(site: object) -> None:
    """The chart library is one file under _static/, named only by the pages that need it."""
    bundle = site / "_static" / "commbook-vega.js"
    assert bundle.is_file() and bundle.stat().st_size > 500_000
    for docname in PAGES:
        assert "commbook-interactive.js" in (site / f"{docname}.html").read_text(encoding="utf-8")
    for plain in ("index.html", "search.html"):
        assert "commbook-interactive" not in (site / plain).read_text(encoding="utf-8"), plain
