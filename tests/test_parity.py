"""Bilingual parity: every zh page has an en twin with the same structure and code.

For each pair of pages (chapters/zh <-> chapters/en, .md; exercises/zh <->
exercises/en, .ipynb):

* both exist;
* they define the same labels once the language prefix ("zh-"/"en-") is stripped,
  and every label carries its own page's prefix (so the two never collide);
* they define and reference the same glue keys, and every referenced key is defined
  (by ``glue("key", ...)``, or under the literal prefix of ``glue_fields("prefix", ...)`` or
  the measuring page's ``glue3("prefix", ...)``);
* their code cells are identical, except the one line that sets the language
  constant (``LANG = "zh"`` / ``LANG = "en"``), which must name the page's language.
"""
from __future__ import annotations

import re
from pathlib import Path

import jupytext
import pytest

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("zh", "en")
TREES = {"chapters": ".md", "exercises": ".ipynb"}

LANG_LINE = re.compile(r"""^\s*LANG\s*=\s*["'](?P<lang>[a-z]+)["']\s*(#.*)?$""")
TARGET = re.compile(r"^\((?P<label>[^)\s]+)\)=\s*$", re.M)
OPTION_LABEL = re.compile(r"^:(?:label|name):\s*(?P<label>\S+)\s*$", re.M)
GLUE_DEF = re.compile(r"""\bglue\(\s*(?P<q>["'])(?P<key>[^"']+)(?P=q)""")
GLUE_FIELDS = re.compile(r"""\bglue(?:_fields|3)\(\s*(?P<q>["'])(?P<prefix>[^"']+)(?P=q)""")
GLUE_ROLE = re.compile(r"\{glue(?::[a-z]+)?\}`(?P<key>(?:[^`:]+::)?[^`:]+)(?::[^`]*)?`")  # [page.md::]key[:fmt]
GLUE_DIRECTIVE = re.compile(r"^(?:```+|:::+)\{glue(?::[a-z]+)?\}\s+(?P<key>\S+)(?:\n:doc:\s*(?P<doc>\S+))?", re.M)


def _pages(tree: str, lang: str) -> set[Path]:
    base = ROOT / tree / lang
    ext = TREES[tree]
    if not base.is_dir():
        return set()
    return {
        p.relative_to(base) for p in base.rglob(f"*{ext}")
        if ".ipynb_checkpoints" not in p.parts
    }


def _pairs(tree: str) -> list[tuple[Path, Path]]:
    common = _pages(tree, "zh") & _pages(tree, "en")
    return [(ROOT / tree / "zh" / rel, ROOT / tree / "en" / rel) for rel in sorted(common)]


ALL_PAIRS = [pair for tree in TREES for pair in _pairs(tree)]
PAIR_IDS = [str(zh.relative_to(ROOT)) for zh, _ in ALL_PAIRS]


def _read(path: Path):
    return jupytext.read(path)


def _markdown(nb) -> str:
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def _code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


def _labels(nb, lang: str) -> list[str]:
    text = _markdown(nb)
    labels = [m["label"] for m in TARGET.finditer(text)]
    labels += [m["label"] for m in OPTION_LABEL.finditer(text)]
    stripped = []
    for label in labels:
        assert label.startswith(f"{lang}-"), (
            f"label {label!r} must start with {lang + '-'!r} (its page's language)"
        )
        stripped.append(label[len(lang) + 1:])
    return stripped


def _glue_defined(nb) -> set[str]:
    return {m["key"] for c in _code_cells(nb) for m in GLUE_DEF.finditer(c.source)}


def _glue_used(nb) -> set[str]:
    text = _markdown(nb)
    return {m["key"] for m in GLUE_ROLE.finditer(text)} | {
        f"{m['doc']}::{m['key']}" if m["doc"] else m["key"] for m in GLUE_DIRECTIVE.finditer(text)
    }


