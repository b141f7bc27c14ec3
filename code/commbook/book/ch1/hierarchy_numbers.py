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
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS, link_name

__all__ = ["CHAPTER_STATED", "TIERS", "Tiers", "tier_numbers", "tier_table", "nm16", "nm16_table",
           "three_tier", "three_tier_table", "WHERE_CASES", "where_cases", "where_table", "OVERTAKE_SIZES",
           "overtake", "overtake_table", "SHARP_SETTING", "sharp_curves", "sharp_sim"]

T = texts("ch1")
K = "hierarchy_numbers."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys)
_txs = _tx.pairs


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
    tiers = {"intra": _tx("in_the_node"), "inter": _tx("between_nodes")}
    return Table(
        key="ch1-tiers",
        title=_tx("bandwidth_tiers_of_a"),
        columns=["tier", "link", "one", "both", "ratio"],
        headers=_txs("tier", "link", "one_direction", "both_directions", "ratio_either_column"),
        rows=rows,
        formats={"one": lambda v: fmt_rate(v, 3), "both": lambda v: fmt_rate(v, 3), "ratio": fmt_ratio},
        labels={lang: {**{k: v[lang] for k, v in tiers.items()},
                       **{l.name: link_name(l, lang) for l in TIERS}} for lang in ("en", "zh")},
        notes=_txs("datasheets_give_nvlink_s"),
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
    "ring": _tx("nccl_s_ring_8"),
    "reduce_scatter": _tx("1_reduce_scatter_in"),
    "inter": _tx("2_all_reduce_across"),
    "all_gather": _tx("3_all_gather_in"),
    "total": _tx("hierarchical_total"),
    "slower": _tx("hierarchy_nccl_s_ring"),
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
    fmt = lambda v: fmt_ratio(v) if v > 1 else fmt_time(v, 4)
    return Table(
        key="ch1-nm16",
        title=_tx("napkin_math_1_6"),
        columns=["what", "chapter", "consistent"],
        headers=_txs("blank", "box_s_count_ring", "every_term_counted_simulator"),
        rows=rows,
        formats={"chapter": fmt, "consistent": fmt},
        labels={lang: {k: v[lang] for k, v in _NM16_ROWS.items()} for lang in ("en", "zh")},
        notes=_txs("nm16_note", nv=fmt_time(d["nv_alpha"], 3), ib=fmt_time(d["inter"].alpha, 3)),
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
    "node reduce-scatter": _tx("1_reduce_scatter_in_2"),
    "rail reduce-scatter": _tx("2_reduce_scatter_across"),
    "cross-rack all-reduce": _tx("3_all_reduce_across"),
    "rail all-gather": _tx("4_all_gather_across"),
    "node all-gather": _tx("5_all_gather_in"),
    "total_model": _tx("multi_level_total_closed"),
    "total_sim": _tx("multi_level_total_simulator"),
    "ring": _tx("nccl_s_ring_8_2"),
    "ring_no_pxn": _tx("the_same_8_channels"),
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
        title=_tx("three_tier_title", n=fmt_bytes(d["n"]), racks=topo.racks, nodes=topo.nodes_per_rack,
                 g=topo.gpus_per_node),
        columns=["what", "time"],
        headers=_txs("phase_or_schedule", "time"),
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
    "plain": _tx("8_8_one_nic"),
    "one_nic": _tx("8_8_one_nic_2"),
    "spine": _tx("8_8_2_1"),
    "spine_pxn": _tx("8_8_2_1_2"),
    "racks": _tx("4_racks_4_8"),
    "racks_no_pxn": _tx("4_racks_4_8_2"),
}


def where_table(cases: dict | None = None, n: float = 1 * GB) -> Table:
    """NCCL's ring against the hierarchy, case by case: channels, both times, their ratio."""
    cases = where_cases(n) if cases is None else cases
    rows = [{"case": k, "channels": v["channels"], "ring": v["ring"], "hier": v["hier"], "ratio": v["ratio"]}
            for k, v in cases.items()]
    return Table(
        key="ch1-where",
        title=_tx("where_title", n=fmt_bytes(n)),
        columns=["case", "channels", "ring", "hier", "ratio"],
        headers=_txs("cluster", "ring_channels", "nccl_s_ring", "hierarchy", "hierarchy_ring"),
        rows=rows,
        formats={"ring": fmt_time, "hier": fmt_time, "ratio": fmt_ratio},
        labels={lang: {k: v[lang] for k, v in _WHERE_NAMES.items()} for lang in ("en", "zh")},
        notes=_txs("simulator_8_8_nvlink"),
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
        title=_tx("where_the_hierarchy_overtakes"),
        columns=["n", "nodes", "ring_before", "hier_before", "ring_at", "hier_at", "alpha_ring", "alpha_hier"],
        headers=_txs("buffer", "nodes_n", "ring_n_1", "hierarchy_n_1", "ring_n", "hierarchy_n", "ring_s_start_ups", "hierarchy_s_start_ups"),
        rows=rows,
        formats={k: fmt_time for k in ("ring_before", "hier_before", "ring_at", "hier_at", "alpha_ring", "alpha_hier")},
        notes=_txs("times_from_the_simulator"),
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

