"""The models of the page "Measuring collectives" against the recorded logs, and where they
miss.  The NCCL-style predictor is :mod:`commbook.measure.nccl_model`; its errors come from
:func:`commbook.measure.nccl_model.compare` and ``Comparison.median``, the functions
``benchmarks/accuracy.py`` prints (:func:`comparisons`: the one-node logs; the page's table of
every log, one node and many, is :func:`.measuring_cluster.accuracy_table`).  The misses, in
numbers read from the data: NCCL's protocol switch on the A100 log (the flat stretch of
:func:`commbook.book.ch1.libraries.flat_region`), the A100 log's large start-up from 16 to
256 MiB that no NCCL release's model has, NVLS passing the wire rate on H100, the
software floor of small messages, and gloo's reduce-scatter built on a full all-reduce.
"""
from __future__ import annotations

import numpy as np

from ..collectives import predict
from ..measure import nccl_model as NM
from ..measure.fitting import fit_point_to_point
from ..measure.nccl_tuning import NCCL_RELEASE
from .ch1.libraries import flat_region
from .measuring import A100_LOG, GLOO_FIT_MAX, GLOO_P, curve, fit_curve, log_run, wire_rate

__all__ = ["NCCL_RELEASE", "NODES", "COMPARED", "comparisons", "predictor_lines",
           "SIMPLE_BAND", "misses", "flat_miss", "simple_miss", "nvls_miss", "small_miss", "gloo_rs_miss"]

