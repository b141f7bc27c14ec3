"""Explorers live on the static page (issue 19 §3), offline.

A page cell ``offline(SomeExplorer(lang=LANG))`` (``commbook.book.explorers.static``)
writes an element ``<div class="commbook-interactive">`` holding the explorer's states,
precomputed over a grid of its controls, as JSON.  This extension

* refuses to write a page that holds an interactive view when the chart library is
  missing: Vega and Vega-Lite, from the npm registry at the versions pinned in
  ``package.json``/``package-lock.json`` (``make venv`` runs ``npm ci``), never a CDN
  (a book without such a page, a test's small book say, builds without them);
* writes them, once, as ``_static/commbook-vega.js`` (one file, cached across pages);
* adds ``_static/commbook-interactive.js`` (which fetches that file once a view comes near
  the screen) and ``_static/commbook-interactive.css``
  (written from ``_ext/interactive/``: Jupyter Book would load every script of the book's
  own ``_static/`` on every page) to the pages that hold an interactive view, and to no
  other page.

Weights measured before choosing (minified; gzip -9), 2026-12: ``vega.min.js`` 6.4.0
521 KB (180 KB), ``vega-lite.min.js`` 6.4.3 251 KB (79 KB), together 772 KB (259 KB);
``plotly-basic.min.js`` 4.1.1 1,192 KB (395 KB); Bokeh 3.9.2's ``bokeh.min.js`` 1,268 KB
(351 KB, plus ``bokeh-widgets.min.js`` 382 KB).  ``vega-embed`` (60 KB) is not needed.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

BUNDLE = "commbook-vega.js"
PARTS = ("vega/build/vega.min.js", "vega-lite/build/vega-lite.min.js")
MARKER = 'class="commbook-interactive"'
ASSETS = Path(__file__).resolve().parent / "interactive"


def bundle_parts(root: Path) -> list[Path]:
    """The minified files that make :data:`BUNDLE`, under ``root/node_modules``; an
    ``ExtensionError`` that says how to install them when one is missing."""
    parts = [root / "node_modules" / p for p in PARTS]
    missing = [str(p) for p in parts if not p.is_file()]
    if missing:
        raise ExtensionError(
            "commbook_interactive: the chart library of the interactive explorers is missing "
            f"({', '.join(missing)}); install it with `make venv` or `npm ci` in {root} "
            "(versions pinned in package.json / package-lock.json)")
    return parts


def _page(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: object) -> None:
    body = context.get("body") or ""
    if MARKER not in body:
        return
    bundle_parts(Path(app.confdir))
    app.add_css_file("commbook-interactive.css")
    app.add_js_file("commbook-interactive.js", priority=600)   # it fetches BUNDLE when a view nears the screen


def _write(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    root = Path(app.confdir)
    if not all((root / "node_modules" / p).is_file() for p in PARTS):
        return                                     # no page needed it (else _page refused to go on)
    versions = [json.loads((root / "node_modules" / p.split("/")[0] / "package.json").read_text())["version"]
                for p in PARTS]
    header = (f"/* Vega {versions[0]} and Vega-Lite {versions[1]}, BSD-3-Clause, Copyright (c) the University "
              "of Washington Interactive Data Lab; from the npm registry (package-lock.json). */\n")
    out = Path(app.outdir) / "_static" / BUNDLE
    out.parent.mkdir(parents=True, exist_ok=True)
    for asset in ASSETS.iterdir():
        if asset.suffix in (".js", ".css"):
            shutil.copyfile(asset, out.parent / asset.name)
    out.write_text(header + "\n".join(p.read_text(encoding="utf-8") for p in bundle_parts(root)), encoding="utf-8")


def setup(app: Sphinx) -> dict:
    # the page kernels (started by myst-nb from this process) inherit it: offline(...) cells
    # then embed their states (commbook.book.explorers.static.BUILD_ENV); a reader's kernel does not
    os.environ["COMMBOOK_OFFLINE_STATES"] = "1"
    app.connect("html-page-context", _page)
    app.connect("build-finished", _write)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
