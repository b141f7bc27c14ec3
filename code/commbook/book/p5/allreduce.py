"""Lecture P5 §5 tables (script 03): all-reduce algorithms by size and by p, model vs
measurement, the pipelined chain broadcast."""
from __future__ import annotations

from typing import Sequence

from ... import cost
from ...bandwidth import algbw, busbw
from ...collectives import all_reduce, broadcast, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ..tables import algorithm_labels, Table, bilingual, bilingual_notes, fmt_pct, fmt_ratio
from ...topology import Switch
from ...units import GB, KB, MB, fmt_bytes, fmt_rate, fmt_time, us
from .common import US2


_SIX = ("ring", "rd", "rabenseifner", "tree", "naive", "innet")


def _linear_crossover(a: str, b: str, p: int, alpha: float, beta: float) -> float:
    """Size where two all-reduce closed forms (both affine in n) are equal."""
    ta0, tb0 = t_formula(a, p, 0, alpha, beta), t_formula(b, p, 0, alpha, beta)
    sa = t_formula(a, p, 1, alpha, beta) - ta0
    sb = t_formula(b, p, 1, alpha, beta) - tb0
    return (tb0 - ta0) / (sa - sb)


def demo_03_1(p: int = 8, link: Link = NVLINK4,
              sizes: Sequence[float] = (4 * KB, 64 * KB, 256 * KB, 1 * MB, 4 * MB, 16 * MB, 256 * MB)
              ) -> Table:
    """Demo 03-1 (lecture §5.3 "谁最快：看消息大小"): all-reduce time of six algorithms
    vs message size, p = 8 on an NVLink switch (α = 2 µs, β = 450 GB/s), simulated.

    Anchors (µs): 4 KB ring 28.02, RD 6.03, Rab 12.02, tree 12.05, naive 4.12,
    in-network 2.01; 256 MB 1023.56 / 1712.67 / 1007.56 / 3425.33 / 7968.44 / 570.89.
    "best" excludes in-network (fastest everywhere): naive, naive, RD, RD, Rab, Rab, Rab.
    Part "03-1b": crossovers naive→RD 81.8 KB, RD→Rabenseifner 2.16 MB (closed forms
    equated), RD↔ring 7.92 MB = 8.8·αβ (:func:`commbook.cost.crossover_rd_ring`).
    """
    c = VirtualCluster(Switch(p, link))
    rows = []
    for n in sizes:
        row = {"n": float(n)}
        row.update({a: all_reduce(c, nbytes=n, algorithm=a).time for a in _SIX})
        row["best"] = min(_SIX[:-1], key=lambda a: row[a])
        rows.append(row)
    ab = link.alpha * link.beta
    xs = [("naive → RD", _linear_crossover("naive", "rd", p, link.alpha, link.beta),
           "2α + 2(p−1)n/β = log₂p·(α + n/β)"),
          ("RD → Rabenseifner", _linear_crossover("rd", "rabenseifner", p, link.alpha, link.beta),
           "log₂p·(α + n/β) = 2log₂p·α + 2(p−1)/p·n/β"),
          ("RD ↔ ring", cost.crossover_rd_ring(p, link.alpha, link.beta),
           "[2(p−1) − log₂p]·αβ / [log₂p − 2(p−1)/p]")]
    cross = Table(
        key="03-1b",
        title=bilingual(f"where the winner changes (p = {p}, {link.name})",
                     f"赢家在哪里换人（p = {p}，{link.name}）"),
        columns=["boundary", "n", "in_nhalf", "equation"],
        headers={"en": ["boundary", "n", "n / αβ", "equal times"],
                 "zh": ["分界", "n", "n / αβ", "两者时间相等"]},
        rows=[{"boundary": b, "n": x, "in_nhalf": x / ab, "equation": eq} for b, x, eq in xs],
        formats={"n": fmt_bytes, "in_nhalf": lambda v: f"{v:.3g}"},
        labels={"zh": {"naive → RD": "朴素 → 递归倍增", "RD → Rabenseifner": "递归倍增 → Rabenseifner",
                       "RD ↔ ring": "递归倍增 ↔ ring"}},
        notes=bilingual_notes(("Ring never beats Rabenseifner at p = 8: their bytes are equal and ring takes more rounds.",
                      "p = 8 时 ring 永远赢不了 Rabenseifner：字节相同，ring 步数更多。")),
        meta={"naive_rd": xs[0][1], "rd_rab": xs[1][1], "rd_ring": xs[2][1]},
    )
    return Table(
        key="03-1",
        title=bilingual(f"all-reduce time vs message size, p = {p}, {link.name} switch (µs)",
                     f"all-reduce 时间随消息大小的变化，p = {p}，{link.name} 交换机（µs）"),
        columns=["n"] + list(_SIX) + ["best"],
        headers={"en": ["n", "ring", "RD", "Rabenseifner", "tree", "naive", "in-network",
                        "best (excl. in-network)"],
                 "zh": ["n", "ring", "递归倍增", "Rabenseifner", "二叉树", "朴素", "交换机内归约",
                        "最快（不含交换机内）"]},
        rows=rows,
        formats={"n": fmt_bytes, **{a: US2 for a in _SIX}},
        labels=algorithm_labels("all_reduce"),
        notes=bilingual_notes(
            (f"Ring's {2 * (p - 1)} rounds cost {2 * (p - 1) * link.alpha / us:.0f} µs of latency "
             "alone. In-network reduction (α + n/β) is fastest at every size, so the winner column "
             "leaves it out.",
             f"ring 的 {2 * (p - 1)} 步光延迟就是 {2 * (p - 1) * link.alpha / us:.0f} µs。"
             "交换机内归约（α + n/β）在所有大小上都最快，所以“最快”一列不算它。"),
        ),
        parts=[cross],
    )


