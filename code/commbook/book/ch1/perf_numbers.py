"""Chapter §1.2, the numbers and tables: the worked boxes' links, Definition 1.2's fusion
example, Table 1, the intra/inter bandwidth ratios of Figure 3 and its data table, the two
timelines of Figure 4, and the Llama-70B budget.  The figures are in :mod:`.perf_figures`,
the calibration in :mod:`.perf_calibration`; :mod:`.models` gathers all three for the page.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ... import physics
from ...collectives import t_all_gather, t_allreduce_hierarchical, t_formula, t_reduce_scatter
from ...cost import LogP, p2p_time
from ...hardware import IB_HDR, IB_NDR_CHAPTER, NVLINK4_CHAPTER, PCIE_GEN5, ROCE_100G, Link
from ...overlap import Timeline, layerwise_timeline, transfer_beside_compute
from ...units import KB, MB, fmt_bytes, fmt_number, fmt_pct, fmt_rate, fmt_time, ms, us
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS, BOX_NAMES, LINK_NAMES, link_name, split_pairs
from .inputs import FIGURE3_CLAIMED_RATIO

T, K, LANGS = texts("ch1"), "perf_numbers.", ("en", "zh")
_t = T.under(K)         # the section's entries (ch1.toml, under perf_numbers.)
_notes = _t.pairs


__all__ = [
    "fusion_table",
    "BOX_LINKS", "BOX_NAMES", "box_link_table", "Fusion", "hockney_fusion", "CHECKPOINT_1_1",
    "TABLE1", "CHAPTER_PRINTED_NSTAR", "table1", "link_name", "regime",
    "Gap", "gap_ratios", "generations_table", "FIG4", "NM13", "figure4_timelines",
    "LLAMA", "CHAPTER_LLAMA", "LlamaBudget", "llama_budget", "llama_budget_table",
]

def box_link_table() -> Table:
    """The boxes' links: box, link, α, β and n* = αβ (one row per :data:`BOX_LINKS` entry);
    the note lists the distinct α of the InfiniBand NDR links."""
    rows = [{"box": k, "link": l.name, "alpha": l.alpha, "beta": l.beta, "n_star": l.n_half}
            for k, l in BOX_LINKS.items()]
    ndr = sorted({l.alpha for l in BOX_LINKS.values() if l.name == "InfiniBand NDR"})
    us_list = ", ".join(f"{a / us:g}" for a in ndr)
    return Table(
        key="ch1-boxes",
        title=_t("boxes_title"),
        columns=["box", "link", "alpha", "beta", "n_star"],
        headers=_notes("h_box", "h_link", "h_alpha", "h_beta", "h_nstar"),
        rows=rows,
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda v: fmt_rate(v, 3), "n_star": fmt_bytes},
        labels={lang: {**{k: BOX_NAMES[k][lang] for k in BOX_LINKS},
                       **{k: v[lang] for k, v in LINK_NAMES.items()}} for lang in ("en", "zh")},
        notes=_notes("boxes_note", alphas=us_list),
    )


@dataclass(frozen=True)
class Fusion:
    """:func:`hockney_fusion`: the small messages' times counting α only and α + n/β each,
    the fused message's, the two speedups, the share of the separate time that is not
    start-up, the fused size over n*, and ``bound`` = N, the speedup's limit."""

    n_star_bytes: float
    small_bytes: float
    count: int
    fused_bytes: float
    t_small_alpha_s: float
    t_small_s: float
    t_fused_s: float
    alpha_x: float
    full_x: float
    beta_share_frac: float
    fused_per_nstar: float
    bound: int


def hockney_fusion(link: Link, small: float, count: int) -> Fusion:
    """Definition 1.2's fusion example: ``count`` messages of ``small`` bytes against one
    message of ``count × small`` bytes on ``link`` (α–β model)."""
    if not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be a whole number >= 1, got {count!r}")
    t_small_alpha = count * link.alpha
    t_small = count * p2p_time(small, link.alpha, link.beta)
    t_fused = p2p_time(count * small, link.alpha, link.beta)
    return Fusion(link.n_half, small, count, count * small, t_small_alpha, t_small, t_fused, t_small_alpha / t_fused,
                  t_small / t_fused, 1 - t_small_alpha / t_small, count * small / link.n_half, count)


