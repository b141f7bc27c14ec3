"""commbook's Sphinx extension: the reader's side of a bilingual book.

The book has one part per language: pages under ``chapters/zh/`` and ``exercises/zh/``
are Chinese, their twins at the same path under ``chapters/en/`` and ``exercises/en/``
are English, and every other page (the landing page, search, index) is bilingual.
Sphinx itself knows one language per project; this extension makes each page behave
like its own language:

* ``<html lang="zh-Hans">`` on Chinese pages (``lang="en"`` elsewhere), and the
  theme's interface words (previous/next, "Contents", figure prefix ``图``, admonition
  titles, the prompts of folded code cells) in Chinese;
* figure, table and equation numbers restart on every page, so a page and its twin
  carry the same numbers (Sphinx numbers them across the whole book when sections
  are not numbered); on the pages of chapter 1 they are chapter-wide, as in a printed
  book: the k-th figure of §1.4 is Figure 1.4.k (图 1.4.k) in both languages;
* a "中文 / English" switch in the header of every page that has a twin, pointing at
  the matching section of the twin (``data-anchors`` maps section ids; the script
  ``_static/commbook-lang.js``, which Jupyter Book includes like every file in
  ``_static``, follows the reader's position);
* previous/next never cross from one language's part into the other's;
* every page of a language part is offered as a runnable notebook, ``⬇ .ipynb`` in its
  header (the extension ``commbook_notebooks``, loaded from here);
* the ``{source}`` role and a "source" / "源码" link under every table that names its
  builder, to the function's highlighted code (``commbook_source``), and the API
  reference's module lists (``commbook_reference``), both loaded from here;
* ``html_search_options["dict"]``, when relative, is read from the source folder
  (Sphinx would read it from the working directory), and jieba stays quiet.
"""

from __future__ import annotations

import gettext
import json
import logging
import re
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment
from sphinx.transforms.post_transforms import SphinxPostTransform

LANGS = ("zh", "en")
LANG_PARTS = ("chapters", "exercises")
HTML_LANG = {"zh": "zh-Hans", "en": "en"}
# Caption and reference prefixes on Chinese pages (Sphinx's zh_CN catalog says 列表 for
# code listings and 节 for sections; these read better in a book).
ZH_NUMFIG_FORMAT = {"figure": "图 %s", "table": "表 %s", "code-block": "代码 %s", "section": "第 %s 节"}
ZH_SEARCH_BAR_TEXT = "搜索本书……"
TEMPLATES = Path(__file__).parent / "templates"
SWITCH_TEMPLATE = "commbook-lang-switch.html"
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


def page_language(docname: str) -> str | None:
    """'zh' or 'en' for pages of one language's part, None for bilingual pages."""
    parts = docname.split("/")
    if len(parts) >= 3 and parts[0] in LANG_PARTS and parts[1] in LANGS:
        return parts[1]
    return None


def twin_of(docname: str) -> str | None:
    """The same page in the other language (whether or not it exists)."""
    lang = page_language(docname)
    if lang is None:
        return None
    parts = docname.split("/")
    parts[1] = "en" if lang == "zh" else "zh"
    return "/".join(parts)


# ---------------------------------------------------------------- configuration


def _config_inited(app: Sphinx, config: Any) -> None:
    # The language switch is a template component in the article header.
    config.templates_path = [*config.templates_path, str(TEMPLATES)]
    theme_options = dict(config.html_theme_options or {})
    header_end = theme_options.get("article_header_end", ["article-header-buttons.html"])
    if isinstance(header_end, str):
        header_end = [s.strip() for s in header_end.split(",") if s.strip()]
    if SWITCH_TEMPLATE not in header_end:
        header_end = [SWITCH_TEMPLATE, *header_end]
    theme_options["article_header_end"] = header_end
    config.html_theme_options = theme_options

    # jieba's user dictionary: a relative path means relative to the book's source.
    options = dict(config.html_search_options or {})
    dict_path = options.get("dict")
    if dict_path:
        path = Path(app.confdir, dict_path)
        if not path.is_file():
            raise FileNotFoundError(f"html_search_options['dict']: {path} does not exist")
        options["dict"] = str(path)
        config.html_search_options = options
    if config.html_search_language == "zh":
        import jieba  # a missing jieba must fail the build, not index whole clauses

        jieba.setLogLevel(logging.WARNING)


