"""Explorer: hierarchical against ring all-reduce on a two-level cluster (P5 §6.3)."""
from __future__ import annotations

from ...collectives import all_reduce
from ...comm_sim import VirtualCluster
from ...hardware import LINKS
from ...topology import TwoLevel
from ...units import MB, fmt_bytes
from ..p5.figures import fig_hierarchical_speedup
from ..plots import book_style
from ..tables import Table
from ..text import texts
from .base import Explorer, Result, choice, int_slider, link_choice, log_slider

__all__ = ["HierarchyExplorer", "MAX_NODES"]

T = texts("common")

MAX_NODES = 32
"""The figure's last node count (and the slider's end)."""

NAMES = {lang: {a: T.get(f"explorers.hierarchy.{a}", lang) for a in ("single_ring", "nccl_ring", "hierarchical")}
         for lang in ("en", "zh")}
"""The three all-reduces of the table, by language."""


class HierarchyExplorer(Explorer):
    """Three all-reduces on ``TwoLevel(nodes, gpus, intra, inter, nics_per_node, pxn=True)``,
    all simulated by :func:`commbook.collectives.all_reduce`: the single flat ring of all
    N·G GPUs (``channels=1``: one NIC per node carries the whole per-step chunk), the ring
    NCCL runs (the default channels: one per NIC, each over its share of the buffer) and
    the hierarchical all-reduce (ring reduce-scatter in the node, a ring per rail across
    nodes on n/G, ring all-gather in the node).

    The figure is :func:`commbook.book.p5.figures.fig_hierarchical_speedup` for this
    message size up to :data:`MAX_NODES` nodes (solid: over the single ring, dashed: over
    NCCL's ring), with ``nodes`` marked on both lines; the table gives the three times,
    their rounds, channels and their ratio to the hierarchy.

    Controls: ``nodes`` (1 to :data:`MAX_NODES`), ``gpus`` (GPUs per node: 2, 4, 8, 16),
    ``nics`` (``"gpu"``: one NIC per GPU, ``"node"``: one NIC per node), ``intra`` and
    ``inter`` (link presets inside and between nodes), ``n`` (bytes).
    """

    OFFLINE_GRID = {"nodes": [2, 32], "gpus": [4, 8], "intra": None, "inter": None, "n": [1e4, 1e8]}
    """The static page's grid (:mod:`.static`): three node counts, 4 or 8 GPUs, both NIC layouts, three sizes."""

    def _controls(self):
        return {
            "nodes": int_slider(T.get("explorers.hierarchy.nodes", self.lang), 1, MAX_NODES, 8),
            "gpus": choice(T.get("explorers.hierarchy.gpus", self.lang), {g: str(g) for g in (2, 4, 8, 16)}, 8),
            "nics": choice(T.get("explorers.hierarchy.nics", self.lang),
                           {"gpu": T.get("explorers.hierarchy.nic_gpu", self.lang),
                            "node": T.get("explorers.hierarchy.nic_node", self.lang)}, "gpu"),
            "intra": link_choice(T.get("explorers.hierarchy.intra", self.lang), "NVLINK4"),
            "inter": link_choice(T.get("explorers.hierarchy.inter", self.lang), "IB_NDR"),
            "n": log_slider(T.get("explorers.message_n", self.lang), 1e3, 1e9, 1 * MB, readout=".3s"),
        }

    def compute(self, nodes: int, gpus: int, nics: str, intra: str, inter: str, n: float) -> Result:
        fast, slow = LINKS[intra], LINKS[inter]
        per_node = {"gpu": None, "node": 1}[nics]
        topo = TwoLevel(nodes, gpus, fast, slow, nics_per_node=per_node, pxn=True)
        cluster = VirtualCluster(topo)
        runs = {"single_ring": all_reduce(cluster, nbytes=n, channels=1),
                "nccl_ring": all_reduce(cluster, nbytes=n),
                "hierarchical": all_reduce(cluster, nbytes=n, algorithm="hierarchical")}
        hier = runs["hierarchical"].time
        speedup = {a: runs[a].time / hier for a in ("single_ring", "nccl_ring")}
        k = topo.ring_channels(range(topo.p))
        fig = fig_hierarchical_speedup(lang=self.lang, gpus=gpus, max_nodes=MAX_NODES, sizes=(n,),
                                       intra=fast, inter=slow, nics_per_node=per_node)
        with book_style(self.lang):
            for a, gid in (("single_ring", "at_N"), ("nccl_ring", "at_N_nccl")):
                fig.axes[0].plot([nodes], [speedup[a]], marker="D", ms=8, color="0.1", ls="none", zorder=5,
                                 gid=gid, mfc="0.1" if a == "single_ring" else "white")
        channels = {"single_ring": 1, "nccl_ring": k, "hierarchical": None}
        rows = [{"algorithm": a, "time_s": r.time, "rounds": r.rounds, "channels": channels[a],
                 "vs_hier_x": r.time / hier} for a, r in runs.items()]
        p, K = nodes * gpus, topo.nics_per_node
        best = min(r.time for r in runs.values())
        fastest = [a for a, r in runs.items() if r.time <= best * (1 + 1e-9)]
        if k > 1:
            rings = T("explorers.hierarchy.rings_many", k=k)
        else:
            rings = T("explorers.hierarchy.rings_one_node" if nodes == 1 else "explorers.hierarchy.rings_one_nic")
        best = {lang: " = ".join(NAMES[lang][a] for a in fastest) for lang in ("en", "zh")}
        table = Table(
            key="explore-hierarchy",
            title=T("explorers.hierarchy.title", n=fmt_bytes(n), nodes=nodes, s_nodes="s" * (nodes > 1), gpus=gpus,
                    k=K, s_nics="s" * (K > 1), fast=fast.name, slow=slow.name),
            columns=["algorithm", "time_s", "rounds", "channels", "vs_hier_x"],
            headers=T.pairs(*(f"explorers.hierarchy.{c}" for c in ("algorithm", "time", "rounds", "channels", "vs_hier"))),
            rows=rows,
            labels=NAMES,
            notes={lang: [T.get("explorers.hierarchy.note", lang, steps=2 * (p - 1), p=p, rings=rings[lang],
                                g_steps=2 * (gpus - 1), fast=fast.name, n_steps=2 * (nodes - 1), slow=slow.name,
                                chunk=fmt_bytes(n / gpus), best=best[lang])] for lang in ("en", "zh")},
            meta={"speedup": speedup["single_ring"], "speedup_nccl": speedup["nccl_ring"], "channels": k,
                  "times": {a: r.time for a, r in runs.items()}},
        )
        return Result(fig, table)
