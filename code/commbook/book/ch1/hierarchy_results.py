"""Chapter §1.5, the numbers its prose quotes, one typed result per section: every field
carries its unit in its name (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``; counts are
ints), so the page glues a result whole with :func:`commbook.book.glue.glue_fields`.

Each function reads the runs of :mod:`.hierarchy_numbers`, :mod:`.hierarchy_routing` and
:mod:`.hierarchy_figures` (which the tables and figures share) and derives here what the
page used to work out by hand: ratios, differences, a chosen row's value.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...topology import Torus
from ...units import fmt_ratio, ms
from ..p5.allreduce import sharp_gain
from . import hierarchy_numbers as hn
from . import hierarchy_routing as hr
from . import tier_budgets as TB
from .hierarchy_figures import FIG9

__all__ = ["Fig8", "fig8_numbers", "Nm16", "nm16_numbers", "ThreeTier", "three_tier_numbers",
           "Where", "where_numbers", "Sharp", "sharp_numbers", "TorusNumbers", "torus_numbers",
           "Rails", "rail_numbers"]

_ST = hn.CHAPTER_STATED


def _printed(key: str) -> str:
    """Napkin math 1.6's printed milliseconds as the chapter prints them."""
    value, decimals = _ST["nm16"][key]
    return f"{value / ms:,.{decimals}f}"


# ============================================================================ Figure 8
@dataclass(frozen=True)
class Fig8:
    """Figure 8's rail scheme against the leader scheme."""
    nodes: int
    g: int
    n_bytes: float
    nic_bytes: float          # what each GPU sends through its card in the rail phase
    total_s: float            # the rail-based hierarchical all-reduce
    leader_s: float           # the leader-based one
    lead_bytes: float         # through the leader's card
    lead_x: float             # the leader's bytes over a rail card's
    lead_slow_x: float
    idle: int                 # cards idle under the leader scheme
    drawn: int                # GPUs the chapter draws in each "8-GPU" node


def fig8_numbers(d8: dict) -> Fig8:
    """From :func:`.hierarchy_figures.fig8_data`."""
    topo, ph = d8["topology"], d8["phases"]
    nic = max(ph["rail all-reduce"]["nic"].values())
    lead = d8["nic"]["leader"]["gpu0.nic.out"]
    t = d8["times"]
    return Fig8(nodes=topo.nodes, g=topo.gpus_per_node, n_bytes=d8["n"], nic_bytes=nic,
                total_s=t["hierarchical"], leader_s=t["leader"], lead_bytes=lead, lead_x=lead / nic,
                lead_slow_x=t["leader"] / t["hierarchical"], idle=topo.gpus_per_node - 1,
                drawn=_ST["fig8_gpus_drawn"])


# ============================================================================ napkin math 1.6
@dataclass(frozen=True)
class Nm16:
    """Napkin math 1.6: the box's count (``chapter``), every term counted (``c_``), NCCL's
    ring, and the chapter's printed values (``pr_``, text as printed)."""
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


def nm16_numbers(nm: dict) -> Nm16:
    """From :func:`.hierarchy_numbers.nm16`."""
    b, c, r = nm["chapter"], nm["consistent"], nm["ring"]
    N, G, n, p, ib = nm["nodes"], nm["gpus_per_node"], nm["n"], nm["p"], nm["inter"]
    return Nm16(
        nodes=N, g=G, p=p, n_bytes=n, ib_beta_Bps=ib.beta, nv_beta_Bps=nm["intra"].beta, alpha_s=ib.alpha,
        nv_alpha_s=nm["nv_alpha"], rs_bytes=(G - 1) / G * n, shard_bytes=n / G, steps=2 * (N - 1),
        flat_s=b.flat, rs_s=b.reduce_scatter, inter_s=b.inter, inter_bw_s=b.inter - 2 * (N - 1) * ib.alpha,
        total_s=b.total, speedup_x=b.speedup, nv_phases_s=2 * b.reduce_scatter,
        c_flat_s=c.flat, c_inter_s=c.inter, c_total_s=c.total, c_x=c.speedup,
        gap_frac=abs(c.speedup / b.speedup - 1), k=int(r["channels"]),
        ring_nic_bytes=2 * (p - 1) / p * n / G, ring_bw_s=r["bandwidth"], c_ring_s=r["sim"],
        slower_x=b.total / r["bandwidth"], c_slower_x=c.total / r["sim"],
        pr_rs=_printed("rs"), pr_inter=_printed("inter"), pr_total=_printed("total"), pr_flat=_printed("flat"),
        pr_x=fmt_ratio(_ST["nm16"]["speedup"][0]))


# ============================================================================ three tiers
@dataclass(frozen=True)
class ThreeTier:
    """The 128-GPU three-tier example against NCCL's ring and the chapter's 15 and 160 ms."""
    racks: int
    nodes: int
    g: int
    os: str                   # the rack oversubscription, "2:1"
    n_bytes: float
    reduction: int            # G × nodes per rack: the cut in cross-rack bytes
    payload_bytes: float
    model_s: float
    flat_s: float
    aligned_s: float
    flat_x: float             # the flat ring over the multi-level schedule
    aligned_x: float
    k: int
    ring_s: float
    ring_x: float             # the multi-level schedule over NCCL's ring
    ring_nopxn_s: float
    spine_Bps: float
    for_160_Bps: float
    for_160_frac: float
    printed_hier_s: float
    printed_flat_s: float


