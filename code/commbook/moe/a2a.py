r"""The lower bounds of a (skewed) all-to-all (chapter Systems Perspective 1.1), and the flows
of its schedules.

**Flows** (:func:`count_flows`, read off a schedule's rounds).  On 8 nodes × 8 GPUs the
direct exchange has P(P−1) = 4,032 GPU pairs (the chapter's count; 3,584 of them
cross nodes).  The hierarchical one has N(N−1) = 56 node pairs — which is also 56
flows per rail — but with one NIC per GPU its GPU-level cross-node flows are
G·N(N−1) = 448: like for like the reduction is G = 8×, not 4,032/56 = 72×.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_link_params, finite_time
from ..comm_sim import RunResult
from ..topology import Switch, Topology, TwoLevel

__all__ = ["A2ABounds", "a2a_bounds", "a2a_bounds_on", "FlowCount", "count_flows"]

MAX_CUTS = 200_000
"""Most balanced cuts :func:`a2a_bounds` enumerates exactly (else pass ``groups``)."""


@dataclass(frozen=True)
class A2ABounds:
    """The four lower bounds of one all-to-all (seconds), chapter Systems Perspective 1.1:
    ``injection`` (busiest sender), ``reception`` (busiest receiver), ``bisection`` (worst
    balanced cut) — each one start-up α plus its bytes over its bandwidth — and
    ``startup``: α per remote peer of the rank with the most peers, the cost of posting
    one message per peer one after another (a bound for the direct exchange; the
    hierarchical one exists to beat it).  ``cut`` is the worst cut's side (units).

    >>> b = A2ABounds(injection=4e-3, reception=4e-3, bisection=8e-3, startup=0.0, cut=(0, 1))
    >>> b.bound, b.binding
    (0.008, 'bisection')
    """

    injection: float
    reception: float
    bisection: float
    startup: float
    cut: tuple[int, ...]

    bound = property(lambda self: max(self.injection, self.reception, self.bisection, self.startup),
                     doc="the largest of the four")
    binding = property(lambda self: max(("injection", "reception", "bisection", "startup"),
                                        key=lambda n: getattr(self, n)), doc="name of the largest")


def a2a_bounds(counts: np.ndarray, *, alpha: float, inject_bw: float, bisection_bw: float,
               receive_bw: float | None = None, groups: np.ndarray | None = None) -> A2ABounds:
    """Lower bounds of an all-to-all whose rank i sends ``counts[i, j]`` bytes to rank j
    (the diagonal stays local and is ignored).

    Without ``groups`` the units are ranks: ``inject_bw``/``receive_bw`` are one rank's
    port bandwidths, and the worst cut is searched over all balanced halves of the
    ranks.  With ``groups`` (a group id per rank, e.g. its node) the bytes are summed per
    group, only traffic between groups counts, ``inject_bw``/``receive_bw`` are a group's
    uplink, and cuts are balanced halves of the groups.  The bisection bound is
    α + max(bytes A→B, B→A)/``bisection_bw`` (one direction, like the chapter's
    V_cut/BW_bisect).

    Ranks 0–3 send 1 MB to each of ranks 4–7: 16 MB cross the cut {0, 1, 2, 3} one way:

    >>> counts = np.zeros((8, 8))
    >>> counts[:4, 4:] = 1e6
    >>> b = a2a_bounds(counts, alpha=0.0, inject_bw=1e9, bisection_bw=2e9)
    >>> b.cut, b.bisection, b.injection, b.binding
    ((0, 1, 2, 3), 0.008, 0.004, 'bisection')
    """
    C = np.asarray(counts, dtype=float)
    if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 1:
        raise ValueError(f"counts must be a square (p, p) matrix, got shape {C.shape}")
    if not np.all(np.isfinite(C)) or (C < 0).any():
        raise ValueError("counts must be finite and >= 0")
    alpha, inject_bw = check_link_params(alpha, inject_bw, beta_name="inject_bw")
    bisection_bw = check_link_params(alpha, bisection_bw, beta_name="bisection_bw")[1]
    receive_bw = inject_bw if receive_bw is None else check_link_params(alpha, receive_bw, beta_name="receive_bw")[1]
    p = C.shape[0]
    off = C * (1 - np.eye(p))
    startup = alpha * int(np.count_nonzero(off, axis=1).max())
    if groups is None:
        U = off
    else:
        g = np.asarray(groups)
        if g.shape != (p,) or not np.issubdtype(g.dtype, np.integer):
            raise ValueError(f"groups must hold one integer group id per rank ({p})")
        ids, gi = np.unique(g, return_inverse=True)
        U = np.zeros((ids.size, ids.size))
        np.add.at(U, (gi[:, None].repeat(p, 1), gi[None, :].repeat(p, 0)), C)
        U *= 1 - np.eye(ids.size)
    m = U.shape[0]
    half = m // 2
    n_cuts = math.comb(m - 1, half - 1) if half else 0
    if n_cuts > MAX_CUTS:
        raise ValueError(f"{n_cuts} balanced cuts of {m} units is too many to enumerate; pass groups=")
    worst, cut = 0.0, ()
    if half:
        for side in itertools.combinations(range(1, m), half - 1):
            a = np.zeros(m, dtype=bool)
            a[[0, *side]] = True
            v = max(U[a][:, ~a].sum(), U[~a][:, a].sum())
            if v > worst:
                worst, cut = v, tuple(np.flatnonzero(a).tolist())
    return A2ABounds(finite_time(alpha + U.sum(axis=1).max() / inject_bw, "the bound of (counts, inject_bw)"),
                     finite_time(alpha + U.sum(axis=0).max() / receive_bw, "the bound of (counts, receive_bw)"),
                     finite_time(alpha + worst / bisection_bw, "the bound of (counts, bisection_bw)"),
                     float(startup), cut)


def a2a_bounds_on(topology: Topology, counts: np.ndarray) -> A2ABounds:
    """:func:`a2a_bounds` with the bandwidths of a topology: on a :class:`Switch` per rank
    (port β, α of the link); on a :class:`TwoLevel` per node (uplink: ``node_uplink_bandwidth``,
    InfiniBand α, cuts along nodes).

    Napkin Math 1.4's uniform dispatch on one NVLink switch: seven 2 µs start-ups bind,
    not the bytes:

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.moe import MoEConfig, uniform_counts
    >>> from commbook.topology import Switch
    >>> b = a2a_bounds_on(Switch(8, NVLINK4), uniform_counts(MoEConfig(512, 8, 64, d_model=2048)))
    >>> b.binding, round(b.startup * 1e6, 6)
    ('startup', 14.0)
    """
    if isinstance(topology, Switch):
        link = topology.link
        return a2a_bounds(counts, alpha=link.alpha, inject_bw=link.beta,
                          bisection_bw=topology.bisection_bandwidth)
    if isinstance(topology, TwoLevel):
        if topology.nodes < 2:
            raise ValueError("a TwoLevel topology with one node has no inter-node bound; use a Switch")
        up = topology.node_uplink_bandwidth
        return a2a_bounds(counts, alpha=topology.inter.alpha, inject_bw=up,
                          bisection_bw=topology.bisection_bandwidth,
                          groups=np.arange(topology.p) // topology.gpus_per_node)
    raise TypeError(f"a2a_bounds_on takes a Switch or TwoLevel topology, got {type(topology).__name__}")


# ----------------------------------------------------------------------------- flows
@dataclass(frozen=True)
class FlowCount:
    """Distinct flows (ordered source → destination pairs that exchange a message) of a
    schedule on a two-level cluster: all GPU pairs, the GPU pairs that cross nodes, the
    node pairs, and the most GPU-level cross-node flows leaving one rail (NIC index).

    >>> FlowCount(gpu_pairs=4032, cross_node_gpu_pairs=3584, node_pairs=56, max_per_rail=448).node_pairs
    56
    """

    gpu_pairs: int
    cross_node_gpu_pairs: int
    node_pairs: int
    max_per_rail: int


def count_flows(result: RunResult, topology: TwoLevel) -> FlowCount:
    """Count the flows of a run (its rounds, from ``result.trace``) on ``topology``;
    ranks are device ids (a run with ``ranks=None``).

    On 8 nodes x 8 GPUs the direct exchange has P(P − 1) = 4,032 flows, the hierarchical
    one 56 node pairs and G = 8x fewer GPU flows across nodes:

    >>> from commbook.collectives import all_to_all_v
    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import IB_NDR, NVLINK4
    >>> topo = TwoLevel(8, 8, NVLINK4, IB_NDR)
    >>> run = lambda algo: all_to_all_v(VirtualCluster(topo), counts=np.ones((64, 64)), algorithm=algo, trace=True)
    >>> count_flows(run("direct"), topo)
    FlowCount(gpu_pairs=4032, cross_node_gpu_pairs=3584, node_pairs=56, max_per_rail=448)
    >>> count_flows(run("hierarchical"), topo).cross_node_gpu_pairs
    448
    """
    if not isinstance(result, RunResult):
        raise TypeError(f"result must be a RunResult, got {type(result).__name__}")
    if not isinstance(topology, TwoLevel):
        raise TypeError(f"topology must be a TwoLevel, got {type(topology).__name__}")
    if not result.trace:
        raise ValueError("the run kept no rounds (result.trace is empty)")
    pairs = np.concatenate([np.stack([s.round.src, s.round.dst], 1) for s in result.trace])
    pairs = np.unique(pairs[pairs[:, 0] != pairs[:, 1]], axis=0)
    if pairs.size and pairs.max() >= topology.p:
        raise ValueError(f"the run has ranks beyond the topology's {topology.p} devices")
    G = topology.gpus_per_node
    cross = pairs[pairs[:, 0] // G != pairs[:, 1] // G]
    nodes = np.unique(cross // G, axis=0)
    per_rail = np.bincount(cross[:, 0] % G, minlength=G) if cross.size else np.zeros(1, int)
    return FlowCount(len(pairs), len(cross), len(nodes), int(per_rail.max()))
