"""Chapter §1.5, what the page quotes of its two figures' runs: Figure 8's rail scheme
against the leader scheme (:func:`fig8_numbers`, from :func:`.hierarchy_figures.fig8_data`)
and Figure 9's in-network reduction (:func:`sharp_numbers`, from
:func:`.hierarchy_figures.fig9_runs` and :func:`.hierarchy_numbers.sharp_curves`).  Fields
carry their units (``_s``, ``_bytes``, ``_x``, ``_frac``; counts are ints).  The other
results of §1.5 are built where they are computed: :mod:`.hierarchy_numbers`,
:mod:`.hierarchy_where`, :mod:`.hierarchy_routing`.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..p5.allreduce import sharp_gain
from . import hierarchy_numbers as hn
from . import hierarchy_routing as hr
from . import tier_budgets as TB
from .hierarchy_figures import FIG9, Fig8Data

__all__ = ["Fig8", "fig8_numbers", "Sharp", "sharp_numbers"]

_ST = hn.CHAPTER_STATED


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


def fig8_numbers(d8: Fig8Data) -> Fig8:
    """From :func:`.hierarchy_figures.fig8_data`."""
    topo, ph = d8.topology, d8.phases
    nic = max(ph["rail all-reduce"]["nic"].values())
    lead = d8.nic["leader"]["gpu0.nic.out"]
    t = d8.times
    return Fig8(nodes=topo.nodes, g=topo.gpus_per_node, n_bytes=d8.n_bytes, nic_bytes=nic,
                total_s=t["hierarchical"], leader_s=t["leader"], lead_bytes=lead, lead_x=lead / nic,
                lead_slow_x=t["leader"] / t["hierarchical"], idle=topo.gpus_per_node - 1,
                drawn=_ST["fig8_gpus_drawn"])


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


def sharp_numbers(r9: dict, sc: hn.SharpCurves, q_p: int = 64, sc_p: int = 1024) -> Sharp:
    """From :func:`.hierarchy_figures.fig9_runs` and :func:`.hierarchy_numbers.sharp_curves`;
    the large-message limits again on ``q_p`` GPUs, and a flat ring's 2(p-1) start-ups on
    ``sc_p`` GPUs."""
    alpha = hr.RAILS["inter"].alpha
    n = FIG9["n"]
    naive = dict(zip(r9["naive"].link_names, (float(x) for x in r9["naive"].link_bytes)))
    lim = sc.limit
    return Sharp(p9=FIG9["leaves"] * FIG9["gpus_per_leaf"], leaves=FIG9["leaves"],
                 up_naive=naive["leaf1.up"] / n, gpu0=naive["gpu0.down"] / n, naive_s=r9["naive"].time,
                 innet_s=r9["innet"].time, p=sc.p, ring_x=lim["ring"], tree_x=lim["tree"], star_x=lim["naive"],
                 ring_small_x=sc.ratio["ring"][0], small_bytes=float(sc.sizes[0]), gain_frac=sharp_gain(),
                 pred_frac=lim["ring"] - 1, lo=_ST["sharp"][0], hi=_ST["sharp"][1], q_p=q_p,
                 q_ring_x=TB.sharp_ratio(q_p), q_tree_x=TB.sharp_ratio(q_p, "tree"),
                 q_star_x=TB.sharp_ratio(q_p, "naive"), sc_p=sc_p, sc_steps=2 * (sc_p - 1),
                 sc_lat_s=2 * (sc_p - 1) * alpha, sc_alpha_s=alpha)
