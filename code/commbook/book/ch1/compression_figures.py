r"""Chapter §1.6, the runs and figures: data-parallel least squares with compressed gradients
(:func:`runs`, :func:`runs_table`, :func:`fig_convergence`) and when compression pays
(:func:`fig_when`), each labelled in ``lang``.  Every line carries a ``gid`` so that tests
can read the drawn data back.

The runs are those of :mod:`commbook.compression.training` with its default settings
(:data:`RUN_SETTINGS`); they are computed once per process.
"""
from __future__ import annotations

import functools

import numpy as np
from matplotlib.figure import Figure

from ...collectives import t_formula
from ...compression import (Int8, RandomK, Sign, TopK, break_even_comm_time, compressed_allreduce_time,
                            least_squares, time_to_train, train_adam, train_onebit_adam, train_sgd)
from ...compression import training as tr
from ...hardware import IB_NDR_CHAPTER
from ...units import fmt_pct, fmt_ratio
from ..plots import COLUMN_IN, SMALL_PT, PALETTE, book_style, log_axis
from ..tables import Table, bilingual, bilingual_notes
from ..text import texts
from .compression_numbers import DECISION

__all__ = ["RUN_SETTINGS", "RUN_KEYS", "runs", "runs_table", "fig_convergence", "FLOOR",
           "WHEN_P", "WHEN_RATIOS", "fig_when"]

T = texts("ch1")
K = "compression_figures."
_tx = T.under(K)       # this module's entries: _tx(key), _txs(*keys), _two(key)
_txs, _two = _tx.pairs, _tx.two


RUN_SETTINGS = {"workers": tr.WORKERS, "dim": tr.DIM, "rows": tr.ROWS, "heterogeneity": tr.HETEROGENEITY,
                "lr": tr.LR, "steps": tr.STEPS, "adam_lr": tr.ADAM_LR, "adam_steps": tr.ADAM_STEPS,
                "warmup": tr.ONEBIT_WARMUP, "seed": 0}
"""The settings of every run (the training module's defaults), stated on the page."""

RUN_KEYS = ("fp32", "top1+ef", "top1", "top10+ef", "top10", "randk10", "sign+ef", "sign", "int8+ef", "int8",
            "adam", "1bit")
"""The runs, in table order: ``+ef`` with error feedback, ``randk10`` random-10 % (unbiased)
without it, ``1bit`` 1-bit Adam."""

FLOOR = 1e-16
"""Relative excess losses below this (rounding noise around the optimum) are drawn at it."""


@functools.lru_cache(maxsize=1)
def runs() -> dict:
    """Every run of :data:`RUN_KEYS` on the seeded problem (computed once), plus ``problem``."""
    p = least_squares(seed=RUN_SETTINGS["seed"])
    out = {"problem": p, "fp32": train_sgd(p)}
    for key, op in (("top1", TopK(0.01)), ("top10", TopK(0.1)), ("sign", Sign()), ("int8", Int8())):
        out[key + "+ef"] = train_sgd(p, op)
        out[key] = train_sgd(p, op, feedback=False)
    out["randk10"] = train_sgd(p, RandomK(0.1), feedback=False)
    out["adam"], out["1bit"] = train_adam(p), train_onebit_adam(p)
    return out


_NAMES = T.labels(K + "names.")


def _name(key: str, lang: str) -> str:
    base = key.removesuffix("+ef")
    if key.endswith("+ef"):
        return _NAMES[lang][base] + T.get(K + "with_ef", lang)
    if key in ("top1", "top10", "sign", "int8"):
        return _NAMES[lang][base] + T.get(K + "no_ef", lang)
    return _NAMES[lang][base]


def runs_table() -> Table:
    """Each run: final relative excess loss, bytes each worker sends per step, and the
    traffic against the uncompressed run."""
    r = runs()
    base = r["fp32"].bytes_up / r["fp32"].steps
    rows = []
    for key in RUN_KEYS:
        run = r[key]
        per_step = run.bytes_up / run.steps
        rows.append({"run": key, "final": max(run.final, 0.0), "steps": run.steps, "bytes": per_step,
                     "ratio": base / per_step})
    return Table(
        key="ch1-runs",
        title=_tx("the_runs_of_the"),
        columns=["run", "steps", "final", "bytes", "ratio"],
        headers=_txs("run", "steps", "final_l_l_l", "bytes_per_worker_per", "less_traffic_than_fp32"),
        rows=rows,
        formats={"final": lambda x: f"{x:.2e}", "bytes": lambda b: f"{b:,.4g} B", "ratio": fmt_ratio},
        labels={lang: {k: _name(k, lang) for k in RUN_KEYS} for lang in ("en", "zh")},
        notes=bilingual_notes(
            _two("1_bit_adam_s"),
            _settings_note()))


def _settings_note() -> tuple[str, str]:
    """The settings of the runs (:data:`RUN_SETTINGS`), as the figure's caption used to give them."""
    S = RUN_SETTINGS
    return _two("settings_workers_rows_d", workers=S['workers'], rows=S['rows'], dim=S['dim'], lr=S['lr'], steps=S['steps'], seed=S['seed'], adam_lr=S['adam_lr'], adam_steps=S['adam_steps'], warmup=fmt_pct(S['warmup']))


_LAB = T.labels(K + "lab.")

_COLOR = {"fp32": "0.15", "top1": PALETTE[0], "top10": PALETTE[2], "randk10": PALETTE[4],
          "sign": PALETTE[3], "int8": PALETTE[1], "adam": PALETTE[0], "1bit": PALETTE[3]}


