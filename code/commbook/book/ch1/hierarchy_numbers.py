"""Chapter §1.5, the numbers and tables of the hierarchical all-reduce and of in-network
reduction: the bandwidth tiers, napkin math 1.6 in the chapter's convention and counted
consistently (= the simulator), both against the ring NCCL runs (one channel per NIC,
PXN), the three-tier 128-GPU example with its assumptions, and the speed-up of in-switch
reduction over software all-reduces; each builder returns the typed result (fields named
with their units) that the page glues and the table reads.  Where the hierarchy still beats
NCCL's ring and where it does not is in :mod:`.hierarchy_where`.

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
from ...collectives.registry import t_allreduce_tiers
from ...topology import Switch, TwoLevel
from ...topology import ThreeTier as ThreeTierTopology
from ...units import GB, fmt_bytes, fmt_rate, fmt_ratio, fmt_time, ms
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS, link_name

__all__ = ["CHAPTER_STATED", "TIERS", "tier_table", "Nm16", "nm16", "nm16_table",
           "ThreeTier", "three_tier", "three_tier_table", "SHARP_SETTING", "SharpCurves", "sharp_curves", "sharp_sim"]

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
def tier_table() -> Table:
    """The bandwidth tiers: link, one direction, both directions, ratio to InfiniBand."""
    ib = TIERS[1].beta
    rows = [{"tier": tier, "link": l.name, "one": l.beta, "both": 2 * l.beta, "ratio": l.beta / ib}
            for tier, l in zip(("intra", "inter"), TIERS)]
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
    )


# ============================================================================ napkin math 1.6
def _printed(key: str) -> str:
    """Napkin math 1.6's printed milliseconds as the chapter prints them."""
    value, decimals = CHAPTER_STATED["nm16"][key]
    return f"{value / ms:,.{decimals}f}"


@dataclass(frozen=True)
class Nm16:
    """Napkin math 1.6: the box's count (``chapter``, its times as ``*_s``), every term
    counted (``consistent``, = the simulator ``sim``/``sim_phases``; ``c_``), NCCL's ring
    (``ring_bw_s`` its bandwidth term, ``c_ring_s`` simulated), and the chapter's printed
    values (``pr_``, text as printed)."""
    chapter: TB.HierBudget
    consistent: TB.HierBudget
    inter: Link
    sim: dict
    sim_phases: dict
    ring: dict
    nodes: int
    g: int
    p: int
    n_bytes: float
    ib_beta_Bps: float
    nv_beta_Bps: float
    alpha_s: float
    nv_alpha_s: float
    rs_bytes: float           # each GPU's reduce-scatter in the node, (G-1)/G · M
    shard_bytes: float        # M/G
    steps: int                # 2(N-1) start-ups of the inter-node ring
    flat_s: float
    rs_s: float
    inter_s: float
    inter_bw_s: float         # the inter-node phase without its start-ups
    total_s: float
    speedup_x: float
    nv_phases_s: float        # both NVLink phases
    c_flat_s: float
    c_inter_s: float
    c_total_s: float
    c_x: float
    gap_frac: float           # the consistent speed-up against the box's
    k: int                    # NCCL's ring channels
    ring_nic_bytes: float     # 2(p-1)/p · M/G through each card
    ring_bw_s: float
    c_ring_s: float
    slower_x: float           # hierarchy ÷ ring, the box's count
    c_slower_x: float
    pr_rs: str
    pr_inter: str
    pr_total: str
    pr_flat: str
    pr_x: str


