"""P5 §5.6 "Model vs measurement": the ring model on the nominal NVLink link beside the whole
measured all-reduce curve of one 8×H100 node (``code/commbook/data/measured/nccl-tests/``), with the
effective α each measured size implies; the two SHARP-off points of How to Scale Your
Model stay for the original notes' 58 MB example.
"""
from __future__ import annotations

import numpy as np

from ..bandwidth import busbw
from ..collectives import t_formula
from ..hardware import NVLINK4, Link
from ..measure.points import load
from ..units import fmt_bytes, fmt_pct, fmt_rate, fmt_time
from .measuring import curve
from .tables import Table
from .text import texts

T = texts("measure")

__all__ = ["BLOG", "alpha_eff", "p5_curve", "p5_table"]

BLOG = "htsym_allreduce_8xh100"
"""The two SHARP-off points stated in words in How to Scale Your Model ch. 12."""


def alpha_eff(n: float, measured_busbw: float, p: int, beta: float) -> float:
    """The per-step α that makes the ring's time 2(p−1)α + 2(p−1)/p·n/β equal the measured
    2(p−1)/p·n/busbw: n/p·(1/busbw − 1/β).  Negative where busbw > β (no ring does that)."""
    return n / p * (1 / measured_busbw - 1 / beta)


def p5_curve(link: Link = NVLINK4) -> dict:
    """Both H100 logs' all-reduce (:func:`.measuring.curve`), the ring model on ``link`` at the
    8×H100 log's sizes and on a grid, the implied α_eff per size, and the blog's points."""
    h, az = curve("h100", "all_reduce"), curve("azure", "all_reduce")
    p = h.p
    model_t = np.array([t_formula("ring", p, n, link.alpha, link.beta) for n in h.sizes])
    model_bus = np.array([busbw("all_reduce", n, t, p) for n, t in zip(h.sizes, model_t)])
    grid = np.logspace(np.log10(az.sizes.min()), np.log10(h.sizes.max()), 160)
    grid_bus = np.array([busbw("all_reduce", n, t_formula("ring", p, n, link.alpha, link.beta), p) for n in grid])
    az_model = np.array([busbw("all_reduce", n, t_formula("ring", p, n, link.alpha, link.beta), p)
                         for n in az.sizes])
    blog = load(BLOG)
    return {"link": link, "p": p, "h100": h, "azure": az, "model_time": model_t, "model_busbw": model_bus,
            "ratio": h.busbw / model_bus, "alpha_eff": np.array([alpha_eff(n, b, p, link.beta)
                                                                 for n, b in zip(h.sizes, h.busbw)]),
            "azure_model": az_model, "azure_ratio": az.busbw / az_model,
            "grid": grid, "grid_busbw": grid_bus, "blog": blog,
            "blog_sizes": np.array([pt.bytes for pt in blog.points]),
            "blog_busbw": np.array([pt.busbw for pt in blog.points])}


def p5_table(d: dict | None = None) -> Table:
    """The 8×H100 log's all-reduce rows beside the ring model on the nominal link."""
    d = p5_curve() if d is None else d
    h, link, p = d["h100"], d["link"], d["p"]
    rows = [{"n": n, "time": t, "busbw": b, "model": m, "ratio": r, "alpha_eff": a}
            for n, t, b, m, r, a in zip(h.sizes, h.times, h.busbw, d["model_busbw"], d["ratio"], d["alpha_eff"])]
    return Table(
        key="p5-measured-curve",
        title=T("measuring_p5.title", p=p, link=link.name, v=h.version),
        columns=["n", "time", "busbw", "model", "ratio", "alpha_eff"],
        headers=T.pairs(*(f"measuring_p5.{c}" for c in ("n", "time", "busbw", "model", "ratio", "alpha_eff"))),
        rows=rows,
        formats={"n": lambda v: fmt_bytes(v, binary=True), "time": lambda v: fmt_time(v, 4), "busbw": lambda v: fmt_rate(v, 3),
                 "model": lambda v: fmt_rate(v, 3), "ratio": fmt_pct, "alpha_eff": lambda v: fmt_time(v, 3)},
        notes=T.pairs("measuring_p5.note", placement=h.placement.replace("_", "-"), source=h.source,
                      alpha=fmt_time(link.alpha), beta=fmt_rate(link.beta, 3)),
        meta={"data": d},
    )