def _builder_inited(app: Sphinx) -> None:
    # Sphinx fills in numfig_format at config-inited priority 800: read it afterwards.
    app._commbook_numfig_format = dict(app.config.numfig_format)  # the English formats


# ------------------------------------------------------- per-page figure numbers


def chapter_prefix(docname: str) -> tuple[int, ...]:
    """The number prefix of a page's figures and tables: (1, section) on the pages of
    chapter 1 (``chapters/<lang>/ch1/04-…`` is §1.4), none elsewhere."""
    parts = docname.split("/")
    if len(parts) == 4 and parts[0] == "chapters" and parts[2] == "ch1":
        section = parts[3].split("-", 1)[0]
        if section.isdigit():
            return (1, int(section))
    return ()


def _renumber_per_page(app: Sphinx, env: BuildEnvironment) -> list[str]:
    """Restart figure/table/equation counters on every page.

    Runs after Sphinx's TocTreeCollector has numbered everything in toctree order with
    one counter per (figure type, section number) across the book.  Keeping the order
    and any section-number prefix, the last component is recounted within each page and
    prefixed with :func:`chapter_prefix`.
    """
    for docname, fignumbers in env.toc_fignumbers.items():
        chapter = chapter_prefix(docname)
        for numbers in fignumbers.values():
            counters: dict[tuple[int, ...], int] = {}
            for node_id, number in sorted(numbers.items(), key=lambda item: item[1]):
                prefix = tuple(number[:-1])
                counters[prefix] = counters.get(prefix, 0) + 1
                numbers[node_id] = (*chapter, *prefix, counters[prefix])
    return []


class _PageLanguageFormats(SphinxPostTransform):
    """Before references are resolved on a page, switch numfig prefixes to its language.

    Both ``{numref}`` texts and the caption prefixes written by the HTML translator
    read ``config.numfig_format``; pages are resolved and written one at a time.
    """

    default_priority = 1  # before ReferencesResolver (10)
    formats = ("html",)

    def run(self, **kwargs: Any) -> None:
        english = getattr(self.app, "_commbook_numfig_format", None)
        if english is None:
            return
        if page_language(self.env.docname) == "zh":
            self.config.numfig_format = {**english, **ZH_NUMFIG_FORMAT}
        else:
            self.config.numfig_format = dict(english)


def _restore_formats(app: Sphinx, exc: Exception | None) -> None:
    english = getattr(app, "_commbook_numfig_format", None)
    if english is not None:
        app.config.numfig_format = dict(english)


# ------------------------------------------------------------- section anchors


def _doctree_read(app: Sphinx, doctree: nodes.document) -> None:
    env = app.env
    docname = env.docname
    sections = []
    for section in doctree.findall(nodes.section):
        if section["ids"]:
            sections.append(list(section["ids"]))
    if not hasattr(env, "commbook_sections"):
        env.commbook_sections = {}
    env.commbook_sections[docname] = sections

    # Bilingual pages: mark their Chinese sections so CSS/JS can treat them as Chinese.
    if page_language(docname) is None:
        for section in doctree.findall(nodes.section):
            title = section.next_node(nodes.title)
            text = title.astext() if title else ""
            if _CJK.search(text) and not _LATIN.search(text):
                section["classes"].append("commbook-lang-zh")


def _purge_doc(app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, "commbook_sections", {}).pop(docname, None)


def _merge_info(app: Sphinx, env: BuildEnvironment, docnames: Any, other: BuildEnvironment) -> None:
    if not hasattr(env, "commbook_sections"):
        env.commbook_sections = {}
    for docname in docnames:
        if docname in getattr(other, "commbook_sections", {}):
            env.commbook_sections[docname] = other.commbook_sections[docname]


def _label_key(section_id: str, lang: str) -> str | None:
    prefix = f"{lang}-"
    return section_id[len(prefix):] if section_id.startswith(prefix) else None


