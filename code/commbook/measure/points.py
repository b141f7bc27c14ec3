"""Measured collective performance: the data files of ``code/commbook/data/measured/``, one data set per file.

Measurements are never typed into the code.  Each lives once, in a JSON file that carries
its numbers *and* where they come from; :func:`load` reads it into a :class:`Measurement`.
This module reads JSON and nothing else: it imports no other part of commbook.

Schema ``commbook.measured/1`` (field: meaning; ``?`` marks an optional field)::

    name          the file's stem
    what          one sentence: what was measured
    collective    "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv", ...
    ranks         number of ranks (GPUs) in the collective
    system        {gpu, gpus, nodes, interconnect, software}
    conditions    settings that change the result, e.g. {"sharp": false}, {"in_place": true}
    units         what each point field means, in words
    points        list of {bytes, busbw_bytes_per_s?, algbw_bytes_per_s?, time_s?,
                  approximate?, label?, stated_as?, stated_bytes?}; at least one of the
                  three measured fields; ``stated_as`` quotes the source's words,
                  ``stated_bytes`` the size the source rounds to
    source        {title, url, section, authors?, chapter?, chapter_title?, path?, commit?}
    notes         list of remarks (how the values were read, caveats)

A log of nccl-tests fits the same schema: one point per row (size, time, algbw, busbw),
``conditions`` for in-place/out-of-place and the data type, ``source.path`` and
``source.commit`` for the file it was copied from.

>>> DATA_DIR.relative_to(DATA_DIR.parents[2]).as_posix()
'commbook/data/measured'
>>> (DATA_DIR / "htsym_allreduce_8xh100.json").is_file()
True
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

__all__ = ["DATA_DIR", "SCHEMA", "MeasuredDataError", "Point", "Source", "System",
           "Measurement", "load", "available"]

DATA_DIR = Path(str(resources.files("commbook") / "data" / "measured"))
"""Where the data files live: ``commbook/data/measured/``, package data of ``commbook``
(``code/commbook/data/measured/`` in the repository), so that an installed wheel finds
them as well as an editable install."""

SCHEMA = "commbook.measured/1"
"""The schema id every data file states."""


class MeasuredDataError(ValueError):
    """A data file is malformed: the message names the file and the field.

    >>> import json, pathlib, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = (pathlib.Path(folder) / "bad.json").write_text(json.dumps({"schema": SCHEMA}))
    >>> load("bad", folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    commbook.measure.points.MeasuredDataError: ...bad.json: field 'system' is missing
    """


@dataclass(frozen=True)
class Point:
    """One measured size.  Units: bytes, bytes/s, seconds; ``None`` where not measured.

    The source's "58MB ... only around 150GB/s" on 8 x H100 (a bf16[8192, 3584] array):

    >>> pt = load("htsym_allreduce_8xh100").points[0]
    >>> pt.bytes == 2 * 8192 * 3584, pt.busbw / 1e9, pt.approximate, pt.stated_bytes
    (True, 150.0, True, 58000000.0)
    """

    bytes: float
    busbw: float | None = None
    algbw: float | None = None
    time: float | None = None
    approximate: bool = False
    label: str | None = None
    stated_as: str | None = None
    stated_bytes: float | None = None


@dataclass(frozen=True)
class Source:
    """Where a data set comes from.

    >>> load("htsym_allreduce_8xh100").source.url
    'https://jax-ml.github.io/scaling-book/gpus/'
    """

    title: str
    url: str
    section: str
    authors: str | None = None
    chapter: str | None = None
    chapter_title: str | None = None
    path: str | None = None
    commit: str | None = None

    def cite(self) -> str:
        """One line: ``authors, title, ch. N "chapter title", section (url)``.

        >>> Source("A Book", "https://example.org", "§2", authors="A. Author", chapter="3").cite()
        'A. Author, A Book, ch. 3, §2 (https://example.org)'
        """
        parts = [p for p in (self.authors, self.title) if p]
        if self.chapter:
            parts.append(f"ch. {self.chapter}" + (f" “{self.chapter_title}”" if self.chapter_title else ""))
        parts.append(self.section)
        if self.path:
            parts.append(self.path + (f" at {self.commit}" if self.commit else ""))
        return ", ".join(parts) + f" ({self.url})"


@dataclass(frozen=True)
class System:
    """The machine that was measured.

    >>> s = load("htsym_allreduce_8xh100").system
    >>> s.gpu, s.gpus, s.nodes
    ('H100', 8, 1)
    """

    gpu: str
    gpus: int
    nodes: int
    interconnect: str
    software: str


@dataclass(frozen=True)
class Measurement:
    """A data set of ``code/commbook/data/measured/``: see the module docstring for the fields.

    >>> m = load("htsym_allreduce_8xh100")
    >>> m.collective, m.ranks, m.conditions, [(n, bw / 1e9) for n, bw in m.pairs()]
    ('all_reduce', 8, {'sharp': False}, [(58720256.0, 150.0), (10000000000.0, 370.0)])
    """

    name: str
    what: str
    collective: str
    ranks: int
    system: System
    conditions: dict[str, Any]
    units: dict[str, str]
    points: tuple[Point, ...]
    source: Source
    notes: tuple[str, ...] = ()
    path: Path | None = field(default=None, compare=False)

    def pairs(self) -> tuple[tuple[float, float], ...]:
        """``(bytes, busbw)`` of every point that has a bus bandwidth."""
        return tuple((pt.bytes, pt.busbw) for pt in self.points if pt.busbw is not None)

    def point(self, nbytes: float) -> Point:
        """The point measured at ``nbytes``."""
        for pt in self.points:
            if pt.bytes == nbytes:
                return pt
        raise KeyError(f"{self.name}: no point at {nbytes!r} bytes "
                       f"(sizes: {[pt.bytes for pt in self.points]})")


def available(directory: Path | str = DATA_DIR) -> list[str]:
    """Names of the data sets in ``directory`` (file stems, sorted).

    >>> names = available()
    >>> "htsym_allreduce_8xh100" in names, names == sorted(names)
    (True, True)
    """
    return sorted(p.stem for p in Path(directory).glob("*.json"))


def _get(obj: dict, key: str, where: str, path: Path, kind: type | tuple[type, ...]) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise MeasuredDataError(f"{path}: field '{where}{key}' is missing")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise MeasuredDataError(f"{path}: field '{where}{key}' has the wrong type "
                                f"({type(value).__name__})")
    return value


def _opt(obj: dict, key: str, where: str, path: Path, kind: type | tuple[type, ...]) -> Any:
    return _get(obj, key, where, path, kind) if obj.get(key) is not None else None


_NUM = (int, float)
_POINT_FIELDS = (("busbw", "busbw_bytes_per_s"), ("algbw", "algbw_bytes_per_s"), ("time", "time_s"))


def _point(raw: dict, i: int, path: Path) -> Point:
    where = f"points[{i}]."
    nbytes = _get(raw, "bytes", where, path, _NUM)
    measured = {attr: _opt(raw, key, where, path, _NUM) for attr, key in _POINT_FIELDS}
    if all(v is None for v in measured.values()):
        raise MeasuredDataError(f"{path}: field '{where}busbw_bytes_per_s' is missing "
                                "(a point needs busbw_bytes_per_s, algbw_bytes_per_s or time_s)")
    for attr, key in _POINT_FIELDS:
        if measured[attr] is not None and not measured[attr] > 0:
            raise MeasuredDataError(f"{path}: field '{where}{key}' must be > 0, got {measured[attr]!r}")
    if not nbytes > 0:
        raise MeasuredDataError(f"{path}: field '{where}bytes' must be > 0, got {nbytes!r}")
    stated = _opt(raw, "stated_bytes", where, path, _NUM)
    return Point(bytes=float(nbytes), **{k: None if v is None else float(v) for k, v in measured.items()},
                 approximate=bool(_opt(raw, "approximate", where, path, bool)),
                 label=_opt(raw, "label", where, path, str),
                 stated_as=_opt(raw, "stated_as", where, path, str),
                 stated_bytes=None if stated is None else float(stated))


def load(name: str, directory: Path | str = DATA_DIR) -> Measurement:
    """Read the data set ``name`` (``directory/name.json``).

    Raises ``FileNotFoundError`` naming the path when the file does not exist, and
    :class:`MeasuredDataError` naming the path and the field when a field is absent or
    of the wrong type.

    >>> load("htsym_allreduce_8xh100").point(10e9).busbw / 1e9   # "close to 370GB/s"
    370.0
    >>> load("nope")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: no measured data set 'nope': ...nope.json does not exist (available: ...)
    """
    path = Path(directory) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"no measured data set {name!r}: {path} does not exist "
                                f"(available: {', '.join(available(directory)) or 'none'})")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise MeasuredDataError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(raw, dict):
        raise MeasuredDataError(f"{path}: the top level must be an object")
    if _get(raw, "schema", "", path, str) != SCHEMA:
        raise MeasuredDataError(f"{path}: field 'schema' must be {SCHEMA!r}, got {raw['schema']!r}")
    sys_raw = _get(raw, "system", "", path, dict)
    src_raw = _get(raw, "source", "", path, dict)
    points = _get(raw, "points", "", path, list)
    if not points:
        raise MeasuredDataError(f"{path}: field 'points' is empty")
    ranks = _get(raw, "ranks", "", path, int)
    if ranks < 1:
        raise MeasuredDataError(f"{path}: field 'ranks' must be >= 1, got {ranks}")
    return Measurement(
        name=name,
        what=_get(raw, "what", "", path, str),
        collective=_get(raw, "collective", "", path, str),
        ranks=ranks,
        system=System(**{k: _get(sys_raw, k, "system.", path, kind) for k, kind in
                         (("gpu", str), ("gpus", int), ("nodes", int), ("interconnect", str),
                          ("software", str))}),
        conditions=dict(_get(raw, "conditions", "", path, dict)),
        units=dict(_get(raw, "units", "", path, dict)),
        points=tuple(_point(p, i, path) for i, p in enumerate(points)),
        source=Source(**{k: _get(src_raw, k, "source.", path, str) for k in ("title", "url", "section")},
                      **{k: _opt(src_raw, k, "source.", path, str)
                         for k in ("authors", "chapter", "chapter_title", "path", "commit")}),
        notes=tuple(_opt(raw, "notes", "", path, list) or ()),
        path=path,
    )
