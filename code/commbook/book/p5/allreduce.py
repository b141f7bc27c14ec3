"""P5 §5 tables (script 03): all-reduce algorithms by size and by p, model vs
measurement, the pipelined chain broadcast."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from ... import cost
from ...bandwidth import algbw, busbw
from ...collectives import all_reduce, broadcast, crossover, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ...measure.points import Measurement, Point, load
from ..tables import algorithm_labels, Table, bilingual, bilingual_notes
from ...topology import Switch
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_rate, fmt_ratio, fmt_time, us
from .common import US2, original_note


_SIX = ("ring", "rd", "rabenseifner", "tree", "naive", "innet")


def _where_cross(find, *args) -> float | None:
    """A crossover size, or None where the two algorithms do not cross at these parameters
    (the table then shows a dash)."""
    try:
        return find(*args)
    except ValueError:
        return None


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
    innet_best = all(r["innet"] < min(r[a] for a in _SIX[:-1]) for r in rows)
    ab = link.alpha * link.beta
    rounds = {a: all_reduce(c, nbytes=sizes[0], algorithm=a).rounds for a in ("ring", "rabenseifner")}
    ring_lat, rab_lat = (t_formula(a, p, 0, link.alpha, link.beta) for a in ("ring", "rabenseifner"))
    xs = [("naive → RD", _where_cross(crossover, "naive", "rd", p, link.alpha, link.beta),
           "2α + 2(p−1)n/β = log₂p·(α + n/β)"),
          ("RD → Rabenseifner", _where_cross(crossover, "rd", "rabenseifner", p, link.alpha, link.beta),
           "log₂p·(α + n/β) = 2log₂p·α + 2(p−1)/p·n/β"),
          ("RD ↔ ring", _where_cross(cost.crossover_rd_ring, p, link.alpha, link.beta),
           "[2(p−1) − log₂p]·αβ / [log₂p − 2(p−1)/p]")]
    cross = Table(
        key="03-1b",
        title=bilingual(f"where the winner changes (p = {p}, {link.name})",
                     f"赢家在哪里换人（p = {p}，{link.name}）"),
        columns=["boundary", "n", "in_nhalf", "equation"],
        headers={"en": ["boundary", "n", "n / αβ", "equal times"],
                 "zh": ["分界", "n", "n / αβ", "两者时间相等"]},
        rows=[{"boundary": b, "n": x, "in_nhalf": None if x is None else x / ab, "equation": eq}
              for b, x, eq in xs],
        formats={"n": fmt_bytes, "in_nhalf": lambda v: f"{v:.3g}"},
        labels={"zh": {"naive → RD": "朴素 → 递归倍增", "RD → Rabenseifner": "递归倍增 → Rabenseifner",
                       "RD ↔ ring": "递归倍增 ↔ ring"}},
        notes=bilingual_notes(
            (f"Ring never beats Rabenseifner at p = {p}: their bytes are equal and ring takes "
             f"{rounds['ring']} rounds to Rabenseifner's {rounds['rabenseifner']}.",
             f"p = {p} 时 ring 始终赢不了 Rabenseifner：两者字节相同，ring 要 {rounds['ring']} 步，"
             f"Rabenseifner 只要 {rounds['rabenseifner']} 步。") if ring_lat > rab_lat * (1 + 1e-12) else
            (f"At p = {p} ring and Rabenseifner take the same time: equal bytes and "
             f"{rounds['ring']} rounds each.",
             f"p = {p} 时 ring 与 Rabenseifner 用时相同：字节相同，都是 {rounds['ring']} 步。")),
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
            (f"Ring's {rounds['ring']} rounds cost {fmt_time(rounds['ring'] * link.alpha)} of latency "
             "alone. In-network reduction (α + n/β) "
             + ("is fastest at every size, so" if innet_best else "needs a switch that reduces;")
             + " the winner column leaves it out.",
             f"ring 的 {rounds['ring']} 步光延迟就是 {fmt_time(rounds['ring'] * link.alpha)}。交换机内归约（α + n/β）"
             + ("在所有大小上都最快，所以" if innet_best else "要靠能做归约的交换机，")
             + "“最快”一列不算它。"),
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
    rab_growth = big[-1]["rabenseifner"] / big[0]["rabenseifner"] - 1
    p_hi = ps[-1]
    small = next(r for r in rows if r["n"] == min(sizes) and r["p"] == p_hi)
    lat_hi = small["ring_rounds"] * link.alpha
    notes = [(f"Small messages ({fmt_bytes(min(sizes))}): each of ring's 2(p−1) rounds pays "
              f"α = {fmt_time(link.alpha)}, {small['ring_rounds']} rounds = {fmt_time(lat_hi)} at "
              f"p = {p_hi}. Large messages ({fmt_bytes(max(sizes))}): from p = {ps[0]} to p = {p_hi} "
              f"ring grows {growth:.0%}, Rabenseifner {rab_growth:.0%}.",
              f"小消息（{fmt_bytes(min(sizes))}）：ring 的 2(p−1) 步每步付 α = {fmt_time(link.alpha)}，"
              f"p = {p_hi} 时共 {small['ring_rounds']} 步，合 {fmt_time(lat_hi)}。大消息（{fmt_bytes(max(sizes))}）："
              f"从 p = {ps[0]} 到 p = {p_hi}，ring 变慢 {growth:.0%}，Rabenseifner 变慢 {rab_growth:.0%}。")]
    if growth >= 0.01:
        big_lat = big[-1]["ring_rounds"] * link.alpha
        notes.append(original_note(
            ("for large messages ring's time does not depend on p",
             f"at {fmt_bytes(max(sizes))} it grows {growth:.0%} from p = {ps[0]} to p = {p_hi}",
             f"each of its 2(p−1) rounds still pays α: {fmt_time(big_lat)} of its "
             f"{fmt_time(big[-1]['ring'])} at p = {p_hi}"),
            ("大消息下 ring 的时间与 p 无关",
             f"{fmt_bytes(max(sizes))} 时从 p = {ps[0]} 到 p = {p_hi} 变慢 {growth:.0%}",
             f"它的 2(p−1) 步每步仍要付 α，p = {p_hi} 时 {fmt_time(big[-1]['ring'])} 里有 "
             f"{fmt_time(big_lat)} 是延迟")))
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
        notes=bilingual_notes(*notes),
    )


HTSYM = "htsym_allreduce_8xh100"
"""The data set (``code/commbook/data/measured/htsym_allreduce_8xh100.json``) demo 03-3 compares with:
all-reduce bus bandwidth on 8×H100 with SHARP off, How to Scale Your Model ch. 12."""

HTSYM_SHARP = "htsym_allreduce_8xh100_sharp"
"""The same node with NVLink SHARP on (``code/commbook/data/measured/htsym_allreduce_8xh100_sharp.json``)."""


def sharp_gain() -> float:
    """Measured busbw gain of NVLink SHARP on 8×H100 at large messages: the SHARP-on point
    over the SHARP-off point of the same source, minus one (≈ 30 %)."""
    return load(HTSYM_SHARP).points[-1].busbw / load(HTSYM).points[-1].busbw - 1

HTSYM_ALLREDUCE_MEASURED: tuple[tuple[float, float], ...] = load(HTSYM).pairs()
"""``(bytes, busbw)`` of the points of :data:`HTSYM`, read from its data file (kept for the
pages that unpack it; new code calls ``commbook.measure.points.load(HTSYM)``)."""


ORIGINAL_03_3 = {"p": 8, "link": NVLINK4}
"""The original notes' model setting for demo 03-3: their effective α used the size the
source rounds to (a point's ``stated_bytes``), which demo 03-3 reconciles."""


def _measurement(measured: Measurement | Sequence[tuple[float, float]] | None) -> Measurement:
    """The data set of demo 03-3: :data:`HTSYM` by default; ``(bytes, busbw)`` pairs replace
    its points and keep its source."""
    if isinstance(measured, Measurement):
        return measured
    data = load(HTSYM)
    if measured is None:
        return data
    return replace(data, points=tuple(Point(bytes=float(n), busbw=float(b)) for n, b in measured))


def demo_03_3(p: int = 8, link: Link = NVLINK4,
              sizes: Sequence[float] = (1 * MB, 8 * MB, 256 * MB, 1 * GB, 10 * GB),
              measured: Measurement | Sequence[tuple[float, float]] | None = None) -> Table:
    """Demo 03-3 (§5.6 "模型 vs 实测"): ring all-reduce model (p = 8, NVLink) algbw and
    busbw vs a measured busbw (default: the data set :data:`HTSYM`, read by
    :func:`commbook.measure.points.load`).

    Rows: ``sizes`` and the measured sizes.  busbw = algbw · 2(p−1)/p.  Effective α implied
    by a measured point: the α that makes the model's time 2(p−1)α + 2(p−1)/p·n/β equal the
    measured 2(p−1)/p·n/busbw.  Anchors: model busbw 1 MB 54.9, 8 MB 236.8, 58 MB 400.3,
    256 MB 437.7, 1 GB 446.8, 10 GB 449.7 GB/s; 150 GB/s at 58 MB implies α_eff ≈ 32.2 µs,
    at the tensor's exact 58,720,256 B 32.6 µs.  Only the points the source states are
    shown (no curve is invented).
    """
    data = _measurement(measured)
    c = VirtualCluster(Switch(p, link))
    meas = {pt.bytes: pt for pt in data.points if pt.busbw is not None}
    f = 2 * (p - 1) / p
    alpha_eff = lambda n, bw: (f * n / bw - f * n / link.beta) / (2 * (p - 1))
    rows = []
    for n in sorted(set(map(float, sizes)) | set(meas)):
        t = all_reduce(c, nbytes=n).time
        m = meas[n].busbw if n in meas else None
        bus = busbw("all_reduce", n, t, p)
        rows.append({"n": n, "time": t, "algbw": algbw(n, t), "busbw": bus, "measured": m,
                     "alpha_eff": None if m is None else alpha_eff(n, m),
                     "ratio": None if m is None else m / bus})
    with_meas = [r for r in rows if r["measured"] is not None]
    mid, top = with_meas[0], with_meas[-1]
    sy, sharp = data.system, data.conditions.get("sharp")
    machine = f"{sy.gpus}×{sy.gpu}"
    cond = {"en": {False: "SHARP off", True: "SHARP on", None: ""}[sharp],
            "zh": {False: "关闭 SHARP", True: "开启 SHARP", None: ""}[sharp]}
    setup = {"en": f"{machine}, {cond['en']}" if cond["en"] else machine,
             "zh": f"{machine}，{cond['zh']}" if cond["zh"] else machine}
    approx = all(pt.approximate for pt in meas.values())
    src = data.source
    chap = {"en": f", ch. {src.chapter}" if src.chapter else "", "zh": f" 第 {src.chapter} 章" if src.chapter else ""}
    notes = [
        (f"Measured: {data.collective.replace('_', '-')} bus bandwidth ({setup['en']}), "
         + ("values stated approximately in the text of " if approx else "from ")
         + f"{src.title}{chap['en']} ({src.url}).",
         f"实测：{data.collective.replace('_', '-')} 的 busbw（{setup['zh']}），"
         + ("取自" if not approx else "是")
         + f" {src.title}{chap['zh']}（{src.url}）" + ("正文里给出的约数。" if approx else "。")),
        (f"Implied α_eff solves 2(p−1)α + 2(p−1)/p·n/β = 2(p−1)/p·n/busbw: at {fmt_bytes(mid['n'])} "
         f"it is {fmt_time(mid['alpha_eff'], 3)} per round, {mid['alpha_eff'] / link.alpha:.0f}× the link's "
         f"{fmt_time(link.alpha)}. At {fmt_bytes(top['n'])} the model already reaches "
         f"{top['busbw'] / link.beta:.1%} of β, so the measured {top['measured'] / link.beta:.0%} of β is "
         "bandwidth lost, not latency.",
         "有效 α 由 2(p−1)α + 2(p−1)/p·n/β = 2(p−1)/p·n/busbw 解出："
         f"{fmt_bytes(mid['n'])} 时每步 {fmt_time(mid['alpha_eff'], 3)}，是链路 {fmt_time(link.alpha)} 的 "
         f"{mid['alpha_eff'] / link.alpha:.0f} 倍。{fmt_bytes(top['n'])} 时模型已达到 β 的 "
         f"{top['busbw'] / link.beta:.1%}，实测只有 β 的 {top['measured'] / link.beta:.0%}，"
         "差的是带宽，不是延迟。"),
    ]
    for pt in meas.values():
        if (p, link) == (ORIGINAL_03_3["p"], ORIGINAL_03_3["link"]) and pt.stated_bytes not in (None, pt.bytes):
            a_stated, a_exact = alpha_eff(pt.stated_bytes, pt.busbw), alpha_eff(pt.bytes, pt.busbw)
            what = pt.label or fmt_bytes(pt.bytes)
            notes.append(original_note(
                (f"{what} taken as {fmt_bytes(pt.stated_bytes)}, which gives α_eff = {fmt_time(a_stated, 3)}",
                 f"its exact size, {pt.bytes:,.0f} B ({fmt_bytes(pt.bytes, digits=4)}), gives "
                 f"α_eff = {fmt_time(a_exact, 3)}",
                 f"the source rounds the size of {what} to {fmt_bytes(pt.stated_bytes)}"),
                (f"把 {what} 按 {fmt_bytes(pt.stated_bytes)} 算，得 α_eff = {fmt_time(a_stated, 3)}",
                 f"按它的确切大小 {pt.bytes:,.0f} B（{fmt_bytes(pt.bytes, digits=4)}）算，"
                 f"α_eff = {fmt_time(a_exact, 3)}",
                 f"出处把 {what} 的大小取整成了 {fmt_bytes(pt.stated_bytes)}")))
    return Table(
        key="03-3",
        title=bilingual(f"ring all-reduce, p = {p}, {link.name}: model vs measurement ({setup['en']})",
                        f"ring all-reduce，p = {p}，{link.name}：模型对比实测（{setup['zh']}）"),
        columns=["n", "time", "algbw", "busbw", "measured", "ratio", "alpha_eff"],
        headers={"en": ["n", "model time", "model algbw", "model busbw", "measured busbw",
                        "measured / model", "implied α_eff"],
                 "zh": ["n", "模型时间", "模型 algbw", "模型 busbw", "实测 busbw", "实测 / 模型",
                        "推出的有效 α"]},
        rows=rows,
        formats={"n": fmt_bytes, "time": lambda v: fmt_time(v, 4), "algbw": fmt_rate,
                 "busbw": fmt_rate, "measured": fmt_rate, "ratio": fmt_pct, "alpha_eff": lambda v: fmt_time(v, 3)},
        notes=bilingual_notes(*notes),
        meta={"measurement": data, "source": src.cite()},
    )


ORIGINAL_03_4 = {"p": 8, "n": 8 * MB, "link": ICI_V5E, "k": 32}
"""The original notes' pipelined chain broadcast (p, n, link) and the chunk count they call
the best (demo 03-4 reconciles it)."""


def demo_03_4(p: int = 8, n: float = 8 * MB, link: Link = ICI_V5E,
              chunks: Sequence[int] = (1, 2, 4, 8, 16, 32, 64, 128),
              nv_n: float = 4 * MB, nv_link: Link = NVLINK4) -> Table:
    """Demo 03-4 (lecture §5.5 "广播与切块流水"): broadcast of ``n`` = 8 MB (decimal) to
    p−1 = 7 devices over ICI: flat (naive), binomial tree, pipelined chain with k chunks.

    Anchors (µs): flat 1,245.44; binomial 536.33; chain k = 1…128: 1251.44, 719.11, 454.44,
    325.11, 266.44, 249.11, 264.44, 320.11; lower bound n/β 177.78; k* = 32.66, T* = 249.10;
    chain k = 32 is 46 % of binomial, 1.40× the bound.  Flag F.28: k = 33 is 0.01 µs faster
    than k = 32 (k = 32 is best only among powers of two, :data:`ORIGINAL_03_4`); the row
    "int(k*)" uses floor.
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
    chain_t = lambda k: broadcast(c, nbytes=n, algorithm="chain", chunks=k).time
    t_up, t_int = chain_t(k_int + 1), chain_t(k_int)
    k_best = k_int + 1 if t_up < t_int else k_int    # T(k) is convex: the optimum is floor or ceil of k*
    t_best = min(t_up, t_int)
    pow2 = [r for r in rows if r["k"] is not None and r["k"] & (r["k"] - 1) == 0]
    best_pow2 = min(pow2, key=lambda r: r["time"])["k"] if pow2 else None
    notes = [(f"k* = √((p−2)n/(αβ)) = {k_star:.2f}, T* = (√((p−2)α) + √(n/β))² = {t_star / us:.2f} µs. "
              f"The best whole number of chunks is k = {k_best} ({t_best / us:.3f} µs); the row "
              f"“chain, k = int(k*)” has k = {k_int}"
              + ("." if k_best == k_int else f", {(t_int - t_best) / us:.3f} µs slower."),
              f"k* = √((p−2)n/(αβ)) = {k_star:.2f}，T* = (√((p−2)α) + √(n/β))² = {t_star / us:.2f} µs。"
              f"块数取整数时最好的是 k = {k_best}（{t_best / us:.3f} µs）；“流水线链，k = int(k*)”一行用的是 "
              f"k = {k_int}" + ("。" if k_best == k_int else f"，慢 {(t_int - t_best) / us:.3f} µs。"))]
    o = ORIGINAL_03_4
    if (p, n, link) == (o["p"], o["n"], o["link"]) and k_best != o["k"]:
        t_o = chain_t(o["k"])
        pow2_en = f"; {o['k']} is only the best power of two" if best_pow2 == o["k"] else ""
        pow2_zh = f"；{o['k']} 只是 2 的幂里最好的" if best_pow2 == o["k"] else ""
        notes.append(original_note(
            (f"k = {o['k']} chunks is the best",
             f"k = {k_best} takes {t_best / us:.3f} µs, {(t_o - t_best) / us:.3f} µs less than "
             f"k = {o['k']} ({t_o / us:.3f} µs)",
             f"k* = {k_star:.2f} lies nearer {round(k_star)}{pow2_en}"),
            (f"k = {o['k']} 块最好",
             f"k = {k_best} 要 {t_best / us:.3f} µs，比 k = {o['k']}（{t_o / us:.3f} µs）少 "
             f"{(t_o - t_best) / us:.3f} µs",
             f"k* = {k_star:.2f} 更靠近 {round(k_star)}{pow2_zh}")))

    cn = VirtualCluster(Switch(p, nv_link))
    nk, nt = cost.chain_broadcast_optimum(p, nv_n, nv_link.alpha, nv_link.beta)
    nrows = [{"schedule": "binomial tree", "k": None, "time": broadcast(cn, nbytes=nv_n, algorithm="binomial").time}]
    for k in sorted({4, int(nk), 8}):
        nrows.append({"schedule": "chain, k = int(k*)" if k == int(nk) else "chain", "k": k,
                      "time": broadcast(cn, nbytes=nv_n, algorithm="chain", chunks=k).time})
    t_nb = nrows[0]["time"]
    t_nc = min(r["time"] for r in nrows[1:])
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
        notes=bilingual_notes(
            (f"k* = {nk:.2f}, T* = {nt / us:.2f} µs: at {nv_n / nv_link.n_half:.3g} n½ "
             + (f"pipelining gains nothing, the binomial tree ({fmt_time(t_nb, 4)}) beats the best chain "
                f"({fmt_time(t_nc, 4)})." if t_nb < t_nc else
                f"the best chain ({fmt_time(t_nc, 4)}) beats the binomial tree ({fmt_time(t_nb, 4)})."),
             f"k* = {nk:.2f}，T* = {nt / us:.2f} µs：消息只有 {nv_n / nv_link.n_half:.3g} 个 n½ 时，"
             + (f"流水线占不到便宜，二项树（{fmt_time(t_nb, 4)}）比最好的链（{fmt_time(t_nc, 4)}）快。"
                if t_nb < t_nc else
                f"最好的链（{fmt_time(t_nc, 4)}）比二项树（{fmt_time(t_nb, 4)}）快。"))),
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
        formats={"time": US2, "vs_binomial": fmt_pct, "vs_bound": fmt_ratio},
        labels={"zh": zh},
        notes=bilingual_notes(*notes),
        meta={"k_star": k_star, "t_star": t_star, "lower_bound": lb, "t_k_plus_1": t_up, "k_best": k_best},
        parts=[nv],
    )
