"""Chapter §1.2, the figures: Figure 3 (the bandwidth gap), Figure 4 in two panels (the
overlap timelines) and the calibration figure, each labelled in ``lang`` and drawn from the
numbers of :mod:`.perf_numbers` and :mod:`.perf_calibration`.  Artists that carry data have a
``gid`` so that tests can read them back.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from ... import physics
from ...bandwidth import busbw
from ...collectives import t_formula
from ...cost import p2p_time
from ...overlap import Timeline
from ...units import GB, fmt_rate, fmt_ratio, fmt_time, us
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from ..text import texts
from .perf_calibration import Calibration, calibration
from .boxes import link_name
from .perf_numbers import FIG4, NM13, figure4_timelines, gap_ratios

T = texts("ch1")
__all__ = ["fig_bandwidth_gap", "fig_overlap", "fig_calibration"]

_LAB = T.labels("perf_figures.fig.")

_FAMILY_COLOR = {"PCIe": PALETTE[0], "NVLink": PALETTE[2], "InfiniBand": PALETTE[3]}

def fig_bandwidth_gap(lang: str = "en") -> Figure:
    """Figure 3: (a) one-direction bandwidth of each generation against its year, one line per
    family (gid ``"gen:<family>"``, points ``"genpt:<name>"``); (b) the intra/inter ratios of
    :func:`gap_ratios` (gid ``"ratio:<family>"``, the DGX pairing ``"ratio:dgx"``) and the
    claimed ratio (``"claimed"``)."""
    ratios = gap_ratios()
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.6))
        ax, bx = fig.subplots(2, 1)  # stacked: each panel the column's width
        for fam in ("PCIe", "NVLink", "InfiniBand"):
            gens = sorted((g for g in physics.GENERATIONS.values() if g.family == fam), key=lambda g: g.year)
            x = [g.year for g in gens]
            y = [g.beta / GB for g in gens]
            ax.plot(x, y, marker="o", color=_FAMILY_COLOR[fam], label=fam, gid=f"gen:{fam}")
            for g in gens:
                ax.plot([g.year], [g.beta / GB], ls="none", marker="o", ms=0, gid=f"genpt:{g.name}")
                short = g.name.replace("PCIe ", "").replace(" x16", "").replace("NVLink ", "NVL ")
                ax.annotate(short, (g.year, g.beta / GB), textcoords="offset points", xytext=(4, -10),
                            fontsize=SMALL_PT, color=_FAMILY_COLOR[fam])
        log_axis(ax, "y", "plain", subs=(1.0, 2.0, 5.0))
        ax.set_xlabel(L["year"])
        ax.set_ylabel(L["beta"])
        ax.set_title(L["gap_a"])
        ax.legend(loc="upper left")

        for key, fam in (("pcie", "PCIe"), ("nvlink", "NVLink")):
            pairs = getattr(ratios, key)
            x = [physics.generation(a).year for a, _, _ in pairs]
            y = [r for *_, r in pairs]
            bx.plot(x, y, marker="o", color=_FAMILY_COLOR[fam], gid=f"ratio:{fam}",
                    label=L["pair_newest"].format(fam=fam))
            above = fam == "NVLink"
            for i, ((a, b, r), xi) in enumerate(zip(pairs, x)):
                short = a.replace("PCIe ", "").replace(" x16", "").replace("NVLink ", "NVL ")
                up = above and i < len(pairs) - 1          # the last NVLink label goes below its point
                bx.annotate(f"{fmt_ratio(r)}\n{short}/{b}", (xi, r), textcoords="offset points",
                            xytext=(0, 7 if up else -9), ha="center", va="bottom" if up else "top",
                            fontsize=SMALL_PT, color=_FAMILY_COLOR[fam])
        a, b, r = ratios.nvlink_dgx[-1]
        bx.plot([physics.generation(a).year], [r], marker="D", ls="none", mfc="white",
                color=_FAMILY_COLOR["NVLink"], gid="ratio:dgx", label=L["pair_dgx"])
        bx.annotate(f"{fmt_ratio(r)}\nNVL 5.0/{b}", (physics.generation(a).year, r), textcoords="offset points",
                    xytext=(-8, 0), ha="right", va="center", fontsize=SMALL_PT, color=_FAMILY_COLOR["NVLink"])
        bx.axhline(ratios.claim_x, color="0.4", ls="--", lw=1.0, gid="claimed",
                   label=L["claimed"].format(x=ratios.claim_x))
        log_axis(bx, "y", "plain", subs=(1.0, 2.0, 5.0))
        bx.set_ylim(0.6, 40)
        bx.set_xlim(2011, 2025)
        bx.set_xlabel(L["year"])
        bx.set_ylabel(L["ratio"])
        bx.set_title(L["gap_b"])
        bx.legend(loc="upper left", bbox_to_anchor=(0.0, -0.2))  # below: the labels fill the panel
    return fig



_KIND_COLOR = {"backward": PALETTE[1], "allreduce": PALETTE[4], "stall": PALETTE[3],
               "optimizer": PALETTE[0], "launch": "0.35", "complete": "0.35"}


def _block_text(block, L: dict, single: bool) -> str:
    layer = block.label.split()[-1]
    if block.kind == "backward":
        return L["next"] if single else L["backward"].format(l=layer)
    if block.kind == "allreduce":
        return L["wire"] if single else L["allreduce"].format(l=layer)
    return L[block.kind]


def _draw_timeline(ax, tl: Timeline, L: dict, scale: float, single: bool) -> None:
    rows = {"compute": 1.0, "network": 0.0}
    for blk in tl.blocks:
        if blk.kind == "idle":
            continue
        y = rows[blk.stream]
        x0, w = blk.start / scale, blk.duration / scale
        ax.add_patch(Rectangle((x0, y - 0.32), w, 0.64, facecolor=_KIND_COLOR[blk.kind], alpha=0.85,
                               edgecolor="white", lw=1.0,
                               gid=f"block:{blk.stream}:{blk.kind}:{blk.label}"))
        text = _block_text(blk, L, single)
        if text:
            ax.text(x0 + w / 2, y, text, ha="center", va="center", fontsize=SMALL_PT,
                    color="white" if blk.kind not in ("launch", "complete") else "white")
    end = tl.step_time / scale
    ax.axvline(end, color="0.2", ls=":", lw=1.0, gid="step_end")
    ax.set_xlim(0, end * 1.02)
    ax.set_ylim(-0.6, 1.6)
    ax.set_yticks([0, 1])
    ax.set_yticklabels([L["network"], L["compute"]])
    ax.grid(axis="y", visible=False)


def fig_overlap(lang: str = "en") -> Figure:
    """Figure 4 in two panels drawn from :func:`figure4_timelines`: every bar is a
    :class:`commbook.overlap.Block` (gid ``"block:<stream>:<kind>:<label>"``, x in the
    panel's unit: panel (a) in units of one backward block, panel (b) in µs); the dotted line
    ``"step_end"`` is the step time."""
    ta, tb = figure4_timelines()
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 5.6))
        ax, bx = fig.subplots(2, 1)
        _draw_timeline(ax, ta, L, 1.0, single=False)
        tail = ta.stall
        last_ar = max((b for b in ta.blocks if b.kind == "allreduce"), key=lambda b: b.start)
        ax.annotate(L["tail"].format(t=f"{tail:g}"), xy=(last_ar.start + tail / 2, 0.45), ha="center",
                    fontsize=SMALL_PT, color=_KIND_COLOR["stall"])
        ax.text(ta.step_time, 1.45, L["step"].format(t=f"{ta.step_time:g}"), ha="right", fontsize=SMALL_PT)
        ax.set_xlabel(L["time_units"].format(b=FIG4["backward"]))
        ax.set_title(L["ov_a"], loc="left")

        _draw_timeline(bx, tb, L, us, single=True)
        bx.text(tb.step_time / us, 1.45, L["step"].format(t=fmt_time(tb.step_time, 3)), ha="right", fontsize=SMALL_PT)
        wire = next(b for b in tb.blocks if b.kind == "allreduce")
        o_total = sum(b.duration for b in tb.blocks if b.kind in ("launch", "complete"))
        bx.text(wire.end / us + 8, -0.05, L["hidden"].format(t=fmt_time(wire.duration, 3)), va="center",
                fontsize=SMALL_PT, color=_KIND_COLOR["allreduce"])
        bx.text(tb.step_time / us * 0.5, 1.45, L["exposed"].format(t=f"2o = {fmt_time(o_total, 3)}"),
                ha="center", fontsize=SMALL_PT, color="0.3")
        bx.set_xlabel(L["time_us"])
        bx.set_title(L["ov_b"].format(t=fmt_time(NM13["backward"], 3)), loc="left")
    return fig


def fig_calibration(lang: str = "en", cal: Calibration | None = None) -> Figure:
    """(a) measured all-reduce times with the fitted ring closed form (gid ``"fit:ring"``), the
    fitted α + n/β (``"fit:p2p"``) and the nominal ring (``"nominal"``); points ``"measured"``.
    (b) bus bandwidth: measured (``"busbw:measured"``), of the fitted ring
    (``"busbw:ring"``), with the nominal and fitted β as lines (``"beta:nominal"``,
    ``"beta:fit"``)."""
    c = calibration() if cal is None else cal
    n, t, p, nom = c.sizes, c.times, c.p, c.nominal
    grid = np.logspace(np.log10(n.min()), np.log10(n.max()), 120)
    t_ring = np.array([t_formula("ring", p, x, c.alpha_s, c.beta_Bps) for x in grid])
    t_p2p = np.array([p2p_time(x, c.p2p_alpha_s, c.p2p_beta_Bps) for x in grid])
    t_nom = np.array([t_formula("ring", p, x, nom.alpha, nom.beta) for x in grid])
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.6))
        ax, bx = fig.subplots(2, 1)  # stacked: each panel the column's width
        meas = L["measured"].format(p=p, placement=c.placement.replace("_", "-"))
        ax.plot(n, t, "o", color="0.15", ms=5, label=meas, gid="measured")
        ax.plot(grid, t_ring, color=PALETTE[0], label=L["fit_ring"], gid="fit:ring")
        ax.plot(grid, t_p2p, color=PALETTE[1], ls="--", label=L["fit_p2p"], gid="fit:p2p")
        ax.plot(grid, t_nom, color=PALETTE[2], ls=":", label=L["nominal"].format(link=link_name(nom, lang)), gid="nominal")
        log_axis(ax, "x", "bytes")
        log_axis(ax, "y", "time")
        ax.set_xlabel(L["size"])
        ax.set_ylabel(L["time"])
        ax.set_title(L["cal_a"])
        ax.legend(loc="upper left", fontsize=SMALL_PT)

        bw_ring = np.array([busbw("all_reduce", x, y, p) for x, y in zip(grid, t_ring)]) / GB
        bx.plot(n, c.busbw / GB, "o", color="0.15", ms=5, label=meas, gid="busbw:measured")
        bx.plot(grid, bw_ring, color=PALETTE[0], label=L["fit_ring"], gid="busbw:ring")
        bx.axhline(nom.beta / GB, color=PALETTE[2], ls=":", gid="beta:nominal",
                   label=L["nominal_beta"].format(b=fmt_rate(nom.beta, 3)))
        bx.axhline(c.beta_Bps / GB, color=PALETTE[0], ls="-.", lw=1.0, gid="beta:fit",
                   label=L["fit_beta"].format(b=fmt_rate(c.beta_Bps, 3)))
        log_axis(bx, "x", "bytes")
        bx.set_ylim(0, max(c.beta_Bps, nom.beta) / GB * 1.15)
        bx.set_xlabel(L["size"])
        bx.set_ylabel(L["busbw"])
        bx.set_title(L["cal_b"])
        bx.legend(loc="lower right", fontsize=SMALL_PT)
    return fig
