"""Helpers shared by the demo tables of lecture P5."""
from __future__ import annotations

import math
from itertools import combinations_with_replacement

from ...units import GB, us
from ..tables import fmt_fixed, fmt_gbps

US2 = fmt_fixed(us, 2)
"""Microseconds with two decimals."""


def GBPS(bytes_per_s: float) -> str:
    """GB/s with 3 significant digits, never in exponent form (``'1,440 GB/s'``)."""
    v = bytes_per_s / GB
    return f"{v:,.0f} GB/s" if abs(v) >= 1000 else fmt_gbps(bytes_per_s)


def balanced_dims(p: int, k: int) -> tuple[int, ...]:
    """The most balanced factorization of ``p`` into ``k`` factors (8×8, 4×4×4 for 64)."""
    divisors = [d for d in range(1, p + 1) if p % d == 0]
    best = None
    for combo in combinations_with_replacement(divisors, k):
        if math.prod(combo) == p and (best is None or (max(combo), -min(combo)) < (max(best), -min(best))):
            best = combo
    return tuple(sorted(best, reverse=True))
