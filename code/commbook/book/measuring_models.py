"""The models of the page "Measuring collectives" against the recorded logs, and where they
miss.  The NCCL-style predictor is :mod:`commbook.measure.nccl_model`; its errors come from
:func:`commbook.measure.nccl_model.compare` and ``Comparison.median``, the functions
``benchmarks/accuracy.py`` prints (:func:`comparisons`: the one-node logs; the page's table of
every log, one node and many, is :func:`.measuring_cluster.accuracy_table`).  The misses, in
numbers read from the data: NCCL's protocol switch on the A100 log (the flat stretch of
:func:`commbook.book.ch1.libraries.flat_region`), the A100 log's large start-up from 16 to
256 MiB that no NCCL release's model has, NVLS passing the wire rate on H100, the
software floor of small messages (these two on the page itself), and gloo's reduce-scatter
built on a full all-reduce.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from ..collectives import predict
from ..measure import nccl_model as NM
from ..measure.fitting import fit_point_to_point
from ..measure.nccl_tuning import NCCL_RELEASE
from .ch1.libraries import flat_region
from ..units import fmt_number, fmt_pct, fmt_rate, fmt_ratio, fmt_time
from .p5.common import span
from .measuring import A100_LOG, GLOO_FIT_MAX, GLOO_P, curve, fit_curve, log_run, size_text

__all__ = ["NCCL_RELEASE", "NODES", "COMPARED", "comparisons", "predictor_lines", "SIMPLE_BAND",
           "Flat", "flat_miss", "Simple", "simple_miss", "Nvls", "nvls_miss",
           "GlooRs", "gloo_rs_miss"]

NODES = {"h100": NM.H100_8, "azure": NM.H100_8, "a100": NM.A100_8}
"""The predictor's node for each log (code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""
COMPARED = (("h100", "all_reduce"), ("h100", "all_gather"), ("h100", "reduce_scatter"),
            ("azure", "all_reduce"), ("a100", "all_reduce"))
"""The (log, collective) pairs the predictor models: all-reduce, all-gather, reduce-scatter."""


@functools.cache
def comparisons() -> dict:
    """``{(system, collective): Comparison}``: :func:`commbook.measure.nccl_model.compare` of
    each pair of :data:`COMPARED` (the predictor with one host overhead per log read at its
    smallest size below 1 MiB, and the α–β ring fit to all of the log's sizes); computed
    once, shared by every builder of the page."""
    return {(s, op): NM.compare(log_run(s, op), NODES[s]) for s, op in COMPARED}


def predictor_lines(k: int = 200) -> dict[tuple[str, str], NM.Prediction]:
    """``{(system, collective): Prediction}``: the predictor on a fine grid over each log's
    sizes, with the overhead its comparison read (for :func:`fig_model_vs_measured`)."""
    grid = lambda c: np.logspace(np.log10(c.sizes.min()), np.log10(c.sizes.max()), k)
    return {(s, op): NM.predict_nccl(NODES[s], op, grid(c), overhead=c.overhead) for (s, op), c in comparisons().items()}


def _ring_time(c, f, n):
    return predict(c.collective, "ring", c.p, n, f.alpha, f.beta)


_t3 = lambda t: fmt_time(t, 3)
_r3 = lambda b: fmt_rate(b, 3)


@dataclass(frozen=True)
class Flat:
    """The A100 log's flat stretch: its first and last size (times within 1 %), their ratio
    and times, the next size and its time, the whole-log ring fit's |error| there, the LL
    protocol's cap, the first size past it, and the predictor there: measured over predicted
    size by size (``pred_err``, not glued: its relative errors) and its picks."""
    first_size: str
    last_size: str
    growth: int                    # last size over first
    t_range: str
    next_size: str
    next_s: float
    err_range: str                 # the whole-log ring fit's |error| over the stretch
    ll_cap_Bps: float
    not_ll_size: str
    pred_x: str                    # measured over predicted, size by size
    picks: str
    pred_err: tuple[float, ...]


def flat_miss() -> Flat:
    """The A100 log's flat stretch (:func:`commbook.book.ch1.libraries.flat_region`).

    >>> flat_miss().first_size
    '1 MiB'
    """
    fr = flat_region(A100_LOG)
    i, j = fr.flat
    c = curve("a100", "all_reduce")
    f = fit_curve(c)
    t = c.times[i:j + 1]
    err = (np.array([_ring_time(c, f, n) for n in c.sizes[i:j + 1]]) - t) / t
    cmp = comparisons()[("a100", "all_reduce")]
    pr = cmp.prediction
    assert np.array_equal(cmp.sizes, c.sizes)
    pred_err = tuple(float(e) for e in cmp.errors[i:j + 1])
    return Flat(size_text(c.sizes[i]), size_text(c.sizes[j]), round(c.sizes[j] / c.sizes[i]),
                span([t.min(), t.max()], fmt_time), size_text(c.sizes[j + 1]), float(c.times[j + 1]),
                span(np.abs(err), fmt_pct), fr.ll_cap_Bps, size_text(fr.not_ll_bytes),
                ", ".join(fmt_ratio(1 + e, 3) for e in pred_err),
                ", ".join(f"{pr.algo[k]}/{pr.proto[k]}" for k in range(i, j + 1)), pred_err)