def section_pairs(env: BuildEnvironment, docname: str, twin: str) -> dict[str, str]:
    """Map each section id of ``docname`` to the id of the same section of ``twin``.

    Sections carrying labels that differ only in the language prefix
    (``zh-p5-links-model`` / ``en-p5-links-model``) are paired by label; when both
    pages have the same number of sections the rest are paired by position.
    """
    lang, twin_lang = page_language(docname), page_language(twin)
    mine = getattr(env, "commbook_sections", {}).get(docname, [])
    theirs = getattr(env, "commbook_sections", {}).get(twin, [])
    by_label = {}
    for ids in theirs:
        for section_id in ids:
            key = _label_key(section_id, twin_lang)
            if key is not None:
                by_label[key] = ids[0]
    pairs: dict[str, str] = {}
    for i, ids in enumerate(mine):
        target = None
        for section_id in ids:
            key = _label_key(section_id, lang)
            if key is not None and key in by_label:
                target = by_label[key]
                break
        if target is None and len(mine) == len(theirs):
            target = theirs[i][0]
        if target is not None:
            for section_id in ids:
                pairs[section_id] = target
    return pairs


# ------------------------------------------------------------------ page context


def _translations(app: Sphinx) -> tuple[gettext.NullTranslations, gettext.NullTranslations]:
    """Chinese catalogs for the templates: Sphinx/PyData's and the book theme's."""
    cached = getattr(app, "_commbook_zh_translations", None)
    if cached is not None:
        return cached
    import sphinx
    import sphinx_book_theme

    sphinx_locale = Path(sphinx.__file__).parent / "locale"
    book_locale = Path(sphinx_book_theme.__file__).parent / "theme/sphinx_book_theme/static/locales"
    sphinx_zh = gettext.translation("sphinx", sphinx_locale, languages=["zh_CN"], fallback=True)
    book_zh = gettext.translation("booktheme", book_locale, languages=["zh_CN"], fallback=True)
    app._commbook_zh_translations = (sphinx_zh, book_zh)
    return sphinx_zh, book_zh


def _cross_language(docname: str, other: str | None) -> bool:
    if other is None:
        return False
    a, b = page_language(docname), page_language(other)
    return a is not None and b is not None and a != b