NODES = {"h100": NM.H100_8, "azure": NM.H100_8, "a100": NM.A100_8}
"""The predictor's node for each log (code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""
COMPARED = (("h100", "all_reduce"), ("h100", "all_gather"), ("h100", "reduce_scatter"),
            ("azure", "all_reduce"), ("a100", "all_reduce"))
"""The (log, collective) pairs the predictor models: all-reduce, all-gather, reduce-scatter."""


def comparisons() -> dict:
    """``{(system, collective): Comparison}``: :func:`commbook.measure.nccl_model.compare` of
    each pair of :data:`COMPARED` (the predictor with one host overhead per log read at its
    smallest size below 1 MiB, and the α–β ring fit to all of the log's sizes)."""
    return {(s, op): NM.compare(log_run(s, op), NODES[s]) for s, op in COMPARED}


def predictor_lines(comps: dict | None = None, k: int = 200) -> dict:
    """``{(system, collective): (sizes, busbw)}``: the predictor on a fine grid over each
    log's sizes, with the overhead its comparison read (for :func:`fig_model_vs_measured`)."""
    comps = comparisons() if comps is None else comps
    out = {}
    for (s, op), c in comps.items():
        grid = np.logspace(np.log10(c.sizes.min()), np.log10(c.sizes.max()), k)
        out[(s, op)] = (grid, NM.predict_nccl(NODES[s], op, grid, overhead=c.overhead).busbw)
    return out


def _ring_time(c, f, n):
    return predict(c.collective, "ring", c.p, n, f.alpha, f.beta)


def flat_miss(comps: dict | None = None) -> dict:
    """The A100 log's flat stretch (sizes whose times agree within 1 %), what the ring fit
    over the whole log predicts there (relative error (model − measured)/measured of the
    time), and the predictor's errors and picks there."""
    fr = flat_region(A100_LOG)
    i, j = fr.flat
    c = curve("a100", "all_reduce")
    f = fit_curve(c)
    model = np.array([_ring_time(c, f, n) for n in c.sizes[i:j + 1]])
    err = (model - c.times[i:j + 1]) / c.times[i:j + 1]
    cmp = (comparisons() if comps is None else comps)[("a100", "all_reduce")]
    pr = cmp.prediction
    assert np.array_equal(cmp.sizes, c.sizes)
    return {"pred_err": cmp.errors[i:j + 1], "pred_picks": [f"{pr.algo[k]}/{pr.proto[k]}" for k in range(i, j + 1)],
            "first": c.sizes[i], "last": c.sizes[j], "t_min": c.times[i:j + 1].min(), "t_max": c.times[i:j + 1].max(),
            "growth": c.sizes[j] / c.sizes[i], "fit_err": err, "next_time": c.times[j + 1], "next_size": c.sizes[j + 1],
            "ll_cap": fr.ll_cap_Bps, "first_not_ll": fr.not_ll_bytes, "region": fr}


SIMPLE_BAND = (16 * 2 ** 20, 256 * 2 ** 20)
"""Sizes (bytes, inclusive) of the A100 log where the predictor is far too fast (ring Simple or
LL128 in NCCL's choice; code/commbook/data/measured/nccl-tests/PROVENANCE.md)."""


def simple_miss(comps: dict | None = None) -> dict:
    """The A100 log within :data:`SIMPLE_BAND`: the line t = α + n/β through its times
    (:func:`commbook.measure.fitting.fit_point_to_point`), NCCL's ring Simple all-reduce latency on
    the node (the same in every release that tunes for Ampere, PROVENANCE.md), α over that
    latency, and the predictor's errors there."""
    c = curve("a100", "all_reduce")
    band = (c.sizes >= SIMPLE_BAND[0]) & (c.sizes <= SIMPLE_BAND[1])
    f = fit_point_to_point(c.sizes[band], c.times[band])
    lat = NM.table(NODES["a100"], "all_reduce")[("ring", "Simple")].latency
    cmp = (comparisons() if comps is None else comps)[("a100", "all_reduce")]
    assert np.array_equal(cmp.sizes, c.sizes)
    return {"alpha": f.alpha, "beta": f.beta, "rms": f.rms_rel, "nccl_lat": lat, "ratio": f.alpha / lat,
            "pred_err": cmp.errors[band]}


def nvls_miss(comps: dict | None = None) -> dict:
    """All-reduce busbw above the NVLink rate on both H100 logs; all-gather and reduce-scatter
    stay below it.  ``first_above``: the smallest size whose busbw passes the rate; the
    predictor's pick and busbw at the 8×H100 log's largest size."""
    wire = wire_rate("h100")
    cmp = (comparisons() if comps is None else comps)[("h100", "all_reduce")]
    pr = cmp.prediction
    out = {"wire": wire, "pred_pick": f"{pr.algo[-1]}/{pr.proto[-1]}", "pred_top": float(pr.busbw[-1]),
           "pred_ag_pick": f"{comps_pick(comps, 'all_gather')}"}
    for system in ("h100", "azure"):
        c = curve(system, "all_reduce")
        above = np.nonzero(c.busbw > wire)[0]
        out[system] = {"peak": float(c.busbw.max()), "peak_wire": float(c.busbw.max()) / wire,
                       "first_above": c.sizes[above[0]], "fit_beta": fit_curve(c).beta}
    for op in ("all_gather", "reduce_scatter"):
        c = curve("h100", op)
        out[op] = {"peak": float(c.busbw.max()), "peak_wire": float(c.busbw.max()) / wire}
    # the ring's bytes per GPU over what reducing in the switch needs: 2(p-1)/p against 1
    p = curve("h100", "all_reduce").p
    out["ring_over_switch"] = 2 * (p - 1) / p
    return out


def comps_pick(comps: dict | None, collective: str) -> str:
    """The predictor's algorithm/protocol at the 8×H100 log's largest size of ``collective``."""
    pr = (comparisons() if comps is None else comps)[("h100", collective)].prediction
    return f"{pr.algo[-1]}/{pr.proto[-1]}"


def small_miss(comps: dict | None = None) -> dict:
    """The smallest sizes of the Azure H100 log and of gloo on 16 cores: the measured time,
    the time the bytes need at the link's rate, and the ring fit's relative error there;
    the medians below 1 MiB of the predictor and of the fit, and the overhead read."""
    cmp = (comparisons() if comps is None else comps)[("azure", "all_reduce")]
    az = curve("azure", "all_reduce")
    f = fit_curve(az)
    wire = wire_rate("azure")
    upto = az.sizes <= 2 ** 20
    wire_t = 2 * (az.p - 1) / az.p * az.sizes[0] / wire
    fit_t = _ring_time(az, f, az.sizes[0])
    g = curve("gloo16", "all_reduce", 2)
    gf = fit_curve(g)
    return {"pred_med": cmp.median("< 1 MiB"), "fit_med": cmp.median("< 1 MiB", "fit"), "overhead": cmp.overhead,
            "nccl_med": cmp.median("< 1 MiB", "nccl"),
            "n": az.sizes[0], "t": az.times[0], "wire_t": wire_t, "over_wire": az.times[0] / wire_t,
            "t_1m": az.times[upto][-1], "n_1m": az.sizes[upto][-1], "t_growth": az.times[upto][-1] / az.times[0],
            "fit_t": fit_t, "fit_err": (fit_t - az.times[0]) / az.times[0], "fit_alpha": f.alpha,
            "steps": 2 * (az.p - 1), "per_step": az.times[0] / (2 * (az.p - 1)),
            "gloo_n": g.sizes[0], "gloo_t": g.times[0], "gloo_alpha": gf.alpha, "gloo_p": g.p}


def gloo_rs_miss(system: str = "gloo16") -> dict:
    """gloo's reduce-scatter against its all-reduce at the same printed size (the whole
    buffer, which gloo all-reduces before it copies out a chunk), against what the ring
    closed form with the all-reduce's fitted α, β predicts for a reduce-scatter."""
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
    return {"ratio_min": min(fitted_ratio), "ratio_max": max(fitted_ratio), "big_min": min(big_ratio),
            "big_max": max(big_ratio), "ring_min": min(ring_ratio), "ring_max": max(ring_ratio),
            "rsag_min": min(rsag), "rsag_max": max(rsag),
            "rs_alpha": [f.alpha for f in fits["reduce_scatter"]], "rs_beta": [f.beta for f in fits["reduce_scatter"]],
            "ar_alpha": [f.alpha for f in fits["all_reduce"]], "ar_beta": [f.beta for f in fits["all_reduce"]]}


def misses(comps: dict | None = None) -> dict:
    """All five, by name."""
    comps = comparisons() if comps is None else comps
    return {"flat": flat_miss(comps), "simple": simple_miss(comps), "nvls": nvls_miss(comps),
            "small": small_miss(comps), "gloo_rs": gloo_rs_miss()}