def three_tier_numbers(tt: dict) -> ThreeTier:
    """From :func:`.hierarchy_numbers.three_tier`."""
    topo = tt["topology"]
    return ThreeTier(
        racks=topo.racks, nodes=topo.nodes_per_rack, g=topo.gpus_per_node,
        os=f"{topo.rack_oversubscription:g}:1", n_bytes=tt["n"], reduction=round(tt["reduction"]),
        payload_bytes=tt["cross_rack_payload"], model_s=tt["model"], flat_s=tt["flat"],
        aligned_s=tt["flat_aligned"], flat_x=tt["flat"] / tt["model"], aligned_x=tt["flat_aligned"] / tt["model"],
        k=int(tt["channels"]), ring_s=tt["ring"], ring_x=tt["model"] / tt["ring"], ring_nopxn_s=tt["ring_no_pxn"],
        spine_Bps=tt["spine_share"], for_160_Bps=tt["beta_for_160"],
        for_160_frac=tt["beta_for_160"] / topo.inter.beta,
        printed_hier_s=_ST["three_tier"]["hier"], printed_flat_s=_ST["three_tier"]["flat"])


# ============================================================================ where it wins
@dataclass(frozen=True)
class Where:
    """Where the hierarchy overtakes NCCL's ring (1 GB and 64 MB) and the six clusters."""
    n1_bytes: float
    nodes1: int
    p1: int
    a_ring_s: float           # the ring's start-ups at that node count
    a_hier_s: float
    nodes0: int
    n0_bytes: float
    one_x: float              # ring over hierarchy with one NIC per node
    one_k: int
    spine_s: float
    spine_h_s: float
    spine_pxn_s: float
    racks_x: float
    racks_np_x: float


def where_numbers(ov: dict, wc: dict, big: float, small: float) -> Where:
    """From :func:`.hierarchy_numbers.overtake` (buffers ``big`` and ``small``) and
    :func:`.hierarchy_numbers.where_cases`."""
    b, s = ov[big], ov[small]
    return Where(n1_bytes=big, nodes1=b["nodes"], p1=b["gpus"], a_ring_s=b["alpha_ring"], a_hier_s=b["alpha_hier"],
                 nodes0=s["nodes"], n0_bytes=small, one_x=1 / wc["one_nic"]["ratio"],
                 one_k=int(wc["one_nic"]["channels"]), spine_s=wc["spine"]["ring"], spine_h_s=wc["spine"]["hier"],
                 spine_pxn_s=wc["spine_pxn"]["ring"], racks_x=wc["racks"]["ratio"],
                 racks_np_x=1 / wc["racks_no_pxn"]["ratio"])


# ============================================================================ in-network reduction
@dataclass(frozen=True)
class Sharp:
    """Figure 9: the naive tree's bytes (multiples of M) and times, and the closed-form
    speed-ups of in-switch reduction with the measured NVLink SHARP gain."""
    p9: int
    leaves: int
    up_naive: float           # bytes up leaf 1's uplink, multiples of M
    gpu0: float               # bytes down to GPU 0, multiples of M
    naive_s: float
    innet_s: float
    p: int
    ring_x: float
    tree_x: float
    star_x: float
    ring_small_x: float
    small_bytes: float
    gain_frac: float
    pred_frac: float
    lo: float                 # the chapter's "2–3×"
    hi: float
    q_p: int                  # the check-yourself cluster
    q_ring_x: float
    q_tree_x: float
    q_star_x: float
    sc_p: int                 # a ring's start-ups at scale, on the rail examples' InfiniBand
    sc_steps: int
    sc_lat_s: float
    sc_alpha_s: float


def sharp_numbers(r9: dict, sc: dict, q_p: int = 64, sc_p: int = 1024) -> Sharp:
    """From :func:`.hierarchy_figures.fig9_runs` and :func:`.hierarchy_numbers.sharp_curves`;
    the large-message limits again on ``q_p`` GPUs, and a flat ring's 2(p-1) start-ups on
    ``sc_p`` GPUs."""
    alpha = hr.RAILS["inter"].alpha
    n = FIG9["n"]
    naive = dict(zip(r9["naive"].link_names, (float(x) for x in r9["naive"].link_bytes)))
    lim = sc["limit"]
    return Sharp(p9=FIG9["leaves"] * FIG9["gpus_per_leaf"], leaves=FIG9["leaves"],
                 up_naive=naive["leaf1.up"] / n, gpu0=naive["gpu0.down"] / n, naive_s=r9["naive"].time,
                 innet_s=r9["innet"].time, p=sc["p"], ring_x=lim["ring"], tree_x=lim["tree"], star_x=lim["naive"],
                 ring_small_x=sc["ratio"]["ring"][0], small_bytes=float(sc["sizes"][0]), gain_frac=sharp_gain(),
                 pred_frac=lim["ring"] - 1, lo=_ST["sharp"][0], hi=_ST["sharp"][1], q_p=q_p,
                 q_ring_x=TB.sharp_ratio(q_p), q_tree_x=TB.sharp_ratio(q_p, "tree"),
                 q_star_x=TB.sharp_ratio(q_p, "naive"), sc_p=sc_p, sc_steps=2 * (sc_p - 1),
                 sc_lat_s=2 * (sc_p - 1) * alpha, sc_alpha_s=alpha)


