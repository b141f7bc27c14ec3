"""Chapter §1.5: where the hierarchical all-reduce still beats the ring NCCL runs and where
it does not: the node count where it overtakes (:func:`overtake`), six clusters side by side
(:func:`where_cases`) and their tables.
Napkin math 1.6's links and counting are those of :mod:`.hierarchy_numbers`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from ...hardware import NVLINK4_CHAPTER
from ...topology import TwoLevel
from ...units import GB, MB, fmt_bytes
from ..tables import Table
from ..text import texts
from . import tier_budgets as TB
from .boxes import BOX_LINKS
from .hierarchy_numbers import three_tier

__all__ = ["WHERE_CASES", "where_cases", "where_table", "OVERTAKE_SIZES", "Overtake", "overtake", "overtake_table"]

T = texts("ch1")
K = "hierarchy_numbers."
_tx = T.under(K)       # the entries of §1.5's numbers (ch1.toml, under hierarchy_numbers.)
_txs = _tx.pairs


# ============================================================================ where the hierarchy wins
WHERE_CASES = {
    "plain": ({"pxn": True}, "two"),
    "one_nic": ({"nics_per_node": 1, "pxn": True}, "two"),
    "spine": ({"spine_oversubscription": 2, "pxn": False}, "two"),
    "spine_pxn": ({"spine_oversubscription": 2, "pxn": True}, "two"),
    "racks": ({"pxn": True}, "three"),
    "racks_no_pxn": ({}, "three"),
}
"""The clusters of :func:`where_cases`: napkin math 1.6's 8 nodes x 8 GPUs ("two": TwoLevel
keywords) or the three-tier example ("three": 4 racks x 4 nodes x 8,
2:1 between racks, Table 1's links), 1 GB."""


def where_cases(n: float = 1 * GB) -> dict[str, TB.RingVsHier]:
    """NCCL's ring (default channels) against the hierarchy in each case of
    :data:`WHERE_CASES` (:func:`.tier_budgets.nccl_ring`; on ThreeTier the five-phase
    multi-level schedule)."""
    out = {}
    for key, (kw, kind) in WHERE_CASES.items():
        if kind == "two":
            out[key] = TB.nccl_ring(TwoLevel(TB.NM_1_6["nodes"], TB.NM_1_6["gpus_per_node"], NVLINK4_CHAPTER,
                                             BOX_LINKS["nm1.6"], **kw), n)
        else:
            e = three_tier(n)
            out[key] = TB.RingVsHier(e.ring_s if kw.get("pxn") else e.ring_nopxn_s, e.sim_s, e.k)
    return out


def where_table(cases: dict | None = None, n: float = 1 * GB) -> Table:
    """NCCL's ring against the hierarchy, case by case: channels, both times, their ratio."""
    cases = where_cases(n) if cases is None else cases
    rows = [{"case": k, **asdict(v), "ratio_x": v.ratio_x} for k, v in cases.items()]
    return Table(
        key="ch1-where",
        title=_tx("where_title", n=fmt_bytes(n)),
        columns=["case", "channels", "ring_s", "hier_s", "ratio_x"],
        headers=_txs("cluster", "ring_channels", "nccl_s_ring", "hierarchy", "hierarchy_ring"),
        rows=rows,
        labels=T.labels(K + "where."),
        notes=_txs("simulator_8_8_nvlink"),
    )


OVERTAKE_SIZES = (64 * MB, 256 * MB, 1 * GB)
"""Buffers for which :func:`overtake` finds the node count where the hierarchy overtakes."""


@dataclass(frozen=True)
class Overtake:
    """:func:`overtake` for one buffer: the node count N, its GPUs, both schedules on N-1
    and N nodes, and the start-ups of each at N."""
    nodes: int
    gpus: int
    before: TB.RingVsHier
    at: TB.RingVsHier
    alpha_ring_s: float
    alpha_hier_s: float


def overtake(sizes=OVERTAKE_SIZES) -> dict[float, Overtake]:
    """For each buffer: the fewest nodes N (8 GPUs, one NIC each, PXN, napkin math 1.6's
    links) where the hierarchy beats NCCL's ring by the closed forms, checked with the
    simulator on N-1 nodes (ring faster) and on N (hierarchy faster), and the start-up
    terms of both at N: 2(p-1)α_IB for the ring, 2(G-1)α_NV + 2(N-1)α_IB for the hierarchy."""
    G, nv, ib = TB.NM_1_6["gpus_per_node"], NVLINK4_CHAPTER, BOX_LINKS["nm1.6"]
    out = {}
    for n in sizes:
        N = TB.overtake_nodes(G, n, nv, ib)
        before, at = (TB.nccl_ring(TwoLevel(m, G, nv, ib, pxn=True), n) for m in (N - 1, N))
        out[n] = Overtake(N, N * G, before, at, 2 * (N * G - 1) * ib.alpha, 2 * (G - 1) * nv.alpha + 2 * (N - 1) * ib.alpha)
    return out


def overtake_table(d: dict[float, Overtake] | None = None) -> Table:
    """Where the hierarchy overtakes NCCL's ring as the nodes grow: per buffer, the node
    count, both times on one node fewer and at that count (simulator), and the start-ups
    each pays there."""
    d = overtake() if d is None else d
    rows = [{"n": fmt_bytes(n), "nodes": v.nodes, "ring_before_s": v.before.ring_s, "hier_before_s": v.before.hier_s,
             "ring_at_s": v.at.ring_s, "hier_at_s": v.at.hier_s, "alpha_ring_s": v.alpha_ring_s,
             "alpha_hier_s": v.alpha_hier_s} for n, v in d.items()]
    return Table(
        key="ch1-overtake",
        title=_tx("where_the_hierarchy_overtakes"),
        columns=["n", "nodes", "ring_before_s", "hier_before_s", "ring_at_s", "hier_at_s", "alpha_ring_s", "alpha_hier_s"],
        headers=_txs("buffer", "nodes_n", "ring_n_1", "hierarchy_n_1", "ring_n", "hierarchy_n", "ring_s_start_ups", "hierarchy_s_start_ups"),
        rows=rows,
        notes=_txs("times_from_the_simulator"),
    )
