"""P5 §5.6 "Model vs measurement": the ring model on the nominal NVLink link beside the whole
measured all-reduce curve of one 8×H100 node (``code/commbook/data/measured/nccl-tests/``) and
the Azure node's published curve, with the effective α each measured size implies,
α_eff = n/p·(1/busbw − 1/β); the two SHARP-off points that How to Scale Your Model states in
words (data set :data:`BLOG`) stay for the original notes' 58 MB example.  One builder,
:func:`p5_curve`, gives the table, the figure and the numbers the prose quotes
(:class:`Measured`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..bandwidth import busbw
from ..collectives import t_formula
from ..hardware import NVLINK4, Link
from ..measure.points import load
from ..units import fmt_bytes, fmt_rate, fmt_time
from .measuring import Curve, curve
from .tables import Table
from .text import texts

T = texts("measure")

__all__ = ["BLOG", "TENSOR", "alpha_eff", "Measured", "P5Curve", "p5_curve", "p5_table"]

BLOG = "htsym_allreduce_8xh100"
"""The two SHARP-off points stated in words in How to Scale Your Model ch. 12."""

TENSOR = (8192, 3584, 2)
"""The tensor of the original notes' example: bf16[8192, 3584] (tokens, hidden, bytes per value)."""


def alpha_eff(n: float, measured_busbw: float, p: int, beta: float) -> float:
    """The per-step α that makes the ring's time 2(p−1)α + 2(p−1)/p·n/β equal the measured
    2(p−1)/p·n/busbw: n/p·(1/busbw − 1/β).  Negative where busbw > β (no ring does that).

    >>> round(alpha_eff(58e6, 150e9, 8, 450e9) * 1e6, 1)
    32.2
    """
    return n / p * (1 / measured_busbw - 1 / beta)


@dataclass(frozen=True)
class Measured:
    """What §5.6 reads off the logs.  ``log_*``: the nccl-tests log (sizes, range, NCCL
    version); ``az_*``: the Azure node's published curve; ``small_*``: its smallest size,
    measured and modelled; ``worst_*``: where measurement falls furthest below the model;
    ``alpha_*``: effective α at the log's smallest size, its multiple of the link's, and its
    range over the sizes below β; ``first_above_bytes`` and ``top_*``: where the log passes β
    and its highest point (with its measured time and the ring's bandwidth term there);
    ``blog_*``: the two stated values, the tensor's stated and exact size and the α_eff each
    gives; ``next_*``: the log's next size above the tensor."""

    binary: ClassVar[tuple[str, ...]] = (
        "log_lo_bytes", "log_hi_bytes", "az_lo_bytes", "az_hi_bytes", "small_bytes", "worst_bytes",
        "first_above_bytes", "top_bytes", "blog_exact_bytes", "next_bytes")
    """The sizes written in binary units (KiB, MiB), as the logs give them."""

    log_sizes: int
    log_lo_bytes: float
    log_hi_bytes: float
    log_nccl: str
    az_lo_bytes: float
    az_hi_bytes: float
    az_nccl: str
    small_bytes: float
    small_s: float
    small_model_s: float
    worst_bytes: float
    worst_frac: float
    lo_frac: float
    alpha_s: float
    alpha_x: float
    alpha_min_s: float
    alpha_max_s: float
    first_above_bytes: float
    first_above_Bps: float
    first_above_alpha_s: float
    first_above_s: float
    first_above_ring_s: float
    top_bytes: float
    top_Bps: float
    top_frac: float
    blog_shape: str
    blog_stated_bytes: float
    blog_exact: int
    blog_exact_bytes: float
    blog_mid_Bps: float
    blog_top_Bps: float
    blog_top_bytes: float
    blog_alpha_stated_s: float
    blog_alpha_exact_s: float
    blog_alpha_x: float
    next_bytes: float
    next_Bps: float
    next_x: float


@dataclass(frozen=True)
class P5Curve:
    """Both H100 logs' all-reduce (:func:`.measuring.curve`) against the ring on ``link``:
    the model's busbw at the 8×H100 log's sizes, measured over modelled busbw, the
    implied α_eff per size, the model's busbw on a ``grid`` of sizes, the stated points
    (``blog_*``), and the numbers the prose quotes (``measured``)."""

    link: Link
    p: int
    h100: Curve
    azure: Curve
    model_busbw: np.ndarray
    ratio: np.ndarray
    alpha_eff: np.ndarray
    grid: np.ndarray
    grid_busbw: np.ndarray
    blog_sizes: np.ndarray
    blog_busbw: np.ndarray
    measured: Measured


