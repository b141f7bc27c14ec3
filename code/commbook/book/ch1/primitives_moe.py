r"""Chapter §1.3, the MoE half of ``chapters/{zh,en}/ch1/03-primitives.md``: Napkin
Math 1.4 (uniform dispatch, its bounds and the simulated shift rounds), expert capacity
and the binomial load of one expert (table, figure, busiest expert by Monte Carlo), the
lower bounds of a skewed dispatch; direct against hierarchical all-to-all with their flow
counts is :mod:`.primitives_a2a` (re-exported here).  Everything is computed with :mod:`commbook.moe` and the simulator
(:func:`commbook.collectives.all_to_all`, ``all_to_all_v``).

Napkin Math 1.4's configuration is :data:`commbook.book.ch1.inputs.NM_1_4` and its link
:data:`commbook.book.ch1.primitives.NM_1_4_LINK` (α = 3 µs, β = 50 GB/s); the
hierarchical comparison uses the chapter's Table 1 presets.  Units are decimal.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

from ... import collectives as coll
from ... import moe
from ...collectives import predict
from ...comm_sim import VirtualCluster
from ...hardware import IB_NDR_CHAPTER, Link
from ...topology import Switch
from ...units import fmt_bytes, fmt_pct, fmt_time
from ..glue import not_glued
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style
from ..tables import Table
from ..text import texts
from .boxes import split_pairs
from .inputs import NM_1_4
from .primitives import CHAPTER_STATED, NM_1_4_LINK, link_name
from .primitives_a2a import HIER_TOKENS, flow_counts, flow_table, hierarchical_table  # noqa: F401 (re-exported)

T = texts("ch1")
__all__ = [
    "NapkinMath14", "napkin_1_4", "Capacity", "capacity", "capacity_table", "ExpertMax", "expert_max_monte_carlo", "FIG_LOAD_LABELS", "fig_expert_load",
    "SKEWS", "Skew", "skew", "skew_table", "Oversubscribed", "oversubscribed_bisection", "napkin_1_4_table",
    "HIER_TOKENS", "hierarchical_table", "flow_counts", "flow_table",
]


# ============================================================================ Napkin Math 1.4
@dataclass(frozen=True)
class NapkinMath14:
    """:func:`napkin_1_4`: tokens (``tpg`` per GPU, ``tpe`` per expert, ``tpp`` per GPU pair),
    bytes per token, pair, sent and received, one transfer (and its bandwidth term), the serial
    sum, the injection bound, the simulated direct all-to-all and all-to-all-v, the closed form,
    the extra start-ups the shift rounds pay, one layer (dispatch and combine) and the bisection
    bound; what the chapter states (sent, one transfer, the serial sum) and Table 1's α."""

    tokens: int
    gpus: int
    tpg: int
    d: int
    tok_bytes: float
    experts: int
    epg: int
    k: int
    tpe: int
    tpp: int
    remote: int
    pair_bytes: float
    sent_bytes: float
    recv_bytes: float
    alpha_s: float
    beta_Bps: float
    transfer_s: float
    transfer_bw_s: float
    serial_s: float
    inject_s: float
    sim_s: float
    sim_v_s: float
    closed_s: float
    rounds: int
    gap_s: float
    extra_alpha: int
    layer_sim_s: float
    layer_bound_s: float
    bisect_s: float
    st_sent_bytes: float
    st_transfer_s: float
    st_serial_s: float
    ib_alpha_s: float
    config: moe.MoEConfig = field(repr=False)
    link: Link = field(repr=False)
    counts: np.ndarray = field(repr=False)
    bounds: moe.A2ABounds = field(repr=False)


