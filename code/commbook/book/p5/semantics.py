"""P5 §4 (script 02): what each collective does, its cost, its lower bound, as typed results
(:class:`Semantics`, :class:`BroadcastSplit`, :class:`Bounds`) and the demo tables drawn from them."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import (all_gather, all_reduce, all_to_all, broadcast, crossover, reduce,
                            reduce_scatter, scatter)
from ...comm_sim import VirtualCluster
from ...hardware import NVLINK4, Link
from ..tables import algorithm_labels, Table
from ..text import texts
from ...topology import Switch
from ...units import MB, KiB, MiB, fmt_bytes, us
from .common import US2, original_note

ORIGINAL_02_2B = {"p": 8, "link": NVLINK4, "mb": 8, "us": (49, 62)}
"""The original notes' broadcast of "8 MB" (``mb``) on 8 NVLink 4 devices: their scatter +
all-gather and binomial tree times in µs (demo 02-2b reconciles them)."""

__all__ = ["ORIGINAL_02_2B", "Semantics", "semantics", "demo_02_1", "BroadcastRun", "BroadcastSplit",
           "broadcast_split", "Bounds", "bounds", "demo_02_2", "demo_02_3"]

T = texts("p5")
LANGS = ("en", "zh")


def _zh_labels(**keys: str) -> dict[str, dict[str, str]]:
    """Table labels: each cell value (its English text in the text file) → its Chinese."""
    return {"zh": {T.get(k, "en"): T.get(k, "zh") for k in keys.values()}}


@dataclass(frozen=True)
class Semantics:
    """Demo 02-1's run: the six collectives on ``p`` devices, device d holding
    [10d, ..., 10d+p-1], as prose: the inputs of devices 0 and 1, the all-reduce sum, the
    reduce-scatter pieces of the first and the ``last`` device, the all-gather's length, the
    all-to-all buffers of devices 0 and 1, the number of collectives shown, and the
    reduce-scatter, all-to-all and all-gather buffers of device ``q_d`` (the question's);
    ``outputs`` holds every buffer, (name, one list per device or None), input first."""

    p: int
    last: int
    d0: str
    d1: str
    total: str
    rs_d0: str
    rs_last: str
    ag_len: int
    a2a_d0: str
    a2a_d1: str
    n_ops: int
    q_d: int
    q_rs: str
    q_a2a: str
    q_ag: str
    outputs: tuple


def semantics(p: int = 4, device: int = 2) -> Semantics:
    """Run demo 02-1 on ``Switch(p, NVLINK4)`` with real data; the question asks about ``device``.

    Anchors (p = 4): broadcast [0,1,2,3]; reduce on the root [60,64,68,72]; reduce-scatter
    [60],[64],[68],[72]; all-to-all = transpose [0,10,20,30], [1,11,21,31], ...

    >>> semantics(4).total
    '60, 64, 68, 72'
    """
    if not 0 <= device < p:
        raise ValueError(f"device must be in 0..{p - 1}, got {device!r}")
    c = VirtualCluster(Switch(p, NVLINK4))
    x = [np.array([10 * d + k for k in range(p)], dtype=np.int64) for d in range(p)]
    outs = {"input": x, "broadcast (root 0)": broadcast(c, x).outputs, "reduce (root 0)": reduce(c, x).outputs,
            "all-reduce": all_reduce(c, x).outputs, "reduce-scatter": reduce_scatter(c, x).outputs,
            "all-gather": all_gather(c, x).outputs, "all-to-all": all_to_all(c, x).outputs}
    outputs = tuple((name, tuple(None if o is None else [int(v) for v in np.ravel(o)] for o in bufs))
                    for name, bufs in outs.items())
    b = dict(outputs)
    op = lambda name, d: ", ".join(str(v) for v in b[name][d])
    return Semantics(p, p - 1, op("input", 0), op("input", 1), op("all-reduce", 0), op("reduce-scatter", 0),
                     op("reduce-scatter", p - 1), len(b["all-gather"][0]), op("all-to-all", 0), op("all-to-all", 1),
                     len(outputs) - 1, device, op("reduce-scatter", device), op("all-to-all", device),
                     op("all-gather", device), outputs)


def demo_02_1(run: Semantics | None = None, p: int = 4) -> Table:
    """Demo 02-1 (lecture §4.1, what each one does): inputs and outputs of the six
    collectives of :func:`semantics` (``run``, else a fresh one on ``p`` devices).

    Real-data simulator runs on a switch (outputs checked against numpy).  All-gather:
    each device contributes its whole vector (the lecture does not say; the inventory
    notes the ambiguity).  Anchors (p = 4): see :func:`semantics`.
    """
    run = run or semantics(p, device=0)
    cols = [f"d{d}" for d in range(run.p)]
    return Table(
        key="02-1",
        title=T("semantics.02_1_title", p=run.p),
        columns=["op"] + cols,
        headers={lang: [T.get("semantics.h_collective", lang)] + [T.get("semantics.h_device", lang, d=d)
                                                                    for d in range(run.p)] for lang in LANGS},
        rows=[{"op": name, **dict(zip(cols, bufs))} for name, bufs in run.outputs],
        labels=_zh_labels(a="semantics.op_input", b="semantics.op_broadcast", c="semantics.op_reduce"),
        notes=T.pairs("semantics.02_1_note", pp=run.p * run.p),
    )


@dataclass(frozen=True)
class BroadcastRun:
    """One simulated broadcast: its time, rounds and the bytes the root sends per byte of n."""

    time_s: float
    rounds: int
    root_per_n: float


@dataclass(frozen=True)
class BroadcastSplit:
    """Broadcast of ``n_bytes`` (``n`` as a count) on ``p`` devices behind one switch: scatter
    then all-gather (``sag``) against the binomial tree (``bin``), and the size where their
    closed forms cross, also in units of αβ."""

    p: int
    log2_p: int
    n: int
    n_bytes: float
    sag: BroadcastRun
    bin: BroadcastRun
    cross_bytes: float
    cross_per_ab: float


def broadcast_split(p: int, n: float, link: Link) -> BroadcastSplit:
    """:class:`BroadcastSplit` on ``Switch(p, link)``.

    >>> broadcast_split(8, 8 * MiB, NVLINK4).sag.root_per_n
    1.75
    """
    c = VirtualCluster(Switch(p, link))
    runs = {}
    for a in ("scatter_allgather", "binomial"):
        r = broadcast(c, nbytes=n, algorithm=a)
        runs[a] = BroadcastRun(r.time, r.rounds, float(r.bytes_sent[0]) / n)
    x = crossover("scatter_allgather", "binomial", p, link.alpha, link.beta, collective="broadcast")
    return BroadcastSplit(p, int(math.log2(p)), int(n), float(n), runs["scatter_allgather"], runs["binomial"],
                          x, x / link.n_half)


@dataclass(frozen=True)
class Bounds:
    """§4.3's lower bounds on ``p`` devices, per byte of n and for ``n_bytes`` over a NIC of
    ``beta_Bps``: all-reduce 2(p−1)/p·n, all-gather (p−1)/p·n, their ``ratio``, and the
    least time each takes to send."""

    p: int
    n_bytes: float
    beta_Bps: float
    all_reduce_per_n: float
    all_gather_per_n: float
    ratio: float
    all_reduce_bytes: float
    all_reduce_s: float
    all_gather_s: float


def bounds(p: int, n: float, link: Link) -> Bounds:
    """:class:`Bounds` for ``n`` bytes on ``p`` devices, each sending over ``link``.

    >>> bounds(8, 1 * MB, NVLINK4).ratio
    2.0
    """
    ar, ag = (cost.lower_bound_bytes(op, p, 1.0) for op in ("all_reduce", "all_gather"))
    return Bounds(p, float(n), link.beta, ar, ag, ar / ag, ar * n, ar * n / link.beta, ag * n / link.beta)


def _max_diff(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    return float(max(np.abs(np.asarray(u) - np.asarray(v)).max() for u, v in zip(a, b)))


def demo_02_2(p: int = 8, elements: int = 64, seed: int = 2,
              sizes: Sequence[float] = (32 * KiB, 8 * MiB), link: Link = NVLINK4) -> Table:
    """Demo 02-2 (lecture §4.2, identities): three identities checked on ``p`` devices with
    real data, and the broadcast timing that motivates the third.

    Identities (int64 data from ``numpy.random.default_rng(seed)``, ``max |diff| = 0``):
    all-reduce == reduce-scatter then all-gather; all-to-all twice == identity;
    broadcast == scatter then all-gather (composed from the two real collectives).
    Part "02-2b": broadcast of ``sizes`` on a ``link`` switch, scatter + all-gather vs
    binomial tree, with the bytes the root sends.  Anchors: 32 KiB 16.1 vs 6.2 µs;
    8 MiB 49 (48.62) vs 62 (61.92) µs; root bytes 1.75n vs 3n.  Flag F.25: the original's
    49/62 µs need **binary** 8 MiB; decimal 8 MB gives 47.11/59.33 (in an "original notes"
    note, added only in the original's setting :data:`ORIGINAL_02_2B`).
    """
    rng = np.random.default_rng(seed)
    c = VirtualCluster(Switch(p, link))
    x = [rng.integers(-100, 100, elements).astype(np.int64) for _ in range(p)]
    ar = all_reduce(c, x).outputs
    rsag = all_gather(c, reduce_scatter(c, x).outputs).outputs
    twice = all_to_all(c, all_to_all(c, x).outputs).outputs
    bc = broadcast(c, x).outputs
    sag = all_gather(c, scatter(c, x[0]).outputs).outputs
    rows = [
        {"identity": "all-reduce = reduce-scatter ∘ all-gather", "max_diff": _max_diff(ar, rsag)},
        {"identity": "all-to-all ∘ all-to-all = identity", "max_diff": _max_diff(twice, x)},
        {"identity": "broadcast = scatter ∘ all-gather", "max_diff": _max_diff(bc, sag)},
    ]
    for r in rows:
        r["holds"] = r["max_diff"] == 0
    ident = Table(
        key="02-2",
        title=T("semantics.02_2_title", p=p, elements=elements, seed=seed),
        columns=["identity", "max_diff", "holds"],
        headers=T.pairs("semantics.h_identity", "semantics.h_max_diff", "semantics.h_holds"),
        rows=rows,
        labels=_zh_labels(a="semantics.id_a2a"),
    )
    splits = [broadcast_split(p, n, link) for n in sizes]
    trows = [{"n": b.n_bytes, "algorithm": algo, "time": r.time_s, "rounds": r.rounds, "root_bytes": r.root_per_n * b.n_bytes}
             for b in splits for algo, r in (("scatter_allgather", b.sag), ("binomial", b.bin))]
    o = ORIGINAL_02_2B
    dec = broadcast_split(p, o["mb"] * MB, link)
    notes = [tuple(T.get("semantics.root_bytes", lang, sag=f"{splits[0].sag.root_per_n:.4g}",
                         bino=f"{splits[0].bin.root_per_n:.4g}") for lang in LANGS)]
    if p == o["p"] and link == o["link"] and o["mb"] * MiB in sizes:
        mib = next(b for b in splits if b.n_bytes == o["mb"] * MiB)
        sag, bino = mib.sag.time_s / us, mib.bin.time_s / us
        size = f"{o['mb']:g}"
        matches = (round(sag), round(bino)) == o["us"]
        said = dict(sag=o["us"][0], bino=o["us"][1], size=size)
        here = dict(sag=f"{sag:.2f}", bino=f"{bino:.2f}", d_sag=f"{dec.sag.time_s / us:.2f}",
                    d_bino=f"{dec.bin.time_s / us:.2f}", size=size,
                    mib_bytes=f"{o['mb'] * MiB:,.0f}", mb_bytes=f"{o['mb'] * MB:,.0f}")
        why = "semantics.orig_match" if matches else "semantics.orig_nomatch"
        notes.append(original_note(*(
            (T.get("semantics.orig_said", lang, **said), T.get("semantics.orig_here", lang, **here), T.get(why, lang))
            for lang in LANGS)))
    timing = Table(
        key="02-2b",
        title=T("semantics.02_2b_title", p=p, link=link.name),
        columns=["n", "algorithm", "time", "rounds", "root_bytes"],
        headers=T.pairs("semantics.h_n", "semantics.h_algorithm", "semantics.h_time_us", "semantics.h_rounds",
                        "semantics.h_root_bytes"),
        rows=trows,
        formats={"n": lambda n: fmt_bytes(n, binary=True), "time": US2,
                 "root_bytes": lambda b: fmt_bytes(b, binary=True)},
        labels={lang: {a: T.get(f"semantics.bc_{a}", lang) for a in ("binomial", "scatter_allgather")}
                for lang in LANGS},
        notes={lang: [n[i] for n in notes] for i, lang in enumerate(LANGS)},
    )
    ident.parts.append(timing)
    return ident


def _bytes_notes(rows: list[dict], p: int, bound: float, n: float) -> dict[str, list[str]]:
    """Notes of demo 02-3 read off its rows: who meets the lower bound ``bound`` (× n), who
    sends the most on average, whose load is uneven, who stays below the bound."""
    name = {lang: algorithm_labels("all_reduce")[lang] for lang in ("en", "zh")}
    x = lambda v: f"{v / n:.4g}n"
    at = [r["algorithm"] for r in rows if math.isclose(r["max"] / n, bound)]
    below = [r for r in rows if r["max"] / n < bound * (1 - 1e-9)]
    most = max(rows, key=lambda r: r["mean"])
    uneven = [r for r in rows if r["max"] > r["mean"] * (1 + 1e-9)]
    busiest = lambda r: max(range(p), key=lambda d: r[f"d{d}"])
    out = {}
    for lang in LANGS:
        names = T.get("semantics.and", lang).join(name[lang][a] for a in at)
        at_text = (T.get("semantics.bytes_at", lang, names=names, bound=f"{bound:.4g}") if at else
                   T.get("semantics.bytes_none", lang, bound=f"{bound:.4g}"))
        notes = [T.get("semantics.bytes_most", lang, at=at_text, name=name[lang][most["algorithm"]],
                       mean=x(most["mean"]), rounds=most["rounds"])]
        if uneven:
            items = T.get("semantics.uneven_sep", lang).join(
                T.get("semantics.uneven_item", lang, name=name[lang][r["algorithm"]], d=busiest(r),
                      max=x(r["max"]), mean=x(r["mean"])) for r in uneven)
            notes.append(T.get("semantics.uneven", lang, items=items))
        notes += [T.get("semantics.below", lang, name=name[lang][r["algorithm"]], max=x(r["max"])) for r in below]
        out[lang] = notes
    return out


def demo_02_3(p: int = 8, n: float = 1 * MB, link: Link = NVLINK4) -> Table:
    """Demo 02-3 (lecture §4.3, the least bytes each device must send): bytes each device sends in an
    all-reduce of n bytes, per algorithm (simulator byte counts), in units of n.

    Anchors (p = 8): ring and Rabenseifner 1.75 on every device; RD 3; tree
    [3,1,2,1,3,1,2,1]; naive root 7, others 1; in-network 1.  Part "02-3b": the lower
    bounds (:func:`commbook.cost.lower_bound_bytes`): all-reduce 1.75, all-gather,
    reduce-scatter and all-to-all 0.875.  Cells are bytes; they print as multiples of n.
    """
    c = VirtualCluster(Switch(p, link))
    cols = [f"d{d}" for d in range(p)]
    per_n = lambda b: f"{b / n:.4g}"
    rows = []
    for algo in ("ring", "rabenseifner", "rd", "tree", "naive", "innet"):
        r = all_reduce(c, nbytes=n, algorithm=algo)
        row = {"algorithm": algo, "rounds": r.rounds}
        row.update({col: float(b) for col, b in zip(cols, r.bytes_sent)})
        row["max"], row["mean"] = float(r.bytes_sent.max()), float(r.bytes_sent.mean())
        rows.append(row)
    bound = cost.lower_bound_bytes("all_reduce", p, n)
    lb = Table(
        key="02-3b",
        title=T("semantics.02_3b_title", p=p),
        columns=["op", "bound"],
        headers=T.pairs("semantics.h_collective", "semantics.h_per_device"),
        rows=[{"op": op.replace("_", "-"), "bound": cost.lower_bound_bytes(op, p, n)}
              for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")],
        formats={"bound": per_n},
        notes=T.pairs("semantics.02_3b_note"),
    )
    return Table(
        key="02-3",
        title=T("semantics.02_3_title", p=p),
        columns=["algorithm", "rounds"] + cols + ["max", "mean"],
        headers={lang: [T.get("semantics.h_algorithm", lang), T.get("semantics.h_rounds", lang)]
                 + [T.get("semantics.h_dev", lang, d=d) for d in range(p)]
                 + [T.get("semantics.h_max", lang), T.get("semantics.h_mean", lang)] for lang in LANGS},
        rows=rows,
        formats={**{col: per_n for col in cols}, "max": per_n, "mean": per_n},
        labels=algorithm_labels("all_reduce"),
        notes=_bytes_notes(rows, p, bound / n, n),
        meta={"n": float(n)},
        parts=[lb],
    )
