"""Chapter §1.2, calibration: the ring's closed form fitted to a real nccl-tests log
(:func:`commbook.measure.fit`) next to the point-to-point fit and the nominal link, the
table of the three, and what the log records of the fields a calibration needs.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ...bandwidth import busbw
from ...collectives import t_formula
from ...hardware import NVLINK4_CHAPTER, Link
from ...measure import fitting as _fit_module
from ...measure import fit_point_to_point, load_log
from ...units import fmt_bytes, fmt_pct, fmt_rate, fmt_time
from ..glue import not_glued
from ..tables import Table
from ..text import texts
from .boxes import link_name, split_pairs

T, K, LANGS = texts("ch1"), "perf_calibration.", ("en", "zh")

__all__ = ["CALIBRATION_LOG", "Calibration", "calibration", "calibration_table", "log_record_table"]

CALIBRATION_LOG = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log"
"""The real log the page calibrates on (code/commbook/data/measured/nccl-tests/, see its PROVENANCE.md)."""


@dataclass(frozen=True)
class Calibration:
    """:func:`calibration`: the ring's closed form and the point-to-point α + n/β fitted to one
    run of a log, next to the nominal link.

    ``p`` ranks; ``steps`` = 2(p−1) α steps of the ring; the ring fit (``alpha_s``,
    ``beta_Bps``, ``rms_frac``) and the point-to-point fit (``p2p_*``); ``alpha_over`` the
    fitted α over the nominal, ``beta_frac`` β's excess over it, ``bfactor`` p/2(p−1) as
    text; the sizes as text (binary units) and their count; the NCCL version; α's share of
    the smallest size's time; the nominal ring's RMS residual.  ``sizes``, ``times`` and
    ``busbw`` are the run's points; ``run`` (the log's run) and ``nominal`` (the link) are
    attributes, not fields, so that glueing the result glues numbers only.
    """

    p: int
    steps: int
    alpha_s: float
    beta_Bps: float
    rms_frac: float
    p2p_alpha_s: float
    p2p_beta_Bps: float
    p2p_rms_frac: float
    alpha_over: float
    beta_frac: float
    bfactor: str
    n_min: str
    n_max: str
    n_count: int
    nccl: str
    alpha_share_frac: float
    nominal_rms_frac: float
    placement: str
    sizes: np.ndarray = field(repr=False)
    times: np.ndarray = field(repr=False)
    busbw: np.ndarray = field(repr=False)
    run: commbook.measure.records.Run = not_glued()
    nominal: Link = not_glued()


def calibration(log: str = CALIBRATION_LOG, collective: str = "all_reduce", algorithm: str = "ring",
                nominal: Link = NVLINK4_CHAPTER, placement: str | None = None) -> Calibration:
    """Fit the ``algorithm`` closed form of ``collective`` to the first such run of ``log``
    (:func:`commbook.measure.fit`), and the point-to-point α + n/β to the same points
    (:func:`commbook.measure.fit_point_to_point`); predict the nominal link's times too.

    >>> calibration().p
    8
    """
    runs = [r for r in load_log(log) if r.collective == collective]
    if not runs:
        raise ValueError(f"{log} has no {collective} run")
    run = runs[0]
    placement = run.placements[0] if placement is None else placement
    n, t = run.sizes(), run.times(placement)
    p, steps = run.nranks, 2 * (run.nranks - 1)
    ring = _fit_module.fit(n, t, collective, algorithm, p)
    p2p = fit_point_to_point(n, t)
    t_nom = np.array([t_formula(algorithm, p, x, nominal.alpha, nominal.beta) for x in n])
    return Calibration(
        p, steps, ring.alpha, ring.beta, ring.rms_rel, p2p.alpha, p2p.beta, p2p.rms_rel, ring.alpha / nominal.alpha,
        ring.beta / nominal.beta - 1, f"{p}/{steps}", fmt_bytes(n.min(), binary=True), fmt_bytes(n.max(), binary=True),
        len(n), f"NCCL {run.nccl_version}", steps * ring.alpha / t[0],
        float(np.sqrt(np.mean(((t - t_nom) / t) ** 2))), placement, n, t,
        np.array([busbw(collective, x, y, p) for x, y in zip(n, t)]), run, nominal)


_MODEL = T.labels(K + "model.")


def calibration_table(cal: Calibration | None = None) -> Table:
    """Nominal link, ring fit and point-to-point fit side by side: α, β, αβ, RMS residual.

    >>> calibration_table().rows[1]["model"]
    'ring'
    """
    c = calibration() if cal is None else cal
    nom, run = c.nominal, c.run
    rows = [{"model": "nominal", "alpha": nom.alpha, "beta": nom.beta, "rms": c.nominal_rms_frac},
            {"model": "ring", "alpha": c.alpha_s, "beta": c.beta_Bps, "rms": c.rms_frac},
            {"model": "p2p", "alpha": c.p2p_alpha_s, "beta": c.p2p_beta_Bps, "rms": c.p2p_rms_frac}]
    rows = [{**r, "n_star": r["alpha"] * r["beta"]} for r in rows]
    return Table(
        key="ch1-calibration",
        title=T(K + "cal_title", p=run.nranks),
        columns=["model", "alpha", "beta", "n_star", "rms"],
        headers=split_pairs(T(K + "cal_heads")),
        rows=rows,
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda b: fmt_rate(b, 3), "n_star": fmt_bytes,
                 "rms": fmt_pct},
        labels=_MODEL,
        notes={lang: [T.get(K + "cal_note", lang, link=link_name(nom, lang), count=c.n_count, lo=c.n_min,
                            hi=c.n_max, placement=c.placement.replace("_", "-"))] for lang in LANGS},
    )


_RECORD = [(k, T(f"{K}record.{k}"))
           for k in ("op", "dtype", "ranks", "sizes", "algo", "topology", "placement", "busbw", "library")]


def log_record_table(cal: Calibration | None = None) -> Table:
    """What a calibration must record (the fields of :data:`_RECORD`), and what the log
    actually records; ``meta["missing"]`` lists the fields it does not say.

    >>> log_record_table().meta["missing"]
    ['algo']
    """
    c = calibration() if cal is None else cal
    run = c.run
    hosts = sorted({d.host for d in run.devices})
    gpus = sorted({d.name for d in run.devices})
    per_host = len(run.devices) // max(len(hosts), 1)
    algo = run.parameters.get("NCCL_ALGO") or run.parameters.get("algo")
    one_to_one = bool(run.devices) and all(d.rank == d.device for d in run.devices)
    text = {
        "v_topology": T(K + "v_topology", hosts=len(hosts), per_host=per_host, gpus=", ".join(gpus)),
        "v_placement": T(K + "v_placement_one", hosts=", ".join(hosts)) if one_to_one else
        T(K + "v_placement_lines"),
        "v_busbw": T(K + "v_busbw_avg", avg=fmt_rate(run.avg_busbw, 3)) if run.avg_busbw else T(K + "v_busbw"),
        "v_absent": T(K + "v_absent"),
    }
    values = {
        "op": run.test or run.collective,
        "dtype": f"{run.rows[0].dtype} / {run.rows[0].redop}",
        "ranks": str(run.nranks),
        "sizes": f"{c.n_min} – {c.n_max}",
        "algo": algo,
        "topology": "v_topology" if run.devices else None,
        "placement": "v_placement" if run.devices else None,
        "busbw": "v_busbw" if run.rows[0].timing(c.placement).busbw is not None else None,
        "library": c.nccl if run.nccl_version else None,
    }
    missing = [k for k, v in values.items() if v is None]
    rows = [{"field": k, "value": "v_absent" if values[k] is None else values[k]} for k, _ in _RECORD]
    return Table(
        key="ch1-record",
        title=T(K + "rec_title"),
        columns=["field", "value"],
        headers=split_pairs(T(K + "rec_heads")),
        rows=rows,
        labels={lang: {**{k: v[lang] for k, v in _RECORD}, **{k: v[lang] for k, v in text.items()}}
                for lang in LANGS},
        meta={"missing": missing},
    )
