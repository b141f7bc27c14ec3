"""Explorer: hierarchical against ring all-reduce on a two-level cluster (P5 §6.3)."""
from __future__ import annotations

from ...collectives import all_reduce
from ...comm_sim import VirtualCluster
from ...hardware import LINKS
from ...topology import TwoLevel
from ...units import MB, fmt_bytes, fmt_ratio, fmt_time
from ..p5.figures import fig_hierarchical_speedup
from ..plots import book_style
from ..tables import Table, bilingual, bilingual_notes
from .base import Explorer, Result, choice, int_slider, link_choice, log_slider

__all__ = ["HierarchyExplorer", "MAX_NODES"]

MAX_NODES = 32
"""The figure's last node count (and the slider's end)."""

NAMES = {"en": {"single_ring": "single flat ring", "nccl_ring": "NCCL's ring", "hierarchical": "hierarchical"},
         "zh": {"single_ring": "单个扁平环", "nccl_ring": "NCCL 的环", "hierarchical": "分层"}}
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

    def _controls(self):
        return {
            "nodes": int_slider(self._text({"en": "nodes N", "zh": "节点数 N"}), 1, MAX_NODES, 8),
            "gpus": choice(self._text({"en": "GPUs per node G", "zh": "每节点 GPU 数 G"}),
                           {g: str(g) for g in (2, 4, 8, 16)}, 8),
            "nics": choice(self._text({"en": "NICs", "zh": "网卡"}),
                           {"gpu": self._text({"en": "one per GPU", "zh": "每块 GPU 一张"}),
                            "node": self._text({"en": "one per node", "zh": "每个节点一张"})}, "gpu"),
            "intra": link_choice(self._text({"en": "inside a node", "zh": "节点内"}), "NVLINK4"),
            "inter": link_choice(self._text({"en": "between nodes", "zh": "节点间"}), "IB_NDR"),
            "n": log_slider(self._text({"en": "message n (B)", "zh": "消息 n（B）"}), 1e3, 1e9, 1 * MB,
                            readout=".3s"),
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
        rows = [{"algorithm": a, "time": r.time, "rounds": r.rounds, "channels": channels[a],
                 "vs_hier": r.time / hier} for a, r in runs.items()]
        p, K = nodes * gpus, topo.nics_per_node
        best = min(r.time for r in runs.values())
        fastest = [a for a, r in runs.items() if r.time <= best * (1 + 1e-9)]
        if k > 1:
            rings = (f"the single ring sends each step's chunk through one NIC per node, NCCL's ring runs {k} "
                     f"channels (one per NIC), each on n/{k}",
                     f"单个扁平环每一步的数据块只经每个节点的一张网卡，NCCL 的环开 {k} 个 channel"
                     f"（每张网卡一个），各管 n/{k}")
        else:
            why = ("one node" if nodes == 1 else "one NIC per node", "只有一个节点" if nodes == 1 else "每节点只有一张网卡")
            rings = (f"with {why[0]} NCCL's ring has one channel too, so the two rings are the same",
                     f"{why[1]}，NCCL 的环也只有一个 channel，两种环完全相同")
        best_en = " = ".join(NAMES["en"][a] for a in fastest)
        best_zh = " = ".join(NAMES["zh"][a] for a in fastest)
        table = Table(
            key="explore-hierarchy",
            title=bilingual(f"all-reduce of {fmt_bytes(n)} on {nodes} node{'s' * (nodes > 1)} × {gpus} GPUs, "
                            f"{K} NIC{'s' * (K > 1)} per node ({fast.name} + {slow.name})",
                            f"{nodes} 个节点 × {gpus} 块 GPU、每节点 {K} 张网卡上 {fmt_bytes(n)} 的 all-reduce"
                            f"（{fast.name} + {slow.name}）"),
            columns=["algorithm", "time", "rounds", "channels", "vs_hier"],
            headers={"en": ["algorithm", "simulated", "rounds", "channels", "/ hierarchical"],
                     "zh": ["算法", "模拟时间", "步数", "channel 数", "/ 分层"]},
            rows=rows,
            formats={"time": lambda v: fmt_time(v, 4), "vs_hier": fmt_ratio},
            labels=NAMES,
            notes=bilingual_notes(
                (f"Both rings: 2(p−1) = {2 * (p - 1)} rounds over all {p} GPUs; {rings[0]}. Hierarchical: "
                 f"2(G−1) = {2 * (gpus - 1)} rounds on {fast.name}, then 2(N−1) = {2 * (nodes - 1)} on "
                 f"{slow.name} with n/G = {fmt_bytes(n / gpus)} per cross-node ring. Fastest here: {best_en}.",
                 f"两种环都是全部 {p} 块 GPU 走 2(p−1) = {2 * (p - 1)} 步；{rings[1]}。分层：先在 {fast.name} 上走 "
                 f"2(G−1) = {2 * (gpus - 1)} 步，再在 {slow.name} 上走 2(N−1) = {2 * (nodes - 1)} 步，"
                 f"每个跨节点环只传 n/G = {fmt_bytes(n / gpus)}。这里最快：{best_zh}。")),
            meta={"speedup": speedup["single_ring"], "speedup_nccl": speedup["nccl_ring"], "channels": k,
                  "times": {a: r.time for a, r in runs.items()}},
        )
        return Result(fig, table)
