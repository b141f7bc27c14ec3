"""Budgets of hierarchical communication, by hand and by the one engine: the chapter's
napkin math 1.6 under its own conventions and a consistent one, NCCL's ring against the hierarchy, and Figure 9's ratio of a software
all-reduce to in-network reduction (the three-tier 128-GPU example is
:func:`.hierarchy_numbers.three_tier`).  Chapter values (the book layer): the inputs of the chapter's boxes
live here, not in the core.

Every time here either comes from :class:`~commbook.comm_sim.VirtualCluster` or is a
closed form the tests hold equal to it; the hand budgets of :func:`hierarchical_budget`
are labelled with the convention they follow.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...checks import check_p, check_size
from ...comm_sim import VirtualCluster
from ...collectives.api import all_reduce
from ...collectives.channels import ring_time_two_level
from ...collectives.registry import coefficients
from ...hardware import NVLINK4_CHAPTER, Link
from ...topology import TwoLevel

__all__ = ["HierBudget", "hierarchical_budget", "CONVENTIONS", "NM_1_6", "napkin_1_6",
           "RingVsHier", "nccl_ring", "overtake_nodes", "sharp_ratio"]

NM_1_6 = dict(nodes=8, gpus_per_node=8, n=1e9,
              intra=Link("NVLink 4, one way", 0.0, 450e9, "Napkin Math 1.6: 450 GB/s per direction, α ignored"),
              inter=Link("InfiniBand NDR (NM 1.6)", 3e-6, 50e9,
                         "Napkin Math 1.6: 50 GB/s; α = 3 µs reproduces its 4.42 ms"))
"""Napkin Math 1.6's inputs: 8 nodes x 8 GPUs, a 1 GB gradient, NVLink 450 GB/s one way
(its α not used), InfiniBand 50 GB/s with α = 3 µs (the value its 4.42 ms implies)."""

CONVENTIONS = {
    "chapter": dict(flat="ideal", intra_alpha=False, inter_alpha=True),
    "consistent": dict(flat="ring", intra_alpha=True, inter_alpha=True),
}
"""How each budget counts.  ``chapter``: the flat ring as 2M/β (no α, no (p-1)/p), the
NVLink phases without α, the inter-node phase with both; ``consistent``: every phase as
the model (and the simulator) times it — the flat ring 2(p-1)(α + M/(pβ)) gated by its
node-crossing hop, every tier with its α."""


@dataclass(frozen=True)
class HierBudget:
    """Seconds per phase of a hierarchical all-reduce and of the flat ring it replaces."""

    flat: float
    reduce_scatter: float
    inter: float
    all_gather: float

    @property
    def total(self) -> float:
        return self.reduce_scatter + self.inter + self.all_gather

    @property
    def speedup(self) -> float:
        return self.flat / self.total


def hierarchical_budget(nodes: int, gpus_per_node: int, n: float, intra: Link, inter: Link, *,
                        flat: str = "ring", intra_alpha: bool = True, inter_alpha: bool = True) -> HierBudget:
    """The napkin budget of Napkin Math 1.6 with its conventions as parameters.

    ``flat="ring"``: the flat ring of nodes·G GPUs, 2(p-1)(α + n/(pβ_inter)); ``"ideal"``:
    2n/β_inter.  The hierarchy: (G-1)(α_intra + n/(Gβ_intra)) for each NVLink phase and
    2(N-1)(α_inter + n/(GNβ_inter)) across nodes, with each α dropped where its flag is
    False."""
    N, G, n = check_p(nodes, "nodes"), check_p(gpus_per_node, "gpus_per_node"), check_size(n)
    if flat not in ("ring", "ideal"):
        raise ValueError(f"flat must be 'ring' or 'ideal', got {flat!r}")
    p = N * G
    a_in, a_x = (intra.alpha if intra_alpha else 0.0), (inter.alpha if inter_alpha else 0.0)
    t_flat = (2 * n / inter.beta if flat == "ideal"
              else 2 * (p - 1) * (inter.alpha + n / (p * inter.beta)) if p > 1 else 0.0)
    rs = (G - 1) * (a_in + n / (G * intra.beta))
    x = 2 * (N - 1) * (a_x + n / (G * N * inter.beta))
    return HierBudget(t_flat, rs, x, rs)


def napkin_1_6(**inputs) -> dict[str, HierBudget]:
    """Napkin Math 1.6 in both conventions of :data:`CONVENTIONS` (inputs default to
    :data:`NM_1_6`; the consistent one takes NVLink's α from the chapter's Table 1,
    1.5 µs, unless ``intra`` is given)."""
    args = {**NM_1_6, **inputs}
    consistent = {**args, "intra": inputs.get("intra", NVLINK4_CHAPTER)}
    return {"chapter": hierarchical_budget(**args, **CONVENTIONS["chapter"]),
            "consistent": hierarchical_budget(**consistent, **CONVENTIONS["consistent"])}


# ============================================================================ NCCL's ring against the hierarchy
@dataclass(frozen=True)
class RingVsHier:
    """NCCL's ring (its default channels, one per NIC) against the hierarchy, both simulated;
    ``ratio_x`` = hierarchy / ring (above 1: the ring is faster)."""

    ring_s: float
    hier_s: float
    channels: int

    @property
    def ratio_x(self) -> float:
        return self.hier_s / self.ring_s


def nccl_ring(topology: TwoLevel, n: float) -> RingVsHier:
    """The ring NCCL runs against the three-phase hierarchy on ``topology``, ``n`` bytes."""
    c = VirtualCluster(topology)
    return RingVsHier(all_reduce(c, nbytes=n).time, all_reduce(c, nbytes=n, algorithm="hierarchical").time,
                      topology.ring_channels(np.arange(topology.p)))


def overtake_nodes(gpus_per_node: int, n: float, intra: Link, inter: Link, limit: int = 4096) -> int:
    """The fewest nodes (of ``gpus_per_node`` GPUs, one NIC per GPU, PXN) on which the
    hierarchical all-reduce of ``n`` bytes is faster than the ring NCCL runs, by the two
    closed forms (:func:`hierarchical_budget`, consistent convention, and
    :func:`~commbook.collectives.channels.ring_time_two_level`).  The ring pays
    2(p-1) start-ups of the slowest tier, the hierarchy 2(G-1) of NVLink and 2(N-1) of
    the network, so its lead in bandwidth is used up as the nodes grow."""
    G, n = check_p(gpus_per_node, "gpus_per_node"), check_size(n)
    for N in range(2, check_p(limit, "limit") + 1):
        hier = hierarchical_budget(N, G, n, intra, inter, **CONVENTIONS["consistent"]).total
        if hier < ring_time_two_level(TwoLevel(N, G, intra, inter, pxn=True), n):
            return N
    raise ValueError(f"the ring stays faster up to {limit} nodes")


# ============================================================================ Figure 9: in-network reduction
def sharp_ratio(p: int, versus: str = "ring") -> float:
    """Bandwidth-term ratio (α = 0, large buffers) of a software all-reduce over in-switch
    reduction (n/β): ring 2(p-1)/p (< 2 for every p), binomial tree 2⌈log2 p⌉, naive
    2(p-1)."""
    p = check_p(p)
    if versus not in ("ring", "tree", "naive"):
        raise ValueError(f"versus must be one of ring, tree, naive, got {versus!r}")
    if p == 1:
        return 1.0
    return (coefficients("all_reduce", versus, p).beta_bytes_per_byte
            / coefficients("all_reduce", "innet", p).beta_bytes_per_byte)