def nm16() -> Nm16:
    """Napkin math 1.6 (8 nodes x 8 GPUs, 1 GB) in both conventions of
    :data:`commbook.book.ch1.tier_budgets.CONVENTIONS`, with the box's InfiniBand link
    from :data:`.boxes.BOX_LINKS`, and the simulator on ``TwoLevel(8, 8)`` (which the
    consistent count equals), against the ring NCCL runs (one channel per NIC, PXN).

    >>> nm16().k
    8
    """
    ib, N, G, n = BOX_LINKS["nm1.6"], TB.NM_1_6["nodes"], TB.NM_1_6["gpus_per_node"], TB.NM_1_6["n"]
    p, budgets = N * G, TB.napkin_1_6(inter=ib)
    b, c = budgets["chapter"], budgets["consistent"]
    topo = TwoLevel(N, G, NVLINK4_CHAPTER, ib)
    vc = VirtualCluster(topo)
    sim = {"flat": coll.all_reduce(vc, nbytes=n, channels=1).time,
           "hier": coll.all_reduce(vc, nbytes=n, algorithm="hierarchical").time}
    phases = {name: vc.run(r).time for name, r in tier_phases(topo, n, True, allreduce_ring)}
    pxn = TwoLevel(N, G, NVLINK4_CHAPTER, ib, pxn=True)
    bw_only = TwoLevel(N, G, TB.NM_1_6["intra"], Link(ib.name, 0.0, ib.beta, "napkin math 1.6 without α"), pxn=True)
    ring = {"sim": coll.all_reduce(VirtualCluster(pxn), nbytes=n).time, "model": ring_time_two_level(pxn, n),
            "bandwidth": ring_time_two_level(bw_only, n), "channels": pxn.ring_channels(np.arange(p))}
    return Nm16(
        chapter=b, consistent=c, inter=ib, sim=sim, sim_phases=phases, ring=ring, nodes=N, g=G, p=p, n_bytes=n,
        ib_beta_Bps=ib.beta, nv_beta_Bps=TB.NM_1_6["intra"].beta, alpha_s=ib.alpha, nv_alpha_s=NVLINK4_CHAPTER.alpha,
        rs_bytes=(G - 1) / G * n, shard_bytes=n / G, steps=2 * (N - 1), flat_s=b.flat, rs_s=b.reduce_scatter,
        inter_s=b.inter, inter_bw_s=b.inter - 2 * (N - 1) * ib.alpha, total_s=b.total, speedup_x=b.speedup,
        nv_phases_s=2 * b.reduce_scatter, c_flat_s=c.flat, c_inter_s=c.inter, c_total_s=c.total, c_x=c.speedup,
        gap_frac=abs(c.speedup / b.speedup - 1), k=int(ring["channels"]), ring_nic_bytes=2 * (p - 1) / p * n / G,
        ring_bw_s=ring["bandwidth"], c_ring_s=ring["sim"], slower_x=b.total / ring["bandwidth"],
        c_slower_x=c.total / ring["sim"], pr_rs=_printed("rs"), pr_inter=_printed("inter"),
        pr_total=_printed("total"), pr_flat=_printed("flat"), pr_x=fmt_ratio(CHAPTER_STATED["nm16"]["speedup"][0]))



def nm16_table(d: Nm16 | None = None) -> Table:
    """Napkin math 1.6 side by side: NCCL's ring and the three phases as the box counts them
    (the ring's bandwidth term, NVLink without α) and with every term (= simulator)."""
    d = nm16() if d is None else d
    rows = [{"what": "ring", "chapter": d.ring_bw_s, "consistent": d.c_ring_s}]
    rows += [{"what": k, "chapter": getattr(d.chapter, k), "consistent": getattr(d.consistent, k)}
             for k in ("reduce_scatter", "inter", "all_gather", "total")]
    rows.append({"what": "slower", "chapter": d.slower_x, "consistent": d.c_slower_x})
    fmt = lambda v: fmt_ratio(v) if v > 1 else fmt_time(v, 4)
    return Table(
        key="ch1-nm16",
        title=_tx("napkin_math_1_6"),
        columns=["what", "chapter", "consistent"],
        headers=_txs("blank", "box_s_count_ring", "every_term_counted_simulator"),
        rows=rows,
        formats={"chapter": fmt, "consistent": fmt},
        labels=T.labels(K + "nm16."),
        notes=_txs("nm16_note", nv=fmt_time(d.nv_alpha_s, 3), ib=fmt_time(d.alpha_s, 3)),
        meta=d,
    )


