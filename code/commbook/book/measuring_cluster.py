"""The page "Measuring collectives" across nodes: NCCL 2.29.2's model on the six multi-node
logs (:mod:`commbook.measure.nccl_cluster`), the page's accuracy table of every recorded log
(one node and many) as ``benchmarks/accuracy.py`` prints it, the figure "Across nodes" and
the numbers its prose quotes for each miss.

The errors come from the functions accuracy.py calls: :func:`commbook.measure.nccl_model.compare`
(one node) and :func:`commbook.measure.nccl_cluster.compare` (many), and ``Comparison.median``,
``Comparison.worst`` (the largest |error| in a band) and ``Comparison.status`` (PASS when the
median meets :data:`commbook.measure.nccl_model.TARGETS` and, at ≥ 1 MiB, the worst size
:data:`commbook.measure.nccl_model.WORST_TARGET`).
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np

from ..measure import load_log
from ..measure import nccl_cluster as NC
from ..measure.fitting import Fit, fit_point_to_point
from ..measure.nccl_model import TARGETS, WORST_TARGET
from ..units import MiB
from .measuring import NVIDIA, coll_name, system_name
from .measuring_models import NODES, comparisons as node_comparisons
from .tables import Table
from .text import texts

T = texts("measure")

__all__ = ["LOGS", "CLUSTERS", "cluster_name", "cluster_comparisons", "log_name", "accuracy_table", "LINE_BANDS",
           "line", "cluster_lines", "picks", "log_release", "FIG_WIDTH_IN", "MIN_FONT_PT", "model_lines", "fig_cluster"]

LOGS = {
    "tcpxo": "multinode/h100x16_gcp_a3mega_tcpxo_allreduce.log",
    "a100_sharp": "multinode/a100x128_coreweave_ib_sharp_allreduce.log",
    "h100_sharp": "multinode/h100x64_coreweave_ib_sharp_allreduce.log",
    "gb1": "multinode/gb200x72_coreweave_nvl72_1rack_nccl2.26.2_allreduce.log",
    "gb2": "multinode/gb200x144_coreweave_nvl72_2racks_nccl2.26.2_allreduce.log",
    "gb20": "multinode/gb200x1440_coreweave_nvl72_20racks_nccl2.26.2_allreduce.log",
}
"""The multi-node logs of ``code/commbook/data/measured/nccl-tests/multinode/`` by a short name, in the
page's order; each has one preset in :data:`commbook.measure.nccl_cluster.LOG_PRESETS`."""
CLUSTERS = {s: NC.PRESETS[NC.LOG_PRESETS[log]] for s, log in LOGS.items()}
"""The preset :class:`commbook.measure.nccl_cluster.Cluster` of each multi-node log."""

def cluster_name(system: str, lang: str = "en") -> str:
    """``2×8 H100, A3 Mega, TCPXO``: the preset's nodes × GPUs and network, in ``lang``."""
    c = CLUSTERS[system]
    what = T.get(f"measuring_cluster.what.{system}", lang, n=c.nodes)
    return T.get("measuring_cluster.name", lang, nodes=c.nodes, g=c.gpus_per_node, gpu=c.gpu, what=what)


@functools.cache
def cluster_comparisons() -> dict:
    """``{(system, collective): Comparison}`` of every run of each multi-node log against its
    preset (:func:`commbook.measure.nccl_cluster.compare`, as accuracy.py calls it); computed once."""
    out = {}
    for s, log in LOGS.items():
        for run in load_log(log):
            out[(s, run.collective)] = NC.compare(run, CLUSTERS[s])
    return out


def log_name(system: str) -> str:
    """The file under ``code/commbook/data/measured/nccl-tests/`` of ``system`` (the name accuracy.py prints)."""
    return NVIDIA[system] if system in NVIDIA else LOGS[system]


