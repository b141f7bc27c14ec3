"""P5 §6 tables (script 04): ring mappings on a torus, all-to-all bounds,
hierarchical all-reduce."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import all_reduce, all_to_all, t_allreduce_tiers, t_formula
from ...collectives.channels import ring_time_two_level
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from ..tables import Table
from ..text import texts
from ...topology import Ring, Switch, Torus, TwoLevel, ring_order
from ...units import KB, MB, fmt_bytes, fmt_pct, fmt_ratio, fmt_time
from .common import balanced_dims, original_note, span

T = texts("p5")
LANGS = ("en", "zh")

ORIGINAL_04_1 = {"dims": (4, 4), "n": 64 * MB, "link": ICI_V5E, "pct": 2}
"""The original notes' rank-mapping example (dims, n, link) and how much slower (in %)
they say the row-major ring is than the snake (demo 04-1 reconciles it)."""

ORIGINAL_04_2 = {"n": 16 * MB, "link": ICI_V5E, "ratio": 16}
"""The original notes' all-to-all example (n per device, link; p not given) and how many
times slower they say the ring is than the switch (demo 04-2 reconciles it)."""


def demo_04_1(dims: tuple[int, int] = (4, 4), n: float = 64 * MB, link: Link = ICI_V5E,
              seeds: Sequence[int] = (0, 1, 2, 3, 4), median_seeds: int = 20,
              small: float = 64 * KB, extra_hop_alpha: float = 2.0) -> Table:
    """Demo 04-1 (lecture §6.1, mapping: where the logical ring goes): ring all-reduce of 64 MB on a
    4×4 ICI torus under different rank → chip mappings.

    Anchors, rows: snake (ideal 2,696.7 µs = the ring formula), row-major (+1.11 % with h·α per
    message; +2.22 % with ``hop_alpha=extra_hop_alpha=2``, i.e. 2α per extra hop, which is
    what the original's "2 %" needs: flag F.29, :data:`ORIGINAL_04_1`), random permutations ``numpy.random.default_rng(seed)``
    for ``seeds`` (≈2×; the median over seeds 0…``median_seeds``−1 is in a note).  Max hops
    is the longest ring edge; max link load the bytes of the busiest directed link
    (``RunResult.link_bytes``).  Part "04-1b": flat snake ring vs the 2D (row then column)
    algorithm: 64 KB 32.67 vs 14.67 µs (30 vs 12 rounds), 64 MB 2,696.7 vs 2,678.7 µs.
    """
    topo = Torus(dims, link)
    c = VirtualCluster(topo)
    c2 = VirtualCluster(Torus(dims, link, hop_alpha=extra_hop_alpha))
    p = topo.p
    ideal = t_formula("ring", p, n, link.alpha, link.beta)

    def run(cluster, kind, seed=None, label=None):
        order = ring_order(dims, kind, seed)
        r = all_reduce(cluster, nbytes=n, ranks=order)
        edges = [topo.hops(int(order[i]), int(order[(i + 1) % p])) for i in range(p)]
        return {"mapping": label or kind.replace("_", "-"), "seed": seed, "time": r.time,
                "vs_ideal": r.time / ideal, "max_hops": max(edges),
                "max_link": float(r.link_bytes.max())}

    x = f"{extra_hop_alpha:g}α"
    rows = [run(c, "snake"), run(c, "row_major"),
            run(c2, "row_major", label=T.get("topology.map_row_x", "en", x=x))]
    rows += [run(c, "random", s) for s in seeds]
    med = float(np.median([run(c, "random", s)["vs_ideal"] for s in range(median_seeds)]))

    pct1, pct2 = rows[1]["vs_ideal"] - 1, rows[2]["vs_ideal"] - 1
    pcts = dict(pct1=fmt_pct(pct1, 3), pct2=fmt_pct(pct2, 3), x=x)
    notes = [tuple(T.get("topology.04_1_note", lang, ideal=fmt_time(ideal, 5), hops=rows[1]["max_hops"],
                         med=fmt_ratio(med, 3), last=median_seeds - 1, **pcts) for lang in LANGS)]
    o = ORIGINAL_04_1
    if (tuple(dims), n, link) == (o["dims"], o["n"], o["link"]):
        fits = [key for key, v in (("topology.rule_one", pct1), ("topology.rule_extra", pct2))
                if round(100 * v) == o["pct"]]
        why = "topology.o1_one" if len(fits) == 1 else "topology.o1_both" if fits else "topology.o1_neither"
        notes.append(original_note(*(
            (T.get("topology.o1_said", lang, pct=o["pct"]), T.get("topology.o1_here", lang, **pcts),
             T.get(why, lang, pct=o["pct"], rule=T.get(fits[0], lang, x=x) if len(fits) == 1 else ""))
            for lang in LANGS)))

    snake = ring_order(dims, "snake")
    frows = []
    for m in (small, n):
        flat = all_reduce(c, nbytes=m, ranks=snake)
        two = all_reduce(c, nbytes=m, algorithm="torus")
        frows.append({"n": float(m), "flat": flat.time, "flat_rounds": flat.rounds,
                      "two_d": two.time, "two_d_rounds": two.rounds, "speedup": flat.time / two.time})
    dims_s = "×".join(map(str, dims))
    flat2d = Table(
        key="04-1b",
        title=T("topology.04_1b_title", dims=dims_s),
        columns=["n", "flat", "flat_rounds", "two_d", "two_d_rounds", "speedup"],
        headers=T.pairs("topology.h_n", "topology.h_flat_snake", "topology.h_rounds", "topology.h_two_d",
                        "topology.h_rounds", "topology.h_speedup"),
        rows=frows,
        formats={"n": fmt_bytes, "flat": lambda v: fmt_time(v, 5), "two_d": lambda v: fmt_time(v, 5),
                 "speedup": fmt_ratio},
        notes=T.pairs("topology.04_1b_note", flat=frows[0]["flat_rounds"], two=frows[0]["two_d_rounds"]),
    )
    return Table(
        key="04-1",
        title=T("topology.04_1_title", n=fmt_bytes(n), dims=dims_s, link=link.name),
        columns=["mapping", "seed", "time", "vs_ideal", "max_hops", "max_link"],
        headers=T.pairs("topology.h_mapping", "topology.h_seed", "topology.h_time", "topology.h_vs_ideal",
                        "topology.h_max_hops", "topology.h_max_link"),
        rows=rows,
        formats={"time": lambda v: fmt_time(v, 5), "vs_ideal": (lambda v: fmt_ratio(v, 4)), "max_link": fmt_bytes},
        labels={"zh": {T.get(k, "en", x=x): T.get(k, "zh", x=x) for k in
                       ("topology.map_snake", "topology.map_row_major", "topology.map_random", "topology.map_row_x")}},
        notes={lang: [nt[i] for nt in notes] for i, lang in enumerate(LANGS)},
        meta={"ideal": ideal, "random_median": med},
        parts=[flat2d],
    )


@dataclass(frozen=True)
class A2aRow:
    """One network of demo 04-2: its (English, Chinese) name, the simulated all-to-all, its
    egress and bisection bounds, the time over the larger bound and over the switch's time."""

    label: tuple
    time_s: float
    egress_s: float
    bisection_s: float
    bound_x: float
    sw_x: float

    @property
    def name(self) -> str:
        """The English name (the table's key for its Chinese label)."""
        return self.label[0]


@dataclass(frozen=True)
class A2a:
    """§6.2: the all-to-all of ``n_bytes`` per device over ``link_name`` on a switch, a ring
    and a ``side``×``side`` torus against its bounds;
    the ring against the switch at ``p16`` devices (``p16_x``, None when not run) and, one
    way only, at ``p_one_way``; ``rows``: the three :class:`A2aRow` of table 04-2."""

    p: int
    n_bytes: float
    link_name: str
    side: int
    bis_sw_Bps: float
    bis_ring_Bps: float
    bis_torus_Bps: float
    sw_s: float
    sw_egress_s: float
    sw_bound_x: float
    sw_alpha_s: float              # the switch's p - 1 start-ups
    rounds: int
    ring_s: float
    ring_bisect_s: float
    ring_bound_x: float
    ring_sw_x: float
    ring_bounds_x: float           # the ring's bisection bound over the switch's egress bound
    torus_s: float
    torus_bisect_s: float
    torus_bound_x: float
    torus_sw_x: float
    original_x: float
    p16_x: float | None
    p16: int
    p_one_way: int
    one_way_x: float               # a one-way ring against the switch, p_one_way GPUs
    rows: tuple


def all_to_all_race(p: int = 64, n: float = 16 * MB, link: Link = ICI_V5E, check_p16: bool = True,
                    p_one_way: int = 32) -> A2a:
    """Direct all-to-all of ``n`` per device on a switch, a bidirectional ring and a 2D torus
    of ``p`` devices (all ``link``), simulated, with the bounds of
    :func:`commbook.cost.all_to_all_bounds`: egress (p−1)/p·n/β and bisection (p·n/4)/B_bisect.

    >>> round(all_to_all_race(check_p16=False).ring_sw_x, 1)
    16.3
    """
    d2 = balanced_dims(p, 2)
    keys = [("links.topo_switch", {}), ("topology.t_ring_bidir", {}), ("links.topo_2d", {"dims": f"{d2[0]}×{d2[1]}"})]
    nets = (Switch(p, link), Ring(p, link), Torus(d2, link))
    time = lambda net: all_to_all(VirtualCluster(net), nbytes=n).time
    runs = [(tuple(T.get(k, lang, **f) for lang in LANGS), time(t), *cost.all_to_all_bounds(p, n, link.beta,
                                                                                             t.bisection_bandwidth))
            for (k, f), t in zip(keys, nets)]
    sw, rg, tor = (A2aRow(name, t, eg, bi, t / max(eg, bi), t / runs[0][1]) for name, t, eg, bi in runs)
    p16 = time(Ring(16, link)) / time(Switch(16, link)) if check_p16 else None
    one_way = time(Ring(p_one_way, link, bidirectional=False)) / time(Switch(p_one_way, link))
    return A2a(p, float(n), link.name, d2[0], *(t.bisection_bandwidth for t in nets), sw.time_s, sw.egress_s, sw.bound_x,
               (p - 1) * link.alpha, p - 1, rg.time_s, rg.bisection_s, rg.bound_x, rg.sw_x,
               rg.bisection_s / sw.egress_s, tor.time_s, tor.bisection_s, tor.bound_x, tor.sw_x,
               ORIGINAL_04_2["ratio"], p16, 16, p_one_way, one_way, (sw, rg, tor))


def demo_04_2(run: A2a | None = None, **params) -> Table:
    """Demo 04-2 (lecture §6.2, all-to-all and bisection bandwidth): table of
    :func:`all_to_all_race` (``run``, else ``all_to_all_race(**params)``; by default 16 MB
    per device, ICI).

    Anchors (p = 64): switch 0.413 ms (egress 0.350); ring 6.71 ms =
    16.3× the switch (bound 2.844 ms, 2.36×); 8×8 torus 1.31 ms (3.2× the switch, 3.67×
    its bound).  Flag F.30: with p = 16 the ring is only ≈4.3× the switch (an "original
    notes" note, :data:`ORIGINAL_04_2`, when that run was made).
    """
    run = run or all_to_all_race(**params)
    rows, p = run.rows, run.p
    by = {"egress": [r.label for r in rows if r.egress_s >= r.bisection_s],
          "bisection": [r.label for r in rows if r.egress_s < r.bisection_s]}
    others = rows[1:]
    gap = span([r.bound_x for r in others], lambda v: f"{v:.1f}")
    sp = lambda text: text + " " if text[-1:].isascii() else text   # a space before Chinese after Latin
    cjk = lambda text, lang: sp(text) if lang == "zh" else text

    def note(lang: str) -> str:
        i = LANGS.index(lang)
        bind = T.get("topology.bind_sep", lang).join(
            T.get("topology.bind", lang, kind=T.get(f"topology.kind_{k}", lang),
                  names=cjk(T.get("topology.bind_names_sep", lang).join(t[i] for t in v), lang))
            for k, v in by.items() if v)
        return T.get("topology.04_2_note", lang, bind=bind, pm1=p - 1, gap=gap, others=cjk(
            T.get("topology.others_sep", lang).join(r.label[i] for r in others), lang))

    notes = [tuple(note(lang) for lang in LANGS)]
    o = ORIGINAL_04_2
    if run.p16_x is not None and run.n_bytes == o["n"] and run.link_name == o["link"].name:
        here = {p: run.ring_sw_x, run.p16: run.p16_x}
        fits = [q for q, v in here.items() if round(v) == o["ratio"]]
        notes.append(original_note(*(
            (T.get("topology.o2_said", lang, r=o["ratio"]),
             T.get("topology.o2_item_sep", lang).join(T.get("topology.o2_item", lang, v=f"{v:.1f}", q=q)
                                                      for q, v in here.items()),
             T.get("topology.o2_fits", lang, r=o["ratio"], q=fits[0]) if fits else
             T.get("topology.o2_nofit", lang, r=o["ratio"])) for lang in LANGS)))
    return Table(
        key="04-2",
        title=T("topology.04_2_title", n=fmt_bytes(run.n_bytes), p=p, link=run.link_name),
        columns=["name", "time_s", "egress_s", "bisection_s", "bound_x", "sw_x"],
        headers=T.pairs("topology.h_topology", "topology.h_simulated", "topology.h_egress", "topology.h_bisection",
                        "topology.h_vs_bound", "topology.h_vs_switch"),
        rows=rows,
        labels={"zh": {r.name: r.label[1] for r in rows}},
        notes={lang: [nt[i] for nt in notes] for i, lang in enumerate(LANGS)},
    )


def nccl_ring_crossover(topology: TwoLevel, hi: float = 1e13) -> float | None:
    """The message size above which NCCL's ring (one channel per NIC,
    :func:`commbook.collectives.channels.ring_time_two_level`) is faster than the
    hierarchical all-reduce (:func:`commbook.collectives.t_allreduce_tiers`) on
    ``topology``, or ``None`` when the hierarchy stays faster up to ``hi`` bytes.

    Both closed forms equal the simulator's times (tests/test_channels.py and
    tests/test_topology_tiers.py).  Their difference is a piecewise-linear function of n
    that starts positive (the ring pays 2(GN−1) α of the network, the hierarchy
    2(N−1)); the root is found by bisection on log n.
    """
    def gap(n: float) -> float:
        return ring_time_two_level(topology, n) - t_allreduce_tiers(topology, n)

    lo = 1.0
    if gap(hi) >= 0:
        return None
    if gap(lo) <= 0:
        return 0.0
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
        if hi / lo - 1 < 1e-13:
            break
    return math.sqrt(lo * hi)


def demo_04_3(nodes: Sequence[int] = (2, 4, 8, 16, 32), gpus_per_node: int = 8,
              sizes: Sequence[float] = (64 * KB, 256 * MB), intra: Link = NVLINK4,
              inter: Link = IB_NDR) -> Table:
    """Demo 04-3 (lecture §6.3, hierarchical all-reduce): flat ring vs hierarchical all-reduce
    (NVLink reduce-scatter, per-rail IB ring, NVLink all-gather) on N nodes × 8 GPUs.

    The flat ring is the single ring of the original notes (``channels=1``: one NIC per
    node carries the whole per-step chunk).  Beside it: the ring NCCL runs, one channel
    per NIC with PXN (``TwoLevel(..., pxn=True)``, the simulator's default channels), and
    its ratio to the hierarchy (> 1: the hierarchy is faster).

    Anchors (speedup flat / hierarchical): 64 KB 3.97, 5.34, 6.42, 7.13, 7.54 and 256 MB
    5.83, 5.08, 4.84, 4.82, 4.95 for N = 2, 4, 8, 16, 32.  NCCL's ring / hierarchical at
    256 MB: 0.81, 0.77, 0.85, 1.07, 1.49.

    Part "04-3b": for each N the size above which NCCL's ring beats the hierarchy
    (:func:`nccl_ring_crossover`), with one NIC per GPU and with one NIC per node.
    """
    rows = []
    for n in sizes:
        for N in nodes:
            c = VirtualCluster(TwoLevel(N, gpus_per_node, intra, inter, pxn=True))
            flat = all_reduce(c, nbytes=n, channels=1)
            nccl = all_reduce(c, nbytes=n)
            hier = all_reduce(c, nbytes=n, algorithm="hierarchical")
            rows.append({"n": float(n), "nodes": N, "p": N * gpus_per_node, "flat": flat.time,
                         "flat_rounds": flat.rounds, "hier": hier.time, "hier_rounds": hier.rounds,
                         "speedup": flat.time / hier.time, "nccl": nccl.time,
                         "nccl_vs_hier": nccl.time / hier.time})
    g = gpus_per_node

    def trend(n: float, lang: str = "en") -> str:
        sp = [r["speedup"] for r in rows if r["n"] == n]
        rng = span(sp, fmt_ratio)
        grows = len(sp) > 1 and all(b > a for a, b in zip(sp, sp[1:]))
        return T.get("topology.trend_grows" if grows else "topology.trend_flat", lang, rng=rng)

    cross = []
    for N in nodes:
        row = {"nodes": N, "p": N * g}
        for key, nics in (("per_gpu", None), ("per_node", 1)):
            x = nccl_ring_crossover(TwoLevel(N, g, intra, inter, nics_per_node=nics, pxn=True))
            row[key] = T.get("topology.never", "en") if x is None else x
        cross.append(row)
    never = any(r[k] == T.get("topology.never", "en") for r in cross for k in ("per_gpu", "per_node"))
    crossover = Table(
        key="04-3b",
        title=T("topology.04_3b_title", g=g),
        columns=["nodes", "p", "per_gpu", "per_node"],
        headers={lang: [T.get(k, lang, g=g) for k in ("topology.h_nodes", "topology.h_gpus", "topology.h_per_gpu",
                                                      "topology.h_per_node")] for lang in LANGS},
        rows=cross,
        formats={"per_gpu": fmt_bytes, "per_node": fmt_bytes},
        labels={"zh": {T.get("topology.never", "en"): T.get("topology.never", "zh")}},
        notes={lang: [T.get("topology.04_3b_note", lang, tail=T.get(
            "topology.04_3b_tail_never" if never else "topology.04_3b_tail_end", lang))] for lang in LANGS},
    )
    ratios = span([r["nccl_vs_hier"] for r in rows if r["n"] == max(sizes)], fmt_ratio)
    words = dict(g=g, gm1=g - 1, intra=intra.name, inter=inter.name, small=fmt_bytes(min(sizes)),
                 big=fmt_bytes(max(sizes)), ratios=ratios)
    return Table(
        key="04-3",
        title=T("topology.04_3_title", g=gpus_per_node, intra=intra.name, inter=inter.name),
        columns=["n", "nodes", "p", "flat", "flat_rounds", "hier", "hier_rounds", "speedup", "nccl",
                 "nccl_vs_hier"],
        headers=T.pairs("topology.h_n", "topology.h_nodes", "topology.h_gpus", "topology.h_flat", "topology.h_rounds",
                        "topology.h_hier", "topology.h_rounds", "topology.h_speedup", "topology.h_nccl",
                        "topology.h_nccl_vs_hier"),
        rows=rows,
        formats={"n": fmt_bytes, **dict.fromkeys(("flat", "hier", "nccl"), fmt_time), "speedup": fmt_ratio,
                 "nccl_vs_hier": fmt_ratio},
        notes={lang: [T.get("topology.04_3_flat", lang, t_small=trend(min(sizes), lang), t_big=trend(max(sizes), lang),
                            **words),
                      T.get("topology.04_3_nccl", lang, **words)] for lang in LANGS},
        parts=[crossover],
    )
