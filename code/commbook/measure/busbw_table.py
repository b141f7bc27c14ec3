"""Busbw-only tables: the markdown tables of message size and bus bandwidth that some
reports publish instead of an nccl-tests log (e.g. the Azure ND H100 v5 results), with
size labels such as ``1K``, ``132K`` or ``8G``.
"""
from __future__ import annotations

import math
import re

from .records import NCCL_TESTS_COLUMNS, PLACEMENTS, Row, Run, Timing, collective_name

__all__ = ["parse_busbw_markdown", "resolve_size_label"]

_GBPS = 1e9
_RE_NCCL = re.compile(r"NCCL(?: version)?\s+(\d+\.\d+\.\d+)")


def _num(text: str, what: str, lineno: int) -> float:
    try:
        return float(text.replace("_", "").replace(",", ""))
    except ValueError:
        raise ValueError(f"line {lineno}: {what} {text!r} is not a number") from None

_UNITS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4}


def resolve_size_label(label: str, convention: str = "powers_of_two") -> int:
    """Bytes of a size label such as ``"1K"``, ``"132K"``, ``"8G"``, ``"4MiB"`` or ``"65536"``.

    ``convention``: ``"decimal"`` (K = 10³), ``"binary"`` (K = 2¹⁰) or ``"powers_of_two"``:
    the size is a power of two and the label either its binary reading (1K = 1024) or its
    decimal leading digits, give or take one in the last digit (65536 → "65K", 131072 →
    "131K" or "132K", 2³⁰ → "1G"); a label that fits no power of two raises ``ValueError``.
    A label with an explicit ``KiB``/``MiB`` is binary whatever the convention.

    >>> resolve_size_label("1K"), resolve_size_label("131K"), resolve_size_label("132K"), resolve_size_label("8G")
    (1024, 131072, 131072, 8589934592)
    >>> resolve_size_label("1K", "decimal"), resolve_size_label("4MiB", "decimal")
    (1000, 4194304)
    >>> resolve_size_label("100K")
    Traceback (most recent call last):
    ...
    ValueError: size label '100K' is not a power of two written in binary or decimal units
    """
    if convention not in ("decimal", "binary", "powers_of_two"):
        raise ValueError(f"convention must be 'decimal', 'binary' or 'powers_of_two', got {convention!r}")
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(i?)B?\s*", str(label), flags=re.IGNORECASE)
    if not m:
        raise ValueError(f"size label {label!r} is not a number with an optional K/M/G/T suffix")
    x, unit, binary = float(m.group(1)), m.group(2).upper(), bool(m.group(3))
    k = _UNITS[unit]
    if binary or convention == "binary":
        value = x * 1024 ** k
    elif convention == "decimal":
        value = x * 1000 ** k
    else:
        j = round(math.log2(max(x, 1e-300) * 1000 ** k)) if x > 0 else None
        ok = j is not None and j >= 0 and (x * 1024 ** k == 2 ** j or abs(x - 2 ** j / 1000 ** k) <= 1.0
                                           if k else x == 2 ** j)
        if not ok:
            raise ValueError(f"size label {label!r} is not a power of two written in binary or decimal units")
        value = 2 ** j
    if value != int(value):
        raise ValueError(f"size label {label!r} is not a whole number of bytes")
    return int(value)


def _md_cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def parse_busbw_markdown(text: str, collective: str | None = None, nranks: int | None = None,
                         placement: str = "in_place", sizes: str = "powers_of_two") -> Run:
    """Parse a markdown table of message size and bus bandwidth (GB/s), as published by
    reports that keep only busbw (e.g. the Azure ND H100 v5 results).

    ``collective`` and ``nranks`` default to what the text says ("all_reduce", "8x H100");
    ``placement`` is the placement the source states (in-place for nccl-tests' summary
    tables); ``sizes`` is the label convention of :func:`resolve_size_label`.  Times are
    not in such a table: :meth:`Run.times` derives them from busbw.

    An 8-GPU all-reduce of 8 GiB at 440 GB/s of busbw took 2·7/8 · 2³³ B / 440 GB/s:

    >>> run = parse_busbw_markdown("allreduce on 8x H100\\n| Size | busbw (GB/s) |\\n|--|--|\\n| 8G | 440 |")
    >>> run.collective, run.nranks, run.rows[0].size, round(float(run.times()[0]) * 1e3, 4)
    ('all_reduce', 8, 8589934592, 34.1645)
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines) if ln.strip().startswith("|")
                   and any("size" in c.lower() for c in _md_cells(ln))
                   and any("busbw" in c.lower() for c in _md_cells(ln))), None)
    if header is None:
        raise ValueError("no markdown table with a size column and a busbw column found")
    cells = [c.lower() for c in _md_cells(lines[header])]
    i_size = next(i for i, c in enumerate(cells) if "size" in c)
    i_bus = next(i for i, c in enumerate(cells) if "busbw" in c)
    rows, notes = [], [ln.strip() for ln in lines[:header] if ln.strip()]
    for lineno, ln in enumerate(lines[header + 1:], header + 2):
        if not ln.strip().startswith("|"):
            break
        c = _md_cells(ln)
        if all(re.fullmatch(r":?-+:?", x) for x in c if x):
            continue
        if len(c) != len(cells):
            raise ValueError(f"line {lineno}: {len(c)} cells, the header has {len(cells)}")
        bus = _num(c[i_bus], "busbw", lineno) * _GBPS
        rows.append(Row(size=resolve_size_label(c[i_size], sizes), size_label=c[i_size],
                        **{placement: Timing(None, None, bus, None, (None, None, c[i_bus]))}))
    if not rows:
        raise ValueError("the markdown table has no rows")
    if collective is None:
        m = re.search(r"\b(all_?reduce|all_?gather|reduce_?scatter|all_?to_?all)\b", text, re.IGNORECASE)
        collective = collective_name(m.group(1).lower()) if m else None
    if nranks is None:
        m = re.search(r"\b(\d+)\s*x\s+(?:NVIDIA\s+)?[A-Z]+\d", text)
        nranks = int(m.group(1)) if m else None
    m = _RE_NCCL.search(text)
    return Run(rows=tuple(rows), placements=(placement,), columns=("size", "busbw"),
               missing_columns=tuple(c for c in NCCL_TESTS_COLUMNS if c not in ("size", "busbw"))
               + ("out-of-place" if placement == "in_place" else "in-place",),
               collective=collective, nranks=nranks, nccl_version=m.group(1) if m else None,
               notes=tuple(notes), format="busbw-markdown")


