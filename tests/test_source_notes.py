"""The notes on the two sources (issue 19 §5): one page per source and language,
``chapters/{en,zh}/notes/{p5,ch1}-sources.md``, instead of collapsed "About the original
notes / text" boxes in the chapter pages.

* no such box is left in a chapter page;
* every marker in a chapter page (``<sup>{ref}`note 3 <en-src-p5-3>`</sup>``, ``注 3`` in
  Chinese) names its note's number and points at a label of the same language's notes
  page of the marker's own source; every note is pointed at, and its "in the text" link
  names the page that points at it;
* notes are numbered 1, 2, ... in book order, and both languages have the same notes;
* a number a note pastes from another page (``{glue:text}`../p5/page.md::key:s``` or a
  ``{glue}`` directive with ``:doc:``) names an existing page that glues that key when it runs;
* the front matter names both sources and links to both notes pages.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "zh")
SOURCES = ("p5", "ch1")
BOX_TITLES = ("About the original", "关于原讲义", "关于原文")
WORD = {"en": "note", "zh": "注"}
BOX = re.compile(r"^`{3,}\{admonition\}\s*(?P<title>.*)$", re.M)
MARKER = re.compile(r"<sup>\{ref\}`(?P<word>\S+) (?P<n>\d+) <(?P<label>[a-z]+-src-[a-z0-9]+-\d+)>`</sup>")
LABEL = re.compile(r"^\((?P<lang>[a-z]+)-src-(?P<src>[a-z0-9]+)-(?P<n>\d+)\)=\s*$", re.M)
BACK = re.compile(r"\]\(\.\./(?P<src>[a-z0-9]+)/(?P<page>[\w-]+\.md)\)")
REMOTE_ROLE = re.compile(r"\{glue(?::[a-z]+)?\}`(?P<page>[^`:]+)::(?P<key>[^`:]+)(?::[^`]*)?`")
REMOTE_DIRECTIVE = re.compile(r"^`{3,}\{glue(?::[a-z]+)?\}\s+(?P<key>\S+)\n:doc:\s*(?P<page>\S+)", re.M)


def _chapter_pages(lang: str) -> list[Path]:
    return sorted(p for p in (ROOT / "chapters" / lang).rglob("*.md") if p.parent.name != "notes")


def _notes_page(lang: str, src: str) -> Path:
    return ROOT / "chapters" / lang / "notes" / f"{src}-sources.md"


def notes(text: str) -> list[tuple[int, str]]:
    """(number, body) of every note of a notes page: from its label to the next label."""
    found = list(LABEL.finditer(text))
    return [(int(m["n"]), text[m.end(): found[i + 1].start() if i + 1 < len(found) else len(text)])
            for i, m in enumerate(found)]


def markers(text: str, lang: str) -> list[tuple[int, str]]:
    """(number, label) of every marker of a page; the marker's word and number match its label."""
    out = []
    for m in MARKER.finditer(text):
        label_n = int(m["label"].rsplit("-", 1)[1])
        assert m["word"] == WORD[lang] and int(m["n"]) == label_n, f"marker {m.group(0)!r} misnamed"
        out.append((label_n, m["label"]))
    return out


def _glued(page: Path) -> set[str]:
    """The keys ``page`` glues when it runs: its English twin executed as the book build does
    (:func:`conftest.executed_glue`; the twins' code cells are identical, ``test_parity``)."""
    from conftest import executed_glue

    return set(executed_glue(ROOT / "chapters" / "en" / page.relative_to(ROOT / "chapters").parts[1] / page.name))


# ----------------------------------------------------------------------------- pages
@pytest.mark.parametrize("lang", LANGS)
def test_no_source_box_left_in_the_chapters(lang):
    left = [(p.relative_to(ROOT).as_posix(), m["title"]) for p in _chapter_pages(lang)
            for m in BOX.finditer(p.read_text(encoding="utf-8")) if m["title"].strip().startswith(BOX_TITLES)]
    assert not left, f"boxes on the sources still in the chapter pages (move them to notes/): {left}"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("src", SOURCES)
def test_markers_and_notes_match(lang, src):
    page = _notes_page(lang, src)
    assert page.is_file(), f"{page.relative_to(ROOT)} missing"
    text = page.read_text(encoding="utf-8")
    found = notes(text)
    numbers = [n for n, _ in found]
    assert numbers == list(range(1, len(numbers) + 1)), f"{page.name}: notes not numbered 1..N: {numbers}"
    assert all(m["lang"] == lang and m["src"] == src for m in LABEL.finditer(text))
    pointed: dict[int, list[str]] = {}
    order = []
    for chapter in _chapter_pages(lang):
        for n, label in markers(chapter.read_text(encoding="utf-8"), lang):
            if f"-src-{src}-" not in label:
                continue
            assert label.startswith(f"{lang}-"), f"{chapter.name}: marker to the other language's {label}"
            assert n in numbers, f"{chapter.relative_to(ROOT)}: marker to {label}, which {page.name} lacks"
            pointed.setdefault(n, []).append(f"{chapter.parent.name}/{chapter.name}")
            order.append(n)
    unpointed = sorted(set(numbers) - set(pointed))
    assert not unpointed, f"{page.name}: notes no marker points at: {unpointed}"
    for n, body in found:
        back = BACK.search(body)
        assert back, f"{page.name}, note {n}: no link back to the page it concerns"
        assert f"{back['src']}/{back['page']}" in pointed[n], (
            f"{page.name}, note {n}: links back to {back['src']}/{back['page']}, "
            f"but the marker is on {pointed[n]}")
    assert order == sorted(order), f"{src}: markers not in book order: {order}"


