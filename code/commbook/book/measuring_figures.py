"""Figures of the page "Measuring collectives" and of P5 §5.6, drawn from the recorded data
(:mod:`.measuring`) and labelled in ``lang``.  Every artist that carries data has a ``gid``
so that tests can read the dots back and compare them with the files.
"""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import LogLocator

from ..bandwidth import busbw
from ..collectives import predict
from ..units import GB, fmt_rate
from .measuring import GLOO_FIT_MAX, GLOO_P, coll_name, curve, fit_curve, system_name, wire_rate
from .plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from .text import texts

__all__ = ["PANELS", "fit_busbw", "fig_model_vs_measured", "fig_gloo_noise", "fig_p5_curve"]

_LAB = texts("measure").labels("measuring_figures.")
"""The labels, by language, from book/texts/measure.toml (measuring_figures.*)."""

PANELS: tuple[tuple[str, tuple[str, ...], int | None], ...] = (
    ("h100", ("all_reduce",), None), ("h100", ("all_gather",), None), ("h100", ("reduce_scatter",), None),
    ("azure", ("all_reduce",), None), ("a100", ("all_reduce",), None),
    ("gloo16", ("all_reduce", "all_gather", "reduce_scatter"), 4),
)
"""The panels of :func:`fig_model_vs_measured`: system, collectives, p (gloo only)."""


def fit_busbw(c, grid: np.ndarray) -> np.ndarray:
    """Bus bandwidth (B/s) of the curve's ring fit (:func:`.measuring.fit_curve`) at ``grid``."""
    f = fit_curve(c)
    return np.array([busbw(c.collective, x, predict(c.collective, "ring", c.p, x, f.alpha, f.beta), c.p)
                     for x in grid])


def fig_model_vs_measured(lang: str = "en", predicted: dict | None = None) -> Figure:
    """Bus bandwidth against size, one panel per entry of :data:`PANELS`: measured dots
    (gid ``"measured:<collective>"``), the ring fit over the fitted sizes (``"fit:<collective>"``),
    the NCCL-style predictor where ``predicted`` has ``(system, collective) → Prediction``
    (``"nccl:<collective>"``), and the NVLink rate (``"wire"``); gloo points above
    :data:`.measuring.GLOO_FIT_MAX` are drawn open (``"outside:<collective>"``)."""
    predicted = predicted or {}
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 9.6))
        axes = fig.subplots(3, 2).ravel()  # two per row: each panel half the column
        for k, (ax, (system, ops, p)) in enumerate(zip(axes, PANELS)):
            for j, op in enumerate(ops):
                c = curve(system, op, p)
                colour = "0.15" if len(ops) == 1 else PALETTE[j + 3]
                tag = "" if len(ops) == 1 else f" · {coll_name(op)}"
                inside = c.sizes <= (GLOO_FIT_MAX if p else np.inf)
                ax.plot(c.sizes[inside], c.busbw[inside] / GB, "o", ms=4, color=colour,
                        label=L["measured"] + tag, gid=f"measured:{op}")
                if not inside.all():
                    ax.plot(c.sizes[~inside], c.busbw[~inside] / GB, "o", ms=4, mfc="none", color=colour,
                            label=L["not_fitted"].format(n=f"{GLOO_FIT_MAX / 2 ** 20:g} MiB") if j == 0 else None,
                            gid=f"outside:{op}")
                grid = np.logspace(np.log10(c.sizes[inside].min()), np.log10(c.sizes[inside].max()), 100)
                ax.plot(grid, fit_busbw(c, grid) / GB, color=PALETTE[0] if len(ops) == 1 else colour,
                        lw=1.4, label=L["fit"] if j == 0 else None, gid=f"fit:{op}")
                if (system, op) in predicted:
                    pr = predicted[(system, op)]
                    ax.plot(pr.sizes, pr.busbw / GB, color=PALETTE[1], ls="--", lw=1.4,
                            label=L["nccl"], gid=f"nccl:{op}")
            wire = wire_rate(system)
            if wire is not None:
                ax.axhline(wire / GB, color=PALETTE[2], ls=":", lw=1.2, label=L["wire"].format(b=fmt_rate(wire, 3)),
                           gid="wire")
            log_axis(ax, "x", "bytes")
            ax.xaxis.set_major_locator(LogLocator(base=10, numticks=4))  # half the column: 4 labels
            if c.busbw.max() / c.busbw.min() > 100:      # many decades: log busbw, or the small sizes vanish
                log_axis(ax, "y", "plain")
            else:
                ax.set_ylim(bottom=0)
            letter = "abcdef"[k]
            what = coll_name(ops[0]) if len(ops) == 1 else L["p"].format(p=p)
            ax.set_title(f"({letter}) {system_name(system, lang)}\n{what}", fontsize=SMALL_PT)
            ax.set_xlabel(L["size"])
            if k % 2 == 0:
                ax.set_ylabel(L["busbw"])
            ax.legend(loc="best")
    return fig


