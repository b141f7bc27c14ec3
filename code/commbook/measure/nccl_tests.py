"""Parse the output of NVIDIA's nccl-tests.

nccl-tests (``all_reduce_perf``, ``all_gather_perf`` …) prints comment lines (``#``: the
version, the run's parameters, one line per rank and device), then a table: the key
columns ``size count type redop root`` and, for each placement (out-of-place, then
in-place), ``time algbw busbw #wrong``; then ``# Avg bus bandwidth : …``.  Older nccl-tests
releases (the 16×8 A100 log of data/measured/nccl-tests/multinode/, copied in January 2023)
printed no ``root`` column and, instead of ``#wrong`` (the count of wrong elements), an
``error`` column: the largest deviation from the expected result
(``5e-07``), kept in :attr:`~.records.Timing.error`.  Several tests can
be concatenated in one log.  Units as printed: size in bytes, time in µs, bandwidths in
GB/s (10⁹ B/s); the records (:mod:`.records`) hold bytes, seconds and bytes/s.

:func:`parse_nccl_tests` reads any such text, including tables whose author kept only some
columns (it lists the others in :attr:`~.records.Run.missing_columns`) and sizes written
with digit separators (``1_073_741_824``).  Text with no such table, or a row that does not
fit its header, raises ``ValueError``.  Busbw-only markdown tables are read by
:mod:`.busbw_table`.
"""
from __future__ import annotations

import re

from .records import NCCL_TESTS_COLUMNS, Device, Row, Run, Timing, collective_name

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
_RE_SIZE = re.compile(r"\d[\d_,]*")
_SKIP = ("Using devices",)


def _nccl_version_from_code(code: int) -> str:
    """NCCL_VERSION_CODE → "major.minor.patch" (10000·major + 100·minor + patch since 2.9,
    1000·major + 100·minor + patch before)."""
    if code >= 20900:
        return f"{code // 10000}.{code // 100 % 100}.{code % 100}"
    return f"{code // 1000}.{code // 100 % 10}.{code % 100}"


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


def _num(text: str, kind, what: str, lineno: int):
    try:
        return kind(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(f"line {lineno}: {what} {text!r} is not a number") from None


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

    def empty(self) -> bool:
        return not self.rows and self.keys is None

    def start_table(self, columns: list[str], lineno: int) -> None:
        self.keys, self.groups = _split_groups(columns, lineno)
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

    def add_row(self, tokens: list[str], lineno: int) -> None:
        ncols = len(self.keys) + sum(len(g) for g in self.groups)
        if len(tokens) != ncols:
            raise ValueError(f"line {lineno}: {len(tokens)} fields, the table header has {ncols}")
        key = dict(zip(self.keys, tokens[:len(self.keys)]))
        size = _num(key["size"], int, "size", lineno) if "size" in key else None
        if size is None:
            raise ValueError(f"line {lineno}: the table has no size column")
        kw = {"size": size,
              "count": _num(key["count"], int, "count", lineno) if "count" in key else None,
              "dtype": key.get("type"), "redop": key.get("redop"),
              "root": _num(key["root"], int, "root", lineno) if "root" in key else None}
        i = len(self.keys)
        for placement, group in zip(self.placements, self.groups):
            cells = dict(zip(group, tokens[i:i + len(group)]))
            i += len(group)
            wrong, error = cells.get("#wrong"), cells.get("error")
            kw[placement] = Timing(
                time=_num(cells["time"], float, "time", lineno) * _US if "time" in cells else None,
                algbw=_num(cells["algbw"], float, "algbw", lineno) * _GBPS if "algbw" in cells else None,
                busbw=_num(cells["busbw"], float, "busbw", lineno) * _GBPS if "busbw" in cells else None,
                wrong=None if wrong is None or wrong.upper() == "N/A" else _num(wrong, int, "#wrong", lineno),
                error=None if error is None or error.upper() == "N/A" else _num(error, float, "error", lineno),
                printed=(cells.get("time"), cells.get("algbw"), cells.get("busbw")))
        self.rows.append(Row(**kw))

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


def parse_nccl_tests(text: str, nranks: int | None = None) -> tuple[Run, ...]:
    """Parse nccl-tests output into one :class:`Run` per test in ``text``.

    ``nranks`` overrides the rank count found in the text (device lines, or ``-g``/``-t``
    on a ``$`` command line).  Raises ``ValueError`` if ``text`` holds no nccl-tests
    table (a header line with at least ``size``, ``time`` and ``algbw`` or ``busbw``),
    or a row that does not fit its header.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if nranks is not None and (isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1):
        raise ValueError(f"nranks must be an integer >= 1, got {nranks!r}")
    runs: list[Run] = []
    block = _Block()
    in_table = False

    def flush():
        nonlocal block
        if block.rows:
            runs.append(block.build(nranks))
        block = _Block()

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        body = line.lstrip("#").strip()
        tokens = body.split()
        if in_table:
            if tokens and _RE_SIZE.fullmatch(tokens[0]) and not line.startswith("#"):
                block.add_row(tokens, lineno)
                continue
            if tokens and all(t.startswith("(") for t in tokens):      # the units line
                continue
            in_table = False
        if not line:
            continue
        if (m := _RE_VERSION.search(line)) and (block.rows or block.concluded or "test" in block.meta):
            flush()
        if (m := _RE_START.search(line)) and ("test" in block.meta or block.rows):
            flush()
        if (cols := _header_columns(tokens)) is not None:
            if block.rows:
                flush()
            block.start_table(cols, lineno)
            in_table = True
            continue
        meta = block.meta
        if line.startswith("$"):
            _command_meta(line.lstrip("$").strip(), meta)
        elif "out-of-place" in body or re.fullmatch(r"in-place", body):
            block.placement_line = body
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
    return tuple(runs)


