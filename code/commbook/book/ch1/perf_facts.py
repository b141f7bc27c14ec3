r"""Chapter §1.2: what several cells of ``chapters/{zh,en}/ch1/02-performance-models.md`` share:
milliseconds as the chapter prints them (:func:`in_ms`), the opening question's scale and a
link's α, β, n* and line rate (:func:`link_facts`, glued for four boxes).  The sections' own
numbers are computed in the page's cells.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...hardware import Link
from ...units import KB, MB, fmt_number, ms

__all__ = ["in_ms", "Scale", "SCALE", "LinkFacts", "link_facts"]


def in_ms(t: float, digits: int = 5) -> str:
    """A time in milliseconds, as the chapter prints the budget: '5,557 ms', '1,200.8 ms'."""
    return f"{fmt_number(t / ms, digits)} ms"


def _gbps(bits_per_s: float) -> str:
    return f"{fmt_number(bits_per_s / 1e9)} Gb/s"


@dataclass(frozen=True)
class Scale:
    """The opening question's transfer and the decimal units the page uses."""

    ten_mb_bytes: float
    kb: int
    mb: int


SCALE = Scale(10 * MB, round(KB), round(MB))


@dataclass(frozen=True)
class LinkFacts:
    """A link's α, β, n* = αβ and its line rate in Gb/s."""

    alpha_s: float
    beta_Bps: float
    nstar_bytes: float
    line_rate: str


def link_facts(link: Link) -> LinkFacts:
    return LinkFacts(link.alpha, link.beta, link.n_half, _gbps(8 * link.beta))
