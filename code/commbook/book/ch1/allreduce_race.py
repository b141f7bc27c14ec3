"""Chapter §1.4.7, "What the switch model leaves out": the all-reduces of the section's race
on clusters of real shape instead of a contention-free switch.

On ``Switch(256, IB_HDR)`` the closed forms make Rabenseifner the fastest at every size.
:func:`race` runs the ring as NCCL does (a channel per NIC, PXN), Rabenseifner in
both pairing orders and the binomial tree on the simulator, on three clusters: a power of
two of 8-GPU nodes, a node count that is not one (MPICH's fold), and racks under a 2:1
spine.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ... import collectives as coll
from ...comm_sim import VirtualCluster
from ...hardware import IB_HDR, NVLINK4, Link
from ...topology import ThreeTier, Topology, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_time
from ..tables import Table
from ..text import texts

T, K = texts("ch1"), "allreduce_race."

__all__ = ["RACE_SIZES", "RACE_ALGORITHMS", "RaceCluster", "race_clusters", "Race", "race", "race_table"]

RACE_SIZES = (64 * KB, 25 * MB, 1 * GB)
"""A small message, a DDP bucket, a whole gradient."""
RACE_ALGORITHMS = (("ring", {}), ("rabenseifner", {"order": "near_first"}),
                   ("rabenseifner", {"order": "far_first"}), ("tree", {}))
"""(registry name, parameters): the ring at its default (NCCL's channels), the butterfly in
both orders, the binomial tree."""


@dataclass(frozen=True)
class RaceCluster:
    """One cluster of the race: a key, its names in both languages and the topology."""

    key: str
    en: str
    zh: str
    topology: Topology


def race_clusters(intra: Link = NVLINK4, inter: Link = IB_HDR) -> tuple[RaceCluster, ...]:
    """32 nodes × 8 GPUs (256, a power of two), 12 × 8 (96, not one), and 4 racks × 8 nodes
    × 8 GPUs with 2:1 between the racks; a NIC per GPU and PXN throughout."""
    topos = {"pow2": TwoLevel(32, 8, intra, inter, pxn=True), "npow2": TwoLevel(12, 8, intra, inter, pxn=True),
             "racks": ThreeTier(4, 8, 8, intra, inter, rack_oversubscription=2.0, pxn=True)}
    return tuple(RaceCluster(k, *T(f"{K}cluster.{k}").values(), topo) for k, topo in topos.items())


def _key(name: str, params: dict) -> str:
    return name if not params else f"{name}_{params['order']}"


@dataclass(frozen=True)
class Race:
    """:func:`race`: ring against the near-first (``rab``) and far-first butterfly at the
    largest size on the power-of-two cluster (``big``), the other one (``np``) and across
    racks (``far``), and at the smallest size (``small``, where the ring pays ``steps`` α);
    ``rows`` holds every time, keyed by cluster and size, ``clusters`` the clusters raced."""

    big_ring_s: float
    big_rab_s: float
    np_p: int
    np_ring_s: float
    np_rab_s: float
    far_s: float
    far_ring_s: float
    small_ring_s: float
    small_rab_s: float
    steps: int
    rows: tuple = field(repr=False)
    clusters: tuple = field(repr=False)


def race(sizes=RACE_SIZES, clusters: tuple[RaceCluster, ...] | None = None) -> Race:
    """Simulated all-reduce time of every algorithm of :data:`RACE_ALGORITHMS` at each size on
    each cluster (keys ``pow2``, ``npow2``, ``racks``, as :func:`race_clusters`), with the fastest.

    >>> race(sizes=(64 * KB,)).steps
    510
    """
    clusters = race_clusters() if clusters is None else clusters
    rows = []
    for c in clusters:
        vc = VirtualCluster(c.topology)
        for n in sizes:
            row = {"cluster": c.key, "p": c.topology.p, "n": float(n)}
            for name, params in RACE_ALGORITHMS:
                row[_key(name, params)] = coll.all_reduce(vc, nbytes=float(n), algorithm=name, **params).time
            times = {k: row[k] for k in (_key(a, p) for a, p in RACE_ALGORITHMS)}
            row["fastest"] = min(times, key=times.get)
            rows.append(row)
    at = {(r["cluster"], r["n"]): r for r in rows}
    big, small = float(max(sizes)), float(min(sizes))
    b, n, f, s = at["pow2", big], at["npow2", big], at["racks", big], at["pow2", small]
    rab = "rabenseifner_near_first"
    return Race(b["ring"], b[rab], n["p"], n["ring"], n[rab], f["rabenseifner_far_first"], f["ring"], s["ring"],
                s[rab], 2 * (s["p"] - 1), tuple(rows), tuple(clusters))


def race_table(r: Race | None = None) -> Table:
    """The times of :func:`race` with the fastest, one row per cluster and size."""
    r = race() if r is None else r
    clusters = r.clusters
    keys = [_key(a, p) for a, p in RACE_ALGORITHMS]
    names = T.labels(K + "algo.")
    labels = {lang: {**{c.key: getattr(c, lang) for c in clusters}, **names[lang]} for lang in ("en", "zh")}
    fmt = {k: (lambda t: fmt_time(t, 3)) for k in keys}
    return Table(
        key="ch1-ar-race",
        title=T(K + "title"),
        columns=["cluster", "p", "n", *keys, "fastest"],
        headers={lang: [*T.pairs(K + "h_cluster", K + "h_gpus", K + "h_size")[lang], *(names[lang][k] for k in keys),
                        T.get(K + "h_fastest", lang)] for lang in ("en", "zh")},
        rows=list(r.rows),
        formats={"p": lambda v: f"{v}", "n": fmt_bytes, **fmt},
        labels=labels,
        notes=T.pairs(K + "note", ib_alpha=fmt_time(IB_HDR.alpha)),
    )
