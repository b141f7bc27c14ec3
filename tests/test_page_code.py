"""Issue 18 §1: a reader sees the code behind the page's numbers. The share of page code
in cells the built page removes (``remove-cell``, ``remove-input``) stays at most 40 %, per
language; the code of a folded cell (``hide-input``) is one click away and counts as shown.

Counted: non-blank source lines of the code cells of every chapter page
(``chapters/{lang}/**/*.md``), not the cell's ``:tags:`` line.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_REMOVED = 0.40
CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
TAGS = re.compile(r"^:tags:\s*\[(.*?)\]\s*$", re.M)
REMOVING = {"remove-cell", "remove-input"}


def code_lines(page: Path) -> tuple[int, int]:
    """(all, removed) non-blank code lines of a MyST page's code cells."""
    total = removed = 0
    for body in CELL.findall(page.read_text(encoding="utf-8")):
        m = TAGS.search(body)
        tags = {t.strip().strip("'\"") for t in m.group(1).split(",")} if m else set()
        n = sum(1 for line in body.splitlines() if line.strip() and not line.startswith(":"))
        total += n
        removed += n if tags & REMOVING else 0
    return total, removed


def test_code_lines_counts_a_small_page(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n```{code-cell} python\n:tags: [remove-cell]\n\nx = 1\ny = 2\n```\n"
                    "```{code-cell} python\n:tags: [hide-input]\nz = 3\n```\n"
                    "```{code-cell} python\nprint(z)\n```\n", encoding="utf-8")
    assert code_lines(page) == (4, 2)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_most_page_code_is_shown(lang):
    pages = sorted((ROOT / "chapters" / lang).rglob("*.md"))
    assert pages, f"no pages under chapters/{lang}"
    total = removed = 0
    for page in pages:
        t, r = code_lines(page)
        total, removed = total + t, removed + r
    share = removed / total
    assert share <= MAX_REMOVED, (f"chapters/{lang}: {removed} of {total} code lines "
                                  f"({share:.0%}) are in removed cells (at most {MAX_REMOVED:.0%})")
