"""Helpers shared by the demo tables of P5."""
from __future__ import annotations

import math
from itertools import combinations_with_replacement

from ...units import us


def US2(t: float) -> str:
    """A time as a number of microseconds with two decimals (the column says µs), as the
    lecture's demos print it."""
    return f"{t / us:.2f}"


def balanced_dims(p: int, k: int) -> tuple[int, ...]:
    """The most balanced factorization of ``p`` into ``k`` factors (8×8, 4×4×4 for 64)."""
    divisors = [d for d in range(1, p + 1) if p % d == 0]
    best = None
    for combo in combinations_with_replacement(divisors, k):
        if math.prod(combo) == p and (best is None or (max(combo), -min(combo)) < (max(best), -min(best))):
            best = combo
    return tuple(sorted(best, reverse=True))


def original_note(en: tuple[str, str, str], zh: tuple[str, str, str]) -> tuple[str, str]:
    """A note that sets a number of the original notes beside the value computed here:
    ``(what the original says, what this table computes, why)`` in each language →
    ``("Original notes: X; here: Y, because Z.", "原讲义：X；此处：Y，因为 Z。")``.

    Demos add it only when they run in the original's setting, so that a changed
    parameter never leaves the original's number beside a table it does not describe."""
    gap = " " if zh[2][:1].isascii() else ""
    return (f"Original notes: {en[0]}; here: {en[1]}, because {en[2]}.",
            f"原讲义：{zh[0]}；此处：{zh[1]}，因为{gap}{zh[2]}。")


def span(values, fmt) -> str:
    """``'lo–hi'`` of some values with one formatter (``'lo'`` when they agree)."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"
