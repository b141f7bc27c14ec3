"""The multi-level hierarchical all-reduce on a cluster of tiers (GPU → node → rack).

On a :class:`~commbook.topology.ThreeTier` cluster (racks x nodes x GPUs):

1. ring reduce-scatter among the G GPUs of each node (NVLink): each GPU keeps n/G;
2. ring reduce-scatter across the nodes of each rack, on each rail (GPU g of every node
   of the rack, its share n/G): each GPU keeps n/(G·Nr);
3. an all-reduce across the racks, on each rail (GPU g of node j of every rack, its share
   n/(G·Nr)), by any algorithm that runs on groups (``inter_builder``): the only tier
   that crosses the spine, with 1/(G·Nr) of the buffer;
4. ring all-gather back across the nodes of the rack, then inside the node.

On a :class:`~commbook.topology.TwoLevel` cluster the same schedule has two tiers (node,
then all nodes on each rail) and equals the hierarchical all-reduce.  Tiers of one member
are skipped (the all-reduce runs on the outermost tier left).  :func:`allreduce_tiers_time` is its closed form (by algorithm name:
:func:`commbook.collectives.registry.t_allreduce_tiers`); it equals the simulator
because in every round of a tier every GPU of the cluster sends one equal message on its
rail, so each message sees the bandwidth :meth:`TwoLevel.tier_links` gives.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from .. import cost
from ..checks import check_p, check_size
from ..comm_sim import Round, RunResult, VirtualCluster, chunk_bounds
from ..hardware import Link
from ..topology import Topology, TwoLevel
from .ring import ring_all_gather, ring_reduce_scatter

__all__ = ["tier_groups", "tier_phases", "allreduce_tiers", "allreduce_tiers_form", "allreduce_tiers_time",
           "run_by_phase", "TIER_NAMES"]

TIER_NAMES = ("node", "rail", "cross-rack")
"""Names of the tiers, innermost first: the GPUs of a node; the nodes (of a rack) on one
rail; the racks on one rail (a TwoLevel cluster has the first two)."""


def _require(topology: Topology) -> TwoLevel:
    if not isinstance(topology, TwoLevel):
        raise ValueError(f"the multi-level all-reduce needs a TwoLevel or ThreeTier topology, got {topology.name}")
    return topology


def tier_groups(topology: TwoLevel) -> list[np.ndarray]:
    """The groups of each tier, innermost first, each of shape (groups, members): the
    GPUs of each node; GPU g of every node of a rack (one group per rack and rail); on
    several racks, GPU g of node j of every rack.

    Two racks of two nodes of two GPUs: nodes, then rails in a rack, then across racks.

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import ThreeTier
    >>> [g.tolist() for g in tier_groups(ThreeTier(2, 2, 2, NVLINK4, IB_NDR))][1:]
    [[[0, 2], [1, 3], [4, 6], [5, 7]], [[0, 4], [1, 5], [2, 6], [3, 7]]]
    """
    t = _require(topology)
    R, Nr, G = t.racks, t.nodes_per_rack, t.gpus_per_node
    dev = np.arange(t.p).reshape(R, Nr, G)
    levels = [dev.reshape(-1, G), dev.transpose(0, 2, 1).reshape(-1, Nr)]
    if R > 1:
        levels.append(dev.transpose(1, 2, 0).reshape(-1, R))
    return levels


def tier_phases(topology: TwoLevel, n, size_only: bool,
                inter_builder: Callable) -> list[tuple[str, list[Round]]]:
    """The schedule as named phases: ``"<tier> reduce-scatter"`` for every tier but the
    outermost, ``"<tier> all-reduce"`` (``inter_builder``) for the outermost, then
    ``"<tier> all-gather"`` back down.  Tiers of one member are left out, so
    ``inter_builder`` runs on the outermost tier that has more than one member (on one
    node: inside the node).

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import ThreeTier
    >>> from commbook.collectives.ring import allreduce_ring
    >>> [name for name, _ in tier_phases(ThreeTier(2, 2, 2, NVLINK4, IB_NDR), 8e6, True, allreduce_ring)]
    ['node reduce-scatter', 'rail reduce-scatter', 'cross-rack all-reduce', 'rail all-gather', 'node all-gather']
    """
    levels = [(name, g) for name, g in zip(TIER_NAMES, tier_groups(topology)) if g.shape[1] > 1]
    kind = float if size_only else np.int64
    base, length = np.zeros(topology.p, dtype=kind), np.full(topology.p, n, dtype=kind)
    down, up = [], []
    for k, (name, groups) in enumerate(levels):
        lb, ln = base[groups[:, 0]], length[groups[:, 0]]
        if k == len(levels) - 1:
            down.append((f"{name} all-reduce", inter_builder(groups, lb, ln, size_only)))
            break
        down.append((f"{name} reduce-scatter",
                     ring_reduce_scatter(groups, lb, ln, size_only, label=f"{name} reduce-scatter")))
        up.append((f"{name} all-gather", ring_all_gather(groups, lb, ln, size_only, label=f"{name} all-gather")))
        q = groups.shape[1]
        b = chunk_bounds(ln, q, size_only)                   # (groups, q + 1)
        base[groups] = lb[:, None] + b[:, :-1]
        length[groups] = np.diff(b, axis=1)
    return down + up[::-1]


def allreduce_tiers(topology: TwoLevel, n, size_only: bool, inter_builder: Callable) -> list[Round]:
    """The multi-level hierarchical all-reduce (see the module docstring) as one schedule.

    The engine's time is :func:`allreduce_tiers_time`:

    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import ThreeTier
    >>> from commbook.collectives.ring import allreduce_ring
    >>> c = ThreeTier(2, 2, 8, NVLINK4, IB_NDR)
    >>> t = VirtualCluster(c).run(allreduce_tiers(c, 8e6, True, allreduce_ring)).time
    >>> round(t / allreduce_tiers_time(c, 8e6), 12)
    1.0
    """
    return [r for _, rounds in tier_phases(_require(topology), n, size_only, inter_builder) for r in rounds]


def allreduce_tiers_form(sizes: Sequence[int], n: float, links: Sequence[Link],
                         top_form: Callable = cost.allreduce_ring) -> float:
    """Closed form of the multi-level all-reduce with tier sizes ``sizes`` (innermost
    first) and the link each tier sees: for every tier but the last a ring reduce-scatter
    and all-gather, 2(q-1)(α + s/(qβ)) on the share s left by the tiers inside it; the
    last tier ``top_form(q, s, α, β)``.

    Two tiers (8 GPUs on NVLink, then 2 nodes) are the hierarchical all-reduce:

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> allreduce_tiers_form([8, 2], 8e6, [NVLINK4, IB_NDR]) == cost.allreduce_hierarchical(2, 8, 8e6, NVLINK4, IB_NDR)
    True
    """
    if len(sizes) != len(links) or not sizes:
        raise ValueError(f"give one link per tier: {len(sizes)} sizes, {len(links)} links")
    share, total = check_size(n), 0.0
    for q, link in zip(sizes[:-1], links[:-1]):
        q = check_p(q, "tier size")
        total += 2 * (q - 1) * (link.alpha + share / (q * link.beta))
        share /= q
    return total + top_form(check_p(sizes[-1], "tier size"), share, links[-1].alpha, links[-1].beta)


def allreduce_tiers_time(topology: TwoLevel, n: float, top_form: Callable = cost.allreduce_ring) -> float:
    """Closed-form time of :func:`allreduce_tiers` on ``topology``, the outermost tier
    by the closed form ``top_form``, with the links of :meth:`TwoLevel.tier_links`.

    Rings of 8 GPUs (59.111 µs), of 2 nodes on 1 MB (30 µs), of 2 racks on 0.5 MB (20 µs):

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import ThreeTier
    >>> round(allreduce_tiers_time(ThreeTier(2, 2, 8, NVLINK4, IB_NDR), 8e6) * 1e6, 3)     # µs
    109.111
    """
    t = _require(topology)
    tiers = [(g.shape[1], link) for g, link in zip(tier_groups(t), t.tier_links()) if g.shape[1] > 1]
    if not tiers:
        check_size(n)
        return 0.0
    return allreduce_tiers_form([q for q, _ in tiers], n, [link for _, link in tiers], top_form)


def run_by_phase(cluster: VirtualCluster, schedule: Sequence[Round],
                 phase: Callable[[str], str]) -> dict[str, RunResult]:
    """Run a size-only ``schedule`` in pieces: consecutive rounds whose labels ``phase``
    maps to the same name run together, so each piece's ``link_bytes`` and ``time`` are
    that phase's (the sum of the pieces' times is the schedule's).  A name met twice
    (not consecutively) gets ``#2`` appended.

    The hierarchical all-reduce on two nodes, phase by phase (the rail all-reduce is a ring):

    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> from commbook.collectives.ring import allreduce_ring
    >>> c = TwoLevel(2, 8, NVLINK4, IB_NDR)
    >>> parts = run_by_phase(VirtualCluster(c), allreduce_tiers(c, 8e6, True, allreduce_ring), lambda label: label.rsplit(' ', 1)[0])
    >>> {k: round(r.time * 1e6, 3) for k, r in parts.items()}        # µs; the sum is the hierarchical 89.111
    {'node reduce-scatter': 29.556, 'reduce-scatter': 15.0, 'all-gather': 15.0, 'node all-gather': 29.556}
    """
    if not isinstance(cluster, VirtualCluster):
        raise TypeError(f"expected a VirtualCluster, got {type(cluster).__name__}")
    pieces: list[tuple[str, list[Round]]] = []
    for rnd in schedule:
        key = phase(rnd.label)
        if pieces and pieces[-1][0] == key:
            pieces[-1][1].append(rnd)
        else:
            pieces.append((key, [rnd]))
    out: dict[str, RunResult] = {}
    for key, rounds in pieces:
        name, k = key, 1
        while name in out:
            k += 1
            name = f"{key} #{k}"
        out[name] = cluster.run(rounds)
    return out
