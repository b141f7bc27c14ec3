"""Chapter §1.4, the figures: Figure 6 (the ring's two phases on 4 GPUs), the butterfly's
pairings round by round in both orders, and Figure 7 (ring, tree and double binary tree
against message size), each labelled in ``lang`` and drawn from simulator runs or closed
forms (:mod:`.allreduce_numbers`, :mod:`.allreduce_choice`).  Artists that carry data have a
``gid`` so that tests can read them back.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch, Rectangle

from ... import collectives as coll
from ...collectives import predict
from ...comm_sim import VirtualCluster
from ...topology import Switch
from ...units import GB, fmt_bytes, fmt_time
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from ..text import texts
from .allreduce_choice import ORDERS, Figure7, figure7_data
from .allreduce_numbers import EXAMPLE_1_1, ring_trace, trace_facts
from .boxes import BOX_LINKS

T = texts("ch1")
__all__ = ["FIG_LABELS", "fig_ring_phases", "butterfly_rounds", "fig_butterfly", "fig_crossover"]

SHARDS = "ABCDEFGH"
GREEN, BLUE, RED = PALETTE[2], PALETTE[0], PALETTE[3]

FIG_LABELS = T.labels("allreduce_figures.fig.")
"""Labels of the three figures."""


# ============================================================================ Figure 6
def _ring_panel(ax, states: list[np.ndarray], total: np.ndarray, phase: str, title: str, L: dict) -> None:
    """Four GPU boxes in a row with their shards (finished ones green, ``ΣX``), the ring's
    links left to right and the wrap-around link underneath."""
    p = len(states)
    width = 3.6
    for g, buf in enumerate(states):
        x0 = g * width
        ax.add_patch(FancyBboxPatch((x0, 0), 2.9, 1.6, boxstyle="round,pad=0.02,rounding_size=0.12",
                                    fc="white", ec=BLUE if phase == "rs" else GREEN, lw=1.2))
        ax.text(x0 + 1.45, 1.3, L["gpu"].format(g=g), ha="center", va="center", fontsize=SMALL_PT, weight="bold")
        for c, v in enumerate(buf):
            done = v == total[c]
            x = x0 + 0.2 + c * 0.65
            ax.add_patch(Rectangle((x, 0.25), 0.55, 0.7, fc=GREEN if done else "0.93",
                                   ec=GREEN if done else "0.7", lw=1.0, alpha=0.9 if done else 1.0))
            ax.text(x + 0.275, 0.6, ("Σ" if done else "") + SHARDS[c], ha="center", va="center", fontsize=SMALL_PT,
                    color="white" if done else "0.45", weight="bold" if done else "normal",
                    gid=f"shard:{phase}:{g}:{c}")
    color = BLUE if phase == "rs" else GREEN
    for g in range(p - 1):
        ax.add_patch(FancyArrowPatch((g * width + 2.95, 0.8), ((g + 1) * width - 0.05, 0.8), arrowstyle="-|>",
                                     mutation_scale=12, color=color, lw=1.6, gid=f"link:{phase}:{g}:{g + 1}"))
    last = (p - 1) * width + 1.45
    ax.plot([last, last, 1.45], [-0.05, -0.45, -0.45], color=color, lw=1.6)
    ax.add_patch(FancyArrowPatch((1.45, -0.45), (1.45, -0.05), arrowstyle="-|>", mutation_scale=12, color=color,
                                 lw=1.6, gid=f"link:{phase}:{p - 1}:0"))
    ax.text(last / 2 + 0.7, -0.62, L["wrap"].format(last=p - 1), ha="center", va="top", fontsize=SMALL_PT, color=color)
    ax.set_title(title, loc="left", fontsize=10)
    ax.set_xlim(-0.3, p * width - 0.4)
    ax.set_ylim(-1.0, 1.8)
    ax.set_axis_off()


def fig_ring_phases(lang: str = "en", data=EXAMPLE_1_1) -> Figure:
    """Figure 6: the ring all-reduce on ``len(data)`` GPUs after its reduce-scatter phase
    and after its all-gather phase, from the simulator's trace (Example 1.1's data).  A shard
    is green (``ΣX``) where the GPU holds the sum over all GPUs; shard texts have gid
    ``"shard:<rs|ag>:<gpu>:<chunk>"``, links ``"link:<phase>:<from>:<to>"``, the footer
    ``"foot"``."""
    res = ring_trace(data)
    facts = trace_facts(res, data)
    total = np.sum(np.asarray(data), axis=0)
    rs = facts.rs
    after = {"rs": [s[0] for s in res.trace[rs - 1].state], "ag": [s[0] for s in res.trace[-1].state]}
    p = facts.p
    with book_style(lang) as lang:
        L = FIG_LABELS[lang]
        fig = Figure(figsize=(COLUMN_IN, 6.6))
        axes = fig.subplots(2, 1, height_ratios=(2.8, 3.5))
        for ax, phase in zip(axes, ("rs", "ag")):
            _ring_panel(ax, after[phase], total, phase, L[phase].format(k=getattr(facts, phase)), L)
        sent = max(facts.sent_bytes) / (len(data[0]) * res.outputs[0].itemsize)     # in units of M
        links = {len(set(zip(s.round.src.tolist(), s.round.dst.tolist()))) for s in res.trace}
        axes[1].text(p * 1.8 - 0.35, -1.25, L["foot"].format(sent=f"{sent:g}", steps=facts.rounds,
                                                           links="/".join(map(str, sorted(links)))),
                     ha="center", va="top", fontsize=SMALL_PT, color="0.25", gid="foot")
        axes[1].set_ylim(-1.7, 1.8)
        fig.suptitle(L["key"], x=0.99, ha="right", fontsize=SMALL_PT, color=GREEN)  # a row of its own
    return fig


# ============================================================================ butterfly
def butterfly_rounds(p: int = 8, order: str = "near_first", gpus_per_node: int = 4) -> list[dict]:
    """Each round of Rabenseifner's all-reduce on ``p`` ranks in ``order`` (a size-only run
    of 1 byte per rank on a switch): its phase, the pairs that exchange, the share of the
    buffer each message carries and whether the pairs cross a node of ``gpus_per_node``."""
    res = coll.all_reduce(VirtualCluster(Switch(p, BOX_LINKS["cp1.3"])), nbytes=1.0, algorithm="rabenseifner",
                          order=order, trace=True)
    out = []
    for st in res.trace:
        r = st.round
        pairs = sorted({(min(s, d), max(s, d)) for s, d in zip(r.src.tolist(), r.dst.tolist()) if s != d})
        share = set(np.round(r.count.astype(float), 12).tolist())
        if len(share) != 1:
            raise ValueError("a butterfly round with messages of different sizes")
        out.append({"phase": "rs" if r.reduce.all() else "ag", "pairs": pairs, "share": share.pop(),
                    "cross": all(a // gpus_per_node != b // gpus_per_node for a, b in pairs)})
    return out


def fig_butterfly(lang: str = "en", p: int = 8, gpus_per_node: int = 4) -> Figure:
    """The butterfly's pairings on ``p`` GPUs in two nodes, both orders side by side: one
    column per round, a vertical line for every pair (red where it crosses the node
    boundary), the share of M each message carries on top.  Pair lines have gid
    ``"pair:<order>:<round>:<a>:<b>"``, the share texts ``"share:<order>:<round>"``."""
    with book_style(lang) as lang:
        L = FIG_LABELS[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.6))
        axes = fig.subplots(2, 1, sharex=True)  # stacked: each panel the column's width
        for ax, order, tag in zip(axes, ORDERS, "ab"):
            rounds = butterfly_rounds(p, order, gpus_per_node)
            count = {"rs": 0, "ag": 0}
            for r, rnd in enumerate(rounds, start=1):
                count[rnd["phase"]] += 1
                m = len(rnd["pairs"])
                for j, (a, b) in enumerate(rnd["pairs"]):
                    x = r + (j - (m - 1) / 2) * 0.13
                    ax.plot([x, x], [a, b], color=RED if rnd["cross"] else BLUE, lw=1.8, marker="o", ms=3.5,
                            gid=f"pair:{order}:{r}:{a}:{b}")
                share = f"M/{round(1 / rnd['share'])}"
                ax.text(r, -0.9, share, ha="center", va="center", fontsize=SMALL_PT, gid=f"share:{order}:{r}")
                ax.text(r, p - 0.2, L["round"].format(phase=L[f"{rnd['phase']}_short"], r=count[rnd["phase"]]),
                        ha="center", va="center", fontsize=SMALL_PT)
            for j in range(1, p // gpus_per_node):
                ax.axhline(j * gpus_per_node - 0.5, color="0.4", ls="--", lw=1.0)
            ax.text(len(rounds) + 0.55, gpus_per_node - 0.5, L["boundary"], ha="right", va="bottom", fontsize=SMALL_PT,
                    color="0.35")
            ax.set_xlim(0.4, len(rounds) + 0.6)
            ax.set_ylim(p - 0.5 + 0.3, -1.3)
            ax.set_xticks([])
            ax.set_yticks(range(p), [f"GPU {g}" for g in range(p)], fontsize=SMALL_PT)
            ax.grid(False)
            for side in ("top", "right", "bottom"):
                ax.spines[side].set_visible(False)
            ax.set_title(L["bf_title"].format(tag=tag, order=L[order]), loc="left", fontsize=SMALL_PT)
        handles = [axes[0].plot([], [], color=c, lw=1.8, label=L[k])[0] for c, k in ((RED, "cross"), (BLUE, "local"))]
        fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=SMALL_PT)
    return fig


# ============================================================================ Figure 7
def fig_crossover(lang: str = "en", data: Figure7 | None = None) -> Figure:
    """Figure 7: ring, binomial tree, the chapter's double-tree formula (an envelope) and the
    pipelined double binary tree at its best chunk count, against the message size
    (:func:`.allreduce_choice.figure7_data`).  Curves have gid ``"curve:<name>"`` (x in bytes,
    y in seconds), the crossover markers ``"xover:<tree|double_tree|envelope>"``."""
    d = figure7_data() if data is None else data
    rows, p = d.rows, d.p
    x = np.array([r.n_bytes for r in rows])
    styles = {"ring": (PALETTE[0], "-"), "tree": (PALETTE[1], "-"), "envelope": ("0.35", "--"),
              "double_tree": (PALETTE[2], "-")}
    with book_style(lang) as lang:
        L = FIG_LABELS[lang]
        fig = Figure(figsize=(COLUMN_IN, 5.0))
        ax = fig.subplots()
        for name, (color, ls) in styles.items():
            ax.plot(x, [getattr(r, f"{name}_s") for r in rows], color=color, ls=ls, lw=1.8, label=L[name],
                    gid=f"curve:{name}")
        marks = {"tree": ("x_tree", PALETTE[1], (-8, 14)), "double_tree": ("x_dtree", PALETTE[2], (60, -44)),
                 "envelope": ("x_env", "0.35", (-60, 10))}
        for key, (lab, color, off) in marks.items():
            n = getattr(d, f"{lab}_bytes")
            if not x[0] <= n <= x[-1]:
                continue
            t = predict("all_reduce", "ring", p, n, d.alpha_s, d.beta_Bps)
            ax.plot([n], [t], marker="o", ms=6, mfc="white", mec=color, mew=1.6, ls="none", gid=f"xover:{key}")
            ax.annotate(L[lab].format(n=fmt_bytes(n)), (n, t), textcoords="offset points", xytext=off,
                        ha="right", fontsize=SMALL_PT, color=color)
        log_axis(ax, "x", "bytes")
        log_axis(ax, "y", "time")
        ax.set_xlabel(L["size_axis"])
        ax.set_ylabel(L["time_axis"])
        ax.set_title(L["fig7_title"].format(p=p, a=fmt_time(d.alpha_s, 3), b=f"{d.beta_Bps / GB:g} GB/s",
                                            gbps=f"{d.beta_Bps * 8 / 1e9:g}"), fontsize=10)
        ax.legend(loc="upper left", fontsize=SMALL_PT)
    return fig
