r"""When compression pays (chapter §1.6, "when to use compression"; Napkin Math 1.7, Checkpoint 1.4).

Compression trades encode/decode time for wire time.  With a communication time T, an
*effective* ratio r (what the wire actually sees, after scales, indices and protocol)
and an overhead o per step:

* new communication time T/r, total T/r + o, speedup T/(T/r + o);
* it pays only when o < T(1 − 1/r) (the wire time saved); equivalently when
  T > o/(1 − 1/r), the break-even communication time.

Over a whole run, a compressor that needs a share x more steps pays when
steps·(c + T) > (1 + x)·steps·(c + T/r + o), c the compute time per step; the
break-even communication time is T* = (x·c + (1 + x)·o)/(1 − (1 + x)/r)
(:func:`break_even_comm_time`; never, when (1 + x) ≥ r).

In the α–β model only the bandwidth term shrinks: :func:`compressed_allreduce_time`
runs the registry's closed form on n/r bytes, so a latency-bound all-reduce (n below
n* = αβ) gains little.  (Sparse payloads with different indices on each worker cannot
be summed inside a ring; real systems all-gather them, which costs more than n/r —
not modelled here.)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..checks import as_value_error, check_real, check_size
from ..collectives.registry import t_formula

__all__ = ["Payoff", "compression_payoff", "step_time", "time_to_train",
           "break_even_comm_time", "Decision", "compression_decision", "compressed_allreduce_time"]


def _time(x, name: str) -> float:
    v = as_value_error(check_real, x, name, "a finite time >= 0 seconds")
    if v < 0:
        raise ValueError(f"{name} must be a finite time >= 0 seconds, got {x!r}")
    return v


def _ratio(r) -> float:
    v = as_value_error(check_real, r, "ratio", "an effective compression (a finite number >= 1)")
    if v < 1:
        raise ValueError(f"ratio (effective compression) must be a finite number >= 1, got {r!r}")
    return v


@dataclass(frozen=True)
class Payoff:
    """One communication of ``t_comm`` seconds compressed ``ratio``× with ``overhead``
    seconds of encode/decode.

    Napkin Math 1.7: a 40 ms sync at 8× effective with 2 ms of overhead takes 7 ms, 5.71×
    faster, and would pay up to 35 ms of overhead; on NVLink (1 ms) it is slower:

    >>> p = compression_payoff(40e-3, ratio=8, overhead=2e-3)
    >>> round(p.t_total_new * 1e3, 6), round(p.speedup, 2), round(p.saving * 1e3, 6), p.worthwhile
    (7.0, 5.71, 35.0, True)
    >>> compression_payoff(1e-3, ratio=8, overhead=2e-3).worthwhile
    False
    """

    t_comm: float
    ratio: float
    overhead: float

    @property
    def t_comm_new(self) -> float:
        """T/r."""
        return self.t_comm / self.ratio

    @property
    def t_total_new(self) -> float:
        """T/r + o."""
        return self.t_comm_new + self.overhead

    @property
    def speedup(self) -> float:
        """T / (T/r + o); below 1 it is a slow-down."""
        return self.t_comm / self.t_total_new if self.t_total_new > 0 else math.inf

    @property
    def saving(self) -> float:
        """Wire time saved, T(1 − 1/r): the largest overhead that still pays."""
        return self.t_comm * (1 - 1 / self.ratio)

    @property
    def worthwhile(self) -> bool:
        """o < T(1 − 1/r)."""
        return self.overhead < self.saving

    @property
    def break_even_comm(self) -> float:
        """Smallest communication time at which this ratio and overhead pay: o/(1 − 1/r)."""
        return self.overhead / (1 - 1 / self.ratio) if self.ratio > 1 else math.inf


def compression_payoff(t_comm: float, ratio: float, overhead: float = 0.0) -> Payoff:
    """The :class:`Payoff` of compressing a ``t_comm``-second communication.

    >>> round(compression_payoff(40e-3, 8, 2e-3).break_even_comm * 1e3, 4)   # o / (1 − 1/r)
    2.2857
    >>> compression_payoff(40e-3, ratio=0.5)
    Traceback (most recent call last):
    ...
    ValueError: ratio (effective compression) must be a finite number >= 1, got 0.5
    """
    return Payoff(_time(t_comm, "t_comm"), _ratio(ratio), _time(overhead, "overhead"))


def step_time(t_compute: float, t_comm: float, ratio: float = 1, *, overlap: bool = False,
              overhead: float = 0.0) -> float:
    """One step: c + T/r + o without overlap, max(c, T/r) + o with perfect overlap
    (Checkpoint 1.4: backward 800 ms, all-reduce 200 or 2000 ms, 4×).

    With overlap, 4× on a 200 ms all-reduce gains nothing (it was hidden); on 2000 ms it
    makes the step compute-bound:

    >>> step_time(0.8, 0.2, overlap=True), step_time(0.8, 0.2, 4, overlap=True), step_time(0.8, 2.0, 4, overlap=True)
    (0.8, 0.8, 0.8)
    >>> step_time(0.8, 2.0, overlap=True), round(step_time(0.8, 2.0, 4), 6)
    (2.0, 1.3)
    """
    c, t, o = _time(t_compute, "t_compute"), _time(t_comm, "t_comm"), _time(overhead, "overhead")
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be a bool, got {type(overlap).__name__}")
    t /= _ratio(ratio)
    return (max(c, t) if overlap else c + t) + o


def time_to_train(steps: float, t_compute: float, t_comm: float, ratio: float = 1, *,
                  extra_steps: float = 0.0, overhead: float = 0.0, overlap: bool = False) -> float:
    """steps·(1 + extra_steps) × :func:`step_time`: the time to reach the target, the
    metric the chapter asks for (not the time per step).

    >>> time_to_train(100_000, 0.3, 0.2), round(time_to_train(100_000, 0.3, 0.2, 4, extra_steps=0.1), 6)
    (50000.0, 38500.0)
    """
    n = check_size(steps, "steps")
    x = _time(extra_steps, "extra_steps")
    return n * (1 + x) * step_time(t_compute, t_comm, ratio, overlap=overlap, overhead=overhead)


def break_even_comm_time(t_compute: float, ratio: float, extra_steps: float,
                         overhead: float = 0.0) -> float:
    """The communication time per step above which compression (``ratio``, a share
    ``extra_steps`` more steps, ``overhead`` per step, no overlap) shortens the run:
    (x·c + (1 + x)·o)/(1 − (1 + x)/r); ``inf`` when (1 + x) ≥ r.

    INT8 (4×) needing 10 % more steps at 300 ms of compute: 0.03/0.725 = 41.4 ms:

    >>> round(break_even_comm_time(0.3, 4, 0.1) * 1e3, 1), break_even_comm_time(0.3, 1.05, 0.1)
    (41.4, inf)
    """
    c, r = _time(t_compute, "t_compute"), _ratio(ratio)
    x, o = _time(extra_steps, "extra_steps"), _time(overhead, "overhead")
    gain = 1 - (1 + x) / r
    return (x * c + (1 + x) * o) / gain if gain > 0 else math.inf


@dataclass(frozen=True)
class Decision:
    """Time to train without and with compression, the relative change (negative:
    faster), and the break-even communication time for these settings.

    >>> d = Decision(baseline=50_000.0, compressed=38_500.0, break_even_comm=0.0414)
    >>> round(d.change, 6), d.worthwhile
    (-0.23, True)
    """

    baseline: float
    compressed: float
    break_even_comm: float

    @property
    def change(self) -> float:
        return self.compressed / self.baseline - 1

    @property
    def worthwhile(self) -> bool:
        return self.compressed < self.baseline


def compression_decision(steps: float, t_compute: float, t_comm: float, ratio: float,
                         extra_steps: float, overhead: float = 0.0) -> Decision:
    """The chapter's two cases: 100,000 steps, 300 ms compute, INT8 (4×) needing 10 %
    more steps; 200 ms of communication gives 50,000 s → 38,500 s, 30 ms gives
    33,000 s → 33,825 s.

    >>> [round(compression_decision(100_000, 0.3, t, 4, 0.1).compressed) for t in (0.2, 0.03)]
    [38500, 33825]
    >>> compression_decision(100_000, 0.3, 0.03, 4, 0.1).worthwhile
    False
    """
    return Decision(time_to_train(steps, t_compute, t_comm),
                    time_to_train(steps, t_compute, t_comm, ratio, extra_steps=extra_steps, overhead=overhead),
                    break_even_comm_time(t_compute, ratio, extra_steps, overhead))


def compressed_allreduce_time(p: int, n: float, alpha: float, beta: float, ratio: float,
                              algorithm: str = "ring") -> float:
    """All-reduce of the n/r-byte payload with the registry's closed form: α terms stay,
    only the bytes shrink.

    Without α the time is a quarter; with α the latency term is unchanged:

    >>> from commbook.collectives.registry import t_formula
    >>> compressed_allreduce_time(8, 1e9, 0.0, 100e9, ratio=4) == t_formula("ring", 8, 1e9, 0.0, 100e9) / 4
    True
    >>> round((compressed_allreduce_time(8, 1e9, 5e-6, 100e9, 4) - compressed_allreduce_time(8, 1e9, 0.0, 100e9, 4)) * 1e6, 6)
    70.0
    """
    return t_formula(algorithm, p, check_size(n) / _ratio(ratio), alpha, beta)
