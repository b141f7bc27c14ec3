"""Tables of the book: raw values rendered bilingually.

Rows hold plain numbers (bytes, seconds, bytes/s), so tests can check them.
:class:`Table` is a small generic table (raw row values, per-column formatters, headers,
title and notes in each language) with :meth:`Table.to_text` for terminals,
:meth:`Table.to_html` for notebook pages and :meth:`Table.to_markdown`.  Every table of
the book is one.

No pandas.
"""
from __future__ import annotations

import dataclasses
import html
import math
import numbers
import re
import sys
import unicodedata
from dataclasses import dataclass, field
from functools import reduce
from typing import Any, Callable, Mapping, Sequence

from .glue import suffix_format
from .names import algorithm_labels  # noqa: F401 (re-exported: the table labels of a collective's algorithms)
from .text import texts

__all__ = [
    "LANGS", "Table", "cell_text", "list_text", "bilingual", "bilingual_notes", "builder_name",
]

LANGS: tuple[str, ...] = ("en", "zh")
"""The languages every :class:`Table` carries."""


def list_text(values: Sequence[Any], max_items: int = 8) -> str:
    """A short list: ``[0, 1, 2, 3]``; longer ones keep the first and last items around
    an ellipsis (``[0, 1, 2, 3, 10, …, 31, 32, 33]``)."""
    items = [cell_text(v) for v in values]
    if len(items) > max_items:
        head = max_items - 3
        items = items[:head] + ["…"] + items[-3:]
    return "[" + ", ".join(items) + "]"


def cell_text(value: Any) -> str:
    """Default cell text: ``None`` → ``'—'``; bool → ✓/✗; int as is; float with 4
    significant digits; lists/tuples/arrays via :func:`list_text`; anything else ``str``."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "✓" if value else "✗"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(value, str):
        return value
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        return list_text(value)
    return str(value)


PROSE_WIDTH = 24
"""A text column whose longest cell is wider than this (terminal columns, CJK counting
two) holds sentences: its cells are ``td.cb-prose``, which keep a readable width."""


def _width(text: str) -> int:
    """Display width in a terminal (CJK characters take two columns)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int, right: bool) -> str:
    gap = " " * (width - _width(text))
    return gap + text if right else text + gap


def bilingual(en: str, zh: str) -> dict[str, str]:
    """A title or caption in both languages: ``{"en": en, "zh": zh}``."""
    return {"en": en, "zh": zh}


def bilingual_notes(*pairs: tuple[str, str]) -> dict[str, list[str]]:
    """Table notes from (English, Chinese) pairs."""
    return {"en": [p[0] for p in pairs], "zh": [p[1] for p in pairs]}


def builder_name(skip: int = 2) -> str:
    """The dotted name (``module.qualname``) of the nearest caller outside this module and
    :mod:`dataclasses`, if it is a function of :mod:`commbook`; else ``""`` (a page)."""
    frame = sys._getframe(skip)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module not in (__name__, "dataclasses") and not frame.f_code.co_name.startswith("<"):
            break
        frame = frame.f_back
    if frame is None or not module.startswith("commbook."):
        return ""
    return f"{module}.{frame.f_code.co_qualname}"


