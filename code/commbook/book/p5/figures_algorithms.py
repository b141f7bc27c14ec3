"""Figures of lecture P5 on algorithm costs: all-reduce time against message size and
against the number of devices, and the pipelined chain broadcast.

Every function takes ``lang`` ("zh" or "en") and returns a
:class:`matplotlib.figure.Figure`; every number drawn comes from the closed forms of
:mod:`commbook.collectives` (:func:`~commbook.collectives.t_formula`,
:func:`~commbook.collectives.t_broadcast`) and :mod:`commbook.cost`.  Legends use the
algorithm registry's display names (``label("algo_<name>")``).  Lines have gid
``"t:<algo>"``.  Re-exported by :mod:`commbook.book.p5.figures`.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

from ... import cost
from ...collectives import t_broadcast, t_formula
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ...units import KB, MB, fmt_bytes, fmt_time
from ..plots import (COLUMN_IN, PALETTE, SMALL_PT, TICK_FORMATS, book_style, label,
                     label_line_ends, log_axis)

__all__ = ["fig_allreduce_vs_size", "fig_allreduce_vs_p", "fig_broadcast_pipeline"]

ALLREDUCE_LINES = ("ring", "rd", "rabenseifner", "tree", "double_tree", "naive", "innet")
"""All-reduce algorithms drawn against message size, in legend order (``double_tree`` is
NCCL's pipelined double binary tree at its best chunk count)."""

SCALING_LINES = ("ring", "rd", "rabenseifner", "double_tree", "double_binomial")
"""All-reduce algorithms drawn against the number of devices: the pipelined double binary
tree next to two unpipelined binomial trees shows what pipelining buys as p grows."""


LINE_STYLES = {
    "ring": (PALETTE[0], "-"), "rd": (PALETTE[1], "-"), "rabenseifner": (PALETTE[2], "-"),
    "tree": (PALETTE[3], "-"), "double_tree": (PALETTE[4], "-"), "naive": ("0.15", ":"),
    "innet": ("0.55", "-."), "double_binomial": ("0.4", "--"),
}
"""Colour and dash of each algorithm's line: no two lines of one figure share a hue family
(the ring is dark blue, the naive all-reduce black and dotted; Rabenseifner green, the
double tree reddish purple; only the unpipelined double binomial tree is dashed)."""


def _sizes_panel(ax, xs, curves: dict, lang: str, x_unit: str, base: int = 10) -> list:
    """Log-log time curves ``curves[algo] = times`` against ``xs``, labelled by algorithm
    (the registry's display names), each in its :data:`LINE_STYLES`; returns the lines."""
    lines = []
    for algo, ts in curves.items():
        color, dash = LINE_STYLES[algo]
        lines += ax.plot(xs, ts, color=color, ls=dash, label=label(f"algo_{algo}", lang), gid=f"t:{algo}")
    log_axis(ax, "x", x_unit, base=base)
    span = max(t.max() for t in curves.values()) / min(t.min() for t in curves.values())
    log_axis(ax, "y", "time", subs=(1.0, 2.0, 5.0) if span < 100 else (1.0,))
    ax.set_xlim(xs[0], xs[-1])
    return lines


# ============================================================================ 4-5 all-reduce costs
def _formula_times(algos: Sequence[str], p_values, n_values, link: Link) -> dict[str, np.ndarray]:
    """``t_formula`` of each algorithm over the broadcast of ``p_values`` and ``n_values``."""
    ps, ns = np.broadcast_arrays(np.asarray(p_values), np.asarray(n_values, dtype=float))
    return {a: np.array([t_formula(a, int(p), float(n), link.alpha, link.beta)
                         for p, n in zip(ps.ravel(), ns.ravel())]) for a in algos}


def fig_allreduce_vs_size(lang: str = "en", p: int = 8, link: Link = NVLINK4,
                          sizes: Sequence[float] | None = None) -> Figure:
    """All-reduce time against message size (log-log), one line per algorithm of
    :data:`ALLREDUCE_LINES`, from :func:`commbook.collectives.t_formula` on ``p`` devices over
    ``link``; the crossovers :func:`~commbook.cost.crossover_rd_ring` and
    :func:`~commbook.cost.crossover_tree_ring` are marked on the ring line.

    Lines have gid ``"t:<algo>"``; the markers ``"xover:rd_ring"`` and ``"xover:tree_ring"``.
    """
    n = np.logspace(3, 9, 121) if sizes is None else np.sort(np.asarray(sizes, dtype=float))
    curves = _formula_times(ALLREDUCE_LINES, p, n, link)
    xovers = {"rd_ring": cost.crossover_rd_ring(p, link.alpha, link.beta),
              "tree_ring": cost.crossover_tree_ring(p, link.alpha, link.beta)}
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 5.0))
        ax = fig.add_subplot()
        lines = _sizes_panel(ax, n, curves, lang, "bytes")
        for i, (key, nx) in enumerate(xovers.items()):
            tx = t_formula("ring", p, nx, link.alpha, link.beta)
            ax.plot([nx], [tx], marker="o", ms=7, mfc="white", mec="0.1", ls="none", zorder=4,
                    gid=f"xover:{key}")
            ax.annotate(label(f"xover_{key}", lang, n=fmt_bytes(nx)), (nx, tx),
                        xytext=(-12, 40 + 40 * i), textcoords="offset points", ha="right",
                        fontsize=SMALL_PT, arrowprops=dict(arrowstyle="-", color="0.4", lw=0.8))
        ax.set_xlabel(label("size", lang))
        ax.set_ylabel(label("ar_time", lang))
        ax.set_title(label("ar_size_title", lang, p=p, link=link.name))
        label_line_ends(ax, lines)  # the lines named at their ends: no legend to match colours
    return fig


