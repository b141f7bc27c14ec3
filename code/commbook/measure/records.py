"""Records of parsed collective measurements: :class:`Run` (one test: metadata and
rows), :class:`Row` (one size, every placement), :class:`Timing` (one placement) and
:class:`Device` (one rank's device line).

Units: sizes in bytes, times in seconds, bandwidths in bytes/s.  Each timing keeps the
cells as printed, so the rounding of every number is known (:func:`printed_half_unit`).
How a printed cell becomes a value is here too (:func:`parse_cell`: a number or a
``ValueError`` naming the line and the column; :class:`Shapes`: a last row cut short).
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ..bandwidth import BUSBW_FACTORS

__all__ = ["NCCL_TESTS_COLUMNS", "PLACEMENTS", "Device", "Timing", "Row", "Run", "collective_name",
           "check_collective", "with_collective", "printed_half_unit"]

NCCL_TESTS_COLUMNS = ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong")
"""The columns of a full nccl-tests table (the last four once per placement)."""
PLACEMENTS = ("out_of_place", "in_place", "unstated")
"""Placement keys: nccl-tests' two, and ``unstated`` for a table that does not say."""

_TEST_NAMES = {"alltoall": "all_to_all", "sendrecv": "send_recv", "allreduce": "all_reduce",
               "allgather": "all_gather", "reducescatter": "reduce_scatter"}


def collective_name(test: str) -> str:
    """Normalize an nccl-tests binary name to commbook's collective name:
    ``all_reduce_perf`` → ``all_reduce``, ``alltoall_perf`` → ``all_to_all``,
    ``sendrecv_perf`` → ``send_recv``.

    >>> collective_name("all_reduce_perf"), collective_name("alltoall_perf"), collective_name("sendrecv_perf_mpi")
    ('all_reduce', 'all_to_all', 'send_recv')
    """
    base = re.sub(r"_perf(_mpi)?$", "", str(test).strip())
    return _TEST_NAMES.get(base, base)


def check_collective(collective, name: str = "collective") -> str:
    """The commbook name of a collective nccl-tests measures, given as commbook's name or the
    binary's (``all_reduce_perf``, ``alltoall``); ``ValueError`` naming ``name`` otherwise.

    >>> check_collective("all_reduce_perf"), check_collective("alltoall")
    ('all_reduce', 'all_to_all')
    >>> check_collective("allreduse")
    Traceback (most recent call last):
    ...
    ValueError: collective must be one of all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv (or the nccl-tests binary's name, e.g. 'all_reduce_perf'), got 'allreduse'
    """
    if not isinstance(collective, str):
        raise TypeError(f"{name} must be a str such as 'all_reduce', got {type(collective).__name__}")
    c = collective_name(collective)
    if c not in BUSBW_FACTORS:
        raise ValueError(f"{name} must be one of {', '.join(BUSBW_FACTORS)} (or the nccl-tests "
                         f"binary's name, e.g. 'all_reduce_perf'), got {collective!r}")
    return c


def with_collective(run: "Run", collective: str | None) -> "Run":
    """``run`` with its collective: the log's own, or ``collective`` (checked by
    :func:`check_collective`) where the log does not name one; ``ValueError`` naming
    ``collective`` when the log names a different one.

    >>> from commbook.measure import load_log
    >>> run = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0]
    >>> with_collective(run, "all_reduce_perf").collective
    'all_reduce'
    >>> with_collective(run, "all_gather")
    Traceback (most recent call last):
    ...
    ValueError: collective='all_gather', but the log says it measured 'all_reduce' (all_reduce_perf)
    """
    if collective is None:
        return run
    c = check_collective(collective)
    if run.collective is None:
        return replace(run, collective=c)
    if run.collective != c:
        raise ValueError(f"collective={collective!r}, but the log says it measured {run.collective!r}"
                         f" ({run.test or 'its test name'})")
    return run


