"""Exercise pages: the code that computes an answer sits inside that answer's fold
(issue 19 §5).

An exercise notebook states the problem, gives the reasoning in a collapsed "Solution"
dropdown (a Markdown cell), and computes the numbers in the next code cell, folded
(``hide-input``, ``hide-output``).  A notebook cell cannot sit inside a Markdown
dropdown, so on the built page the computing cell used to follow the dropdown, one
toggle away from the answer for a reader who had not opened it.  Once the site is
written, :func:`answers_in_their_folds` (called by :mod:`commbook_pages`) moves each
such cell into the dropdown it follows, after the reasoning: opening "Solution" shows
the reasoning and the code's own folds; printed (the PDF opens every fold), both are
shown.  The downloaded notebooks keep their cells as they are.
"""
from __future__ import annotations

import re

# The end of a sphinx-design dropdown's body, then a folded code cell right after it.
SOLUTION_END = re.compile(r'</div>\s*</details>(?=\s*<div class="cell tag_hide-input tag_hide-output[^"]*">)')
DIV = re.compile(r"<div\b|</div>")


def _cell_end(page: str, start: int) -> int:
    """The index just past the ``</div>`` that closes the ``<div`` opening at ``start``."""
    depth = 0
    for m in DIV.finditer(page, start):
        depth += 1 if m.group(0) == "<div" else -1
        if depth == 0:
            return m.end()
    raise ValueError(f"unclosed <div> at {start}")


def answers_in_their_folds(page: str) -> str:
    """``page`` with every folded code cell that follows a dropdown moved into it.

    >>> page = ('<details class="sd-dropdown"><summary>S</summary><div class="sd-summary-content">'
    ...         'why</div>\\n</details><div class="cell tag_hide-input tag_hide-output docutils container">'
    ...         '<div>code</div></div><p>next</p>')
    >>> print(answers_in_their_folds(page))
    <details class="sd-dropdown"><summary>S</summary><div class="sd-summary-content">why<div class="cell tag_hide-input tag_hide-output docutils container"><div>code</div></div></div>
    </details><p>next</p>
    """
    out, last = [], 0
    while (m := SOLUTION_END.search(page, last)) is not None:
        cell_start = page.index("<div", m.end())
        cell_end = _cell_end(page, cell_start)
        out += [page[last:m.start()], page[cell_start:cell_end], page[m.start():m.end()]]
        last = cell_end
    out.append(page[last:])
    return "".join(out)
