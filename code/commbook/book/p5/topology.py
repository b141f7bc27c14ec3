"""P5 §6 tables (script 04): ring mappings on a torus, all-to-all bounds,
hierarchical all-reduce."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import all_reduce, all_to_all, t_allreduce_tiers, t_formula
from ...collectives.channels import ring_time_two_level
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ..tables import Table, bilingual, bilingual_notes
from ...topology import Ring, Switch, Torus, TwoLevel, ring_order
from ...units import KB, MB, fmt_bytes, fmt_ratio, fmt_time
from .common import balanced_dims, original_note, span

ORIGINAL_04_1 = {"dims": (4, 4), "n": 64 * MB, "link": ICI_V5E, "pct": 2}
"""The original notes' rank-mapping example (dims, n, link) and how much slower (in %)
they say the row-major ring is than the snake (demo 04-1 reconciles it)."""

ORIGINAL_04_2 = {"n": 16 * MB, "link": ICI_V5E, "ratio": 16}
"""The original notes' all-to-all example (n per device, link; p not given) and how many
times slower they say the ring is than the switch (demo 04-2 reconciles it)."""


def demo_04_1(dims: tuple[int, int] = (4, 4), n: float = 64 * MB, link: Link = ICI_V5E,
              seeds: Sequence[int] = (0, 1, 2, 3, 4), median_seeds: int = 20,
              small: float = 64 * KB, extra_hop_alpha: float = 2.0) -> Table:
    """Demo 04-1 (lecture §6.1 "映射：逻辑环放在哪里"): ring all-reduce of 64 MB on a
    4×4 ICI torus under different rank → chip mappings.

    Anchors, rows: snake (ideal 2,696.7 µs = the ring formula), row-major (+1.11 % with h·α per
    message; +2.22 % with ``hop_alpha=extra_hop_alpha=2``, i.e. 2α per extra hop, which is
    what the original's "2 %" needs: flag F.29, :data:`ORIGINAL_04_1`), random permutations ``numpy.random.default_rng(seed)``
    for ``seeds`` (≈2×; the median over seeds 0…``median_seeds``−1 is in a note).  Max hops
    is the longest ring edge; max link load the bytes of the busiest directed link
    (``RunResult.link_bytes``).  Part "04-1b": flat snake ring vs the 2D (row then column)
    algorithm: 64 KB 32.67 vs 14.67 µs (30 vs 12 rounds), 64 MB 2,696.7 vs 2,678.7 µs.
    """
    topo = Torus(dims, link)
    c = VirtualCluster(topo)
    c2 = VirtualCluster(Torus(dims, link, hop_alpha=extra_hop_alpha))
    p = topo.p
    ideal = t_formula("ring", p, n, link.alpha, link.beta)

    def run(cluster, kind, seed=None, label=None):
        order = ring_order(dims, kind, seed)
        r = all_reduce(cluster, nbytes=n, ranks=order)
        edges = [topo.hops(int(order[i]), int(order[(i + 1) % p])) for i in range(p)]
        return {"mapping": label or kind.replace("_", "-"), "seed": seed, "time": r.time,
                "vs_ideal": r.time / ideal, "max_hops": max(edges),
                "max_link": float(r.link_bytes.max())}

    x = f"{extra_hop_alpha:g}α"
    rows = [run(c, "snake"), run(c, "row_major"),
            run(c2, "row_major", label=f"row-major, {x} per extra hop")]
    rows += [run(c, "random", s) for s in seeds]
    med = float(np.median([run(c, "random", s)["vs_ideal"] for s in range(median_seeds)]))

    pct1, pct2 = rows[1]["vs_ideal"] - 1, rows[2]["vs_ideal"] - 1
    notes = [(f"Ideal = ring formula 2(p−1)(α + n/(pβ)) = {fmt_time(ideal, 5)}. Row-major (longest ring "
              f"edge {rows[1]['max_hops']} hops) costs {pct1:.2%} more with α per hop and {pct2:.2%} "
              f"with {x} per extra hop. Random mappings: median {med:.2f}× over seeds 0–{median_seeds - 1}.",
              f"理想 = ring 公式 2(p−1)(α + n/(pβ)) = {fmt_time(ideal, 5)}。按行映射（环上最远一段 "
              f"{rows[1]['max_hops']} 跳）在每跳付 α 时慢 {pct1:.2%}，每多一跳付 {x} 时慢 {pct2:.2%}。"
              f"随机映射：种子 0–{median_seeds - 1} 的中位数是 {med:.2f}×。")]
    o = ORIGINAL_04_1
    if (tuple(dims), n, link) == (o["dims"], o["n"], o["link"]):
        fits = [(en, zh) for en, zh, v in (("one α per hop", "每跳一个 α", pct1),
                                           (f"{x} per extra hop", f"每多一跳 {x}", pct2))
                if round(100 * v) == o["pct"]]
        notes.append(original_note(
            (f"row-major ≈{o['pct']} % slower than the snake",
             f"{pct1:.2%} with one α per hop, {pct2:.2%} with {x} per extra hop",
             f"only the rule “{fits[0][0]}” rounds to {o['pct']} %" if len(fits) == 1 else
             f"{'both rules round' if fits else 'neither rule rounds'} to {o['pct']} %"),
            (f"按行映射比蛇形慢约 {o['pct']}%",
             f"每跳一个 α 时慢 {pct1:.2%}，每多一跳 {x} 时慢 {pct2:.2%}",
             f"只有“{fits[0][1]}”这条规则取整后是 {o['pct']}%" if len(fits) == 1 else
             f"两条规则取整后{'都' if fits else '都不'}是 {o['pct']}%")))

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
                 "speedup": fmt_ratio},
        notes=bilingual_notes(
            (f"Same bytes, fewer rounds: 2(p−1) = {frows[0]['flat_rounds']} → 2(a−1) + 2(b−1) = "
             f"{frows[0]['two_d_rounds']}.",
             f"字节一样，步数从 2(p−1) = {frows[0]['flat_rounds']} 降到 2(a−1) + 2(b−1) = "
             f"{frows[0]['two_d_rounds']}。")),
    )
    return Table(
        key="04-1",
        title=bilingual(f"ring all-reduce of {fmt_bytes(n)} on a {dims_s} {link.name} torus: rank mapping",
                     f"{dims_s} {link.name} torus 上 {fmt_bytes(n)} 的 ring all-reduce：编号映射"),
        columns=["mapping", "seed", "time", "vs_ideal", "max_hops", "max_link"],
        headers={"en": ["mapping", "seed", "time", "/ ideal", "max hops", "max link load"],
                 "zh": ["映射", "种子", "时间", "/ 理想", "最远跳数", "最忙链路字节"]},
        rows=rows,
        formats={"time": lambda v: fmt_time(v, 5), "vs_ideal": (lambda v: fmt_ratio(v, 4)), "max_link": fmt_bytes},
        labels={"zh": {"snake": "蛇形", "row-major": "按行", "random": "随机",
                       f"row-major, {x} per extra hop": f"按行，每多一跳 {x}"}},
        notes=bilingual_notes(*notes),
        meta={"ideal": ideal, "random_median": med},
        parts=[flat2d],
    )


def demo_04_2(p: int = 64, n: float = 16 * MB, link: Link = ICI_V5E, check_p16: bool = True) -> Table:
    """Demo 04-2 (lecture §6.2 "all-to-all 与对分带宽"): direct all-to-all of ``n`` =
    16 MB per device on a switch, a bidirectional ring and a 2D torus (all ``link``).

    Bounds (:func:`commbook.cost.all_to_all_bounds`): egress (p−1)/p·n/β and bisection
    (p·n/4)/B_bisect.  Anchors (p = 64): switch 0.413 ms (egress 0.350); ring 6.71 ms =
    16.3× the switch (bound 2.844 ms, 2.36×); 8×8 torus 1.31 ms (3.2× the switch, 3.67×
    its bound).  Flag F.30: with p = 16 the ring is only ≈4.3× the switch (an "original
    notes" note, :data:`ORIGINAL_04_2`).
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
    zh_name = {"switch": "交换机", "ring (bidirectional)": "环（双向）",
               f"2D torus {d2[0]}×{d2[1]}": f"二维 torus {d2[0]}×{d2[1]}"}
    by = {"egress": [r["topology"] for r in rows if r["egress"] >= r["bisection"]],
          "bisection": [r["topology"] for r in rows if r["egress"] < r["bisection"]]}
    others = rows[1:]
    gap = span([r["vs_bound"] for r in others], lambda v: f"{v:.1f}")
    sp = lambda text: text + " " if text[-1:].isascii() else text   # a space before Chinese after Latin
    bind_en = "; ".join(f"{k} on the {' and the '.join(v)}" for k, v in by.items() if v)
    bind_zh = "；".join(f"{sp('、'.join(zh_name[t] for t in v))}受{'出口' if k == 'egress' else '对分带宽'}限制"
                       for k, v in by.items() if v)
    notes = [(f"The larger bound binds: {bind_en}. The direct algorithm (p−1 = {p - 1} shift rounds) "
              f"stays {gap}× above it on the {' and the '.join(r['topology'] for r in others)}: rounds are "
              "synchronous and their loads uneven.",
              f"取两个下界中较大的一个：{bind_zh}。直接算法（p−1 = {p - 1} 步移位）在"
              f"{sp('和'.join(zh_name[r['topology']] for r in others))}上比它高 {gap} 倍："
              "各步之间要同步，而各步的流量并不均匀。")]
    meta = {}
    o = ORIGINAL_04_2
    if check_p16:
        sw = all_to_all(VirtualCluster(Switch(16, link)), nbytes=n).time
        rg = all_to_all(VirtualCluster(Ring(16, link)), nbytes=n).time
        meta["p16_ring_vs_switch"] = rg / sw
        if n == o["n"] and link == o["link"]:
            here = {p: rows[1]["vs_switch"], 16: rg / sw}
            fits = [q for q, v in here.items() if round(v) == o["ratio"]]
            here_en = ", ".join(f"{v:.1f}× at p = {q}" for q, v in here.items())
            here_zh = "，".join(f"p = {q} 时 {v:.1f} 倍" for q, v in here.items())
            notes.append(original_note(
                (f"the ring ≈{o['ratio']}× slower than the switch, p not given", here_en,
                 "the ring's time grows with p while the switch's does not, and "
                 + (f"≈{o['ratio']}× needs p = {fits[0]}" if fits else f"neither p gives ≈{o['ratio']}×")),
                (f"环比交换机慢约 {o['ratio']} 倍，没有给出 p", here_zh,
                 "环的时间随 p 增长而交换机的不变，"
                 + (f"约 {o['ratio']} 倍要 p = {fits[0]} 才对得上" if fits else
                    f"两个 p 都得不到约 {o['ratio']} 倍"))))
    ms = lambda v: fmt_time(v, 4)
    return Table(
        key="04-2",
        title=bilingual(f"all-to-all, {fmt_bytes(n)} per device, p = {p}, {link.name} links",
                     f"all-to-all，每设备 {fmt_bytes(n)}，p = {p}，{link.name} 链路"),
        columns=["topology", "time", "egress", "bisection", "vs_bound", "vs_switch"],
        headers={"en": ["topology", "simulated", "egress bound", "bisection bound", "/ larger bound", "/ switch"],
                 "zh": ["拓扑", "模拟时间", "出口下界", "对分下界", "/ 较大下界", "/ 交换机"]},
        rows=rows,
        formats={"time": ms, "egress": ms, "bisection": ms, "vs_bound": fmt_ratio,
                 "vs_switch": fmt_ratio},
        labels={"zh": zh_name},
        notes=bilingual_notes(*notes),
        meta=meta,
    )


def nccl_ring_crossover(topology: TwoLevel, hi: float = 1e13) -> float | None:
    """The message size above which NCCL's ring (one channel per NIC,
    :func:`commbook.collectives.channels.ring_time_two_level`) is faster than the
    hierarchical all-reduce (:func:`commbook.collectives.t_allreduce_tiers`) on
    ``topology``, or ``None`` when the hierarchy stays faster up to ``hi`` bytes.

    Both closed forms equal the simulator's times (tests/test_channels.py and
    tests/test_topology_tiers.py).  Their difference is a piecewise-linear function of n
    that starts positive (the ring pays 2(GN−1) α of the network, the hierarchy
    2(N−1)); the root is found by bisection on log n.
    """
    def gap(n: float) -> float:
        return ring_time_two_level(topology, n) - t_allreduce_tiers(topology, n)

    lo = 1.0
    if gap(hi) >= 0:
        return None
    if gap(lo) <= 0:
        return 0.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
        if hi / lo - 1 < 1e-13:
            break
    return math.sqrt(lo * hi)


def demo_04_3(nodes: Sequence[int] = (2, 4, 8, 16, 32), gpus_per_node: int = 8,
              sizes: Sequence[float] = (64 * KB, 256 * MB), intra: Link = NVLINK4,
              inter: Link = IB_NDR) -> Table:
    """Demo 04-3 (lecture §6.3 "层次化 all-reduce"): flat ring vs hierarchical all-reduce
    (NVLink reduce-scatter, per-rail IB ring, NVLink all-gather) on N nodes × 8 GPUs.

    The flat ring is the single ring of the original notes (``channels=1``: one NIC per
    node carries the whole per-step chunk).  Beside it: the ring NCCL runs, one channel
    per NIC with PXN (``TwoLevel(..., pxn=True)``, the simulator's default channels), and
    its ratio to the hierarchy (> 1: the hierarchy is faster).

    Anchors (speedup flat / hierarchical): 64 KB 3.97, 5.34, 6.42, 7.13, 7.54 and 256 MB
    5.83, 5.08, 4.84, 4.82, 4.95 for N = 2, 4, 8, 16, 32.  NCCL's ring / hierarchical at
    256 MB: 0.81, 0.77, 0.85, 1.07, 1.49.

    Part "04-3b": for each N the size above which NCCL's ring beats the hierarchy
    (:func:`nccl_ring_crossover`), with one NIC per GPU and with one NIC per node.
    """
    rows = []
    for n in sizes:
        for N in nodes:
            c = VirtualCluster(TwoLevel(N, gpus_per_node, intra, inter, pxn=True))
            flat = all_reduce(c, nbytes=n, channels=1)
            nccl = all_reduce(c, nbytes=n)
            hier = all_reduce(c, nbytes=n, algorithm="hierarchical")
            rows.append({"n": float(n), "nodes": N, "p": N * gpus_per_node, "flat": flat.time,
                         "flat_rounds": flat.rounds, "hier": hier.time, "hier_rounds": hier.rounds,
                         "speedup": flat.time / hier.time, "nccl": nccl.time,
                         "nccl_vs_hier": nccl.time / hier.time})
    t = lambda v: fmt_time(v, 4)
    g = gpus_per_node

    def trend(n: float, lang: str = "en") -> str:
        sp = [r["speedup"] for r in rows if r["n"] == n]
        rng = span(sp, lambda v: f"{v:.2f}×")
        if len(sp) > 1 and all(b > a for a, b in zip(sp, sp[1:])):
            return f"grows with N, {rng}" if lang == "en" else f"随 N 增大，{rng}"
        return f"{rng}" if lang == "en" else f"在 {rng} 之间"

    cross = []
    for N in nodes:
        row = {"nodes": N, "p": N * g}
        for key, nics in (("per_gpu", None), ("per_node", 1)):
            x = nccl_ring_crossover(TwoLevel(N, g, intra, inter, nics_per_node=nics, pxn=True))
            row[key] = "never" if x is None else x
        cross.append(row)
    never = any(r[k] == "never" for r in cross for k in ("per_gpu", "per_node"))
    crossover = Table(
        key="04-3b",
        title=bilingual(f"NCCL's ring against the hierarchy, N nodes × {g} GPUs: the size above which "
                        "the ring is faster",
                        f"NCCL 的环对比层次化，N 个节点 × {g} 块 GPU：消息大于多少时环更快"),
        columns=["nodes", "p", "per_gpu", "per_node"],
        headers={"en": ["nodes N", "GPUs", f"{g} NICs per node ({g} channels)", "1 NIC per node (1 channel)"],
                 "zh": ["节点数 N", "GPU 数", f"每节点 {g} 张网卡（{g} 个 channel）", "每节点 1 张网卡（1 个 channel）"]},
        rows=cross,
        formats={"per_gpu": fmt_bytes, "per_node": fmt_bytes},
        labels={"zh": {"never": "不会"}},
        notes=bilingual_notes(
            ("Below the size given the hierarchical all-reduce is faster, above it NCCL's ring. The ring "
             "pays 2(GN−1) α of the network against the hierarchy's 2(N−1), so the size grows with N. With "
             "one NIC per node the hierarchy also sends fewer bytes through it, 2(N−1)/N·n against "
             "2(GN−1)/(GN)·n" + ("; where that outweighs its two phases inside the node it is faster at every size "
                                 "(“never”)." if never else "."),
             "消息小于表中的大小时层次化 all-reduce 更快，大于它时 NCCL 的环更快。环要付 2(GN−1) 次网络的 α，"
             "层次化只付 2(N−1) 次，所以这个大小随 N 增大。每节点只有一张网卡时，层次化经过这张网卡的字节也更少："
             "2(N−1)/N·n，环则是 2(GN−1)/(GN)·n" + ("；这笔节省超过它两段节点内阶段的开销时，"
                                                  "任何大小都是层次化更快（“不会”）。" if never else "。"))),
    )
    return Table(
        key="04-3",
        title=bilingual(f"hierarchical vs flat ring all-reduce, N nodes × {gpus_per_node} GPUs "
                     f"({intra.name} + {inter.name})",
                     f"层次化对比扁平 ring all-reduce，N 个节点 × {gpus_per_node} 块 GPU"
                     f"（{intra.name} + {inter.name}）"),
        columns=["n", "nodes", "p", "flat", "flat_rounds", "hier", "hier_rounds", "speedup", "nccl",
                 "nccl_vs_hier"],
        headers={"en": ["n", "nodes N", "GPUs", "flat ring", "rounds", "hierarchical", "rounds", "speedup",
                        "NCCL's ring", "NCCL's ring / hier."],
                 "zh": ["n", "节点数 N", "GPU 数", "扁平 ring", "步数", "层次化", "步数", "加速",
                        "NCCL 的环", "NCCL 的环 / 层次化"]},
        rows=rows,
        formats={"n": fmt_bytes, "flat": t, "hier": t, "speedup": fmt_ratio, "nccl": t,
                 "nccl_vs_hier": fmt_ratio},
        notes=bilingual_notes(
            (f"Flat: every one of the 2({g}N−1) rounds waits for a NIC hop. Hierarchical: "
             f"2×{g - 1} {intra.name} rounds plus 2(N−1) {inter.name} rounds on n/{g} per rail, "
             f"{g} NICs at once. Speedup at {fmt_bytes(min(sizes))}: {trend(min(sizes))}; at "
             f"{fmt_bytes(max(sizes))}: {trend(max(sizes))}.",
             f"扁平：2({g}N−1) 步每一步都要等一次网卡。层次化：2×{g - 1} 步走 {intra.name}，"
             f"再加 2(N−1) 步走 {inter.name}，每条轨道只传 n/{g}，{g} 块网卡同时工作。"
             f"{fmt_bytes(min(sizes))} 的加速：{trend(min(sizes), 'zh')}；"
             f"{fmt_bytes(max(sizes))}：{trend(max(sizes), 'zh')}。"),
            (f"NCCL's ring: the same 2({g}N−1) rounds, but one channel per NIC ({g} rings on n/{g} "
             f"each, PXN), so every NIC and every {intra.name} port works in every round. Its time over "
             f"the hierarchy's (> 1: the hierarchy is faster) at {fmt_bytes(max(sizes))}: "
             f"{span([r['nccl_vs_hier'] for r in rows if r['n'] == max(sizes)], lambda v: f'{v:.2f}×')}.",
             f"NCCL 的环：同样是 2({g}N−1) 步，但每张网卡一个 channel（{g} 个环，各管 n/{g}，开启 PXN），"
             f"所以每一步里每张网卡、每个 {intra.name} 端口都在干活。它与层次化的时间之比（> 1 表示层次化更快），"
             f"{fmt_bytes(max(sizes))} 时为 "
             f"{span([r['nccl_vs_hier'] for r in rows if r['n'] == max(sizes)], lambda v: f'{v:.2f}×')}。"),
        ),
        parts=[crossover],
    )
