r"""Chapter §1.2: the numbers each section of ``chapters/{zh,en}/ch1/02-performance-models.md``
puts into its prose that no builder returns itself and no page cell computes (compression,
Checkpoint 1.1's givens, Napkin Math 1.3 and Figure 4's counts are the page's), built from
:mod:`.perf_numbers` (the boxes' α are :class:`.perf_numbers.BoxAlphas`'s own, Figure 3's
:class:`.perf_numbers.Gap`'s, the calibration's
:class:`.perf_calibration.Calibration`'s; the page glues them with
:func:`commbook.book.glue.glue_fields`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...cost import p2p_time
from ...hardware import NVLINK4_CHAPTER, ROCE_100G, Link
from ...units import KB, MB, fmt_number, ms
from .perf_numbers import CHAPTER_LLAMA, CHAPTER_PRINTED_NSTAR, TABLE1, LlamaBudget

__all__ = ["in_ms", "Scale", "SCALE", "LinkFacts", "link_facts", "Table1Facts", "table1_facts", "Printed", "printed"]


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


@dataclass(frozen=True)
class Table1Facts:
    """Table 1 read by the prose: NVLink's n*, the largest and smallest n* of the other links,
    a size between them and the α share of its time on NVLink and on InfiniBand NDR, what the
    chapter prints for NVLink and RoCE, and RoCE's n*."""

    nv_nstar_bytes: float
    max_inter_bytes: float
    min_inter_bytes: float
    mid_bytes: float
    mid_nv_share_frac: float
    mid_ib_share_frac: float
    nv_printed: str
    roce_printed: str
    roce_nstar_bytes: float


def table1_facts(mid: float = 300 * KB) -> Table1Facts:
    nv = NVLINK4_CHAPTER
    ib = next(r.link for r in TABLE1 if r.key == "IB_NDR_CHAPTER")
    others = [r.link.n_half for r in TABLE1 if r.key != "NVLINK4_CHAPTER"]
    share = lambda L: L.alpha / p2p_time(mid, L.alpha, L.beta)
    return Table1Facts(nv.n_half, max(others), min(others), mid, share(nv), share(ib),
                       CHAPTER_PRINTED_NSTAR["NVLINK4_CHAPTER"][1], CHAPTER_PRINTED_NSTAR["ROCE_100G"][1],
                       ROCE_100G.n_half)


@dataclass(frozen=True)
class Printed:
    """The Llama budget as the chapter prints it (at its rounding) and the α-range totals as text."""

    chapter_flat: str
    chapter_hier: str
    flat_range: str
    hier_range: str


def printed(b: LlamaBudget) -> Printed:
    def text(key: str) -> str:
        value, decimals = CHAPTER_LLAMA[key]
        return f"{value / ms:,.{decimals}f} ms"

    rng = lambda lo, hi, d: f"{fmt_number(lo / ms, d)}–{fmt_number(hi / ms, d)} ms"
    return Printed(text("flat"), text("hier"), rng(b.flat_lo_s, b.flat_hi_s, 5), rng(b.hier_lo_s, b.hier_hi_s, 6))
