"""Lecture P5 §4 tables (script 02): what each collective does, its cost, its lower bound."""
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
from .common import US2


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
    8 MiB 49 (48.62) vs 62 (61.92) µs; root bytes 1.75n vs 3n.  Flag F.25: the lecture's
    49/62 µs need **binary** 8 MiB; decimal 8 MB gives 47.11/59.33 (in a note).
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
    dec = {a: broadcast(c, nbytes=8 * MB, algorithm=a).time for a in ("scatter_allgather", "binomial")}
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
        notes=bilingual_notes(
            ("Sizes are binary (KiB, MiB): the lecture's 49 vs 62 µs hold only for 8 MiB "
             f"(flag F.25); decimal 8 MB gives {dec['scatter_allgather'] / us:.2f} vs "
             f"{dec['binomial'] / us:.2f} µs. The root sends 2(p−1)/p·n = {2 * (p - 1) / p:g}n "
             f"with scatter + all-gather, log₂p·n = {math.log2(p):g}n with the binomial tree.",
             "大小是二进制单位（KiB、MiB）：讲义的 49 vs 62 µs 只在 8 MiB 时成立（标记 F.25）；"
             f"十进制 8 MB 是 {dec['scatter_allgather'] / us:.2f} vs {dec['binomial'] / us:.2f} µs。"
             f"scatter + all-gather 时根发 2(p−1)/p·n = {2 * (p - 1) / p:g}n，"
             f"二项树时发 log₂p·n = {math.log2(p):g}n。"),
        ),
        meta={"decimal_8MB": dec},
    )
    ident.parts.append(timing)
    return ident


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
        notes=bilingual_notes(
            ("Ring and Rabenseifner reach the bound; recursive doubling sends the most bytes in "
             "the fewest rounds; tree and naive are unbalanced (the root is the busiest).",
             "ring 和 Rabenseifner 达到下界；递归倍增字节最多、步数最少；"
             "树和朴素算法不均匀（根最忙）。"),
        ),
        meta={"n": float(n)},
        parts=[lb],
    )
