"""Helpers shared by the demo tables of P5."""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement

from ...units import us
from ..text import texts


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
    ``(what the original says, what this table computes, why)`` in each language, written
    with the ``common.original_note`` template of ``book/texts/p5.toml``.

    Demos add it only when they run in the original's setting, so that a changed
    parameter never leaves the original's number beside a table it does not describe."""
    t = texts("p5")
    gap = " " if zh[2][:1].isascii() else ""
    return (t.get("common.original_note", "en", said=en[0], here=en[1], why=en[2], gap=" "),
            t.get("common.original_note", "zh", said=zh[0], here=zh[1], why=zh[2], gap=gap))


def span(values, fmt) -> str:
    """``'lo–hi'`` of some values with one formatter (``'lo'`` when they agree)."""
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}–{hi}"


@dataclass(frozen=True)
class Run:
    """A demo table's typed ``rows`` (frozen dataclasses, one a row) and the ``setting`` they
    were computed in (a tuple the builder documents)."""

    rows: tuple
    setting: tuple

    def at(self, **key) -> object:
        """The row whose one field ``key`` names has that value, e.g. ``run.at(batch=1)``.

        >>> from collections import namedtuple
        >>> R = namedtuple("R", "batch time_s")
        >>> Run((R(1, 2.0), R(8, 3.0)), ()).at(batch=8).time_s
        3.0
        """
        (name, value), = key.items()
        row = next((r for r in self.rows if getattr(r, name) == value), None)
        if row is None:
            raise ValueError(f"{name}={value!r} not among {[getattr(r, name) for r in self.rows]}")
        return row