# ============================================================================ three tiers
@dataclass(frozen=True)
class ThreeTier:
    """The 128-GPU three-tier example: every phase (``phases``: (name, s)), the multi-level
    schedule by its closed form (``model_s``) and the simulator (``sim_s``), NCCL's ring with
    and without PXN, the flat ring in rank order and rail-aligned, against the chapter's 15
    and 160 ms."""
    topology: object
    phases: tuple
    racks: int
    nodes: int
    g: int
    os: str                   # the rack oversubscription, "2:1"
    n_bytes: float
    reduction: int            # G × nodes per rack: the cut in cross-rack bytes
    payload_bytes: float
    model_s: float
    sim_s: float
    flat_s: float
    aligned_s: float
    flat_x: float             # the flat ring over the multi-level schedule
    aligned_x: float
    k: int
    ring_s: float
    ring_model_s: float
    ring_x: float             # the multi-level schedule over NCCL's ring
    ring_nopxn_s: float
    spine_Bps: float
    for_160_Bps: float        # the per-hop β a flat ring would need to take 160 ms
    for_160_frac: float
    printed_hier_s: float
    printed_flat_s: float


def three_tier(n: float = 1 * GB, racks: int = 4, nodes_per_rack: int = 4, gpus_per_node: int = 8,
               intra: Link = NVLINK4_CHAPTER, inter: Link = IB_NDR_CHAPTER, oversubscription: float = 2.0) -> ThreeTier:
    """The chapter's 128-GPU example (4 racks x 4 nodes x 8 GPUs, 2:1 between racks), with the
    assumptions it leaves out made explicit: M = 1 GB (as napkin math 1.6), the links of
    Table 1 (spine links = ``inter``).  The multi-level all-reduce by the closed form and by
    the simulator, phase by phase; the ring NCCL runs (one channel per NIC, PXN: simulated
    on ``ThreeTier(..., pxn=True)`` and by its closed form
    :func:`~commbook.collectives.channels.ring_time_two_level`; without PXN each channel's
    hop between nodes changes rails); the single flat ring in rank order (its node-crossing
    hops cross the spine) and rail-aligned (snake order); the bytes per GPU that cross racks
    (from ``link_bytes``); and the per-hop β a flat ring would need to take the chapter's 160 ms.

    >>> three_tier().reduction
    32
    """
    if racks < 2:
        raise ValueError(f"racks: the example crosses racks, so it needs at least 2 (got {racks})")
    topo = ThreeTierTopology(racks, nodes_per_rack, gpus_per_node, intra, inter,
                             rack_oversubscription=oversubscription)
    pxn = ThreeTierTopology(racks, nodes_per_rack, gpus_per_node, intra, inter,
                            rack_oversubscription=oversubscription, pxn=True)
    c, st, p, G = VirtualCluster(topo), CHAPTER_STATED["three_tier"], topo.p, gpus_per_node
    hier = coll.all_reduce(c, nbytes=n, algorithm="tiers")
    phases = tuple((name, c.run(r).time) for name, r in tier_phases(topo, n, True, allreduce_ring))
    snake = np.concatenate([np.arange(G)[::(-1) ** a] + a * G for a in range(topo.nodes)])
    spine_up = sum(float(b) for name, b in zip(hier.link_names, hier.link_bytes) if "leaf" in name and name.endswith(".up"))
    payload = spine_up / p / (2 * (racks - 1) / racks)            # bytes per GPU through the spine, per M
    model, flat = t_allreduce_tiers(topo, n), coll.all_reduce(c, nbytes=n, channels=1).time
    aligned, ring = coll.all_reduce(c, nbytes=n, ranks=snake).time, coll.all_reduce(VirtualCluster(pxn), nbytes=n).time
    b160 = 2 * (p - 1) / p * n / (st["flat"] - 2 * (p - 1) * inter.alpha)
    return ThreeTier(
        topology=topo, phases=phases, racks=racks, nodes=nodes_per_rack, g=G, os=f"{oversubscription:g}:1",
        n_bytes=n, reduction=round(n / payload), payload_bytes=payload, model_s=model, sim_s=hier.time, flat_s=flat,
        aligned_s=aligned, flat_x=flat / model, aligned_x=aligned / model, k=int(pxn.ring_channels(np.arange(p))),
        ring_s=ring, ring_model_s=ring_time_two_level(pxn, n), ring_x=model / ring,
        ring_nopxn_s=coll.all_reduce(c, nbytes=n).time, spine_Bps=topo.tier_links()[-1].beta, for_160_Bps=b160,
        for_160_frac=b160 / inter.beta, printed_hier_s=st["hier"], printed_flat_s=st["flat"])



