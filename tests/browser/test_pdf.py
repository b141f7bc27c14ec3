"""The book's PDFs (issue 19 §4), one per language, printed by tools/pdf_book.py.

`make pdf` writes ``_build/pdf/commbook-{zh,en}.pdf`` from the built site; `make test`
runs it after the browser check and then these checks with ``COMMBOOK_SITE=_build/html``.
By hand:

    .venv/bin/python tools/pdf_book.py _build/html
    COMMBOOK_SITE=_build/html .venv/bin/python -m pytest tests/browser/test_pdf.py -q

Without the PDFs the checks are skipped with the reason (with CI=true that is a failure).
Everything is read with pypdf (no system package needed; poppler's pdffonts and pdftotext
would say the same): the page count within a range, every font embedded (Type 3 fonts,
whose glyphs the PDF itself draws, aside), CJK glyphs in the Chinese PDF (Chromium writes
Noto Sans CJK, a CFF font, as Type 3 fonts with a ToUnicode map: the Chinese text is vector,
searchable and extractable; a TrueType CJK font would be embedded as a font), every glued
number of three sampled pages in the text of that page's part of the PDF (the values
read from the built HTML's glue spans), no interface string of the site ("Show code cell
source", "Click to show", ...), one bookmark per chapter page of ``_toc.yml`` in order,
no link left pointing at the local server or at the printer's placeholder address, and
page labels that start the body at 1.

The three tests at the top need no PDF: the script's refusal of a site that is not built,
the pages it takes from ``_toc.yml`` (twins in both languages) and the ToUnicode repair
(tools/pdf_unicode.py).
"""

from __future__ import annotations

import functools
import html
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
import pdf_book  # noqa: E402  (tools/ is not a package)

LANGS = pdf_book.LANGS
# Pages per PDF, measured on the full book (27 pages per language, 2026-12-02): zh 241, en 280
# (5 of them front matter: the title page and a 4-page contents).  The range leaves room for the
# book to grow or shrink by about a third; outside it, a page lost its content (an empty
# print) or the print stylesheet stopped working (a fold left open twice, images unbounded).
PAGE_RANGE = (170, 380)
SAMPLED = ["chapters/{lang}/p5/02-links", "chapters/{lang}/ch1/04-allreduce-algorithms",
           "chapters/{lang}/measure/measuring"]
INTERFACE = ["Show code cell", "Hide code cell", "Show code", "Hide code", "Click to show", "Click to hide",
             "Show output", "Hide output", "Toggle hidden content", "Copy to clipboard",
             "显示代码", "隐藏代码", "点击显示", "点击隐藏", "显示输出", "隐藏输出"]
PASTED = re.compile(r'<span class="pasted-text">(.*?)</span>', re.S)
CJK = re.compile(r"[\u4e00-\u9fff]")


# Noto Sans CJK draws the en dash and the figure dash with one glyph; tools/pdf_unicode.py names it
# the en dash, but another font may still give "0.82‒1.58×" (U+2012): the dashes compare equal.
DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text).translate(DASHES)


