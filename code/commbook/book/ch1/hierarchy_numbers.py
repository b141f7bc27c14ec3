"""Chapter §1.5, the numbers and tables of the hierarchical all-reduce and of in-network
reduction: the bandwidth tiers, napkin math 1.6 in the chapter's convention and counted
consistently (= the simulator), the three-tier 128-GPU example with its assumptions, and
the speed-up of in-switch reduction over software all-reduces.

Times come from :class:`~commbook.comm_sim.VirtualCluster` or from closed forms the tests
hold equal to it; :mod:`commbook.collectives.tier_budgets` does the counting.  The routing
half of §1.5 (torus, rails, placement) is in :mod:`.hierarchy_routing`, the figures in
:mod:`.hierarchy_figures`.
"""
from __future__ import annotations

import numpy as np

from ... import collectives as coll
from ...collectives import predict, tier_budgets as TB
from ...collectives.ring import allreduce_ring
from ...collectives.tiers import tier_phases
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from ...topology import Switch, TwoLevel
from ...units import GB, fmt_time, ms
from ..tables import Table, bilingual, bilingual_notes, fmt_fixed, fmt_gbps, fmt_ratio
from .boxes import BOX_LINKS, link_name

__all__ = ["CHAPTER_STATED", "TIERS", "tier_numbers", "tier_table", "nm16", "nm16_table",
           "three_tier", "three_tier_table", "SHARP_SETTING", "sharp_curves", "sharp_sim"]

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
def tier_numbers() -> dict:
    """One direction and both directions of each tier, their ratio (the same either
    way), and the ratio that mixes the two conventions (NVLink's both-direction total over
    InfiniBand's one direction)."""
    nv, ib = TIERS
    return {"nv_one": nv.beta, "nv_both": 2 * nv.beta, "ib_one": ib.beta, "ib_both": 2 * ib.beta,
            "ratio": nv.beta / ib.beta, "ratio_both": (2 * nv.beta) / (2 * ib.beta),
            "mixed": 2 * nv.beta / ib.beta,
            "bars": CHAPTER_STATED["fig8_bars"][0] / CHAPTER_STATED["fig8_bars"][1]}


def tier_table() -> Table:
    """The bandwidth tiers: link, one direction, both directions, ratio to InfiniBand."""
    t = tier_numbers()
    rows = [{"tier": "intra", "link": TIERS[0].name, "one": t["nv_one"], "both": t["nv_both"],
             "ratio": t["ratio"]},
            {"tier": "inter", "link": TIERS[1].name, "one": t["ib_one"], "both": t["ib_both"], "ratio": 1.0}]
    tiers = {"intra": bilingual("in the node", "节点内"), "inter": bilingual("between nodes", "节点间")}
    return Table(
        key="ch1-tiers",
        title=bilingual("Bandwidth tiers of a GPU cluster", "GPU 集群的带宽层级"),
        columns=["tier", "link", "one", "both", "ratio"],
        headers={"en": ["Tier", "Link", "One direction", "Both directions", "Ratio (either column)"],
                 "zh": ["层级", "链路", "单向", "双向合计", "倍数（两列相同）"]},
        rows=rows,
        formats={"one": fmt_gbps, "both": fmt_gbps, "ratio": fmt_ratio(0)},
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
    :data:`commbook.collectives.tier_budgets.CONVENTIONS`, with the box's InfiniBand link
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
    return {**inputs, "p": inputs["nodes"] * inputs["gpus_per_node"], "nv_alpha": NVLINK4_CHAPTER.alpha,
            "chapter": b["chapter"], "consistent": b["consistent"], "sim": sim, "sim_phases": phases}


_NM16_ROWS = {
    "flat": bilingual("flat ring over all 64 GPUs", "64 块 GPU 连成的扁平环"),
    "reduce_scatter": bilingual("1. reduce-scatter in the node (NVLink)", "1. 节点内 reduce-scatter（NVLink）"),
    "inter": bilingual("2. all-reduce across nodes on each rail (InfiniBand)", "2. 各条轨道上的跨节点 all-reduce（InfiniBand）"),
    "all_gather": bilingual("3. all-gather in the node (NVLink)", "3. 节点内 all-gather（NVLink）"),
    "total": bilingual("hierarchical, total", "分层方案合计"),
    "speedup": bilingual("speed-up", "加速比"),
}


def nm16_table(d: dict | None = None) -> Table:
    """Napkin math 1.6 side by side: the box's count and the consistent one (= simulator)."""
    d = nm16() if d is None else d
    a, b = d["chapter"], d["consistent"]
    rows = [{"what": k, "chapter": getattr(a, k), "consistent": getattr(b, k)} for k in _NM16_ROWS]
    fmt = lambda v: f"{v:.2f}×" if v > 1 else f"{v / ms:.3f} ms"
    return Table(
        key="ch1-nm16",
        title=bilingual("Napkin math 1.6 counted two ways (8 nodes × 8 GPUs, 1 GB)",
                        "估算 1.6 的两种算法（8 个节点 × 8 块 GPU，1 GB）"),
        columns=["what", "chapter", "consistent"],
        headers={"en": ["", "Flat ring as 2M/β, no NVLink α", "Every term counted (= simulator)"],
                 "zh": ["", "扁平环按 2M/β 计，不计 NVLink 的 α", "每一项都计入（= 模拟器）"]},
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
    :func:`commbook.collectives.tier_budgets.three_tier_example`, with the time of every
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
    "flat": bilingual("flat ring, ranks in order", "扁平环，rank 按顺序排"),
    "flat_aligned": bilingual("flat ring, rail-aligned order", "扁平环，按轨道对齐的顺序"),
}


def three_tier_table(d: dict | None = None) -> Table:
    """The three-tier example: every phase, both totals, both flat rings."""
    d = three_tier() if d is None else d
    rows = [{"what": k, "time": t} for k, t in d["phases"]]
    rows += [{"what": "total_model", "time": d["model"]}, {"what": "total_sim", "time": d["sim"]},
             {"what": "flat", "time": d["flat"]}, {"what": "flat_aligned", "time": d["flat_aligned"]}]
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
        formats={"time": fmt_fixed(ms, 2, " ms")},
        labels={lang: {k: v[lang] for k, v in _TIER_PHASE.items()} for lang in ("en", "zh")},
        meta=d,
    )


# ============================================================================ in-network reduction
SHARP_SETTING = {"p": 8, "link": NVLINK4_CHAPTER, "versus": ("ring", "tree", "naive")}
"""Where Figure 9(c) compares in-switch reduction with software all-reduces: the 8 GPUs of
one node on one switch (the setting of the measured gain), NVLink 4.0 of Table 1."""


def sharp_curves(sizes, p: int = SHARP_SETTING["p"], link: Link = SHARP_SETTING["link"]) -> dict:
    """Closed-form time of each software all-reduce over in-switch reduction (α + n/β) at
    ``sizes``, and the large-message limits of :func:`~commbook.collectives.tier_budgets.sharp_ratio`."""
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

