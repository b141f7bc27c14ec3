"""Chapter §1.9, fallacies and pitfalls, items 1–4, for ``chapters/{zh,en}/ch1/09-fallacies.md``
in its order: (1) bandwidth only, :func:`bandwidth_table`; (2) all-reduce for routing,
:func:`alltoall_by_allreduce`; (3) the pipeline bubble, :func:`bubble_table`; (4) ring against
tree, :func:`ring_tree` (items 1 and 3 compute their numbers on the page).  Items 5–8
(compression, asynchrony, corruption) are in :mod:`.fallacies_training`, items 9–12 (topology
and placement) in :mod:`.fallacies_topology`.

Each builder returns one typed result whose fields carry their units (``_s``, ``_us`` (a
plain number of µs), ``_bytes``, ``_Bps``, ``_x``, ``_frac``, ``_times`` (a plain multiple,
written without ×); counts are ints; powers of ten are text): the page glues it with
:func:`commbook.book.glue.glue_fields` and the item's table reads it.  What the chapter
prints where it differs is kept in :data:`CHAPTER`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import collectives as coll
from ...collectives import crossover, t_formula
from ...comm_sim import VirtualCluster
from ...cost import p2p_time
from ...hardware import IB_NDR_CHAPTER
from ...parallelism import min_microbatches, pipeline_bubble_fraction
from ...topology import Switch
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time, us
from ..names import display_name
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS

__all__ = [
    "CHAPTER", "sci", "BANDWIDTH", "bandwidth_table", "AllToAll",
    "alltoall_by_allreduce", "alltoall_table", "BUBBLE", "bubble_table",
    "RING_TREE", "RingTree", "ring_tree", "ring_tree_parts_table", "ring_tree_table"]

T = texts("ch1")
K = "fallacies."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two
_tt = T.under("fallacies_tables.")     # the entries of the item tables


CHAPTER = {"bubble_m": 32, "tree_bw": 1000e-6, "flat_traffic_cut": 8, "flat_speedup": 4.8,
           "nvlink_bidirectional": 900e9, "mapping_share": (0.5, 0.6)}
"""What the chapter prints where the page differs or quotes it: m ≥ 32 micro-batches for p ≥ 8;
the tree's 1,000 µs (napkin math 1.5: 1,200); "8× less inter-node traffic, ≈ 4.8×"; NVLink's
900 GB/s (both directions); training at 50–60 % of nccl-tests' bandwidth."""

_t3 = lambda t: fmt_time(t, 3)
_x = fmt_ratio


def sci(x: float, digits: int = 2) -> str:
    """A large or small number with a power of ten.

    >>> sci(2.76e21)
    '2.8 × 10²¹'
    """
    mant, exp = f"{x:.{digits - 1}e}".split("e")
    return f"{mant} × 10{str(int(exp)).translate(str.maketrans('-0123456789', '⁻⁰¹²³⁴⁵⁶⁷⁸⁹'))}"


# ============================================================================ 1 bandwidth
BANDWIDTH = {"alpha": 5e-6, "rates_bps": (100e9, 400e9, 800e9),
             "sizes": (4 * KB, 64 * KB, 1 * MB, 100 * MB, 1 * GB)}
"""A message path with 5 µs of software start-up, on three line rates (bits/s)."""


def bandwidth_table(alpha: float = BANDWIDTH["alpha"], rates_bps=BANDWIDTH["rates_bps"],
                    sizes=BANDWIDTH["sizes"]) -> Table:
    """α + n/β for each size on each line rate, and what the second and third rate gain
    over the first; ``meta["n_star"]`` holds αβ per rate."""
    betas = [r / 8 for r in rates_bps]
    rows = []
    for n in sizes:
        t = [p2p_time(n, alpha, b) for b in betas]
        rows.append({"n": n, **{f"t{i}": x for i, x in enumerate(t)},
                     "gain": t[0] / t[1], "gain_top": t[0] / t[-1]})
    names = [f"{r / 1e9:g} Gb/s" for r in rates_bps]
    stars = ", ".join(fmt_bytes(alpha * b) for b in betas)
    cols = [f"t{i}" for i in range(len(betas))]
    return Table(
        key="ch1-fall-bw",
        title=_tx("one_message_with_on", alpha=fmt_time(alpha, 3)),
        columns=["n", *cols, "gain", "gain_top"],
        headers={lang: [T.get(K + "bw_message", lang), *names,
                        *(T.get(K + "bw_gain", lang, a=names[0], b=x) for x in (names[1], names[-1]))]
                 for lang in ("en", "zh")},
        rows=rows, formats={"n": fmt_bytes, **{c: _t3 for c in cols}, "gain": _x, "gain_top": _x},
        notes=_txs("n_n_is_on", stars=stars),
        meta={"n_star": [alpha * b for b in betas], "betas": betas},
    )


