"""The built site serves its code (issue 18 §1 and §3): every commbook table on a chapter
page has its source link, every source link on any page reaches its function's anchor on
a viewcode page, and the wheel and sdist of the current version lie under
_downloads/dist/, linked from the reference's first page.

Reads the built HTML only (no browser); runs after the build with the browser check
(``COMMBOOK_SITE=_build/html pytest tests/browser``).
"""
from __future__ import annotations

import re
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path
from urllib.parse import urldefrag

import commbook

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
TABLE = re.compile(r'<table class="commbook-table"[^>]*>.*?</table>(\s*<p class="cb-source-line">)?', re.S)
LINK = re.compile(r'<a class="reference external cb-source" href="([^"]+)"')


def _pages(site: Path, *folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (site / folder).rglob("*.html"))


def _anchor_exists(page: Path, href: str, cache: dict[Path, str]) -> bool:
    path, anchor = urldefrag(href)
    target = (page.parent / path).resolve()
    if not target.is_file():
        return False
    if target not in cache:
        cache[target] = target.read_text(encoding="utf-8")
    return f'<div class="viewcode-block" id="{anchor}">' in cache[target]


# Tables still built by a page's own code, not by a function of commbook (so they name no
# builder): page -> how many, in each language.  Exact: a page that gains or loses one fails,
# so the list cannot go stale (issue 18 §1 moves page code into the library).
BUILT_IN_THE_PAGE: dict[str, int] = {}   # none left: P5 §0's presets and §8's one-node table are
                                          # p5.links.presets_table and p5.libraries_numbers.one_node_table


def test_every_chapter_table_has_its_source_link(site: Path) -> None:
    missing: dict[str, list[str]] = {}
    tables = 0
    for page in _pages(site, "chapters", "exercises"):
        for m in TABLE.finditer(page.read_text(encoding="utf-8")):
            tables += 1
            if not m.group(1):
                caption = re.search(r"<caption>(.*?)</caption>", m.group(0), re.S)
                missing.setdefault(str(page.relative_to(site).with_suffix("")), []).append(
                    caption.group(1)[:60] if caption else "?")
    assert tables > 0
    expected = {f"chapters/{lang}/{page}": n for page, n in BUILT_IN_THE_PAGE.items() for lang in ("zh", "en")}
    found = {page: len(captions) for page, captions in missing.items()}
    assert found == expected, f"{tables} tables; without a source link: {missing}"


def test_every_source_link_resolves(site: Path) -> None:
    cache: dict[Path, str] = {}
    broken, links = [], 0
    for page in _pages(site, "chapters", "exercises", "reference", "about"):
        for href in LINK.findall(page.read_text(encoding="utf-8")):
            links += 1
            if not _anchor_exists(page, href, cache):
                broken.append(f"{page.relative_to(site)} -> {href}")
    assert links > 0
    assert not broken, f"{len(broken)} of {links} source links broken:\n" + "\n".join(broken[:20])


def test_the_site_serves_this_version_of_the_package(site: Path) -> None:
    dist = site / "_downloads" / "dist"
    wheel, sdist = dist / f"commbook-{VERSION}-py3-none-any.whl", dist / f"commbook-{VERSION}.tar.gz"
    assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.glob("*")) if dist.is_dir() else dist
    assert commbook.__version__ == VERSION
    with zipfile.ZipFile(wheel) as z:
        meta = Parser().parsestr(z.read(f"commbook-{VERSION}.dist-info/METADATA").decode())
        assert meta["Version"] == VERSION
        assert "commbook/data/measured/nccl-tests/PROVENANCE.md" in z.namelist()  # package data
    with tarfile.open(sdist) as t:
        meta = Parser().parsestr(t.extractfile(f"commbook-{VERSION}/PKG-INFO").read().decode())
        assert meta["Version"] == VERSION
    page = site / "reference" / "index.html"
    html = page.read_text(encoding="utf-8")
    for f in (wheel, sdist):
        href = f"../_downloads/dist/{f.name}"
        assert f'href="{href}"' in html and (page.parent / href).resolve() == f.resolve()
