r"""Chapter §1.3: the numbers of ``chapters/{zh,en}/ch1/03-primitives.md`` that combine
several results of :mod:`.primitives_moe` (the hierarchical all-to-all) in one typed result;
the six primitives' numbers are :class:`.primitives.Primitives`'s own, expert capacity's
:class:`.primitives_moe.Capacity`'s, skew's :class:`.primitives_moe.Skew`'s and FSDP's
:class:`.primitives_use.Fsdp`'s (the page glues them with :func:`commbook.book.glue.glue_fields`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..tables import Table
from .primitives_a2a import Flows

__all__ = ["HierFacts", "hier_facts"]


@dataclass(frozen=True)
class HierFacts:
    """Direct against hierarchical all-to-all: the cluster, the smallest and largest chunk
    with the speed-up (and the largest one's excess as a share), the rounds, and the flows."""

    nodes: int
    g: int
    p: int
    small_chunk_bytes: float
    small_speedup: float
    large_chunk_bytes: float
    large_x_frac: float
    r_direct: int
    r_hier: int
    fl_direct: int
    fl_nodes: int
    fl_chapter_ratio: float
    fl_cross_ratio: float


def hier_facts(hier: Table, flows: Flows) -> HierFacts:
    """Read :func:`.primitives_moe.hierarchical_table` and :func:`.primitives_moe.flow_counts`."""
    d, h = flows.direct, flows.hierarchical
    small, large = hier.rows[0], hier.rows[-1]
    return HierFacts(flows.nodes, flows.gpus, flows.p, small["chunk"], small["speedup"], large["chunk"],
                     large["speedup"] - 1, small["r_direct"], small["r_hier"], d.gpu_pairs, h.node_pairs,
                     d.gpu_pairs / h.node_pairs, d.cross_node_gpu_pairs / h.cross_node_gpu_pairs)
