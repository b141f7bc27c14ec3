"""Chapter "Collective communication", purpose page and §1.1: the tables.

* :func:`connections_table`: N(N−1) logical pairs against the N links and 2(N−1)/N bytes
  per worker of a ring all-reduce (purpose page).
* :func:`transport_manifest`: parallelism → where the gradient goes → primitive →
  constraint (§1.1.3).
"""
from __future__ import annotations

from typing import Sequence

from ... import physics
from ...checks import check_p
from ..tables import Table, bilingual, bilingual_notes
from .parallelism_numbers import logical_connections

__all__ = ["PURPOSE_SIZES", "connections_table", "transport_manifest", "ENERGY_SCOPES", "energy_table"]

# ============================================================================ purpose page
PURPOSE_SIZES = (8, 64, 1_000, 10_000)
"""Cluster sizes of the purpose page's table (one node, the 64-GPU box, Definition 1.1's
1,000 and the opening 10,000)."""


def connections_table(sizes: Sequence[int] = PURPOSE_SIZES) -> Table:
    """For each number of workers N: the N(N−1) ordered pairs of the most general
    exchange, the N links a ring uses, and the bytes each worker sends in a ring
    all-reduce, as a multiple of its buffer (2(N−1)/N).  The note compares the largest
    and smallest N."""
    sizes = [check_p(n, "N") for n in sizes]
    rows = [{"n": n, "pairs": logical_connections(n), "ring_links": n,
             "ring_factor": physics.ring_traffic_factor(n)} for n in sizes]
    lo, hi = rows[0], rows[-1]
    grow_n = hi["n"] / lo["n"]
    grow_pairs = hi["pairs"] / lo["pairs"]
    grow_ring = hi["ring_factor"] / lo["ring_factor"]
    return Table(
        key="ch1-connections",
        title=bilingual("Logical connections against what a ring all-reduce moves",
                        "逻辑连接数与环形 all-reduce 的搬运量"),
        columns=["n", "pairs", "ring_links", "ring_factor"],
        headers={"en": ["Workers N", "Ordered pairs N(N−1)", "Links a ring uses", "Sent per worker (× buffer)"],
                 "zh": ["工作进程数 N", "有序对数 N(N−1)", "环用到的链路数", "每个进程发出量（缓冲区的倍数）"]},
        rows=rows,
        formats={"n": lambda v: f"{v:,}", "pairs": lambda v: f"{v:,}", "ring_links": lambda v: f"{v:,}",
                 "ring_factor": lambda v: f"{v:.4f}"},
        notes=bilingual_notes(
            (f"From N = {lo['n']:,} to N = {hi['n']:,} ({grow_n:,.0f}× the workers) the pairs grow "
             f"{grow_pairs:,.0f}×, while what a ring asks of each worker grows only {grow_ring:.3f}×.",
             f"从 N = {lo['n']:,} 到 N = {hi['n']:,}（工作进程多了 {grow_n:,.0f} 倍），有序对多了 "
             f"{grow_pairs:,.0f} 倍，而环形算法要求每个进程发出的量只多了 {grow_ring:.3f} 倍。"),
        ),
        meta={"grow_n": grow_n, "grow_pairs": grow_pairs, "grow_ring": grow_ring},
    )


# ============================================================================ the manifest
_MANIFEST_ROWS = [
    # (strategy, destination, primitive, constraint) in English; Chinese via labels
    ("Data parallel", "meet every replica to form the global mean", "all-reduce",
     "bandwidth (large payload)"),
    ("FSDP / ZeRO", "find the shards and rebuild the whole", "all-gather + reduce-scatter",
     "bandwidth (many collectives per step)"),
    ("Tensor parallel", "a quick exchange inside the node", "all-reduce",
     "latency (small, frequent messages)"),
    ("Pipeline parallel", "hand over to the next stage", "point-to-point (send/recv)",
     "latency (each stage waits for the previous one)"),
    ("Expert parallel (MoE)", "routed to the GPU that holds its expert", "all-to-all",
     "start-up cost, injection or bisection bandwidth, or load skew"),
]
_MANIFEST_ZH = {
    "Data parallel": "数据并行",
    "meet every replica to form the global mean": "与所有副本汇合，求出全局平均",
    "bandwidth (large payload)": "带宽（数据量大）",
    "FSDP / ZeRO": "FSDP / ZeRO",
    "find the shards and rebuild the whole": "找齐分片，拼回完整张量",
    "all-gather + reduce-scatter": "all-gather + reduce-scatter",
    "bandwidth (many collectives per step)": "带宽（每步集合操作多、频率高）",
    "Tensor parallel": "张量并行",
    "a quick exchange inside the node": "在节点内快速交换",
    "latency (small, frequent messages)": "延迟（消息小而频繁）",
    "Pipeline parallel": "流水线并行",
    "hand over to the next stage": "交给下一个流水级",
    "point-to-point (send/recv)": "点对点（send/recv）",
    "latency (each stage waits for the previous one)": "延迟（每一级都要等上一级）",
    "Expert parallel (MoE)": "专家并行（MoE）",
    "routed to the GPU that holds its expert": "按路由发往持有对应专家的 GPU",
    "all-to-all": "all-to-all",
    "all-reduce": "all-reduce",
    "start-up cost, injection or bisection bandwidth, or load skew": "启动开销、注入带宽或对分带宽，或负载倾斜",
}


