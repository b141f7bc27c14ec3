"""The numbers of P5 §3 (topologies) as typed results for
:func:`commbook.book.glue.glue_fields`: the shape of a topology (ports, diameter, bisection),
a DGX SuperPOD's wiring as the chapter states it, the point-to-point times of demo 01-3 and
one message on a ring with a given hop cost."""
from __future__ import annotations

from dataclasses import dataclass
from inspect import signature
from typing import Sequence

from ...collectives import send_recv
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, NVLINK4, Link
from ...topology import Topology, Torus, TwoLevel
from ..tables import Table

__all__ = ["Shape", "shape_of", "shape_row", "SuperPod", "superpod", "P2P", "p2p_numbers", "HopMessage",
           "hop_message"]


@dataclass(frozen=True)
class Shape:
    """A topology of ``p`` devices (``name``: its dimensions, e.g. "8×8"): ports per device,
    diameter in hops, bisection bandwidth, that bandwidth per device of one half (bisection
    / (p/2), over ``pairs`` = p/2 devices) and in links of β."""

    name: str
    p: int
    pairs: int
    ports: int
    diameter: int
    bisection_Bps: float
    per_device_Bps: float
    links: int


def _shape(name: str, p: int, ports: int, diameter: int, bisection: float, beta: float) -> Shape:
    return Shape(name, p, p // 2, ports, diameter, bisection, bisection / (p // 2), round(bisection / beta))


def shape_of(topo: Topology, beta: float) -> Shape:
    """:class:`Shape` of a topology object (``beta``: the link that counts bisection links)."""
    name = "×".join(map(str, topo.dims)) if isinstance(topo, Torus) else type(topo).__name__
    return _shape(name, topo.p, topo.ports_per_device, topo.diameter, topo.bisection_bandwidth, beta)


def shape_row(row: dict, p: int, beta: float) -> Shape:
    """:class:`Shape` of one row of demo 01-2 (its name: the row's last word)."""
    return _shape(row["topology"].split()[-1], p, row["ports"], row["diameter"], row["bisection"], beta)


@dataclass(frozen=True)
class SuperPod:
    """A DGX SuperPOD of ``gpus`` H100 (How to Scale Your Model ch. 12): ``nodes`` of ``gpn``
    GPUs in ``sus`` scalable units of ``su_nodes`` nodes (``su_gpus`` GPUs), one leaf per
    rail (``leaves_per_su`` per unit, ``leaves`` in all, ``per_leaf`` NICs under each) and
    ``spines`` spines taking the ``uplinks`` (``spine_ports`` each) of a full bisection;
    the bisection bandwidth across the ``half`` of the GPUs, the NIC's and NVLink's β and
    their ratio."""

    gpus: int
    gpn: int
    nodes: int
    sus: int
    su_nodes: int
    su_gpus: int
    leaves_per_su: int
    leaves: int
    per_leaf: int
    spines: int
    uplinks: int
    spine_ports: int
    bisection_Bps: float
    half: int
    nic_Bps: float
    nvl_Bps: float
    ratio: str


def superpod(gpus: int = 1024, gpn: int = 8, su_nodes: int = 32, leaves_per_su: int = 8, spines: int = 16,
             intra: Link = NVLINK4, inter: Link = IB_NDR) -> SuperPod:
    """:class:`SuperPod`; the units must tile the pod and give one leaf per rail."""
    nodes = gpus // gpn
    if nodes * gpn != gpus or nodes % su_nodes:
        raise ValueError(f"gpus={gpus} must fill whole nodes of gpn={gpn} and units of su_nodes={su_nodes}")
    if leaves_per_su != gpn:
        raise ValueError(f"leaves_per_su={leaves_per_su} must equal gpn={gpn} (one leaf per rail)")
    sus, su_gpus = nodes // su_nodes, su_nodes * gpn
    leaves, per_leaf = sus * leaves_per_su, su_gpus // leaves_per_su
    uplinks = leaves * per_leaf
    pod = TwoLevel(nodes, gpn, intra, inter)
    return SuperPod(gpus, gpn, nodes, sus, su_nodes, su_gpus, leaves_per_su, leaves, per_leaf, spines, uplinks,
                    uplinks // spines, pod.bisection_bandwidth, pod.p // 2, inter.beta, intra.beta,
                    f"1/{intra.beta / inter.beta:.0f}")


@dataclass(frozen=True)
class P2P:
    """Demo 01-3's point-to-point times: at the ``small``, ``mid`` and ``big`` sizes, over the
    fewest (``h_lo``) and most (``h_hi``) torus hops, with the ratio at the small size and the
    growth at the big one; the big size's bytes alone over β; through a switch within a node
    (``same``, ``sw_hops`` hops) and to another node (``other``), with their ratio; and the
    torus's hop cost (``rule``; ``hi_alphas`` α at ``h_hi`` hops)."""

    small_bytes: float
    mid_bytes: float
    big_bytes: float
    h_lo: int
    h_hi: int
    small_lo_s: float
    small_hi_s: float
    small_x: float
    mid_lo_s: float
    mid_hi_s: float
    big_lo_s: float
    big_hi_s: float
    big_growth_frac: float
    bytes_time_s: float
    same_big_s: float
    other_big_s: float
    other_x: float
    same_small_s: float
    other_small_s: float
    hop_alpha: float
    rule: str
    hi_alphas: float
    sw_hops: int


def p2p_numbers(table: Table, sizes: Sequence[float], beta: float, torus_rows: int = 4) -> P2P:
    """:class:`P2P` of demo 01-3's ``table`` (built for ``sizes``; its first ``torus_rows``
    rows are torus paths over a link of ``beta``, the next two the two-level network's)."""
    small, mid, big = (f"t_{int(n)}" for n in sizes)
    lo, hi = table.rows[0], table.rows[torus_rows - 1]
    same, other = table.rows[torus_rows], table.rows[torus_rows + 1]
    h = signature(Torus).parameters["hop_alpha"].default
    rule = "h·α" if h == 1 else f"(1 + {h:g}(h − 1))·α"
    return P2P(*map(float, sizes), lo["hops"], hi["hops"], lo[small], hi[small], hi[small] / lo[small],
               lo[mid], hi[mid], lo[big], hi[big], hi[big] / lo[big] - 1, sizes[-1] / beta, same[big],
               other[big], other[big] / same[big], same[small], other[small], h, rule,
               1 + h * (hi["hops"] - 1), same["hops"])


@dataclass(frozen=True)
class HopMessage:
    """One message of ``n_bytes`` over ``hops`` hops of a ring with ``hop_alpha``: its time,
    the latency α(1 + hop_alpha(h − 1)) and that latency's share of the time."""

    n_bytes: float
    hops: int
    hop_alpha: float
    time_s: float
    latency_s: float
    latency_frac: float


def hop_message(link: Link, n: float, hops: int, hop_alpha: float = 1.0, ring: int = 16) -> HopMessage:
    """Send ``n`` bytes from device 0 to device ``hops`` of a ``ring``-device ring, simulated."""
    t = send_recv(VirtualCluster(Torus((ring,), link, hop_alpha=hop_alpha)), nbytes=n, src=0, dst=hops).time
    lat = link.alpha * (1 + hop_alpha * (hops - 1))
    return HopMessage(float(n), hops, hop_alpha, t, lat, lat / t)
