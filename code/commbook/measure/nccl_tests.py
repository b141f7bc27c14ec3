"""Parse the output of NVIDIA's nccl-tests.

nccl-tests (``all_reduce_perf``, ``all_gather_perf`` …) prints comment lines (``#``: the
version, the run's parameters, one line per rank and device), then a table: the key
columns ``size count type redop root`` and, for each placement (out-of-place, then
in-place), ``time algbw busbw #wrong``; then ``# Avg bus bandwidth : …``.  Older nccl-tests
releases (the 16×8 A100 log of code/commbook/data/measured/nccl-tests/multinode/, copied in January 2023)
printed no ``root`` column and, instead of ``#wrong`` (the count of wrong elements), an
``error`` column: the largest deviation from the expected result
(``5e-07``), kept in :attr:`~.records.Timing.error`.  Several tests can
be concatenated in one log.  Units as printed: size in bytes, time in µs, bandwidths in
GB/s (10⁹ B/s); the records (:mod:`.records`) hold bytes, seconds and bytes/s.

:func:`parse_nccl_tests` reads any such text, including tables whose author kept only some
columns (it lists the others in :attr:`~.records.Run.missing_columns`), sizes written
with digit separators (``1_073_741_824``, ``1,048,576``) and tables interrupted by other
lines (``NCCL INFO`` lines of ``NCCL_DEBUG=INFO``, blank lines, ``#`` comments: kept in
:attr:`~.records.Run.notes`, and every row after them parsed).  Inside a table a line that
starts like a number is a row (not a timestamp ``2026-12-01 …``, a ``host:pid:tid`` prefix or
an ``NCCL INFO`` line).  It never returns a value it could not read: text with no
table, a row that does not fit its header, a cell that is not a finite number of its
column (``1,5``, ``nan``, ``inf``, a negative time or bandwidth, a size ``2K``) or a last
row cut short (``… 46.80 1.40 2``, see :class:`~.records.Shapes`) raise ``ValueError``
naming the line and the column.  Busbw-only markdown tables are read by :mod:`.busbw_table`.
"""
from __future__ import annotations

import io
import re

from .records import (NCCL_TESTS_COLUMNS, Cell, Device, Row, Run, Shapes, Timing, check_collective,
                      collective_name, parse_cell, with_collective)

__all__ = ["parse_nccl_tests"]

_KEY_COLUMNS = ("size", "count", "type", "redop", "root")
_TIMING_COLUMNS = ("time", "algbw", "busbw", "#wrong", "error")
_US, _GBPS = 1e-6, 1e9

_RE_VERSION = re.compile(r"nccl-tests version\s+(\S+)")
_RE_LIB = re.compile(r"nccl-library=(\d+)")
_RE_NCCL = re.compile(r"NCCL version\s+(\d+\.\d+\.\d+)")
_RE_START = re.compile(r"Collective test starting:\s*(\S+)")
_RE_END = re.compile(r"Collective test concluded:\s*(\S+)")
_RE_PARAMS = re.compile(r"(nThread|nGpus|minBytes|maxBytes|step:|warmup iters:|agg iters:|iters:|"
                        r"validation:|graph:)\s*(\S+)")
_RE_DEVICE = re.compile(r"Rank\s+(\d+)\s+(?:Group\s+(\d+)\s+)?Pid\s+(\d+)\s+on\s+(\S+)\s+device\s+(\d+)\s+"
                        r"\[([^\]]*)\]\s+(.*\S)")
_RE_AVG = re.compile(r"Avg bus bandwidth\s*:\s*([-+0-9.eE]+)")
_RE_OOB = re.compile(r"Out of bounds values\s*:\s*(.*\S)")
_RE_ROWLIKE = re.compile(r"[+-]?(?:\d|\.\d|nan|inf)", re.IGNORECASE)   # what a row's size starts with
_RE_DATE = re.compile(r"\d{4}-\d\d-\d\d(?:$|[T ])")                  # a log line's timestamp
_RE_NCCL_LOG = re.compile(r"\bNCCL (?:INFO|WARN|TRACE|ABORT)\b")
_ENDS_TABLE = (_RE_VERSION, _RE_START, _RE_END, _RE_AVG, _RE_OOB)
_SKIP = ("Using devices",)


