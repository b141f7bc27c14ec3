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
from ..tables import algorithm_labels, Table, bilingual, bilingual_notes
from ...topology import Switch
from ...units import MB, KiB, MiB, fmt_bytes, us
from .common import US2, original_note

ORIGINAL_02_2B = {"p": 8, "link": NVLINK4, "mb": 8, "us": (49, 62)}
"""The original notes' broadcast of "8 MB" (``mb``) on 8 NVLink 4 devices: their scatter +
all-gather and binomial tree times in µs (demo 02-2b reconciles them)."""


def demo_02_1(p: int = 4) -> Table:
    """Demo 02-1 (lecture §4.1 "每一种在做什么"): inputs and outputs of the six
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
        title=bilingual(f"what each collective does: {p} devices, device d starts with [10d, 10d+1, …]",
                     f"每一种集合通信在做什么：{p} 个设备，设备 d 一开始持有 [10d, 10d+1, …]"),
        columns=["op"] + cols,
        headers={"en": ["collective"] + [f"device {d}" for d in range(p)],
                 "zh": ["集合通信"] + [f"设备 {d}" for d in range(p)]},
        rows=rows,
        labels={"zh": {"input": "输入", "broadcast (root 0)": "broadcast（根 0）",
                       "reduce (root 0)": "reduce（根 0）"}},
        notes=bilingual_notes(
            ("All-gather: every device contributes its whole vector, so each ends with the "
             f"{p * p}-element concatenation (long lists are shortened with …). Reduce: only "
             "the root holds the result (— elsewhere).",
             f"all-gather：每个设备贡献整个向量，所以每个人都得到 {p * p} 个元素的拼接"
             "（长列表中间用 … 省略）。reduce：只有根上有结果（其余为 —）。"),
        ),
    )


def _max_diff(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    return float(max(np.abs(np.asarray(u) - np.asarray(v)).max() for u, v in zip(a, b)))


def demo_02_2(p: int = 8, elements: int = 64, seed: int = 2,
              sizes: Sequence[float] = (32 * KiB, 8 * MiB), link: Link = NVLINK4) -> Table:
    """Demo 02-2 (lecture §4.2 "恒等式"): three identities checked on ``p`` devices with
    real data, and the broadcast timing that motivates the third.

    Identities (int64 data from ``numpy.random.default_rng(seed)``, max |diff| = 0):
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
        title=bilingual(f"identities on {p} devices with real data ({elements} int64 per device, seed {seed})",
                     f"在 {p} 个设备上用真实数据验证恒等式（每设备 {elements} 个 int64，种子 {seed}）"),
        columns=["identity", "max_diff", "holds"],
        headers={"en": ["identity", "max |diff|", "holds"], "zh": ["恒等式", "最大 |差|", "成立"]},
        rows=rows,
        labels={"zh": {"all-to-all ∘ all-to-all = identity": "all-to-all ∘ all-to-all = 原样"}},
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
    notes = [(f"The root sends {root['scatter_allgather']:.4g}n with scatter + all-gather "
              f"(2(p−1)/p·n) and {root['binomial']:.4g}n with the binomial tree (⌈log₂p⌉·n).",
              f"根设备发出的字节：scatter + all-gather 为 {root['scatter_allgather']:.4g}n"
              f"（2(p−1)/p·n），二项树为 {root['binomial']:.4g}n（⌈log₂p⌉·n）。")]
    if p == o["p"] and link == o["link"] and o["mb"] * MiB in sizes:
        mib = {r["algorithm"]: r["time"] / us for r in trows if r["n"] == o["mb"] * MiB}
        sag, bino = mib["scatter_allgather"], mib["binomial"]
        d_sag, d_bino = dec["scatter_allgather"] / us, dec["binomial"] / us
        size = f"{o['mb']:g}"
        matches = (round(sag), round(bino)) == o["us"]
        notes.append(original_note(
            (f"{o['us'][0]} vs {o['us'][1]} µs for “{size} MB”",
             f"{sag:.2f} vs {bino:.2f} µs for {size} MiB = {o['mb'] * MiB:,.0f} B and "
             f"{d_sag:.2f} vs {d_bino:.2f} µs for {size} MB = {o['mb'] * MB:,.0f} B",
             "the original values are the binary-size times, rounded" if matches else
             "neither size reproduces the original values"),
            (f"“{size} MB”时为 {o['us'][0]} vs {o['us'][1]} µs",
             f"{size} MiB（{o['mb'] * MiB:,.0f} B）为 {sag:.2f} vs {bino:.2f} µs，"
             f"{size} MB（{o['mb'] * MB:,.0f} B）为 {d_sag:.2f} vs {d_bino:.2f} µs",
             "原值正是二进制大小下的时间取整" if matches else "两种大小都得不到原值")))
    timing = Table(
        key="02-2b",
        title=bilingual(f"broadcast on {p} devices ({link.name} switch): scatter + all-gather vs binomial tree",
                     f"{p} 个设备上的 broadcast（{link.name} 交换机）：scatter + all-gather 对比二项树"),
        columns=["n", "algorithm", "time", "rounds", "root_bytes"],
        headers={"en": ["n", "algorithm", "time (µs)", "rounds", "bytes sent by the root"],
                 "zh": ["n", "算法", "时间（µs）", "步数", "根发出的字节"]},
        rows=trows,
        formats={"n": lambda n: fmt_bytes(n, binary=True), "time": US2,
                 "root_bytes": lambda b: fmt_bytes(b, binary=True)},
        labels={"zh": {"binomial": "二项树", "scatter_allgather": "scatter + all-gather"},
                "en": {"binomial": "binomial tree", "scatter_allgather": "scatter + all-gather"}},
        notes=bilingual_notes(*notes),
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
    at_en = (f"With {' and '.join(name['en'][a] for a in at)} every device sends exactly the lower "
             f"bound {bound:.4g}n" if at else f"No algorithm meets the lower bound {bound:.4g}n on every device")
    en = [f"{at_en}; {name['en'][most['algorithm']]} "
          f"sends the most on average ({x(most['mean'])} per device, in {most['rounds']} rounds)."]
    zh = [f"每个设备恰好发出下界 {bound:.4g}n 的算法：{'、'.join(name['zh'][a] for a in at) or '无'}；"
          f"平均发得最多的是{name['zh'][most['algorithm']]}（每设备 {x(most['mean'])}，共 {most['rounds']} 步）。"]
    if uneven:
        en.append("Uneven loads: " + "; ".join(
            f"{name['en'][r['algorithm']]}: device {busiest(r)} sends {x(r['max'])} against a mean of "
            f"{x(r['mean'])}" for r in uneven) + ".")
        zh.append("负载不均：" + "；".join(
            f"{name['zh'][r['algorithm']]}中设备 {busiest(r)} 发 {x(r['max'])}，平均只有 {x(r['mean'])}"
            for r in uneven) + "。")
    for r in below:
        en.append(f"{name['en'][r['algorithm']]} sends only {x(r['max'])}, below the bound: the "
                  "switch does the adding, so the bound for point-to-point algorithms does not apply.")
        zh.append(f"{name['zh'][r['algorithm']]}每个设备只发 {x(r['max'])}，低于下界：加法在交换机里完成，"
                  "针对点对点算法的下界管不到它。")
    return {"en": en, "zh": zh}


def demo_02_3(p: int = 8, n: float = 1 * MB, link: Link = NVLINK4) -> Table:
    """Demo 02-3 (lecture §4.3 "每个设备至少要传多少字节"): bytes each device sends in an
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
        title=bilingual(f"lower bounds on the bytes each device sends (p = {p})",
                     f"每个设备至少要发的字节（p = {p}）"),
        columns=["op", "bound"],
        headers={"en": ["collective", "bytes per device (× n)"], "zh": ["集合通信", "每设备字节（× n）"]},
        rows=[{"op": op.replace("_", "-"), "bound": cost.lower_bound_bytes(op, p, n)}
              for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")],
        formats={"bound": per_n},
        notes=bilingual_notes(("All-reduce 2(p−1)/p·n (Patarasuk & Yuan 2009); the others (p−1)/p·n.",
                      "all-reduce 为 2(p−1)/p·n（Patarasuk & Yuan 2009）；其余为 (p−1)/p·n。")),
    )
    return Table(
        key="02-3",
        title=bilingual(f"bytes sent per device in an all-reduce of n bytes, p = {p} (× n)",
                     f"n 字节的 all-reduce 中每个设备发出的字节，p = {p}（× n）"),
        columns=["algorithm", "rounds"] + cols + ["max", "mean"],
        headers={"en": ["algorithm", "rounds"] + [f"dev {d}" for d in range(p)] + ["max", "mean"],
                 "zh": ["算法", "步数"] + [f"设备 {d}" for d in range(p)] + ["最大", "平均"]},
        rows=rows,
        formats={**{col: per_n for col in cols}, "max": per_n, "mean": per_n},
        labels=algorithm_labels("all_reduce"),
        notes=_bytes_notes(rows, p, bound / n, n),
        meta={"n": float(n)},
        parts=[lb],
    )