@pytest.mark.parametrize("src", SOURCES)
def test_both_languages_have_the_same_notes(src):
    en, zh = (notes(_notes_page(lang, src).read_text(encoding="utf-8")) for lang in LANGS)
    assert [n for n, _ in en] == [n for n, _ in zh], f"{src}: the notes differ between en and zh"
    for (n, e), (_, z) in zip(en, zh):
        assert BACK.search(e).group(0) == BACK.search(z).group(0), f"{src} note {n}: not the same page"
        pasted = {lang: sorted((m["page"], m["key"]) for m in REMOTE_ROLE.finditer(body))
                  for lang, body in (("en", e), ("zh", z))}
        assert pasted["en"] == pasted["zh"], f"{src} note {n}: the two languages paste different numbers"


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("src", SOURCES)
def test_pasted_numbers_exist(lang, src):
    page = _notes_page(lang, src)
    text = page.read_text(encoding="utf-8")
    refs = [(m["page"], m["key"]) for m in REMOTE_ROLE.finditer(text)]
    refs += [(m["page"], m["key"]) for m in REMOTE_DIRECTIVE.finditer(text)]
    assert refs, f"{page.name} pastes no number"
    missing = [f"{rel}::{key}" for rel, key in refs
               if not (page.parent / rel).is_file() or key not in _glued((page.parent / rel).resolve())]
    assert not missing, f"{page.name}: pasted keys no page glues: {missing}"
    assert "{glue:text}`" not in re.sub(REMOTE_ROLE, "", text), (
        f"{page.name} has no code cells: every glued number must name its page (page.md::key:fmt)")


def test_front_matter_names_both_sources():
    index = (ROOT / "index.md").read_text(encoding="utf-8")
    for lang in LANGS:
        for src in SOURCES:
            assert f"chapters/{lang}/notes/{src}-sources.md" in index, f"index.md: no link to the {lang} {src} notes"
    assert "前置讲 P5" in index and "《集合通信》" in index
    toc = (ROOT / "_toc.yml").read_text(encoding="utf-8")
    for lang in LANGS:
        for src in SOURCES:
            assert f"chapters/{lang}/notes/{src}-sources" in toc


def test_the_pdf_prints_the_notes_last():
    """tools/pdf_book.py prints each language's parts in _toc.yml order: the notes are its last part."""
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from pdf_book import book_parts

    for lang, caption in (("en", "Notes on the sources"), ("zh", "关于原文")):
        assert book_parts(ROOT / "_toc.yml", lang)[-1] == (
            caption, [f"chapters/{lang}/notes/p5-sources", f"chapters/{lang}/notes/ch1-sources"])


# ----------------------------------------------------------------------------- the checker
def test_checker_sees_markers_and_notes():
    page = "(en-src-p5-1)=\n### Note 1\n[A](../p5/a.md)\n(en-src-p5-2)=\n### Note 2\ntext\n"
    assert [n for n, _ in notes(page)] == [1, 2]
    assert markers("x.<sup>{ref}`note 2 <en-src-p5-2>`</sup>", "en") == [(2, "en-src-p5-2")]
    with pytest.raises(AssertionError):
        markers("x.<sup>{ref}`note 3 <en-src-p5-2>`</sup>", "en")
    with pytest.raises(AssertionError):
        markers("x.<sup>{ref}`注 2 <en-src-p5-2>`</sup>", "en")
    m = REMOTE_ROLE.search("{glue:text}`../p5/a.md::x_s:s`")
    assert (m["page"], m["key"]) == ("../p5/a.md", "x_s")
    m = REMOTE_DIRECTIVE.search("```{glue} tab\n:doc: ../ch1/b.md\n```")
    assert (m["page"], m["key"]) == ("../ch1/b.md", "tab")


def test_downloaded_notebook_pastes_numbers_from_other_pages():
    """The notes pages have no code: their notebooks (_ext/myst_to_jupyter.py) take each
    number from the glue of the page it names, and refuse a key that page does not glue."""
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    from myst_to_jupyter import ConversionError, Context, convert

    glue = {"chapters/en/p5/a": {"x": {"text/plain": "'1.5 µs'"}, "t": {"text/html": "<table></table>"}}}
    ctx = Context(docname="chapters/en/notes/b", other_glue=lambda doc: glue.get(doc, {}))
    assert convert("It takes {glue:text}`../p5/a.md::x:s`.", ctx) == "It takes 1.5 µs."
    assert "<table></table>" in convert("```{glue} t\n:doc: ../p5/a.md\n```", ctx)
    with pytest.raises(ConversionError, match="never glues 'y'"):
        convert("{glue:text}`../p5/a.md::y:s`", ctx)
    with pytest.raises(ConversionError, match="names another page"):
        convert("{glue:text}`../p5/a.md::x:s`", Context(docname="chapters/en/notes/b"))