def _curve(ax, key: str, lang: str) -> None:
    run = runs()[key]
    y = np.maximum(run.excess, FLOOR)
    base = key.removesuffix("+ef")
    dashed = key in ("top1", "top10", "sign", "int8")
    ax.plot(np.arange(run.steps + 1), y, color=_COLOR[base], ls="--" if dashed else "-",
            lw=1.2 if key == "fp32" else 1.6, label=_name(key, lang), gid=f"run:{key}")


def fig_convergence(lang: str = "en") -> Figure:
    """Three panels of relative excess loss against step (log scale, floored at
    :data:`FLOOR`): top-k with and without error feedback and random-k; sign and INT8 with
    and without; Adam and 1-bit Adam with the end of warm-up (gid ``"warmup"``)."""
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 9.6))
        axes = fig.subplots(3, 1, sharey=True)  # stacked: each panel the column's width
        panels = (("a", ("fp32", "top1+ef", "top1", "top10+ef", "top10", "randk10")),
                  ("b", ("fp32", "sign+ef", "sign", "int8+ef", "int8")), ("c", ("adam", "1bit")))
        for ax, (key, keys) in zip(axes, panels):
            for k in keys:
                _curve(ax, k, lang)
            ax.set_yscale("log")
            ax.set_ylim(FLOOR / 3, 3)
            ax.set_title(L[key], loc="left")
            ax.set_xlabel(L["step"])
            ax.legend(loc="lower left", fontsize=SMALL_PT)
        warm = max(1, round(RUN_SETTINGS["warmup"] * RUN_SETTINGS["adam_steps"]))
        axes[2].axvline(warm, color="0.5", ls=":", lw=1.0, gid="warmup")
        axes[2].text(warm, 0.3, " " + L["warm"], fontsize=SMALL_PT, color="0.4")
        for ax in axes:  # stacked: each panel names its axis
            ax.set_ylabel(L["excess"])
    return fig


WHEN_P = 64
"""Ranks of the ring in panel (b) of :func:`fig_when`."""

WHEN_RATIOS = (4, 32)
"""Compression ratios drawn in panel (b) of :func:`fig_when`."""


def fig_when(lang: str = "en") -> Figure:
    """(a) Time to train against the communication time per step, without compression (gid
    ``"ttt:base"``) and with the decision example's INT8 (``"ttt:comp"``), the break-even
    time (``"break_even"``) and the two cases (``"case:<ms>"``); (b) the speed-up of a ring
    all-reduce from compressing its payload, against the gradient size on Table 1's
    InfiniBand NDR (gid ``"speedup:<r>"``), with αβ and p·αβ marked."""
    c, r, x, steps = DECISION["t_compute"], DECISION["ratio"], DECISION["extra_steps"], DECISION["steps"]
    t_even = break_even_comm_time(c, r, x)
    link = IB_NDR_CHAPTER
    with book_style(lang) as lang:
        L = _LAB[lang]
        fig = Figure(figsize=(COLUMN_IN, 7.4))
        ax, bx = fig.subplots(2, 1)  # stacked: each panel the column's width
        t = np.linspace(0, 1.25 * max(DECISION["t_comm"]), 251)
        base = [time_to_train(steps, c, ti) for ti in t]
        comp = [time_to_train(steps, c, ti, r, extra_steps=x) for ti in t]
        ax.plot(t * 1e3, base, color="0.2", label=L["base"], gid="ttt:base")
        ax.plot(t * 1e3, comp, color=PALETTE[1], label=L["comp"].format(r=fmt_ratio(r), x=fmt_pct(x)), gid="ttt:comp")
        ax.axvline(t_even * 1e3, color="0.5", ls=":", lw=1.0, gid="break_even")
        ax.text(t_even * 1e3, min(base), " " + L["even"].format(t=t_even * 1e3), fontsize=SMALL_PT, color="0.35",
                va="bottom")
        for tc in DECISION["t_comm"]:
            b, k = time_to_train(steps, c, tc), time_to_train(steps, c, tc, r, extra_steps=x)
            ax.plot([tc * 1e3, tc * 1e3], [b, k], marker="o", color=PALETTE[3], lw=1.0, gid=f"case:{tc * 1e3:g}")
            top = tc == max(DECISION["t_comm"])
            ax.annotate(f"{b:,.0f} → {k:,.0f} s", (tc * 1e3, max(b, k) if top else min(b, k)),
                        textcoords="offset points", xytext=(-6, 8) if top else (8, -6),
                        ha="right" if top else "left", va="bottom" if top else "top", fontsize=SMALL_PT,
                        color=PALETTE[3])
        ax.set_xlabel(L["tcomm"])
        ax.set_ylabel(L["ttt"])
        ax.set_title(L["when_a"], loc="left")
        ax.legend(loc="lower right", fontsize=SMALL_PT)

        n = np.logspace(3, 10, 141)
        for ratio in WHEN_RATIOS:
            s = [t_formula("ring", WHEN_P, ni, link.alpha, link.beta)
                 / compressed_allreduce_time(WHEN_P, ni, link.alpha, link.beta, ratio) for ni in n]
            bx.plot(n, s, label=L["ratio"].format(r=fmt_ratio(ratio)), gid=f"speedup:{ratio}")
        for val, key in ((link.n_half, "nstar"), (WHEN_P * link.n_half, "pnstar")):
            bx.axvline(val, color="0.5", ls=":", lw=1.0, gid=key)
            bx.text(val, 1.05, " " + L[key], fontsize=SMALL_PT, color="0.35", rotation=90, va="bottom")
        log_axis(bx, "x", "bytes")
        log_axis(bx, "y", "plain", subs=(1.0, 2.0, 5.0))
        bx.set_xlabel(L["size"])
        bx.set_ylabel(L["speedup"])
        bx.set_title(L["when_b"].format(p=WHEN_P, link="InfiniBand NDR"), loc="left")
        bx.legend(loc="upper left", fontsize=SMALL_PT)
    return fig
