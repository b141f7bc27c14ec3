"""P5 §8, the libraries: the custom all-reduces of one NVSwitch node, simulated once
(:func:`one_node_runs`) for the one-node table (:func:`one_node_table`) and the prose.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ... import llm
from ...collectives import all_reduce
from ...comm_sim import VirtualCluster
from ...hardware import NVLINK4, Link
from ...llm import LLAMA31_70B
from ...topology import Switch
from ...units import fmt_bytes, fmt_count, fmt_time
from ..tables import Table
from ..text import texts

__all__ = ["ONE_NODE", "NodeRun", "one_node_runs", "one_node_table"]

T = texts("p5")


ONE_NODE = ("ring", "rd", "one_shot", "two_shot")
"""The all-reduces of the one-node table, in its column order."""


@dataclass(frozen=True)
class NodeRun:
    """A decode batch of ``tokens`` tokens of Llama 3.1 70B on one NVSwitch node: its
    all-reduce message, each algorithm of :data:`ONE_NODE` simulated (``{algorithm}_s``;
    ``rounds``: its steps) and the fastest."""
    tokens: int
    n_bytes: float
    ring_s: float
    rd_s: float
    one_shot_s: float
    two_shot_s: float
    rounds: dict[str, int]
    best: str

    def time(self, algorithm: str) -> float:
        """The simulated time of ``algorithm`` (one of :data:`ONE_NODE`)."""
        return getattr(self, f"{algorithm}_s")


def one_node_runs(p: int = 8, link: Link = NVLINK4, tokens: Sequence[int] = (1, 8, 64, 4096)) -> tuple[NodeRun, ...]:
    """The algorithms of :data:`ONE_NODE` on ``Switch(p, link)`` for each batch of ``tokens``.

    >>> one_node_runs(tokens=(1,))[0].best
    'one_shot'
    """
    c = VirtualCluster(Switch(p, link))
    out = []
    for k in tokens:
        n = llm.tp_message_bytes(LLAMA31_70B, tokens=k)
        runs = {a: all_reduce(c, nbytes=n, algorithm=a) for a in ONE_NODE}
        out.append(NodeRun(k, n, *(r.time for r in runs.values()), {a: r.rounds for a, r in runs.items()},
                           min(ONE_NODE, key=lambda a: runs[a].time)))
    return tuple(out)


def one_node_table(runs: Sequence[NodeRun], p: int = 8, link: Link = NVLINK4) -> Table:
    """§8.2's table: per batch, the message, each all-reduce's time with its steps in
    brackets, and the fastest (``runs`` from :func:`one_node_runs` on ``p`` GPUs over ``link``).

    >>> one_node_table(one_node_runs(tokens=(1,))).cell(0, "n")
    '16.4 KB'
    """
    cols = ["tokens", "n", *ONE_NODE, "best"]
    steps = lambda v: f"{fmt_time(v[0], 4)} ({v[1]})"
    return Table(
        key="p5-one-node",
        title=T("libraries.one_node_title", p=p, link=link.name),
        columns=cols,
        headers=T.pairs(*(f"libraries.h_{c}" for c in cols)),
        rows=[{"tokens": r.tokens, "n": r.n_bytes, **{a: (r.time(a), r.rounds[a]) for a in ONE_NODE}, "best": r.best}
              for r in runs],
        formats={"tokens": fmt_count, "n": fmt_bytes, **{a: steps for a in ONE_NODE}},
        labels={lang: {a: T.get(f"libraries.h_{a}", lang) for a in ONE_NODE} for lang in ("en", "zh")},
    )