def fusion_table(fu: Fusion) -> Table:
    """:func:`hockney_fusion` as a table: the small messages one by one against the fused one,
    each with its time and the part of it that is start-up."""
    alpha = fu.t_small_alpha_s / fu.count
    rows = [{"how": "separate", "msgs": fu.count, "each": fu.small_bytes, "time": fu.t_small_s,
             "alpha": fu.t_small_alpha_s, "share": fu.t_small_alpha_s / fu.t_small_s},
            {"how": "fused", "msgs": 1, "each": fu.fused_bytes, "time": fu.t_fused_s, "alpha": alpha,
             "share": alpha / fu.t_fused_s}]
    return Table(
        key="ch1-def1.2-fusion",
        title=_t("fusion_title"),
        columns=["how", "msgs", "each", "time", "alpha", "share"],
        headers=split_pairs(_t("fusion_heads")),
        rows=rows,
        formats={"msgs": str, "each": fmt_bytes, "time": lambda t: fmt_time(t, 3),
                 "alpha": lambda t: fmt_time(t, 3), "share": lambda x: fmt_pct(x, 3)},
        labels={lang: {k: T.get(K + k, lang) for k in ("separate", "fused")} for lang in LANGS},
    )


CHECKPOINT_1_1 = {"message": 10 * KB, "link": BOX_LINKS["cp1.1"], "rates_bps": (100e9, 400e9)}
"""Checkpoint 1.1's givens: the message of question 1 and its link, and the network upgrade of
question 3 (line rates in bits/s, at the link's α)."""


def regime(n: float, link: Link) -> str:
    """``"latency"`` when ``n`` < αβ (the α term is larger), else ``"bandwidth"``."""
    return "latency" if n < link.n_half else "bandwidth"


# ============================================================================ Table 1
@dataclass(frozen=True)
class _T1Row:
    key: str
    link: Link
    name: dict[str, str]


TABLE1: tuple[_T1Row, ...] = tuple(
    _T1Row(key, link, LINK_NAMES[link.name]) for key, link in (
        ("NVLINK4_CHAPTER", NVLINK4_CHAPTER), ("IB_NDR_CHAPTER", IB_NDR_CHAPTER), ("IB_HDR", IB_HDR),
        ("PCIE_GEN5", PCIE_GEN5), ("ROCE_100G", ROCE_100G)))
"""Table 1's rows: the hardware presets with the range of α the chapter states."""

CHAPTER_PRINTED_NSTAR: dict[str, tuple[float, str]] = {
    "NVLINK4_CHAPTER": (0.7 * MB, "~0.7 MB"),
    "IB_NDR_CHAPTER": (100 * KB, "~100 KB"),
    "IB_HDR": (87.5 * KB, "~87.5 KB"),
    "PCIE_GEN5": (224 * KB, "~224 KB"),
    "ROCE_100G": (93.7 * KB, "~93.7 KB"),
}
"""What the chapter prints in Table 1's n* column (bytes, text), by preset name."""


def _us_range(r: tuple[float, float]) -> str:
    return f"{fmt_number(r[0] / us)}–{fmt_number(r[1] / us)} µs"


