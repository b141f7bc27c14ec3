"""Formulas typeset at build time (issue 19 §5: page weight).

MathJax's ``tex-chtml.js`` (1.16 MB, the largest file of every page) typesets each page
in the reader's browser.  Once the site is written, :func:`typeset` sends every page's
formulas (Sphinx's ``<span class="math">\\(…\\)</span>`` and ``<div class="math">\\[…\\]</div>``)
to MathJax 3.2.2 itself, run once by node (``_ext/prerender_math.js``, the npm package
``mathjax-full`` pinned in ``package.json``), and writes its CommonHTML output into the
pages: the same markup, fonts and spacing the browser would have made, with each
formula's MathML for screen readers.  The pages then load one stylesheet
(``_static/commbook-math.css``, the characters used anywhere in the book, cached across
pages) and MathJax's web fonts, and no MathJax script.

A formula MathJax cannot read fails the build, naming it and its page.  A page with TeX
that Sphinx did not mark as math keeps the script (none today; the browser check fails
on raw TeX left on a page).
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

LOG = logging.getLogger(__name__)
SCRIPT = Path(__file__).with_name("prerender_math.js")
CSS = "_static/commbook-math.css"
FONTS = "mathjax/output/chtml/fonts/woff-v2"  # beside the stylesheet, copied by sphinx-mathjax-offline
# Sphinx's math nodes: an inline span, or a display div with an optional equation number.
MATH = re.compile(r'(<span class="math notranslate nohighlight">)(.*?)(</span>)'
                  r'|(<div class="math notranslate nohighlight"[^>]*>\s*(?:<span class="eqno">.*?</span>)?)(.*?)(</div>)',
                  re.S)
MATHJAX_SCRIPTS = re.compile(r'[ \t]*<script>window\.MathJax = .*?</script>\n?'
                             r'|[ \t]*<script defer="defer" src="[^"]*_static/mathjax/tex-chtml\.js[^"]*"></script>\n?')
LEFTOVER_TEX = re.compile(r"\\\(|\\\[")


def tex_of(source: str, display: bool) -> str:
    """The TeX inside Sphinx's delimiters (``\\(…\\)``, ``\\[…\\]``), HTML entities decoded.

    >>> tex_of("\\\\(a &lt; b\\\\)", False)
    'a < b'
    >>> tex_of("\\\\[\\\\begin{split}x\\\\end{split}\\\\]", True)
    '\\\\begin{split}x\\\\end{split}'
    """
    text = html.unescape(source.strip())
    opening, closing = ("\\[", "\\]") if display else ("\\(", "\\)")
    if text.startswith(opening) and text.endswith(closing):
        text = text[2:-2]
    return text.strip()


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        raise ExtensionError("commbook_math: node is not installed (Debian: apt-get install nodejs); "
                             "the formulas are typeset at build time by _ext/prerender_math.js")
    return node


def typeset(app: Sphinx, pages: dict[Path, str]) -> None:
    """Typeset the formulas of ``pages`` (path → the written HTML, replaced in place), link
    the stylesheet, drop MathJax's script where nothing is left for it; called by
    :mod:`commbook_pages` in its one pass over the site."""
    out = Path(app.outdir)
    found_on: list[tuple[Path, list[re.Match]]] = []
    for path, text in pages.items():
        if "_modules" in path.parts:
            continue
        found = list(MATH.finditer(text))
        if found:
            found_on.append((path, found))
        elif MATHJAX_SCRIPTS.search(text) and not LEFTOVER_TEX.search(_outside_code(text)):
            pages[path] = MATHJAX_SCRIPTS.sub("", text)  # nothing to typeset
    if not found_on:
        return
    job = {"fontURL": FONTS, "pages": [[(tex_of(m.group(2), False), False) if m.group(1)
                                        else (tex_of(m.group(5), True), True) for m in found]
                                       for _, found in found_on]}
    env = dict(os.environ)
    node_path = [str(Path(app.confdir) / "node_modules")] + ([env["NODE_PATH"]] if env.get("NODE_PATH") else [])
    env["NODE_PATH"] = os.pathsep.join(node_path)  # npm ci installs beside _config.yml
    run = subprocess.run([_node(), str(SCRIPT)], input=json.dumps(job), capture_output=True, text=True,
                         env=env, cwd=app.confdir, timeout=600)
    if run.returncode != 0:
        raise ExtensionError(f"commbook_math: {SCRIPT.name} failed ({run.returncode}); is mathjax-full "
                             f"installed (make venv runs npm ci)?\n{run.stderr[-2000:]}")
    result = json.loads(run.stdout)
    for error in result["errors"]:
        LOG.warning("commbook_math: MathJax cannot typeset %s", error, type="commbook", subtype="math")
    kept = []
    for (path, found), rendered in zip(found_on, result["pages"]):
        text, pieces, last = pages[path], [], 0
        for m, chtml in zip(found, rendered):
            start, body, end = (1, 2, 3) if m.group(1) else (4, 5, 6)
            pieces += [text[last:m.start()], m.group(start), chtml if chtml is not None else m.group(body), m.group(end)]
            last = m.end()
        pieces.append(text[last:])
        page = "".join(pieces)
        if None in rendered or LEFTOVER_TEX.search(_outside_code(page)):
            kept.append(path.relative_to(out).as_posix())
        else:
            page = MATHJAX_SCRIPTS.sub("", page)
        css = os.path.relpath(out / CSS, path.parent).replace(os.sep, "/")
        pages[path] = page.replace("</head>", f'<link rel="stylesheet" href="{css}" />\n</head>', 1)
    (out / CSS).write_text(result["css"], encoding="utf-8")
    n = sum(len(f) for _, f in found_on)
    LOG.info("commbook_math: %d formulas on %d pages typeset at build time; MathJax's script kept on %d: %s",
             n, len(found_on), len(kept), ", ".join(kept[:5]))


def _outside_code(page: str) -> str:
    """The page without its scripts, styles and code blocks (where TeX-like text is fine)."""
    return re.sub(r"<(script|style|pre|code)\b.*?</\1>", "", page, flags=re.S)

