"""Records of parsed collective measurements: :class:`Run` (one test: metadata and
rows), :class:`Row` (one size, every placement), :class:`Timing` (one placement) and
:class:`Device` (one rank's device line).

Units: sizes in bytes, times in seconds, bandwidths in bytes/s.  Each timing keeps the
cells as printed, so the rounding of every number is known (:func:`printed_half_unit`).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..bandwidth import BUSBW_FACTORS

__all__ = ["NCCL_TESTS_COLUMNS", "PLACEMENTS", "Device", "Timing", "Row", "Run", "collective_name",
           "printed_half_unit"]

NCCL_TESTS_COLUMNS = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")
"""The columns of a full nccl-tests table (the last four once per placement)."""
PLACEMENTS = ("out_of_place", "in_place", "unstated")
"""Placement keys: nccl-tests' two, and ``unstated`` for a table that does not say."""

_TEST_NAMES = {"alltoall": "all_to_all", "sendrecv": "send_recv", "allreduce": "all_reduce",
               "allgather": "all_gather", "reducescatter": "reduce_scatter"}


def collective_name(test: str) -> str:
    """Normalize an nccl-tests binary name to commbook's collective name:
    ``all_reduce_perf`` → ``all_reduce``, ``alltoall_perf`` → ``all_to_all``,
    ``sendrecv_perf`` → ``send_recv``."""
    base = re.sub(r"_perf(_mpi)?$", "", str(test).strip())
    return _TEST_NAMES.get(base, base)


def printed_half_unit(text: str) -> float:
    """Half a unit of the last printed digit: ``"182.87"`` → 0.005, ``"15668.1"`` → 0.05,
    ``"16240"`` → 0.5 (in the printed unit)."""
    s = str(text).strip().replace("_", "").replace(",", "")
    if not re.fullmatch(r"[+-]?\d+(\.\d*)?", s):
        raise ValueError(f"not a printed decimal number: {text!r}")
    decimals = len(s.split(".")[1]) if "." in s else 0
    return 0.5 * 10.0 ** (-decimals)


@dataclass(frozen=True)
class Device:
    """One ``#  Rank r Group g Pid … on host device d [bus] name`` line."""

    rank: int
    host: str
    device: int
    bus_id: str
    name: str
    group: int | None = None
    pid: int | None = None


@dataclass(frozen=True)
class Timing:
    """One placement of one row: time (s), algbw and busbw (bytes/s), #wrong.

    A field the table does not have is ``None`` (``wrong`` is also ``None`` for "N/A").
    ``error`` is the ``error`` column of older nccl-tests releases (the largest absolute
    deviation from the expected result, as printed: ``5e-07``), which those releases
    printed instead of ``#wrong``.
    ``printed`` holds the (time, algbw, busbw) cells as printed (``None`` where absent).
    """

    time: float | None
    algbw: float | None
    busbw: float | None
    wrong: int | None = None
    printed: tuple[str | None, str | None, str | None] = (None, None, None)
    error: float | None = None


@dataclass(frozen=True)
class Row:
    """One size of a table, with every placement it reports.

    ``size`` is in bytes as nccl-tests reports it (the buffer per rank for all-reduce,
    reduce-scatter and all-to-all; the gathered output for all-gather).  ``size_label`` is
    the source's own text when it wrote a label ("132K") instead of a byte count.
    """

    size: int
    count: int | None = None
    dtype: str | None = None
    redop: str | None = None
    root: int | None = None
    out_of_place: Timing | None = None
    in_place: Timing | None = None
    unstated: Timing | None = None
    size_label: str | None = None

    def timing(self, placement: str) -> Timing | None:
        """The :class:`Timing` of ``placement`` (one of :data:`PLACEMENTS`)."""
        if placement not in PLACEMENTS:
            raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
        return getattr(self, placement)


@dataclass(frozen=True)
class Run:
    """One test of a log: its metadata and its rows.

    ``collective`` is commbook's name (``all_reduce``, ``all_to_all``, ``send_recv`` …) and
    ``test`` the binary's (``all_reduce_perf``); ``nranks`` comes from the device lines, or
    the command line's ``-g``/``-t``, or the caller.  ``columns`` are the table's columns as
    printed and ``missing_columns`` the nccl-tests columns it lacks (``in-place`` when only
    one placement is printed).  ``avg_busbw`` is the log's "Avg bus bandwidth" (bytes/s).
    """

    rows: tuple[Row, ...]
    placements: tuple[str, ...]
    columns: tuple[str, ...]
    missing_columns: tuple[str, ...]
    collective: str | None = None
    test: str | None = None
    nranks: int | None = None
    nccl_version: str | None = None
    nccl_tests_version: str | None = None
    devices: tuple[Device, ...] = ()
    parameters: dict = field(default_factory=dict, compare=False)
    command: str | None = None
    avg_busbw: float | None = None
    out_of_bounds: str | None = None
    notes: tuple[str, ...] = ()
    format: str = "nccl-tests"

    def __len__(self) -> int:
        return len(self.rows)

    def _placement(self, placement: str | None) -> str:
        if placement is None:
            return self.placements[0]
        if placement not in self.placements:
            raise ValueError(f"this run has placements {', '.join(self.placements)}, not {placement!r}")
        return placement

    def sizes(self) -> np.ndarray:
        """Sizes in bytes, as a float array."""
        return np.array([r.size for r in self.rows], dtype=float)

    def column(self, name: str, placement: str | None = None) -> np.ndarray:
        """``time`` (s), ``algbw`` or ``busbw`` (bytes/s) of ``placement`` (default: the
        first the table prints); a value the table lacks is NaN."""
        if name not in ("time", "algbw", "busbw"):
            raise ValueError(f"name must be 'time', 'algbw' or 'busbw', got {name!r}")
        pl = self._placement(placement)
        vals = [getattr(r.timing(pl), name) if r.timing(pl) else None for r in self.rows]
        return np.array([math.nan if v is None else v for v in vals], dtype=float)

    def times(self, placement: str | None = None) -> np.ndarray:
        """Times in seconds of ``placement``.  Where only busbw is printed the time is
        derived as size × factor / busbw with nccl-tests' bus factor (needs ``nranks``)."""
        t = self.column("time", placement)
        if np.isnan(t).any():
            bus = self.column("busbw", placement)
            if self.collective not in BUSBW_FACTORS:
                raise ValueError(f"cannot derive times from busbw: no bus factor for collective "
                                 f"{self.collective!r}")
            if self.nranks is None:
                raise ValueError("cannot derive times from busbw: nranks is unknown (pass nranks=)")
            factor = BUSBW_FACTORS[self.collective](self.nranks)
            derived = self.sizes() * factor / bus
            t = np.where(np.isnan(t), derived, t)
            if np.isnan(t).any():
                raise ValueError("some rows have neither time nor busbw")
        return t