def accuracy_table() -> Table:
    """Every recorded log, collective and size band with sizes in it: the number of sizes, the
    predictor's median and worst |busbw error|, the α–β ring fit's and NCCL's own model time's
    medians, the host overhead read, and PASS / MISS against the targets: one node, then many."""
    comps = {**node_comparisons(), **cluster_comparisons()}
    rows = []
    for (s, op), c in comps.items():
        for band in TARGETS:
            k = int(c.band(band).sum())
            if k:
                rows.append({"system": s, "log": log_name(s), "nodes": CLUSTERS[s].nodes if s in CLUSTERS else 1,
                             "op": coll_name(op), "collective": op, "band": band, "count": k,
                             "model_frac": c.median(band), "worst_frac": c.worst(band), "fit_frac": c.median(band, "fit"),
                             "nccl_frac": c.median(band, "nccl"),
                             "overhead_s": c.overhead if c.calibrated_at is not None else None,
                             "status": c.status(band)})
    labels = {lang: {**{s: system_name(s, lang) for s in NODES}, **{s: cluster_name(s, lang) for s in LOGS},
                     ">= 1 MiB": "≥ 1 MiB", **{s: T.get(f"measuring_cluster.status.{s}", lang) for s in ("PASS", "MISS")}}
              for lang in ("en", "zh")}
    big, small, w = (f"{100 * x:.0f} %" for x in (TARGETS[">= 1 MiB"], TARGETS["< 1 MiB"], WORST_TARGET))
    return Table(
        key="measure-accuracy",
        title=T("measuring_cluster.acc.title"),
        columns=["system", "op", "band", "count", "model_frac", "worst_frac", "fit_frac", "nccl_frac", "overhead_s", "status"],
        headers=T.pairs(*(f"measuring_cluster.acc.{c}" for c in ["system", "op", "band", "count", "model", "worst", "fit", "nccl", "overhead", "status"])),
        rows=rows,
        formats={"overhead_s": 3},
        labels=labels,
        notes=T.pairs("measuring_cluster.acc.note", big=big, small=small, w=w),
    )


# ============================================================================ the misses, in numbers
LINE_BANDS: dict[str, tuple[tuple[float, float], ...]] = {
    "tcpxo": ((MiB, 16 * MiB), (32 * MiB, math.inf)),
    "a100_sharp": ((64 * MiB, math.inf),),
    "gb1": ((0, math.inf),), "gb2": ((0, math.inf),), "gb20": ((0, math.inf),),
}
"""Size ranges (bytes, inclusive) of each missed log over which its times lie on one line
t = α + n/β (code/commbook/data/measured/nccl-tests/PROVENANCE.md, "The model against the multi-node logs")."""


def line(c, lo: float, hi: float, of: str = "measured") -> Fit:
    """The line t = α + n/β (:func:`commbook.measure.fitting.fit_point_to_point`) through the
    measured times (``of="measured"``) or the predictor's (``"model"``) at sizes lo ≤ n ≤ hi."""
    keep = (c.sizes >= lo) & (c.sizes <= hi)
    n = c.sizes[keep]
    t = c.prediction.time[keep]
    if of == "measured":                       # compare's error is measured time / predicted time - 1
        t = t * (1 + c.errors[keep])
    return fit_point_to_point(n, t)


def cluster_lines() -> dict[str, list[tuple[Fit, Fit]]]:
    """``{system: [(measured line, model line), ...]}`` for each range of :data:`LINE_BANDS`."""
    comps = cluster_comparisons()
    return {s: [(line(comps[(s, "all_reduce")], lo, hi), line(comps[(s, "all_reduce")], lo, hi, "model"))
                for lo, hi in bands] for s, bands in LINE_BANDS.items()}


def picks(pred) -> list[tuple[str, float, float]]:
    """NCCL's pick over a :class:`~commbook.measure.nccl_model.Prediction`'s sizes as runs
    ``(algorithm/protocol, first size, last size)``."""
    out: list[list] = []
    for n, a, p in zip(pred.sizes, pred.algo, pred.proto):
        key = f"{a}/{p}"
        if out and out[-1][0] == key:
            out[-1][2] = float(n)
        else:
            out.append([key, float(n), float(n)])
    return [tuple(r) for r in out]


