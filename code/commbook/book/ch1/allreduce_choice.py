r"""Chapter §1.4, all-reduce algorithms, second half: the butterfly's pairing orders, NCCL's
double binary tree, Figure 7's data, the switch point and
Napkin Math 1.5, for ``chapters/{zh,en}/ch1/04-allreduce-algorithms.md`` and the notebooks
of Checkpoint 1.3.  The first half is :mod:`.allreduce_numbers`; Table 2 and the DDP buckets
are in :mod:`.allreduce_facts`.

* Butterfly: the chapter's 8-GPU trace pairs i with i xor 2^k, k = 0, 1, 2 (``near_first``
  in :mod:`commbook.collectives.butterfly`), as MPICH's Rabenseifner all-reduce does;
  MPICH's stand-alone recursive-halving reduce-scatter pairs the far ranks first
  (``far_first``).
  Both cost the same on a switch; :func:`order_table` runs both on other topologies.
* Double binary tree: the chapter's 2log₂N·α + 2M/β is
  :func:`commbook.double_tree.allreduce_double_tree_envelope`, a lower envelope; the time
  of the pipelined schedule at its best chunk count is
  :func:`commbook.double_tree.double_tree_optimum`.
* Switch point: :func:`commbook.cost.crossover_tree_ring` (``exact=False`` is N·α·β/log₂N),
  and :func:`commbook.collectives.crossover` for any two algorithms.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import collectives as coll
from ...coefficients import closed_form_coefficients
from ...collectives import coefficients, crossover, predict
from ...comm_sim import VirtualCluster
from ...cost import crossover_tree_ring
from ...double_tree import allreduce_double_tree_envelope, double_tree_optimum
from ...hardware import IB_NDR, NVLINK4, Link
from ...topology import Ring, Switch, Topology, Torus, TwoLevel
from ...units import GB, KB, MB, fmt_bytes, fmt_number, fmt_ratio, fmt_time, us
from ..names import display_name
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS

T = texts("ch1")
K = "allreduce_choice."
_t = T.under(K)         # the section's entries (ch1.toml, under allreduce_choice.)
_heads = _t.pairs

__all__ = [
    "CHAPTER_STATED", "ORDERS", "order_topologies", "order_table",
    "DTreeRow", "dtree_rows", "dtree_table", "FIG7", "Figure7", "figure7_data",
    "SwitchPoint", "switch_point", "Split", "in_us", "nm15_table", "Checkpoint13", "checkpoint13",
]

CHAPTER_STATED = {
    "butterfly_pairs": [[(0, 1), (2, 3), (4, 5), (6, 7)], [(0, 2), (1, 3), (4, 6), (5, 7)],
                        [(0, 4), (1, 5), (2, 6), (3, 7)]],   # the 8-GPU reduce-scatter, k = 0, 1, 2
    "butterfly_big": 1000, "butterfly_big_pow2": 1024, "butterfly_last_xor": 512,
    "buckets": (25 * MB, 100 * MB),                  # "usually 25–100 MB"
    "fig7": {"p": 256, "gbps": 200, "sizes": (1 * KB, 10 * GB)},
    "s14": {"p": 100, "mb": 3.8},                    # "≈ 3.8 MB" at α = 5 µs, β = 50 GB/s
    "nm15": {"p": 64, "n": 1 * MB, "ten": 10 * MB,
             "ring_lat_us": 1260, "ring_bw_us": 196.9, "ring_us": 1456.9,
             "tree_lat_us": 120, "tree_bw_us": 1200, "tree_us": 1320,
             "margin_pct": 9, "lat_x": 10, "bw_x": 6, "crossover_mb": 1.1},
    "fallacy": {"ring_lat_us": 1260, "tree_bw_us": 1000},   # §1.9: "1,260 µs … exceeds … 1,000 µs"
}
"""The numbers the chapter states in the second half of §1.4 (and the pitfall of §1.9 that
repeats Napkin Math 1.5)."""

ORDERS = ("near_first", "far_first")


# ============================================================================ butterfly
def order_topologies(link: Link = BOX_LINKS["cp1.3"]) -> dict[str, Topology]:
    """8 GPUs four ways (a switch, a bidirectional ring, a 4×2 torus, two nodes of four
    NVLink GPUs joined by InfiniBand NDR) and 1,024 GPUs as 128 such nodes of eight."""
    return {"switch": Switch(8, link), "ring": Ring(8, link), "torus": Torus((4, 2), link),
            "twolevel": TwoLevel(2, 4, NVLINK4, IB_NDR), "twolevel_big": TwoLevel(128, 8, NVLINK4, IB_NDR)}


def order_table(n: float = 64 * MB, link: Link = BOX_LINKS["cp1.3"]) -> Table:
    """Rabenseifner's all-reduce of ``n`` bytes in both pairing orders on the topologies of
    :func:`order_topologies` (simulator), with the ratio far-first / near-first."""
    rows, topos = [], order_topologies(link)
    for key, topo in topos.items():
        t = {o: coll.all_reduce(VirtualCluster(topo), nbytes=n, algorithm="rabenseifner", order=o).time
             for o in ORDERS}
        rows.append({"topo": key, "p": topo.p, "near_first": t["near_first"], "far_first": t["far_first"],
                     "ratio": t["far_first"] / t["near_first"]})
    names = {"switch": _t("topo_switch"), "ring": _t("topo_ring"),
             "torus": _t("topo_torus", dims=" × ".join(map(str, topos["torus"].dims)))}
    for key in ("twolevel", "twolevel_big"):
        names[key] = _t("topo_nodes", nodes=topos[key].nodes, gpn=topos[key].gpus_per_node)
    ab = lambda L: (fmt_time(L.alpha, 3), f"{L.beta / GB:g} GB/s")
    (a, b), (nv_a, nv_b), (ib_a, ib_b) = ab(link), ab(NVLINK4), ab(IB_NDR)
    return Table(
        key="ch1-butterfly-orders", title=_t("order_title", n=fmt_bytes(n)),
        columns=["topo", "p", "near_first", "far_first", "ratio"],
        headers=_heads("h_network", "h_gpus", "h_near", "h_far", "h_far_near"),
        rows=rows,
        formats={"p": lambda p: f"{p:,}", "near_first": lambda t: fmt_time(t, 4),
                 "far_first": lambda t: fmt_time(t, 4), "ratio": lambda x: fmt_ratio(x, 3)},
        labels={lang: {k: v[lang] for k, v in names.items()} for lang in ("en", "zh")},
        notes=_heads("order_note", a=a, b=b, nv_a=nv_a, nv_b=nv_b, ib_a=ib_a, ib_b=ib_b),
    )


# ============================================================================ double tree
@dataclass(frozen=True)
class DTreeRow:
    """One size of :func:`dtree_rows`: ring, tree, the chapter's envelope, the pipelined double
    tree at its best chunk count ``chunks`` (per tree)."""

    n_bytes: float
    ring_s: float
    tree_s: float
    envelope_s: float
    double_tree_s: float
    chunks: int


def dtree_rows(p: int, sizes, link: Link) -> list[DTreeRow]:
    """Per size: ring, tree, the chapter's envelope and the pipelined double tree at its best
    chunk count k (closed forms)."""
    out = []
    for n in sizes:
        k, best = double_tree_optimum(p, n, link.alpha, link.beta)
        out.append(DTreeRow(float(n), predict("all_reduce", "ring", p, n, link.alpha, link.beta),
                            predict("all_reduce", "tree", p, n, link.alpha, link.beta),
                            allreduce_double_tree_envelope(p, n, link.alpha, link.beta), best, k))
    return out


def dtree_table(p: int, sizes, link: Link) -> Table:
    """:func:`dtree_rows` as a table: per size the best chunk count, the pipelined double tree,
    the chapter's envelope, the binomial tree and the ring."""
    return Table(
        key="ch1-dtree-chunks",
        title=_t("dtree_title", p=p, a=fmt_time(link.alpha, 3), b=f"{link.beta / GB:g} GB/s"),
        columns=["n_bytes", "chunks", "double_tree_s", "envelope_s", "tree_s", "ring_s"],
        headers=_heads("h_message", "h_chunks", "h_dtree", "h_envelope", "h_tree", "h_ring"),
        rows=dtree_rows(p, sizes, link),
        formats={"chunks": lambda k: f"{k:,}"},
        notes=_heads("dtree_note"),
    )