def test_refuses_unbuilt_site(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert pdf_book.main([str(tmp_path)]) == 2
    assert "no built site" in capsys.readouterr().err


def test_pages_from_toc() -> None:
    """Every page of a language in _toc.yml order, and the other language's are its twins."""
    toc = ROOT / "_toc.yml"
    docs = {lang: [d for _, ds in pdf_book.book_parts(toc, lang) for d in ds] for lang in LANGS}
    assert docs["zh"] and len(docs["zh"]) == len(docs["en"])
    assert [d.replace("/zh/", "/en/") for d in docs["zh"]] == docs["en"]
    assert all((ROOT / f"{d}.md").is_file() or (ROOT / f"{d}.ipynb").is_file() for d in docs["zh"] + docs["en"])
    with pytest.raises(ValueError, match="lang"):
        pdf_book.book_parts(toc, "fr")


def test_pages_from_a_toc_without_parts(tmp_path: Path) -> None:
    toc = tmp_path / "_toc.yml"
    toc.write_text("format: jb-book\nroot: index\nchapters:\n  - file: chapters/zh/p5/01-why.md\n"
                   "    sections:\n      - file: exercises/zh/p5\n  - file: chapters/en/p5/01-why\n", encoding="utf-8")
    assert pdf_book.book_parts(toc, "zh") == [("", ["chapters/zh/p5/01-why", "exercises/zh/p5"])]
    assert pdf_book.book_parts(toc, "en") == [("", ["chapters/en/p5/01-why"])]


def test_tounicode_names_the_ideograph() -> None:
    """A ToUnicode map onto radicals is rewritten onto the ideographs that share their glyphs;
    the font's pairs agree with Unicode's own compatibility mapping (NFKC) of the Kangxi radicals."""
    import unicodedata

    import pdf_unicode

    cmap = ("1 begincodespacerange\n<00> <FF>\nendcodespacerange\n2 beginbfchar\n<01> <2F24>\n<02> <4E00>\n"
            "endbfchar\n1 beginbfrange\n<10> <12> <2F00>\nendbfrange\nendcmap")
    mapping = {0x2F24: 0x5927, 0x2F01: 0x4E28}
    fixed = pdf_unicode.fix_tounicode(cmap, mapping)
    pairs = dict(re.findall(r"<([0-9A-F]+)> <([0-9A-F]+)>", fixed.split("endcodespacerange")[1]))
    assert pairs == {"01": "5927", "02": "4E00", "10": "2F00", "11": "4E28", "12": "2F02"}
    assert pdf_unicode.fix_tounicode(cmap, {0x3000: 0x3001}) is None
    font = pdf_unicode.preferred()
    if not font:
        _unavailable("no Noto Sans CJK SC (apt-get install fonts-noto-cjk): the radical map is empty")
    kangxi = {cp: to for cp, to in font.items() if 0x2F00 <= cp <= 0x2FD5}
    differ = {chr(cp): chr(to) for cp, to in kangxi.items() if unicodedata.normalize("NFKC", chr(cp)) != chr(to)}
    assert len(kangxi) >= 200 and len(differ) <= 2, (len(kangxi), differ)  # ⼾: 户 in the SC font, NFKC 戶
    assert font[0x2012] == 0x2013


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true: {why}")
    pytest.skip(why)


@functools.cache
def _reader(path: Path) -> object:
    from pypdf import PdfReader

    return PdfReader(path)


@pytest.fixture(params=LANGS)
def book(request: pytest.FixtureRequest, site: Path) -> tuple[str, object, Path]:
    """(language, pypdf reader, site) of one language's PDF."""
    try:
        import pypdf  # noqa: F401
    except ImportError:
        _unavailable("the Python package pypdf is missing (pip install -e '.[test]')")
    path = site.parent / "pdf" / f"commbook-{request.param}.pdf"
    if not path.is_file():
        _unavailable(f"{path} missing: run `make pdf` (tools/pdf_book.py {site})")
    return request.param, _reader(path), site


def _chapters(reader: object) -> list[tuple[str, int]]:
    """(title, first page index) of every chapter page's bookmark (the second level)."""
    out = []
    for item in reader.outline:
        if isinstance(item, list):
            out += [(c.title, reader.get_destination_page_number(c)) for c in item if not isinstance(c, list)]
    if not out:  # a book without parts: the chapter pages are the first level
        out = [(c.title, reader.get_destination_page_number(c)) for c in reader.outline if not isinstance(c, list)]
    return out


@functools.cache
def _page_text(reader: object, i: int) -> str:
    return reader.pages[i].extract_text() or ""


def _text(reader: object, start: int, stop: int) -> str:
    """The text of pages start..stop-1 without what the overlay stamped on them (drawn last,
    so extracted last: the running head "part · page title" and the page's label), so that
    a sentence that runs on to the next page reads on."""
    heads = {squeeze(f"{part.title} · {c.title}") for part, children in zip(reader.outline, reader.outline[1:])
             if isinstance(children, list) for c in children if not isinstance(c, list)}
    out = []
    for i in range(start, stop):
        lines = _page_text(reader, i).split("\n")
        if lines and lines[-1].strip() == reader.page_labels[i]:
            lines.pop()
        if lines and squeeze(lines[-1]) in heads:
            lines.pop()
        out.append("\n".join(lines))
    return "\n".join(out)


def test_page_count(book: tuple[str, object, Path]) -> None:
    lang, reader, _ = book
    assert PAGE_RANGE[0] <= len(reader.pages) <= PAGE_RANGE[1], f"{lang}: {len(reader.pages)} pages"


def _fonts(resources: object, seen: set[int], depth: int = 0) -> list[object]:
    """The fonts of a resource dictionary and of its form XObjects, each font once over all
    calls sharing ``seen`` (the Chinese PDF holds thousands of Type 3 fonts)."""
    if resources is None or depth > 8:
        return []
    resources = resources.get_object()
    fonts = []
    for ref in (resources.get("/Font") or {}).values():
        key = getattr(ref, "idnum", None)
        if key is None or key not in seen:
            seen.add(key)
            fonts.append(ref.get_object())
    for xobject in (resources.get("/XObject") or {}).values():
        fonts += _fonts(xobject.get_object().get("/Resources"), seen, depth + 1)
    return fonts


def test_fonts_embedded(book: tuple[str, object, Path]) -> None:
    lang, reader, _ = book
    names, loose, type3_mapped, seen = set(), set(), False, set()
    for page in reader.pages:
        for font in _fonts(page.get("/Resources"), seen):
            if font.get("/Subtype") == "/Type3":
                type3_mapped = type3_mapped or "/ToUnicode" in font
                continue
            descendants = font.get("/DescendantFonts")
            leaf = descendants[0].get_object() if descendants else font
            descriptor = (leaf.get("/FontDescriptor") or {})
            descriptor = descriptor.get_object() if descriptor else {}
            name = str(font.get("/BaseFont"))
            names.add(name)
            if not any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3")):
                loose.add(name)
    assert names, f"{lang}: no font at all"
    assert not loose, f"{lang}: fonts not embedded: {sorted(loose)}"
    if lang == "zh":
        # Chromium writes a CFF font (Noto Sans CJK's .ttc) as Type 3 fonts: the glyphs' outlines
        # drawn inside the PDF, with a ToUnicode map; a TrueType CJK font is embedded as such.
        cjk_named = any(re.search(r"CJK|Han|Hei|Song|Ming|Kai", n) for n in names)
        assert cjk_named or type3_mapped, f"zh: no CJK font program and no Type 3 font with a ToUnicode map: {sorted(names)}"
        chinese = CJK.findall(_text(reader, len(reader.pages) // 2, len(reader.pages) // 2 + 3))
        assert len(chinese) > 300, f"zh: {len(chinese)} Chinese characters extracted from three middle pages"


def test_outline_one_bookmark_per_chapter_page(book: tuple[str, object, Path]) -> None:
    lang, reader, site = book
    docs = [d for _, ds in pdf_book.book_parts(site.parent.parent / "_toc.yml", lang) for d in ds]
    chapters = _chapters(reader)
    assert len(chapters) == len(docs), f"{lang}: {len(chapters)} bookmarks for {len(docs)} pages"
    starts = [page for _, page in chapters]
    assert starts == sorted(set(starts)), f"{lang}: chapter bookmarks out of order or shared: {starts}"
    labels = reader.page_labels
    assert labels[starts[0]] == "1", f"{lang}: the first chapter page is labelled {labels[starts[0]]!r}"


@pytest.mark.parametrize("template", SAMPLED)
def test_glued_numbers_printed(book: tuple[str, object, Path], template: str) -> None:
    lang, reader, site = book
    docname = template.format(lang=lang)
    docs = [d for _, ds in pdf_book.book_parts(site.parent.parent / "_toc.yml", lang) for d in ds]
    chapters = _chapters(reader)
    i = docs.index(docname)
    stop = chapters[i + 1][1] if i + 1 < len(chapters) else len(reader.pages)
    text = squeeze(_text(reader, chapters[i][1], stop))
    page = (site / f"{docname}.html").read_text(encoding="utf-8")
    values = {squeeze(html.unescape(re.sub(r"<[^>]+>", "", v))) for v in PASTED.findall(page)} - {""}
    assert len(values) >= 5, f"{docname}: only {len(values)} glued values in the HTML"
    missing = sorted(v for v in values if v not in text)
    assert not missing, f"{docname}: {len(missing)} of {len(values)} glued values not in the PDF: {missing[:10]}"


def test_no_interface_strings_and_no_dead_links(book: tuple[str, object, Path]) -> None:
    lang, reader, _ = book
    text = _text(reader, 0, len(reader.pages))
    assert lang != "zh" or len(CJK.findall(text)) > 10_000, "zh: the text holds almost no Chinese"
    radicals = re.findall(r"[\u2e80-\u2fdf]", text)
    assert not radicals, f"{lang}: {len(radicals)} radicals in the text where ideographs were printed: {radicals[:10]}"
    found = [s for s in INTERFACE if s.lower() in text.lower()]
    assert not found, f"{lang}: interface strings printed: {found}"
    dead = []
    for n, page in enumerate(reader.pages):
        for annot in page.get("/Annots") or []:
            action = annot.get_object().get("/A") or {}
            uri = str(action.get("/URI", ""))
            if uri.startswith((pdf_book.SENTINEL, "http://127.0.0.1", "http://localhost")):
                dead.append(f"page {n + 1}: {uri}")
    assert not dead, f"{lang}: {len(dead)} links to the printer's addresses: {dead[:5]}"