# ============================================================================ 2 all-reduce as routing
@dataclass(frozen=True)
class AllToAll:
    """An all-to-all against the same routing done by an all-reduce, per rank."""
    p: int
    n_bytes: float            # the all-to-all's buffer
    buffer_bytes: float       # the all-reduce's, p · n
    a2a_bytes: float          # sent
    ar_bytes: float
    a2a_s: float
    ar_s: float
    same: bool                # both deliver the same outputs
    bytes_times: float        # all-reduce over all-to-all, bytes
    t_times: float            # ... time


def alltoall_by_allreduce(p: int = 8, n: float = 8 * MB, link=IB_NDR_CHAPTER, block: int = 4) -> AllToAll:
    """An all-to-all of ``n`` bytes per rank against the same routing done by an all-reduce:
    every rank writes its buffer into its own row of a zero p × n buffer, the ring sums the
    rows, and rank j reads block j of every row.  Size-only runs give bytes and times on a
    switch of ``link``; a real-data run (``block`` int64 values per destination) checks that
    both deliver the same outputs.

    >>> alltoall_by_allreduce().bytes_times
    16.0
    """
    c = VirtualCluster(Switch(p, link))
    a2a, ar = coll.all_to_all(c, nbytes=n), coll.all_reduce(c, nbytes=p * n)
    x = [np.arange(p * block, dtype=np.int64) + 1000 * r for r in range(p)]
    want = coll.all_to_all(c, x).outputs
    padded = [np.zeros((p, p * block), dtype=np.int64) for _ in range(p)]
    for r in range(p):
        padded[r][r] = x[r]
    rows = coll.all_reduce(c, [b.ravel() for b in padded]).outputs[0].reshape(p, p * block)
    same = all(np.array_equal(want[j], rows[:, j * block:(j + 1) * block].ravel()) for j in range(p))
    sent_a2a, sent_ar = float(a2a.bytes_sent.max()), float(ar.bytes_sent.max())
    return AllToAll(p=p, n_bytes=n, buffer_bytes=p * n, a2a_bytes=sent_a2a, ar_bytes=sent_ar, a2a_s=a2a.time,
                    ar_s=ar.time, same=same, bytes_times=sent_ar / sent_a2a, t_times=ar.time / a2a.time)


def alltoall_table(r: AllToAll | None = None) -> Table:
    """The exchange of :func:`alltoall_by_allreduce`, per rank."""
    r = alltoall_by_allreduce() if r is None else r
    rows = [{"how": "a2a", "buffer": r.n_bytes, "sent": r.a2a_bytes, "time": r.a2a_s},
            {"how": "ar", "buffer": r.buffer_bytes, "sent": r.ar_bytes, "time": r.ar_s}]
    return Table(
        key="ch1-fall-a2a", title=_tt("routing_per_rank_on", n=fmt_bytes(r.n_bytes), p=r.p),
        columns=["how", "buffer", "sent", "time"],
        headers=_tt.pairs("blank", "buffer_per_rank", "sent_per_rank", "time"),
        rows=rows, formats={"buffer": fmt_bytes, "sent": fmt_bytes, "time": _t3},
        labels={lang: {k: T.get("fallacies_tables.labels." + k, lang) for k in ("a2a", "ar")} for lang in ("en", "zh")},
        notes=_tt.pairs("simulated_on_one_switch"), meta=r)


# ============================================================================ 3 pipeline bubble
BUBBLE = {"p": 8, "m": 32, "target": 0.2, "ms": (8, 16, 28, 29, 32, 64), "deeper": (16, 32)}
"""The pipeline of the item: 8 stages, 32 micro-batches, a bubble under 20 %."""


def bubble_table(p: int = BUBBLE["p"], ms=BUBBLE["ms"], target: float = BUBBLE["target"]) -> Table:
    """The bubble for several micro-batch counts at ``p`` stages, and whether it is below ``target``."""
    rows = [{"m": m, "bubble": pipeline_bubble_fraction(p, m), "below": pipeline_bubble_fraction(p, m) < target}
            for m in ms]
    return Table(
        key="ch1-fall-bubble",
        title=_tx("pipeline_bubble_with_p", p=p),
        columns=["m", "bubble", "below"],
        headers=_txs("pp_m", "pp_bubble", "pp_below", target=fmt_pct(target)),
        rows=rows, formats={"bubble": fmt_pct},
        notes=_txs("smallest_m_below", target=fmt_pct(target), p=min_microbatches(p, target)),
    )


# ============================================================================ 4 ring against tree
RING_TREE = {"p": 64, "n": 1 * MB, "link": BOX_LINKS["nm1.5"], "sizes": (64 * KB, 1 * MB, 16 * MB)}
"""Napkin math 1.5's case, which the item repeats: 64 GPUs, 1 MB, α = 10 µs, β = 10 GB/s."""


