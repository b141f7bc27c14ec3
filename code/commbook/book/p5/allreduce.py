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
from ..tables import algorithm_labels, Table, bilingual_notes
from ..text import texts
from ...topology import Switch
from ...units import GB, KB, MB, fmt_bytes, fmt_pct, fmt_rate, fmt_ratio, fmt_time, us
from .allreduce_numbers import HTSYM, SIX, race, sharp_gain  # sharp_gain: ch1 imports it from here
from .common import US2, original_note

T = texts("p5")
LANGS = ("en", "zh")


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
    """Demo 03-1 (lecture §5.3, who wins depends on the message size): all-reduce time of six algorithms
    vs message size, p = 8 on an NVLink switch (α = 2 µs, β = 450 GB/s), simulated.

    Anchors (µs): 4 KB ring 28.02, RD 6.03, Rab 12.02, tree 12.05, naive 4.12,
    in-network 2.01; 256 MB 1023.56 / 1712.67 / 1007.56 / 3425.33 / 7968.44 / 570.89.
    "best" excludes in-network (fastest everywhere): naive, naive, RD, RD, Rab, Rab, Rab.
    Part "03-1b": crossovers naive→RD 81.8 KB, RD→Rabenseifner 2.16 MB (closed forms
    equated), RD↔ring 7.92 MB = 8.8·αβ (:func:`commbook.cost.crossover_rd_ring`).
    """
    races = [race(p, n, link) for n in sizes]                # the six algorithms, simulated
    innet_best = all(r.innet.time_s < r.best_time_s for r in races)
    ab = link.alpha * link.beta
    rounds = {a: getattr(races[0], a).rounds for a in ("ring", "rabenseifner")}
    ring_lat, rab_lat = (t_formula(a, p, 0, link.alpha, link.beta) for a in ("ring", "rabenseifner"))
    xs = [(T.get("allreduce.x_naive_rd", "en"), _where_cross(crossover, "naive", "rd", p, link.alpha, link.beta),
           "2α + 2(p−1)n/β = log₂p·(α + n/β)"),
          (T.get("allreduce.x_rd_rab", "en"), _where_cross(crossover, "rd", "rabenseifner", p, link.alpha, link.beta),
           "log₂p·(α + n/β) = 2log₂p·α + 2(p−1)/p·n/β"),
          (T.get("allreduce.x_rd_ring", "en"), _where_cross(cost.crossover_rd_ring, p, link.alpha, link.beta),
           "[2(p−1) − log₂p]·αβ / [log₂p − 2(p−1)/p]")]
    cross = Table(
        key="03-1b",
        title=T("allreduce.03_1b_title", p=p, link=link.name),
        columns=["boundary", "n", "in_nhalf", "equation"],
        headers=T.pairs("allreduce.h_boundary", "allreduce.h_n", "allreduce.h_in_nhalf", "allreduce.h_equation"),
        rows=[{"boundary": b, "n": x, "in_nhalf": None if x is None else x / ab, "equation": eq}
              for b, x, eq in xs],
        formats={"n": fmt_bytes, "in_nhalf": lambda v: f"{v:.3g}"},
        labels={"zh": {T.get(k, "en"): T.get(k, "zh") for k in
                       ("allreduce.x_naive_rd", "allreduce.x_rd_rab", "allreduce.x_rd_ring")}},
        notes=T.pairs("allreduce.03_1b_never" if ring_lat > rab_lat * (1 + 1e-12) else "allreduce.03_1b_same",
                      p=p, ring=rounds["ring"], rab=rounds["rabenseifner"]),
        meta={"naive_rd": xs[0][1], "rd_rab": xs[1][1], "rd_ring": xs[2][1]},
    )
    return Table(
        key="03-1",
        title=T("allreduce.03_1_title", p=p, link=link.name),
        columns=["n_bytes"] + [f"{a}.time_s" for a in SIX] + ["best"],
        headers=T.pairs("allreduce.h_n", *(f"allreduce.h_{a}" for a in SIX), "allreduce.h_best"),
        rows=races,
        formats=dict.fromkeys((f"{a}.time_s" for a in SIX), US2),
        labels=algorithm_labels("all_reduce"),
        notes={lang: [T.get("allreduce.03_1_note", lang, rounds=rounds["ring"], lat=fmt_time(rounds["ring"] * link.alpha),
                            innet=T.get("allreduce.03_1_innet_best" if innet_best else "allreduce.03_1_innet_switch",
                                        lang))] for lang in LANGS},
        parts=[cross],
    )


