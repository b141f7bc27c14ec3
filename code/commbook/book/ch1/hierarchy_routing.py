"""Chapter §1.5.3, topology-aware routing: the all-reduce on a 4x4 torus (flat ring, by
dimension, a full ring per dimension; with and without wraparound links), the rail table
regenerated from the simulator's per-link bytes, what shared NICs, a wrong GPU-to-NIC
affinity and a rail-misaligned placement through a 2:1 spine cost, and the flat ring's
time under several rank placements.

Every time is a simulator run (:class:`~commbook.comm_sim.VirtualCluster`); the tests hold
the closed forms equal to it.  Figures are in :mod:`.hierarchy_figures`.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from ... import collectives as coll
from ...collectives.composite import allreduce_hierarchical
from ...collectives.ring import allreduce_ring
from ...collectives.tiers import tier_phases
from ...comm_sim import RunResult, VirtualCluster
from ...hardware import IB_NDR_CHAPTER, ICI_V5E, NVLINK4_CHAPTER, Link
from ...topology import Torus, TwoLevel, ring_order
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_time
from ..tables import Table
from ..text import texts

__all__ = ["TORUS", "V5E_WRAP_AXIS", "TORUS_VARIANTS", "TorusRun", "torus_runs", "torus_table", "RAILS", "rail_rows", "rail_table",
           "snake", "rotated", "NicCase", "nic_cases", "nic_table", "PLACEMENTS", "CLUSTERS", "placements",
           "placement_table"]

T = texts("ch1")
K = "hierarchy_routing."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys)
_txs = _tx.pairs


# ============================================================================ torus
TORUS = {"dims": (4, 4), "link": ICI_V5E, "sizes": (64 * KB, 64 * MB)}
"""Figure 10's setting: a 4x4 torus of TPU v5e chips (ICI, 45 GB/s per link, α = 1 µs),
an all-reduce of 64 KB (latency-bound) and 64 MB (bandwidth-bound), as in P5 §6.1."""

V5E_WRAP_AXIS = 16
"""A TPU v5e slice has wraparound links only along an axis of this full length (How to
Scale Your Model, ch. 2): a 4x4 slice is a mesh."""

TORUS_VARIANTS = ("flat", "torus", "torus_rings")
"""The schedules compared: one ring of all chips in snake order, reduce-scatter/all-gather
by dimension, a complete ring all-reduce per dimension."""


def _torus_run(c: VirtualCluster, variant: str, n: float) -> RunResult:
    if variant == "flat":
        return coll.all_reduce(c, nbytes=n, ranks=ring_order(c.topology.dims, "snake"))
    return coll.all_reduce(c, nbytes=n, algorithm=variant)


@dataclass(frozen=True)
class TorusRun:
    """One variant of :func:`torus_runs`: its steps (rounds), the bytes each chip sends (a
    multiple of n), the time at every size, and the run of the largest size, ``n_bytes``."""
    steps: int
    sent_m: float
    times_s: list
    run: RunResult
    n_bytes: float


def torus_runs(dims=TORUS["dims"], link: Link = TORUS["link"], sizes=TORUS["sizes"],
               wraparound: bool = True) -> dict[str, TorusRun]:
    """Each variant of :data:`TORUS_VARIANTS` on the torus ``dims`` (or the mesh)."""
    c = VirtualCluster(Torus(dims, link, wraparound=wraparound))
    out = {}
    for v in TORUS_VARIANTS:
        runs = [_torus_run(c, v, n) for n in sizes]
        sent = runs[-1].bytes_sent / sizes[-1]
        if not np.allclose(sent, sent[0], rtol=1e-12):
            raise AssertionError(f"{v}: chips send different amounts")
        out[v] = TorusRun(runs[-1].rounds, float(sent[0]), [r.time for r in runs], runs[-1], sizes[-1])
    return out



def torus_table(runs: dict[str, TorusRun] | None = None, sizes=TORUS["sizes"],
                mesh: dict[str, TorusRun] | None = None) -> Table:
    """Steps, bytes per chip and times of the three variants (and, with ``mesh``, the
    by-dimension schedule on a 4x4 slice without wraparound links)."""
    runs = torus_runs(sizes=sizes) if runs is None else runs
    rows = [{"what": v, "steps": r.steps, "bytes": r.sent_m, **{f"t{i}": t for i, t in enumerate(r.times_s)}}
            for v, r in runs.items()]
    if mesh is not None:
        m = mesh["torus"]
        rows.append({"what": "mesh", "steps": m.steps, "bytes": m.sent_m,
                     **{f"t{i}": t for i, t in enumerate(m.times_s)}})
    size_cols = [f"t{i}" for i in range(len(sizes))]
    return Table(
        key="ch1-torus",
        title=_tx("all_reduce_on_a"),
        columns=["what", "steps", "bytes", *size_cols],
        headers={lang: [*_txs("h_schedule", "h_steps", "h_bytes")[lang],
                        *(T.get(K + "h_time", lang, n=fmt_bytes(n)) for n in sizes)] for lang in ("en", "zh")},
        rows=rows,
        formats={"bytes": lambda b: f"{b:.4g} · M", **{c: (lambda t: fmt_time(t, 4)) for c in size_cols}},
        labels=T.labels(K + "torus."),
        notes=_txs("ici_45_gb_s", alpha=fmt_time(TORUS['link'].alpha, 3)),
    )


# ============================================================================ rails
RAILS = {"nodes": 8, "gpus_per_node": 8, "n": 1 * GB, "intra": NVLINK4_CHAPTER, "inter": IB_NDR_CHAPTER}
"""The rail examples: 8 nodes x 8 GPUs (one NIC per GPU, DGX style), a 1 GB all-reduce,
Table 1's links."""


