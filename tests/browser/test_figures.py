"""Figures one can read (issue 19 §1): every figure's smallest text, as the reader sees
it, is at least 9 CSS px on the desktop text column and 7 px on a 412 px phone.

The plotting code knows what the PNG cannot tell: :func:`commbook.book.plots.figure_png`
writes the smallest font size of the figure's text (points), the figure's width (inches)
and the dpi into the PNG's ``tEXt`` chunks.  Here, on every chapter and exercise page of
both languages, at 1280 x 900 and 412 x 915, each ``<img>`` of the article is fetched,
its chunks read, and its smallest text computed as

    min_font_pt / 72 * shown_width_px / width_in

(``shown_width_px``: the image's ``clientWidth``; for an image not laid out, e.g. in a
closed dropdown, the width it would get: its natural width capped by the column).  An
image without the chunks is a failure too: every figure goes through ``figure_png``.

A figure that could not be fixed yet is listed in :data:`KNOWN` with its measured value:
its own case is a strict ``xfail`` (an XPASS fails: remove it from the list), and the
page's case fails if its value changes.
"""

from __future__ import annotations

import functools
from pathlib import Path
from urllib.parse import urljoin

import pytest

from . import probes
from .conftest import DESKTOP, PHONE, SUMMARY

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("zh", "en")
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
MIN_PX = {"desktop": 9.0, "phone": 7.0}
KEYS = ("commbook:min-font-pt", "commbook:width-in", "commbook:dpi")


def _docnames() -> list[str]:
    """Every chapter and exercise page of both languages, from the sources."""
    names = [p.relative_to(ROOT).with_suffix("").as_posix()
             for lang in LANGS for p in sorted((ROOT / "chapters" / lang).glob("*/*.md"))]
    names += [p.relative_to(ROOT).with_suffix("").as_posix()
              for lang in LANGS for p in sorted((ROOT / "exercises" / lang).glob("*.ipynb"))]
    return names


DOCNAMES = _docnames()

KNOWN: dict[tuple[str, str, str], tuple[float, str]] = {}
"""(docname, viewport, figure) -> (smallest text in px as measured, why it is not fixed)."""

# Each article image: its shown and natural widths, where it sits, and its PNG text chunks
# (fetched again: from the cache, or decoded from a data: URI).
FIGURES = """async () => {
  const column = document.querySelector("article").clientWidth;
  const out = [];
  for (const img of document.querySelectorAll("article img")) {
    img.loading = "eager";
    try { await img.decode(); } catch (e) {}
    const src = img.currentSrc || img.src;
    const fig = img.closest("figure, .cell_output, .commbook-explorer, div[id]");
    const caption = img.closest("figure") && img.closest("figure").querySelector("figcaption");
    const item = {src: img.getAttribute("src").slice(0, 80), alt: img.alt || "",
                  shown: img.clientWidth, natural: img.naturalWidth, column,
                  where: (fig && fig.id) || "", caption: caption ? caption.textContent.trim().slice(0, 50) : "",
                  text: {}, png: false};
    try {
      const bytes = new Uint8Array(await (await fetch(src)).arrayBuffer());
      const sig = [137, 80, 78, 71, 13, 10, 26, 10];
      item.png = sig.every((b, i) => bytes[i] === b);
      let pos = 8;
      while (item.png && pos + 8 <= bytes.length) {
        const len = ((bytes[pos] << 24) | (bytes[pos + 1] << 16) | (bytes[pos + 2] << 8) | bytes[pos + 3]) >>> 0;
        const type = String.fromCharCode(...bytes.slice(pos + 4, pos + 8));
        if (type === "tEXt") {
          const data = bytes.slice(pos + 8, pos + 8 + len);
          const nul = data.indexOf(0);
          item.text[String.fromCharCode(...data.slice(0, nul))] = String.fromCharCode(...data.slice(nul + 1));
        }
        if (type === "IDAT" || type === "IEND") break;  // text chunks of figure_png come first
        pos += 12 + len;
      }
    } catch (e) { item.error = String(e); }
    out.push(item);
  }
  return out;
}"""