def demo_03_2(ps: Sequence[int] = (8, 16, 32, 64, 128, 256, 512),
              sizes: Sequence[float] = (64 * KB, 256 * MB), link: Link = IB_NDR) -> Table:
    """Demo 03-2 (lecture §5.4 "设备变多"): ring, recursive doubling and Rabenseifner
    all-reduce time and rounds vs p on an InfiniBand switch (α = 5 µs, β = 50 GB/s).

    Anchors: 64 KB ring 0.072, 0.152, 0.313, 0.633, 1.273, 2.553, 5.113 ms (1022 rounds at
    p = 512); RD 9 rounds, 56.5 µs at p = 512.  256 MB ring 9.03 … 15.33 ms; Rabenseifner
    8.99 … 10.31 ms.  Flag F.27: ring at 256 MB is not p-independent at p = 512 (+70 %).
    """
    algos = ("ring", "rd", "rabenseifner")
    rows = []
    for n in sizes:
        for p in ps:
            c = VirtualCluster(Switch(p, link))
            row = {"n": float(n), "p": p}
            for a in algos:
                r = all_reduce(c, nbytes=n, algorithm=a)
                row[a], row[f"{a}_rounds"] = r.time, r.rounds
            rows.append(row)
    big = [r for r in rows if r["n"] == max(sizes)]
    growth = big[-1]["ring"] / big[0]["ring"] - 1
    cols = ["n", "p"] + [k for a in algos for k in (a, f"{a}_rounds")]
    t = lambda v: fmt_time(v, 4)
    return Table(
        key="03-2",
        title=bilingual(f"all-reduce vs number of devices, {link.name} switch",
                     f"设备变多时的 all-reduce，{link.name} 交换机"),
        columns=cols,
        headers={"en": ["n", "p", "ring", "rounds", "RD", "rounds", "Rabenseifner", "rounds"],
                 "zh": ["n", "p", "ring", "步数", "递归倍增", "步数", "Rabenseifner", "步数"]},
        rows=rows,
        formats={"n": fmt_bytes, **{a: t for a in algos}},
        notes=bilingual_notes(
            (f"Small messages: ring's 2(p−1) rounds each pay α = {link.alpha / us:g} µs. Large "
             f"messages: ring grows {growth:.0%} from p = {ps[0]} to p = {ps[-1]} (flag F.27: "
             "nearly p-independent only up to p ≈ 64); Rabenseifner stays within "
             f"{big[-1]['rabenseifner'] / big[0]['rabenseifner'] - 1:.0%}.",
             f"小消息：ring 的 2(p−1) 步每步付 α = {link.alpha / us:g} µs。大消息：ring 从 "
             f"p = {ps[0]} 到 p = {ps[-1]} 变慢 {growth:.0%}（标记 F.27：只在 p ≈ 64 以内近似与 p 无关）；"
             f"Rabenseifner 只慢 {big[-1]['rabenseifner'] / big[0]['rabenseifner'] - 1:.0%}。"),
        ),
    )