def fig_allreduce_vs_p(lang: str = "en", link: Link = IB_NDR,
                       sizes: Sequence[float] = (64 * KB, 256 * MB), p_max: int = 512,
                       algorithms: Sequence[str] = SCALING_LINES) -> Figure:
    """All-reduce time against the number of devices p = 2, 4, ..., ``p_max`` (log-log),
    one panel per message size, one line per algorithm of ``algorithms`` (default
    :data:`SCALING_LINES`), from :func:`commbook.collectives.t_formula` over ``link``.
    Lines have gid ``"t:<algo>"``."""
    ps = 2 ** np.arange(1, int(np.log2(p_max)) + 1)
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 3.3 * len(sizes) + 0.4))
        axes = fig.subplots(len(sizes), 1)  # stacked: each panel the column's width
        for ax, n in zip(np.atleast_1d(axes), sizes):
            _sizes_panel(ax, ps, _formula_times(algorithms, ps, n, link), lang,
                         "plain", base=2)
            ax.set_xlabel(label("devices", lang))
            ax.set_ylabel(label("ar_time", lang))
            ax.set_title(label("ar_p_title", lang, n=fmt_bytes(n), link=link.name), fontsize=10.5)
            ax.legend(loc="upper left", ncol=2)
    return fig


# ============================================================================ 6 chain broadcast
def fig_broadcast_pipeline(lang: str = "en", p: int = 8, n: float = 8 * MB, link: Link = ICI_V5E,
                           k_max: int = 128) -> Figure:
    """Pipelined chain broadcast time against the number of chunks k = 1..``k_max``
    (:func:`commbook.collectives.t_broadcast` ``"chain"``), with the binomial tree and the flat
    broadcast as horizontal lines, the lower bound n/β, and the optimum (k*, T*) of
    :func:`commbook.cost.chain_broadcast_optimum`.

    Artists: ``"t:chain"`` (the curve), ``"t:binomial"``, ``"t:flat"``, ``"bound"``, ``"opt"``.
    """
    ks = np.arange(1, k_max + 1)
    a, b = link.alpha, link.beta
    chain = np.array([t_broadcast("chain", p, n, a, b, chunks=int(k)) for k in ks])
    k_star, t_star = cost.chain_broadcast_optimum(p, n, a, b)
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 4.4))
        ax = fig.add_subplot()
        ax.plot(ks, chain, color=PALETTE[0], label=label("bcast_chain", lang), gid="t:chain")
        for i, algo in enumerate(("binomial", "flat"), start=1):
            ax.axhline(t_broadcast(algo, p, n, a, b), color=PALETTE[i], ls="--", lw=1.4,
                       label=label(f"bcast_{algo}", lang), gid=f"t:{algo}")
        ax.axhline(n / b, color="0.3", ls=":", lw=1.4, label=label("bcast_bound", lang), gid="bound")
        ax.plot([k_star], [t_star], marker="o", ms=8, mfc="white", mec=PALETTE[3], mew=2, ls="none",
                label=label("bcast_opt", lang, k=k_star, t=fmt_time(t_star, 3)), gid="opt")
        log_axis(ax, "x", "plain", base=2)
        ax.yaxis.set_major_formatter(TICK_FORMATS["time"])
        ax.set_xlim(1, k_max)
        ax.set_ylim(0, 1.08 * max(chain.max(), t_broadcast("flat", p, n, a, b)))
        ax.set_xlabel(label("bcast_chunks", lang))
        ax.set_ylabel(label("bcast_time", lang))
        ax.set_title(label("bcast_title", lang, n=fmt_bytes(n), p=p, link=link.name))
        ax.legend(loc="upper right", bbox_to_anchor=(1.0, 0.86))
    return fig