def fig_gloo_noise(lang: str = "en", collective: str = "all_reduce") -> Figure:
    """gloo ``collective`` time per call against size on both machines: the median of the
    five repeats (gid ``"median:<system>:p<p>"``) and the fastest-to-slowest range
    (``"range:<system>:p<p>"``, a vertical segment per size)."""
    from .measuring import gloo_repeats

    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.4))
        axes = fig.subplots(2, 1, sharey=True)  # stacked: each panel the column's width
        for ax, system, title in zip(axes, ("gloo16", "gloo2"), (L["noise_a"], L["noise_b"])):
            for j, p in enumerate(GLOO_P):
                c = curve(system, collective, p)
                rep = gloo_repeats(system, p, collective)
                shift = 1.0 + 0.06 * (j - 1)            # side by side, not on top of each other
                ax.vlines(c.sizes * shift, rep.min(axis=1), rep.max(axis=1), color=PALETTE[j], lw=1.2,
                          gid=f"range:{system}:p{p}")
                ax.plot(c.sizes * shift, c.times, "o-", ms=3.5, lw=1.0, color=PALETTE[j],
                        label=L["p"].format(p=p), gid=f"median:{system}:p{p}")
            log_axis(ax, "x", "bytes")
            log_axis(ax, "y", "time")
            ax.set_xlabel(L["size"])
            ax.set_title(f"{title} · {coll_name(collective)}")
            ax.legend(loc="upper left", fontsize=SMALL_PT)
        for ax in axes:  # stacked: each panel names its axis
            ax.set_ylabel(L["time"])
    return fig


def fig_p5_curve(lang: str = "en", data=None) -> Figure:
    """P5 §5.6: all-reduce bus bandwidth of the two 8×H100 logs (gids ``"measured:h100"``,
    ``"measured:azure"``), the ring model on the nominal link (``"model"``), its β
    (``"beta"``) and the two SHARP-off points stated in How to Scale Your Model (``"blog"``);
    ``data``: a :class:`.measuring_p5.P5Curve` (default ``p5_curve()``)."""
    from .measuring_p5 import p5_curve

    d = p5_curve() if data is None else data
    link = d.link
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 4.6))
        ax = fig.subplots()
        az, h = d.azure, d.h100
        ax.plot(az.sizes, az.busbw / GB, "s", ms=4, color=PALETTE[5], label=L["p5_azure"].format(v=az.version, pl=az.placement.replace("_", "-")),
                gid="measured:azure")
        ax.plot(h.sizes, h.busbw / GB, "o", ms=5, color="0.15", label=L["p5_h100"].format(v=h.version, pl=h.placement.replace("_", "-")),
                gid="measured:h100")
        ax.plot(d.grid, d.grid_busbw / GB, color=PALETTE[0],
                label=L["p5_model"].format(a=f"{link.alpha * 1e6:g} µs", b=fmt_rate(link.beta, 3)), gid="model")
        ax.axhline(link.beta / GB, color=PALETTE[2], ls=":", lw=1.2, label=L["p5_beta"].format(b=fmt_rate(link.beta, 3)),
                   gid="beta")
        ax.plot(d.blog_sizes, d.blog_busbw / GB, "x", ms=8, mew=2, color=PALETTE[3], label=L["p5_blog"],
                gid="blog")
        log_axis(ax, "x", "bytes")
        ax.set_ylim(0, 520)
        ax.set_xlabel(L["size"])
        ax.set_ylabel(L["busbw"])
        ax.set_title(L["p5_title"])
        ax.legend(loc="lower right", fontsize=SMALL_PT)
    return fig