FIG7 = {"p": 256, "link": BOX_LINKS["fig7"], "sizes": (1 * KB, 10 * GB), "points": 8}
"""Figure 7: 256 GPUs on InfiniBand HDR (25 GB/s, α = 3.5 µs), 1 KB to 10 GB, ``points`` sizes per decade."""


@dataclass(frozen=True)
class Figure7:
    """:func:`figure7_data`: the link (α, β, its line rate as text), the size range, the
    crossovers ring = tree, ring = pipelined double tree, ring = envelope, the chapter's
    N·α·β/log₂N, and the curves (``rows``)."""

    p: int
    alpha_s: float
    beta_Bps: float
    line_rate: str
    lo_bytes: float
    hi_bytes: float
    x_tree_bytes: float
    x_dtree_bytes: float
    x_env_bytes: float
    approx_bytes: float
    rows: tuple[DTreeRow, ...]


def figure7_data(p: int = FIG7["p"], link: Link = FIG7["link"], sizes=FIG7["sizes"],
                 points: int = FIG7["points"]) -> Figure7:
    """Figure 7's curves (:func:`dtree_rows` over log-spaced sizes) and its crossovers: ring =
    tree and ring = pipelined double tree (:func:`commbook.collectives.crossover`), ring =
    envelope (both affine in n)."""
    lo, hi = (math.log10(s) for s in sizes)
    grid = np.logspace(lo, hi, round((hi - lo) * points) + 1)
    rows = dtree_rows(p, grid, link)
    a, b = link.alpha, link.beta
    ring, envelope = coefficients("all_reduce", "ring", p), closed_form_coefficients(allreduce_double_tree_envelope, p)
    env = (envelope.alpha_steps - ring.alpha_steps) * a * b / (ring.beta_bytes_per_byte - envelope.beta_bytes_per_byte)
    return Figure7(p, a, b, f"{b * 8 / 1e9:g} Gb/s", rows[0].n_bytes, rows[-1].n_bytes,
                   crossover("ring", "tree", p, a, b), crossover("ring", "double_tree", p, a, b), env,
                   crossover_tree_ring(p, a, b, exact=False), tuple(rows))


