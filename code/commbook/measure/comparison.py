"""A prediction of collective times per size, and its comparison with a measured run.

:class:`Prediction` is what :func:`.nccl_model.predict_nccl` (one node) and
:func:`.nccl_cluster.predict_nccl` (many) return; :func:`compare_predicted` sets one against
a parsed nccl-tests :class:`~commbook.measure.records.Run` and against an α–β ring fit
(:func:`.fitting.fit_run`), in a :class:`Comparison` whose bands and targets
(:data:`TARGETS`, :data:`WORST_TARGET`) are those ``benchmarks/accuracy.py`` reports.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ..bandwidth import BUSBW_FACTORS
from ..units import MiB
from .fitting import Fit, fit_run
from .records import Run

__all__ = ["Prediction", "TARGETS", "WORST_TARGET", "Comparison", "compare_predicted"]


@dataclass(frozen=True)
class Prediction:
    """Per size: time (s), busbw (bytes/s, nccl-tests' definition), NCCL's pick and channels.

    16 GiB on 8 x H100: NVLS on its 16 channels, 476 GB/s of busbw (482 measured):

    >>> from commbook.measure.nccl_model import H100_8, predict_nccl
    >>> p = predict_nccl(H100_8, "all_reduce", [2**34])
    >>> p.algo, p.channels, round(float(p.busbw[0]) / 1e9, 1)
    (('nvls',), (16,), 475.8)
    """

    collective: str
    sizes: np.ndarray
    time: np.ndarray
    busbw: np.ndarray
    algo: tuple[str, ...]
    proto: tuple[str, ...]
    channels: tuple[int, ...]
    overhead: float


TARGETS = {">= 1 MiB": 0.10, "< 1 MiB": 0.25}
"""Median absolute relative busbw error the predictor should reach per log and collective."""
WORST_TARGET = 0.25
"""The largest ``|busbw error|`` the predictor may have at any size >= 1 MiB of a log."""


@dataclass(frozen=True)
class Comparison:
    """A run against the prediction and against an α–β ring fit.

    ``errors`` (the predictor), ``nccl_errors`` (NCCL's own model time: full channels, no
    overhead) and ``fit_errors`` are relative busbw errors, predicted/measured − 1 (= measured
    time / predicted time − 1).  ``calibrated_at`` is the size the overhead was read at
    (``None`` if it was given or zero); :meth:`median` leaves that size out.

    The recorded 8 x A100 log misses the 10 % target (15.2 %; the ring fit: 11.1 %):

    >>> from commbook.measure import load_log
    >>> from commbook.measure.nccl_model import A100_8, compare
    >>> c = compare(load_log("a100x8_nvswitch_nccl-tests_allreduce.txt")[0], A100_8)
    >>> c.calibrated_at, round(c.median(">= 1 MiB"), 3), round(c.median(">= 1 MiB", of="fit"), 3), c.status(">= 1 MiB")
    (32768.0, 0.152, 0.111, 'MISS')
    """

    collective: str
    sizes: np.ndarray
    measured: np.ndarray
    prediction: Prediction
    errors: np.ndarray
    fit: Fit
    fit_errors: np.ndarray
    nccl_errors: np.ndarray
    overhead: float
    calibrated_at: float | None
    notes: tuple[str, ...] = field(default=())

    def band(self, band: str) -> np.ndarray:
        """Mask of the sizes in ``band`` (a key of :data:`TARGETS`), calibration size excluded."""
        if band not in TARGETS:
            raise ValueError(f"unknown band {band!r}; valid: {', '.join(TARGETS)}")
        mask = self.sizes >= MiB if band == ">= 1 MiB" else self.sizes < MiB
        return mask & (self.sizes != self.calibrated_at) if self.calibrated_at is not None else mask

    def median(self, band: str, of: str = "model") -> float:
        """Median ``|error|`` of the predictor (``of="model"``), the ring fit (``"fit"``) or NCCL's
        own time (``"nccl"``) in ``band``; NaN when the run has no size there."""
        errors = {"model": self.errors, "fit": self.fit_errors, "nccl": self.nccl_errors}
        if of not in errors:
            raise ValueError(f"of must be one of {', '.join(errors)}, got {of!r}")
        e = errors[of][self.band(band)]
        return float(np.median(np.abs(e))) if e.size else math.nan

    def worst(self, band: str) -> float:
        """Largest ``|error|`` of the predictor in ``band``; NaN when the run has no size there."""
        e = self.errors[self.band(band)]
        return float(np.max(np.abs(e))) if e.size else math.nan

    def status(self, band: str) -> str:
        """``PASS``/``MISS`` of the predictor against :data:`TARGETS` (the median) and, at
        >= 1 MiB, :data:`WORST_TARGET` (the worst size); ``""`` for an empty band."""
        if not self.band(band).any():
            return ""
        ok = self.median(band) <= TARGETS[band] and (band != ">= 1 MiB" or self.worst(band) <= WORST_TARGET)
        return "PASS" if ok else "MISS"


def compare_predicted(run: Run, nranks: int, what: str, check_collective, predicted, placement: str | None,
                      overhead: float | str) -> Comparison:
    """:func:`.nccl_model.compare` and :func:`.nccl_cluster.compare`: check ``run`` (a collective that
    ``check_collective`` accepts, on ``nranks`` ranks of ``what``), then set
    ``predicted(collective, sizes, overhead, runtime=True)`` against its times.

    >>> import functools
    >>> from commbook.measure import load_log
    >>> from commbook.measure.nccl_model import H100_8, predict_nccl
    >>> run = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0]
    >>> compare_predicted(run, 16, "the cluster", str, functools.partial(predict_nccl, H100_8), None, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: the run has 8 ranks, the cluster 16 GPUs
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be a commbook.measure.records.Run, got {type(run).__name__}")
    if run.collective is None:
        raise ValueError("the run does not say which collective it measured")
    c = check_collective(run.collective)
    if run.nranks != nranks:
        raise ValueError(f"the run has {run.nranks} ranks, {what} {nranks} GPUs")
    predicted = functools.partial(predicted, c)
    n, t = run.sizes(), run.times(placement)
    notes, at = [], None
    if overhead == "auto":
        k = int(np.argmin(n))
        overhead = 0.0
        if n[k] < MiB:
            overhead, at = max(0.0, float(t[k] - predicted(n[k:k + 1], 0.0).time[0])), float(n[k])
            notes.append(f"overhead read at the smallest size, {n[k]:.0f} B")
    pred = predicted(n, overhead)
    f = fit_run(run, placement=placement)
    own = predicted(n, 0.0, runtime=False).time
    return Comparison(c, n, BUSBW_FACTORS[c](run.nranks) * n / t, pred, t / pred.time - 1.0, f,
                      t / f.predicted - 1.0, t / own - 1.0, float(overhead), at, tuple(notes))