SIMPLE_BAND = (16 * 2 ** 20, 256 * 2 ** 20)
"""Sizes (bytes, inclusive) of the A100 log where the predictor is far too fast (ring Simple or
LL128 in NCCL's choice; code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""


@dataclass(frozen=True)
class Simple:
    """The A100 log's line t = α + n/β within :data:`SIMPLE_BAND`, NCCL's ring Simple
    latency, α over it, and the predictor's relative errors there."""
    alpha_s: float
    beta_Bps: float
    rms_frac: float
    nccl_lat_s: float
    over_lat_x: float
    pred_err: tuple[float, ...]


def simple_miss() -> Simple:
    """The A100 log within :data:`SIMPLE_BAND`: the line through its times
    (:func:`commbook.measure.fitting.fit_point_to_point`) against NCCL's ring Simple all-reduce
    latency on the node (the same in every release that tunes for Ampere, PROVENANCE.md).

    >>> simple_miss().over_lat_x > 2
    True
    """
    c = curve("a100", "all_reduce")
    band = (c.sizes >= SIMPLE_BAND[0]) & (c.sizes <= SIMPLE_BAND[1])
    f = fit_point_to_point(c.sizes[band], c.times[band])
    lat = NM.table(NODES["a100"], "all_reduce")[("ring", "Simple")].latency
    cmp = comparisons()[("a100", "all_reduce")]
    assert np.array_equal(cmp.sizes, c.sizes)
    return Simple(f.alpha, f.beta, f.rms_rel, lat, f.alpha / lat, tuple(float(e) for e in cmp.errors[band]))


@dataclass(frozen=True)
class GlooRs:
    """gloo's reduce-scatter against its all-reduce: time ratios up to :data:`GLOO_FIT_MAX`
    and above it, what the ring closed form gives, reduce-scatter + all-gather over
    all-reduce, and both collectives' fitted α and β over p = 2 to 4.  ``ratios``, ``big``
    and ``ring_ratios`` (not glued) hold the ratios the ranges are read from."""
    ratio_range: str               # reduce-scatter over all-reduce, up to 16 MiB
    big_range: str                 # ... at 64 MiB
    ring_x: float                  # what the ring closed form gives
    rsag_range: str                # reduce-scatter + all-gather over all-reduce
    alpha_range: str
    beta_range: str
    ar_alpha_range: str
    ar_beta_range: str
    ratios: tuple[float, ...]
    big: tuple[float, ...]
    ring_ratios: tuple[float, ...]


def gloo_rs_miss(system: str = "gloo16") -> GlooRs:
    """gloo's reduce-scatter against its all-reduce at the same printed size (the whole
    buffer, which gloo all-reduces before it copies out a chunk), against what the ring
    closed form with the all-reduce's fitted α, β predicts for a reduce-scatter.

    >>> round(gloo_rs_miss().ring_x, 6)
    0.5
    """
    fitted_ratio, big_ratio, ring_ratio, rsag = [], [], [], []
    for p in GLOO_P:
        ar, rs, ag = (curve(system, op, p) for op in ("all_reduce", "reduce_scatter", "all_gather"))
        keep = ar.sizes <= GLOO_FIT_MAX
        r = rs.times / ar.times
        fitted_ratio.extend(r[keep])
        big_ratio.extend(r[~keep])
        f = fit_curve(ar)
        ring_ratio.extend(predict("reduce_scatter", "ring", p, n, f.alpha, f.beta) /
                          predict("all_reduce", "ring", p, n, f.alpha, f.beta) for n in ar.sizes[keep])
        rsag.extend(((rs.times + ag.times) / ar.times)[keep])
    fits = {op: [fit_curve(curve(system, op, p)) for p in GLOO_P] for op in ("all_reduce", "reduce_scatter")}
    x2 = lambda v, d: fmt_number(min(v), d) + "–" + fmt_ratio(max(v), d)
    rs_f, ar_f = fits["reduce_scatter"], fits["all_reduce"]
    return GlooRs(x2(fitted_ratio, 3), x2(big_ratio, 2), max(ring_ratio), x2(rsag, 2),
                  span([f.alpha for f in rs_f], _t3), span([f.beta for f in rs_f], _r3),
                  span([f.alpha for f in ar_f], _t3), span([f.beta for f in ar_f], _r3),
                  tuple(map(float, fitted_ratio)), tuple(map(float, big_ratio)), tuple(map(float, ring_ratio)))