def figure_name(item: dict) -> str:
    """How a failure names a figure: its caption's start (or the element around it) and file."""
    where = item["caption"] or item["where"] or item["alt"]
    return f"{where!r} ({item['src'].rsplit('/', 1)[-1][:40]})"


def smallest_px(item: dict) -> float | None:
    """The figure's smallest text in CSS px as shown, or None without the chunks."""
    if not all(k in item["text"] for k in KEYS) or item["text"][KEYS[0]] == "none":
        return None
    shown = item["shown"] or min(item["natural"], item["column"])
    return float(item["text"][KEYS[0]]) / 72 * shown / float(item["text"][KEYS[1]])


@functools.lru_cache(maxsize=None)
def _measure(docname: str, view: str, context: object, server: str) -> tuple:
    page = context.new_page()
    try:
        page.set_viewport_size(VIEWPORTS[view])
        response = page.goto(urljoin(server, f"{docname}.html"), wait_until="load")
        assert response is not None and response.ok, f"{docname}.html: not in the built site"
        page.evaluate(probes.READY)
        return tuple(page.evaluate(FIGURES))
    finally:
        page.close()


def _verdicts(docname: str, view: str, items) -> tuple[list[str], dict[str, float], list[str]]:
    """(failures, measured px by figure name, passes) of one page at one viewport."""
    failures, measured, passes = [], {}, []
    for item in items:
        name = figure_name(item)
        if not item["png"] and not item.get("error"):
            failures.append(f"{name}: not a PNG drawn by figure_png")
            continue
        px = smallest_px(item)
        if px is None:
            failures.append(f"{name}: no {KEYS[0]} / {KEYS[1]} text chunks (not drawn through "
                            f"commbook.book.plots.figure_png){' ' + item['error'] if item.get('error') else ''}")
            continue
        measured[name] = px
        known = KNOWN.get((docname, view, name))
        if known is not None:
            if abs(px - known[0]) > 0.05:
                failures.append(f"{name}: listed in KNOWN at {known[0]:.2f} px, now {px:.2f} px: update the list")
        elif px < MIN_PX[view]:
            failures.append(f"{name}: smallest text {px:.2f} px < {MIN_PX[view]:g} px on the {view} "
                            f"(font {item['text'][KEYS[0]]} pt, figure {item['text'][KEYS[1]]} in, shown "
                            f"{item['shown'] or '(not laid out)'} px)")
        else:
            passes.append(name)
    return failures, measured, passes


@pytest.mark.parametrize("view", list(VIEWPORTS))
@pytest.mark.parametrize("docname", DOCNAMES)
def test_figure_text_is_readable(docname: str, view: str, browser_context: object, server: str) -> None:
    items = _measure(docname, view, browser_context, server)
    failures, measured, _ = _verdicts(docname, view, items)
    low = f", smallest {min(measured.values()):.1f} px" if measured else ""
    SUMMARY["pages"][f"{docname} figures {view}"] = (f"{len(items)} images{low}, "
                                                     f"{len(failures)} failing" if failures else f"{len(items)} images ok{low}")
    assert not failures, f"{docname} at {view} ({VIEWPORTS[view]['width']} px):\n" + "\n".join(failures)


if KNOWN:  # (no empty parameter set, reported as a skip, while every figure meets the rule)
    @pytest.mark.parametrize("docname, view, name", [
        pytest.param(d, v, n, marks=pytest.mark.xfail(strict=True, reason=f"{px:.2f} px: {why}"))
        for (d, v, n), (px, why) in KNOWN.items()])
    def test_known_unreadable_figure(docname: str, view: str, name: str, browser_context: object,
                                     server: str) -> None:
        """A figure listed in KNOWN: xfail while it is below the rule; fixed, it XPASSes and fails."""
        _, measured, _ = _verdicts(docname, view, _measure(docname, view, browser_context, server))
        assert name in measured, f"{name} not found on {docname}"
        assert measured[name] >= MIN_PX[view]
