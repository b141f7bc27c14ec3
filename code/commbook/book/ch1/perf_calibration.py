"""Chapter §1.2, calibration: the ring's closed form fitted to a real nccl-tests log
(:func:`commbook.measure.fit`) next to the point-to-point fit and the nominal link, the
table of the three, and what the log records of the fields a calibration needs.
"""
from __future__ import annotations

import numpy as np

from ...bandwidth import busbw
from ...collectives import t_formula
from ...hardware import NVLINK4_CHAPTER, Link
from ...measure import fitting as _fit_module
from ...measure import fit_point_to_point, load_log
from ...units import fmt_bytes, fmt_pct, fmt_rate, fmt_time
from ..tables import Table, bilingual, bilingual_notes
from .boxes import link_name

__all__ = ["CALIBRATION_LOG", "calibration", "calibration_table", "log_record_table"]

CALIBRATION_LOG = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log"
"""The real log the page calibrates on (code/commbook/data/measured/nccl-tests/, see its PROVENANCE.md)."""


def calibration(log: str = CALIBRATION_LOG, collective: str = "all_reduce", algorithm: str = "ring",
                nominal: Link = NVLINK4_CHAPTER, placement: str | None = None) -> dict:
    """Fit the ``algorithm`` closed form of ``collective`` to the first such run of ``log``
    (:func:`commbook.measure.fit`), and the point-to-point α + n/β to the same points
    (:func:`commbook.measure.fit_point_to_point`); predict the nominal link's times too."""
    runs = [r for r in load_log(log) if r.collective == collective]
    if not runs:
        raise ValueError(f"{log} has no {collective} run")
    run = runs[0]
    placement = run.placements[0] if placement is None else placement
    n, t = run.sizes(), run.times(placement)
    p = run.nranks
    ring = _fit_module.fit(n, t, collective, algorithm, p)
    p2p = fit_point_to_point(n, t)
    t_nom = np.array([t_formula(algorithm, p, x, nominal.alpha, nominal.beta) for x in n]) \
        if collective == "all_reduce" else None
    res_nom = (t - t_nom) / t
    return {"run": run, "p": p, "placement": placement, "sizes": n, "times": t, "ring": ring, "p2p": p2p,
            "nominal": nominal, "t_nominal": t_nom, "nominal_rms": float(np.sqrt(np.mean(res_nom ** 2))),
            "busbw": np.array([busbw(collective, x, y, p) for x, y in zip(n, t)]),
            "a_factor": 2 * (p - 1), "b_factor": p / (2 * (p - 1))}


_MODEL = {"nominal": bilingual("ring closed form, nominal link", "环形闭式，标称链路"),
          "ring": bilingual("ring closed form, fitted", "环形闭式，拟合"),
          "p2p": bilingual("α + n/β, fitted", "α + n/β，拟合")}


def calibration_table(cal: dict | None = None) -> Table:
    """Nominal link, ring fit and point-to-point fit side by side: α, β, αβ, RMS residual."""
    c = calibration() if cal is None else cal
    nom, ring, p2p = c["nominal"], c["ring"], c["p2p"]
    rows = [{"model": "nominal", "alpha": nom.alpha, "beta": nom.beta, "n_star": nom.n_half, "rms": c["nominal_rms"]},
            {"model": "ring", "alpha": ring.alpha, "beta": ring.beta, "n_star": ring.n_half, "rms": ring.rms_rel},
            {"model": "p2p", "alpha": p2p.alpha, "beta": p2p.beta, "n_star": p2p.n_half, "rms": p2p.rms_rel}]
    run = c["run"]
    return Table(
        key="ch1-calibration",
        title=bilingual(f"Effective α and β of the {run.nranks}-GPU all-reduce log",
                        f"{run.nranks} 卡 all-reduce 日志的有效 α 与 β"),
        columns=["model", "alpha", "beta", "n_star", "rms"],
        headers={"en": ["Model", "α", "β", "αβ", "RMS relative residual"],
                 "zh": ["模型", "α", "β", "αβ", "相对残差的均方根"]},
        rows=rows,
        formats={"alpha": lambda a: fmt_time(a, 3), "beta": lambda b: fmt_rate(b, 3), "n_star": fmt_bytes,
                 "rms": fmt_pct},
        labels={lang: {k: v[lang] for k, v in _MODEL.items()} for lang in ("en", "zh")},
        notes=bilingual_notes(
            (f"Nominal link: {link_name(nom, 'en')} from Table 1. Fits: least squares on relative errors, "
             f"{len(c['sizes'])} sizes from {fmt_bytes(c['sizes'].min(), binary=True)} to {fmt_bytes(c['sizes'].max(), binary=True)}, "
             f"{c['placement'].replace('_', '-')} times.",
             f"标称链路：表 1 的 {link_name(nom, 'zh')}。拟合：按相对误差做最小二乘，{len(c['sizes'])} 个大小，"
             f"从 {fmt_bytes(c['sizes'].min(), binary=True)} 到 {fmt_bytes(c['sizes'].max(), binary=True)}，用 "
             f"{c['placement'].replace('_', '-')} 的时间。"),
        ),
    )


