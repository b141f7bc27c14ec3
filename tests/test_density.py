"""A paragraph carries only the numbers its argument needs: at most ``MAX_GLUED`` = 6 glued
values (``{glue:text}`` / ``{glue}`` roles) per paragraph of chapter 1, in both languages;
the rest belong in the tables and figures the pages already have.

A paragraph is a run of prose lines between blank lines, headings, directive fences and
code cells; every list item counts as a paragraph of its own, and so do figure captions and
the paragraphs inside admonitions (answers, notes)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_GLUED = 6
FENCE = re.compile(r"^(`{3,}|:{3,})(.*)$")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
GLUED = re.compile(r"\{glue(?::text)?\}`")
PAGES = sorted((ROOT / "chapters").glob("*/ch1/*.md"))


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of every paragraph of a MyST page's prose."""
    out: list[tuple[int, str]] = []
    cur: list[str] = []
    start, code = None, None

    def close() -> None:
        nonlocal cur, start
        if cur:
            out.append((start, " ".join(cur)))
        cur, start = [], None

    for no, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line.strip())
        if code is not None:
            if m and m.group(1) == code and not m.group(2).strip():
                code = None
            continue
        if m and m.group(2).startswith(("{code-cell}", "python", "text", "bash", "{math}")):
            close()
            code = m.group(1)
            continue
        item = LIST_ITEM.match(line)
        if m or not line.strip() or line.lstrip().startswith(("#", ":")) or item:
            close()
            if not item:
                continue
        start = no if start is None else start
        cur.append(line)
    close()
    return out


def test_the_counter_splits_paragraphs_items_and_code():
    page = ("One {glue:text}`a` and {glue:text}`b`.\nStill the same paragraph {glue}`c`.\n\n"
            "- item {glue:text}`d`\n- item {glue:text}`e`\n\n```{code-cell} python\nglue('x', 1)\n"
            "{glue:text}`not prose`\n```\n:::{note}\nInside {glue:text}`f`\n:::\n")
    counts = [len(GLUED.findall(t)) for _, t in paragraphs(page)]
    assert counts == [3, 1, 1, 1]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_at_most_six_glued_numbers_per_paragraph(page: Path):
    dense = [(no, len(GLUED.findall(t))) for no, t in paragraphs(page.read_text(encoding="utf-8"))
             if len(GLUED.findall(t)) > MAX_GLUED]
    assert not dense, f"{page.relative_to(ROOT)}: paragraphs with more than {MAX_GLUED} glued numbers " \
                      f"(line, count): {dense}"