def _two_level(**kw) -> TwoLevel:
    return TwoLevel(RAILS["nodes"], RAILS["gpus_per_node"], RAILS["intra"], RAILS["inter"], **kw)


def rail_rows(topology: TwoLevel | None = None, n: float = RAILS["n"]) -> list[dict]:
    """The rail table from ``link_bytes`` of the hierarchical all-reduce on ``topology``
    (:data:`RAILS`' cluster if not given): each rail's leaf switch, the bytes it forwards,
    its share of all cross-node bytes, and the payload each rail all-reduces (bytes / 2(N-1):
    a ring of N GPUs sends 2(N-1)/N of it from each)."""
    topo = _two_level() if topology is None else topology
    res = coll.all_reduce(VirtualCluster(topo), nbytes=n, algorithm="tiers")
    leaves = {name: float(b) for name, b in zip(res.link_names, res.link_bytes)
              if name.startswith(("leaf", "rack")) and not name.endswith((".up", ".down"))}
    total = sum(leaves.values())
    return [{"rail": name, "index": k, "bytes": b, "share": b / total if total else 0.0,
             "payload": b / (2 * (topo.nodes - 1))} for k, (name, b) in enumerate(leaves.items())]


def rail_table(rows: list[dict] | None = None) -> Table:
    """The rail table: each rail, its members, the payload it all-reduces, the bytes
    through its leaf switch and their share."""
    rows = rail_rows() if rows is None else rows
    N = RAILS["nodes"]
    body = [{"rail": r["index"], "members": f"rail{r['index']}", "payload": r["payload"], "bytes": r["bytes"],
             "share": r["share"]} for r in rows]
    members = {lang: {f"rail{r['index']}": T.get(K + "rail_members", lang, g=r["index"], last=N - 1) for r in rows}
               for lang in ("en", "zh")}
    return Table(
        key="ch1-rails",
        title=_tx("rails_of_nodes_gpus", n=N, gpus_per_node=RAILS['gpus_per_node'], n2=fmt_bytes(RAILS['n'])),
        columns=["rail", "members", "payload", "bytes", "share"],
        headers=_txs("rail", "members", "payload_all_reduced_on", "bytes_through_its_leaf", "share_of_cross_node"),
        rows=body,
        formats={"payload": fmt_bytes, "bytes": fmt_bytes, "share": lambda s: fmt_pct(s, 3)},
        labels=members,
    )


# ============================================================================ NICs and the spine
def snake(nodes: int, g: int) -> np.ndarray:
    """Node-contiguous ranks, node a's GPUs forwards for even a and backwards for odd a:
    every node-crossing hop of a ring stays on one rail."""
    return np.concatenate([np.arange(g)[::(-1) ** a] + a * g for a in range(nodes)])


def rotated(nodes: int, g: int) -> np.ndarray:
    """Rank g of node a on GPU (g + a) mod G of node a: a scheduler that ignores rails.
    Inside a node nothing changes; rank g's cross-node partners sit on other rails."""
    return np.array([a * g + (k + a) % g for a in range(nodes) for k in range(g)])


