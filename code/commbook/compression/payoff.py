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
    seconds of encode/decode."""

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
    """The :class:`Payoff` of compressing a ``t_comm``-second communication."""
    return Payoff(_time(t_comm, "t_comm"), _ratio(ratio), _time(overhead, "overhead"))


def step_time(t_compute: float, t_comm: float, ratio: float = 1, *, overlap: bool = False,
              overhead: float = 0.0) -> float:
    """One step: c + T/r + o without overlap, max(c, T/r) + o with perfect overlap
    (Checkpoint 1.4: backward 800 ms, all-reduce 200 or 2000 ms, 4×)."""
    c, t, o = _time(t_compute, "t_compute"), _time(t_comm, "t_comm"), _time(overhead, "overhead")
    if not isinstance(overlap, bool):
        raise TypeError(f"overlap must be a bool, got {type(overlap).__name__}")
    t /= _ratio(ratio)
    return (max(c, t) if overlap else c + t) + o


def time_to_train(steps: float, t_compute: float, t_comm: float, ratio: float = 1, *,
                  extra_steps: float = 0.0, overhead: float = 0.0, overlap: bool = False) -> float:
    """steps·(1 + extra_steps) × :func:`step_time`: the time to reach the target, the
    metric the chapter asks for (not the time per step)."""
    n = check_size(steps, "steps")
    x = _time(extra_steps, "extra_steps")
    return n * (1 + x) * step_time(t_compute, t_comm, ratio, overlap=overlap, overhead=overhead)


def break_even_comm_time(t_compute: float, ratio: float, extra_steps: float,
                         overhead: float = 0.0) -> float:
    """The communication time per step above which compression (``ratio``, a share
    ``extra_steps`` more steps, ``overhead`` per step, no overlap) shortens the run:
    (x·c + (1 + x)·o)/(1 − (1 + x)/r); ``inf`` when (1 + x) ≥ r."""
    c, r = _time(t_compute, "t_compute"), _ratio(ratio)
    x, o = _time(extra_steps, "extra_steps"), _time(overhead, "overhead")
    gain = 1 - (1 + x) / r
    return (x * c + (1 + x) * o) / gain if gain > 0 else math.inf


@dataclass(frozen=True)
class Decision:
    """Time to train without and with compression, the relative change (negative:
    faster), and the break-even communication time for these settings."""

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
    33,000 s → 33,825 s."""
    return Decision(time_to_train(steps, t_compute, t_comm),
                    time_to_train(steps, t_compute, t_comm, ratio, extra_steps=extra_steps, overhead=overhead),
                    break_even_comm_time(t_compute, ratio, extra_steps, overhead))


def compressed_allreduce_time(p: int, n: float, alpha: float, beta: float, ratio: float,
                              algorithm: str = "ring") -> float:
    """All-reduce of the n/r-byte payload with the registry's closed form: α terms stay,
    only the bytes shrink."""
    return t_formula(algorithm, p, check_size(n) / _ratio(ratio), alpha, beta)
