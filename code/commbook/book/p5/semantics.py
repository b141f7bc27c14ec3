"""P5 §4 tables (script 02): what each collective does, its cost, its lower bound."""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import (all_gather, all_reduce, all_to_all, broadcast, reduce,
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

T = texts("p5")
LANGS = ("en", "zh")


def _zh_labels(**keys: str) -> dict[str, dict[str, str]]:
    """Table labels: each cell value (its English text in the text file) → its Chinese."""
    return {"zh": {T.get(k, "en"): T.get(k, "zh") for k in keys.values()}}


def demo_02_1(p: int = 4) -> Table:
    """Demo 02-1 (lecture §4.1, what each one does): inputs and outputs of the six
    collectives on ``p`` devices, device d holding [10d, 10d+1, ..., 10d+p-1].

    Real-data simulator runs on a switch (outputs checked against numpy).  All-gather:
    each device contributes its whole vector (the lecture does not say; the inventory
    notes the ambiguity).  Anchors (p = 4): broadcast [0,1,2,3]; reduce on the root
    [60,64,68,72]; reduce-scatter [60],[64],[68],[72]; all-to-all = transpose
    [0,10,20,30], [1,11,21,31], ...
    """
    c = VirtualCluster(Switch(p, NVLINK4))
    x = [np.array([10 * d + k for k in range(p)], dtype=np.int64) for d in range(p)]
    runs = [
        ("input", x),
        ("broadcast (root 0)", broadcast(c, x).outputs),
        ("reduce (root 0)", reduce(c, x).outputs),
        ("all-reduce", all_reduce(c, x).outputs),
        ("reduce-scatter", reduce_scatter(c, x).outputs),
        ("all-gather", all_gather(c, x).outputs),
        ("all-to-all", all_to_all(c, x).outputs),
    ]
    cols = [f"d{d}" for d in range(p)]
    rows = []
    for name, outs in runs:
        row = {"op": name}
        row.update({col: (None if o is None else [int(v) for v in np.ravel(o)]) for col, o in zip(cols, outs)})
        rows.append(row)
    return Table(
        key="02-1",
        title=T("semantics.02_1_title", p=p),
        columns=["op"] + cols,
        headers={lang: [T.get("semantics.h_collective", lang)] + [T.get("semantics.h_device", lang, d=d)
                                                                    for d in range(p)] for lang in LANGS},
        rows=rows,
        labels=_zh_labels(a="semantics.op_input", b="semantics.op_broadcast", c="semantics.op_reduce"),
        notes=T.pairs("semantics.02_1_note", pp=p * p),
    )


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
    trows = []
    for n in sizes:
        for algo in ("scatter_allgather", "binomial"):
            r = broadcast(c, nbytes=n, algorithm=algo)
            trows.append({"n": float(n), "algorithm": algo, "time": r.time, "rounds": r.rounds,
                          "root_bytes": float(r.bytes_sent[0])})
    o = ORIGINAL_02_2B
    dec = {a: broadcast(c, nbytes=o["mb"] * MB, algorithm=a).time for a in ("scatter_allgather", "binomial")}
    n0 = trows[0]["n"]
    root = {r["algorithm"]: r["root_bytes"] / n0 for r in trows[:2]}
    notes = [tuple(T.get("semantics.root_bytes", lang, sag=f"{root['scatter_allgather']:.4g}",
                         bino=f"{root['binomial']:.4g}") for lang in LANGS)]
    if p == o["p"] and link == o["link"] and o["mb"] * MiB in sizes:
        mib = {r["algorithm"]: r["time"] / us for r in trows if r["n"] == o["mb"] * MiB}
        sag, bino = mib["scatter_allgather"], mib["binomial"]
        d_sag, d_bino = dec["scatter_allgather"] / us, dec["binomial"] / us
        size = f"{o['mb']:g}"
        matches = (round(sag), round(bino)) == o["us"]
        said = dict(sag=o["us"][0], bino=o["us"][1], size=size)
        here = dict(sag=f"{sag:.2f}", bino=f"{bino:.2f}", d_sag=f"{d_sag:.2f}", d_bino=f"{d_bino:.2f}", size=size,
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
        meta={"decimal_8MB": dec},
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
