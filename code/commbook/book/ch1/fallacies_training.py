"""Chapter §1.9, fallacies and pitfalls, items 5–8 of ``chapters/{zh,en}/ch1/09-fallacies.md``:
(5) top-k without error feedback, :func:`ef_runs`; (6) time to train,
:func:`train_table`; (7) LogP and asynchronous calls, :data:`ASYNC_COMPUTE` (the page
runs the timeline); (8) bit flips against a norm check and a CRC-32, :func:`bit_flips`.  Each builder returns one typed
result (fields named with their units, as in :mod:`.fallacies`) that the page glues and the
item's table reads.
"""
from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import numpy as np

from ...compression import TopK, least_squares, train_sgd, update_at_optimum
from ...hardware import IB_NDR_CHAPTER
from ...units import fmt_pct, fmt_time
from ..tables import Table
from ..text import texts
from .fallacies import sci
from .overlap_tables import quantity_table

__all__ = ["EF", "Feedback", "ef_runs", "ef_table", "TIME_TO_TRAIN",
           "train_table", "ASYNC_COMPUTE", "SDC", "fleet_bits_per_day", "Flips", "bit_flips"]

_tt = texts("ch1").under("fallacies_tables.")     # the entries of the item tables
_t3 = lambda t: fmt_time(t, 3)


# ============================================================================ 5 error feedback
EF = {"fraction": 0.01, "steps": 500, "steps_long": 4000, "window": 1000}
"""Top-1 % on the seeded least-squares problem: 500 steps, and 4,000 without feedback."""


@dataclass(frozen=True)
class Feedback:
    """Top-k with and without error feedback: relative excess loss after ``steps`` (with:
    ``gap``, also as a power of ten ``with_ef``), without feedback also after ``steps_long``
    and its relative change over the last ``window`` steps; the mean decoded update at the
    optimum (``drift``; ``drift_none`` uncompressed)."""
    dim: int
    workers: int
    kept: int
    keep_frac: float
    drop_frac: float
    ratio_x: float            # on 10⁶ values
    steps: int
    steps_long: int
    window: int
    gap: float
    with_ef: str
    without_frac: float
    end_frac: float
    change_frac: float
    drift: float
    drift_none: float


@functools.lru_cache(maxsize=None)
def ef_runs(fraction: float = EF["fraction"], steps: int = EF["steps"], steps_long: int = EF["steps_long"],
            window: int = EF["window"]) -> Feedback:
    """Top-k with and without error feedback on :func:`~commbook.compression.least_squares`.

    >>> ef_runs().kept
    1
    """
    prob, op = least_squares(), TopK(fraction)
    plain = train_sgd(prob, op, feedback=False, steps=steps_long)
    ef = train_sgd(prob, op, feedback=True, steps=steps)
    end, before = float(plain.excess[-1]), float(plain.excess[-1 - window])
    return Feedback(dim=prob.dim, workers=prob.workers, kept=op.k(prob.dim), keep_frac=fraction, drop_frac=1 - fraction,
                    ratio_x=op.ratio(10**6), steps=steps, steps_long=steps_long, window=window, gap=ef.final,
                    with_ef=sci(ef.final), without_frac=float(plain.excess[steps]), end_frac=end,
                    change_frac=(before - end) / before, drift=update_at_optimum(prob, op),
                    drift_none=update_at_optimum(prob))


def ef_table(ef: Feedback | None = None) -> Table:
    """The run of :func:`ef_runs`."""
    ef, two = ef_runs() if ef is None else ef, _tt.two
    return quantity_table("ch1-fall-ef", two("top_k_on_a"), [
        (*two("workers"), ef.workers, f"{ef.workers}"),
        (*two("parameters"), ef.dim, f"{ef.dim}"),
        (*two("values_sent_per_worker"), ef.kept, f"{ef.kept}"),
        (*two("relative_excess_loss_after", steps=ef.steps), ef.gap, ef.with_ef),
        (*two("without_error_feedback"), ef.without_frac, fmt_pct(ef.without_frac)),
        (*two("without_after_steps", steps_long=ef.steps_long), ef.end_frac, fmt_pct(ef.end_frac)),
        (*two("its_change_over_the", window=ef.window), ef.change_frac, fmt_pct(ef.change_frac)),
        (*two("mean_decoded_update_at"), ef.drift, f"{ef.drift:.2g}"),
        (*two("uncompressed"), ef.drift_none, sci(ef.drift_none, 1)),
    ])


