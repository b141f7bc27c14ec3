r"""Error feedback (chapter §1.6.3, Definition 1.4) as a wrapper around any operator of
:mod:`commbook.compression.operators`, and the exact per-step trace of Tables 3 and 4.

Each worker keeps a residual e (e₁ = 0) and, at step t, compresses g_t + e_t instead of
g_t; what the compressor dropped is carried to the next step::

    v_t = decode(encode(g_t + e_t)),      e_{t+1} = g_t + e_t − v_t.

Summing over steps telescopes: Σ_{t≤T} v_t = Σ_{t≤T} g_t + e₁ − e_{T+1}, so whatever was
not sent is still in e.

**Why the trace is exact.**  The chapter's inputs are decimals (0.4, 0.3, 0.2, 0.4,
0.3) and its compressor compares against 0.5.  In binary floating point 0.4 − 1 + 0.3 …
drifts by ulps, and a sum that should be exactly 0.5 (step 5 of Checkpoint 1.4's
steady state: e = 0.2, g = 0.3) can land a hair below it and flip the decision.  So
:func:`ef_trace` reads each input by its decimal text (a float by its shortest
``repr``, which is what the chapter printed) into :class:`fractions.Fraction` and does
all arithmetic in rationals: every e, v and running sum is the exact number the
chapter's table means, and the telescoping identity holds with ``==``.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..checks import as_value_error, check_int
from .operators import Compressor, Payload, Threshold

__all__ = ["ErrorFeedback", "TraceRow", "ef_trace", "exact", "decimal_text", "SteadyState",
           "steady_state"]


class ErrorFeedback:
    """Wrap ``compressor`` with a residual: :meth:`step` compresses g + e, returns the
    payload and its decode v, and keeps e ← g + e − v.  Works with float arrays and
    with object arrays of Fraction (when the operator does: :class:`Threshold`).

    The operator must be contractive: an unbiased random-k scaled by d/k decodes to
    vectors larger than its input, so the residual grows every step and training
    diverges (Stich et al. 2018 use random-k *without* the rescaling under memory).
    Such operators are refused unless ``allow_noncontractive=True``.

    Top-50 % keeps the two largest magnitudes and carries the rest, which the next
    step sends:

    >>> from commbook.compression.operators import TopK
    >>> ef = ErrorFeedback(TopK(0.5))
    >>> ef.step([3.0, -1.0, 0.5, 2.0])[1].tolist(), ef.error.tolist()
    ([3.0, 0.0, 0.0, 2.0], [0.0, -1.0, 0.5, 0.0])
    >>> ef.step([0.0, 0.0, 0.0, 0.0])[1].tolist()
    [0.0, -1.0, 0.5, 0.0]
    """

    def __init__(self, compressor: Compressor, *, allow_noncontractive: bool = False):
        if not isinstance(compressor, Compressor):
            raise TypeError(f"compressor must be a commbook.compression Compressor, got {type(compressor).__name__}")
        if not compressor.contractive and not allow_noncontractive:
            raise ValueError(f"{compressor.name} is not contractive (it rescales what it keeps): error "
                             "feedback diverges with it; use it without feedback (it is unbiased), or pass "
                             "allow_noncontractive=True to watch it diverge")
        self.compressor = compressor
        self.error: np.ndarray | None = None

    def step(self, g, rng: np.random.Generator | None = None) -> tuple[Payload, np.ndarray]:
        """One step: (payload sent, v = its decode)."""
        g = np.asarray(g)
        if g.dtype != object:
            g = g.astype(np.float64)
        if self.error is None:
            self.error = g * 0
        elif self.error.shape != g.shape:
            raise ValueError(f"gradient shape {g.shape} differs from the residual's {self.error.shape}")
        acc = g + self.error
        payload = self.compressor.encode(acc, rng)
        v = self.compressor.decode(payload)
        self.error = acc - v
        return payload, v

    def reset(self) -> None:
        """Forget the residual (e = 0)."""
        self.error = None


def exact(x) -> Fraction:
    """A number as an exact rational: int, Fraction, Decimal or a decimal string as
    written; a float by its shortest repr (0.4 → 2/5, not the binary 0.40000000000000002…).

    >>> exact(0.4), exact("0.30"), exact(0.1) + exact(0.2) == exact(0.3)
    (Fraction(2, 5), Fraction(3, 10), True)
    """
    if isinstance(x, bool):
        raise TypeError("a gradient value cannot be a bool")
    if isinstance(x, (int, Fraction)):
        return Fraction(x)
    if isinstance(x, (float, np.floating)):
        if not math.isfinite(x):
            raise ValueError(f"gradient values must be finite, got {x!r}")
        return Fraction(repr(float(x)))
    if isinstance(x, (Decimal, str)):
        try:
            f = Fraction(x)
        except (ValueError, ArithmeticError) as err:
            raise ValueError(f"not a finite decimal number: {x!r}") from err
        return f
    raise TypeError(f"gradient values must be numbers, got {type(x).__name__}")


def decimal_text(x: Fraction, places: int = 6) -> str:
    """A rational as the chapter prints it: '0.4', '−0.3' (Unicode minus), '2'; rounded
    to ``places`` decimals only when it has no finite decimal expansion (1/3).

    >>> decimal_text(Fraction(-3, 10)), decimal_text(Fraction(1, 3)), decimal_text(Fraction(2))
    ('−0.3', '0.333333', '2')
    """
    x, places = Fraction(x), as_value_error(check_int, places, "places", lo=0, hi=1000)
    den = x.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    with localcontext() as ctx:
        ctx.prec = max(28, places + len(str(abs(x.numerator) // x.denominator)) + 5)
        d = Decimal(x.numerator) / Decimal(x.denominator)
        if den != 1:
            d = d.quantize(Decimal(1).scaleb(-places))
        return format(d.normalize(), "f").replace("-", "\u2212")


@dataclass(frozen=True)
class TraceRow:
    """One step of a trace (Table 4's columns, exact): g_t, e_t, g_t + e_t, v_t,
    e_{t+1}, the running Σv and Σg, and ``lost`` (g_t − v_t without feedback, else 0).

    Step 2 of Table 4: 0.3 + 0.4 = 0.7 ≥ 0.5 sends 1 and leaves −0.3:

    >>> row = ef_trace([0.4, 0.3])[1]
    >>> decimal_text(row.acc), decimal_text(row.v), decimal_text(row.e_next)
    ('0.7', '1', '−0.3')
    """

    step: int
    g: Fraction
    e: Fraction
    acc: Fraction
    v: Fraction
    e_next: Fraction
    sum_v: Fraction
    sum_g: Fraction
    lost: Fraction

    def as_dict(self) -> dict[str, Fraction | int]:
        return {"step": self.step, "g": self.g, "e": self.e, "g+e": self.acc, "v": self.v,
                "e_next": self.e_next, "sum_v": self.sum_v, "sum_g": self.sum_g, "lost": self.lost}


def _trace(grads: Iterable[Fraction], comp: Compressor, feedback: bool, e1: Fraction) -> Iterator[TraceRow]:
    """Rows of the exact trace, one per input, with running sums."""
    ef = ErrorFeedback(comp)
    ef.error = np.array([e1], dtype=object)
    sum_v = sum_g = Fraction(0)
    for t, g in enumerate(grads, start=1):
        if feedback:
            e_t = Fraction(ef.error[0])
            _, v = ef.step(np.array([g], dtype=object))
        else:
            e_t, v = Fraction(0), comp(np.array([g], dtype=object))
        if isinstance(v[0], bool) or not isinstance(v[0], (int, Fraction)):
            raise TypeError(f"{comp.name} decodes to {type(v[0]).__name__}: an exact trace needs an "
                            "operator that decodes to int or Fraction (Threshold)")
        v_t = Fraction(v[0])
        sum_v, sum_g = sum_v + v_t, sum_g + g
        e_next = Fraction(ef.error[0]) if feedback else Fraction(0)
        yield TraceRow(t, g, e_t, g + e_t, v_t, e_next, sum_v, sum_g, Fraction(0) if feedback else g - v_t)


def ef_trace(grads: Sequence, compressor: Compressor | None = None, *, feedback: bool = True,
             e1=0) -> list[TraceRow]:
    """The per-step trace of a scalar gradient sequence through ``compressor`` (default:
    the chapter's :class:`Threshold`, 1 when g + e ≥ 0.5), with error feedback (Table 4,
    through :class:`ErrorFeedback`) or without (Table 3: v_t = C(g_t), the rest is lost),
    in exact rational arithmetic.  The operator must decode to exact numbers (int or
    Fraction), as :class:`Threshold` does.

    Tables 3 and 4: without feedback nothing crosses the threshold and all 1.6 is lost;
    with it Σv = Σg − e_{T+1} exactly (1.6 + 0.4 = 2):

    >>> grads = [0.4, 0.3, 0.2, 0.4, 0.3]
    >>> [str(r.v) for r in ef_trace(grads, feedback=False)], ef_trace(grads, feedback=False)[-1].sum_g
    (['0', '0', '0', '0', '0'], Fraction(8, 5))
    >>> last = ef_trace(grads)[-1]
    >>> [str(r.v) for r in ef_trace(grads)], last.sum_v == last.sum_g - last.e_next
    (['0', '1', '0', '0', '1'], True)
    """
    if not isinstance(feedback, bool):
        raise TypeError(f"feedback must be a bool, got {type(feedback).__name__}")
    if isinstance(grads, (str, bytes)) or not isinstance(grads, Sequence):
        raise TypeError("grads must be a sequence of numbers")
    if not grads:
        raise ValueError("grads must hold at least one step")
    gs, e = [exact(x) for x in grads], exact(e1)
    if not feedback and e != 0:
        raise ValueError("without feedback there is no residual: e1 must be 0")
    return list(_trace(gs, Threshold() if compressor is None else compressor, feedback, e))


@dataclass(frozen=True)
class SteadyState:
    """The periodic regime of error feedback with a constant input: ``transient`` steps
    before the cycle, its ``period``, the transmissions over one period (``pattern``),
    their mean (= g exactly, by telescoping over a cycle), and the residual's range
    over the cycle: e_t (before the step) and g + e_t (what is compressed).

    >>> s = steady_state(0.3)
    >>> s.period, sum(s.pattern), s.mean_v
    (10, Fraction(3, 1), Fraction(3, 10))
    """

    g: Fraction
    transient: int
    period: int
    pattern: tuple[Fraction, ...]
    mean_v: Fraction
    e_min: Fraction
    e_max: Fraction
    acc_min: Fraction
    acc_max: Fraction
    rows: tuple[TraceRow, ...]


def steady_state(g=Fraction(3, 10), compressor: Compressor | None = None, *,
                 max_steps: int = 100_000) -> SteadyState:
    """Run error feedback with constant input ``g`` (Checkpoint 1.4: 0.3, threshold 0.5)
    until the residual repeats exactly, and describe the cycle from the trace.

    Checkpoint 1.4: g = 0.3 sends 1 three times in every 10 steps, the residual stays
    in [−0.5, 0.4]:

    >>> s = steady_state(0.3)
    >>> s.transient, s.period, decimal_text(s.e_min), decimal_text(s.e_max)
    (0, 10, '−0.5', '0.4')
    """
    g = exact(g)
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise ValueError(f"max_steps must be an integer >= 1, got {max_steps!r}")
    seen: dict[Fraction, int] = {}
    rows: list[TraceRow] = []
    for row in _trace(itertools.repeat(g), Threshold() if compressor is None else compressor, True, Fraction(0)):
        if row.e in seen:
            break
        if len(rows) >= max_steps:
            raise ValueError(f"no repeating residual within {max_steps} steps (g = {g}): "
                             "the residual is unbounded or not periodic for this input")
        seen[row.e] = len(rows)
        rows.append(row)
    start = seen[row.e]
    cycle = rows[start:]
    pattern = tuple(r.v for r in cycle)
    return SteadyState(g, start, len(cycle), pattern, sum(pattern, Fraction(0)) / len(cycle),
                       min(r.e for r in cycle), max(r.e for r in cycle),
                       min(r.acc for r in cycle), max(r.acc for r in cycle), tuple(rows))