def _page_context(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Language, twin link and language-bounded previous/next (before the themes run)."""
    lang = page_language(pagename)
    context["commbook_lang"] = lang
    context["commbook_twin"] = None
    if lang is None:
        return
    context["language"] = HTML_LANG[lang]

    builder = app.builder
    env = app.env
    twin = twin_of(pagename)
    if twin in env.found_docs:
        link = builder.get_relative_uri(pagename, twin)
        context["commbook_twin"] = {
            "link": link,
            "lang": page_language(twin),
            "anchors": json.dumps(section_pairs(env, pagename, twin), ensure_ascii=False),
        }
        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" hreflang="{HTML_LANG[page_language(twin)]}" href="{link}" />'
        )

    # Previous/next stay inside one language: the last Chinese page has no "next", the
    # first English page's "previous" is the bilingual landing page.
    related = getattr(builder, "relations", {}).get(pagename)
    if related:
        _, prev_doc, next_doc = related
        if _cross_language(pagename, next_doc):
            context["next"] = None
            context["rellinks"] = [r for r in context.get("rellinks", []) if r[0] != next_doc]
        if _cross_language(pagename, prev_doc):
            root = app.config.root_doc
            context["rellinks"] = [r for r in context.get("rellinks", []) if r[0] != prev_doc]
            title_node = env.titles.get(root)
            context["prev"] = {
                "link": builder.get_relative_uri(pagename, root),
                "title": builder.render_partial(title_node)["title"] if title_node else root,
            }

    if lang == "zh":
        sphinx_zh, _book_zh = _translations(app)
        context["gettext"] = sphinx_zh.gettext  # jinja's _() resolves gettext per page
        context["ngettext"] = sphinx_zh.ngettext


# Titles the HTML writer and MyST-NB put into a page's body in the project's language:
# admonition labels (Sphinx's zh_CN catalog translates them) and the prompts of folded
# code cells (MyST-NB's nb_code_prompt_show / _hide, "Show code cell {type}").
ADMONITIONS = ("Note", "Tip", "Warning", "Important", "Hint", "Caution", "Attention", "Danger",
               "Error", "See also", "Todo")
ZH_CODE_PROMPTS = {"Show code cell source": "显示代码", "Hide code cell source": "收起代码",
                   "Show code cell output": "显示输出", "Hide code cell output": "收起输出",
                   "Show code cell content": "显示代码格", "Hide code cell content": "收起代码格"}


# Chinese typography (issue 19 §2).  Emphasis of Chinese text is drawn with emphasis dots
# (着重号), not slanted characters (CJK fonts have no italics; browsers fake them): the
# class marks an <em> holding Chinese, commbook-lang.css draws it.  An English word's
# apostrophe, turned into ’ by Sphinx's smart quotes, takes the CJK font's full-width
# glyph on a Chinese page ("ring’ s"): inside a Latin word it is the plain apostrophe.
_ZH_EM = re.compile(r"<em>(?=[^<]*[\u3400-\u9fff])")
_LATIN_APOSTROPHE = re.compile(r"(?<=[A-Za-z])\u2019(?=[A-Za-z])")


def localize_body(body: str, gettext_zh) -> str:
    """A Chinese page's body with its admonition titles and code-cell prompts in Chinese,
    and Chinese typography for emphasis and apostrophes.

    >>> print(localize_body("<p><em>带宽</em> and <em>NCCL</em>: ring\u2019s</p>", lambda w: w))
    <p><em class="commbook-zh-em">带宽</em> and <em>NCCL</em>: ring's</p>
    """
    body = _ZH_EM.sub('<em class="commbook-zh-em">', body)
    body = _LATIN_APOSTROPHE.sub("'", body)
    for word in ADMONITIONS:
        body = body.replace(f'admonition-title">{word}</p>', f'admonition-title">{gettext_zh(word)}</p>')
    for en, zh in ZH_CODE_PROMPTS.items():
        body = body.replace(f'admonition-title">{en}</p>', f'admonition-title">{zh}</p>')
    return body


def _page_context_late(app: Sphinx, pagename: str, templatename: str, context: dict, doctree: Any) -> None:
    """Undo what the book theme sets for the whole site (it runs at priority 500), and keep
    the pages free of JavaScript errors: the theme's colour mode starts at "auto" (empty, its
    script logs "Got invalid theme mode"), and Thebe, which this book does not use (a page
    has no kernel), loses its scripts (sphinx_thebe adds its ``const THEBE_JS_URL`` twice,
    which is a SyntaxError on every page)."""
    context["default_mode"] = context.get("default_mode") or "auto"
    if context.get("script_files"):
        context["script_files"] = [js for js in context["script_files"] if not _is_thebe(js)]
    if page_language(pagename) == "zh":
        sphinx_zh, book_zh = _translations(app)
        context["translate"] = book_zh.gettext
        context["theme_search_bar_text"] = ZH_SEARCH_BAR_TEXT
        if "body" in context:
            context["body"] = localize_body(context["body"], sphinx_zh.gettext)


def _is_thebe(js: Any) -> bool:
    """A script of sphinx_thebe: its file (``sphinx-thebe.js``, thebe's bundle) or its config body."""
    body = str(getattr(js, "attributes", {}).get("body", ""))
    return "thebe" in str(getattr(js, "filename", js) or "").lower() or "THEBE_JS_URL" in body


def _twins_outdated(app: Sphinx, env: BuildEnvironment, added: set, changed: set, removed: set) -> list[str]:
    """A page's switch maps its sections to its twin's: when one twin is read again, so is
    the other (an incremental build would otherwise keep a stale map)."""
    touched = set(added) | set(changed)
    return sorted({t for d in touched if (t := twin_of(d)) in env.found_docs} - touched)


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("config-inited", _config_inited)
    app.connect("builder-inited", _builder_inited)
    app.connect("doctree-read", _doctree_read)
    app.connect("env-purge-doc", _purge_doc)
    app.connect("env-get-outdated", _twins_outdated)
    app.connect("env-merge-info", _merge_info)
    app.connect("env-get-updated", _renumber_per_page, priority=900)
    app.add_post_transform(_PageLanguageFormats)
    app.connect("html-page-context", _page_context, priority=400)
    app.connect("html-page-context", _page_context_late, priority=600)
    app.connect("build-finished", _restore_formats)
    app.setup_extension("commbook_notebooks")  # every page as a notebook, linked from its header
    app.setup_extension("commbook_source")  # {source} role and the links under tables (viewcode pages)
    app.setup_extension("commbook_reference")  # the API reference pages' module lists (reference/)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": False, "env_version": 1}
