"""Source links: every table and figure names the function that built it.

* The role ``{source}`commbook.book.ch1.allreduce_figures.fig_ring_trace``` (written in a
  figure's caption, in both languages) renders a small link, "source" on English pages and
  "源码" on Chinese ones, followed by the function's short name in code font, to the
  function's highlighted source: the page ``sphinx.ext.viewcode`` writes for its module
  (``_modules/commbook/book/ch1/allreduce_figures.html#fig_ring_trace``).
* Tables: :meth:`commbook.book.tables.Table.to_html` marks ``<table class="commbook-table">``
  with ``data-source="<dotted name>"``; every such table of a page gets the same link
  right under it (in the page's HTML, when it is written).

A name that does not import, or whose function has no anchor on its module's source page
(the module or the function is not documented in the API reference, ``reference/``), is a
Sphinx warning, which fails the book's build (``--warningiserror``).
"""
from __future__ import annotations

import html
import importlib
import re
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util import logging
from sphinx.util.osutil import relative_uri

logger = logging.getLogger(__name__)

LABEL = {"en": "source", "zh": "源码"}
CLASS = "cb-source"
TABLE = re.compile(r'<table class="commbook-table"[^>]*?\sdata-source="([^"]+)"[^>]*>.*?</table>', re.S)


def _language(docname: str) -> str:
    parts = docname.split("/")
    return "zh" if len(parts) >= 3 and parts[0] in ("chapters", "exercises") and parts[1] == "zh" else "en"


def resolve(dotted: str) -> tuple[str, str]:
    """(module, qualified name) of the object ``dotted`` names, where it is defined.

    Raises ``ValueError`` naming ``dotted`` when no module prefix imports or the rest is
    not an attribute path of it."""
    parts = dotted.strip().split(".")
    if not all(p.isidentifier() for p in parts) or len(parts) < 2:
        raise ValueError(f"source: {dotted!r} is not a dotted name module.function")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            raise ValueError(f"source: {dotted!r} does not exist ({'.'.join(parts[:cut])} has no "
                             f"{'.'.join(parts[cut:])})") from None
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None)
        if not module or not qualname:
            raise ValueError(f"source: {dotted!r} is not a function or class (it has no source of its own)")
        return module, qualname
    raise ValueError(f"source: no module of {dotted!r} imports")


def target(app: Sphinx, module: str, qualname: str) -> str | None:
    """The viewcode page of ``module`` if it has an anchor for ``qualname``, else None."""
    entry = getattr(app.env, "_viewcode_modules", {}).get(module)
    if not entry or qualname not in entry[2]:
        return None
    return "_modules/" + module.replace(".", "/")


def link_html(app: Sphinx, pagename: str, dotted: str) -> str:
    """The HTML of one source link from ``pagename`` (raises ValueError when it cannot resolve)."""
    module, qualname = resolve(dotted)
    page = target(app, module, qualname)
    if page is None:
        raise ValueError(f"source: {module}.{qualname} has no source page: document it in reference/ "
                         "(an automodule of its module, with its members)")
    builder = app.builder
    href = relative_uri(builder.get_target_uri(pagename), builder.get_target_uri(page)) + "#" + qualname
    return (f'<a class="reference external {CLASS}" href="{html.escape(href)}" title="{html.escape(dotted)}">'
            f'{LABEL[_language(pagename)]} <code class="docutils literal notranslate">{html.escape(qualname)}</code></a>')


class source_node(nodes.Inline, nodes.TextElement):
    """A ``{source}`` role awaiting resolution (the viewcode pages are known at write time)."""


def source_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    node = source_node(rawtext, text.strip())
    node["dotted"] = text.strip()
    return [node], []


class ResolveSourceLinks(SphinxPostTransform):
    """Turn every ``source_node`` into its link (a warning when it cannot resolve)."""

    default_priority = 20

    def run(self, **kwargs: Any) -> None:
        for node in list(self.document.findall(source_node)):
            dotted = node["dotted"]
            if self.app.builder.format != "html":
                node.replace_self(nodes.literal(dotted, dotted))
                continue
            try:
                raw = link_html(self.app, self.env.docname, dotted)
            except ValueError as e:
                logger.warning(str(e), location=node)
                node.replace_self(nodes.literal(dotted, dotted))
                continue
            node.replace_self(nodes.raw("", raw, format="html"))


def add_table_links(app: Sphinx, pagename: str, body: str) -> str:
    """``body`` with a source link right under every ``commbook-table`` that names its builder."""
    def one(m: re.Match) -> str:
        try:
            link = link_html(app, pagename, html.unescape(m.group(1)))
        except ValueError as e:
            logger.warning(f"{pagename}: table source: {e}")
            return m.group(0)
        return m.group(0) + f'\n<p class="{CLASS}-line">{link}</p>'
    return TABLE.sub(one, body)


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    if doctree is not None and "body" in context and "commbook-table" in context["body"]:
        context["body"] = add_table_links(app, pagename, context["body"])


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_node(source_node)
    app.add_role("source", source_role)
    app.add_post_transform(ResolveSourceLinks)
    app.connect("html-page-context", _page_context, priority=450)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": False}
