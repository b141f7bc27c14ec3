"""Explorer: a ring all-reduce mapped onto a 2D torus (P5 §6.1), with the bytes each
directed link carries."""
from __future__ import annotations

from ...collectives import all_reduce, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import ICI_V5E
from ...topology import Torus, ring_order
from ...units import MB, fmt_bytes, fmt_time
from ..p5.figures import fig_ring_mapping
from ..labels import LABELS
from ..plots import label
from ..tables import LANGS, Table
from ..text import texts
from .base import Explorer, Result, choice, int_slider, log_slider

__all__ = ["RingMappingExplorer", "LINK"]

T = texts("common")

LINK = ICI_V5E
"""The torus links: TPU v5e ICI, as in §6.1."""

MAPPING_WORDS = {lang: {"snake": LABELS[lang]["map_snake"], "row_major": LABELS[lang]["map_row_major"],
                        "random": T.get("explorers.mapping.random", lang)} for lang in LANGS}
"""Names of the mappings in the drop-down and the table (the figure's, without a seed)."""


class RingMappingExplorer(Explorer):
    """One ring all-reduce of ``n`` bytes on a ``rows`` × ``cols`` torus of
    :data:`LINK` links, the ranks placed on the chips by
    :func:`commbook.topology.ring_order` (``mapping``, and ``seed`` for a random one).

    The figure is :func:`commbook.book.p5.figures.fig_ring_mapping` for this one mapping
    (the ring drawn over the torus, every directed link coloured by the bytes it carried).
    The table sets the mapping beside the snake (the ideal on an even torus), both
    simulated by :func:`commbook.collectives.all_reduce`: time over the ring formula
    :func:`commbook.collectives.t_formula`, the longest ring edge in hops
    (:meth:`Torus.hops <commbook.topology.Torus.hops>`), the busiest link and how many
    links carry bytes (``RunResult.link_bytes``).

    Controls: ``rows``, ``cols`` (2 to 8), ``mapping`` ("snake", "row_major", "random"),
    ``seed`` (0 to 99, used by "random"), ``n`` (bytes).
    """

    OFFLINE_GRID = {"rows": [2, 8], "cols": [2, 8], "seed": None, "n": None}
    """The static page's grid (:mod:`.static`): 2, 4 or 8 rows and columns, every mapping."""

    def _controls(self):
        words = MAPPING_WORDS[self.lang]
        return {
            "rows": int_slider(T.get("explorers.mapping.rows", self.lang), 2, 8, 4),
            "cols": int_slider(T.get("explorers.mapping.cols", self.lang), 2, 8, 4),
            "mapping": choice(T.get("explorers.mapping.mapping", self.lang), words, "random"),
            "seed": int_slider(T.get("explorers.mapping.seed", self.lang), 0, 99, 0),
            "n": log_slider(T.get("explorers.message_n", self.lang), 1e3, 1e9, 64 * MB, readout=".3s"),
        }

    def update(self, **values):
        """As :meth:`Explorer.update`; the seed control is greyed out unless the mapping
        is random."""
        result = super().update(**values)
        self.controls["seed"].disabled = self.values["mapping"] != "random"
        return result

    def _run(self, topo: Torus, n: float, kind: str, seed: int | None) -> dict:
        order = ring_order(topo.dims, kind, seed)
        res = all_reduce(VirtualCluster(topo), nbytes=n, ranks=order)
        hops = [topo.hops(int(order[i]), int(order[(i + 1) % topo.p])) for i in range(topo.p)]
        return {"mapping": kind, "time_s": res.time, "max_hops": max(hops),
                "max_link_bytes": float(res.link_bytes.max()), "used": int((res.link_bytes > 0).sum()),
                "link_bytes": dict(zip(res.link_names, res.link_bytes.tolist())), "order": order.tolist()}

    def compute(self, rows: int, cols: int, mapping: str, seed: int, n: float) -> Result:
        dims = (rows, cols)
        topo = Torus(dims, LINK)
        seed_used = seed if mapping == "random" else None
        runs = [self._run(topo, n, mapping, seed_used)]
        if mapping != "snake":
            runs.append(self._run(topo, n, "snake", None))
        ideal = t_formula("ring", topo.p, n, LINK.alpha, LINK.beta)
        for r in runs:
            r["vs_ideal_x"] = r["time_s"] / ideal
            r["links"] = f"{r['used']} / {len(topo.resource_names)}"
        fig = fig_ring_mapping(lang=self.lang, n=n, link=LINK, dims=dims, panels=[(mapping, seed_used)])
        shown = label(f"map_{mapping}", self.lang, seed=seed)
        k = runs[0]["max_link_bytes"] / (2 * (topo.p - 1) * n / topo.p)     # ring edges on the busiest link
        table = Table(
            key="explore-mapping",
            title={lang: T.get("explorers.mapping.title", lang, n=fmt_bytes(n), rows=rows, cols=cols, link=LINK.name,
                               shown=shown) for lang in LANGS},
            columns=["mapping", "time_s", "vs_ideal_x", "max_hops", "max_link_bytes", "links"],
            headers=T.pairs(*(f"explorers.mapping.{c}" for c in ("mapping", "time", "vs_ideal", "max_hops", "max_link",
                                                                 "links"))),
            rows=runs,
            formats={"time_s": 5, "vs_ideal_x": 4},
            labels=MAPPING_WORDS,
            notes=T.pairs("explorers.mapping.note", ideal=fmt_time(ideal, 5), chunk=fmt_bytes(n / topo.p), k=f"{k:g}"),
            meta={"ideal": ideal, "runs": runs, "dims": dims},
        )
        return Result(fig, table)