def napkin_1_4(config: moe.MoEConfig = NM_1_4, link: Link = NM_1_4_LINK) -> NapkinMath14:
    """Napkin Math 1.4: uniform top-k dispatch of ``config`` over ``link``.

    Returns the token counts, the bytes per pair and per GPU, α + n/β of one transfer,
    the serial sum of the P−1 transfers, the injection bound α + (bytes sent)/β, the
    simulated direct all-to-all (P−1 shift rounds on a switch of ``link``) of the whole
    buffer and the all-to-all-v of the uniform count matrix, and the closed form
    (P−1)(α + n/(Pβ)) they must equal."""
    P = config.ranks
    counts = moe.uniform_counts(config)                   # bytes i -> j, diagonal local
    pair = float(counts[0, 1])
    sent = float(counts[0].sum() - counts[0, 0])
    buffer = float(counts[0].sum())
    transfer = link.alpha + pair / link.beta
    cluster = VirtualCluster(Switch(P, link))
    a2a = coll.all_to_all(cluster, nbytes=buffer)
    a2av = coll.all_to_all_v(cluster, counts=counts)
    inject = link.alpha + sent / link.beta
    bounds = moe.a2a_bounds_on(Switch(P, link), counts)
    st = CHAPTER_STATED
    return NapkinMath14(
        config.tokens, P, config.tokens_per_rank, config.d_model, config.bytes_per_token, config.experts,
        config.experts_per_rank, config.top_k, config.tokens * config.top_k // config.experts,
        int(pair // config.bytes_per_token), P - 1, pair, sent, float(counts[:, 0].sum() - counts[0, 0]),
        link.alpha, link.beta, transfer, pair / link.beta, (P - 1) * transfer, inject, a2a.time, a2av.time,
        predict("all_to_all", "direct", P, buffer, link.alpha, link.beta), a2a.rounds, a2a.time - inject,
        a2a.rounds - 1, 2 * a2a.time, 2 * inject, bounds.bisection, st["nm14_sent_mb"] * 1e6,
        st["nm14_transfer_us"] * 1e-6, st["nm14_serial_us"] * 1e-6, IB_NDR_CHAPTER.alpha,
        config, link, counts, bounds)


# ============================================================================ MoE load
def napkin_1_4_table(nm: NapkinMath14 | None = None) -> Table:
    """Napkin Math 1.4's setting: the layer, the routing and the link (:func:`napkin_1_4`)."""
    nm = napkin_1_4() if nm is None else nm
    cfg, link = nm.config, nm.link
    rows = [("tokens", f"{cfg.tokens:,}"), ("gpus", f"{cfg.ranks}"), ("tpg", f"{nm.tpg}"),
            ("d", f"{cfg.d_model:,}"), ("tok_bytes", fmt_bytes(nm.tok_bytes, digits=4)),
            ("experts", f"{cfg.experts}"), ("epg", f"{nm.epg}"), ("k", f"{cfg.top_k}"),
            ("tpe", f"{nm.tpe}"), ("alpha", fmt_time(link.alpha)),
            ("beta", f"{link.beta / 1e9:g} GB/s")]
    setting = T.labels("primitives_moe.setting.")
    names = {k: (setting["en"][k], setting["zh"][k]) for k in setting["en"]}
    return Table(
        key="ch1-nm1.4-setting",
        title=T("primitives_moe.napkin_1_4_table.title"),
        columns=["what", "value"],
        headers=split_pairs(T("primitives_moe.napkin_1_4_table.headers")),
        rows=[{"what": k, "value": v} for k, v in rows],
        labels={lang: {k: v[i] for k, v in names.items()} for i, lang in enumerate(("en", "zh"))},
    )


def _probability(x: float) -> str:
    """A probability as a percentage (``fmt_pct``), exactly 0 as "0"."""
    return fmt_pct(x) if x else "0"


@dataclass(frozen=True)
class Capacity:
    """:func:`capacity`: the factors C (as text and each), the load's trials, overflow and drops
    at the smallest C and overflow at the largest, the busiest expert (independent bound and
    simulated, over ``batches``) and its ratio to the mean load, the middle capacity and the
    share of simulated batches whose busiest expert overflows it; ``rows`` per C, ``load``
    the binomial load; ``config`` is an attribute, not a field."""

    factors: str
    c1: float
    c_lo: float
    c_hi: float
    n: int
    over1_frac: float
    drop1_frac: float
    over3_frac: float
    max_ind: float
    max_mc: float
    batches: int
    max_ratio: float
    mid: int
    batch_over_frac: float
    rows: tuple = field(repr=False)
    load: moe.ExpertLoad = field(repr=False)
    config: moe.MoEConfig = not_glued()


def capacity(config: moe.MoEConfig = NM_1_4, factors: Sequence[float] = (1.0, 1.25, 1.5),
             mc: "ExpertMax | None" = None) -> Capacity:
    """Capacity ⌈P·T·k/E·C⌉ for each capacity factor C and, under uniform routing
    (Binomial(P·T, k/E) load per expert), the exact probability that one expert overflows
    and the expected share of token assignments dropped; the busiest expert from ``mc``
    (:func:`expert_max_monte_carlo` by default).

    >>> capacity().mid
    80
    """
    load, mc = config.load(), expert_max_monte_carlo(config) if mc is None else mc
    rows = tuple({"C": c, "capacity": config.capacity(c), "overflow": load.overflow_probability(config.capacity(c)),
                  "dropped": load.dropped_share(config.capacity(c))} for c in factors)
    lo, mid, hi = rows[0], rows[len(rows) // 2], rows[-1]
    return Capacity(", ".join(f"{c:g}" for c in factors), lo["C"], mid["C"], hi["C"], load.n, lo["overflow"],
                    lo["dropped"], hi["overflow"], mc.independent, mc.mean_max, mc.batches, mc.mean_max / load.mean,
                    mid["capacity"], float(np.mean(mc.counts.max(axis=1) > mid["capacity"])), rows, load, config)


def capacity_table(cap: Capacity | None = None) -> Table:
    """:func:`capacity` per factor C: the capacity, the probability that one expert overflows
    and the expected share of token assignments dropped."""
    cap = capacity() if cap is None else cap
    config, load = cap.config, cap.load
    return Table(
        key="ch1-capacity",
        title=T("primitives_moe.capacity_title", tokens=config.tokens, experts=config.experts, k=config.top_k),
        columns=["C", "capacity", "overflow", "dropped"],
        headers=split_pairs(T("primitives_moe.capacity_table.headers")),
        rows=list(cap.rows), formats={"C": lambda c: f"{c:g}", "overflow": _probability, "dropped": _probability},
        notes=T.pairs("primitives_moe.capacity_note", n=load.n, k=config.top_k, experts=config.experts,
                      mean=f"{load.mean:g}", sd=f"{load.sd:.2f}"),
    )


@dataclass(frozen=True)
class ExpertMax:
    """:func:`expert_max_monte_carlo`: the simulated busiest expert (mean, standard error),
    every expert count (``counts``: batches × experts), and the independent bound."""

    batches: int
    seed: int
    counts: np.ndarray = field(repr=False)
    mean_max: float
    stderr: float
    independent: float


def expert_max_monte_carlo(config: moe.MoEConfig = NM_1_4, batches: int = 400,
                           seed: int = 0) -> ExpertMax:
    """The busiest expert of a batch under uniform routing, by simulation: ``batches``
    seeded batches of :func:`commbook.moe.route`.  Returns the mean of the maximum
    expert load, its standard error, and every expert count (for the figure's
    histogram), next to :meth:`~commbook.moe.ExpertLoad.expected_max`, which treats the
    experts as independent (a lower bound)."""
    rng = np.random.default_rng(seed)
    counts = np.array([moe.route(config, None, rng).expert_counts() for _ in range(batches)])
    maxima = counts.max(axis=1)
    return ExpertMax(batches, seed, counts, float(maxima.mean()), float(maxima.std(ddof=1) / math.sqrt(batches)),
                     config.load().expected_max(config.experts))


FIG_LOAD_LABELS = T.labels("primitives_moe.fig_load.")


def fig_expert_load(lang: str = "en", config: moe.MoEConfig = NM_1_4,
                    factors: Sequence[float] = (1.0, 1.25, 1.5), batches: int = 400,
                    seed: int = 0) -> Figure:
    """The load of one expert: the exact binomial pmf (bars, gid ``"pmf"``), the
    histogram of simulated expert counts (steps, gid ``"mc"``), the capacities for
    ``factors`` (vertical lines, gid ``"cap:<C>"``) and the simulated mean of the busiest
    expert (dashed, gid ``"max"``)."""
    load = config.load()
    mc = expert_max_monte_carlo(config, batches, seed)
    k = np.arange(load.n + 1)
    lo, hi = int(load.mean - 5 * load.sd), int(load.mean + 6 * load.sd)
    sel = slice(max(lo, 0), hi + 1)
    hist = np.bincount(mc.counts.ravel(), minlength=load.n + 1) / mc.counts.size
    fmt = dict(n=config.tokens, e=config.experts, k=config.top_k, b=batches)
    with book_style(lang) as lang:
        lab = FIG_LOAD_LABELS[lang]
        fig = Figure(figsize=(COLUMN_IN, 4.4))
        ax = fig.subplots()
        ax.bar(k[sel], load.pmf[sel], width=1.0, color=PALETTE[5], alpha=0.6, label=lab["pmf"].format(**fmt),
               gid="pmf")
        ax.step(k[sel], hist[sel], where="mid", color=PALETTE[6], lw=1.0, label=lab["mc"].format(**fmt),
                gid="mc")
        top = load.pmf.max()
        for i, c in enumerate(factors):
            cap = config.capacity(c)
            ax.axvline(cap + 0.5, color=PALETTE[[3, 1, 2][i % 3]], lw=1.6,
                       label=lab["cap"].format(c=c, cap=cap), gid=f"cap:{c:g}")
        ax.axvline(mc.mean_max, color="0.3", ls="--", lw=1.2, label=lab["max"].format(m=mc.mean_max, **fmt),
                   gid="max")
        ax.set_xlim(sel.start - 0.5, sel.stop - 0.5)
        ax.set_ylim(0, top * 1.25)
        ax.set_xlabel(lab["x"])
        ax.set_ylabel(lab["y"])
        ax.set_title(lab["title"].format(**fmt))
        ax.legend(fontsize=SMALL_PT, loc="upper right")
    return fig


# ============================================================================ skew and bounds
SKEWS: tuple[tuple[str, float | None], ...] = (("exact", None), ("random", 0.0), ("zipf", 0.5),
                                                ("zipf", 1.0))
"""Routings of the skew table: the napkin math's exact shares, seeded uniform routing,
and seeded Zipf popularity with exponents 0.5 and 1 (experts shuffled over the GPUs)."""


def _routing_counts(config: moe.MoEConfig, kind: str, s: float | None, seed: int):
    if kind == "exact":
        counts = moe.uniform_counts(config)
        per_expert = np.full(config.experts, config.tokens * config.top_k // config.experts)
        return counts, per_expert
    pop = None if kind == "random" else moe.zipf_popularity(config.experts, s, seed=seed)
    r = moe.route(config, pop, rng=seed)
    return r.counts_bytes(), r.expert_counts()


@dataclass(frozen=True)
class Skew:
    """:func:`skew`: the seed, Zipf s = 1 (its s, the busiest GPU's incoming tokens over the
    uniform share, reception bound, simulated time, tokens dropped at the capacity ``cap``)
    against s = 0.5's reception bound, and the ``os_r``:1 oversubscribed fabric (its
    bisection bandwidth and bounds, and the full fabric's P·β/2); ``rows`` per routing of
    :data:`SKEWS`; ``config``, ``link`` and ``capacity_factor`` are attributes, not fields."""

    seed: int
    s1: float
    cap: int
    z1_gamma: float
    z1_rx_s: float
    z1_sim_s: float
    z1_drop_frac: float
    z05_rx_s: float
    os_r: float
    os_bw_Bps: float
    os_bisect_s: float
    os_inject_s: float
    os_full_bw_Bps: float
    rows: tuple = field(repr=False)
    config: moe.MoEConfig = not_glued()
    link: Link = not_glued()
    capacity_factor: float = not_glued()


def skew(config: moe.MoEConfig = NM_1_4, link: Link = NM_1_4_LINK, seed: int = 0,
         capacity_factor: float = 1.25, ratio: float = 4.0) -> Skew:
    """The four lower bounds (:func:`commbook.moe.a2a_bounds_on`) of the dispatch of
    ``config`` on a switch of ``link`` for each routing of :data:`SKEWS`, with the
    busiest expert, the busiest GPU's incoming tokens, the tokens dropped at
    ``capacity_factor`` and the simulated all-to-all-v; and the uniform dispatch on a
    ``ratio``:1 oversubscribed fabric (:func:`oversubscribed_bisection`).

    >>> skew().cap
    80
    """
    P = config.ranks
    topo = Switch(P, link)
    cap = config.capacity(capacity_factor)
    rows = []
    for kind, s in SKEWS:
        counts, experts = _routing_counts(config, kind, s, seed)
        b = moe.a2a_bounds_on(topo, counts)
        rx = counts.sum(axis=0) // config.bytes_per_token
        rows.append({
            "routing": kind if s is None or kind == "random" else f"zipf:{s:g}", "s": s,
            "hot_expert": int(experts.max()), "hot_gpu": int(rx.max()),
            "dropped": float(np.maximum(experts - cap, 0).sum() / (config.tokens * config.top_k)),
            "injection": b.injection, "reception": b.reception, "bisection": b.bisection,
            "startup": b.startup, "binding": b.binding,
            "simulated": coll.all_to_all_v(VirtualCluster(topo), counts=counts).time,
            "counts": counts,
        })
    z1, z05 = (next(r for r in rows if r["routing"] == k) for k in ("zipf:1", "zipf:0.5"))
    over = oversubscribed_bisection(ratio, config, link)
    return Skew(seed, z1["s"], cap, z1["hot_gpu"] / config.tokens_per_rank, z1["reception"], z1["simulated"],
                z1["dropped"], z05["reception"], over.ratio, over.bisection_bw_Bps, over.bounds.bisection,
                over.bounds.injection, P * link.beta / 2, tuple(rows), config, link, capacity_factor)


def skew_table(sk: Skew | None = None) -> Table:
    """:func:`skew` per routing: the busiest expert and GPU, the tokens dropped, the four
    bounds, which binds, and the simulated all-to-all-v."""
    sk = skew() if sk is None else sk
    config, link, P = sk.config, sk.link, sk.config.ranks
    names = T.labels("primitives_moe.skew_table.names.")
    t = lambda x: fmt_time(x, 3)
    return Table(
        key="ch1-skew",
        title={lang: T.get("primitives_moe.skew_title", lang, tokens=config.tokens, p=P, seed=sk.seed,
                           link=link.name if lang == "en" else link_name(link, lang)) for lang in ("en", "zh")},
        columns=["routing", "hot_expert", "hot_gpu", "dropped", "injection", "reception", "bisection",
                 "startup", "binding", "simulated"],
        headers=split_pairs(T("primitives_moe.skew_heads", c=f"{sk.capacity_factor:g}")),
        rows=list(sk.rows), labels=names,
        formats={"dropped": lambda x: fmt_pct(x) if x else "0", "injection": t, "reception": t,
                 "bisection": t, "startup": t, "simulated": t},
        notes=split_pairs(T("primitives_moe.skew_table.notes")),
    )


@dataclass(frozen=True)
class Oversubscribed:
    """:func:`oversubscribed_bisection`: the ratio, the bisection bandwidth and the four bounds."""

    ratio: float
    bisection_bw_Bps: float
    bounds: moe.A2ABounds


def oversubscribed_bisection(ratio: float = 4.0, config: moe.MoEConfig = NM_1_4,
                             link: Link = NM_1_4_LINK) -> Oversubscribed:
    """The uniform dispatch of ``config`` on a fabric with ``ratio``:1 oversubscription:
    BW_bisect = P·β/(2R) (the chapter's formula) and the four bounds with it."""
    P = config.ranks
    bw = P * link.beta / (2 * ratio)
    b = moe.a2a_bounds(moe.uniform_counts(config), alpha=link.alpha, inject_bw=link.beta,
                       bisection_bw=bw)
    return Oversubscribed(ratio, bw, b)