@dataclass
class Table:
    """A demo table: raw values plus everything needed to render it in each language.

    Parameters
    ----------
    key : str
        Demo id, e.g. ``"03-1"``.
    title : dict lang -> str
        Caption per language (``"en"`` and ``"zh"``).
    columns : list of str
        Column keys, in display order; with dataclass rows, field names or dotted paths
        (``"ring.time_s"``).
    headers : dict lang -> list of str
        Column headers per language, aligned with ``columns``.
    rows : list of dataclasses, of dicts (column -> value) or of lists (aligned with ``columns``)
        Raw values: numbers in SI units (bytes, seconds, bytes/s, plain ratios),
        strings, lists of numbers, or ``None`` (rendered "—").  Every row is kept as a dict;
        a dataclass row keeps its fields too, and a dict row may carry extra keys, which
        are not displayed.
    formats : dict column -> callable(value) -> str, or int
        Per-column formatter.  By default a column whose (last) name ends in a unit suffix
        (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``) gets that unit's formatter
        (:func:`commbook.book.glue.suffix_format`), any other :func:`cell_text`; an int is
        the number of significant digits of the suffix's formatter.
    notes : dict lang -> list of str
        Notes printed under the table (flags, sources, derived numbers).
    labels : dict lang -> dict str -> str
        Display names of string cell values per language (e.g. ``"switch"`` → its Chinese word);
        values without an entry are shown as they are.
    meta : dict
        Derived numbers that are not rows (crossovers, optima), for tests and prose.
    parts : list of Table
        Sub-tables rendered after this one (a demo that prints several tables).
    source : str
        The dotted name of the function that built the table (found from the caller when
        not given; empty for a table built on a page).  :meth:`to_html` carries it as
        ``data-source``, and the book links it to that function's source.
    """

    key: str
    title: dict[str, str]
    columns: list[str]
    headers: dict[str, list[str]]
    rows: list[dict[str, Any]]
    formats: dict[str, Callable[[Any], str] | int] = field(default_factory=dict)
    notes: dict[str, list[str]] = field(default_factory=dict)
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    parts: list["Table"] = field(default_factory=list)
    source: str = ""

    def __post_init__(self) -> None:
        if not self.source:
            self.source = builder_name()
        self.columns = list(self.columns)
        if len(set(self.columns)) != len(self.columns):
            raise ValueError(f"table {self.key}: duplicate column keys {self.columns}")
        for lang in LANGS:
            if lang not in self.title:
                raise ValueError(f"table {self.key}: no title in {lang!r}")
            if len(self.headers.get(lang, ())) != len(self.columns):
                raise ValueError(f"table {self.key}: {lang!r} headers must match the "
                                 f"{len(self.columns)} columns")
        rows = []
        for i, row in enumerate(self.rows):
            if dataclasses.is_dataclass(row) and not isinstance(row, type):
                try:
                    rows.append({f.name: getattr(row, f.name) for f in dataclasses.fields(row)}
                                | {c: reduce(getattr, c.split("."), row) for c in self.columns})
                except AttributeError as err:
                    raise ValueError(f"table {self.key}: row {i} lacks a column ({err})") from None
            elif isinstance(row, Mapping):
                missing = [c for c in self.columns if c not in row]
                if missing:
                    raise ValueError(f"table {self.key}: row {i} lacks columns {missing}")
                rows.append(dict(row))
            else:
                row = list(row)
                if len(row) != len(self.columns):
                    raise ValueError(f"table {self.key}: row {i} has {len(row)} values "
                                     f"for {len(self.columns)} columns")
                rows.append(dict(zip(self.columns, row)))
        self.rows = rows
        unknown = set(self.formats) - set(self.columns)
        if unknown:
            raise ValueError(f"table {self.key}: formats for unknown columns {sorted(unknown)}")
        self._fmt = {c: self._formatter(c, self.formats.get(c)) for c in self.columns}

    def _formatter(self, column: str, how: Callable[[Any], str] | int | None) -> Callable[[Any], str]:
        if callable(how):
            return how
        fmt = suffix_format(column.rsplit(".", 1)[-1], how)
        if fmt is None and how is not None:
            raise ValueError(f"table {self.key}: formats[{column!r}] = {how!r} names digits, "
                             "but the column has no unit suffix")
        return fmt or cell_text

    # ------------------------------------------------------------------ access
    def __len__(self) -> int:
        return len(self.rows)

    def value(self, row: int, column: str) -> Any:
        """The raw value in row ``row`` (index) and column ``column``."""
        return self.rows[row][column]

    def column(self, column: str) -> list[Any]:
        """All raw values of a column (or of an undisplayed row key), top to bottom."""
        if column not in self.columns and not (self.rows and column in self.rows[0]):
            raise KeyError(f"table {self.key} has no column {column!r}")
        return [r[column] for r in self.rows]

    def find(self, **match: Any) -> dict[str, Any]:
        """The single row whose values equal ``match`` (``t.find(algo="ring", p=8)``)."""
        hits = [r for r in self.rows if all(r.get(k) == v for k, v in match.items())]
        if len(hits) != 1:
            raise KeyError(f"table {self.key}: {len(hits)} rows match {match}")
        return hits[0]

    def part(self, key: str) -> "Table":
        """The sub-table (see ``parts``) with this key."""
        for t in self.parts:
            if t.key == key:
                return t
        raise KeyError(f"table {self.key} has no part {key!r}")

    # ------------------------------------------------------------------ rendering
    @staticmethod
    def _check_lang(lang: str) -> str:
        if lang not in LANGS:
            raise ValueError(f"lang must be one of {list(LANGS)}, got {lang!r}")
        return lang

    def cell(self, row: int, column: str, lang: str = "en") -> str:
        """The displayed text of one cell."""
        value = self.rows[row][column]
        if value is None:
            return "—"
        if isinstance(value, str):
            return self.labels.get(lang, {}).get(value, value)
        return self._fmt[column](value)

    def cells(self, lang: str = "en") -> list[list[str]]:
        """Every row as displayed text, in ``columns`` order."""
        self._check_lang(lang)
        return [[self.cell(i, c, lang) for c in self.columns] for i in range(len(self.rows))]

    def _heading(self, lang: str) -> str:
        """The title, after "Demo 03-1:" when the key is a lecture demo id."""
        if not re.fullmatch(r"\d\d-\d[a-z]?", self.key):
            return self.title[lang]
        return texts("common").get("table_demo_heading", lang, demo=self.key, title=self.title[lang])

    def _numeric(self, column: str) -> bool:
        vals = [r[column] for r in self.rows if r[column] is not None]
        return bool(vals) and all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                                  or isinstance(v, tuple) for v in vals)

    def to_text(self, lang: str = "en") -> str:
        """Aligned plain text for a terminal: heading, header row, rule, rows, notes,
        then every part.  Numeric columns are right-aligned."""
        lang = self._check_lang(lang)
        head = list(self.headers[lang])
        body = self.cells(lang)
        widths = [max([_width(h)] + [_width(r[j]) for r in body]) for j, h in enumerate(head)]
        right = [self._numeric(c) for c in self.columns]
        line = lambda cs: "  ".join(_pad(c, w, r) for c, w, r in zip(cs, widths, right)).rstrip()
        out = [self._heading(lang), line(head), "  ".join("-" * w for w in widths)]
        out += [line(r) for r in body]
        out += [texts("common").get("table_note", lang, note=n) for n in self.notes.get(lang, [])]
        text = "\n".join(out) + "\n"
        for p in self.parts:
            text += "\n" + p.to_text(lang)
        return text

    def to_html(self, lang: str = "en") -> str:
        """An HTML table (caption = heading) followed by its notes and parts."""
        lang = self._check_lang(lang)
        e = html.escape
        right = [self._numeric(c) for c in self.columns]
        body = self.cells(lang)
        # A column of sentences (a constraint, a note) keeps a readable width when the table
        # is short of room, instead of one word per line (commbook.css: td.cb-prose).
        prose = [not r and max((_width(row[j]) for row in body), default=0) > PROSE_WIDTH
                 for j, r in enumerate(right)]
        td = lambda c, r, p: (f'<td style="text-align:right">{e(c)}</td>' if r
                              else f'<td class="cb-prose">{e(c)}</td>' if p else f"<td>{e(c)}</td>")
        src = f' data-source="{e(self.source)}"' if self.source else ""
        out = [f'<table class="commbook-table" data-demo="{e(self.key)}"{src}>',
               f"<caption>{e(self._heading(lang))}</caption>",
               "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in self.headers[lang]) + "</tr></thead>",
               "<tbody>"]
        for cells in body:
            out.append("<tr>" + "".join(td(c, r, p) for c, r, p in zip(cells, right, prose)) + "</tr>")
        out += ["</tbody>", "</table>"]
        out += [f'<p class="commbook-note">{e(n)}</p>' for n in self.notes.get(lang, [])]
        text = "\n".join(out)
        for p in self.parts:
            text += "\n" + p.to_html(lang)
        return text

    def to_markdown(self, lang: str = "en") -> str:
        """A bold heading, a Markdown pipe table, notes as a list, then the parts."""
        lang = self._check_lang(lang)
        esc = lambda c: c.replace("|", "\\|")
        right = [self._numeric(c) for c in self.columns]
        out = [f"**{esc(self._heading(lang))}**", "",
               "| " + " | ".join(esc(h) for h in self.headers[lang]) + " |",
               "|" + "".join("---:|" if r else "---|" for r in right)]
        out += ["| " + " | ".join(esc(c) for c in cells) + " |" for cells in self.cells(lang)]
        notes = self.notes.get(lang, [])
        if notes:
            out += [""] + [f"- {esc(n)}" for n in notes]
        text = "\n".join(out) + "\n"
        for p in self.parts:
            text += "\n" + p.to_markdown(lang)
        return text