def alpha_steps_fold(p: int) -> int:
    """Extra α steps of Rabenseifner's all-reduce on ``p`` ranks (not a power of two) over
    2⌊log₂p⌋: MPICH's fold and unfold, read from the closed form at n = 0, α = 1."""
    return round(coefficients("all_reduce", "rabenseifner", p).alpha_steps) - 2 * (p.bit_length() - 1)


# ============================================================================ switch point
@dataclass(frozen=True)
class SwitchPoint:
    """:func:`switch_point`: the chapter's N·α·β/log₂N, the cruder N·α·β, the exact meeting
    of the closed forms and the same found numerically."""

    p: int
    alpha_s: float
    beta_Bps: float
    approx_bytes: float
    crude_bytes: float
    exact_bytes: float
    numeric_bytes: float


def switch_point(p: int, link: Link) -> SwitchPoint:
    """The ring–tree switch point on ``p`` ranks of ``link``: the chapter's N·α·β/log₂N, the
    cruder N·α·β, and the exact size where the closed forms meet."""
    a, b = link.alpha, link.beta
    return SwitchPoint(p, a, b, crossover_tree_ring(p, a, b, exact=False), p * a * b,
                       crossover_tree_ring(p, a, b, exact=True), crossover("ring", "tree", p, a, b))


@dataclass(frozen=True)
class Split:
    """An all-reduce's latency term, bandwidth term and total (closed form)."""

    latency_s: float
    bandwidth_s: float
    total_s: float


def _terms(name: str, p: int, n: float, link: Link) -> Split:
    lat = predict("all_reduce", name, p, 0.0, link.alpha, link.beta)
    total = predict("all_reduce", name, p, n, link.alpha, link.beta)
    return Split(lat, total - lat, total)


def in_us(t: float) -> str:
    """A time in microseconds, as Napkin Math 1.5 states them: '196.875 µs', '1,320 µs'."""
    return f"{fmt_number(t / us, 7)} µs"


def nm15_table(rows: list[dict], p: int, n: float, ten: float, link: Link) -> Table:
    """Napkin Math 1.5's table (the page computes the rows: ``n``, ``algo``, ``latency_s``,
    ``bandwidth_s``, ``total_s``): ring and tree on ``p`` GPUs of ``link``, at the box's size
    ``n`` and at ``ten``."""
    return Table(
        key="ch1-nm1.5",
        title=_t("nm15_title", p=p, n=fmt_bytes(n), ten=fmt_bytes(ten), a=fmt_time(link.alpha, 3),
                 b=f"{link.beta / GB:g} GB/s"),
        columns=["n", "algo", "latency_s", "bandwidth_s", "total_s"],
        headers=_heads("h_message", "h_algorithm", "h_latency", "h_bandwidth", "h_total"),
        rows=rows, formats={"n": fmt_bytes, "latency_s": in_us, "bandwidth_s": in_us, "total_s": in_us},
        labels={lang: {a: display_name("all_reduce", a, lang) for a in ("ring", "tree")} for lang in ("en", "zh")},
    )


@dataclass(frozen=True)
class Checkpoint13:
    """:func:`checkpoint13`: the switch point, the buffer, ring and tree, and the faster one."""

    switch: SwitchPoint
    n_bytes: float
    ring: Split
    tree: Split
    choice: str


def checkpoint13(link: Link = BOX_LINKS["cp1.3"], p: int = 256, n: float = 10 * MB) -> Checkpoint13:
    """Checkpoint 1.3, question 2: the switch point on ``p`` GPUs of ``link`` and the choice
    for an ``n``-byte buffer."""
    ring, tree = (_terms(a, p, n, link) for a in ("ring", "tree"))
    return Checkpoint13(switch_point(p, link), n, ring, tree, "ring" if ring.total_s <= tree.total_s else "tree")
