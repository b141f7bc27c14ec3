"""Schedules composed of the others on a structured topology: the hierarchical
all-reduce on a two-level cluster and the all-reduce by dimension on a torus.

Both run on every device of the topology in its natural order."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..comm_sim import Round, chunk_bounds
from ..topology import Topology, Torus, TwoLevel
from .ring import ring_all_gather, ring_reduce_scatter


def _require(topology: Topology, kind: type, what: str) -> None:
    if not isinstance(topology, kind):
        raise ValueError(f"{what} needs a {kind.__name__} topology, got {topology.name}")


def allreduce_hierarchical(topology: TwoLevel, n, size_only: bool,
                           inter_builder: Callable) -> list[Round]:
    """Ring reduce-scatter inside each node, an all-reduce of each GPU's 1/G share across
    nodes on its rail (``inter_builder``, any group builder), ring all-gather inside the node.

    The engine's time on two nodes of 8 GPUs is the closed form :func:`commbook.cost.allreduce_hierarchical`:

    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> from commbook.topology import TwoLevel
    >>> from commbook import cost
    >>> from commbook.collectives.ring import allreduce_ring
    >>> c = TwoLevel(2, 8, NVLINK4, IB_NDR)
    >>> t = VirtualCluster(c).run(allreduce_hierarchical(c, 8e6, True, allreduce_ring)).time
    >>> round(t / cost.allreduce_hierarchical(2, 8, 8e6, NVLINK4, IB_NDR), 12)
    1.0
    """
    _require(topology, TwoLevel, "the hierarchical all-reduce")
    N, G = topology.nodes, topology.gpus_per_node
    nodes = np.arange(topology.p).reshape(N, G)
    b = chunk_bounds(n, G, size_only)
    rails = nodes.T  # (G, N): rail g holds GPU g of every node
    return (ring_reduce_scatter(nodes, 0, n, size_only, label="intra reduce-scatter")
            + inter_builder(rails, b[:-1], np.diff(b), size_only)
            + ring_all_gather(nodes, 0, n, size_only, label="intra all-gather"))


def allreduce_torus(topology: Torus, n, size_only: bool) -> list[Round]:
    """Ring reduce-scatter along each dimension in turn (each on the share the previous
    dimension left), then ring all-gathers in reverse order.

    On a 4 x 4 torus the engine's time is :func:`commbook.cost.allreduce_torus`:

    >>> from commbook import cost
    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import ICI_V5E
    >>> t = VirtualCluster(Torus((4, 4), ICI_V5E)).run(allreduce_torus(Torus((4, 4), ICI_V5E), 8e6, True)).time
    >>> round(t / cost.allreduce_torus((4, 4), 8e6, ICI_V5E.alpha, ICI_V5E.beta), 12)
    1.0
    """
    _require(topology, Torus, "the torus all-reduce")
    dims = topology.dims
    coords = topology.coords(np.arange(topology.p))
    kind = float if size_only else np.int64
    base, length = np.zeros(topology.p, dtype=kind), np.full(topology.p, n, dtype=kind)
    rs, plan = [], []
    for d, a in enumerate(dims):
        if a == 1:
            continue
        lines = np.moveaxis(np.arange(topology.p).reshape(dims), d, -1).reshape(-1, a)
        lb, ln = base[lines[:, 0]], length[lines[:, 0]]
        rs += ring_reduce_scatter(lines, lb, ln, size_only, label=f"dim {d} reduce-scatter")
        plan.append((d, lines, lb, ln))
        b = chunk_bounds(ln, a, size_only)  # (lines, a+1)
        pos = coords[lines, d]               # position of each device along its line
        base[lines] = lb[:, None] + np.take_along_axis(b, pos, axis=1)
        length[lines] = np.take_along_axis(b, pos + 1, axis=1) - np.take_along_axis(b, pos, axis=1)
    ag = []
    for d, lines, lb, ln in reversed(plan):
        ag += ring_all_gather(lines, lb, ln, size_only, label=f"dim {d} all-gather")
    return rs + ag