def demo_03_2(ps: Sequence[int] = (8, 16, 32, 64, 128, 256, 512),
              sizes: Sequence[float] = (64 * KB, 256 * MB), link: Link = IB_NDR) -> Table:
    """Demo 03-2 (lecture §5.4, more devices): ring, recursive doubling and Rabenseifner
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
    words = dict(small=fmt_bytes(min(sizes)), alpha=fmt_time(link.alpha), rounds=small["ring_rounds"],
                 lat=fmt_time(lat_hi), p_hi=p_hi, big=fmt_bytes(max(sizes)), p_lo=ps[0], growth=fmt_pct(growth, 2),
                 rab_growth=fmt_pct(rab_growth, 2))
    notes = [tuple(T.get("allreduce.03_2_note", lang, **words) for lang in LANGS)]
    if growth >= 0.01:
        big_lat = big[-1]["ring_rounds"] * link.alpha
        why = dict(lat=fmt_time(big_lat), time=fmt_time(big[-1]["ring"]), p_hi=p_hi)
        notes.append(original_note(*((T.get("allreduce.o2_said", lang), T.get("allreduce.o2_here", lang, **words),
                                      T.get("allreduce.o2_why", lang, **why)) for lang in LANGS)))
    cols = ["n", "p"] + [k for a in algos for k in (a, f"{a}_rounds")]
    return Table(
        key="03-2",
        title=T("allreduce.03_2_title", link=link.name),
        columns=cols,
        headers=T.pairs("allreduce.h_n", "allreduce.h_p", *(k for a in algos for k in (f"allreduce.h_{a}",
                                                                                     "allreduce.h_rounds"))),
        rows=rows,
        formats={"n": fmt_bytes, **dict.fromkeys(algos, fmt_time)},
        notes=bilingual_notes(*notes),
    )


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
    """Demo 03-3 (§5.6, model vs measurement): ring all-reduce model (p = 8, NVLink) algbw and
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
    cond = {lang: "" if sharp is None else T.get("allreduce.sharp_on" if sharp else "allreduce.sharp_off", lang)
            for lang in LANGS}
    setup = {lang: T.get("allreduce.setup", lang, machine=machine, cond=cond[lang]) if cond[lang] else machine
             for lang in LANGS}
    approx = all(pt.approximate for pt in meas.values())
    src = data.source
    chap = {lang: T.get("allreduce.chapter", lang, n=src.chapter) if src.chapter else "" for lang in LANGS}
    alpha_words = dict(mid=fmt_bytes(mid["n"]), a=fmt_time(mid["alpha_eff"], 3), x=f"{mid['alpha_eff'] / link.alpha:.0f}",
                       alpha=fmt_time(link.alpha), top=fmt_bytes(top["n"]), model_pct=fmt_pct(top["busbw"] / link.beta, 3),
                       meas_pct=fmt_pct(top["measured"] / link.beta, 2))
    notes = [tuple(T.get("allreduce.03_3_src_approx" if approx else "allreduce.03_3_src", lang,
                         coll=data.collective.replace("_", "-"), setup=setup[lang], title=src.title, chap=chap[lang],
                         url=src.url) for lang in LANGS),
             tuple(T.get("allreduce.03_3_alpha", lang, **alpha_words) for lang in LANGS)]
    for pt in meas.values():
        if (p, link) == (ORIGINAL_03_3["p"], ORIGINAL_03_3["link"]) and pt.stated_bytes not in (None, pt.bytes):
            a_stated, a_exact = alpha_eff(pt.stated_bytes, pt.busbw), alpha_eff(pt.bytes, pt.busbw)
            w = dict(what=pt.label or fmt_bytes(pt.bytes), stated=fmt_bytes(pt.stated_bytes),
                     a_stated=fmt_time(a_stated, 3), a_exact=fmt_time(a_exact, 3), bytes=f"{pt.bytes:,.0f}",
                     bytes4=fmt_bytes(pt.bytes, digits=4))
            notes.append(original_note(*((T.get("allreduce.o3_said", lang, **w), T.get("allreduce.o3_here", lang, **w),
                                          T.get("allreduce.o3_why", lang, **w)) for lang in LANGS)))
    return Table(
        key="03-3",
        title={lang: T.get("allreduce.03_3_title", lang, p=p, link=link.name, setup=setup[lang]) for lang in LANGS},
        columns=["n", "time", "algbw", "busbw", "measured", "ratio", "alpha_eff"],
        headers=T.pairs("allreduce.h_n", "allreduce.h_model_time", "allreduce.h_model_algbw", "allreduce.h_model_busbw",
                        "allreduce.h_measured", "allreduce.h_ratio", "allreduce.h_alpha_eff"),
        rows=rows,
        formats={"n": fmt_bytes, "time": fmt_time, "algbw": fmt_rate,
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
    """Demo 03-4 (lecture §5.5, broadcast and pipelining by chunks): broadcast of ``n`` = 8 MB (decimal) to
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
    tail = lambda lang: (T.get("allreduce.03_4_tail_same", lang) if k_best == k_int else
                         T.get("allreduce.03_4_tail_slower", lang, d=f"{(t_int - t_best) / us:.3f}"))
    w = dict(ks=f"{k_star:.2f}", ts=f"{t_star / us:.2f}", kb=k_best, tb=f"{t_best / us:.3f}", ki=k_int)
    notes = [tuple(T.get("allreduce.03_4_note", lang, tail=tail(lang), **w) for lang in LANGS)]
    o = ORIGINAL_03_4
    if (p, n, link) == (o["p"], o["n"], o["link"]) and k_best != o["k"]:
        t_o = chain_t(o["k"])
        w.update(k=o["k"], d=f"{(t_o - t_best) / us:.3f}", to=f"{t_o / us:.3f}", r=round(k_star))
        pow2 = lambda lang: T.get("allreduce.o4_pow2", lang, k=o["k"]) if best_pow2 == o["k"] else ""
        notes.append(original_note(*((T.get("allreduce.o4_said", lang, **w), T.get("allreduce.o4_here", lang, **w),
                                      T.get("allreduce.o4_why", lang, pow2=pow2(lang), **w)) for lang in LANGS)))

    cn = VirtualCluster(Switch(p, nv_link))
    nk, nt = cost.chain_broadcast_optimum(p, nv_n, nv_link.alpha, nv_link.beta)
    nrows = [{"schedule": "binomial tree", "k": None, "time": broadcast(cn, nbytes=nv_n, algorithm="binomial").time}]
    for k in sorted({4, int(nk), 8}):
        nrows.append({"schedule": "chain, k = int(k*)" if k == int(nk) else "chain", "k": k,
                      "time": broadcast(cn, nbytes=nv_n, algorithm="chain", chunks=k).time})
    t_nb = nrows[0]["time"]
    t_nc = min(r["time"] for r in nrows[1:])
    nrows.append({"schedule": "lower bound n/β", "k": None, "time": nv_n / nv_link.beta})
    zh = {T.get(f"allreduce.s_{k}", "en"): T.get(f"allreduce.s_{k}", "zh")
          for k in ("flat", "binomial", "chain", "chain_int", "bound")}
    x = f"{nv_n / nv_link.n_half:.3g}"
    verdict = dict(tb=fmt_time(t_nb, 4), tc=fmt_time(t_nc, 4))
    nv = Table(
        key="03-4b",
        title=T("allreduce.03_4b_title", link=nv_link.name, n=fmt_bytes(nv_n), x=x),
        columns=["schedule", "k", "time"],
        headers=T.pairs("allreduce.h_schedule", "allreduce.h_chunks", "allreduce.h_time_us"),
        rows=nrows, formats={"time": US2}, labels={"zh": zh},
        notes={lang: [T.get("allreduce.03_4b_note", lang, ks=f"{nk:.2f}", ts=f"{nt / us:.2f}", x=x, verdict=T.get(
            "allreduce.03_4b_tree" if t_nb < t_nc else "allreduce.03_4b_chain", lang, **verdict))] for lang in LANGS},
        meta={"k_star": nk, "t_star": nt},
    )
    return Table(
        key="03-4",
        title=T("allreduce.03_4_title", n=fmt_bytes(n), to=p - 1, link=link.name, nh=fmt_bytes(link.n_half)),
        columns=["schedule", "k", "time", "vs_binomial", "vs_bound"],
        headers=T.pairs("allreduce.h_schedule", "allreduce.h_chunks", "allreduce.h_time_us", "allreduce.h_vs_binomial",
                        "allreduce.h_vs_bound"),
        rows=rows,
        formats={"time": US2, "vs_binomial": fmt_pct, "vs_bound": fmt_ratio},
        labels={"zh": zh},
        notes={lang: [nt_[i] for nt_ in notes] for i, lang in enumerate(LANGS)},
        meta={"k_star": k_star, "t_star": t_star, "lower_bound": lb, "t_k_plus_1": t_up, "k_best": k_best},
        parts=[nv],
    )