def p5_curve(link: Link = NVLINK4) -> P5Curve:
    """:class:`P5Curve` of the ring on ``link`` (on the logs' 8 GPUs).

    >>> p5_curve().measured.blog_shape
    'bf16[8192, 3584]'
    """
    h, az = curve("h100", "all_reduce"), curve("azure", "all_reduce")
    p = h.p
    ring = lambda n: t_formula("ring", p, n, link.alpha, link.beta)
    bus = lambda sizes: np.array([busbw("all_reduce", n, ring(n), p) for n in sizes])
    a_eff = lambda n, b: alpha_eff(n, b, p, link.beta)
    model_bus, az_bus = bus(h.sizes), bus(az.sizes)
    grid = np.logspace(np.log10(az.sizes.min()), np.log10(h.sizes.max()), 160)
    blog = load(BLOG)
    ratios, sizes = np.concatenate([az.busbw / az_bus, h.busbw / model_bus]), np.concatenate([az.sizes, h.sizes])
    below = [a_eff(n, b) for c in (az, h) for n, b in zip(c.sizes, c.busbw) if b < link.beta]
    above, top, worst = int(np.nonzero(h.busbw > link.beta)[0][0]), int(np.argmax(h.busbw)), int(np.argmin(ratios))
    tokens, hidden, width = TENSOR
    mid, hi = blog.points
    nxt = int(np.nonzero(h.sizes >= mid.bytes)[0][0])
    n_above = h.sizes[above]
    measured = Measured(
        len(h.sizes), h.sizes[0], h.sizes[-1], f"NCCL {h.version}", az.sizes[0], az.sizes[-1], f"NCCL {az.version}",
        az.sizes[0], az.times[0], ring(az.sizes[0]), sizes[worst], ratios[worst], h.busbw[0] / model_bus[0],
        a_eff(h.sizes[0], h.busbw[0]), a_eff(h.sizes[0], h.busbw[0]) / link.alpha, min(below), max(below),
        n_above, h.busbw[above], a_eff(n_above, h.busbw[above]), h.times[above],
        2 * (p - 1) / p * n_above / link.beta, h.sizes[top], h.busbw[top], h.busbw[top] / link.beta,
        f"bf16[{tokens}, {hidden}]", mid.stated_bytes, tokens * hidden * width, mid.bytes, mid.busbw, hi.busbw,
        hi.bytes, a_eff(mid.stated_bytes, mid.busbw), a_eff(mid.bytes, mid.busbw),
        a_eff(mid.bytes, mid.busbw) / link.alpha, h.sizes[nxt], h.busbw[nxt], h.busbw[nxt] / mid.busbw)
    return P5Curve(link, p, h, az, model_bus, h.busbw / model_bus,
                   np.array([a_eff(n, b) for n, b in zip(h.sizes, h.busbw)]), grid, bus(grid),
                   np.array([pt.bytes for pt in blog.points]), np.array([pt.busbw for pt in blog.points]), measured)


def p5_table(d: P5Curve | None = None) -> Table:
    """The 8×H100 log's all-reduce rows beside the ring model on the nominal link.

    >>> p5_table().columns[-1]
    'alpha_eff_s'
    """
    d = p5_curve() if d is None else d
    h, link = d.h100, d.link
    rows = [{"n": n, "time_s": t, "busbw_Bps": b, "model_Bps": m, "ratio_frac": r, "alpha_eff_s": a}
            for n, t, b, m, r, a in zip(h.sizes, h.times, h.busbw, d.model_busbw, d.ratio, d.alpha_eff)]
    return Table(
        key="p5-measured-curve",
        title=T("measuring_p5.title", p=d.p, link=link.name, v=h.version),
        columns=["n", "time_s", "busbw_Bps", "model_Bps", "ratio_frac", "alpha_eff_s"],
        headers=T.pairs(*(f"measuring_p5.{c}" for c in ("n", "time", "busbw", "model", "ratio", "alpha_eff"))),
        rows=rows,
        formats={"n": lambda v: fmt_bytes(v, binary=True), "busbw_Bps": 3, "model_Bps": 3, "alpha_eff_s": 3},
        notes=T.pairs("measuring_p5.note", placement=h.placement.replace("_", "-"), source=h.source,
                      alpha=fmt_time(link.alpha), beta=fmt_rate(link.beta, 3)),
        meta={"data": d},
    )
