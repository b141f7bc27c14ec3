"""Buffers drawn as cells: the six collectives before and after, and all-reduce
schedules round by round, read from the simulator's trace.

:func:`fig_allreduce_steps` runs an all-reduce with real integer data and
``trace=True`` (:func:`commbook.collectives.all_reduce`) and draws one panel per round:
an arrow for every message (from the sender's row to the receiver's), the sender's block
outlined, and every rank's buffer after the round, the received block filled (orange:
added, blue: copied).  Nothing is typed in: the arrows are the round's messages
(``Round.src``, ``dst``, ``soff``, ``count``) and the cells its ``TraceStep.state``.
:func:`fig_ring_trace` is the chapter's Example 1.1 drawn this way.

Artists carry gids for tests and readers: cell texts ``"state<k>:<rank>:<element>"``
(k = 0 is the input), arrows ``"msg:<k>:<src>:<dst>:<offset>:<count>"``, outlines
``"sent:<k>:<src>:<offset>:<count>"``.  Re-exported by :mod:`commbook.book.p5.figures`.
"""
from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from matplotlib.colors import to_rgba
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from ... import collectives as coll
from ...comm_sim import VirtualCluster
from ...hardware import NVLINK4
from ...topology import Switch
from ..names import display_name
from ..plots import COLUMN_IN, PALETTE, SMALL_PT, book_style, label
from ..text import texts
from .semantics import semantics

__all__ = ["fig_collectives", "fig_ring_trace", "fig_allreduce_steps"]

REDUCE_COLOR, COPY_COLOR = PALETTE[1], PALETTE[5]
LANE = 2.4
"""Width of the arrow lane left of each panel's cells (in cells)."""
MIN_CELL_IN, RANK_LABELS_IN = 0.24, 0.6
"""The smallest cell of a step diagram (inches: a two-digit number in 9.5 pt fits) and
the room for the rank names left of a row of panels: as many panels share a row as fit
the column (:data:`commbook.book.plots.COLUMN_IN`) at that size."""

EXAMPLE_1_1 = ([1, 5, 3, 7], [2, 6, 4, 8], [3, 7, 5, 9], [4, 8, 6, 10])
"""The chapter's Example 1.1: the four GPUs' inputs of the 4-GPU all-reduce."""

STEP_LABELS = {lang: {k: texts("p5").get(f"steps.{k}", lang) for k in ("title", "reduce", "copy", "arrow", "cols")}
               for lang in ("en", "zh")}
"""Labels of the step diagrams, read from ``book/texts/p5.toml`` (``steps.*``; the figure labels shared by
several figures live in :mod:`commbook.book.labels`)."""


# ============================================================================ cells
def _cell_grid(ax, x0: float, rows: Sequence[Sequence], color, gid: str = "cell",
               fontsize: float = SMALL_PT) -> None:
    """A grid of numbers, row i at y = -i, column j at x = x0 + j (cells 1 x 1).

    ``color(i, j, value)`` gives each cell's face colour; ``None`` values leave the
    cell empty.  Each text has gid ``f"{gid}:{i}:{j}"``."""
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if v is None:
                continue
            ax.add_patch(Rectangle((x0 + j - 0.5, -i - 0.5), 1, 1, facecolor=color(i, j, v),
                                   edgecolor="white", lw=1.0))
            ax.text(x0 + j, -i, f"{v:g}", ha="center", va="center", fontsize=fontsize,
                    gid=f"{gid}:{i}:{j}")


def _tint(c, a: float = 0.35):
    return to_rgba(c, a)


# ============================================================================ 2 collectives
def _origin_color(inputs: Sequence[np.ndarray]):
    """Cell colour: a tint of the device a value comes from; grey for values no device
    held (results of a reduction)."""
    origin = {int(v): d for d, arr in enumerate(inputs) for v in arr}
    return lambda i, j, v: _tint(PALETTE[origin[int(v)]]) if int(v) in origin else _tint("0.5")


