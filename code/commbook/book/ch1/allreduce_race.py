"""Chapter §1.4.7, "What the switch model leaves out": the all-reduces of the section's race
on clusters of real shape instead of a contention-free switch.

On ``Switch(256, IB_HDR)`` the closed forms make Rabenseifner the fastest at every size.
The page runs the ring as NCCL does (a channel per NIC, PXN), Rabenseifner in
both pairing orders and the binomial tree on the simulator, on three clusters: a power of
two of 8-GPU nodes, a node count that is not one (MPICH's fold), and racks under a 2:1
spine.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...hardware import IB_HDR, NVLINK4, Link
from ...topology import ThreeTier, Topology, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_time
from ..tables import Table
from ..text import texts

T, K = texts("ch1"), "allreduce_race."

__all__ = ["RACE_SIZES", "RACE_ALGORITHMS", "RaceCluster", "race_clusters", "race_key", "race_table"]

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


def race_key(name: str, params: dict) -> str:
    """The column of an algorithm of :data:`RACE_ALGORITHMS`: ``ring``, ``rabenseifner_near_first`` …."""
    return name if not params else f"{name}_{params['order']}"


def race_table(rows: list[dict], clusters: tuple[RaceCluster, ...]) -> Table:
    """The race of §1.4.7, one row per cluster and size (the page runs it): ``cluster`` (a key
    of ``clusters``), ``p``, ``n``, the time of each algorithm of :data:`RACE_ALGORITHMS` under
    :func:`race_key`, and the ``fastest``."""
    keys = [race_key(a, p) for a, p in RACE_ALGORITHMS]
    names = T.labels(K + "algo.")
    labels = {lang: {**{c.key: getattr(c, lang) for c in clusters}, **names[lang]} for lang in ("en", "zh")}
    fmt = {k: (lambda t: fmt_time(t, 3)) for k in keys}
    return Table(
        key="ch1-ar-race",
        title=T(K + "title"),
        columns=["cluster", "p", "n", *keys, "fastest"],
        headers={lang: [*T.pairs(K + "h_cluster", K + "h_gpus", K + "h_size")[lang], *(names[lang][k] for k in keys),
                        T.get(K + "h_fastest", lang)] for lang in ("en", "zh")},
        rows=rows,
        formats={"p": lambda v: f"{v}", "n": fmt_bytes, **fmt},
        labels=labels,
        notes=T.pairs(K + "note", ib_alpha=fmt_time(IB_HDR.alpha)),
    )
