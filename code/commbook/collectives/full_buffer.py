"""Composite all-reduces whose every level carries the full buffer, as the chapter's
figures draw them, next to the shrinking-share schedules of :mod:`.composite`:

* :func:`allreduce_leader` — Fig. 8 as drawn: only one GPU per node (its *leader*, local
  GPU 0) crosses nodes, so the inter-node all-reduce moves the whole buffer through one
  NIC per node, where the rail-based :func:`.composite.allreduce_hierarchical` moves 1/G
  of it through each of the G NICs.
* :func:`allreduce_torus_rings` — Fig. 10's card taken literally: a complete ring
  all-reduce along every row, then along every column, each on the full buffer, where
  :func:`.composite.allreduce_torus` reduce-scatters by dimension on a shrinking share.

Both run on every device of the topology in its natural order; their closed forms are
:func:`commbook.cost.allreduce_leader` and :func:`commbook.cost.allreduce_torus_rings`.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..comm_sim import Round, chunk_bounds
from ..topology import Topology, Torus, TwoLevel
from .ring import allreduce_ring, ring_all_gather, ring_reduce_scatter

__all__ = ["allreduce_leader", "allreduce_torus_rings"]


def _require(topology: Topology, kind: type, what: str) -> None:
    if not isinstance(topology, kind):
        raise ValueError(f"{what} needs a {kind.__name__} topology, got {topology.name}")


def allreduce_leader(topology: TwoLevel, n, size_only: bool,
                     inter_builder: Callable = allreduce_ring) -> list[Round]:
    """Leader-based hierarchical all-reduce on a two-level cluster.

    1. In each node, a ring reduce-scatter (G-1 rounds of n/G on NVLink), then one round
       in which GPUs 1 … G-1 send their reduced chunk to the leader (GPU 0): the leader
       holds the node's sum.  (Of the ways to reduce to one GPU this is the cheapest for
       large buffers on an NVSwitch: 2(G-1)/G·n through the leader's port, against
       ⌈log2 G⌉·n for a binomial reduce; it is also what Fig. 8's card says: "the NVLink
       ring acts as ReduceScatter … G0 accumulates".)
    2. The N leaders all-reduce the full buffer across nodes (``inter_builder``, any
       group builder; ring by default), each through its own NIC.
    3. In each node, the leader scatters chunk g to GPU g in one round and a ring
       all-gather completes the buffer everywhere.

    On one node there is nothing to cross and no leader: a ring all-reduce in the node.

    The engine's time is the closed form :func:`commbook.cost.allreduce_leader`:

    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> from commbook import cost
    >>> c = TwoLevel(2, 8, NVLINK4, IB_NDR)
    >>> t = VirtualCluster(c).run(allreduce_leader(c, 8e6, True)).time
    >>> round(t / cost.allreduce_leader(2, 8, 8e6, NVLINK4, IB_NDR), 12)
    1.0
    """
    _require(topology, TwoLevel, "the leader-based hierarchical all-reduce")
    N, G = topology.nodes, topology.gpus_per_node
    nodes = np.arange(topology.p).reshape(N, G)
    if N == 1:
        return allreduce_ring(nodes, 0, n, size_only)
    out = ring_reduce_scatter(nodes, 0, n, size_only, label="intra reduce-scatter")
    if G > 1:
        b = chunk_bounds(n, G, size_only)
        g = np.arange(1, G)
        size, off = (np.broadcast_to(x, (N, G - 1)) for x in (np.diff(b)[g], b[g]))
        lead = nodes[:, np.zeros_like(g)]
        gather = Round.make(nodes[:, g], lead, size, off, label="gather to leader")
        scatter = Round.make(lead, nodes[:, g], size, off, label="scatter from leader")
        out.append(gather)
    leaders = nodes[:, 0][None, :]
    out += inter_builder(leaders, 0, n, size_only)
    if G > 1:
        out.append(scatter)
    return out + ring_all_gather(nodes, 0, n, size_only, label="intra all-gather")


def allreduce_torus_rings(topology: Torus, n, size_only: bool) -> list[Round]:
    """A complete ring all-reduce of the full buffer along every line of dimension 0,
    then of dimension 1, and so on (dimensions of size 1 are skipped): 2(a-1) rounds of
    n/a per dimension of size a, each message one hop (wraparound links close the rings;
    on a mesh the closing message takes a-1 hops and the closed form does not hold).

    >>> from commbook import cost
    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import ICI_V5E
    >>> t = VirtualCluster(Torus((4, 4), ICI_V5E)).run(allreduce_torus_rings(Torus((4, 4), ICI_V5E), 8e6, True)).time
    >>> round(t / cost.allreduce_torus_rings((4, 4), 8e6, ICI_V5E.alpha, ICI_V5E.beta), 12)
    1.0
    """
    _require(topology, Torus, "the full-ring torus all-reduce")
    out = []
    for d, a in enumerate(topology.dims):
        if a == 1:
            continue
        lines = np.moveaxis(np.arange(topology.p).reshape(topology.dims), d, -1).reshape(-1, a)
        out += (ring_reduce_scatter(lines, 0, n, size_only, label=f"dim {d} ring reduce-scatter")
                + ring_all_gather(lines, 0, n, size_only, label=f"dim {d} ring all-gather"))
    return out