HTSYM_SOURCE = (
    "J. Austin et al., How to Scale Your Model, ch. 12 'How to Think About GPUs' "
    "(https://jax-ml.github.io/scaling-book/gpus/): all-reduce on 8×H100 with SHARP off, "
    "≈370 GB/s bus bandwidth for large messages (near 10 GB) and ≈150 GB/s at "
    "bf16[8192, 3584] (≈58 MB); numbers as stated in the text, not digitized from its plot"
)
"""Where :data:`HTSYM_ALLREDUCE_MEASURED` comes from."""

HTSYM_ALLREDUCE_MEASURED: tuple[tuple[float, float], ...] = ((58 * MB, 150 * GB), (10 * GB, 370 * GB))
"""Measured all-reduce bus bandwidth, (message bytes, busbw bytes/s), on 8×H100 with
SHARP off, only the two points stated in words by :data:`HTSYM_SOURCE` (decimal 58 MB,
as the lecture writes it; bf16[8192, 3584] is exactly 58,720,256 B)."""


def demo_03_3(p: int = 8, link: Link = NVLINK4,
              sizes: Sequence[float] = (1 * MB, 8 * MB, 58 * MB, 256 * MB, 1 * GB, 10 * GB),
              measured: Sequence[tuple[float, float]] = HTSYM_ALLREDUCE_MEASURED) -> Table:
    """Demo 03-3 (lecture §5.6 "模型 vs 实测"): ring all-reduce model (p = 8, NVLink)
    algbw and busbw vs the measured busbw of :data:`HTSYM_ALLREDUCE_MEASURED`.

    busbw = algbw · 2(p−1)/p.  Effective α implied by a measured point: the α that makes
    the model's time 2(p−1)α + 2(p−1)/p·n/β equal the measured 2(p−1)/p·n/busbw.
    Anchors: model busbw 1 MB 54.9, 8 MB 236.8, 58 MB 400.3, 256 MB 437.7, 1 GB 446.8,
    10 GB 449.7 GB/s; 150 GB/s at 58 MB implies α_eff ≈ 32.2 µs.  Only the two measured
    points the source states are shown (no curve is invented).
    """
    c = VirtualCluster(Switch(p, link))
    meas = dict(measured)
    f = 2 * (p - 1) / p
    rows = []
    for n in sorted(set(map(float, sizes)) | set(meas)):
        t = all_reduce(c, nbytes=n).time
        m = meas.get(n)
        a_eff = None if m is None else (f * n / m - f * n / link.beta) / (2 * (p - 1))
        rows.append({"n": n, "time": t, "algbw": algbw(n, t),
                     "busbw": busbw("all_reduce", n, t, p), "measured": m, "alpha_eff": a_eff,
                     "ratio": None if m is None else m / busbw("all_reduce", n, t, p)})
    with_meas = [r for r in rows if r["measured"] is not None]
    mid, top = with_meas[0], with_meas[-1]
    return Table(
        key="03-3",
        title=bilingual(f"ring all-reduce, p = {p}, {link.name}: model vs measurement (8×H100, SHARP off)",
                     f"ring all-reduce，p = {p}，{link.name}：模型对比实测（8×H100，关闭 SHARP）"),
        columns=["n", "time", "algbw", "busbw", "measured", "ratio", "alpha_eff"],
        headers={"en": ["n", "model time", "model algbw", "model busbw", "measured busbw",
                        "measured / model", "implied α_eff"],
                 "zh": ["n", "模型时间", "模型 algbw", "模型 busbw", "实测 busbw", "实测 / 模型",
                        "推出的有效 α"]},
        rows=rows,
        formats={"n": fmt_bytes, "time": lambda v: fmt_time(v, 4), "algbw": fmt_rate,
                 "busbw": fmt_rate, "measured": fmt_rate, "ratio": fmt_pct, "alpha_eff": lambda v: fmt_time(v, 3)},
        notes=bilingual_notes(
            ("Measured: " + HTSYM_SOURCE + ". Implied α_eff solves 2(p−1)α + 2(p−1)/p·n/β = "
             f"2(p−1)/p·n/busbw: at {fmt_bytes(mid['n'])} a per-round α {mid['alpha_eff'] / link.alpha:.0f}× "
             f"the link's {fmt_time(link.alpha)}; at {fmt_bytes(top['n'])} the gap is bandwidth "
             f"(measured busbw = {top['measured'] / link.beta:.0%} of β), not latency.",
             "实测：How to Scale Your Model 第 12 章（8×H100，关闭 SHARP）文中给出的两个数："
             "大消息（约 10 GB）≈370 GB/s，bf16[8192, 3584]（≈58 MB）≈150 GB/s；未从图中取点。"
             "有效 α 由 2(p−1)α + 2(p−1)/p·n/β = 2(p−1)/p·n/busbw 解出："
             f"{fmt_bytes(mid['n'])} 时每步约为链路 {fmt_time(link.alpha)} 的 {mid['alpha_eff'] / link.alpha:.0f} 倍；"
             f"{fmt_bytes(top['n'])} 时差距来自带宽（实测 busbw 为 β 的 {top['measured'] / link.beta:.0%}），不是延迟。"),
        ),
        meta={"source": HTSYM_SOURCE},
    )