def three_tier_table(d: ThreeTier | None = None) -> Table:
    """The three-tier example: every phase, both totals, both flat rings."""
    d = three_tier() if d is None else d
    rows = [{"what": k, "time": t} for k, t in d.phases]
    rows += [{"what": "total_model", "time": d.model_s}, {"what": "total_sim", "time": d.sim_s},
             {"what": "ring", "time": d.ring_s}, {"what": "ring_no_pxn", "time": d.ring_nopxn_s}]
    return Table(
        key="ch1-three-tier",
        title=_tx("three_tier_title", n=fmt_bytes(d.n_bytes), racks=d.racks, nodes=d.nodes, g=d.g),
        columns=["what", "time"],
        headers=_txs("phase_or_schedule", "time"),
        rows=rows,
        formats={"time": fmt_time},
        labels=T.labels(K + "tier."),
        meta=d,
    )


# ============================================================================ in-network reduction
SHARP_SETTING = {"p": 8, "link": NVLINK4_CHAPTER, "versus": ("ring", "tree", "naive")}
"""Where Figure 9(c) compares in-switch reduction with software all-reduces: the 8 GPUs of
one node on one switch (the setting of the measured gain), NVLink 4.0 of Table 1."""


@dataclass(frozen=True)
class SharpCurves:
    """:func:`sharp_curves` on ``p`` GPUs: the sizes, each software all-reduce's time over
    in-switch reduction there (``ratio[algorithm]``), and their large-message limits."""
    p: int
    sizes: np.ndarray
    ratio: dict
    limit: dict


def sharp_curves(sizes, p: int = SHARP_SETTING["p"], link: Link = SHARP_SETTING["link"]) -> SharpCurves:
    """Closed-form time of each software all-reduce over in-switch reduction (α + n/β) at
    ``sizes``, and the large-message limits of :func:`~commbook.book.ch1.tier_budgets.sharp_ratio`."""
    sizes = np.asarray(sizes, dtype=float)
    innet = np.array([predict("all_reduce", "innet", p, n, link.alpha, link.beta) for n in sizes])
    out = {a: np.array([predict("all_reduce", a, p, n, link.alpha, link.beta) for n in sizes]) / innet
           for a in SHARP_SETTING["versus"]}
    return SharpCurves(p, sizes, out, {a: TB.sharp_ratio(p, a) for a in SHARP_SETTING["versus"]})


def sharp_sim(sizes, p: int = SHARP_SETTING["p"], link: Link = SHARP_SETTING["link"]) -> dict[str, np.ndarray]:
    """The same ratios from the simulator on ``Switch(p, link)``."""
    c = VirtualCluster(Switch(p, link))
    t = {a: np.array([coll.all_reduce(c, nbytes=float(n), algorithm=a).time for n in sizes])
         for a in (*SHARP_SETTING["versus"], "innet")}
    return {a: t[a] / t["innet"] for a in SHARP_SETTING["versus"]}