def log_release(system: str) -> str | None:
    """The NCCL release a multi-node log's file name gives (``nccl2.26.2``), or ``None``: these
    logs print none themselves (code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""
    m = re.search(r"_nccl(\d+\.\d+\.\d+)_", LOGS[system])
    return m[1] if m else None


# ============================================================================ the figure
FIG_WIDTH_IN = 6.9
"""Drawn at the width the book shows it (the ~690 px text column at 100 px per inch,
:data:`commbook.book.plots.COLUMN_IN`)."""
MIN_FONT_PT = 10.0
"""Its smallest text: ≥ 9 px on the desktop column and ≥ 7 px on a phone's (364 px) at
that width (:data:`commbook.book.plots.SMALL_PT`)."""
_PICK_COLOURS = ("#56B4E9", "#0072B2", "#009E73", "#E69F00", "#CC79A7", "#F0E442", "0.6", "#000000")
_BAND = 0.07                   # height of the pick band, a fraction of the axes


def model_lines(k: int = 241) -> dict:
    """``{system: Prediction}``: the preset's prediction on a fine grid over the log's sizes,
    with the overhead its comparison read (the line and the band of :func:`fig_cluster`)."""
    ar = {s: cluster_comparisons()[(s, "all_reduce")] for s in LOGS}
    return {s: NC.predict_nccl(CLUSTERS[s], "all_reduce", np.logspace(np.log10(c.sizes.min()), np.log10(c.sizes.max()), k),
                               overhead=c.overhead) for s, c in ar.items()}


def fig_cluster(lang: str = "en"):
    """Bus bandwidth against size for each multi-node log, one panel each (3 rows × 2 columns):
    the measured points (gid ``"measured"``), the model's busbw on a fine grid (``"model"``),
    and under them a band coloured by NCCL's pick over each size range (gid
    ``"pick:<algorithm>/<protocol>:<first size>"``, one span per run of :func:`picks`)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch
    from matplotlib.ticker import LogLocator

    from ..measure.nccl_tuning import NCCL_RELEASE
    from ..units import GB
    from .plots import SMALL_PT, book_style, label, log_axis

    comps, lines = cluster_comparisons(), model_lines()
    order = list(dict.fromkeys(key for s in LOGS for key, _, _ in picks(lines[s])))
    colour = dict(zip(order, _PICK_COLOURS))
    with book_style(lang) as lang:
        fig = Figure(figsize=(FIG_WIDTH_IN, 8.4))
        axes = fig.subplots(3, 2).ravel()
        for k, (ax, s) in enumerate(zip(axes, LOGS)):
            c, pr = comps[(s, "all_reduce")], lines[s]
            ax.plot(c.sizes, c.measured / GB, "o", ms=3.6, color="0.15", gid="measured", zorder=3)
            ax.plot(pr.sizes, pr.busbw / GB, color="#D55E00", lw=1.5, gid="model", zorder=2)
            g = pr.sizes
            edges = np.sqrt(g[1:] * g[:-1])
            for key, lo, hi in picks(pr):
                i, j = int(np.searchsorted(g, lo)), int(np.searchsorted(g, hi))
                x0 = g[0] if i == 0 else edges[i - 1]
                x1 = g[-1] if j == len(g) - 1 else edges[j]
                ax.axvspan(x0, x1, ymin=0, ymax=_BAND, color=colour[key], lw=0, gid=f"pick:{key}:{lo:.0f}")
            log_axis(ax, "x", "bytes")
            ax.xaxis.set_major_locator(LogLocator(base=10, numticks=6))
            ys = np.concatenate([c.measured, pr.busbw]) / GB
            room = (_BAND + 0.03) / (1 - _BAND - 0.03)
            if ys.max() / ys.min() > 100:
                log_axis(ax, "y", "plain")
                lo, hi = ys.min() / 1.5, ys.max() * 1.5
                ax.set_ylim(lo / (hi / lo) ** room, hi)
            else:
                hi = 1.1 * ys.max()
                ax.set_ylim(-room * hi, hi)
            ax.set_xlim(c.sizes.min() / 1.3, c.sizes.max() * 1.3)
            ax.tick_params(labelsize=MIN_FONT_PT)
            ax.set_title(f"({'abcdef'[k]}) {cluster_name(s, lang)}", fontsize=SMALL_PT)
            if k >= 4:
                ax.set_xlabel(label("mc_size", lang), fontsize=MIN_FONT_PT + 0.5)
            if k % 2 == 0:
                ax.set_ylabel(label("mc_busbw", lang), fontsize=MIN_FONT_PT + 0.5)
        handles = [Line2D([], [], ls="", marker="o", ms=3.6, color="0.15", label=label("mc_measured", lang)),
                   Line2D([], [], color="#D55E00", lw=1.5, label=label("mc_model", lang, v=NCCL_RELEASE)),
                   Patch(color="none", label=label("mc_pick", lang))]
        pick = lambda algo, proto: label("mc_pick_fmt", lang, algo=label(f"mc_{algo}", lang), proto=proto)
        handles += [Patch(color=colour[key], label=pick(*key.split("/"))) for key in order]
        fig.legend(handles=handles, loc="outside lower center", ncol=3, fontsize=MIN_FONT_PT, frameon=False)
    return fig
