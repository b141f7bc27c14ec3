"""One way to put a result's numbers on a page: :func:`glue_fields`.

A book helper returns a dataclass whose field names carry their units (``time_s``,
``size_bytes``, ``bw_Bps``, ``speedup_x``, ``share_frac``); :func:`fields` turns every
field into its text with the formatter its suffix names, and :func:`glue_fields` glues
them into the page as ``{prefix}_{field}``, so a paragraph writes
``{glue:text}`ring_time_s``` and the cell above it reads ``glue_fields("ring", result)``.
A cell that computes its numbers itself, with the library, glues them as a mapping
(``glue_fields("lb", {"bound_s": bound, "tree_s": tree})``) under the same rules.

==========  =====================================  =============================
suffix      meaning                                formatter (default digits)
==========  =====================================  =============================
``_s``      seconds                                :func:`~commbook.units.fmt_time` (4)
``_bytes``  bytes                                  :func:`~commbook.units.fmt_bytes` (3)
``_Bps``    bytes per second                       :func:`~commbook.units.fmt_rate` (4)
``_x``      a ratio                                :func:`~commbook.units.fmt_ratio` (3)
``_frac``   a share (1 = 100 %)                    :func:`~commbook.units.fmt_pct`
(int)       a count                                :func:`~commbook.units.fmt_count`
(float)     a plain number                         :func:`~commbook.units.fmt_number` (4)
(str)       text, glued as it is
==========  =====================================  =============================

A nested dataclass is glued under ``{prefix}_{field}``; other values (lists, tables,
figures) are left to the page, and so is a field declared with :func:`not_glued` (an input
the result carries for its readers, such as the link it was computed on).
"""
from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Callable, Mapping

from ..units import fmt_bytes, fmt_count, fmt_number, fmt_pct, fmt_rate, fmt_ratio, fmt_time

__all__ = ["SUFFIXES", "suffix_format", "not_glued", "fields", "glue_fields"]

SUFFIXES: dict[str, tuple[Callable[..., str], int | None]] = {
    "_s": (lambda v, d: fmt_time(v, d), 4),
    "_bytes": (lambda v, d: fmt_bytes(v, digits=d), 3),
    "_Bps": (lambda v, d: fmt_rate(v, d), 4),
    "_x": (lambda v, d: fmt_ratio(v, d), 3),
    "_frac": (lambda v, d: fmt_pct(v, d), None),
}
"""Unit suffix of a field name → (formatter(value, digits), default digits)."""


def suffix_format(name: str, digits: int | None = None) -> Callable[[Any], str] | None:
    """The formatter that the unit suffix of ``name`` names (:data:`SUFFIXES`), to ``digits``
    significant digits or its default; ``None`` when ``name`` has no unit suffix.

    >>> suffix_format("ring_s")(2.5e-6), suffix_format("n_bytes", 2)(1.23e6), suffix_format("p")
    ('2.5 µs', '1.2 MB', None)
    """
    for suffix, (fmt, default) in SUFFIXES.items():
        if name.endswith(suffix):
            return lambda v: fmt(v, default if digits is None else digits)
    return None


def not_glued(default: Any = None) -> Any:
    """A dataclass field that :func:`fields` leaves out (and ``repr`` too): an input a result
    keeps for its readers, e.g. ``link: Link = not_glued()``.

    >>> @dataclasses.dataclass
    ... class Run:
    ...     time_s: float
    ...     link: object = not_glued()
    >>> fields("run", Run(1e-3, link="NVLink"))
    {'run_time_s': '1 ms'}
    """
    return dataclasses.field(default=default, repr=False, metadata={"glue": False})


def _text(name: str, value: Any, how: int | Callable[[Any], str] | None) -> str | None:
    if callable(how):
        return how(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    if (fmt := suffix_format(name, how)) is not None:
        return fmt(value)
    if isinstance(value, numbers.Integral) and how is None:
        return fmt_count(int(value))
    return fmt_number(float(value), how if how is not None else 4)


def fields(prefix: str, result: Any, **how: int | Callable[[Any], str]) -> dict[str, str]:
    """The text of every field of the dataclass ``result``, keyed ``{prefix}_{field}``; a
    mapping of names to values (what a page cell computed) is glued the same way.

    ``how`` overrides a field's format: an int is its number of significant digits, a
    callable its formatter; a field of a nested dataclass is named ``{field}_{sub}``.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Ring:
    ...     p: int
    ...     time_s: float
    ...     speedup_x: float
    >>> fields("ring", Ring(p=1000, time_s=2.0e-3, speedup_x=499.5), time_s=2)
    {'ring_p': '1,000', 'ring_time_s': '2 ms', 'ring_speedup_x': '500×'}
    >>> fields("lb", {"p": 64, "bound_s": 0.039375})
    {'lb_p': '64', 'lb_bound_s': '39.37 ms'}
    """
    if isinstance(result, Mapping):
        values = dict(result)
    elif dataclasses.is_dataclass(result) and not isinstance(result, type):
        values = {f.name: getattr(result, f.name) for f in dataclasses.fields(result)
                  if f.metadata.get("glue", True)}
    else:
        raise TypeError(f"result must be a dataclass instance or a mapping, got {type(result).__name__}")
    names = set(values)
    nested = {n for n, v in values.items() if dataclasses.is_dataclass(v)}
    unknown = {h for h in how if h not in names and not any(h.startswith(f"{n}_") for n in nested)}
    if unknown:
        raise ValueError(f"how: no field {sorted(unknown)} in {type(result).__name__} "
                         f"(its fields: {sorted(names)})")
    out: dict[str, str] = {}
    for name, value in values.items():
        key = f"{prefix}_{name}"
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            sub = {h[len(name) + 1:]: v for h, v in how.items()
                   if h.startswith(f"{name}_") and h not in names}
            out.update(fields(key, value, **sub))
            continue
        text = _text(name, value, how.get(name))
        if text is not None:
            out[key] = text
    return out


def glue_fields(prefix: str, result: Any, **how: int | Callable[[Any], str]) -> None:
    """Glue :func:`fields` of ``result`` into the page (``display=False``): each field is
    then ``{glue:text}`{prefix}_{field}``` in the prose."""
    from myst_nb import glue

    for key, text in fields(prefix, result, **how).items():
        glue(key, text, display=False)