def printed_half_unit(text: str) -> float:
    """Half a unit of the last printed digit: ``"182.87"`` → 0.005, ``"15668.1"`` → 0.05,
    ``"16240"`` → 0.5 (in the printed unit).

    >>> printed_half_unit("182.87"), printed_half_unit("15668.1"), printed_half_unit("16240")
    (0.005, 0.05, 0.5)
    """
    s = str(text).strip().replace("_", "").replace(",", "")
    if not re.fullmatch(r"[+-]?\d+(\.\d*)?", s):
        raise ValueError(f"not a printed decimal number: {text!r}")
    decimals = len(s.split(".")[1]) if "." in s else 0
    return 0.5 * 10.0 ** (-decimals)


# ---------------------------------------------------------------- printed cells
_RE_INT = re.compile(r"[+-]?\d+(?:_\d+)*")                   # 1048_576: digit separators
_RE_INT_COMMAS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+")        # 1,048,576: thousands only
_RE_FLOAT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_RE_EXP = re.compile(r"\d(?:\.(\d*))?[eE][+-]?(\d+)")
# the lowest value of each numeric column: root is -1 where the collective has none
_LOWEST = {"size": 0, "count": 0, "root": -1, "#wrong": 0, "time": 0.0, "algbw": 0.0, "busbw": 0.0,
           "error": 0.0}
_KIND = {"size": int, "count": int, "root": int, "#wrong": int}


class Cell(NamedTuple):
    """Where a cell is: line, 1-based field, column name and placement (for messages).

    >>> Cell(3, 6, "time", "out_of_place").fail("1.5.0", "is not a number")
    ValueError("line 3, column 6 ('time', out-of-place): '1.5.0' is not a number")
    """

    lineno: int
    field: int
    name: str
    placement: str | None

    def fail(self, text: str, why: str) -> ValueError:
        where = f"{self.name!r}" + (f", {self.placement.replace('_', '-')}" if self.placement
                                    and self.placement != "unstated" else "")
        return ValueError(f"line {self.lineno}, column {self.field} ({where}): {text!r} {why}")


def parse_cell(text: str, cell: Cell):
    """A numeric cell: an integer (digit separators ``_`` anywhere, ``,`` only as
    thousands) or a finite decimal number, at least the column's lowest value.

    >>> parse_cell("1,048,576", Cell(3, 1, "size", None)), parse_cell("182.87", Cell(3, 6, "time", None))
    (1048576, 182.87)
    >>> parse_cell("1,5", Cell(3, 6, "time", "out_of_place"))
    Traceback (most recent call last):
    ...
    ValueError: line 3, column 6 ('time', out-of-place): '1,5' has a comma: nccl-tests prints a decimal point and no thousands separators (is it 1.5 or 15?)
    """
    kind = _KIND.get(cell.name, float)
    if kind is int:
        if _RE_INT.fullmatch(text) or _RE_INT_COMMAS.fullmatch(text):
            value = int(text.replace("_", "").replace(",", ""))
        elif re.fullmatch(r"\d+(?:\.\d+)?[KkMmGg]i?[Bb]?", text):
            raise cell.fail(text, "is not a whole number of bytes (nccl-tests prints sizes in bytes)")
        else:
            raise cell.fail(text, "is not an integer" + (" (',' separates thousands only)"
                                                        if "," in text else ""))
    else:
        if "," in text:
            raise cell.fail(text, "has a comma: nccl-tests prints a decimal point and no thousands "
                            "separators (is it 1.5 or 15?)")
        if not _RE_FLOAT.fullmatch(text):
            raise cell.fail(text, "is not a number (nccl-tests prints finite decimals: no nan, no inf)")
        value = float(text)
        if not value < float("inf"):
            raise cell.fail(text, "is not finite")
    if value < _LOWEST[cell.name]:
        raise cell.fail(text, f"is negative (a {cell.name} cannot be)" if _LOWEST[cell.name] == 0
                        else f"is below {_LOWEST[cell.name]}")
    return value


def _decimals(text: str) -> int:
    mantissa = text.lower().split("e")[0]
    return len(mantissa.split(".")[1]) if "." in mantissa else 0


def _magnitude(text: str, lower: bool) -> float:
    """floor(log10) of the value (``lower``: of the smallest value that prints as ``text``);
    -inf for 0."""
    v = float(text)
    if lower:
        v -= 0.5 * 10.0 ** -_decimals(text)
    return math.floor(math.log10(v)) if v > 0 else -math.inf


