"""Tables of the book: rows computed from :mod:`commbook.cost`, rendered bilingually.

Rows are plain dataclasses (numbers in bytes, seconds, bytes/s), so tests can check
them; :func:`render_link_table` turns them into HTML (for notebook output) or
Markdown (for READMEs and plain text) without pandas.
"""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Iterable, Sequence

from .cost import effective_bandwidth, half_bandwidth_point
from .hardware import Link
from .units import KB, MB, check_size, fmt_bytes, fmt_rate, fmt_time

__all__ = [
    "DEFAULT_SIZES", "TABLE_LABELS", "LinkRow", "link_table", "render_link_table",
    "fmt_pct", "fmt_gbps",
]

DEFAULT_SIZES: tuple[float, ...] = (4 * KB, 64 * KB, 256 * KB, 1 * MB, 16 * MB, 256 * MB)
"""Message sizes of the link table (decimal units): from 4 KB, through the
half-bandwidth points of IB (250 KB) and NVLink (900 KB), to 256 MB."""

TABLE_LABELS: dict[str, dict[str, str]] = {
    "en": {
        "link": "Link",
        "alpha": "α (start-up)",
        "beta": "β (one direction)",
        "n_half": "n½ = αβ",
        "at": "n = {size}",
        "caption": "Effective bandwidth n/T(n) and its share of β at each message size "
                   "(α–β model; decimal units).",
    },
    "zh": {
        "link": "链路",
        "alpha": "α（启动延迟）",
        "beta": "β（单向带宽）",
        "n_half": "n½ = αβ",
        "at": "n = {size}",
        "caption": "各消息大小下的有效带宽 n/T(n)，括号内是它占 β 的比例"
                   "（α–β 模型；十进制单位）。",
    },
}
"""Column headers and captions by language."""


@dataclass(frozen=True)
class LinkRow:
    """One link of the table.  Units: seconds, bytes/s, bytes; ``fraction`` in [0, 1]."""

    name: str
    alpha: float
    beta: float
    n_half: float
    sizes: tuple[float, ...]
    eff_bw: tuple[float, ...]
    fraction: tuple[float, ...]


def link_table(links: Iterable[Link], sizes: Sequence[float] = DEFAULT_SIZES) -> list[LinkRow]:
    """One :class:`LinkRow` per link: α, β, n½ = αβ, and n/T(n) and n/T(n)/β at ``sizes``.

    >>> from commbook.hardware import NVLINK4
    >>> row, = link_table([NVLINK4], [4e3])
    >>> round(row.n_half), round(row.fraction[0] * 100, 2)
    (900000, 0.44)
    """
    sizes = tuple(check_size(n, "size") for n in sizes)
    rows = []
    for link in links:
        bw = tuple(effective_bandwidth(n, link.alpha, link.beta) for n in sizes)
        rows.append(LinkRow(
            name=link.name, alpha=link.alpha, beta=link.beta,
            n_half=half_bandwidth_point(link.alpha, link.beta),
            sizes=sizes, eff_bw=bw, fraction=tuple(b / link.beta for b in bw),
        ))
    return rows


def fmt_pct(fraction: float) -> str:
    """A share as a percentage: 2 significant digits below 10 %, else 3 (``'0.44%'``)."""
    pct = 100 * fraction
    return f"{pct:.2g}%" if abs(pct) < 10 else f"{pct:.3g}%"


def fmt_gbps(bytes_per_s: float) -> str:
    """A bandwidth in GB/s with 3 significant digits (``'1.99 GB/s'``)."""
    return fmt_rate(bytes_per_s, digits=3)


def _cells(row: LinkRow) -> list[str]:
    return [row.name, fmt_time(row.alpha, 3), fmt_gbps(row.beta), fmt_bytes(row.n_half)] + [
        f"{fmt_gbps(b)} ({fmt_pct(f)})" for b, f in zip(row.eff_bw, row.fraction)
    ]


def render_link_table(rows: Sequence[LinkRow], lang: str = "en", fmt: str = "html") -> str:
    """Render :func:`link_table` rows as an HTML table (``fmt="html"``, with caption)
    or a Markdown pipe table (``fmt="markdown"``), headed in ``lang`` ("zh"/"en")."""
    if lang not in TABLE_LABELS:
        raise ValueError(f"lang must be one of {sorted(TABLE_LABELS)}, got {lang!r}")
    if fmt not in ("html", "markdown"):
        raise ValueError(f"fmt must be 'html' or 'markdown', got {fmt!r}")
    if not rows:
        raise ValueError("no rows to render")
    if any(r.sizes != rows[0].sizes for r in rows):
        raise ValueError("all rows must use the same message sizes")
    lab = TABLE_LABELS[lang]
    head = [lab["link"], lab["alpha"], lab["beta"], lab["n_half"]] + [
        lab["at"].format(size=fmt_bytes(n)) for n in rows[0].sizes
    ]
    body = [_cells(r) for r in rows]
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c) + " |" for c in body]
        return "\n".join(lines) + "\n"
    e = html.escape
    out = ['<table class="commbook-table">', f"<caption>{e(lab['caption'])}</caption>",
           "<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in head) + "</tr></thead>",
           "<tbody>"]
    for cells in body:
        out.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    out += ["</tbody>", "</table>"]
    return "\n".join(out)
