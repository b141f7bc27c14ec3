"""Explorer: hierarchical against flat ring all-reduce on a two-level cluster (P5 §6.3)."""
from __future__ import annotations

from ...collectives import all_reduce
from ...comm_sim import VirtualCluster
from ...hardware import LINKS
from ...topology import TwoLevel
from ...units import MB, fmt_bytes, fmt_time
from ..p5.figures import fig_hierarchical_speedup
from ..plots import book_style
from ..tables import Table, algorithm_labels, bilingual, bilingual_notes, fmt_ratio
from .base import Explorer, Result, choice, int_slider, link_choice, log_slider

__all__ = ["HierarchyExplorer", "MAX_NODES"]

MAX_NODES = 32
"""The figure's last node count (and the slider's end)."""


class HierarchyExplorer(Explorer):
    """A flat ring of all N·G GPUs against the hierarchical all-reduce (ring
    reduce-scatter in the node, a ring per rail across nodes on n/G, ring all-gather in
    the node) on ``TwoLevel(nodes, gpus, intra, inter)``, both simulated by
    :func:`commbook.collectives.all_reduce` (``"ring"`` and ``"hierarchical"``).

    The figure is :func:`commbook.book.p5.figures.fig_hierarchical_speedup` for this
    message size up to :data:`MAX_NODES` nodes, with ``nodes`` marked; the table gives
    both times, their rounds and the speedup.

    Controls: ``nodes`` (1 to :data:`MAX_NODES`), ``gpus`` (GPUs per node: 2, 4, 8, 16),
    ``intra`` and ``inter`` (link presets inside and between nodes), ``n`` (bytes).
    """

    def _controls(self):
        return {
            "nodes": int_slider(self._text({"en": "nodes N", "zh": "节点数 N"}), 1, MAX_NODES, 8),
            "gpus": choice(self._text({"en": "GPUs per node G", "zh": "每节点 GPU 数 G"}),
                           {g: str(g) for g in (2, 4, 8, 16)}, 8),
            "intra": link_choice(self._text({"en": "inside a node", "zh": "节点内"}), "NVLINK4"),
            "inter": link_choice(self._text({"en": "between nodes", "zh": "节点间"}), "IB_NDR"),
            "n": log_slider(self._text({"en": "message n (B)", "zh": "消息 n（B）"}), 1e3, 1e9, 1 * MB,
                            readout=".3s"),
        }

    def compute(self, nodes: int, gpus: int, intra: str, inter: str, n: float) -> Result:
        fast, slow = LINKS[intra], LINKS[inter]
        cluster = VirtualCluster(TwoLevel(nodes, gpus, fast, slow))
        runs = {"ring": all_reduce(cluster, nbytes=n, channels=1),
                "hierarchical": all_reduce(cluster, nbytes=n, algorithm="hierarchical")}
        speedup = runs["ring"].time / runs["hierarchical"].time
        fig = fig_hierarchical_speedup(lang=self.lang, gpus=gpus, max_nodes=MAX_NODES, sizes=(n,),
                                       intra=fast, inter=slow)
        with book_style(self.lang):
            fig.axes[0].plot([nodes], [speedup], marker="D", ms=8, color="0.1", ls="none", zorder=5, gid="at_N")
        rows = [{"algorithm": a, "time": r.time, "rounds": r.rounds,
                 "vs_hier": r.time / runs["hierarchical"].time} for a, r in runs.items()]
        names = algorithm_labels("all_reduce")
        names["en"]["ring"], names["zh"]["ring"] = "flat ring", "扁平 ring"
        p = nodes * gpus
        table = Table(
            key="explore-hierarchy",
            title=bilingual(f"all-reduce of {fmt_bytes(n)} on {nodes} node{'s' * (nodes > 1)} × {gpus} GPUs ({fast.name} + {slow.name})",
                            f"{nodes} 个节点 × {gpus} 块 GPU 上 {fmt_bytes(n)} 的 all-reduce"
                            f"（{fast.name} + {slow.name}）"),
            columns=["algorithm", "time", "rounds", "vs_hier"],
            headers={"en": ["algorithm", "simulated", "rounds", "/ hierarchical"],
                     "zh": ["算法", "模拟时间", "步数", "/ 分层"]},
            rows=rows,
            formats={"time": lambda v: fmt_time(v, 4), "vs_hier": fmt_ratio(2)},
            labels=names,
            notes=bilingual_notes(
                (f"Flat: 2(p−1) = {2 * (p - 1)} rounds over all {p} GPUs. Hierarchical: 2(G−1) = {2 * (gpus - 1)} "
                 f"rounds on {fast.name}, then 2(N−1) = {2 * (nodes - 1)} on {slow.name} with n/G = "
                 f"{fmt_bytes(n / gpus)} per rail, {gpus} rails at once. Speedup {speedup:.2f}×.",
                 f"扁平：全部 {p} 块 GPU 走 2(p−1) = {2 * (p - 1)} 步。分层：先在 {fast.name} 上走 "
                 f"2(G−1) = {2 * (gpus - 1)} 步，再在 {slow.name} 上走 2(N−1) = {2 * (nodes - 1)} 步，"
                 f"每条轨道只传 n/G = {fmt_bytes(n / gpus)}，{gpus} 条轨道同时进行。加速 {speedup:.2f} 倍。")),
            meta={"speedup": speedup, "times": {a: r.time for a, r in runs.items()}},
        )
        return Result(fig, table)
