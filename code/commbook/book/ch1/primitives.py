r"""Chapter §1.3, "collective primitives": the numbers, tables and figures of
the first half of ``chapters/{zh,en}/ch1/03-primitives.md``; the MoE half is
:mod:`commbook.book.ch1.primitives_moe`, the schedule tables and FSDP
:mod:`commbook.book.ch1.primitives_use`.

Here: the chapter's stated numbers (:data:`CHAPTER_STATED`), Napkin Math 1.4's link, the
Chinese names of the chapter's link presets, Figure 5 from real-data simulator runs
(:mod:`commbook.collectives`) and the six-primitive table from the closed forms
(:func:`commbook.collectives.predict`).  Definition 1.3's naive/ring ratio, reduce-scatter +
all-gather = all-reduce on integers and a float32 sum that depends on its order are
computed on the page.

Conventions (stated so every number can be checked):

* Units are decimal (KB = 1e3 B, MB = 1e6 B), except PyTorch DDP's bucket cap, which is
  25 MiB (see :func:`commbook.book.ch1.primitives_use.fsdp_numbers`).
* N is the number of ranks and M the bytes each rank holds.  For the all-gather M is the
  gathered output (what every rank ends with), for the all-to-all each rank's whole
  buffer (the local block included), as in :mod:`commbook.cost`.
* Napkin Math 1.4 uses its own link, :data:`NM_1_4_LINK` (InfiniBand NDR with α = 3 µs);
  the other examples use the chapter's Table 1 presets (:data:`commbook.hardware.IB_NDR_CHAPTER`,
  :data:`~commbook.hardware.NVLINK4_CHAPTER`).
* Definition 1.3's naive/ring ratio (computed on the page) takes both readings of the naive
  root: if the root's receiving and sending overlap, the root
  is busy (N−1)M/β and the ratio is N/2 (= 512 at N = 1024, the chapter's "500×"); if it
  first receives everything and then sends the sum back — the chapter's own naive
  section ("receive N·M and send N·M") and :func:`commbook.cost.allreduce_naive` — it is
  busy 2(N−1)M/β and the ratio is N.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyBboxPatch

from ... import collectives as coll
from ...collectives import predict
from ...comm_sim import RunResult, VirtualCluster
from ...hardware import IB_NDR_CHAPTER, NVLINK4_CHAPTER, Link
from ...topology import Switch
from ...units import GB, MB, fmt_bytes, fmt_time
from ..names import display_name
from ..glue import not_glued
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style
from ..text import texts
from ..tables import Table
from .boxes import BOX_LINKS, link_name

T = texts("ch1")
__all__ = [
    "CHAPTER_STATED", "NM_1_4_LINK", "link_name", "FIG5_OPS", "FIG5_LABELS", "figure5_inputs",
    "figure5_runs", "fig5_text", "fig_primitives", "PRIMITIVE_ROWS", "Primitives", "primitives", "primitives_table",
]

NM_1_4_LINK = BOX_LINKS["nm1.4"]
"""Napkin Math 1.4's link: α = 3 µs (not Table 1's 2 µs midpoint), β = 50 GB/s."""


CHAPTER_STATED = {
    "naive_ring_ratio": 500,        # Definition 1.3: "500× for N = 1024"
    "naive_ring_p": 1024,
    "nm14_sent_mb": 1.84,           # Napkin Math 1.4: "7 × 262.144 KB = 1.84 MB"
    "nm14_transfer_us": 8,          # "3 µs + 5 µs = 8 µs"
    "nm14_transfer_bw_us": 5,
    "nm14_serial_us": 56,           # "7 × 8 µs = 56 µs"
    "nm14_injection_us": 39.7,      # "α + total bytes sent/β = 39.7 µs"
    "fsdp_collectives_per_layer": 2,    # FSDP section: "2·N_L collectives per step"
    "ddp_collectives": 1,           # "... instead of 1"
}
"""The numbers the chapter states in §1.3, where the page compares them with its own."""

LETTERS = "abcd"
SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"

# ============================================================================ Figure 5
FIG5_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
"""The four panels of Figure 5, in reading order."""

FIG5_LABELS: dict[str, dict[str, str]] = T.labels("primitives.fig5.")
"""Figure 5's words in both languages."""

OPERATOR = {"all_reduce": "all-reduce Σ", "all_gather": "all-gather ⊞",
            "reduce_scatter": "reduce-scatter Σ", "all_to_all": "all-to-all ⇄"}


def figure5_inputs() -> dict[str, list[np.ndarray]]:
    """The inputs of Figure 5's four panels on ranks G0–G3 (int64).

    * all-reduce: G_i holds [i + 1], i.e. [1], [2], [3], [4];
    * all-gather: G_i holds one shard, the letter a, b, c, d (stored as its index 0–3);
    * reduce-scatter: G_i holds [a_i, b_i, c_i, d_i] = (i + 1)·[1, 10, 100, 1000], so the
      sums Σa, Σb, Σc, Σd are 10, 100, 1000, 10000;
    * all-to-all: G_i holds [a_i, b_i, c_i, d_i], block j of rank i stored as 10·j + i
      (letter j, subscript i).
    """
    p = len(LETTERS)
    return {
        "all_reduce": [np.array([i + 1], dtype=np.int64) for i in range(p)],
        "all_gather": [np.array([i], dtype=np.int64) for i in range(p)],
        "reduce_scatter": [(i + 1) * 10 ** np.arange(p, dtype=np.int64) for i in range(p)],
        "all_to_all": [10 * np.arange(p, dtype=np.int64) + i for i in range(p)],
    }


