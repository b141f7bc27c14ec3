"""One bilingual term list: the Chinese pages use the book's terms.

A binomial tree is not a binary tree: the Chinese pages call it 二项树 and keep 二叉树 for
NCCL's double binary tree (双二叉树).  The algorithm registry's Chinese names follow the
term list, so tables, figures and prose agree."""
import json
import re
from pathlib import Path

import pytest

from commbook.book.labels import TERMS
from commbook.book.names import display_name

ROOT = Path(__file__).resolve().parents[1]
ZH = sorted((ROOT / "chapters" / "zh").rglob("*.md")) + sorted((ROOT / "exercises" / "zh").glob("*.ipynb"))


def _text(path: Path) -> str:
    if path.suffix == ".ipynb":
        return "\n".join("".join(c["source"]) for c in json.loads(path.read_text(encoding="utf-8"))["cells"])
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("page", ZH, ids=lambda p: str(p.relative_to(ROOT)))
def test_binomial_tree_is_not_called_a_binary_tree(page):
    text = _text(page)
    bad = [m.start() for m in re.finditer("二叉树", text) if text[max(0, m.start() - 1):m.start()] != "双"]
    lines = sorted({text.count("\n", 0, i) + 1 for i in bad})
    assert not bad, f"{page.name}: 二叉树 for a binomial tree on lines {lines}; the book's term is 二项树"


def test_registry_names_follow_the_term_list():
    assert display_name("all_reduce", "tree", "zh") == TERMS["binomial_tree"]["zh"]
    assert display_name("broadcast", "binomial", "zh") == TERMS["binomial_tree"]["zh"]
    assert display_name("all_reduce", "double_tree", "zh") == TERMS["double_binary_tree"]["zh"]
    assert display_name("all_reduce", "rd", "zh") == TERMS["recursive_doubling"]["zh"]
    assert display_name("reduce_scatter", "rh", "zh") == TERMS["recursive_halving"]["zh"]
    assert display_name("all_reduce", "tree", "en") == TERMS["binomial_tree"]["en"]


# Straight double quotes beside Chinese text: Sphinx's smart quotes follow English rules
# and turn "轨道" into two closing quotes (”轨道”).  Chinese prose writes “…”.
_HAN = r"[\u4e00-\u9fff]"
_STRAIGHT = re.compile(rf'{_HAN}"|"{_HAN}')
_NOT_PROSE = [re.compile(r'(?ms)^(`{3,}|:{3,})\{(math|code-block|code|code-cell)\}.*?^\1\s*$'),
              re.compile(r'(?ms)^\$\$.*?\$\$'), re.compile(r'`[^`\n]*`'), re.compile(r'\$[^$\n]*\$')]


def _prose(path: Path) -> list[str]:
    """The markdown of a Chinese page without code cells, code, math and roles' arguments."""
    if path.suffix == ".ipynb":
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        text = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")
    else:
        text = path.read_text(encoding="utf-8")
    for pattern in _NOT_PROSE:
        text = pattern.sub("", text)
    return text.splitlines()


@pytest.mark.parametrize("page", ZH, ids=lambda p: str(p.relative_to(ROOT)))
def test_chinese_prose_uses_chinese_quotation_marks(page):
    bad = [line.strip()[:80] for line in _prose(page) if _STRAIGHT.search(line)]
    assert not bad, f"{page.name}: straight quotes beside Chinese text (write “…”): {bad}"


FORBIDDEN = {t["not_zh"]: t["zh"] for t in TERMS.values() if "not_zh" in t}


@pytest.mark.parametrize("page", ZH, ids=lambda p: str(p.relative_to(ROOT)))
def test_chinese_prose_uses_one_word_per_term(page):
    """通信器 (not 通信子), 超额订阅 (not 超配), 工作进程 (not worker) in the prose of every zh page."""
    bad = [(word, line.strip()[:60]) for line in _prose(page) for word in FORBIDDEN if word in line]
    assert not bad, f"{page.name}: write {', '.join(f'{FORBIDDEN[w]} for {w}' for w in {w for w, _ in bad})}: {bad}"


_TITLE = re.compile(r"^`{3,}\{admonition\}\s*(\S.*)$")


@pytest.mark.parametrize("page", sorted((ROOT / "chapters" / "zh").rglob("*.md")), ids=lambda p: str(p.relative_to(ROOT)))
def test_chinese_boxes_and_headings_follow_one_rule(page):
    """Every admonition title of chapter 1 starts with one of the box names of labels.BOXES;
    headings are Chinese only (no ' · English' subtitle) on every page."""
    from commbook.book.labels import BOXES
    names = tuple(b["zh"] for b in BOXES.values())
    lines = page.read_text(encoding="utf-8").splitlines()
    titles = [m.group(1) for m in map(_TITLE.match, lines) if m] if "/ch1/" in page.as_posix() else []
    odd = [t for t in titles if not t.startswith(names)]
    assert not odd, f"{page.name}: box titles outside labels.BOXES: {odd}"
    subtitled = [h for h in lines if h.startswith("#") and re.search(r" · [A-Za-z]", h)]
    assert not subtitled, f"{page.name}: headings with an English subtitle: {subtitled}"