def table1() -> Table:
    """Table 1: link, α range, β (one direction), n* = αβ at the midpoint α.

    Every preset must carry an ``alpha_range`` whose midpoint is its ``alpha``.
    """
    rows = []
    for r in TABLE1:
        lo, hi = r.link.alpha_range
        if not math.isclose(r.link.alpha, (lo + hi) / 2, rel_tol=1e-12):
            raise ValueError(f"{r.key}: alpha {r.link.alpha} is not the midpoint of {r.link.alpha_range}")
        rows.append({"link": r.key, "alpha_range": r.link.alpha_range, "alpha": r.link.alpha,
                     "beta": r.link.beta, "n_star": r.link.n_half})
    mids = {lang: T.get(K + "list_sep", lang).join(
        f"{r.name[lang].split(T.get(K + 'name_paren', lang))[0]} {fmt_number(r.link.alpha / us)} µs" for r in TABLE1)
        for lang in LANGS}
    nv = NVLINK4_CHAPTER
    note_alpha = {lang: T.get(K + "t1_note_alpha", lang, mids=mids[lang]) for lang in LANGS}
    note_beta = _t("t1_note_beta", both=fmt_rate(2 * nv.beta, 3), one=fmt_rate(nv.beta, 3))
    return Table(
        key="ch1-table1",
        title=_t("t1_title"),
        columns=["link", "alpha_range", "beta", "n_star"],
        headers=split_pairs(_t("t1_heads")),
        rows=rows,
        formats={"alpha_range": _us_range, "beta": lambda v: fmt_rate(v, 3), "n_star": lambda n: fmt_bytes(n, digits=4)},
        labels={lang: {r.key: r.name[lang] for r in TABLE1} for lang in ("en", "zh")},
        notes={lang: [note_alpha[lang], note_beta[lang]] for lang in LANGS},
    )



# ============================================================================ Figure 3 (data)
@dataclass(frozen=True)
class Gap:
    """:func:`gap_ratios`: the chapter's claim (``claim_x``), the lowest and highest ratio of
    each family, NVLink 5 against XDR and NDR and NVLink 4 against NDR (with the NICs'
    names), the years drawn, and PCIe Gen5 x16's data rate, raw rate and Table 1's β.
    ``pcie``, ``nvlink`` and ``nvlink_dgx`` are the (intra, inter, ratio) pairs drawn;
    ``within`` says per family whether every ratio is at least ``floor``."""

    claim_x: float
    pcie_lo_x: float
    pcie_hi_x: float
    nvl_lo_x: float
    nvl_hi_x: float
    nvl5_xdr_x: float
    nvl5_ndr_x: float
    nvl4_ndr_x: float
    xdr: str
    ndr: str
    y0: int
    y1: int
    pcie5_Bps: float
    pcie5_raw_Bps: float
    pcie5_t1_Bps: float
    floor_x: float
    within: dict = field(repr=False)
    pcie: list = field(repr=False)
    nvlink: list = field(repr=False)
    nvlink_dgx: list = field(repr=False)


def gap_ratios() -> Gap:
    """Intra/inter bandwidth ratios of Figure 3.

    ``pcie`` and ``nvlink``: :func:`commbook.physics.contemporary_pairs` (each generation
    against the newest InfiniBand of its year); ``nvlink_dgx``: the same with NVLink 5.0
    paired with the NIC the DGX B200 ships (:data:`commbook.physics.DGX_B200_NIC`).
    ``claim_x`` is the chapter's "order of magnitude" and ``within`` says, per family,
    whether every ratio is at least a third of it (the loosest reading of "roughly an order
    of magnitude": within a factor √10 ≈ 3.2 of 10×, i.e. ≥ 3.2×).

    >>> gap_ratios().within
    {'PCIe': False, 'NVLink': True}
    """
    pcie = physics.contemporary_pairs("PCIe")
    nvl = physics.contemporary_pairs("NVLink")
    dgx = physics.contemporary_pairs("NVLink", {"NVLink 5.0": physics.DGX_B200_NIC})
    claimed = FIGURE3_CLAIMED_RATIO
    floor = claimed / math.sqrt(claimed)
    pc, nv, dg = ([x for *_, x in pairs] for pairs in (pcie, nvl, dgx))
    years = sorted(g.year for g in physics.GENERATIONS.values() if g.family != "InfiniBand")
    gen5 = physics.generation("PCIe Gen5 x16")
    return Gap(claimed, min(pc), max(pc), min(nv), max(nv), nv[-1], dg[-1], nv[-2], nvl[-1][1], dgx[-1][1], years[0],
               years[-1], gen5.beta, gen5.lanes * gen5.lane_bps / 8, PCIE_GEN5.beta, floor,
               {"PCIe": min(pc) >= floor, "NVLink": min(nv) >= floor}, pcie, nvl, dgx)


