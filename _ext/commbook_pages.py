"""One pass over the written site: each HTML page is read once, changed in memory and
written once (it was three passes, one per extension, each reading and rewriting every
page).

In order, for each page:

1. :func:`commbook_weight.lighter`: the scripts a page does not need (all but the search
   page);
2. :func:`commbook_exercises.answers_in_their_folds`: on exercise pages, each answer's
   computing cell inside its Solution fold;
3. :func:`commbook_math.typeset`: the formulas of every page typeset by MathJax under node,
   in one run for the whole site.
"""
from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from commbook_exercises import answers_in_their_folds
from commbook_math import typeset
from commbook_weight import lighter


def finish_pages(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    written = {path: path.read_text(encoding="utf-8") for path in sorted(out.rglob("*.html"))}
    pages = dict(written)
    for path, text in pages.items():
        if path != out / "search.html":
            text = lighter(text)
        if path.is_relative_to(out / "exercises"):
            text = answers_in_their_folds(text)
        pages[path] = text
    typeset(app, pages)
    for path, text in pages.items():
        if text != written[path]:
            path.write_text(text, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", finish_pages, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
