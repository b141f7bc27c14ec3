r"""Chapter §1.4, all-reduce algorithms, first half: the numbers of the
naive scheme and the parameter server, the bandwidth lower bound, the ring (Example 1.1's
trace, its step counts, a straggler) and the binomial tree, for
``chapters/{zh,en}/ch1/04-allreduce-algorithms.md`` and the notebooks of Checkpoint 1.2.
The second half (butterfly orders, double tree, Table 2, switch point, Napkin Math 1.5) is
:mod:`.allreduce_choice`, the figures :mod:`.allreduce_figures`.

Every time is a closed form of :mod:`commbook.collectives` (:func:`~commbook.collectives.predict`)
or a size-only run of the simulator (:mod:`commbook.comm_sim`) on a switch of the box's
link; the two are compared in ``tests/test_ch1_sec4.py``.  Conventions: N ranks, M bytes
per rank, decimal units; "steps" are the rounds in which a message crosses between GPUs
(:attr:`commbook.comm_sim.RunResult.rounds`), each costing α once.

The tree of the chapter's formula 2log₂N·(α + M/β) is the binomial tree of the registry
(``"tree"``): at every level half of the remaining ranks send their whole partial sum.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ... import collectives as coll
from ...collectives import coefficients
from ...comm_sim import RunResult, VirtualCluster, chunk_bounds
from ...cost import lower_bound_bytes
from ...hardware import NVLINK4_CHAPTER, Link
from ...topology import Switch
from ...units import GB, MB, fmt_bytes, fmt_number, fmt_time
from ..p5.steps import EXAMPLE_1_1
from ..tables import Table
from ..text import texts
from .boxes import BOX_LINKS

T, K, LANGS = texts("ch1"), "allreduce_numbers.", ("en", "zh")
_t = T.under(K)         # the section's entries (ch1.toml, under allreduce_numbers.)
_heads = _t.pairs

__all__ = [
    "CHAPTER_STATED", "EXAMPLE_1_1", "alpha_steps", "run", "ps_table",
    "in_hours", "lower_bound_table",
    "ring_trace", "trace_table", "TraceFacts", "trace_facts", "TreeActivity", "tree_activity",
    "tree_example_table", "Straggler", "straggler",
    "STRAGGLER", "CHECKPOINT_1_3_TRACE", "rs_trace",
]

CHAPTER_STATED = {
    "ceiling_gpus": 1000, "ceiling_bytes": 1 * GB,   # "all 1,000 GPUs … 1,000 gradients of 1 GB"
    "lb_gpus": 64, "lb_bytes": 1 * GB,               # "1 GB of gradients on 64 GPUs … several ms"
    "lb_difference_ms": (2, 9),                      # "several ms": read as 2 to 9 ms
    "ring_nodes": 10_000, "ring_hops": 20_000,       # "10,000 nodes … 20,000 sequential hops"
    "tree_nodes": 1024, "tree_ring_steps": 2046, "tree_steps": 20, "tree_step_ratio": 100,
    "tree_small_gpus": 8, "tree_small_bytes": 1 * MB,   # "a group of 8 GPUs … 1 MB … 14α … 6α"
    "tree_small_ring_alpha": 14, "tree_small_tree_alpha": 6,
    "tree_big_bytes": 140 * GB, "tree_big_gpus": 1000,
}
"""The numbers the chapter states in the first half of §1.4 (compared with the page's in
the tests)."""

STRAGGLER = {"p": 8, "n": 1 * GB, "link": BOX_LINKS["cp1.2"], "speed": 2 / 3}
"""Checkpoint 1.2's straggler: 8 GPUs, 1 GB, one GPU whose port runs at 2/3 of the speed
(so it needs 1.5× as long per byte, "50 % slower")."""


CHECKPOINT_1_3_TRACE = {"p": 3, "data": ([1, 2, 3], [10, 20, 30], [100, 200, 300])}
"""Checkpoint 1.3, question 3: a reduce-scatter on 3 GPUs holding 3-element vectors (the
digits of the sums show where each term came from)."""


def alpha_steps(name: str, p: int) -> int:
    """How many α an all-reduce by ``name`` pays on ``p`` ranks: its closed form's α count
    (:func:`commbook.collectives.coefficients`; the steps of the schedule)."""
    return round(coefficients("all_reduce", name, p).alpha_steps)


def run(name: str, p: int, n: float, link: Link, speed: dict | None = None, **params) -> RunResult:
    """A size-only all-reduce of ``n`` bytes by ``name`` on a switch of ``p`` ranks of ``link``."""
    return coll.all_reduce(VirtualCluster(Switch(p, link), speed=speed), nbytes=n, algorithm=name, **params)


# ============================================================================ naive / PS
def ps_table(rows: list[dict], ring_s: float, p: int, n: float, beta: float) -> Table:
    """The parameter server on K servers against the ring, ``p`` GPUs of ``n`` bytes on a link
    of ``beta`` (the page computes the rows: ``algo`` "K = k", ``time_s``, ``per_server_bytes``,
    ``all_servers_bytes``, ``ring_x``; the ring's row is added from ``ring_s``)."""
    rows = [*rows, {"algo": "ring", "time_s": ring_s, "per_server_bytes": None, "all_servers_bytes": None,
                    "ring_x": 1.0}]
    return Table(
        key="ch1-ps",
        title=_t("ps_title", n=fmt_bytes(n), p=f"{p:,}", beta=f"{beta / GB:g} GB/s"),
        columns=["algo", "time_s", "per_server_bytes", "all_servers_bytes", "ring_x"],
        headers=_heads("h_algorithm", "h_time", "h_into_one", "h_into_all", "h_x_ring"),
        rows=rows,
        labels={lang: {"ring": "ring", **{r["algo"]: T.get(K + "ps_label", lang, k=r["algo"]) for r in rows[:-1]}}
                for lang in LANGS},
        notes=_heads("ps_note"),
    )


# ============================================================================ lower bound
def in_hours(s: float) -> str:
    """A long duration in hours, or in minutes below one hour: '5.57 h', '37.2 min'."""
    return f"{fmt_number(s / 3600, 3)} h" if s >= 3600 else f"{fmt_number(s / 60, 3)} min"


def lower_bound_table(rows: list[dict], steps: int) -> Table:
    """The lower-bound example of §1.4.2, one row per link (the page computes them): β, the
    bound (= the ring), the binomial tree, and what the tree loses per step and over ``steps``
    training steps (``beta_Bps``, ``bound_s``, ``tree_s``, ``diff_s``, ``over_steps_s``)."""
    return Table(
        key="ch1-lower-bound",
        title=_t("lb_title"),
        columns=["beta_Bps", "bound_s", "tree_s", "diff_s", "over_steps_s"],
        headers=_heads("h_link_beta", "h_bound", "h_tree", "h_lost_step", "h_lost_run", steps=f"{steps:,}"),
        rows=rows,
        formats={"beta_Bps": lambda b: f"{b / GB:g} GB/s", "bound_s": 5, "over_steps_s": in_hours},
        notes=_heads("lb_note"),
    )


# ============================================================================ ring
def ring_trace(data=EXAMPLE_1_1) -> RunResult:
    """Example 1.1: the ring all-reduce of ``data`` (one list of integers per GPU), with its trace."""
    arrays = [np.asarray(a, dtype=np.int64) for a in data]
    return coll.all_reduce(VirtualCluster(Switch(len(arrays), NVLINK4_CHAPTER)), arrays, algorithm="ring",
                           trace=True)


def _chunks(p: int, n: int) -> list[tuple[int, int]]:
    """(start, stop) of each of the p chunks of an n-element buffer, as the schedule cuts it."""
    b = chunk_bounds(n, p, False)
    return [(int(b[i]), int(b[i + 1])) for i in range(p)]


@dataclass(frozen=True)
class TraceFacts:
    """:func:`trace_facts`: ranks, rounds (reduce-scatter ``rs``, all-gather ``ag``), whether
    every rank sends and receives in every round, the chunks each owns after the
    reduce-scatter, the sum, and each rank's bytes sent against the lower bound."""

    p: int
    rounds: int
    rs: int
    ag: int
    every_rank_sends_and_receives: bool
    owns_after_rs: list
    sum: list
    sent_bytes: list
    bound_bytes: float


def trace_facts(res: RunResult | None = None, data=EXAMPLE_1_1) -> TraceFacts:
    """What Example 1.1's trace shows (:class:`TraceFacts`)."""
    res = ring_trace(data) if res is None else res
    p, n = len(data), len(data[0])
    total = np.sum(np.asarray(data), axis=0)
    phases = [s.round.reduce.all() for s in res.trace]
    rs = phases.count(True)
    after_rs = [b[0] for b in res.trace[rs - 1].state]
    owns = [[c for c, (lo, hi) in enumerate(_chunks(p, n)) if np.array_equal(buf[lo:hi], total[lo:hi])]
            for buf in after_rs]
    every = all(sorted(s.round.src.tolist()) == list(range(p)) and sorted(s.round.dst.tolist()) == list(range(p))
                for s in res.trace)
    return TraceFacts(p, res.rounds, rs, len(phases) - rs, every, owns, total.tolist(), res.bytes_sent.tolist(),
                      lower_bound_bytes("all_reduce", p, n * 8))


def trace_table(res: RunResult | None = None, data=EXAMPLE_1_1) -> Table:
    """Example 1.1 round by round: the messages (sender → receiver: chunk) and every GPU's
    buffer after the round, read from the simulator's trace."""
    res = ring_trace(data) if res is None else res
    p, n = len(data), len(data[0])
    starts = {lo: c for c, (lo, _) in enumerate(_chunks(p, n))}
    rows = [{"step": "start", "msgs": "—", **{f"g{g}": str(list(map(int, data[g]))) for g in range(p)}}]
    rs = ag = 0
    for st in res.trace:
        r = st.round
        reduce = bool(r.reduce.all())
        rs, ag = (rs + 1, ag) if reduce else (rs, ag + 1)
        msgs = ", ".join(f"{s}→{d}: {starts[o]}" for s, d, o in zip(r.src.tolist(), r.dst.tolist(), r.soff.tolist()))
        rows.append({"step": f"RS {rs}" if reduce else f"AG {ag}", "msgs": msgs,
                     **{f"g{g}": str(st.state[g][0].tolist()) for g in range(p)}})
    gpus = [f"GPU {g}" for g in range(p)]
    return Table(
        key="ch1-ex1.1",
        title=_t("trace_title", p=p),
        columns=["step", "msgs"] + [f"g{g}" for g in range(p)],
        headers={lang: h + gpus for lang, h in _heads("h_step", "h_msgs").items()},
        rows=rows,
        labels={lang: {"start": T.get(K + "start", lang),
                       **{f"{ph} {k}": T.get(f"{K}{ph.lower()}_step", lang, k=k) for ph in ("RS", "AG")
                          for k in range(1, p)}} for lang in LANGS},
        notes=_heads("trace_note", n=n),
    )


# ============================================================================ tree
@dataclass(frozen=True)
class TreeActivity:
    """:func:`tree_activity`: the senders of each round and their mean share of the ranks."""

    p: int
    senders: list
    mean_share_frac: float


def tree_activity(p: int = 8) -> TreeActivity:
    """Ranks that send in each round of the binomial-tree all-reduce on ``p`` ranks (from the
    trace of a size-only run), against the ring's p senders per round."""
    res = coll.all_reduce(VirtualCluster(Switch(p, BOX_LINKS["tree1.4"])), nbytes=1.0, algorithm="tree",
                          trace=True)
    senders = [len(set(s.round.src.tolist())) for s in res.trace]
    return TreeActivity(p, senders, float(np.mean(senders)) / p)


def tree_example_table(rows: list[dict], p: int, n: float, link: Link) -> Table:
    """The small tree case of §1.4.4, one row per algorithm (the page computes them): α steps
    (``rounds``), ``latency_s``, ``bandwidth_s`` and ``time_s`` of ring and tree, ``n`` bytes on
    ``p`` GPUs of ``link``."""
    return Table(
        key="ch1-tree-small",
        title=_t("te_title", n=fmt_bytes(n), p=p, a=fmt_time(link.alpha, 3), b=f"{link.beta / GB:g} GB/s"),
        columns=["algo", "rounds", "latency_s", "bandwidth_s", "time_s"],
        headers=_heads("h_algorithm", "h_alpha_steps_sim", "h_latency", "h_bandwidth", "h_total"),
        rows=rows,
        formats={"latency_s": 3, "bandwidth_s": 3, "time_s": 3},
        labels={lang: {a: T.get(K + a, lang) for a in ("ring", "tree")} for lang in LANGS},
    )


# ============================================================================ straggler
@dataclass(frozen=True)
class Straggler:
    """:func:`straggler`: the times at full speed and with the slow GPU, their ratio, the
    rounds, those that got slower and those the slow GPU takes part in."""

    base_s: float
    time_s: float
    ratio_x: float
    rounds: int
    slowed_rounds: list
    touching_rounds: list


def straggler(name: str, slow: int, p: int = STRAGGLER["p"], n: float = STRAGGLER["n"],
              link: Link = STRAGGLER["link"], speed: float = STRAGGLER["speed"]) -> Straggler:
    """One all-reduce with GPU ``slow`` at ``speed`` of its port rate, against all GPUs at
    full speed (size-only runs on a switch)."""
    base = run(name, p, n, link)
    slowed = run(name, p, n, link, speed={slow: speed})
    hit = [i for i, (a, b) in enumerate(zip(base.round_times, slowed.round_times)) if b > a * (1 + 1e-12)]
    touch = [i for i, s in enumerate(slowed.trace) if slow in s.round.src.tolist() + s.round.dst.tolist()]
    return Straggler(base.time, slowed.time, slowed.time / base.time, base.rounds, hit, touch)


# ============================================================================ Checkpoint 1.3
def rs_trace(data=CHECKPOINT_1_3_TRACE["data"]) -> RunResult:
    """A ring reduce-scatter of ``data`` (one list of integers per GPU) with its trace."""
    arrays = [np.asarray(a, dtype=np.int64) for a in data]
    return coll.reduce_scatter(VirtualCluster(Switch(len(arrays), NVLINK4_CHAPTER)), arrays, algorithm="ring",
                               trace=True)