def generations_table() -> Table:
    """Every generation drawn in Figure 3: family, name, year, scope, β and its source."""
    gens = sorted(physics.GENERATIONS.values(), key=lambda g: (g.family, g.year))
    rows = [{"family": g.family, "name": g.name, "year": g.year, "scope": g.scope,
             "beta": g.beta, "source": g.source} for g in gens]
    return Table(
        key="ch1-fig3-data",
        title=_t("gen_title"),
        columns=["name", "year", "scope", "beta", "source"],
        headers=split_pairs(_t("gen_heads")),
        rows=rows, formats={"year": str, "beta": lambda v: fmt_rate(v, 3)},
    )


# ============================================================================ Figure 4 (timelines)
FIG4 = {"layers": 4, "backward": 2.4, "allreduce": 2.4, "optimizer": 2.2}
"""Figure 4's drawing: four layers whose backward blocks and all-reduces are 2.4 units each,
and an optimizer of 2.2 units (no overhead drawn)."""

NM13 = {"backward": 500e-6, "L": 100e-6, "o": 50e-6}
"""Napkin Math 1.3: 500 µs of backward compute beside one all-reduce whose wire latency L is
100 µs, with o = 50 µs of processor overhead to launch it and 50 µs to complete it."""


def figure4_timelines() -> tuple[Timeline, Timeline]:
    """(a) Figure 4's layer-wise overlap (:data:`FIG4`); (b) Napkin Math 1.3 (:data:`NM13`)
    as a :func:`commbook.overlap.transfer_beside_compute` timeline."""
    n = FIG4["layers"]
    a = layerwise_timeline([FIG4["backward"]] * n, [FIG4["allreduce"]] * n, optimizer=FIG4["optimizer"])
    b = transfer_beside_compute(NM13["backward"], LogP(L=NM13["L"], o=NM13["o"]))
    return a, b



# ============================================================================ Llama-70B budget
LLAMA = {"params": 70e9, "bytes_per_value": 2, "nodes": 16, "gpus_per_node": 8}
"""The budget's setting: a 70B-parameter model, BF16 gradients (2 bytes), 16 nodes × 8 GPUs."""


CHAPTER_LLAMA = {"flat": (5557 * ms, 0), "hier": (1200.8 * ms, 1)}
"""What the chapter prints for the budget: (seconds, decimals of the printed milliseconds) —
"about 5,557 ms" for the flat ring and "about 1200.8 ms" for the hierarchical all-reduce."""


@dataclass(frozen=True)
class LlamaBudget:
    """:func:`llama_budget`: flat ring and hierarchical all-reduce (and their ratio), the
    bandwidth-only times, the totals at both ends of the links' α ranges, the printed values
    of the chapter (at its rounding), and the phases (name, link, ranks, bytes, time, steps)."""

    n_bytes: float
    p: int
    nodes: int
    gpus_per_node: int
    shard_bytes: float
    intra_alpha_s: float
    inter_alpha_s: float
    flat_s: float
    hier_s: float
    speedup_x: float
    flat_steps: int
    flat_bw_s: float
    hier_bw_s: float
    flat_lo_s: float
    flat_hi_s: float
    hier_lo_s: float
    hier_hi_s: float
    phases: tuple
    intra: Link = field(repr=False)
    inter: Link = field(repr=False)


