"""Lecture P5 §6 tables (script 04): ring mappings on a torus, all-to-all bounds,
hierarchical all-reduce."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import all_reduce, all_to_all, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ..tables import Table, bilingual, bilingual_notes, fmt_ratio
from ...topology import Ring, Switch, Torus, TwoLevel, ring_order
from ...units import KB, MB, fmt_bytes, fmt_time, us
from .common import balanced_dims


def demo_04_1(dims: tuple[int, int] = (4, 4), n: float = 64 * MB, link: Link = ICI_V5E,
              seeds: Sequence[int] = (0, 1, 2, 3, 4), median_seeds: int = 20,
              small: float = 64 * KB) -> Table:
    """Demo 04-1 (lecture §6.1 "映射：逻辑环放在哪里"): ring all-reduce of 64 MB on a
    4×4 ICI torus under different rank → chip mappings.

    Anchors, rows: snake (ideal 2,696.7 µs = the ring formula), row-major (+1.11 % with h·α per
    message; +2.22 % with ``hop_alpha=2``, i.e. 2α per extra hop, which is what the
    lecture's "2 %" needs: flag F.29), random permutations ``numpy.random.default_rng(seed)``
    for ``seeds`` (≈2×; the median over seeds 0…``median_seeds``−1 is in a note).  Max hops
    is the longest ring edge; max link load the bytes of the busiest directed link
    (``RunResult.link_bytes``).  Part "04-1b": flat snake ring vs the 2D (row then column)
    algorithm: 64 KB 32.67 vs 14.67 µs (30 vs 12 rounds), 64 MB 2,696.7 vs 2,678.7 µs.
    """
    topo = Torus(dims, link)
    c = VirtualCluster(topo)
    c2 = VirtualCluster(Torus(dims, link, hop_alpha=2.0))
    p = topo.p
    ideal = t_formula("ring", p, n, link.alpha, link.beta)

    def run(cluster, kind, seed=None, label=None):
        order = ring_order(dims, kind, seed)
        r = all_reduce(cluster, nbytes=n, ranks=order)
        edges = [topo.hops(int(order[i]), int(order[(i + 1) % p])) for i in range(p)]
        return {"mapping": label or kind.replace("_", "-"), "seed": seed, "time": r.time,
                "vs_ideal": r.time / ideal, "max_hops": max(edges),
                "max_link": float(r.link_bytes.max())}

    rows = [run(c, "snake"), run(c, "row_major"),
            run(c2, "row_major", label="row-major, 2α per extra hop")]
    rows += [run(c, "random", s) for s in seeds]
    med = float(np.median([run(c, "random", s)["vs_ideal"] for s in range(median_seeds)]))

    snake = ring_order(dims, "snake")
    frows = []
    for m in (small, n):
        flat = all_reduce(c, nbytes=m, ranks=snake)
        two = all_reduce(c, nbytes=m, algorithm="torus")
        frows.append({"n": float(m), "flat": flat.time, "flat_rounds": flat.rounds,
                      "two_d": two.time, "two_d_rounds": two.rounds, "speedup": flat.time / two.time})
    dims_s = "×".join(map(str, dims))
    flat2d = Table(
        key="04-1b",
        title=bilingual(f"flat ring vs 2D all-reduce on the {dims_s} torus",
                     f"{dims_s} torus 上单环对比二维 all-reduce"),
        columns=["n", "flat", "flat_rounds", "two_d", "two_d_rounds", "speedup"],
        headers={"en": ["n", "flat ring (snake)", "rounds", "2D (rows, then columns)", "rounds", "speedup"],
                 "zh": ["n", "单环（蛇形）", "步数", "二维（先行后列）", "步数", "加速"]},
        rows=frows,
        formats={"n": fmt_bytes, "flat": lambda v: fmt_time(v, 5), "two_d": lambda v: fmt_time(v, 5),
                 "speedup": fmt_ratio(2)},
        notes=bilingual_notes(("Same bytes, fewer rounds: 2(p−1) → 2(a−1) + 2(b−1).",
                      "字节一样，步数从 2(p−1) 降到 2(a−1) + 2(b−1)。")),
    )
    return Table(
        key="04-1",
        title=bilingual(f"ring all-reduce of {fmt_bytes(n)} on a {dims_s} {link.name} torus: rank mapping",
                     f"{dims_s} {link.name} torus 上 {fmt_bytes(n)} 的 ring all-reduce：编号映射"),
        columns=["mapping", "seed", "time", "vs_ideal", "max_hops", "max_link"],
        headers={"en": ["mapping", "seed", "time", "/ ideal", "max hops", "max link load"],
                 "zh": ["映射", "种子", "时间", "/ 理想", "最远跳数", "最忙链路字节"]},
        rows=rows,
        formats={"time": lambda v: fmt_time(v, 5), "vs_ideal": fmt_ratio(3), "max_link": fmt_bytes},
        labels={"zh": {"snake": "蛇形", "row-major": "按行", "random": "随机",
                       "row-major, 2α per extra hop": "按行，每多一跳 2α"}},
        notes=bilingual_notes(
            (f"Ideal = ring formula 2(p−1)(α + n/(pβ)) = {ideal / us:.1f} µs. Row-major costs "
             f"{(rows[1]['vs_ideal'] - 1):.2%} with α per hop and {(rows[2]['vs_ideal'] - 1):.2%} with 2α "
             "per extra hop: the lecture's \"2 %\" needs the latter (flag F.29). Random mappings: "
             f"median {med:.2f}× over seeds 0–{median_seeds - 1}.",
             f"理想 = ring 公式 2(p−1)(α + n/(pβ)) = {ideal / us:.1f} µs。按行映射在每跳 α 时慢 "
             f"{(rows[1]['vs_ideal'] - 1):.2%}，每多一跳 2α 时慢 {(rows[2]['vs_ideal'] - 1):.2%}："
             f"讲义的“2%”需要后者（标记 F.29）。随机映射：种子 0–{median_seeds - 1} 的中位数 {med:.2f}×。"),
        ),
        meta={"ideal": ideal, "random_median": med},
        parts=[flat2d],
    )


def demo_04_2(p: int = 64, n: float = 16 * MB, link: Link = ICI_V5E, check_p16: bool = True) -> Table:
    """Demo 04-2 (lecture §6.2 "all-to-all 与对分带宽"): direct all-to-all of ``n`` =
    16 MB per device on a switch, a bidirectional ring and a 2D torus (all ``link``).

    Bounds (:func:`commbook.cost.all_to_all_bounds`): egress (p−1)/p·n/β and bisection
    (p·n/4)/B_bisect.  Anchors (p = 64): switch 0.413 ms (egress 0.350); ring 6.71 ms =
    16.3× the switch (bound 2.844 ms, 2.36×); 8×8 torus 1.31 ms (3.2× the switch, 3.67×
    its bound).  Flag F.30: with p = 16 the ring is only ≈4.3× the switch (note).
    """
    d2 = balanced_dims(p, 2)
    topos = [("switch", Switch(p, link)), ("ring (bidirectional)", Ring(p, link)),
             (f"2D torus {d2[0]}×{d2[1]}", Torus(d2, link))]
    rows = []
    for name, t in topos:
        r = all_to_all(VirtualCluster(t), nbytes=n)
        eg, bi = cost.all_to_all_bounds(p, n, link.beta, t.bisection_bandwidth)
        rows.append({"topology": name, "time": r.time, "egress": eg, "bisection": bi,
                     "vs_bound": r.time / max(eg, bi)})
    for r in rows:
        r["vs_switch"] = r["time"] / rows[0]["time"]
    notes = [("The larger bound binds: egress on the switch, bisection on the ring and torus. "
              "The direct algorithm (p−1 shift rounds) stays 2–4× above the bound on the ring "
              "and torus: rounds are synchronous and their loads uneven.",
              "取较大的下界：交换机受出口限制，环和 torus 受对分带宽限制。直接算法（p−1 步移位）"
              "在环和 torus 上比下界高 2–4 倍：步与步之间同步，各步流量不均。")]
    meta = {}
    if check_p16:
        sw = all_to_all(VirtualCluster(Switch(16, link)), nbytes=n).time
        rg = all_to_all(VirtualCluster(Ring(16, link)), nbytes=n).time
        meta["p16_ring_vs_switch"] = rg / sw
        notes.append((f"Flag F.30: p is not stated; the lecture's \"≈16×\" needs p ≈ 64 — with p = 16 the "
                      f"ring is only {rg / sw:.1f}× the switch.",
                      f"标记 F.30：讲义没给 p；“约 16 倍”需要 p ≈ 64——p = 16 时环只比交换机慢 {rg / sw:.1f} 倍。"))
    ms = lambda v: fmt_time(v, 4)
    return Table(
        key="04-2",
        title=bilingual(f"all-to-all, {fmt_bytes(n)} per device, p = {p}, {link.name} links",
                     f"all-to-all，每设备 {fmt_bytes(n)}，p = {p}，{link.name} 链路"),
        columns=["topology", "time", "egress", "bisection", "vs_bound", "vs_switch"],
        headers={"en": ["topology", "simulated", "egress bound", "bisection bound", "/ larger bound", "/ switch"],
                 "zh": ["拓扑", "模拟时间", "出口下界", "对分下界", "/ 较大下界", "/ 交换机"]},
        rows=rows,
        formats={"time": ms, "egress": ms, "bisection": ms, "vs_bound": fmt_ratio(2),
                 "vs_switch": fmt_ratio(1)},
        labels={"zh": {"switch": "交换机", "ring (bidirectional)": "环（双向）",
                       f"2D torus {d2[0]}×{d2[1]}": f"二维 torus {d2[0]}×{d2[1]}"}},
        notes={"en": [a for a, _ in notes], "zh": [b for _, b in notes]},
        meta=meta,
    )


def demo_04_3(nodes: Sequence[int] = (2, 4, 8, 16, 32), gpus_per_node: int = 8,
              sizes: Sequence[float] = (64 * KB, 256 * MB), intra: Link = NVLINK4,
              inter: Link = IB_NDR) -> Table:
    """Demo 04-3 (lecture §6.3 "层次化 all-reduce"): flat ring vs hierarchical all-reduce
    (NVLink reduce-scatter, per-rail IB ring, NVLink all-gather) on N nodes × 8 GPUs.

    Anchors (speedup flat / hierarchical): 64 KB 3.97, 5.34, 6.42, 7.13, 7.54 and 256 MB
    5.83, 5.08, 4.84, 4.82, 4.95 for N = 2, 4, 8, 16, 32.
    """
    rows = []
    for n in sizes:
        for N in nodes:
            c = VirtualCluster(TwoLevel(N, gpus_per_node, intra, inter))
            flat = all_reduce(c, nbytes=n)
            hier = all_reduce(c, nbytes=n, algorithm="hierarchical")
            rows.append({"n": float(n), "nodes": N, "p": N * gpus_per_node, "flat": flat.time,
                         "flat_rounds": flat.rounds, "hier": hier.time, "hier_rounds": hier.rounds,
                         "speedup": flat.time / hier.time})
    t = lambda v: fmt_time(v, 4)
    return Table(
        key="04-3",
        title=bilingual(f"hierarchical vs flat ring all-reduce, N nodes × {gpus_per_node} GPUs "
                     f"({intra.name} + {inter.name})",
                     f"层次化对比扁平 ring all-reduce，N 个节点 × {gpus_per_node} 块 GPU"
                     f"（{intra.name} + {inter.name}）"),
        columns=["n", "nodes", "p", "flat", "flat_rounds", "hier", "hier_rounds", "speedup"],
        headers={"en": ["n", "nodes N", "GPUs", "flat ring", "rounds", "hierarchical", "rounds", "speedup"],
                 "zh": ["n", "节点数 N", "GPU 数", "扁平 ring", "步数", "层次化", "步数", "加速"]},
        rows=rows,
        formats={"n": fmt_bytes, "flat": t, "hier": t, "speedup": fmt_ratio(2)},
        notes=bilingual_notes(
            ("Flat: every one of the 2(8N−1) rounds waits for a NIC hop. Hierarchical: 2×7 NVLink "
             "rounds plus 2(N−1) IB rounds on n/8 per rail, 8 NICs at once; the small-message "
             "speedup grows with N.",
             "扁平：2(8N−1) 步每步都要等一次网卡。层次化：2×7 步走 NVLink，加 2(N−1) 步走网卡、"
             "每条轨道只传 n/8，8 块网卡同时工作；小消息的加速随节点数变大。"),
        ),
    )
