"""The page "Measuring collectives" (``chapters/*/measure/measuring.md``): the recorded
sweeps as :class:`Curve` objects, the ring fits (:func:`commbook.measure.fit`), and the
tables of the page.  Every number comes from the files of ``code/commbook/data/measured/``: the gloo
records through :func:`commbook.measure.points.load`, the public nccl-tests logs through
:func:`commbook.measure.load_log`.  Figures are in :mod:`.measuring_figures`, the model
comparison (α–β fit against the NCCL-style predictor) in :mod:`.measuring_models`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import numpy as np

from .. import physics
from ..measure import fitting as _fit
from ..measure import load_log
from ..measure.points import DATA_DIR, load
from ..units import MiB, fmt_bytes, fmt_rate, fmt_ratio
from .tables import Table
from .text import texts

T = texts("measure")

__all__ = ["H100_LOG", "A100_LOG", "AZURE_LOG", "NVIDIA", "GLOO", "GLOO_P", "GLOO_OPS", "GLOO_FIT_MAX",
           "Curve", "curve", "log_run", "system_name", "coll_name", "size_text", "size_range", "wire_rate",
           "gloo_repeats",
           "Spread", "gloo_spread", "fit_curve", "FIT_CASES", "fits", "gloo_table", "logs_table", "fit_table"]

H100_LOG = "h100x8_nvswitch_nccl2.29.2_nccl-tests.log"
A100_LOG = "a100x8_nvswitch_nccl-tests_allreduce.txt"
AZURE_LOG = "azure_nd_h100_v5_allreduce_busbw.md"

NVIDIA = {"h100": H100_LOG, "azure": AZURE_LOG, "a100": A100_LOG}
"""The public nccl-tests logs (``code/commbook/data/measured/nccl-tests/``, see its PROVENANCE.md)."""
GLOO = {"gloo16": DATA_DIR / "gloo" / "cpu16", "gloo2": DATA_DIR / "gloo"}
"""Our gloo records: 16 idle cores, and the 2-core machine shared with other jobs."""
GLOO_P = (2, 3, 4)
GLOO_OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "send_recv")
GLOO_FIT_MAX = 16 * MiB
"""The gloo fits stop at 16 MiB: at 64 MiB all-gather and reduce-scatter leave the α–β regime
(copies and allocations of the whole buffer; PROVENANCE.md of the gloo set)."""

_WIRE = {"h100": "NVLink 4.0", "azure": "NVLink 4.0", "a100": "NVLink 3.0"}
_COLL = {"all_reduce": "all-reduce", "all_gather": "all-gather", "reduce_scatter": "reduce-scatter",
         "all_to_all": "all-to-all", "broadcast": "broadcast", "send_recv": "send/recv"}


def coll_name(collective: str) -> str:
    """``all_reduce`` → ``all-reduce`` (the same in both languages)."""
    return _COLL[collective]


def size_text(n: float) -> str:
    """A size as the tables print it: binary units for powers of two, bytes otherwise
    (gloo's p = 3 sweeps have sizes such as 1008 B)."""
    n = float(n)
    if n >= 1024 and math.log2(n).is_integer():
        return fmt_bytes(n, binary=True)
    return f"{n:,.0f} B"


def size_range(sizes) -> str:
    """The first and last of ``sizes`` as the tables print them: "lo – hi".

    >>> size_range([1024, 2 ** 30])
    '1 KiB – 1 GiB'
    """
    return f"{size_text(sizes[0])} – {size_text(sizes[-1])}"


def wire_rate(system: str) -> float | None:
    """One-direction NVLink bandwidth per GPU of an NVIDIA system (bytes/s), from
    :data:`commbook.physics.GENERATIONS`; ``None`` for gloo."""
    return physics.generation(_WIRE[system]).beta if system in _WIRE else None


@dataclass(frozen=True)
class Curve:
    """One measured sweep: ``collective`` on ``p`` ranks of ``system``; sizes (B, nccl-tests'
    convention), times (s) and busbw (B/s) of the placement the source prints first;
    ``fit``: its ring fit (:func:`fit_curve`, computed once)."""

    system: str
    collective: str
    p: int
    sizes: np.ndarray
    times: np.ndarray
    busbw: np.ndarray
    placement: str
    source: str
    version: str | None = None

    def name(self, lang: str) -> str:
        return system_name(self.system, lang, self.version)

    @cached_property
    def fit(self) -> _fit.Fit:
        return fit_curve(self)


def system_name(system: str, lang: str, version: str | None = None) -> str:
    """The system's name in ``lang``; NVIDIA names carry the NCCL version of their log."""
    text = T.get(f"measuring.name.{system}", lang)
    if "{v}" in text:
        if version is None:
            version = log_run(system, "all_reduce").nccl_version
        text = text.format(v=version)
    return text


def log_run(system: str, collective: str):
    """The first ``collective`` run of the log of NVIDIA ``system`` (a parsed
    :class:`commbook.measure.Run`)."""
    runs = [r for r in load_log(NVIDIA[system]) if r.collective == collective]
    if not runs:
        raise ValueError(f"{NVIDIA[system]} has no {collective} run")
    return runs[0]


def curve(system: str, collective: str = "all_reduce", p: int | None = None) -> Curve:
    """The sweep of ``collective`` in ``system`` (``h100``, ``azure``, ``a100``, or ``gloo16`` /
    ``gloo2`` with ``p`` in 2, 3, 4)."""
    if system in NVIDIA:
        run = log_run(system, collective)
        pl = run.placements[0]
        return Curve(system, collective, run.nranks, run.sizes(), run.times(pl), run.column("busbw", pl),
                     pl, NVIDIA[system], run.nccl_version)
    if system not in GLOO:
        raise ValueError(f"unknown system {system!r}; known: {', '.join([*NVIDIA, *GLOO])}")
    if p not in GLOO_P:
        raise ValueError(f"gloo sweeps have p in {GLOO_P}, got {p!r}")
    m = load(f"gloo_p{p}_{collective}", GLOO[system])
    pl = "in_place" if m.conditions.get("in_place") else "out_of_place"
    arr = lambda attr: np.array([getattr(pt, attr) for pt in m.points], dtype=float)
    return Curve(system, collective, m.ranks, arr("bytes"), arr("time"), arr("busbw"), pl,
                 str(Path(m.path).relative_to(DATA_DIR.parent.parent)))


def gloo_repeats(system: str, p: int, collective: str) -> np.ndarray:
    """The five repeated times (s) of every size of a gloo record: shape (sizes, repeats)."""
    raw = json.loads((GLOO[system] / f"gloo_p{p}_{collective}.json").read_text(encoding="utf-8"))
    return np.array([pt["time_s_repeats"] for pt in raw["points"]], dtype=float)


@dataclass(frozen=True)
class Spread:
    """Slowest over fastest repeat of every point of a gloo machine (18 records × 9 sizes):
    the median, the 90th percentile and the largest; and each record's median time at its
    smallest size."""

    points: int
    median_x: float
    p90_x: float
    max_x: float
    small_s: tuple[float, ...]


def gloo_spread(system: str) -> Spread:
    """:class:`Spread` of the gloo records of ``system`` (``gloo16`` or ``gloo2``).

    >>> gloo_spread("gloo16").points
    162
    """
    ratios, small = [], []
    for p in GLOO_P:
        for op in GLOO_OPS:
            r = gloo_repeats(system, p, op)
            ratios.extend(r.max(axis=1) / r.min(axis=1))
            small.append(float(curve(system, op, p).times[0]))
    ratios = np.array(ratios)
    return Spread(int(ratios.size), float(np.median(ratios)), float(np.percentile(ratios, 90)), float(ratios.max()),
                  tuple(small))


def fit_curve(c: Curve, algorithm: str = "ring") -> _fit.Fit:
    """The ``algorithm`` closed form of the curve's collective fitted to its times
    (:func:`commbook.measure.fit`, relative least squares); gloo sweeps up to
    :data:`GLOO_FIT_MAX`, the logs over every size."""
    keep = c.sizes <= (GLOO_FIT_MAX if c.system in GLOO else math.inf)
    return _fit.fit(c.sizes[keep], c.times[keep], c.collective, algorithm, c.p)


FIT_CASES: tuple[tuple[str, str, int | None], ...] = (
    *[("h100", op, None) for op in ("all_reduce", "all_gather", "reduce_scatter")],
    ("azure", "all_reduce", None), ("a100", "all_reduce", None),
    *[("gloo16", op, p) for op in ("all_reduce", "all_gather", "reduce_scatter") for p in GLOO_P],
    *[("gloo2", "all_reduce", p) for p in GLOO_P],
)
"""The (system, collective, p) of the fit table."""


@cache
def fits(cases=FIT_CASES) -> dict[tuple[str, str, int], Curve]:
    """``{(system, collective, p): Curve}`` for ``cases`` (``p`` of the logs is their rank
    count), each with its ring fit (``Curve.fit``); computed once.

    >>> fits()[("h100", "all_reduce", 8)].fit.beta > 450e9     # above the NVLink rate (NVLS)
    True
    """
    curves = [curve(system, op, p) for system, op, p in cases]
    return {(c.system, c.collective, c.p): c for c in curves}


def _sys_labels() -> dict:
    return {lang: {s: system_name(s, lang) for s in (*NVIDIA, *GLOO)} for lang in ("en", "zh")}


# ============================================================================ tables
def gloo_table() -> Table:
    """Every gloo record on both machines: the time at the smallest size and at 1 MiB, and
    busbw at the largest size (64 MiB); the note gives the repeat spread of each machine."""
    rows = []
    for op in GLOO_OPS:
        for p in GLOO_P:
            c16, c2 = curve("gloo16", op, p), curve("gloo2", op, p)
            assert np.array_equal(c16.sizes, c2.sizes)
            mid = int(np.argmin(np.abs(np.log2(c16.sizes / MiB))))
            rows.append({"op": coll_name(op), "collective": op, "p": p, "n_small": c16.sizes[0],
                         "n_mid": c16.sizes[mid], "n_big": c16.sizes[-1],
                         "small16_s": c16.times[0], "small2_s": c2.times[0], "mid16_s": c16.times[mid],
                         "mid2_s": c2.times[mid], "bus16_Bps": c16.busbw[-1], "bus2_Bps": c2.busbw[-1]})
    s16, s2 = gloo_spread("gloo16"), gloo_spread("gloo2")
    x = lambda r: fmt_ratio(r, 3)
    columns = ["op", "p", "small16_s", "small2_s", "mid16_s", "mid2_s", "bus16_Bps", "bus2_Bps"]
    return Table(
        key="measure-gloo",
        title=T("measuring.gloo.title"),
        columns=columns,
        headers=T.pairs("measuring.col.op", "measuring.col.p",
                        *(f"measuring.gloo.{c}" for c in ("t_small16", "t_small2", "t_mid16", "t_mid2", "bus16", "bus2"))),
        rows=rows,
        formats=dict.fromkeys(columns[2:], 3),
        notes={lang: [T.get("measuring.gloo.note_times", lang),
                      T.get("measuring.gloo.note_spread", lang, n=s16.points, med16=x(s16.median_x), med2=x(s2.median_x),
                            p90_16=x(s16.p90_x), p90_2=x(s2.p90_x))] for lang in ("en", "zh")},
    )


def logs_table() -> Table:
    """The public logs: per system and collective the sizes, busbw at both ends, the peak,
    and the peak over the NVLink wire rate of the GPU."""
    rows = []
    for system in NVIDIA:
        for run in load_log(NVIDIA[system]):
            c = curve(system, run.collective)
            wire = wire_rate(system)
            rows.append({"system": system, "op": coll_name(c.collective), "collective": c.collective,
                         "p": c.p, "count": len(c.sizes), "range": size_range(c.sizes),
                         "n_min": c.sizes[0], "n_max": c.sizes[-1], "small_Bps": c.busbw[0],
                         "big_Bps": c.busbw[-1], "peak_Bps": float(c.busbw.max()), "wire": wire,
                         "peak_wire_frac": float(c.busbw.max()) / wire, "placement": c.placement})
    return Table(
        key="measure-logs",
        title=T("measuring.logs.title"),
        columns=["system", "op", "count", "range", "small_Bps", "big_Bps", "peak_Bps", "peak_wire_frac"],
        headers=T.pairs("measuring.col.system", "measuring.col.op",
                        *(f"measuring.logs.{c}" for c in ("count", "range", "bus_small", "bus_big", "peak", "peak_wire"))),
        rows=rows,
        formats={"small_Bps": 3, "big_Bps": 3, "peak_Bps": 3},
        labels=_sys_labels(),
        notes=T.pairs("measuring.logs.note", h100=fmt_rate(wire_rate("h100"), 3), a100=fmt_rate(wire_rate("a100"), 3)),
    )


def fit_table() -> Table:
    """α, β (the ring's closed form, :func:`fit_curve`), αβ and the relative residuals of
    every case of :func:`fits`."""
    rows = []
    for (system, op, p), c in fits().items():
        f = c.fit
        rows.append({"system": system, "op": coll_name(op), "collective": op, "p": p, "range": size_range(sorted(f.sizes)),
                     "alpha_s": f.alpha, "beta_Bps": f.beta, "n_half_bytes": f.n_half, "rms_frac": f.rms_rel,
                     "max_frac": f.max_rel})
    return Table(
        key="measure-fits",
        title=T("measuring.fits.title"),
        columns=["system", "op", "p", "range", "alpha_s", "beta_Bps", "n_half_bytes", "rms_frac", "max_frac"],
        headers=T.pairs("measuring.col.system", "measuring.col.op", "measuring.col.p",
                        *(f"measuring.fits.{c}" for c in ("range", "alpha", "beta", "n_half", "rms", "max"))),
        rows=rows,
        formats={"alpha_s": 3, "beta_Bps": 3},
        labels=_sys_labels(),
        notes=T.pairs("measuring.fits.note", upto=size_text(GLOO_FIT_MAX)),
    )