_FAMILY = {"time": "time", "algbw": "bw", "busbw": "bw", "error": "error"}


class Shapes:
    """How a table prints each family of columns (times; algbw and busbw; the error column),
    row by row, to tell a cell cut short in the table's last row.

    nccl-tests and bench_collectives.py print each family with a number of decimals that
    never grows with the value (nccl-tests: bandwidths %6.2f; times 2 decimals below 100 µs,
    1 below 10^4, none above; errors %5.0le).  A cell printed with fewer decimals than a
    value of its own order of magnitude or larger, or an error shorter than every other
    error, was cut: the log ends inside its last row.  Only a table's last row can end so,
    and only its last row is judged (against all the others), when the table ends.

    Times of the same order printed with two decimals, then one: the last row was cut:

    >>> shapes = Shapes()
    >>> for i, t in enumerate(["182.87", "313.66", "564.7"]):
    ...     shapes.add_row([(t, Cell(i + 1, 6, "time", None))])
    >>> shapes.cut()
    ('564.7', Cell(lineno=3, field=6, name='time', placement=None))
    """

    def __init__(self):
        self.most: dict[tuple[str, float], int] = {}      # (family, magnitude) -> most decimals
        self.exp: list | None = None                      # [every error exp-form, min exp, min dec]
        self.pending: list[tuple[str, Cell]] = []        # the newest row's cells

    def add_row(self, cells: list[tuple[str, Cell]]) -> None:
        for text, cell in self.pending:
            fam = _FAMILY[cell.name]
            if fam == "error":
                m = _RE_EXP.fullmatch(text)
                e = (bool(m), len(m.group(2)) if m else 0, len(m.group(1) or "") if m else 0)
                self.exp = list(e) if self.exp is None else [self.exp[0] and e[0], min(self.exp[1], e[1]),
                                                             min(self.exp[2], e[2])]
            else:
                key = (fam, _magnitude(text, lower=True))
                self.most[key] = max(self.most.get(key, 0), _decimals(text))
        self.pending = cells

    def cut(self) -> tuple[str, Cell] | None:
        """The first cell of the last row that looks cut short, or ``None``."""
        for text, cell in self.pending:
            fam = _FAMILY[cell.name]
            if fam == "error":
                m = _RE_EXP.fullmatch(text)
                if self.exp and self.exp[0] and (not m or len(m.group(2)) < self.exp[1]
                                                 or len(m.group(1) or "") < self.exp[2]):
                    return text, cell
                continue
            d, mag = _decimals(text), _magnitude(text, lower=False)
            if text.endswith(".") or any(f == fam and m >= mag and most > d
                                         for (f, m), most in self.most.items()):
                return text, cell
        return None


@dataclass(frozen=True)
class Device:
    """One ``#  Rank r Group g Pid … on host device d [bus] name`` line.

    >>> from commbook.measure import load_log
    >>> dev = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0].devices[7]
    >>> dev.rank, dev.device, dev.bus_id, dev.name
    (7, 7, '0000:df:00', 'NVIDIA H100 80GB HBM3')
    """

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

    >>> from commbook.measure import load_log
    >>> t = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0].rows[0].out_of_place
    >>> round(t.time * 1e6, 2), t.busbw / 1e9, t.printed   # 32 MiB all-reduce on 8 x H100
    (182.87, 321.1, ('182.87', '183.49', '321.10'))
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

    >>> from commbook.measure import load_log
    >>> row = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0].rows[0]
    >>> row.size, row.count, row.dtype, row.timing("in_place").busbw / 1e9
    (33554432, 4194304, 'double', 321.08)
    >>> load_log("azure_nd_h100_v5_allreduce_busbw.md")[0].rows[0].size_label
    '1K'
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

    >>> from commbook.measure import load_log
    >>> run = load_log("h100x8_nvswitch_nccl2.29.2_nccl-tests.log")[0]
    >>> run.test, run.nranks, run.nccl_version, len(run), run.avg_busbw / 1e9
    ('all_reduce_perf', 8, '2.29.2', 10, 437.957)
    >>> round(float(run.times()[-1]) * 1e3, 4), float(run.column("busbw")[-1]) / 1e9   # 16 GiB
    (62.3407, 482.27)
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