def _nccl_version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE → "major.minor.patch" (10000·major + 100·minor + patch since 2.9,
    1000·major + 100·minor + patch before)."""
    if code >= 20900:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


def _is_placement(body: str) -> bool:
    return "out-of-place" in body or body == "in-place"


def _header_columns(tokens: list[str]) -> list[str] | None:
    low = [t.lower() for t in tokens]
    if "size" in low and "time" in low and ("algbw" in low or "busbw" in low):
        return low
    return None


def _split_groups(columns: list[str], lineno: int) -> tuple[list[str], list[list[str]]]:
    first = columns.index("time")
    keys, rest = columns[:first], columns[first:]
    for k in keys:
        if k not in _KEY_COLUMNS:
            raise ValueError(f"line {lineno}: unknown column {k!r} before 'time'")
    groups: list[list[str]] = []
    for c in rest:
        if c == "time":
            groups.append([])
        if c not in _TIMING_COLUMNS or c in groups[-1]:
            raise ValueError(f"line {lineno}: unexpected column {c!r} in the timing columns")
        groups[-1].append(c)
    if len(groups) > 2:
        raise ValueError(f"line {lineno}: {len(groups)} groups of timing columns (nccl-tests prints at most 2)")
    return keys, groups


class _Block:
    """Collects one test's lines."""

    def __init__(self):
        self.meta: dict = {"devices": [], "notes": [], "parameters": {}}
        self.keys: list[str] | None = None
        self.groups: list[list[str]] = []
        self.placements: list[str] = []
        self.rows: list[Row] = []
        self.concluded = False
        self.placement_line: str | None = None
        self.header_line = self.placement_at = self.last_row_line = 0
        self.shapes = Shapes()

    def empty(self) -> bool:
        return not self.rows and self.keys is None

    def start_table(self, columns: list[str], lineno: int) -> None:
        self.keys, self.groups = _split_groups(columns, lineno)
        self.header_line = lineno
        if "size" not in self.keys:
            raise ValueError(f"line {lineno}: the table has no size column")
        labels = []
        if self.placement_line:
            pos = {p: self.placement_line.find(s) for p, s in
                   (("out_of_place", "out-of-place"), ("in_place", "in-place"))}
            # "out-of-place" contains "-place" but not "in-place"; find("in-place") is exact
            labels = [p for p, i in sorted(pos.items(), key=lambda kv: kv[1]) if i >= 0]
        if len(self.groups) == 2:
            self.placements = labels if len(labels) == 2 else ["out_of_place", "in_place"]
            if len(labels) != 2:
                self.meta["notes"].append("two timing groups without a placement line: "
                                          "assumed nccl-tests' order (out-of-place, in-place)")
        else:
            self.placements = labels if len(labels) == 1 else ["unstated"]
        # (column, placement) of each field; per placement, the fields of time, algbw, busbw
        self.fields = [(k, None) for k in self.keys]
        self.timing_fields = []
        for placement, group in zip(self.placements, self.groups):
            start = len(self.fields)
            self.fields += [(c, placement) for c in group]
            self.timing_fields.append((placement, tuple(start + group.index(c) if c in group else None
                                                        for c in ("time", "algbw", "busbw"))))

    def _cell(self, k: int, lineno: int) -> Cell:
        """Where field ``k`` (0-based) of a row on ``lineno`` is."""
        name, placement = self.fields[k]
        return Cell(lineno, k + 1, name, placement)

    def add_row(self, tokens: list[str], lineno: int) -> None:
        fields = self.fields
        if len(tokens) != len(fields):
            c = self._cell(min(len(tokens), len(fields) - 1), lineno)
            what = "no value for" if len(tokens) < len(fields) else "a value beyond"
            raise ValueError(f"line {lineno}: {len(tokens)} fields where the table header (line "
                             f"{self.header_line}) has {len(fields)} columns: {what} column {c.field} "
                             f"({c.name!r}{', ' + c.placement.replace('_', '-') if c.placement else ''})"
                             " (a row cut short or two lines run together?)")
        vals: dict = {}
        shaped: list[tuple[str, Cell]] = []
        for k, (text, (name, placement)) in enumerate(zip(tokens, fields)):
            if name in ("type", "redop"):
                vals[name] = text
            elif name in ("#wrong", "error") and text.upper() == "N/A":
                vals[placement, name] = None
            else:
                cell = Cell(lineno, k + 1, name, placement)
                value = parse_cell(text, cell)
                if placement is None:
                    vals[name] = value
                else:
                    vals[placement, name] = value
                    if name != "#wrong":
                        shaped.append((text, cell))
        kw = {"size": vals["size"], "count": vals.get("count"), "dtype": vals.get("type"),
              "redop": vals.get("redop"), "root": vals.get("root")}
        for placement, idx in self.timing_fields:
            t, a, b = (vals.get((placement, c)) for c in ("time", "algbw", "busbw"))
            kw[placement] = Timing(
                time=None if t is None else t * _US, algbw=None if a is None else a * _GBPS,
                busbw=None if b is None else b * _GBPS, wrong=vals.get((placement, "#wrong")),
                error=vals.get((placement, "error")),
                printed=tuple(None if i is None else tokens[i] for i in idx))
        self.shapes.add_row(shaped)
        self.rows.append(Row(**kw))

    def end_table(self) -> None:
        """The table ended: refuse its last row if a cell looks cut short (:class:`~.records.Shapes`)."""
        if self.keys is not None and (cut := self.shapes.cut()) is not None:
            text, cell = cut
            raise cell.fail(text, "looks cut short: the other rows print this column with more "
                            "decimals (or a longer exponent) at this magnitude; a log that ends "
                            "inside its last row?")
        self.shapes = Shapes()

    def build(self, nranks: int | None) -> Run:
        m = self.meta
        present = set(self.keys or ())
        for g in self.groups:
            present |= set(g)
        missing = [c for c in NCCL_TESTS_COLUMNS if c not in present]
        if len(self.groups) < 2:
            missing.append("in-place" if self.placements == ["out_of_place"] else
                           "out-of-place" if self.placements == ["in_place"] else
                           "second placement (the table does not say out-of-place or in-place)")
        test = m.get("test")
        devices = tuple(m["devices"])
        if nranks is None:
            nranks = len(devices) or m.get("ranks_from_command")
        columns = list(self.keys or ())
        for g in self.groups:
            columns += g
        return Run(rows=tuple(self.rows), placements=tuple(self.placements), columns=tuple(columns),
                   missing_columns=tuple(missing), collective=collective_name(test) if test else None,
                   test=test, nranks=nranks, nccl_version=m.get("nccl_version"),
                   nccl_tests_version=m.get("nccl_tests_version"), devices=devices,
                   parameters=dict(m["parameters"]), command=m.get("command"),
                   avg_busbw=m.get("avg_busbw"), out_of_bounds=m.get("out_of_bounds"),
                   notes=tuple(m["notes"]))


