"""The reader's language decides the sidebar (issue 19 §2).

The table of contents holds both languages' parts (``_toc.yml``: captions "中文 · …" and
"English · …", besides the bilingual "About the book" and the API reference).  On a page of
one language, the sidebar lists only that language's parts, with the "中文 · " /
"English · " prefix dropped; the other language is one click away through the page's
中文 / English switch.  Bilingual pages (the landing page, ``about/``, ``reference/``) list
every part.

The pydata theme builds the sidebar with ``generate_toctree_html`` (its
``toctree.add_toctree_functions``, connected at the default priority 500); this extension
wraps that function for each page, at priority 700.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from sphinx.application import Sphinx

from commbook_sphinx import page_language

PREFIX = {"zh": "中文 · ", "en": "English · "}
# One part of the sidebar: its caption paragraph, then its list.
PART = re.compile(r'(<p aria-level="2" class="caption" role="heading"><span class="caption-text">)'
                  r'(.*?)(</span></p>\s*<ul\b.*?</ul>)(?=\s*(?:<p aria-level="2" class="caption"|$))', re.S)


def one_language(html: str, lang: str) -> str:
    """The sidebar ``html`` without the parts of the other language, and the prefix of
    ``lang``'s own parts dropped.

    >>> nav = ('<p aria-level="2" class="caption" role="heading"><span class="caption-text">'
    ...        '中文 · 第 1 章</span></p>\\n<ul class="nav"><li>a</li></ul>\\n'
    ...        '<p aria-level="2" class="caption" role="heading"><span class="caption-text">'
    ...        'English · Chapter 1</span></p>\\n<ul class="nav"><li>b</li></ul>')
    >>> out = one_language(nav, "en")
    >>> "中文" in out, "Chapter 1</span>" in out, "English ·" in out
    (False, True, False)
    """
    if lang not in PREFIX:
        raise ValueError(f"lang must be one of {sorted(PREFIX)}, not {lang!r}")
    other = next(p for code, p in PREFIX.items() if code != lang)

    def part(m: re.Match) -> str:
        caption = m.group(2)
        if caption.startswith(other):
            return ""
        return m.group(1) + caption.removeprefix(PREFIX[lang]) + m.group(3)

    return PART.sub(part, html)


def _language_sidebar(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    lang = page_language(pagename)
    generate: Callable[..., str] | None = context.get("generate_toctree_html")
    if lang is None or generate is None:
        return

    def generate_for_lang(*args: Any, **kwargs: Any) -> str:
        html = generate(*args, **kwargs)
        kind = kwargs.get("kind", args[0] if args else None)
        return one_language(str(html), lang) if kind == "sidebar" else html

    context["generate_toctree_html"] = generate_for_lang


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", _language_sidebar, priority=700)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
