"""Explorer: chapter 1's Figure 7 (§1.4) at any p and link: ring against the binomial tree,
the pipelined double binary tree and the chapter's envelope, and where the ring takes over."""
from __future__ import annotations

from ...collectives import t_formula
from ...hardware import LINKS
from ...units import fmt_number
from ..ch1.allreduce_choice import FIG7, figure7_data
from ..ch1.allreduce_figures import fig_crossover
from ..tables import Table
from ..text import texts
from .base import Explorer, Result, link_choice, steps

__all__ = ["CrossoverExplorer", "POINTS"]

T = texts("common")

POINTS = 4
"""Sizes per decade of the explorer's curves (Figure 7 itself draws 8): the pipelined
double tree's best chunk count is searched at every size, so each state stays quick."""

CROSSINGS = ("tree", "double_tree", "envelope", "approx")


class CrossoverExplorer(Explorer):
    """Figure 7 of chapter 1, :func:`commbook.book.ch1.allreduce_figures.fig_crossover`, for
    ``p`` GPUs on a preset link: the curves and crossovers of
    :func:`commbook.book.ch1.allreduce_choice.figure7_data` (the registry's closed forms and
    :func:`commbook.collectives.crossover`).  The table gives each crossover, the ring's time
    there (:func:`commbook.collectives.t_formula`) and the crossover in units of αβ.

    Controls: ``p`` (a power of two, 4 to 256), ``link`` (a preset of
    :data:`commbook.hardware.LINKS`; the chapter's figure: InfiniBand HDR).
    """

    OFFLINE_GRID = {"p": [4, 16, 64, 256], "link": ["IB_HDR", "IB_NDR", "NVLINK4", "ROCE_100G"]}
    """The static page's grid (:mod:`.static`): four p, four links."""

    def _controls(self):
        return {
            "p": steps(T.get("explorers.crossover.p", self.lang), [2 ** k for k in range(2, 9)], FIG7["p"]),
            "link": link_choice(T.get("explorers.crossover.link", self.lang), "IB_HDR"),
        }

    def compute(self, p: int, link: str) -> Result:
        lk = LINKS[link]
        d = figure7_data(p=p, link=lk, points=POINTS)
        fig = fig_crossover(lang=self.lang, data=d)
        at = {"tree": d.x_tree_bytes, "double_tree": d.x_dtree_bytes, "envelope": d.x_env_bytes,
              "approx": d.approx_bytes}
        rows = [{"what": k, "n_bytes": at[k], "ring_s": t_formula("ring", p, at[k], lk.alpha, lk.beta),
                 "in_nhalf": at[k] / (lk.alpha * lk.beta)} for k in CROSSINGS]
        names = {lang: {k: T.get(f"explorers.crossover.{k}", lang) for k in CROSSINGS} for lang in ("en", "zh")}
        table = Table(
            key="explore-crossover",
            title=T("explorers.crossover.title", p=p, link=lk.name),
            columns=["what", "n_bytes", "ring_s", "in_nhalf"],
            headers=T.pairs(*(f"explorers.crossover.{c}" for c in ("what", "at_n", "ring_time", "in_nhalf"))),
            rows=rows,
            formats={"in_nhalf": lambda v: fmt_number(v, 3)},
            labels=names,
            notes=T.pairs("explorers.crossover.note"),
            meta={"p": p, "alpha": lk.alpha, "beta": lk.beta, "crossovers": at},
        )
        return Result(fig, table)