def _command_meta(line: str, meta: dict) -> None:
    meta["command"] = line
    test = re.search(r"(\w+_perf(?:_mpi)?)\b", line)
    if test and "test" not in meta:
        meta["test"] = test.group(1)
    g = re.search(r"(?:^|\s)-g\s+(\d+)", line)
    t = re.search(r"(?:^|\s)-t\s+(\d+)", line)
    if g:
        meta["ranks_from_command"] = int(g.group(1)) * (int(t.group(1)) if t else 1)


def parse_nccl_tests(text: str, nranks: int | None = None,
                     collective: str | None = None) -> tuple[Run, ...]:
    """Parse nccl-tests output into one :class:`Run` per test in ``text``.

    ``nranks`` overrides the rank count found in the text (device lines, or ``-g``/``-t``
    on a ``$`` command line).  ``collective`` (``"all_reduce"``, or the binary's name
    ``"all_reduce_perf"``) names the collective of a table whose text does not — a table
    pasted without its ``all_reduce_perf`` line; an unknown name, or one that contradicts
    the log's own, raises ``ValueError`` naming ``collective``::

        >>> table = '''
        ... #     size    count  type redop root   time  algbw  busbw #wrong
        ...    1048576   262144 float   sum   -1  30.00  34.95  61.17      0
        ...  268435456 67108864 float   sum   -1 1900.0 141.28 247.25      0
        ... '''
        >>> parse_nccl_tests(table, nranks=8)[0].collective is None
        True
        >>> run, = parse_nccl_tests(table, nranks=8, collective="all_reduce")
        >>> run.collective, len(run)
        ('all_reduce', 2)

    It raises ``ValueError`` if ``text`` holds no nccl-tests
    table (a header line with at least ``size``, ``time`` and ``algbw`` or ``busbw``),
    and, naming the line and the column, on a row that does not fit its header, a cell that
    is not a finite number of its column, or a table's last row cut short.  Lines between
    the rows of a table (``NCCL INFO``, blank, ``#``) do not end it; the next header, the
    footer (``# Out of bounds``, ``# Avg bus bandwidth``), a test's start or end line, a
    placement line or a ``$`` command line do.  Parsing is linear in the text's length.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if nranks is not None and (isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1):
        raise ValueError(f"nranks must be an integer >= 1, got {nranks!r}")
    if collective is not None:
        check_collective(collective)
    runs: list[Run] = []
    block = _Block()
    in_table = False

    def flush():
        nonlocal block
        block.end_table()
        if block.rows:
            runs.append(block.build(nranks))
        block = _Block()

    for lineno, raw in enumerate(io.StringIO(text, newline=None), 1):     # lazily, any newline
        line = raw.strip()
        body = line.lstrip("#").strip()
        tokens = body.split()
        if in_table:
            # every row of the table, whatever lines come between them (NCCL_DEBUG=INFO lines,
            # blank lines, comments); a line that starts like a number must be a row
            if (tokens and line[0] != "#" and ":" not in tokens[0] and _RE_ROWLIKE.match(tokens[0])
                    and not _RE_DATE.match(tokens[0])
                    and not _RE_NCCL_LOG.search(line)):
                block.add_row(tokens, lineno)
                block.last_row_line = lineno
                continue
            if tokens and all(t.startswith("(") for t in tokens):      # the units line
                continue
            if any(r.search(line) for r in _ENDS_TABLE) or line.startswith("$") or _is_placement(body):
                in_table = False
                block.end_table()
        if not line:
            continue
        if (m := _RE_VERSION.search(line)) and (block.rows or block.concluded or "test" in block.meta):
            flush()
        if (m := _RE_START.search(line)) and ("test" in block.meta or block.rows):
            flush()
        if (cols := _header_columns(tokens)) is not None:
            if block.rows:
                # a placement line after the previous table's rows belongs to this table
                carry = block.placement_line if block.placement_at > block.last_row_line else None
                flush()
                block.placement_line, block.placement_at = carry, lineno
            block.start_table(cols, lineno)
            in_table = True
            continue
        meta = block.meta
        if line.startswith("$"):
            _command_meta(line.lstrip("$").strip(), meta)
        elif _is_placement(body):
            block.placement_line, block.placement_at = body, lineno
        elif m := _RE_VERSION.search(line):
            meta["nccl_tests_version"] = m.group(1)
            if lib := _RE_LIB.search(line):
                meta["nccl_version"] = _nccl_version_from_code(int(lib.group(1)))
        elif m := _RE_START.search(line):
            meta["test"] = m.group(1)
        elif m := _RE_END.search(line):
            block.concluded = True
        elif m := _RE_DEVICE.search(line):
            g = m.groups()
            meta["devices"].append(Device(rank=int(g[0]), group=int(g[1]) if g[1] else None, pid=int(g[2]),
                                          host=g[3], device=int(g[4]), bus_id=g[5], name=g[6]))
        elif m := _RE_AVG.search(line):
            meta["avg_busbw"] = float(m.group(1)) * _GBPS
        elif m := _RE_OOB.search(line):
            meta["out_of_bounds"] = m.group(1)
        elif line.startswith("#") and "nThread" in line:
            meta["parameters"] = {k.rstrip(":"): v for k, v in _RE_PARAMS.findall(line)}
        elif m := _RE_NCCL.search(line):
            meta["nccl_version"] = m.group(1)
        elif body and body not in _SKIP and body != "[...]":
            meta["notes"].append(body)
    flush()
    if not runs:
        raise ValueError("no nccl-tests table found: expected a header line with the columns "
                         "'size', 'time' and 'algbw' or 'busbw', followed by rows that start with a size")
    return tuple(with_collective(r, collective) for r in runs)


