"""P5 §8, the libraries: the table of the custom all-reduces of one NVSwitch node
(:func:`one_node_table`), from the runs the page's cell simulates."""
from __future__ import annotations

from typing import Mapping

from ...comm_sim import RunResult
from ...hardware import NVLINK4, Link
from ...units import fmt_bytes, fmt_count, fmt_time
from ..tables import Table
from ..text import texts

__all__ = ["ONE_NODE", "one_node_table"]

T = texts("p5")


ONE_NODE = ("ring", "rd", "one_shot", "two_shot")
"""The all-reduces of the one-node table, in its column order."""


def one_node_table(runs: Mapping[int, Mapping[str, RunResult]], p: int = 8, link: Link = NVLINK4) -> Table:
    """§8.2's table: per batch, the message, each all-reduce's time with its steps in
    brackets, and the fastest (``runs``: tokens → each algorithm of :data:`ONE_NODE` → its
    run on ``p`` GPUs over ``link``).

    >>> from commbook.collectives import all_reduce
    >>> from commbook.topology import Switch
    >>> one = {a: all_reduce(Switch(8, NVLINK4), nbytes=16384, algorithm=a) for a in ONE_NODE}
    >>> one_node_table({1: one}).cell(0, "n"), one_node_table({1: one}).cell(0, "best")
    ('16.4 KB', 'one-shot')
    """
    cols = ["tokens", "n", *ONE_NODE, "best"]
    steps = lambda v: f"{fmt_time(v[0], 4)} ({v[1]})"
    return Table(
        key="p5-one-node",
        title=T("libraries.one_node_title", p=p, link=link.name),
        columns=cols,
        headers=T.pairs(*(f"libraries.h_{c}" for c in cols)),
        rows=[{"tokens": k, "n": r[ONE_NODE[0]].nbytes, **{a: (r[a].time, r[a].rounds) for a in ONE_NODE},
               "best": min(ONE_NODE, key=lambda a: r[a].time)} for k, r in runs.items()],
        formats={"tokens": fmt_count, "n": fmt_bytes, **{a: steps for a in ONE_NODE}},
        labels={lang: {a: T.get(f"libraries.h_{a}", lang) for a in ONE_NODE} for lang in ("en", "zh")},
    )
