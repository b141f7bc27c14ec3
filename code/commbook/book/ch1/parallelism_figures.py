r"""Chapter "Collective communication", purpose page and §1.1: Figures 1 and 2, with
the numbers (:mod:`.parallelism_numbers`, :mod:`.parallelism_step`) and tables (:mod:`.parallelism_tables`) re-exported, so that a
page imports one module.

* Figure 1 (:func:`fig_energy`): energy per bit of SRAM, HBM, NVLink and InfiniBand on a
  true log axis, the values the chapter draws next to the ranges of the sources in
  :data:`commbook.physics.ENERGY` (NVLink's 100 and InfiniBand's 1,000 pJ/bit lie far above
  them).
* Figure 2 (:func:`fig_step_shares`): the shares of a training step that go to compute,
  to exposed communication and to the stall on the last layer's all-reduce, from the
  model :class:`~.parallelism_step.StepModel`, drawn beside the chapter's illustrative
  shares.

Figure text lives in :data:`FIG_LABELS` (one dict per language), not in book/labels.py.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from matplotlib.figure import Figure

from ... import physics
from ...checks import check_p
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from ..text import texts
from .inputs import CHAPTER_ENERGY_ESTIMATE
from .parallelism_numbers import *  # noqa: F401,F403 (re-exported for the pages)
from .parallelism_numbers import __all__ as _numbers_all
from .parallelism_step import *  # noqa: F401,F403
from .parallelism_step import FIG2_MODEL, FIG2_SIZES, ILLUSTRATIVE_SHARES, StepModel, step_breakdown
from .parallelism_step import __all__ as _step_all
from .parallelism_tables import *  # noqa: F401,F403
from .parallelism_tables import __all__ as _tables_all

T = texts("ch1")
__all__ = ["FIG_LABELS", "fig_label", "ENERGY_ORDER", "fig_energy", "fig_step_shares",
           *_numbers_all, *_step_all, *_tables_all]

# ============================================================================ labels
FIG_LABELS: dict[str, dict[str, str]] = T.labels("parallelism_figures.fig.")
"""Figure text of this module in each language (kept here, not in book/labels.py)."""


def fig_label(key: str, lang: str, **fields: object) -> str:
    """Label ``key`` of :data:`FIG_LABELS` in ``lang``, with ``{field}`` placeholders filled."""
    text = FIG_LABELS[lang][key]
    return text.format(**fields) if fields else text


# ============================================================================ Figure 1
ENERGY_ORDER = ("SRAM", "HBM", "NVLink", "IB")
"""The tiers of Figure 1, nearest first (keys of :data:`commbook.physics.ENERGY`)."""
def fig_energy(lang: str = "en", estimate_pj: float | None = None) -> Figure:
    """Figure 1: energy per bit of the four tiers on a true log axis.

    Each tier (nearest at the top) shows the published range of
    :data:`commbook.physics.ENERGY` as a thick bar (gid ``"range:<tier>"``, x data =
    ``(low_pj, high_pj)``) and the value the chapter draws as a diamond (gid
    ``"value:<tier>"``, x data = ``(figure_pj,)``), annotated with its ratio to SRAM; a
    tier whose value lies outside its range says by how much.  A dashed vertical line
    (gid ``"estimate"``) marks the pJ/bit of the all-reduce energy estimate.
    """
    pj_est = CHAPTER_ENERGY_ESTIMATE["pj_per_bit"] if estimate_pj is None else estimate_pj
    tiers = [physics.ENERGY[k] for k in ENERGY_ORDER]
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 4.4))
        ax = fig.add_subplot()
        ys = np.arange(len(tiers))[::-1]
        for k, t, y in zip(ENERGY_ORDER, tiers, ys):
            ax.plot([t.low_pj, t.high_pj], [y, y], lw=11, solid_capstyle="butt", color=PALETTE[5],
                    alpha=0.55, gid=f"range:{k}",
                    label=fig_label("energy_range", lang) if k == ENERGY_ORDER[0] else None)
            ax.plot([t.figure_pj], [y], marker="D", ms=8, ls="none", color=PALETTE[3],
                    markeredgecolor="white", gid=f"value:{k}",
                    label=fig_label("energy_value", lang) if k == ENERGY_ORDER[0] else None)
            ratio = physics.energy_ratio(k)
            text = fig_label("energy_ratio", lang, ratio=ratio) if k != "SRAM" else ""
            if t.figure_pj > t.high_pj:
                extra = fig_label("energy_outside", lang, times=t.figure_pj / t.high_pj)
                text = f"{text}\n{extra}" if text else extra
            if text:
                ax.annotate(text, (max(t.figure_pj, t.high_pj), y), xytext=(9, 0), textcoords="offset points",
                            va="center", fontsize=SMALL_PT, gid=f"note:{k}",
                            color=PALETTE[3] if t.figure_pj > t.high_pj else "0.2")
        ax.axvline(pj_est, color="0.35", lw=1, ls="--", gid="estimate",
                   label=fig_label("energy_estimate", lang, pj=pj_est))
        ax.set_yticks(ys, [fig_label(f"tier_{k}", lang) for k in ENERGY_ORDER])
        log_axis(ax, "x", "plain")
        ax.set_xlim(0.1, 2e4)
        ax.set_ylim(-0.7, len(tiers) - 0.3)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel(fig_label("energy_x", lang))
        ax.set_title(fig_label("energy_title", lang))
        ax.legend(loc="upper right", fontsize=SMALL_PT)
    return fig


_PARTS = ("compute", "comm", "stall")
_PART_COLORS = {"compute": PALETTE[0], "comm": PALETTE[1], "stall": PALETTE[3]}


def fig_step_shares(lang: str = "en", model: StepModel = FIG2_MODEL,
                    sizes: Sequence[int] = FIG2_SIZES) -> Figure:
    """Figure 2: stacked shares of one step (compute, exposed communication, stall) per
    cluster size, from :func:`step_breakdown`, with the illustrative shares of
    :data:`ILLUSTRATIVE_SHARES` beside them (hatched) where they exist.

    Bar segments have gid ``"model:<gpus>:<part>"`` and ``"illustrative:<gpus>:<part>"``
    (part: compute, comm, stall); heights are percentages.
    """
    sizes = [check_p(n, "gpus") for n in sizes]
    with book_style(lang) as lang:
        fig = Figure(figsize=(COLUMN_IN, 4.8))
        ax = fig.add_subplot()
        w = 0.36
        for i, n in enumerate(sizes):
            shares = step_breakdown(n, model).shares
            has_ill = n in ILLUSTRATIVE_SHARES
            x = i - w / 2 - 0.02 if has_ill else i
            bottom = 0.0
            for part in _PARTS:
                h = 100 * shares[part]
                ax.bar(x, h, w, bottom=bottom, color=_PART_COLORS[part], gid=f"model:{n}:{part}",
                       label=fig_label(part, lang) if i == 0 else None)
                bottom += h
            turn = 90 if lang == "en" else 0  # upright: side by side the English labels overlap
            ax.text(x, 101.5, fig_label("bar_model", lang), ha="center", va="bottom", fontsize=SMALL_PT,
                    rotation=turn)
            if has_ill:
                bottom = 0.0
                for part in _PARTS:
                    h = 100 * ILLUSTRATIVE_SHARES[n][part]
                    ax.bar(i + w / 2 + 0.02, h, w, bottom=bottom, color=_PART_COLORS[part], alpha=0.45,
                           hatch="//", edgecolor="white", gid=f"illustrative:{n}:{part}")
                    bottom += h
                ax.text(i + w / 2 + 0.02, 101.5, fig_label("bar_illustrative", lang), ha="center",
                        va="bottom", fontsize=SMALL_PT, rotation=turn)
        g = model.gpus_per_node
        ticks = [fig_label("gpus_node", lang, n=n) if n <= g else
                 fig_label("gpus_nodes", lang, n=n, nodes=n // g) for n in sizes]
        ax.set_xticks(range(len(sizes)), ticks, fontsize=SMALL_PT)
        ax.set_ylim(0, 140 if turn else 112)
        ax.set_yticks(range(0, 101, 20))
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(fig_label("shares_y", lang))
        ax.set_xlabel(fig_label("shares_x", lang))
        ax.set_title(fig_label("shares_title", lang))
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, fontsize=SMALL_PT)
    return fig
