"""P5 §5.6 "Model vs measurement" as one typed result: the ring model on the nominal
NVLink link beside the two recorded 8×H100 all-reduce curves (:func:`commbook.book.measuring.curve`)
and the two values How to Scale Your Model states in words (data set ``HTSYM``), with the
effective α each measured point implies, α_eff = n/p·(1/busbw − 1/β)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...bandwidth import busbw
from ...collectives import t_formula
from ...hardware import Link
from ...measure.points import load
from ..measuring import curve
from .allreduce import HTSYM

__all__ = ["Measured", "measured_vs_ring", "TENSOR"]

TENSOR = (8192, 3584, 2)
"""The tensor of the original notes' example: bf16[8192, 3584] (tokens, hidden, bytes per value)."""


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


def measured_vs_ring(p: int, link: Link) -> Measured:
    """:class:`Measured` for the ring model on ``p`` devices over ``link``."""
    h, az = curve("h100", "all_reduce"), curve("azure", "all_reduce")
    ring = lambda n: t_formula("ring", p, n, link.alpha, link.beta)
    a_eff = lambda n, b: n / p * (1 / b - 1 / link.beta)
    ratio = lambda c: c.busbw / np.array([busbw("all_reduce", n, ring(n), p) for n in c.sizes])
    ratios, sizes = np.concatenate([ratio(az), ratio(h)]), np.concatenate([az.sizes, h.sizes])
    below = [a_eff(n, b) for c in (az, h) for n, b in zip(c.sizes, c.busbw) if b < link.beta]
    above, top, worst = int(np.nonzero(h.busbw > link.beta)[0][0]), int(np.argmax(h.busbw)), int(np.argmin(ratios))
    tokens, hidden, width = TENSOR
    mid, hi = load(HTSYM).points
    nxt = int(np.nonzero(h.sizes >= mid.bytes)[0][0])
    n_above = h.sizes[above]
    return Measured(
        len(h.sizes), h.sizes[0], h.sizes[-1], f"NCCL {h.version}", az.sizes[0], az.sizes[-1], f"NCCL {az.version}",
        az.sizes[0], az.times[0], ring(az.sizes[0]), sizes[worst], ratios[worst], ratio(h)[0],
        a_eff(h.sizes[0], h.busbw[0]), a_eff(h.sizes[0], h.busbw[0]) / link.alpha, min(below), max(below),
        n_above, h.busbw[above], a_eff(n_above, h.busbw[above]), h.times[above],
        2 * (p - 1) / p * n_above / link.beta, h.sizes[top], h.busbw[top], h.busbw[top] / link.beta,
        f"bf16[{tokens}, {hidden}]", mid.stated_bytes, tokens * hidden * width, mid.bytes, mid.busbw, hi.busbw,
        hi.bytes, a_eff(mid.stated_bytes, mid.busbw), a_eff(mid.bytes, mid.busbw),
        a_eff(mid.bytes, mid.busbw) / link.alpha, h.sizes[nxt], h.busbw[nxt], h.busbw[nxt] / mid.busbw)