# ============================================================================ 6 time to train
TIME_TO_TRAIN = {"steps": 100_000, "t_compute": 0.3, "t_comm": 0.2, "ratio": 100, "extra_steps": 1.0}
"""100× less communication that costs twice the steps (twice = 100 % more)."""


def train_table(d, c=TIME_TO_TRAIN) -> Table:
    """The run of ``c`` (:data:`TIME_TO_TRAIN`) and its :func:`commbook.compression.compression_decision` ``d``."""
    two, s = _tt.two, lambda v: f"{v:,.0f} s"
    after = c["steps"] * (1 + c["extra_steps"])
    return quantity_table("ch1-fall-train", two("time_to_train_with"), [
        (*two("steps_without_compression"), c["steps"], f"{c['steps']:,}"),
        (*two("compute_per_step"), c["t_compute"], _t3(c["t_compute"])),
        (*two("communication_per_step"), c["t_comm"], _t3(c["t_comm"])),
        (*two("compressed"), c["t_comm"] / c["ratio"], _t3(c["t_comm"] / c["ratio"])),
        (*two("steps_with_compression"), after, f"{after:,.0f}"),
        (*two("time_to_train_uncompressed"), d.baseline, s(d.baseline)),
        (*two("time_to_train_compressed"), d.compressed, s(d.compressed)),
        (*two("change"), d.change, fmt_pct(d.change)),
        (*two("communication_per_step_at"), d.break_even_comm, _t3(d.break_even_comm)),
    ])


# ============================================================================ 7 async
ASYNC_COMPUTE = 80e-6
"""A compute block longer than napkin math 1.3's o and shorter than its L."""


# ============================================================================ 8 silent corruption
SDC = {"d": 100_000, "scale": 0.01, "seed": 0, "threshold": 0.01, "nodes": 10_000, "nics": 8}
"""A float32 gradient of 100,000 values ~ N(0, 0.01²); a norm check that flags a 1 % change."""


def fleet_bits_per_day(nodes: int = SDC["nodes"], nics: int = SDC["nics"], link=IB_NDR_CHAPTER) -> float:
    """Bits a fleet moves in a day if every NIC sends at ``link``'s rate all day (an upper bound)."""
    return nodes * nics * link.beta * 8 * 86400


@dataclass(frozen=True)
class Flips:
    """Each of the 32 bits of one value flipped in turn: whether a norm check (change >
    ``threshold_frac``) and a CRC-32 of the bytes notice it; the fleet's bits in a day."""
    nodes: int
    nics: int
    rate_Bps: float
    bits: str                 # bits the fleet moves in a day
    ber: str                  # the error rate of one flip a day
    d: int
    threshold_frac: float
    value: float              # the value before the flips
    norm: int                 # flips the norm check catches
    crc: int
    worst: float              # the largest |value after / before| the norm check misses
    rows: tuple               # per bit: (bit, value after, relative norm change, norm sees, CRC sees)


def bit_flips(d: int = SDC["d"], scale: float = SDC["scale"], seed: int = SDC["seed"],
              threshold: float = SDC["threshold"]) -> Flips:
    """Each of the 32 bits of one value of a seeded ``d``-value float32 gradient flipped in
    turn, against a norm check and a CRC-32.

    >>> bit_flips().crc
    32
    """
    rng = np.random.default_rng(seed)
    g, i = (scale * rng.standard_normal(d)).astype(np.float32), int(rng.integers(d))
    norm, crc = float(np.linalg.norm(g.astype(np.float64))), zlib.crc32(g.tobytes())
    rows = []
    for bit in range(32):
        h = g.copy()
        h.view(np.uint32)[i] ^= np.uint32(1 << bit)
        change = abs(float(np.linalg.norm(h.astype(np.float64))) - norm) / norm
        rows.append((bit, float(h[i]), change, change > threshold, zlib.crc32(h.tobytes()) != crc))
    bits = fleet_bits_per_day()
    return Flips(nodes=SDC["nodes"], nics=SDC["nics"], rate_Bps=IB_NDR_CHAPTER.beta, bits=sci(bits),
                 ber=sci(1 / bits), d=d, threshold_frac=threshold, value=float(g[i]), norm=sum(r[3] for r in rows),
                 crc=sum(r[4] for r in rows), worst=max(abs(r[1] / float(g[i])) for r in rows if not r[3]), rows=tuple(rows))