def fig_collectives(lang: str = "en") -> Figure:
    """The six collectives on the lecture's 4-device example (device d holds
    [10d, 10d+1, 10d+2, 10d+3]): for each, the devices' buffers before and after.

    The "after" grids are the ``outputs`` of demo 02-1's real-data simulator runs
    (:func:`.semantics.semantics`: :func:`commbook.collectives.broadcast`, ``reduce``,
    ``all_reduce``, ``reduce_scatter``, ``all_gather``, ``all_to_all`` on a 4-GPU switch, root 0).
    Cell texts have gid ``"<collective>:<device>:<index>"``.
    """
    run = semantics(4)                                     # demo 02-1's runs, the input first
    x = run.outputs[0][1]
    runs = dict(zip(("broadcast", "reduce", "all_reduce", "reduce_scatter", "all_gather", "all_to_all"),
                    (bufs for _, bufs in run.outputs[1:])))
    p, width = len(x), max(len(o) for outs in runs.values() for o in outs if o is not None)
    color = _origin_color(x)
    x_after, mid = p + 6, -(p - 1) / 2
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 8.8))
        axes = fig.subplots(len(runs), 1)
        for ax, (name, outs) in zip(axes, runs.items()):
            after = [[None] if o is None else o for o in outs]
            _cell_grid(ax, 0, x, color, gid=f"before:{name}")
            _cell_grid(ax, x_after, after, color, gid=name)
            ax.annotate("", (x_after - 0.8, mid), (p - 0.2, mid),
                        arrowprops=dict(arrowstyle="-|>", color="0.3", lw=1.2))
            ax.text((p + x_after) / 2 - 0.5, mid + 0.25, label(f"coll_{name}", lang), ha="center",
                    va="bottom", fontsize=SMALL_PT, gid=f"name:{name}")
            for d in range(p):
                ax.text(-0.8, -d, f"d{d}", ha="right", va="center", fontsize=SMALL_PT)
            ax.set_xlim(-1.6, x_after + width - 0.4)
            ax.set_ylim(-p + 0.4, 0.6)
            ax.set_axis_off()
        for x0, key in ((0, "before"), (x_after, "after")):
            axes[0].text(x0 + (p - 1) / 2, 0.7, label(key, lang), ha="center", va="bottom", fontsize=SMALL_PT)
        fig.suptitle(label("coll_title", lang), fontsize=11)
        fig.supxlabel(label("coll_key", lang), fontsize=SMALL_PT, color="0.3")
    return fig



# ============================================================================ step diagrams
def _trace(algorithm: str, data: Sequence[Sequence[int]]):
    """The inputs as int64 arrays and the all-reduce run with its trace, on a switch of
    NVLink GPUs (the timing plays no part in the drawing)."""
    arrays = [np.asarray(a, dtype=np.int64) for a in data]
    if not arrays or any(a.ndim != 1 or a.size != arrays[0].size for a in arrays):
        raise ValueError("data must be one 1-D list of numbers per rank, all of the same length")
    res = coll.all_reduce(VirtualCluster(Switch(len(arrays), NVLINK4)), arrays, algorithm=algorithm,
                          trace=True)
    for k, step in enumerate(res.trace, start=1):
        if step.round.sbuf.any() or step.round.dbuf.any():
            raise ValueError(f"round {k} of {algorithm!r} uses a scratch buffer; the step diagram "
                             "draws schedules that work in place (ring, rd, rabenseifner, tree)")
    return arrays, res


def _step_panel(ax, k: int, state: list[list], rnd, title: str, rank_labels: bool = True) -> None:
    """Panel k: the buffers after round k (rows = ranks), the blocks received filled, the
    blocks sent outlined, and one arrow per message across the lane on the left; the
    ranks are named on the left of the panel when ``rank_labels``."""
    q, w = len(state), len(state[0])
    fill = {}
    if rnd is not None:
        for s, d, so, do, c, red in zip(rnd.src.tolist(), rnd.dst.tolist(), rnd.soff.tolist(),
                                        rnd.doff.tolist(), rnd.count.tolist(), rnd.reduce.tolist()):
            for j in range(do, do + c):
                fill[(d, j)] = REDUCE_COLOR if red else COPY_COLOR
            ax.add_patch(Rectangle((so - 0.5, -s - 0.5), c, 1, fill=False, ec="0.15", lw=1.6,
                                   zorder=3, gid=f"sent:{k}:{s}:{so}:{c}"))
            ax.add_patch(FancyArrowPatch((-LANE - 0.5, -s), (-0.6, -d), arrowstyle="-|>",
                                         mutation_scale=8, color="0.25", lw=0.9, shrinkA=0,
                                         shrinkB=0, zorder=2, gid=f"msg:{k}:{s}:{d}:{so}:{c}"))
    _cell_grid(ax, 0, state, lambda i, j, v: _tint(fill.get((i, j), "0.85"), 0.55 if (i, j) in fill else 0.4),
               gid=f"state{k}", fontsize=SMALL_PT)
    ax.set_xlim(-LANE - 0.6, w - 0.4)
    ax.set_ylim(-q + 0.4, 0.6)
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks([-i for i in range(q)], [f"GPU {i}" for i in range(q)] if rank_labels else [])
    ax.tick_params(length=0, labelsize=SMALL_PT, pad=1)
    ax.grid(False)
    for side in ax.spines.values():
        side.set_visible(False)
    ax.set_title(title, fontsize=SMALL_PT)


