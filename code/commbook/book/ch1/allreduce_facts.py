r"""Chapter §1.4, ``chapters/{zh,en}/ch1/04-allreduce-algorithms.md``: Table 2
(:func:`table2_numbers` and :func:`table2`) and the DDP buckets' table (:func:`bucket_table`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ...cost import lower_bound_bytes
from ...hardware import Link
from ...units import GB, fmt_bytes, fmt_time
from ..cheatsheet import measure
from ..names import display_name
from ..tables import Table
from .allreduce_choice import FIG7, K, T, _heads, _t, alpha_steps_fold

__all__ = ["bucket_table", "TABLE2", "Table2Numbers", "table2_numbers", "table2"]


def bucket_table(rows: list[dict], sizes: tuple[float, float], link: Link) -> Table:
    """The DDP buckets ``sizes`` on ``link`` per N (the page computes the rows: ``p``, the
    crossovers ``x_tree`` and ``x_dtree``, and the fastest algorithm ``b0``, ``b1`` per bucket)."""
    heads = _heads("h_gpus_n", "h_x_tree", "h_x_dtree")
    for n in sizes:
        for lang, h in _t("h_fastest_at", n=fmt_bytes(n)).items():
            heads[lang].append(h)
    title = {lang: T.get(K + "bucket_title", lang, dtree=display_name("all_reduce", "double_tree", lang),
                         a=fmt_time(link.alpha, 3), b=f"{link.beta / GB:g} GB/s") for lang in ("en", "zh")}
    return Table(
        key="ch1-buckets", title=title,
        columns=["p", "x_tree", "x_dtree", "b0", "b1"],
        headers=heads,
        rows=rows,
        formats={"p": lambda p: f"{p:,}", "x_tree": fmt_bytes, "x_dtree": fmt_bytes},
        labels={lang: {x: display_name("all_reduce", x, lang) for x in ("ring", "tree", "double_tree")}
                for lang in ("en", "zh")},
    )


TABLE2 = {
    "ring": {"steps": ("2(N−1)", lambda N: 2 * (N - 1)), "bw": ("2(N−1)/N", lambda N: 2 * (N - 1) / N),
             "constraint": "t2_none"},
    "tree": {"steps": ("2⌈log₂N⌉", lambda N: 2 * math.ceil(math.log2(N))),
             "bw": ("2⌈log₂N⌉", lambda N: 2 * math.ceil(math.log2(N))), "constraint": "t2_none"},
    "rabenseifner": {"steps": ("2log₂N", lambda N: 2 * math.log2(N)), "bw": ("2(N−1)/N", lambda N: 2 * (N - 1) / N),
                     "constraint": "t2_pow2"},
    "double_tree": {"steps": ("2(k + D − 1)", None), "bw": ("2 + c/k → 2", None), "constraint": "t2_two_trees"},
}
"""Table 2's symbolic columns (text, and the function of N the measured column must equal;
for the double tree: k chunks per tree, D the trees' depth, c a constant of N); the
constraint is a key of the chapter's text file."""


@dataclass(frozen=True)
class Table2Numbers:
    """:func:`table2_numbers`: Table 2 at ``p`` ranks: the lower bound 2(N−1)/N, the double
    tree's bandwidth term over it, and the table's ``rows``."""

    p: int
    bound: float
    dt_ratio: float
    rows: tuple = field(repr=False)


def table2_numbers(p: int = 256, link: Link = FIG7["link"]) -> Table2Numbers:
    """Per algorithm the α steps and the bandwidth coefficient b of T = steps·α + b·M/β,
    symbolic and measured on the simulator at ``p`` ranks (:func:`commbook.book.cheatsheet.measure`),
    and whether b meets the lower bound 2(N−1)/N.

    >>> round(table2_numbers(p=8).dt_ratio, 4)
    1.1429
    """
    bound = lower_bound_bytes("all_reduce", p, 1.0)
    odd, extra = p - 1, alpha_steps_fold(p - 1)
    rows = []
    for name, spec in TABLE2.items():
        c = measure("all_reduce", name, p, link)
        b = c.bandwidth[0]              # the double tree: the limit of 2 + c/k for many chunks
        status = "yes" if math.isclose(b, bound, rel_tol=1e-9) else ("near" if b / bound < 1.01 else "no")
        bw = f"{round(b, 9):.4g}" + (f" + {round(c.bandwidth[1], 9):.4g}/k" if c.pipelined else "")
        rows.append({"algo": name, "steps_f": spec["steps"][0], "steps": c.rounds_text(), "bw_f": spec["bw"][0],
                     "bw": bw, "optimal": status, "ratio": b / bound,
                     "constraint": T.get(K + spec["constraint"], "en", extra=extra, odd=odd), "cost": c})
    return Table2Numbers(p, bound, next(r["ratio"] for r in rows if r["algo"] == "double_tree"), tuple(rows))


def table2(t2: Table2Numbers | None = None) -> Table:
    """Table 2 (:func:`table2_numbers`) in both languages."""
    t2 = table2_numbers() if t2 is None else t2
    p, bound = t2.p, t2.bound
    odd, extra = p - 1, alpha_steps_fold(p - 1)
    words = {w: _t(f"t2_{w}") for w in ("yes", "no", "near")}
    words |= {T.get(K + spec["constraint"], "en", extra=extra, odd=odd): _t(spec["constraint"], extra=extra, odd=odd)
              for spec in TABLE2.values()}
    labels = {lang: {**{name: display_name("all_reduce", name, lang) for name in TABLE2},
                     **{k: v[lang] for k, v in words.items()}} for lang in ("en", "zh")}
    return Table(
        key="ch1-table2", title=_t("t2_title", p=p),
        columns=["algo", "steps_f", "steps", "bw_f", "bw", "optimal", "constraint"],
        headers=_heads("h_algorithm", "h_alpha_steps", "h_at_n", "h_bw_term", "h_at_n", "h_optimal", "h_constraint",
                       p=p),
        rows=list(t2.rows), labels=labels,
        notes=_heads("t2_note", bound=f"{bound:.4g}", p=p),
    )
