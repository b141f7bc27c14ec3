"""Source links (issue 18 §1): the ``{source}`` role and the link under every table that
names its builder (``data-source``) point at the function's anchor on its module's
viewcode page; a name that does not exist, or has no source page, fails the build.

Two small books (~1 min each): the repository's _config.yml, _ext/ and _static/, one
reference page documenting ``commbook.units`` through the module marker of
_ext/commbook_reference.py, and pages in both languages.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urldefrag

import pytest

from conftest import ROOT, build_small_book

sys.path.insert(0, str(ROOT / "_ext"))
import commbook_reference  # noqa: E402  (the marker expansion, no Sphinx needed)

TOC = """format: jb-book
root: index
parts:
  - caption: Pages
    chapters:
      - file: chapters/zh/x/page
      - file: chapters/en/x/page
      - file: reference/api
"""
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
TABLE = ('<table class="commbook-table" data-demo="t" data-source="commbook.units.fmt_time">'
         "<caption>t</caption><tr><td>1 s</td></tr></table>")
PAGE = """# {title}

```{{figure}} ../../../dot.svg
:name: {lang}-dot

A dot. {{source}}`commbook.units.fmt_bytes`
```

Some text with a table:

{table}
"""
FILES = {
    "index.md": "# Small book\n\nA bilingual landing page.\n",
    "dot.svg": SVG,
    "chapters/zh/x/page.md": PAGE.format(title="页面", lang="zh", table=TABLE),
    "chapters/en/x/page.md": PAGE.format(title="Page", lang="en", table=TABLE),
    "reference/api.md": "# API\n\n<!-- commbook-modules: commbook.units -->\n",
}


def _links(page: Path) -> list[tuple[str, str]]:
    """(href, text) of every source link on a built page."""
    html = page.read_text(encoding="utf-8")
    return [(m.group(1), re.sub(r"<[^>]+>", "", m.group(2)))
            for m in re.finditer(r'<a class="reference external cb-source" href="([^"]+)"[^>]*>(.*?)</a>', html, re.S)]


def _resolves(page: Path, href: str) -> bool:
    path, anchor = urldefrag(href)
    target = (page.parent / path).resolve()
    return target.is_file() and f'id="{anchor}"' in target.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    return build_small_book(tmp_path_factory.mktemp("sources"), TOC, FILES)


@pytest.mark.parametrize("lang, label", [("en", "source"), ("zh", "源码")])
def test_role_and_table_link_to_the_function_anchor(small_site, lang, label):
    page = small_site / "chapters" / lang / "x" / "page.html"
    links = _links(page)
    assert [t for _, t in links] == [f"{label} fmt_bytes", f"{label} fmt_time"]
    for href, _ in links:
        assert href.startswith("../../../_modules/commbook/units.html#"), href
        assert _resolves(page, href), href
    html = page.read_text(encoding="utf-8")
    # the table's link sits right under its table
    assert re.search(r"</table>\s*<p class=\"cb-source-line\"><a class=\"reference external cb-source\"", html)
    # the figure's link is inside its caption
    assert re.search(r"<figcaption>.*?cb-source.*?</figcaption>", html, re.S)


def test_reference_page_documents_the_module(small_site):
    html = (small_site / "reference" / "api.html").read_text(encoding="utf-8")
    assert 'id="module-commbook.units"' in html and 'id="commbook.units.fmt_bytes"' in html


def test_unknown_or_undocumented_name_fails_the_build(tmp_path):
    files = dict(FILES)
    files["chapters/en/x/page.md"] = PAGE.format(
        title="Page", lang="en", table=TABLE.replace("commbook.units.fmt_time", "commbook.hardware.Link"))
    files["chapters/zh/x/page.md"] = "# 页面\n\n{source}`commbook.units.no_such_function`\n"
    book = tmp_path / "bad"
    with pytest.raises(AssertionError) as failed:
        build_small_book(book, TOC, files)
    out = str(failed.value)
    assert "commbook.units.no_such_function" in out and "does not exist" in out
    assert "commbook.hardware.Link has no source page" in out


def test_every_module_is_in_the_reference():
    """Every module of the package is documented on one reference page (so that every
    table and figure builder has a source page), and none twice."""
    documented = commbook_reference.documented(ROOT / "reference")
    assert len(documented) == len(set(documented)), "a module on two reference pages"
    modules = {".".join(p.relative_to(ROOT / "code").with_suffix("").parts).removesuffix(".__init__")
               for p in (ROOT / "code" / "commbook").rglob("*.py")}
    assert modules - set(documented) == set()
