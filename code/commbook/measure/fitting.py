r"""Fit effective α and β to measured collective times.

Like must be fitted to like.  A ring all-reduce of n bytes on p ranks takes
:math:`2(p-1)\alpha + 2\frac{p-1}{p}\frac{n}{\beta}`; fitting the point-to-point
:math:`T = \alpha' + n/\beta'` to it "finds" :math:`\alpha' = 2(p-1)\alpha` and
:math:`\beta' = \beta\,p/(2(p-1))` — a start-up 14× too large and a bandwidth 43 % too small
at p = 8, from perfect data.  :func:`fit` therefore fits the closed form of the collective
and algorithm that ran, on its own coefficients:

.. math:: T_i = a(p, n_i)\,\alpha + b(p, n_i)\,\frac{1}{\beta}

where :math:`a` and :math:`b` are read off the registry's closed form by
:func:`commbook.collectives.coefficients` (the one reading of a closed form's
coefficients): :math:`a` its α count, :math:`b` its bandwidth factor times :math:`n`.  For
the ring, :math:`a = 2(p-1)` and :math:`b = 2(p-1)n/p`.  The form must be linear in α and
n/β; :func:`model_coefficients` raises ``ValueError`` for one that is not.

Weighting: least squares on the *relative* error :math:`(T_i - \hat T_i)/T_i`.  The sizes
of an nccl-tests sweep span 6 decades and so do the times (30 µs to 60 ms); on absolute
errors the largest size would decide both parameters, a microsecond error at 1 KB would
weigh 10⁻⁶ of one at 1 GB, and α — which only shows at small sizes — would be whatever the
large sizes leave over.  Measurement noise is multiplicative too (a few per cent of the
time at every size), so relative errors are also the homoscedastic choice.  ``weighting=
"absolute"`` is available for comparison.

The result, :class:`Fit`, carries α, β, the relative residuals, their RMS and maximum, and
:math:`R^2` of the log times (on raw times over six decades :math:`R^2` is ≈1 for any
model that gets the largest point right).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_p, check_real, check_sizes
from ..collectives import coefficients, names
from .records import Run, with_collective

__all__ = ["Fit", "model_coefficients", "fit", "fit_point_to_point", "fit_run"]



@dataclass(frozen=True)
class Fit:
    """Effective α (s) and β (bytes/s) of a least-squares fit, and how well it fits.

    ``residuals`` are relative, (measured − model)/measured, one per point.  ``beta`` is
    ``inf`` when the fitted 1/β is not positive (the data show no bandwidth term), and
    ``alpha`` may come out negative when the sizes do not reach the latency-bound range:
    both are reported as fitted, and ``warnings`` says so.

    >>> from commbook.collectives import predict
    >>> ns = [1e3 * 2 ** k for k in range(21)]
    >>> f = fit(ns, [predict("all_reduce", "ring", 8, n, 5e-6, 50e9) for n in ns], "all_reduce", "ring", 8)
    >>> round(f.n_half), f.rms_rel < 1e-12, f.warnings   # αβ = 5 µs x 50 GB/s
    (250000, True, ())
    """

    alpha: float
    beta: float
    inv_beta: float
    model: str
    sizes: np.ndarray
    times: np.ndarray
    predicted: np.ndarray
    residuals: np.ndarray
    rms_rel: float
    max_rel: float
    r2_log: float
    weighting: str
    warnings: tuple[str, ...] = ()

    @property
    def n_half(self) -> float:
        """αβ, the half-bandwidth size of the fitted link (bytes)."""
        return self.alpha * self.beta

    def __repr__(self) -> str:
        return (f"Fit({self.model}: alpha={self.alpha * 1e6:.4g} us, beta={self.beta / 1e9:.4g} GB/s, "
                f"rms_rel={self.rms_rel:.3g}, max_rel={self.max_rel:.3g}, r2_log={self.r2_log:.6f})")


def _row(xs, name: str) -> list:
    """A 1-D sequence as a list (not a string, not 2-D)."""
    a = np.asarray(xs, dtype=object) if not isinstance(xs, np.ndarray) else xs
    if a.ndim != 1 or isinstance(xs, (str, bytes)):
        raise TypeError(f"{name} must be a 1-D sequence of numbers, got {type(xs).__name__}")
    return a.tolist()


def _arrays(sizes, times) -> tuple[np.ndarray, np.ndarray]:
    n = check_sizes(sizes)
    t = np.array([check_real(x, f"times[{i}]", "a time in seconds") for i, x in enumerate(_row(times, "times"))])
    if n.size != t.size:
        raise ValueError(f"sizes has {n.size} values but times has {t.size}")
    if n.size < 2:
        raise ValueError(f"need at least 2 points to fit 2 parameters, got {n.size}")
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise ValueError("times must be finite and > 0 seconds")
    if np.unique(n).size < 2:
        raise ValueError("sizes must contain at least 2 distinct values")
    return n, t


def model_coefficients(collective: str, algorithm: str, p: int, sizes) -> tuple[np.ndarray, np.ndarray]:
    """Coefficients (a, b) with T(n) = a·α + b/β for the registry's closed form at each size:
    a = alpha_steps and b = beta_bytes_per_byte·n of :func:`commbook.collectives.coefficients`,
    which raises ``ValueError`` for a form that is not linear in α and n/β.

    The ring all-reduce on 8 ranks: a = 2(p − 1) = 14, b = 2(p − 1)n/p = 1.75 n:

    >>> a, b = model_coefficients("all_reduce", "ring", 8, [0, 1e6])
    >>> a.tolist(), b.tolist()
    ([14.0, 14.0], [0.0, 1750000.0])
    """
    p, n = check_p(p), check_sizes(sizes)
    c = coefficients(collective, algorithm, p)
    return np.full(len(n), c.alpha_steps), c.beta_bytes_per_byte * np.asarray(n, dtype=float)


def _solve(a: np.ndarray, b: np.ndarray, n: np.ndarray, t: np.ndarray, model: str, weighting: str) -> Fit:
    if weighting not in ("relative", "absolute"):
        raise ValueError(f"weighting must be 'relative' or 'absolute', got {weighting!r}")
    w = 1.0 / t if weighting == "relative" else np.ones_like(t)
    design = np.column_stack([a * w, b * w])
    if np.linalg.matrix_rank(design) < 2:
        raise ValueError("the latency and bandwidth terms are proportional at these sizes: "
                         "alpha and beta cannot be separated (give sizes of more than one magnitude)")
    (alpha, inv_beta), *_ = np.linalg.lstsq(design, t * w, rcond=None)
    alpha, inv_beta = float(alpha), float(inv_beta)
    pred = a * alpha + b * inv_beta
    res = (t - pred) / t
    warnings = []
    if inv_beta <= 0:
        warnings.append("fitted 1/beta <= 0: the data show no bandwidth term; beta reported as inf")
    if alpha < 0:
        warnings.append("fitted alpha < 0: the sizes do not reach the latency-bound range, or the "
                        "closed form does not describe the run")
    with np.errstate(divide="ignore", invalid="ignore"):
        lp = np.log(np.where(pred > 0, pred, np.nan))
    lt = np.log(t)
    ss_tot = float(np.sum((lt - lt.mean()) ** 2))
    if np.isnan(lp).any():
        r2 = math.nan
        warnings.append("the fitted model predicts a time <= 0 at some size: r2_log undefined")
    else:
        r2 = 1.0 - float(np.sum((lt - lp) ** 2)) / ss_tot if ss_tot > 0 else math.nan
    return Fit(alpha=alpha, beta=1.0 / inv_beta if inv_beta > 0 else math.inf, inv_beta=inv_beta,
               model=model, sizes=n, times=t, predicted=pred, residuals=res,
               rms_rel=float(np.sqrt(np.mean(res ** 2))), max_rel=float(np.max(np.abs(res))),
               r2_log=r2, weighting=weighting, warnings=tuple(warnings))


def fit(sizes, times, collective: str, algorithm: str, p: int, weighting: str = "relative") -> Fit:
    """Fit effective α and β of ``collective`` by ``algorithm`` on ``p`` ranks to measured
    ``times`` (s) at ``sizes`` (bytes, with the registry's size convention — the one
    nccl-tests prints), on the closed form's own coefficients (see the module docstring).

    >>> from commbook.collectives import predict
    >>> ns = [1e3 * 2 ** k for k in range(21)]
    >>> ts = [predict("all_reduce", "ring", 8, n, 5e-6, 50e9) for n in ns]
    >>> f = fit(ns, ts, "all_reduce", "ring", 8)
    >>> round(f.alpha * 1e6, 9), round(f.beta / 1e9, 9)
    (5.0, 50.0)
    """
    n, t = _arrays(sizes, times)
    if check_p(p) < 2:
        raise ValueError(f"p must be >= 2 to fit a collective (one rank moves nothing), got {p!r}")
    a, b = model_coefficients(collective, algorithm, p, n)
    return _solve(a, b, n, t, f"{collective}/{algorithm}, p={check_p(p)}", weighting)


def fit_point_to_point(sizes, times, weighting: str = "relative") -> Fit:
    """Fit the point-to-point α–β model T = α + n/β to ``times`` at ``sizes``.

    On collective data this is the wrong model: on a ring all-reduce it returns
    2(p−1)α and β·p/(2(p−1)) — see the module docstring.

    A perfect fit to an 8-rank ring at α = 5 µs, β = 50 GB/s, with the wrong meaning:
    α' = 14α, β' = 50 · 8/14 GB/s:

    >>> from commbook.collectives import predict
    >>> ns = [1e3 * 2 ** k for k in range(21)]
    >>> f = fit_point_to_point(ns, [predict("all_reduce", "ring", 8, n, 5e-6, 50e9) for n in ns])
    >>> round(f.alpha * 1e6, 6), round(f.beta / 1e9, 4), f.max_rel < 1e-12
    (70.0, 28.5714, True)
    """
    n, t = _arrays(sizes, times)
    return _solve(np.ones_like(n), n, n, t, "point-to-point", weighting)


def fit_run(run: Run, algorithm: str | None = None, p: int | None = None, placement: str | None = None,
            min_size: float = 0.0, max_size: float = math.inf, weighting: str = "relative", *,
            collective: str | None = None) -> Fit:
    """Fit a parsed nccl-tests :class:`~commbook.measure.records.Run`: its collective
    by ``algorithm`` (default: ``ring`` where the collective has one, else its first
    algorithm with a closed form; send/recv is fitted point to point) on ``p`` ranks
    (default: the run's own rank count), using the times
    of ``placement`` (default: the first the table prints) for sizes in
    [``min_size``, ``max_size``].  Busbw-only tables use times derived from busbw.

    ``collective`` names the collective of a run whose log does not (a table pasted without
    its ``all_reduce_perf`` line); an unknown name, or one that contradicts the log's own,
    raises ``ValueError`` naming ``collective``::

        >>> from commbook.measure import parse_nccl_tests
        >>> run, = parse_nccl_tests('''
        ... #     size    count  type redop root   time  algbw  busbw #wrong
        ...       1024      256 float   sum   -1  28.00   0.04   0.06      0
        ...    1048576   262144 float   sum   -1  40.00  26.21  45.88      0
        ...  268435456 67108864 float   sum   -1 1900.0 141.28 247.25      0
        ... ''', nranks=8)
        >>> fit_run(run, collective="all_reduce").model
        'all_reduce/ring, p=8'
    """
    if not isinstance(run, Run):
        raise TypeError(f"run must be a commbook.measure.records.Run, got {type(run).__name__}")
    run = with_collective(run, collective)
    if run.collective is None:
        raise ValueError("the run does not say which collective it measured: pass collective= "
                         "(e.g. collective='all_reduce')")
    p = run.nranks if p is None else p
    if p is None:
        raise ValueError("the run does not say how many ranks it used: pass p=")
    n, t = run.sizes(), run.times(placement)
    keep = (n >= min_size) & (n <= max_size)
    if run.collective == "send_recv":
        return fit_point_to_point(n[keep], t[keep], weighting)
    if algorithm is None:
        closed = names(run.collective, with_closed_form=True)
        algorithm = "ring" if "ring" in closed else closed[0]
    return fit(n[keep], t[keep], run.collective, algorithm, p, weighting)
