"""Explorer: when compression pays (chapter 1, §1.6, Figure 12 (b)): the speed-up of a ring
all-reduce from compressing its payload, and what it does to the time to train."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from ...collectives import t_formula
from ...compression import break_even_comm_time, compressed_allreduce_time, time_to_train
from ...hardware import LINKS
from ...units import GB, MB, fmt_bytes, fmt_count, fmt_pct, fmt_ratio, fmt_time
from ..ch1.compression_numbers import DECISION
from ..plots import PALETTE, book_style, log_axis
from ..tables import Table
from ..text import texts
from .base import Explorer, Result, link_choice, log_slider, steps

__all__ = ["CompressionPayoffExplorer", "SIZES", "RATIOS"]

T = texts("common")

SIZES = np.logspace(3, 10, 71)
"""Gradient sizes of the curve: 1 KB to 10 GB."""
RATIOS = (2, 4, 8, 16, 32)
"""Compression ratios offered: FP32 to FP16, to INT8, ... to 1 bit (32×)."""


class CompressionPayoffExplorer(Explorer):
    """The ring all-reduce's speed-up from compressing its payload ``ratio``-fold,
    :func:`commbook.collectives.t_formula` over
    :func:`commbook.compression.compressed_allreduce_time`, against the gradient size on
    ``p`` GPUs and a preset link, with the size ``n`` marked and the bandwidth-only bound
    r drawn.  The table takes the chapter's decision example (:data:`DECISION
    <commbook.book.ch1.compression_numbers.DECISION>`: compute per step, steps, the share
    of extra steps compression costs) to the time per step and the time to train
    (:func:`commbook.compression.time_to_train`), and gives the break-even all-reduce time
    (:func:`commbook.compression.break_even_comm_time`).

    Controls: ``p`` (a power of two, 2 to 1024), ``ratio``, ``link`` (a preset of
    :data:`commbook.hardware.LINKS`), ``n`` (bytes).
    """

    OFFLINE_GRID = {"p": [8, 64, 512], "ratio": [2, 4, 32], "link": ["IB_NDR_CHAPTER", "ROCE_100G", "NVLINK4"],
                    "n": [1 * MB, 30 * MB]}
    """The static page's grid (:mod:`.static`): three p, three ratios, three links, three sizes (1 MB, 30 MB and 1 GB)."""

    def _controls(self):
        return {
            "p": steps(T.get("explorers.payoff.p", self.lang), [2 ** k for k in range(1, 11)], 64),
            "ratio": steps(T.get("explorers.payoff.ratio", self.lang), list(RATIOS), DECISION["ratio"]),
            "link": link_choice(T.get("explorers.payoff.link", self.lang), "IB_NDR_CHAPTER"),
            "n": log_slider(T.get("explorers.message_n", self.lang), 1e3, 1e10, 1 * GB, readout=".3s"),
        }

    def compute(self, p: int, ratio: int, link: str, n: float) -> Result:
        lk = LINKS[link]
        a, b = lk.alpha, lk.beta
        speedup = [t_formula("ring", p, x, a, b) / compressed_allreduce_time(p, x, a, b, ratio) for x in SIZES]
        plain, packed = t_formula("ring", p, n, a, b), compressed_allreduce_time(p, n, a, b, ratio)
        with book_style(self.lang) as lang:
            fig = Figure()
            ax = fig.add_subplot()
            ax.plot(SIZES, speedup, color=PALETTE[1], lw=1.8, gid="speedup",
                    label=T.get("explorers.payoff.curve", lang, r=fmt_ratio(ratio)))
            ax.axhline(ratio, color=PALETTE[1], lw=0.8, ls=":", alpha=0.7, gid="bound",
                       label=T.get("explorers.payoff.bound", lang, r=fmt_ratio(ratio)))
            ax.axvline(n, color="0.3", lw=0.9, ls="--", gid="n")
            ax.plot([n], [plain / packed], marker="D", ms=7, ls="none", color="0.1", gid="at_n")
            log_axis(ax, "x", "bytes")
            log_axis(ax, "y", "plain", subs=(1.0, 2.0, 5.0))
            ax.set_ylim(0.9, 1.15 * max(RATIOS))
            ax.set_xlabel(T.get("explorers.payoff.x_axis", lang))
            ax.set_ylabel(T.get("explorers.payoff.y_axis", lang))
            ax.legend(loc="upper left")
        c, x, n_steps = DECISION["t_compute"], DECISION["extra_steps"], DECISION["steps"]
        rows = [{"case": "plain", "allreduce_s": plain, "step_s": c + plain, "train_s": time_to_train(n_steps, c, plain)},
                {"case": "compressed", "allreduce_s": packed, "step_s": c + packed,
                 "train_s": time_to_train(n_steps, c, packed, extra_steps=x)}]
        cases = {lang: {"plain": T.get("explorers.payoff.plain", lang),
                        "compressed": T.get("explorers.payoff.compressed", lang, r=fmt_ratio(ratio), x=fmt_pct(x))}
                 for lang in ("en", "zh")}
        even = break_even_comm_time(c, ratio, x)
        table = Table(
            key="explore-payoff",
            title=T("explorers.payoff.title", n=fmt_bytes(n), r=fmt_ratio(ratio), p=p, link=lk.name),
            columns=["case", "allreduce_s", "step_s", "train_s"],
            headers=T.pairs(*(f"explorers.payoff.{k}" for k in ("case", "allreduce", "step", "train"))),
            rows=rows,
            labels=cases,
            notes=T.pairs("explorers.payoff.note", c=fmt_time(c, 3), steps=fmt_count(n_steps), t=fmt_time(even, 3)),
            meta={"speedup": plain / packed, "break_even": even},
        )
        return Result(fig, table)