def figure5_runs() -> dict[str, RunResult]:
    """The four collectives of Figure 5, each run with real data on a 4-GPU switch
    (the timing plays no part in the figure)."""
    cluster = VirtualCluster(Switch(len(LETTERS), NVLINK4_CHAPTER))
    return {op: getattr(coll, op)(cluster, x) for op, x in figure5_inputs().items()}


def fig5_text(op: str, value: int, rank: int, role: str) -> str:
    """The text of one cell of Figure 5 (``role`` "in" or "out"), read from its value."""
    v = int(value)
    if op == "all_reduce":
        return str(v)
    if op == "all_gather":
        return LETTERS[v]
    if op == "reduce_scatter":
        return str(v) if role == "in" else f"Σ{LETTERS[rank]} = {v}"
    if op == "all_to_all":
        return LETTERS[v // 10] + SUBSCRIPTS[v % 10]
    raise ValueError(f"Figure 5 has no panel {op!r}")


def _box(ax, x, y, w, h, text, edge, face, gid, weight="normal", size=SMALL_PT, color="0.1"):
    ax.add_patch(FancyBboxPatch((x, y - h / 2), w, h, boxstyle="round,pad=0,rounding_size=0.08",
                                ec=edge, fc=face, lw=1.1))
    ax.text(x + w / 2, y, text, ha="center", va="center", fontsize=size, fontweight=weight,
            color=color, gid=gid)


def fig_primitives(lang: str = "en") -> Figure:
    """Figure 5: all-reduce, all-gather, reduce-scatter and all-to-all on 4 ranks.

    Every "after" cell is a value of the simulator's ``outputs`` (:func:`figure5_runs`),
    written by :func:`fig5_text`; every "before" cell one of :func:`figure5_inputs`.
    Cell texts carry gids ``"<op>:in:<rank>:<j>"`` and ``"<op>:out:<rank>:<j>"``."""
    inputs, runs = figure5_inputs(), figure5_runs()
    blue, green, violet, orange = PALETTE[0], PALETTE[2], PALETTE[4], PALETTE[1]
    with book_style(lang) as lang:
        lab = FIG5_LABELS[lang]
        fig = Figure(figsize=(COLUMN_IN, 11.6))
        axes = fig.subplots(4, 1)  # one panel per row: each the column's width
        for ax, op in zip(axes, FIG5_OPS):
            ax.set_xlim(0, 14)
            ax.set_ylim(0.4, 7.2)
            ax.set_axis_off()
            ax.add_patch(FancyBboxPatch((0.05, 0.5), 13.9, 6.6, boxstyle="round,pad=0,rounding_size=0.25",
                                        ec="0.8", fc="0.975", lw=0.8, zorder=-2))
            out_edge, out_face = (violet, (0.8, 0.47, 0.65, 0.25)) if op == "all_to_all" else \
                (green, (0.0, 0.62, 0.45, 0.18))
            op_edge = violet if op == "all_to_all" else orange
            ax.text(0.35, 6.7, lab[op], ha="left", va="center", fontsize=11, fontweight="bold")
            ax.text(13.65, 6.7, lab[f"{op}_head"], ha="right", va="center", fontsize=SMALL_PT,
                    fontweight="bold", color=out_edge)
            ax.text(0.35, 6.15, lab[f"{op}_desc"], ha="left", va="center", fontsize=SMALL_PT, color="0.35")
            ys = [5.2, 4.3, 3.4, 2.5]
            y_op = sum(ys) / len(ys)
            outs = runs[op].outputs
            x_op, w_op = 5.3, 3.6
            for r, (x_in, x_out, y) in enumerate(zip(inputs[op], outs, ys)):
                ax.text(0.3, y, f"G{r}", ha="left", va="center", fontsize=SMALL_PT, color="0.25")
                w = 0.95
                for j, v in enumerate(np.ravel(x_in)):
                    _box(ax, 1.0 + j * w, y, w * 0.92, 0.7, fig5_text(op, v, r, "in"), blue, "white",
                         f"{op}:in:{r}:{j}")
                x_end = 1.0 + len(np.ravel(x_in)) * w
                ax.plot([x_end, x_op], [y, y_op + (1.5 - r) * 0.12], color=blue, lw=0.8)
                wo = 2.6 if op == "reduce_scatter" else 0.95
                for j, v in enumerate(np.ravel(x_out)):
                    _box(ax, 9.8 + j * wo, y, wo * 0.92, 0.7, fig5_text(op, v, r, "out"), out_edge,
                         out_face, f"{op}:out:{r}:{j}", weight="bold")
                ax.annotate("", (9.75, y), (x_op + w_op, y_op),
                            arrowprops=dict(arrowstyle="-|>", color=out_edge, lw=0.9))
            _box(ax, x_op, y_op, w_op, 0.95, OPERATOR[op], op_edge, (1, 1, 1, 1) if op == "all_to_all"
                 else (0.9, 0.62, 0.0, 0.15), f"{op}:op", weight="bold", size=10, color=op_edge)
            ax.text(7.0, 1.35, lab["use"] + lab[f"{op}_use"], ha="center", va="center", fontsize=SMALL_PT)
        fig.suptitle(lab["title"], fontsize=12)
        fig.supxlabel(lab["key"], fontsize=SMALL_PT, color="0.3")
    return fig


# ============================================================================ six primitives
@dataclass(frozen=True)
class _Prim:
    collective: str
    algorithm: str
    formula: str


PRIMITIVE_ROWS: tuple[_Prim, ...] = (
    _Prim("broadcast", "binomial", "⌈log₂N⌉(α + M/β)"),
    _Prim("broadcast", "scatter_allgather", "Nα + 2(N−1)/N·M/β"),
    _Prim("reduce", "binomial", "⌈log₂N⌉(α + M/β)"),
    _Prim("all_reduce", "ring", "2(N−1)α + 2(N−1)/N·M/β"),
    _Prim("all_reduce", "tree", "2⌈log₂N⌉(α + M/β)"),
    _Prim("all_gather", "ring", "(N−1)α + (N−1)/N·M/β"),
    _Prim("reduce_scatter", "ring", "(N−1)α + (N−1)/N·M/β"),
    _Prim("all_to_all", "direct", "(N−1)α + (N−1)/N·M/β"),
)
"""The algorithms the six-primitive table prices: the tree and the bandwidth-efficient
form for broadcast and all-reduce, the ring for the others, the direct shift exchange
for all-to-all."""

_PRIM_TEXT = T.labels("primitives.prim.")


@dataclass(frozen=True)
class Primitives:
    """:func:`primitives`: the setting (``p`` ranks, ``n_bytes``, ``levels`` = ⌈log₂p⌉ of a
    binomial tree), the five times the prose reads, and every row's time in ``times``
    ((collective, algorithm) → s); ``link`` is an attribute, not a field."""

    p: int
    n_bytes: float
    bc_tree_s: float
    bc_sag_s: float
    ar_ring_s: float
    ar_tree_s: float
    ag_ring_s: float
    levels: int
    times: dict = field(repr=False)
    link: Link = not_glued()


def primitives(p: int = 64, n: float = 100 * MB, link: Link = IB_NDR_CHAPTER) -> Primitives:
    """The time of each algorithm of :data:`PRIMITIVE_ROWS` for ``p`` ranks, ``n`` bytes and
    ``link`` (:func:`commbook.collectives.predict`).

    >>> primitives().levels
    6
    """
    t = {(r.collective, r.algorithm): predict(r.collective, r.algorithm, p, n, link.alpha, link.beta)
         for r in PRIMITIVE_ROWS}
    return Primitives(p, n, t["broadcast", "binomial"], t["broadcast", "scatter_allgather"], t["all_reduce", "ring"],
                      t["all_reduce", "tree"], t["all_gather", "ring"], math.ceil(math.log2(p)), t, link)


def primitives_table(prim: Primitives | None = None) -> Table:
    """The six primitives, narrowest first: what each computes, its main use, the closed
    form of the algorithms in :data:`PRIMITIVE_ROWS` and their time (:func:`primitives`)."""
    x = primitives() if prim is None else prim
    p, n, link = x.p, x.n_bytes, x.link
    rows = [{"prim": r.collective, "does": f"{r.collective}_does", "use": f"{r.collective}_use",
             "algo": f"{r.collective}:{r.algorithm}", "formula": r.formula, "time": x.times[r.collective, r.algorithm],
             "collective": r.collective, "algorithm": r.algorithm} for r in PRIMITIVE_ROWS]
    labels = {lang: dict(_PRIM_TEXT[lang]) for lang in ("en", "zh")}
    for lang in labels:
        for r in PRIMITIVE_ROWS:
            labels[lang][f"{r.collective}:{r.algorithm}"] = display_name(r.collective, r.algorithm, lang)
    size = fmt_bytes(n)
    return Table(
        key="ch1-primitives",
        title={lang: T.get("primitives.table_title", lang, p=p, size=size,
                           link=link.name if lang == "en" else link_name(link, lang), a=fmt_time(link.alpha),
                           b=f"{link.beta / GB:g} GB/s") for lang in ("en", "zh")},
        columns=["prim", "does", "use", "algo", "formula", "time"],
        headers={lang: text.split("|") for lang, text in T("primitives.table_heads").items()},
        rows=rows, formats={"time": lambda t: fmt_time(t, 3)}, labels=labels,
        notes=T.pairs("primitives.note_m", "primitives.note_times"),
    )