# ============================================================================ torus
@dataclass(frozen=True)
class TorusNumbers:
    """The torus runs of :func:`.hierarchy_routing.torus_runs`: steps, bytes per chip
    (multiples of M) and times of the flat ring, the decomposition and full rings."""
    dims: str
    p: int
    flat_steps: int
    dim_steps: int
    steps_x: float
    sent_m: float             # each chip sends this · M (the decomposition = the flat ring)
    rings_m: float            # full rings per dimension
    more_frac: float
    small_bytes: float
    large_bytes: float
    flat_s: float             # at the small size
    dim_s: float
    rings_slow_x: float       # full rings over the decomposition at the large size
    mesh_s: float | None      # the decomposition without wraparound links, small size (None: not run)
    hops: int                 # a mesh ring's closing message
    link: str
    v5e_axis: int             # a v5e axis wraps around only at this size
    ports: int                # direct neighbours of a chip


def torus_numbers(tor: dict, dims=hr.TORUS["dims"], sizes=hr.TORUS["sizes"], mesh: dict | None = None) -> TorusNumbers:
    """From :func:`.hierarchy_routing.torus_runs` on ``dims`` at ``sizes`` (and its run
    without wraparound links, ``mesh``)."""
    fl, td, rg = tor["flat"], tor["torus"], tor["torus_rings"]
    p = 1
    for d in dims:
        p *= d
    return TorusNumbers(dims="×".join(map(str, dims)), p=p, flat_steps=fl["steps"], dim_steps=td["steps"],
                 steps_x=fl["steps"] / td["steps"], sent_m=td["bytes"], rings_m=rg["bytes"],
                 more_frac=rg["bytes"] / td["bytes"] - 1, small_bytes=sizes[0], large_bytes=sizes[-1],
                 flat_s=fl["times"][0], dim_s=td["times"][0], rings_slow_x=rg["times"][-1] / td["times"][-1],
                 mesh_s=mesh["torus"]["times"][0] if mesh is not None else None, hops=dims[0] - 1,
                 link=hr.TORUS["link"].name, v5e_axis=hr.V5E_WRAP_AXIS,
                 ports=Torus(dims, hr.TORUS["link"]).ports_per_device)


# ============================================================================ rails and NICs
@dataclass(frozen=True)
class Rails:
    """The rail table's first rail, the NIC cases and the placements of §1.5's routing."""
    nodes: int
    g: int
    p: int
    n_bytes: float
    payload_bytes: float
    rail_bytes: float
    share: str                # "1/8"
    one_nic_x: float
    two_per_nic_x: float
    misaligned_spine_x: float
    affinity2_x: float
    affinity4_x: float
    affinity2_whole_x: float
    affinity4_whole_x: float
    aligned_s: float
    one_nic_s: float
    os: str                   # the oversubscribed spine, "2:1"
    plain_s: float            # a flat ring, any placement, plain cluster
    shared_rr_s: float
    spine_order_s: float
    spine_x: float            # rank order over snake on the 2:1 spine
    mm_lo: float              # the chapter's "2–4×"
    mm_hi: float


def rail_numbers(rows: list[dict], nc: dict, pl: dict) -> Rails:
    """From :func:`.hierarchy_routing.rail_rows`, :func:`~.hierarchy_routing.nic_cases`
    and :func:`~.hierarchy_routing.placements`."""
    R = hr.RAILS
    return Rails(nodes=R["nodes"], g=R["gpus_per_node"], p=R["nodes"] * R["gpus_per_node"], n_bytes=R["n"],
                 payload_bytes=rows[0]["payload"], rail_bytes=rows[0]["bytes"], share=f"1/{round(1 / rows[0]['share'])}",
                 one_nic_x=nc["one_nic"]["x_bw"], two_per_nic_x=nc["two_per_nic"]["x_bw"],
                 misaligned_spine_x=nc["misaligned_spine"]["x_bw"], affinity2_x=nc["affinity2"]["x_bw"],
                 affinity4_x=nc["affinity4"]["x_bw"], affinity2_whole_x=nc["affinity2"]["x_whole"],
                 affinity4_whole_x=nc["affinity4"]["x_whole"], aligned_s=nc["aligned"]["inter"],
                 one_nic_s=nc["one_nic"]["inter"], os=f"{hr.CLUSTERS['spine']['spine_oversubscription']:g}:1",
                 plain_s=pl["plain"]["order"], shared_rr_s=pl["shared"]["round_robin"],
                 spine_order_s=pl["spine"]["order"], spine_x=pl["spine"]["order"] / pl["spine"]["snake"],
                 mm_lo=_ST["mismatch"][0], mm_hi=_ST["mismatch"][1])
