"""Chapter §1.5, the numbers and tables of the hierarchical all-reduce and of in-network
reduction: the bandwidth tiers, napkin math 1.6 in the chapter's convention and counted
consistently (= the simulator), both against the ring NCCL runs (one channel per NIC,
PXN), the three-tier 128-GPU example with its assumptions, where the hierarchy still
beats NCCL's ring and where it does not, and the speed-up of in-switch reduction over
software all-reduces.

Times come from :class:`~commbook.comm_sim.VirtualCluster` or from closed forms the tests
hold equal to it; :mod:`commbook.book.ch1.tier_budgets` does the counting.  The routing
half of §1.5 (torus, rails, placement) is in :mod:`.hierarchy_routing`, the figures in
:mod:`.hierarchy_figures`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import collectives as coll
from ...collectives import predict
from . import tier_budgets as TB
from ...collectives.channels import ring_time_two_level
from ...collectives.ring import allreduce_ring
from ...collectives.tiers import tier_phases
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from ...topology import Switch, TwoLevel
from ...units import GB, MB, fmt_bytes, fmt_rate, fmt_ratio, fmt_time, ms
from ..tables import Table, bilingual, bilingual_notes
from .boxes import BOX_LINKS, link_name

__all__ = ["CHAPTER_STATED", "TIERS", "Tiers", "tier_numbers", "tier_table", "nm16", "nm16_table",
           "three_tier", "three_tier_table", "WHERE_CASES", "where_cases", "where_table", "OVERTAKE_SIZES",
           "overtake", "overtake_table", "SHARP_SETTING", "sharp_curves", "sharp_sim"]

CHAPTER_STATED = {
    "tier_bw": 900e9,             # the tier table's bandwidth column for NVLink 4.0 (both directions)
    "tier_ratio": 9,              # its relative rate
    "fig8_ratio": 18,             # Figure 8's "bandwidth gap"
    "fig8_bars": (9.1, 1.3),      # Figure 8's two bars, lengths as drawn (NVLink, InfiniBand)
    "fig8_gpus_drawn": 4,         # GPUs drawn in each "8-GPU" node of Figure 8
    "nm16": {"rs": (1.94 * ms, 2), "inter": (4.42 * ms, 2), "total": (8.3 * ms, 1),
             "flat": (40 * ms, 0), "speedup": (4.8, 1)},
    "three_tier": {"hier": 15 * ms, "flat": 160 * ms, "reduction": 32},
    "sharp": (2.0, 3.0),          # Figure 9's "2–3× AllReduce speedup"
    "torus": {"flat_steps": 30, "dim_steps": 12, "x": 2.5},
    "mapping": 2.0,               # the same job, two rank assignments: "2× or more"
    "mismatch": (2.0, 4.0),       # wrong NIC: "effective bandwidth reduced 2–4×"
}
"""What the chapter prints in §1.5.  Napkin math 1.6 and the seconds are (value, decimals
of the printed milliseconds)."""

TIERS = (NVLINK4_CHAPTER, IB_NDR_CHAPTER)
"""The two tiers of the bandwidth table: NVLink 4.0 inside the node, InfiniBand NDR 400G
between nodes (Table 1's presets)."""


# ============================================================================ the tier table
@dataclass(frozen=True)
class Tiers:
    """One direction and both directions of each tier, their ratio (the same either way),
    the ratio that mixes the two conventions (NVLink's both-direction total over
    InfiniBand's one direction), Figure 8's bars, and the table's printed NVLink figure."""
    nv_one_Bps: float
    nv_both_Bps: float
    ib_one_Bps: float
    ib_both_Bps: float
    ratio_x: float
    ratio_both_x: float
    mixed_x: float
    bars_x: float
    printed_Bps: float


def tier_numbers() -> Tiers:
    """:class:`Tiers` of :data:`TIERS`."""
    nv, ib = TIERS
    bars = CHAPTER_STATED["fig8_bars"]
    return Tiers(nv_one_Bps=nv.beta, nv_both_Bps=2 * nv.beta, ib_one_Bps=ib.beta, ib_both_Bps=2 * ib.beta,
                 ratio_x=nv.beta / ib.beta, ratio_both_x=(2 * nv.beta) / (2 * ib.beta), mixed_x=2 * nv.beta / ib.beta,
                 bars_x=bars[0] / bars[1], printed_Bps=CHAPTER_STATED["tier_bw"])


def tier_table() -> Table:
    """The bandwidth tiers: link, one direction, both directions, ratio to InfiniBand."""
    t = tier_numbers()
    rows = [{"tier": "intra", "link": TIERS[0].name, "one": t.nv_one_Bps, "both": t.nv_both_Bps,
             "ratio": t.ratio_x},
            {"tier": "inter", "link": TIERS[1].name, "one": t.ib_one_Bps, "both": t.ib_both_Bps, "ratio": 1.0}]
    tiers = {"intra": bilingual("in the node", "节点内"), "inter": bilingual("between nodes", "节点间")}
    return Table(
        key="ch1-tiers",
        title=bilingual("Bandwidth tiers of a GPU cluster", "GPU 集群的带宽层级"),
        columns=["tier", "link", "one", "both", "ratio"],
        headers={"en": ["Tier", "Link", "One direction", "Both directions", "Ratio (either column)"],
                 "zh": ["层级", "链路", "单向", "双向合计", "倍数（两列相同）"]},
        rows=rows,
        formats={"one": lambda v: fmt_rate(v, 3), "both": lambda v: fmt_rate(v, 3), "ratio": fmt_ratio},
        labels={lang: {**{k: v[lang] for k, v in tiers.items()},
                       **{l.name: link_name(l, lang) for l in TIERS}} for lang in ("en", "zh")},
        notes=bilingual_notes((
            "Datasheets give NVLink's total of both directions; a ratio compares like with like.",
            "NVLink 的数据手册给的是两个方向的合计；求倍数时两边要用同一种口径。")),
        meta=t,
    )


# ============================================================================ napkin math 1.6
def nm16() -> dict:
    """Napkin math 1.6 (8 nodes x 8 GPUs, 1 GB) in both conventions of
    :data:`commbook.book.ch1.tier_budgets.CONVENTIONS`, with the box's InfiniBand link
    from :data:`.boxes.BOX_LINKS`, and the simulator on ``TwoLevel(8, 8)`` (which the
    consistent count equals)."""
    inter = BOX_LINKS["nm1.6"]
    inputs = {**TB.NM_1_6, "inter": inter}
    b = TB.napkin_1_6(inter=inter)
    topo = TwoLevel(inputs["nodes"], inputs["gpus_per_node"], NVLINK4_CHAPTER, inter)
    c = VirtualCluster(topo)
    sim = {"flat": coll.all_reduce(c, nbytes=inputs["n"], channels=1).time,
           "hier": coll.all_reduce(c, nbytes=inputs["n"], algorithm="hierarchical").time}
    phases = {name: c.run(r).time for name, r in tier_phases(topo, inputs["n"], True, allreduce_ring)}
    pxn = TwoLevel(inputs["nodes"], inputs["gpus_per_node"], NVLINK4_CHAPTER, inter, pxn=True)
    bw_only = TwoLevel(inputs["nodes"], inputs["gpus_per_node"], inputs["intra"],
                       Link(inter.name, 0.0, inter.beta, "napkin math 1.6 without α"), pxn=True)
    ring = {"sim": coll.all_reduce(VirtualCluster(pxn), nbytes=inputs["n"]).time,
            "model": ring_time_two_level(pxn, inputs["n"]), "bandwidth": ring_time_two_level(bw_only, inputs["n"]),
            "channels": pxn.ring_channels(np.arange(pxn.p))}
    return {**inputs, "p": inputs["nodes"] * inputs["gpus_per_node"], "nv_alpha": NVLINK4_CHAPTER.alpha,
            "chapter": b["chapter"], "consistent": b["consistent"], "sim": sim, "sim_phases": phases,
            "ring": ring}


_NM16_ROWS = {
    "ring": bilingual("NCCL's ring: 8 channels, one per NIC", "NCCL 的环：8 个通道，每张网卡一个"),
    "reduce_scatter": bilingual("1. reduce-scatter in the node (NVLink)", "1. 节点内 reduce-scatter（NVLink）"),
    "inter": bilingual("2. all-reduce across nodes on each rail (InfiniBand)", "2. 各条轨道上的跨节点 all-reduce（InfiniBand）"),
    "all_gather": bilingual("3. all-gather in the node (NVLink)", "3. 节点内 all-gather（NVLink）"),
    "total": bilingual("hierarchical, total", "分层方案合计"),
    "slower": bilingual("hierarchy ÷ NCCL's ring", "分层方案 ÷ NCCL 的环"),
}


def nm16_table(d: dict | None = None) -> Table:
    """Napkin math 1.6 side by side: NCCL's ring and the three phases as the box counts them
    (the ring's bandwidth term, NVLink without α) and with every term (= simulator)."""
    d = nm16() if d is None else d
    a, b, r = d["chapter"], d["consistent"], d["ring"]
    rows = [{"what": "ring", "chapter": r["bandwidth"], "consistent": r["sim"]}]
    rows += [{"what": k, "chapter": getattr(a, k), "consistent": getattr(b, k)}
             for k in ("reduce_scatter", "inter", "all_gather", "total")]
    rows.append({"what": "slower", "chapter": a.total / r["bandwidth"], "consistent": b.total / r["sim"]})
    fmt = lambda v: f"{v:.2f}×" if v > 1 else f"{v / ms:.3f} ms"
    return Table(
        key="ch1-nm16",
        title=bilingual("Napkin math 1.6 counted two ways (8 nodes × 8 GPUs, 1 GB)",
                        "估算 1.6 的两种算法（8 个节点 × 8 块 GPU，1 GB）"),
        columns=["what", "chapter", "consistent"],
        headers={"en": ["", "Box's count: ring's bandwidth term, no NVLink α", "Every term counted (= simulator)"],
                 "zh": ["", "框内算法：环只计带宽项，不计 NVLink 的 α", "每一项都计入（= 模拟器）"]},
        rows=rows,
        formats={"chapter": fmt, "consistent": fmt},
        labels={lang: {k: v[lang] for k, v in _NM16_ROWS.items()} for lang in ("en", "zh")},
        notes=bilingual_notes((
            f"NVLink 4.0: 450 GB/s one way, α = {fmt_time(d['nv_alpha'], 3)} where counted; InfiniBand NDR: "
            f"50 GB/s, α = {fmt_time(d['inter'].alpha, 3)} in both columns.",
            f"NVLink 4.0：单向 450 GB/s，计入时 α = {fmt_time(d['nv_alpha'], 3)}；InfiniBand NDR：50 GB/s，"
            f"两列的 α 都是 {fmt_time(d['inter'].alpha, 3)}。")),
        meta=d,
    )


# ============================================================================ three tiers
def three_tier(n: float = 1 * GB) -> dict:
    """The 128-GPU example (4 racks x 4 nodes x 8 GPUs, 2:1 between racks) by
    :func:`commbook.book.ch1.tier_budgets.three_tier_example`, with the time of every
    phase from the simulator and the per-hop bandwidth a flat ring would need to take
    the chapter's 160 ms."""
    e = TB.three_tier_example(n)
    topo = e["topology"]
    c = VirtualCluster(topo)
    phases = [(name, c.run(r).time) for name, r in tier_phases(topo, n, True, allreduce_ring)]
    p, inter = topo.p, topo.inter
    steps = 2 * (p - 1)
    flat_target = CHAPTER_STATED["three_tier"]["flat"]
    beta_160 = 2 * (p - 1) / p * n / (flat_target - steps * inter.alpha)
    return {**e, "n": n, "p": p, "phases": phases, "beta_for_160": beta_160,
            "spine_share": topo.tier_links()[-1].beta, "flat_steps": steps}


_TIER_PHASE = {
    "node reduce-scatter": bilingual("1. reduce-scatter in the node (NVLink)", "1. 节点内 reduce-scatter（NVLink）"),
    "rail reduce-scatter": bilingual("2. reduce-scatter across the rack's nodes, per rail",
                                     "2. 机架内跨节点 reduce-scatter，按轨道"),
    "cross-rack all-reduce": bilingual("3. all-reduce across racks, per rail (2:1 spine)",
                                       "3. 跨机架 all-reduce，按轨道（2:1 脊交换层）"),
    "rail all-gather": bilingual("4. all-gather across the rack's nodes", "4. 机架内跨节点 all-gather"),
    "node all-gather": bilingual("5. all-gather in the node", "5. 节点内 all-gather"),
    "total_model": bilingual("multi-level, total (closed form)", "多级方案合计（闭式）"),
    "total_sim": bilingual("multi-level, total (simulator)", "多级方案合计（模拟器）"),
    "ring": bilingual("NCCL's ring, 8 channels, PXN (closed form = simulator)", "NCCL 的环，8 个通道，PXN（闭式 = 模拟器）"),
    "ring_no_pxn": bilingual("the same 8 channels without PXN", "同样 8 个通道，不用 PXN"),
}


def three_tier_table(d: dict | None = None) -> Table:
    """The three-tier example: every phase, both totals, both flat rings."""
    d = three_tier() if d is None else d
    rows = [{"what": k, "time": t} for k, t in d["phases"]]
    rows += [{"what": "total_model", "time": d["model"]}, {"what": "total_sim", "time": d["sim"]},
             {"what": "ring", "time": d["ring"]}, {"what": "ring_no_pxn", "time": d["ring_no_pxn"]}]
    topo = d["topology"]
    return Table(
        key="ch1-three-tier",
        title=bilingual(f"All-reduce of {d['n'] / GB:g} GB on {topo.racks} racks × {topo.nodes_per_rack} nodes × "
                        f"{topo.gpus_per_node} GPUs, 2:1 between racks",
                        f"{topo.racks} 个机架 × {topo.nodes_per_rack} 个节点 × {topo.gpus_per_node} 块 GPU"
                        f"（机架之间 2:1）上 {d['n'] / GB:g} GB 的 all-reduce"),
        columns=["what", "time"],
        headers={"en": ["Phase or schedule", "Time"], "zh": ["阶段或方案", "用时"]},
        rows=rows,
        formats={"time": fmt_time},
        labels={lang: {k: v[lang] for k, v in _TIER_PHASE.items()} for lang in ("en", "zh")},
        meta=d,
    )


# ============================================================================ where the hierarchy wins
WHERE_CASES = {
    "plain": ({"pxn": True}, "two"),
    "one_nic": ({"nics_per_node": 1, "pxn": True}, "two"),
    "spine": ({"spine_oversubscription": 2, "pxn": False}, "two"),
    "spine_pxn": ({"spine_oversubscription": 2, "pxn": True}, "two"),
    "racks": ({"pxn": True}, "three"),
    "racks_no_pxn": ({}, "three"),
}
"""The clusters of :func:`where_cases`: napkin math 1.6's 8 nodes x 8 GPUs ("two": TwoLevel
keywords) or the three-tier example ("three": 4 racks x 4 nodes x 8,
2:1 between racks, Table 1's links), 1 GB."""


def where_cases(n: float = 1 * GB) -> dict[str, dict]:
    """NCCL's ring (default channels) against the hierarchy in each case of
    :data:`WHERE_CASES`: ``ring``, ``ring_model`` (closed form), ``hier`` (three phases
    on TwoLevel, the five-phase multi-level schedule on ThreeTier), ``channels``, and
    ``ratio`` = hier / ring (above 1: the ring is faster)."""
    out = {}
    for key, (kw, kind) in WHERE_CASES.items():
        if kind == "two":
            topo = TwoLevel(TB.NM_1_6["nodes"], TB.NM_1_6["gpus_per_node"], NVLINK4_CHAPTER, BOX_LINKS["nm1.6"],
                            **kw)
            r = TB.nccl_ring(topo, n)
        else:
            e = TB.three_tier_example(n)
            r = {"ring": e["ring"] if kw.get("pxn") else e["ring_no_pxn"], "hier": e["sim"],
                 "channels": e["channels"], "ring_model": e["ring_model"] if kw.get("pxn") else None}
            topo = e["topology"]
        out[key] = {**r, "topology": topo, "ratio": r["hier"] / r["ring"]}
    return out


_WHERE_NAMES = {
    "plain": bilingual("8 × 8, one NIC per GPU", "8 × 8，每块 GPU 一张网卡"),
    "one_nic": bilingual("8 × 8, one NIC per node", "8 × 8，每个节点一张网卡"),
    "spine": bilingual("8 × 8, 2:1 spine, no PXN", "8 × 8，脊交换层 2:1，不用 PXN"),
    "spine_pxn": bilingual("8 × 8, 2:1 spine, PXN", "8 × 8，脊交换层 2:1，用 PXN"),
    "racks": bilingual("4 racks × 4 × 8, 2:1 between racks, PXN", "4 个机架 × 4 × 8，机架间 2:1，用 PXN"),
    "racks_no_pxn": bilingual("4 racks × 4 × 8, 2:1 between racks, no PXN", "4 个机架 × 4 × 8，机架间 2:1，不用 PXN"),
}


def where_table(cases: dict | None = None, n: float = 1 * GB) -> Table:
    """NCCL's ring against the hierarchy, case by case: channels, both times, their ratio."""
    cases = where_cases(n) if cases is None else cases
    rows = [{"case": k, "channels": v["channels"], "ring": v["ring"], "hier": v["hier"], "ratio": v["ratio"]}
            for k, v in cases.items()]
    return Table(
        key="ch1-where",
        title=bilingual(f"NCCL's ring against the hierarchy, all-reduce of {fmt_bytes(n)}",
                        f"{fmt_bytes(n)} 的 all-reduce：NCCL 的环与分层方案"),
        columns=["case", "channels", "ring", "hier", "ratio"],
        headers={"en": ["Cluster", "Ring channels", "NCCL's ring", "Hierarchy", "Hierarchy ÷ ring"],
                 "zh": ["集群", "环的通道数", "NCCL 的环", "分层方案", "分层 ÷ 环"]},
        rows=rows,
        formats={"ring": fmt_time, "hier": fmt_time, "ratio": fmt_ratio},
        labels={lang: {k: v[lang] for k, v in _WHERE_NAMES.items()} for lang in ("en", "zh")},
        notes=bilingual_notes((
            "Simulator. 8 × 8: NVLink 4.0 α = 1.5 µs, InfiniBand 50 GB/s α = 3 µs (napkin math 1.6); racks: "
            "Table 1's links, the five-phase schedule. Above 1×: the ring is faster.",
            "模拟器结果。8 × 8：NVLink 4.0 的 α = 1.5 µs，InfiniBand 50 GB/s、α = 3 µs（估算 1.6）；机架："
            "表 1 的链路，五阶段方案。大于 1× 表示环更快。")),
        meta=cases,
    )


OVERTAKE_SIZES = (64 * MB, 256 * MB, 1 * GB)
"""Buffers for which :func:`overtake` finds the node count where the hierarchy overtakes."""


def overtake(sizes=OVERTAKE_SIZES) -> dict:
    """For each buffer: the fewest nodes N (8 GPUs, one NIC each, PXN, napkin math 1.6's
    links) where the hierarchy beats NCCL's ring by the closed forms, checked with the
    simulator on N-1 nodes (ring faster) and on N (hierarchy faster), and the start-up
    terms of both at N: 2(p-1)α_IB for the ring, 2(G-1)α_NV + 2(N-1)α_IB for the hierarchy."""
    G, nv, ib = TB.NM_1_6["gpus_per_node"], NVLINK4_CHAPTER, BOX_LINKS["nm1.6"]
    out = {}
    for n in sizes:
        N = TB.overtake_nodes(G, n, nv, ib)
        sim = {m: TB.nccl_ring(TwoLevel(m, G, nv, ib, pxn=True), n) for m in (N - 1, N)}
        p = N * G
        out[n] = {"nodes": N, "gpus": p, "before": sim[N - 1], "at": sim[N],
                  "alpha_ring": 2 * (p - 1) * ib.alpha, "alpha_hier": 2 * (G - 1) * nv.alpha + 2 * (N - 1) * ib.alpha}
    return out


def overtake_table(d: dict | None = None) -> Table:
    """Where the hierarchy overtakes NCCL's ring as the nodes grow: per buffer, the node
    count, both times on one node fewer and at that count (simulator), and the start-ups
    each pays there."""
    d = overtake() if d is None else d
    rows = [{"n": fmt_bytes(n), "nodes": v["nodes"], "ring_before": v["before"]["ring"],
             "hier_before": v["before"]["hier"], "ring_at": v["at"]["ring"], "hier_at": v["at"]["hier"],
             "alpha_ring": v["alpha_ring"], "alpha_hier": v["alpha_hier"]} for n, v in d.items()]
    return Table(
        key="ch1-overtake",
        title=bilingual("Where the hierarchy overtakes NCCL's ring (8 GPUs per node, one NIC each, PXN)",
                        "分层方案从多少个节点起超过 NCCL 的环（每节点 8 块 GPU、各一张网卡、PXN）"),
        columns=["n", "nodes", "ring_before", "hier_before", "ring_at", "hier_at", "alpha_ring", "alpha_hier"],
        headers={"en": ["Buffer", "Nodes N", "Ring, N − 1", "Hierarchy, N − 1", "Ring, N", "Hierarchy, N",
                        "Ring's start-ups, N", "Hierarchy's start-ups, N"],
                 "zh": ["缓冲区", "节点数 N", "环，N − 1", "分层，N − 1", "环，N", "分层，N",
                        "环的启动开销，N", "分层的启动开销，N"]},
        rows=rows,
        formats={k: fmt_time for k in ("ring_before", "hier_before", "ring_at", "hier_at", "alpha_ring", "alpha_hier")},
        notes=bilingual_notes((
            "Times from the simulator; start-ups 2(p−1)α_IB for the ring, 2(G−1)α_NV + 2(N−1)α_IB for the hierarchy "
            "(α_NV = 1.5 µs, α_IB = 3 µs, napkin math 1.6's links).",
            "用时取自模拟器；启动开销：环为 2(p−1)α_IB，分层方案为 2(G−1)α_NV + 2(N−1)α_IB"
            "（α_NV = 1.5 µs，α_IB = 3 µs，即估算 1.6 的链路）。")),
        meta=d,
    )


# ============================================================================ in-network reduction
SHARP_SETTING = {"p": 8, "link": NVLINK4_CHAPTER, "versus": ("ring", "tree", "naive")}
"""Where Figure 9(c) compares in-switch reduction with software all-reduces: the 8 GPUs of
one node on one switch (the setting of the measured gain), NVLink 4.0 of Table 1."""


def sharp_curves(sizes, p: int = SHARP_SETTING["p"], link: Link = SHARP_SETTING["link"]) -> dict:
    """Closed-form time of each software all-reduce over in-switch reduction (α + n/β) at
    ``sizes``, and the large-message limits of :func:`~commbook.book.ch1.tier_budgets.sharp_ratio`."""
    sizes = np.asarray(sizes, dtype=float)
    innet = np.array([predict("all_reduce", "innet", p, n, link.alpha, link.beta) for n in sizes])
    out = {a: np.array([predict("all_reduce", a, p, n, link.alpha, link.beta) for n in sizes]) / innet
           for a in SHARP_SETTING["versus"]}
    return {"sizes": sizes, "ratio": out, "limit": {a: TB.sharp_ratio(p, a) for a in SHARP_SETTING["versus"]},
            "p": p, "link": link}


def sharp_sim(sizes, p: int = SHARP_SETTING["p"], link: Link = SHARP_SETTING["link"]) -> dict[str, np.ndarray]:
    """The same ratios from the simulator on ``Switch(p, link)``."""
    c = VirtualCluster(Switch(p, link))
    t = {a: np.array([coll.all_reduce(c, nbytes=float(n), algorithm=a).time for n in sizes])
         for a in (*SHARP_SETTING["versus"], "innet")}
    return {a: t[a] / t["innet"] for a in SHARP_SETTING["versus"]}