def _normalise(source: str, lang: str, where: str) -> str:
    lines = []
    for line in source.splitlines():
        m = LANG_LINE.match(line)
        if m:
            assert m["lang"] == lang, f"{where}: sets LANG = {m['lang']!r} in a {lang!r} page"
            line = "LANG = <lang>"
        lines.append(line)
    return "\n".join(lines)


# ----------------------------------------------------------------------------- twins
def test_there_are_chapter_pages():
    assert _pages("chapters", "zh"), "no pages under chapters/zh"
    assert _pages("chapters", "en"), "no pages under chapters/en"


@pytest.mark.parametrize("tree", sorted(TREES))
def test_every_page_has_a_twin(tree):
    zh, en = _pages(tree, "zh"), _pages(tree, "en")
    assert not zh - en, f"{tree}/zh pages without an en twin: {sorted(map(str, zh - en))}"
    assert not en - zh, f"{tree}/en pages without a zh twin: {sorted(map(str, en - zh))}"


# ----------------------------------------------------------------------------- per pair
@pytest.mark.parametrize(("zh_path", "en_path"), ALL_PAIRS, ids=PAIR_IDS)
def test_same_labels(zh_path, en_path):
    zh, en = _labels(_read(zh_path), "zh"), _labels(_read(en_path), "en")
    assert zh == en, f"labels differ (prefix stripped):\n zh: {zh}\n en: {en}"


@pytest.mark.parametrize(("zh_path", "en_path"), ALL_PAIRS, ids=PAIR_IDS)
def test_same_glue_keys(zh_path, en_path):
    zh_nb, en_nb = _read(zh_path), _read(en_path)
    assert _glue_defined(zh_nb) == _glue_defined(en_nb)
    zh_used, en_used = _glue_used(zh_nb), _glue_used(en_nb)
    assert zh_used == en_used, (
        f"glue keys used only in zh: {sorted(zh_used - en_used)}; "
        f"only in en: {sorted(en_used - zh_used)}"
    )
    prefixes = tuple(f"{m['prefix']}_" for c in _code_cells(zh_nb) for m in GLUE_FIELDS.finditer(c.source))
    # a key pasted from another page ("page.md::key") is checked by tests/test_source_notes.py
    undefined = {k for k in zh_used - _glue_defined(zh_nb) if "::" not in k and not k.startswith(prefixes)}
    assert not undefined, f"glue keys referenced but never glued: {sorted(undefined)}"


@pytest.mark.parametrize(("zh_path", "en_path"), ALL_PAIRS, ids=PAIR_IDS)
def test_identical_code_cells(zh_path, en_path):
    zh_cells, en_cells = _code_cells(_read(zh_path)), _code_cells(_read(en_path))
    assert len(zh_cells) == len(en_cells), (
        f"{len(zh_cells)} code cells in zh, {len(en_cells)} in en"
    )
    for i, (z, e) in enumerate(zip(zh_cells, en_cells)):
        where = f"code cell {i}"
        assert _normalise(z.source, "zh", where) == _normalise(e.source, "en", where), (
            f"{where} differs between zh and en beyond the LANG line"
        )
        assert z.metadata.get("tags", []) == e.metadata.get("tags", []), f"{where}: tags differ"


# ----------------------------------------------------------------------------- the checker
def test_checker_catches_differences():
    """The helpers above really see labels, glue keys and LANG lines."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("(zh-a)=\n# A\n{glue:text}`x:.2f` and {glue}`y`\n"
                                      "```{glue:figure} z\n:name: zh-fig\n```"),
        nbformat.v4.new_code_cell('LANG = "zh"\nglue("x", 1)\nglue(\'y\', 2)'),
    ])
    assert _labels(nb, "zh") == ["a", "fig"]
    assert _glue_used(nb) == {"x", "y", "z"}
    assert _glue_defined(nb) == {"x", "y"}
    with pytest.raises(AssertionError):
        _labels(nb, "en")
    with pytest.raises(AssertionError):
        _normalise('LANG = "zh"', "en", "cell")
    assert _normalise('LANG = "zh"\nx = 1', "zh", "c") == _normalise("LANG = 'en'\nx = 1", "en", "c")