@dataclass(frozen=True)
class RingTree:
    """Start-up and bandwidth terms of ring and binomial tree (µs), the tree's steps, the
    switch size (exact, log-aware pαβ/log₂p, crude pαβ), and the switch on twice the GPUs (``q_``)."""
    p: int
    n_bytes: float
    alpha_s: float
    beta_Bps: float
    ring_lat_us: float
    ring_bw_us: float
    ring_us: float
    tree_lat_us: float
    tree_bw_us: float
    tree_us: float
    steps: int
    step_bw_us: float
    chapter_bw_us: float
    chapter_steps: int        # the tree steps the chapter's penalty implies
    cross_bytes: float
    cross_log_bytes: float
    cross_crude_bytes: float
    crude_times: float
    q_p: int
    q_cross_bytes: float
    q_cross_log_bytes: float
    q_ring_s: float
    q_tree_s: float
    q_lat_s: float


def _ring_tree_terms(p: int, n: float, a: float, b: float) -> dict:
    f = lambda algo, nn, aa: t_formula(algo, p, nn, aa, b)
    return {"ring_lat": f("ring", 0.0, a), "ring_bw": f("ring", n, 0.0), "ring": f("ring", n, a),
            "tree_lat": f("tree", 0.0, a), "tree_bw": f("tree", n, 0.0), "tree": f("tree", n, a),
            "cross": crossover("ring", "tree", p, a, b), "cross_log": p * a * b / math.log2(p)}


def ring_tree(p: int = RING_TREE["p"], n: float = RING_TREE["n"], link=RING_TREE["link"]) -> RingTree:
    """Latency and bandwidth terms of ring and binomial tree (registry closed forms with
    β → ∞ or α = 0), their totals, and the switch size: exact (:func:`crossover`), the
    log-aware estimate pαβ/log₂p and the crude pαβ; the same on ``2p`` GPUs.

    >>> ring_tree().steps
    12
    """
    a, b = link.alpha, link.beta
    t, q = _ring_tree_terms(p, n, a, b), _ring_tree_terms(2 * p, n, a, b)
    steps = round(t["tree_lat"] / a)
    step = t["tree_bw"] / steps
    return RingTree(p=p, n_bytes=n, alpha_s=a, beta_Bps=b, **{f"{k}_us": t[k] / us for k in (
                        "ring_lat", "ring_bw", "tree_lat", "tree_bw")}, ring_us=t["ring"] / us, tree_us=t["tree"] / us,
                    steps=steps, step_bw_us=step / us, chapter_bw_us=CHAPTER["tree_bw"] / us,
                    chapter_steps=round(CHAPTER["tree_bw"] / step), cross_bytes=t["cross"],
                    cross_log_bytes=t["cross_log"], cross_crude_bytes=p * a * b, crude_times=p * a * b / t["cross"],
                    q_p=2 * p, q_cross_bytes=q["cross"], q_cross_log_bytes=q["cross_log"], q_ring_s=q["ring"],
                    q_tree_s=q["tree"], q_lat_s=q["ring_lat"])


def ring_tree_parts_table(rt: RingTree | None = None) -> Table:
    """Start-up and bandwidth parts of :func:`ring_tree`."""
    rt = ring_tree() if rt is None else rt
    f = lambda v: f"{v / us:,.1f} µs"
    rows = [{"algo": a, "lat": getattr(rt, f"{a}_lat_us") * us, "bw": getattr(rt, f"{a}_bw_us") * us,
             "total": getattr(rt, f"{a}_us") * us} for a in ("ring", "tree")]
    return Table(
        key="ch1-fall-ring-parts",
        title=_tt("one_all_reduce_of", n=fmt_bytes(rt.n_bytes), p=rt.p),
        columns=["algo", "lat", "bw", "total"],
        headers=_tt.pairs("blank_2", "start_ups", "bandwidth_0", "total"),
        rows=rows, formats={"lat": f, "bw": f, "total": f},
        labels={lang: {k: T.get("fallacies_tables.rt_" + k, lang, steps=rt.steps) for k in ("ring", "tree")}
                for lang in ("en", "zh")},
        notes=_tt.pairs("gb_s", alpha=_t3(rt.alpha_s), beta=rt.beta_Bps / 1e9), meta=rt)


def ring_tree_table(p: int = RING_TREE["p"], sizes=RING_TREE["sizes"], link=RING_TREE["link"]) -> Table:
    """Ring and tree all-reduce at several sizes, and which is faster."""
    rows, a, b = [], link.alpha, link.beta
    for n in sizes:
        r, t = t_formula("ring", p, n, a, b), t_formula("tree", p, n, a, b)
        rows.append({"n": n, "ring": r, "tree": t, "best": "tree" if t < r else "ring"})
    given, cross = f"α = {fmt_time(a, 3)}, β = {b / GB:g} GB/s", fmt_bytes(crossover("ring", "tree", p, a, b))
    return Table(
        key="ch1-fall-ring",
        title=_tx("ring_against_tree_on", p=p, given=given),
        columns=["n", "ring", "tree", "best"],
        headers=_txs("all_reduce_of", "ring", "binomial_tree", "faster"),
        rows=rows, formats={"n": fmt_bytes, "ring": _t3, "tree": _t3},
        labels={lang: {a: display_name("all_reduce", a, lang) for a in ("ring", "tree")} for lang in ("en", "zh")},
        notes=_txs("the_two_cross_at", cross=cross),
    )
