"""Explorer: the all-reduce race of P5 §5.3 at any p, n, α and β: who wins, and where
the winner changes."""
from __future__ import annotations

import numpy as np

from ...collectives import crossover, t_formula
from ...hardware import NVLINK4, Link
from ...units import GB, fmt_bytes, fmt_rate, fmt_time, us
from ..p5.figures_algorithms import ALLREDUCE_LINES, fig_allreduce_vs_size
from ..plots import book_style
from ..tables import Table, algorithm_labels
from ..text import texts
from .base import Explorer, Result, checkbox, log_slider, steps

__all__ = ["AllReduceRaceExplorer", "SIZES"]

T = texts("common")

SIZES = np.logspace(3, 9, 121)
"""Message sizes of the figure and of the search for winner changes: 1 KB to 1 GB."""


class AllReduceRaceExplorer(Explorer):
    """All-reduce time of every algorithm of
    :data:`commbook.book.p5.figures_algorithms.ALLREDUCE_LINES` (ring, recursive doubling,
    Rabenseifner, binomial tree, double binary tree at its best chunk count, naive,
    in-network) from the registry's closed forms :func:`commbook.collectives.t_formula`,
    drawn by :func:`~commbook.book.p5.figures_algorithms.fig_allreduce_vs_size` with the
    size ``n`` marked.

    The table ranks the algorithms at ``n``; its part lists where the winner changes
    between 1 KB and 1 GB, each size found by :func:`commbook.collectives.crossover`
    between the two algorithms that win on either side.  In-network reduction needs a
    switch that reduces, so it races only when ``innet`` is ticked.

    Controls: ``p`` (a power of two, 4 to 1024), ``n`` (bytes), ``alpha_us`` (µs),
    ``beta_gbps`` (GB/s), ``innet`` (bool).
    """

    OFFLINE_GRID = {"p": [4, 16, 64, 256, 1024], "n": [1e3, 1e9], "alpha_us": None, "beta_gbps": None}
    """The static page's grid (:mod:`.static`): six p, three sizes, NVLink 4's α and β."""

    def _controls(self):
        return {
            "p": steps(T.get("explorers.race.p", self.lang), [2 ** k for k in range(2, 11)], 8),
            "n": log_slider(T.get("explorers.message_n", self.lang), 1e3, 1e9, 1e6, readout=".3s"),
            "alpha_us": log_slider("α (µs)", 0.1, 100, NVLINK4.alpha / us),
            "beta_gbps": log_slider("β (GB/s)", 1, 2000, NVLINK4.beta / GB),
            "innet": checkbox(T.get("explorers.race.innet", self.lang), False),
        }

    def compute(self, p: int, n: float, alpha_us: float, beta_gbps: float, innet: bool) -> Result:
        alpha, beta = alpha_us * us, beta_gbps * GB
        a, b = fmt_time(alpha, 3), fmt_rate(beta, 3)
        link = Link(T.get("explorers.alpha_beta", self.lang, a=a, b=b), alpha, beta,
                    "set in the explorer")
        racers = [a for a in ALLREDUCE_LINES if innet or a != "innet"]
        times = {a: t_formula(a, p, n, alpha, beta) for a in racers}
        winner = min(racers, key=times.get)
        grid = np.array([[t_formula(a, p, float(x), alpha, beta) for x in SIZES] for a in racers])
        best = grid.argmin(axis=0)
        changes = []
        for i in np.flatnonzero(best[1:] != best[:-1]):
            a, b = racers[best[i]], racers[best[i + 1]]
            x = crossover(a, b, p, alpha, beta)
            changes.append({"from": a, "to": b, "n_bytes": x, "in_nhalf": x / (alpha * beta)})

        fig = fig_allreduce_vs_size(lang=self.lang, p=p, link=link, sizes=SIZES)
        ax = fig.axes[0]
        with book_style(self.lang):
            ax.axvline(n, color="0.3", lw=0.9, ls="--", gid="n")
            ax.plot([n], [times[winner]], marker="*", ms=14, color="0.1", ls="none", zorder=5, gid="winner")
            for c in changes:
                ax.plot([c["n_bytes"]], [t_formula(c["to"], p, c["n_bytes"], alpha, beta)], marker="|", ms=14, mew=2,
                        color="0.1", ls="none", zorder=5, gid=f"change:{c['from']}:{c['to']}")

        ranked = sorted(racers, key=times.get)
        rows = [{"place": i + 1, "algorithm": a, "time_s": times[a], "vs_winner_x": times[a] / times[winner]}
                for i, a in enumerate(ranked)]
        names = algorithm_labels("all_reduce")
        gap = " " if names["zh"][winner][:1].isascii() else ""   # a space between Chinese and Latin
        out = "explorers.race.innet_in" if innet else "explorers.race.innet_out"
        where = Table(
            key="explore-race-changes",
            title=T("explorers.race.where_title"),
            columns=["from", "to", "n_bytes", "in_nhalf"],
            headers=T.pairs(*(f"explorers.race.{c}" for c in ("from", "to", "at_n", "in_nhalf"))),
            rows=changes,
            formats={"in_nhalf": lambda v: f"{v:.3g}"},
            labels=names,
            notes=T.pairs("explorers.race.none") if not changes else {},
        )
        table = Table(
            key="explore-race",
            title=T("explorers.race.title", n=fmt_bytes(n), p=p, link=link.name),
            columns=["place", "algorithm", "time_s", "vs_winner_x"],
            headers=T.pairs(*(f"explorers.race.{c}" for c in ("place", "algorithm", "time", "vs_winner"))),
            rows=rows,
            labels=names,
            notes={lang: [T.get("explorers.race.winner", lang, n=fmt_bytes(n),
                                name=(gap if lang == "zh" else "") + names[lang][winner]), T.get(out, lang)]
                   for lang in ("en", "zh")},
            meta={"times": times, "winner": winner, "racers": racers, "changes": changes},
            parts=[where],
        )
        return Result(fig, table)