def llama_budget(nodes: int = LLAMA["nodes"], gpus_per_node: int = LLAMA["gpus_per_node"],
                 nbytes: float | None = None, intra: Link = NVLINK4_CHAPTER,
                 inter: Link = IB_NDR_CHAPTER) -> LlamaBudget:
    """Flat ring over ``inter`` on all GPUs against the hierarchical all-reduce (ring
    reduce-scatter over ``intra``, ring all-reduce of n/G across nodes over ``inter``, ring
    all-gather over ``intra``), with each phase and the bandwidth-only times (α = 0).

    ``range`` gives both totals over the α ranges of the links (where they have one).
    """
    n = LLAMA["params"] * LLAMA["bytes_per_value"] if nbytes is None else nbytes
    p = nodes * gpus_per_node
    flat = t_formula("ring", p, n, inter.alpha, inter.beta)
    hier = t_allreduce_hierarchical(nodes, gpus_per_node, n, intra, inter)
    phases = [
        ("rs", intra, gpus_per_node, n, t_reduce_scatter("ring", gpus_per_node, n, intra.alpha, intra.beta),
         gpus_per_node - 1),
        ("ar", inter, nodes, n / gpus_per_node, t_formula("ring", nodes, n / gpus_per_node, inter.alpha, inter.beta),
         2 * (nodes - 1)),
        ("ag", intra, gpus_per_node, n, t_all_gather("ring", gpus_per_node, n, intra.alpha, intra.beta),
         gpus_per_node - 1),
    ]
    if not math.isclose(sum(ph[4] for ph in phases), hier, rel_tol=1e-12):
        raise AssertionError("the three phases do not add up to the hierarchical closed form")

    def totals(a_intra, a_inter):
        li = Link(intra.name, a_intra, intra.beta, intra.source)
        lx = Link(inter.name, a_inter, inter.beta, inter.source)
        return (t_formula("ring", p, n, a_inter, inter.beta),
                t_allreduce_hierarchical(nodes, gpus_per_node, n, li, lx))

    ri = intra.alpha_range or (intra.alpha, intra.alpha)
    rx = inter.alpha_range or (inter.alpha, inter.alpha)
    lo, hi = totals(ri[0], rx[0]), totals(ri[1], rx[1])
    flat_bw, hier_bw = totals(0.0, 0.0)
    return LlamaBudget(n, p, nodes, gpus_per_node, n / gpus_per_node, intra.alpha, inter.alpha, flat, hier,
                       flat / hier, 2 * (p - 1), flat_bw, hier_bw, lo[0], hi[0], lo[1], hi[1], tuple(phases),
                       intra, inter)




def llama_budget_table(budget: LlamaBudget | None = None) -> Table:
    """The budget's phases: what each moves, over which link, in how many α steps and how long."""
    b = llama_budget() if budget is None else budget
    rows = [{"phase": "flat", "link": "inter", "ranks": b.p, "bytes": b.n_bytes,
             "steps": b.flat_steps, "time": b.flat_s}]
    rows += [{"phase": k, "link": "intra" if l is b.intra else "inter", "ranks": r, "bytes": n,
              "steps": s, "time": t} for k, l, r, n, t, s in b.phases]
    rows.append({"phase": "hier", "link": "—", "ranks": b.p, "bytes": b.n_bytes,
                 "steps": sum(ph[5] for ph in b.phases), "time": b.hier_s})
    phases = T.labels(K + "phase.")
    labels = {lang: {**phases[lang], "intra": link_name(b.intra, lang), "inter": link_name(b.inter, lang)}
              for lang in LANGS}
    ni, nx = ({lang: link_name(getattr(b, k), lang) for lang in ("en", "zh")} for k in ("intra", "inter"))
    return Table(
        key="ch1-llama",
        title=_t("ll_title"),
        columns=["phase", "link", "ranks", "bytes", "steps", "time"],
        headers=split_pairs(_t("ll_heads")),
        rows=rows,
        formats={"bytes": fmt_bytes, "time": (lambda v: fmt_time(v, 3))},
        labels=labels,
        notes={lang: [T.get(K + "ll_note", lang, ni=ni[lang], nx=nx[lang], ai=fmt_time(b.intra.alpha, 3),
                            bi=fmt_rate(b.intra.beta, 3), ax=fmt_time(b.inter.alpha, 3), bx=fmt_rate(b.inter.beta, 3))]
               for lang in LANGS},
    )