def transport_manifest() -> Table:
    """The transport manifest: for each parallelism strategy, where its gradients (or
    activations, or tokens) must go, the primitive that takes them there, and the limit
    that usually binds.  The note counts the strategies that use a collective."""
    rows = [dict(zip(("strategy", "destination", "primitive", "constraint"), r)) for r in _MANIFEST_ROWS]
    p2p = [r["strategy"] for r in rows if r["primitive"].startswith("point-to-point")]
    coll = len(rows) - len(p2p)
    zh_p2p = "、".join(_MANIFEST_ZH[s] for s in p2p)
    return Table(
        key="ch1-manifest",
        title=bilingual("The transport manifest: from parallelism to primitive",
                        "传输清单：从并行方式到通信原语"),
        columns=["strategy", "destination", "primitive", "constraint"],
        headers={"en": ["Parallelism", "Where the data must go", "Main primitive", "Main constraint"],
                 "zh": ["并行方式", "数据要去哪里", "主要原语", "主要约束"]},
        rows=rows,
        notes=bilingual_notes(
            (f"{coll} of the {len(rows)} strategies synchronize through a collective; "
             f"{', '.join(p2p)} only passes messages between neighbouring stages.",
             f"{len(rows)} 种方式中有 {coll} 种靠集合操作同步；{zh_p2p}只在相邻的流水级之间传递消息。"),
        ),
        labels={"en": {}, "zh": dict(_MANIFEST_ZH)},
        meta={"point_to_point": p2p, "collective_rows": coll},
    )


ENERGY_SCOPES = {
    "SRAM": ("on-chip cache read (Horowitz 2014)", "片上缓存读取（Horowitz，2014）"),
    "HBM": ("HBM2 to DDR-class DRAM read", "从 HBM2 到 DDR 级 DRAM 的读取"),
    "NVLink": ("NVLink-C2C die to die on one module; high end PCIe Gen5",
               "同一模块上两颗芯片之间的 NVLink-C2C；上限为 PCIe Gen5"),
    "IB": ("optical modules only: one module to both ends of a link",
           "只算光模块：从一个模块到链路两端各一个"),
}
"""What each published range of Figure 1 counts (the figure's values also count NIC,
SerDes and switch for NVLink and InfiniBand)."""


def energy_table(order: Sequence[str] = ("SRAM", "HBM", "NVLink", "IB")) -> Table:
    """Figure 1's levels: the figure's value, the published range and what that range counts
    (:data:`commbook.physics.ENERGY`)."""
    rows = [{"level": physics.ENERGY[k].name, "figure": physics.ENERGY[k].figure_pj,
             "low": physics.ENERGY[k].low_pj, "high": physics.ENERGY[k].high_pj,
             "scope": ENERGY_SCOPES[k][0], "key": k} for k in order]
    return Table(
        key="ch1-energy-ranges",
        title=bilingual("Energy per bit: the figure's values and the published ranges (pJ/bit)",
                        "每比特能耗：图中的值与公开资料的范围（pJ/bit）"),
        columns=["level", "figure", "low", "high", "scope"],
        headers={"en": ["Level", "Figure (estimate)", "Range, low", "Range, high", "What the range counts"],
                 "zh": ["层级", "图中的值（估计）", "范围下限", "范围上限", "范围算的是什么"]},
        rows=rows,
        formats={"figure": lambda x: f"{x:,g}", "low": lambda x: f"{x:.2g}", "high": lambda x: f"{x:.2g}"},
        labels={"en": {}, "zh": {v[0]: v[1] for v in ENERGY_SCOPES.values()}},
        notes=bilingual_notes((
            "Sources as in commbook.physics.ENERGY; the figure's NVLink and InfiniBand values also count "
            "NIC, SerDes and switch.",
            "出处见 commbook.physics.ENERGY；图中 NVLink 与 InfiniBand 的值还算进了网卡、SerDes 和交换机。")),
    )