def fig_allreduce_steps(lang: str = "en", algorithm: str = "rd",
                        data: Sequence[Sequence[int]] = EXAMPLE_1_1, title: str | None = None,
                        ncol: int | None = None) -> Figure:
    """An all-reduce (``algorithm``: a name of the registry that works in place, e.g.
    ``"rd"``, ``"rabenseifner"``, ``"tree"``, ``"ring"``) on ``len(data)`` ranks holding
    the integers ``data``, drawn round by round from the simulator's trace.

    Panel 0 is the input; panel k the buffers after round k, with an arrow from the
    sender's row to the receiver's row for every message of the round, the block sent
    outlined in the sender's row and the block received filled in the receiver's row
    (orange: added, blue: copied).  The last panel holds the sum on every rank.  ``title``
    replaces the default title; ``ncol`` sets the panels per row (default: as many as fit
    the column, :data:`~commbook.book.plots.COLUMN_IN`, with cells of at least
    :data:`MIN_CELL_IN`: three for four elements per rank).
    """
    arrays, res = _trace(algorithm, data)
    states = [[a.tolist() for a in arrays]] + [[b[0].tolist() for b in st.state] for st in res.trace]
    rounds = [None] + [st.round for st in res.trace]
    n = len(states)
    q, w = len(arrays), arrays[0].size
    span = w + LANE + 0.6  # a panel's width in cells: lane, cells, margin
    ncol = ncol or min(n, max(1, int((COLUMN_IN - RANK_LABELS_IN) / (MIN_CELL_IN * span))))
    nrow = math.ceil(n / ncol)
    cell = min(0.36, (COLUMN_IN - RANK_LABELS_IN) / (ncol * span))  # inches
    with book_style(lang) as lang:
        text = STEP_LABELS[lang]
        fig = Figure(figsize=(RANK_LABELS_IN + ncol * cell * span, nrow * cell * (q + 1.6) + 1.7))
        axes = np.atleast_1d(fig.subplots(nrow, ncol)).ravel()
        for k, (ax, state, rnd) in enumerate(zip(axes, states, rounds)):
            head = (label("trace_initial", lang) if rnd is None else
                    text["reduce" if rnd.reduce.any() else "copy"].format(r=k))
            _step_panel(ax, k, state, rnd, head, rank_labels=k % ncol == 0)
        for ax in axes[n:]:
            ax.set_axis_off()
        kinds = {bool(r.reduce.any()) for r in rounds[1:]}       # the fills that occur
        keys = [Patch(color=_tint(c, 0.55), label=label(key, lang)) for red, c, key in
                ((True, REDUCE_COLOR, "trace_key_reduce"), (False, COPY_COLOR, "trace_key_copy"))
                if red in kinds]
        keys += [Patch(fill=False, ec="0.15", lw=1.6, label=label("trace_key_sent", lang)),
                 Line2D([], [], color="0.25", lw=0.9, marker=">", markevery=[-1], label=text["arrow"])]
        fig.legend(handles=keys, loc="outside lower center", ncol=2,
                   title=text["cols"].format(last=w - 1))
        if title is None:
            title = text["title"].format(algo=display_name("all_reduce", algorithm, lang), p=q)
            title = title[0].upper() + title[1:]
        fig.suptitle(title, fontsize=11)
    return fig


def fig_ring_trace(lang: str = "en", data: Sequence[Sequence[int]] = EXAMPLE_1_1) -> Figure:
    """The chapter's Example 1.1: a 4-GPU ring all-reduce, the input and then 3
    reduce-scatter and 3 all-gather rounds (:func:`fig_allreduce_steps` with ``"ring"``,
    four panels per row)."""
    with book_style(lang) as used:
        title = label("trace_title", used)
    return fig_allreduce_steps(lang, "ring", data, title=title, ncol=4)
