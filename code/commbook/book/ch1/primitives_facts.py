r"""Chapter §1.3: the numbers of ``chapters/{zh,en}/ch1/03-primitives.md`` that combine
several results of :mod:`.primitives` and :mod:`.primitives_moe` (Figure 5's values, top-k,
hierarchical all-to-all), one typed result per section; the six primitives'
numbers are :class:`.primitives.Primitives`'s own, expert capacity's
:class:`.primitives_moe.Capacity`'s, skew's :class:`.primitives_moe.Skew`'s and FSDP's
:class:`.primitives_use.Fsdp`'s (the page glues them with :func:`commbook.book.glue.glue_fields`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ... import moe
from ...collectives import all_to_all_v
from ...comm_sim import VirtualCluster
from ...topology import Switch
from ..tables import Table
from .primitives import figure5_inputs, figure5_runs
from .primitives_a2a import Flows

__all__ = ["listing", "Fig5Facts", "fig5_facts", "TopK", "top_k_facts",
           "HierFacts", "hier_facts"]


def listing(values) -> str:
    """Numbers as prose: '1, 2, 3, 4'."""
    return ", ".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


@dataclass(frozen=True)
class Fig5Facts:
    """Figure 5's worked values: the ranks, the all-reduce's inputs and result, the
    reduce-scatter's outputs and GPU 1's input."""

    p: int
    last: int
    ar_in: str
    ar_out: int
    rs_out: str
    rs_g1: str


def fig5_facts() -> Fig5Facts:
    x, runs = figure5_inputs(), figure5_runs()
    p = len(x["all_reduce"])
    return Fig5Facts(p, p - 1, listing([int(v[0]) for v in x["all_reduce"]]), int(runs["all_reduce"].outputs[0][0]),
                     listing([int(o[0]) for o in runs["reduce_scatter"].outputs]),
                     listing(x["reduce_scatter"][1].tolist()))


@dataclass(frozen=True)
class TopK:
    """The quiz: Napkin Math 1.4 with top-``k`` routing, simulated (all-to-all-v), and its
    ratio to the top-1 dispatch."""

    k: int
    pair_bytes: float
    sent_bytes: float
    inject_s: float
    sim_s: float
    ratio: float


def top_k_facts(nm, k: int = 2) -> TopK:
    cfg, link = nm.config, nm.link
    q = moe.MoEConfig(cfg.tokens_per_rank, cfg.ranks, cfg.experts, top_k=k, d_model=cfg.d_model)
    counts = moe.uniform_counts(q)
    sent = float(counts[0].sum() - counts[0, 0])
    sim = all_to_all_v(VirtualCluster(Switch(cfg.ranks, link)), counts=counts).time
    return TopK(k, float(counts[0, 1]), sent, link.alpha + sent / link.beta, sim, sim / nm.sim_s)


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