def demo_03_4(p: int = 8, n: float = 8 * MB, link: Link = ICI_V5E,
              chunks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
              nv_n: float = 4 * MB, nv_link: Link = NVLINK4) -> Table:
    """Demo 03-4 (lecture §5.5 "广播与切块流水"): broadcast of ``n`` = 8 MB (decimal) to
    p−1 = 7 devices over ICI: flat (naive), binomial tree, pipelined chain with k chunks.

    Anchors (µs): flat 1,245.44; binomial 536.33; chain k = 1…128: 1251.44, 719.11, 454.44,
    325.11, 266.44, 249.11, 264.44, 320.11; lower bound n/β 177.78; k* = 32.66, T* = 249.10;
    chain k = 32 is 46 % of binomial, 1.40× the bound.  Flag F.28: k = 33 is 0.01 µs faster
    than k = 32 (k = 32 is best only among powers of two); the row "int(k*)" uses floor.
    Part "03-4b": NVLink 4 MB (4.44 n½): binomial 32.67 vs chain k = int(k*) = 5 41.56 µs.
    """
    c = VirtualCluster(Switch(p, link))
    k_star, t_star = cost.chain_broadcast_optimum(p, n, link.alpha, link.beta)
    k_int = int(k_star)
    lb = n / link.beta
    t_bin = broadcast(c, nbytes=n, algorithm="binomial").time
    rows = [{"schedule": "flat (naive)", "k": None, "time": broadcast(c, nbytes=n, algorithm="flat").time},
            {"schedule": "binomial tree", "k": None, "time": t_bin}]
    for k in sorted(set(chunks) | {k_int}):
        name = "chain, k = int(k*)" if k == k_int else "chain"
        rows.append({"schedule": name, "k": k, "time": broadcast(c, nbytes=n, algorithm="chain", chunks=k).time})
    rows.append({"schedule": "lower bound n/β", "k": None, "time": lb})
    for r in rows:
        r["vs_binomial"], r["vs_bound"] = r["time"] / t_bin, r["time"] / lb
    t33 = broadcast(c, nbytes=n, algorithm="chain", chunks=k_int + 1).time
    t32 = broadcast(c, nbytes=n, algorithm="chain", chunks=k_int).time

    cn = VirtualCluster(Switch(p, nv_link))
    nk, nt = cost.chain_broadcast_optimum(p, nv_n, nv_link.alpha, nv_link.beta)
    nrows = [{"schedule": "binomial tree", "k": None, "time": broadcast(cn, nbytes=nv_n, algorithm="binomial").time}]
    for k in sorted({4, int(nk), 8}):
        nrows.append({"schedule": "chain, k = int(k*)" if k == int(nk) else "chain", "k": k,
                      "time": broadcast(cn, nbytes=nv_n, algorithm="chain", chunks=k).time})
    nrows.append({"schedule": "lower bound n/β", "k": None, "time": nv_n / nv_link.beta})
    zh = {"flat (naive)": "朴素（根直接发）", "binomial tree": "二项树", "chain": "流水线链",
          "chain, k = int(k*)": "流水线链，k = int(k*)", "lower bound n/β": "下界 n/β"}
    nv = Table(
        key="03-4b",
        title=bilingual(f"the same on {nv_link.name}, n = {fmt_bytes(nv_n)} = {nv_n / nv_link.n_half:.3g} n½",
                     f"同样的算法放在 {nv_link.name} 上，n = {fmt_bytes(nv_n)} = {nv_n / nv_link.n_half:.3g} n½"),
        columns=["schedule", "k", "time"],
        headers={"en": ["schedule", "chunks k", "time (µs)"], "zh": ["算法", "块数 k", "时间（µs）"]},
        rows=nrows, formats={"time": US2}, labels={"zh": zh},
        notes=bilingual_notes((f"k* = {nk:.2f}, T* = {nt / us:.2f} µs: a message only a few n½ long gains nothing "
                      "from pipelining; the binomial tree wins.",
                      f"k* = {nk:.2f}，T* = {nt / us:.2f} µs：消息只有几个 n½ 时流水线反而吃亏，二项树更快。")),
        meta={"k_star": nk, "t_star": nt},
    )
    return Table(
        key="03-4",
        title=bilingual(f"broadcast {fmt_bytes(n)} to {p - 1} devices over {link.name} (n½ = {fmt_bytes(link.n_half)})",
                     f"把 {fmt_bytes(n)} 广播给 {p - 1} 个设备，{link.name}（n½ = {fmt_bytes(link.n_half)}）"),
        columns=["schedule", "k", "time", "vs_binomial", "vs_bound"],
        headers={"en": ["schedule", "chunks k", "time (µs)", "/ binomial", "/ lower bound"],
                 "zh": ["算法", "块数 k", "时间（µs）", "/ 二项树", "/ 下界"]},
        rows=rows,
        formats={"time": US2, "vs_binomial": fmt_pct, "vs_bound": fmt_ratio(2)},
        labels={"zh": zh},
        notes=bilingual_notes(
            (f"k* = √((p−2)n/(αβ)) = {k_star:.2f}, T* = (√((p−2)α) + √(n/β))² = {t_star / us:.2f} µs. "
             f"Flag F.28: k = {k_int + 1} takes {t33 / us:.3f} µs, {(t32 - t33) / us:.3f} µs less than "
             f"k = {k_int} ({t32 / us:.3f} µs); {k_int} is the best power of two, and int(k*) "
             "reproduces both this table and the NVLink one.",
             f"k* = √((p−2)n/(αβ)) = {k_star:.2f}，T* = (√((p−2)α) + √(n/β))² = {t_star / us:.2f} µs。"
             f"标记 F.28：k = {k_int + 1} 要 {t33 / us:.3f} µs，比 k = {k_int}（{t32 / us:.3f} µs）"
             f"快 {(t32 - t33) / us:.3f} µs；{k_int} 只是 2 的幂里最好的，取 int(k*) 能同时复现本表和 NVLink 那张。"),
        ),
        meta={"k_star": k_star, "t_star": t_star, "lower_bound": lb, "t_k_plus_1": t33},
        parts=[nv],
    )