NIC_CASES = {
    "aligned": ({}, None),
    "one_nic": ({"nics_per_node": 1}, None),
    "two_per_nic": ({"nics_per_node": 4}, None),
    "misaligned_spine": ({"spine_oversubscription": 2}, "rotated"),
    "affinity2": ({"nic_of_gpu": [0, 0, 2, 2, 4, 4, 6, 6], "nics_per_node": 8}, None),
    "affinity4": ({"nic_of_gpu": [0, 0, 0, 0, 4, 4, 4, 4], "nics_per_node": 8}, None),
}
"""The cases of :func:`nic_cases`: TwoLevel keywords and the rank placement (``None`` =
rank order)."""


@dataclass(frozen=True)
class NicCase:
    """One case of :func:`nic_cases`: the inter-node phase, its bandwidth term (time minus
    its 2(N-1) start-ups) and the whole all-reduce; ``_x``: over the rail-aligned case."""
    inter_s: float
    bw_s: float
    whole_s: float
    bw_x: float
    whole_x: float


def nic_cases() -> dict[str, NicCase]:
    """The hierarchical all-reduce of :data:`RAILS` in each case of :data:`NIC_CASES`."""
    N, G, n = RAILS["nodes"], RAILS["gpus_per_node"], RAILS["n"]
    lat = 2 * (N - 1) * RAILS["inter"].alpha
    raw = {}
    for key, (kw, placement) in NIC_CASES.items():
        topo = _two_level(**kw)
        c = VirtualCluster(topo)
        ranks = rotated(N, G) if placement == "rotated" else None
        phase = dict(tier_phases(topo, n, True, allreduce_ring))["rail all-reduce"]
        inter = c.run(phase, ranks=ranks).time
        raw[key] = (inter, inter - lat, c.run(allreduce_hierarchical(topo, n, True, allreduce_ring), ranks=ranks).time)
    _, bw0, whole0 = raw["aligned"]
    return {k: NicCase(i, bw, w, bw / bw0, w / whole0) for k, (i, bw, w) in raw.items()}


def nic_table(cases: dict[str, NicCase] | None = None) -> Table:
    cases = nic_cases() if cases is None else cases
    rows = [{"case": k, **asdict(v)} for k, v in cases.items()]
    return Table(
        key="ch1-nics",
        title=_tx("hierarchical_all_reduce_of", n=fmt_bytes(RAILS['n']), nodes=RAILS['nodes'], gpus_per_node=RAILS['gpus_per_node']),
        columns=["case", "inter_s", "bw_x", "whole_s", "whole_x"],
        headers=_txs("case", "inter_node_phase", "its_bandwidth_term_aligned", "whole_all_reduce", "aligned"),
        rows=rows,
        labels=T.labels(K + "nic."),
    )


# ============================================================================ placement
PLACEMENTS = ("order", "snake", "round_robin", "random")
CLUSTERS = {"plain": {}, "shared": {"nics_per_node": 4}, "spine": {"spine_oversubscription": 2}}
"""Rank placements and cluster variants of :func:`placements`: one NIC per GPU and a
non-blocking spine; two GPUs per NIC; a 2:1 spine."""


def _placement(key: str) -> np.ndarray | None:
    N, G = RAILS["nodes"], RAILS["gpus_per_node"]
    return {"order": None, "snake": snake(N, G), "round_robin": np.arange(N * G).reshape(N, G).T.ravel(),
            "random": np.random.default_rng(0).permutation(N * G)}[key]


def placements() -> dict[str, dict[str, float]]:
    """Flat ring all-reduce of :data:`RAILS` by cluster variant and rank placement (rank
    order; snake; round-robin: rank r on node r mod N; a random permutation, seed 0)."""
    out = {}
    for ck, kw in CLUSTERS.items():
        c = VirtualCluster(_two_level(**kw))
        out[ck] = {pk: coll.all_reduce(c, nbytes=RAILS["n"], ranks=_placement(pk), channels=1).time
                   for pk in PLACEMENTS}
    return out



def placement_table(t: dict | None = None) -> Table:
    t = placements() if t is None else t
    rows = [{"cluster": ck, **t[ck]} for ck in CLUSTERS]
    return Table(
        key="ch1-placement",
        title=_tx("flat_ring_all_reduce", n=fmt_bytes(RAILS['n']), nodes=RAILS['nodes'], gpus_per_node=RAILS['gpus_per_node']),
        columns=["cluster", *PLACEMENTS],
        headers=_txs("cluster", "rank_order", "snake_rail_aligned", "round_robin_over_nodes", "random_seed_0"),
        rows=rows,
        formats={pk: (lambda v: fmt_time(v, 3)) for pk in PLACEMENTS},
        labels=T.labels(K + "place."),
    )