_RECORD = [
    ("op", bilingual("collective", "集合操作")),
    ("dtype", bilingual("reduction data type", "归约的数据类型")),
    ("ranks", bilingual("ranks", "rank 数")),
    ("sizes", bilingual("tensor sizes", "张量大小")),
    ("algo", bilingual("algorithm and protocol", "算法与协议")),
    ("topology", bilingual("topology", "拓扑")),
    ("placement", bilingual("placement of the ranks", "rank 的布置")),
    ("busbw", bilingual("achieved bus bandwidth", "实际达到的总线带宽")),
    ("library", bilingual("library version", "通信库版本")),
]


def log_record_table(cal: dict | None = None) -> Table:
    """What a calibration must record (the fields of :data:`_RECORD`), and what the log
    actually records; ``meta["missing"]`` lists the fields it does not say."""
    c = calibration() if cal is None else cal
    run = c["run"]
    hosts = sorted({d.host for d in run.devices})
    gpus = sorted({d.name for d in run.devices})
    per_host = len(run.devices) // max(len(hosts), 1)
    algo = run.parameters.get("NCCL_ALGO") or run.parameters.get("algo")
    one_to_one = bool(run.devices) and all(d.rank == d.device for d in run.devices)
    text = {
        "v_topology": bilingual(f"{len(hosts)} host × {per_host} {', '.join(gpus)} (the links are not printed)",
                              f"{len(hosts)} 台主机 × {per_host} 块 {', '.join(gpus)}（链路本身没有打印）"),
        "v_placement": bilingual(f"rank r on device r of {', '.join(hosts)}" if one_to_one else
                               "one line per rank (host, device, bus id)",
                               f"rank r 在 {', '.join(hosts)} 的第 r 块设备上" if one_to_one else
                               "每个 rank 一行（主机、设备、总线号）"),
        "v_busbw": bilingual(f"per size; average {fmt_rate(run.avg_busbw, 3)}" if run.avg_busbw else "per size",
                           f"逐个大小都有；平均 {fmt_rate(run.avg_busbw, 3)}" if run.avg_busbw else "逐个大小都有"),
        "v_absent": bilingual("not recorded", "未记录"),
    }
    values = {
        "op": run.test or run.collective,
        "dtype": f"{run.rows[0].dtype} / {run.rows[0].redop}",
        "ranks": str(run.nranks),
        "sizes": f"{fmt_bytes(c['sizes'].min(), binary=True)} – {fmt_bytes(c['sizes'].max(), binary=True)}",
        "algo": algo,
        "topology": "v_topology" if run.devices else None,
        "placement": "v_placement" if run.devices else None,
        "busbw": "v_busbw" if run.rows[0].timing(c["placement"]).busbw is not None else None,
        "library": f"NCCL {run.nccl_version}" if run.nccl_version else None,
    }
    missing = [k for k, v in values.items() if v is None]
    rows = [{"field": k, "value": "v_absent" if values[k] is None else values[k]} for k, _ in _RECORD]
    return Table(
        key="ch1-record",
        title=bilingual("What to record, and what the log holds", "该记录什么，日志里又记了什么"),
        columns=["field", "value"],
        headers={"en": ["Field", "In the log"], "zh": ["字段", "日志中的记录"]},
        rows=rows,
        labels={lang: {**{k: v[lang] for k, v in _RECORD}, **{k: v[lang] for k, v in text.items()}}
                for lang in ("en", "zh")},
        meta={"missing": missing},
    )
