"""The numbers of P5 §5 (all-reduce algorithms) as typed results, one per argument of the
page: each field's name carries its unit (``_s``, ``_bytes``, ``_Bps``, ``_x``, ``_frac``),
so that the page glues a result with :func:`commbook.book.glue.glue_fields` and its prose
reads ``{glue:text}`s4k_ring_time_s```.  Every value is computed here from the simulator
(:func:`commbook.collectives.all_reduce`) or the closed forms (:mod:`commbook.cost`); the
page only chooses the sizes, links and device counts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ... import cost
from ...collectives import all_reduce, t_broadcast, t_formula
from ...comm_sim import VirtualCluster
from ...hardware import Link
from ...measure.points import load
from ...topology import Switch

__all__ = ["HTSYM", "HTSYM_SHARP", "sharp_gain", "AlgoRun", "Race", "race", "RingCost", "ring_cost", "SimCheck",
           "sim_check", "StepRuns", "step_runs", "ChainBroadcast", "chain_broadcast"]

SIX = ("ring", "rd", "rabenseifner", "tree", "naive", "innet")
"""The six all-reduce algorithms of §5.2."""

HTSYM = "htsym_allreduce_8xh100"
"""The data set (``code/commbook/data/measured/htsym_allreduce_8xh100.json``) demo 03-3 compares with:
all-reduce bus bandwidth on 8×H100 with SHARP off, How to Scale Your Model ch. 12."""

HTSYM_SHARP = "htsym_allreduce_8xh100_sharp"
"""The same node with NVLink SHARP on (``code/commbook/data/measured/htsym_allreduce_8xh100_sharp.json``)."""


def sharp_gain() -> float:
    """Measured busbw gain of NVLink SHARP on 8×H100 at large messages: the SHARP-on point
    over the SHARP-off point of the same source, minus one (≈ 30 %)."""
    return load(HTSYM_SHARP).points[-1].busbw / load(HTSYM).points[-1].busbw - 1


@dataclass(frozen=True)
class AlgoRun:
    """One simulated all-reduce: its time, rounds, the α those rounds pay (rounds·α) and the
    bytes the busiest device sends, also in units of the buffer size n, beside the least
    and the mean any device sends (per n)."""

    time_s: float
    rounds: int
    latency_s: float
    sent_bytes: float
    sent_per_n: float
    least_per_n: float
    mean_per_n: float


@dataclass(frozen=True)
class Race:
    """The six algorithms of §5.2 on ``p`` devices behind one switch, ``n_bytes`` each;
    ``best`` is the fastest without in-network reduction (which needs a switch that adds)."""

    p: int
    n_bytes: float
    ring: AlgoRun
    rd: AlgoRun
    rabenseifner: AlgoRun
    tree: AlgoRun
    naive: AlgoRun
    innet: AlgoRun
    best: str
    best_time_s: float
    best_rounds: int


def race(p: int, n: float, link: Link) -> Race:
    """Run the six all-reduce algorithms once each on ``Switch(p, link)`` with ``n`` bytes."""
    c = VirtualCluster(Switch(p, link))
    runs = {}
    for a in SIX:
        r = all_reduce(c, nbytes=n, algorithm=a)
        sent = np.asarray(r.bytes_sent, dtype=float)
        runs[a] = AlgoRun(r.time, r.rounds, r.rounds * link.alpha, float(sent.max()), float(sent.max() / n),
                          float(sent.min() / n),
                          float(sent.mean() / n))
    best = min(SIX[:-1], key=lambda a: runs[a].time_s)
    return Race(p, float(n), **runs, best=best, best_time_s=runs[best].time_s, best_rounds=runs[best].rounds)


@dataclass(frozen=True)
class RingCost:
    """Eq. (ring) on ``p`` devices and ``n_bytes``: 2(p−1) steps, each device sends
    ``factor``·n = 2(p−1)/p·n; the time splits into the latency 2(p−1)α and the transfer;
    ``balance_bytes`` = p·αβ is the size at which the two are equal."""

    p: int
    n_bytes: float
    steps: int
    factor: float
    time_s: float
    latency_s: float
    transfer_s: float
    latency_frac: float
    balance_bytes: float


def ring_cost(p: int, n: float, link: Link) -> RingCost:
    """The ring all-reduce of ``n`` bytes on ``p`` devices over ``link``, by its closed form."""
    t = t_formula("ring", p, n, link.alpha, link.beta)
    lat = t_formula("ring", p, 0.0, link.alpha, link.beta)
    return RingCost(p, float(n), 2 * (p - 1), 2 * (p - 1) / p, t, lat, t - lat, lat / t, p * link.n_half)


@dataclass(frozen=True)
class SimCheck:
    """The simulator against the closed forms, six algorithms on random data: the worst
    ``|simulated / formula − 1|`` and output error over ``sizes`` buffers split into equal
    chunks (float64), and the worst time error with ``odd_n`` float32 values (unequal
    chunks), which algorithm has it; ``algorithms`` and the per-algorithm worst errors
    (in the order of ``names``) make the printed table."""

    runs: int
    sizes: int
    algorithms: int
    time_rel: float
    out_rel: float
    eps: float
    odd_n: int
    odd_algo: str
    odd_rel: float
    names: tuple[str, ...]
    even_rel: tuple[float, ...]
    odd_rels: tuple[float, ...]


def sim_check(p: int, link: Link, sizes: Sequence[int] = (1_000, 131_072, 1_000_000),
              odd_n: int = 1_001, seed: int = 0) -> SimCheck:
    """Run every algorithm of :data:`SIX` on ``p`` devices with random data of each size."""
    c, rng = VirtualCluster(Switch(p, link)), np.random.default_rng(seed)

    def one(elements: int, dtype) -> tuple[dict[str, float], float]:
        data = [rng.standard_normal(elements).astype(dtype) for _ in range(p)]
        ref = np.sum(np.stack(data).astype(np.float64), axis=0)
        times, out = {}, 0.0
        for a in SIX:
            run = all_reduce(c, data, algorithm=a)
            times[a] = abs(run.time / t_formula(a, p, data[0].nbytes, link.alpha, link.beta) - 1)
            out = max(out, max(np.abs(o - ref).max() for o in run.outputs) / np.abs(ref).max())
        return times, out

    even = [one(m, np.float64) for m in sizes]
    odd, _ = one(odd_n, np.float32)
    worst = {a: max(t[a] for t, _ in even) for a in SIX}
    odd_algo = max(odd, key=odd.get)
    return SimCheck(len(SIX) * len(sizes), len(sizes), len(SIX), max(worst.values()), max(o for _, o in even),
                    float(np.finfo(np.float64).eps), odd_n, odd_algo, odd[odd_algo], SIX,
                    tuple(worst.values()), tuple(odd[a] for a in SIX))


@dataclass(frozen=True)
class StepCounts:
    """One algorithm of the step diagrams: rounds, elements each GPU sends in all, and per
    round the largest message (elements) and the number of messages, as text."""

    rounds: int
    sent: int
    counts: str
    messages: str
    counts_first: str
    counts_last: str
    half: int


@dataclass(frozen=True)
class StepRuns:
    """The step diagrams' data (``p`` GPUs with ``w`` small integers each, their ``total``)
    run by the ring, recursive doubling, Rabenseifner and the binomial tree."""

    p: int
    w: int
    total: str
    ring: StepCounts
    rd: StepCounts
    rabenseifner: StepCounts
    tree: StepCounts


def _joined(values) -> str:
    return ", ".join(str(v) for v in values)


def step_runs(data: Sequence[Sequence[int]], link: Link) -> StepRuns:
    """Run the four in-place all-reduce schedules on ``data`` (one list per GPU) with a trace."""
    arrays = [np.asarray(x) for x in data]
    c, out = VirtualCluster(Switch(len(arrays), link)), {}
    for a in ("ring", "rd", "rabenseifner", "tree"):
        run = all_reduce(c, arrays, algorithm=a, trace=True)
        counts = [int(st.round.count.max()) for st in run.trace]
        half = run.rounds // 2
        out[a] = StepCounts(run.rounds, int(run.bytes_sent.max()) // run.outputs[0].itemsize, _joined(counts),
                            _joined(len(st.round) for st in run.trace), _joined(counts[:half]),
                            _joined(counts[half:]), half)
    return StepRuns(len(arrays), len(arrays[0]), _joined(np.sum(arrays, axis=0).tolist()), **out)


@dataclass(frozen=True)
class ChainBroadcast:
    """Broadcast of ``n_bytes`` to ``receivers`` = p − 1 devices (closed forms): flat, the
    binomial tree, and the pipelined chain at the continuous optimum (k*, T*), at the best
    integer k in 1..``k_max``, at ⌊k*⌋ and at the best power of two; the lower bound n/β;
    and T*'s three parts, the fill (p−2)α, the transfer n/β and the cross term
    2√((p−2)α·n/β), beside the binomial tree's log₂p·α and log₂p·n/β."""

    n_bytes: float
    n_per_nhalf: float
    receivers: int
    flat_s: float
    binomial_s: float
    k_star: float
    t_star_s: float
    k_max: int
    best_k: int
    best_s: float
    floor_k: int
    floor_s: float
    floor_gain_s: float
    pow2_k: int
    pow2_s: float
    bound_s: float
    vs_binomial_frac: float
    vs_bound_x: float
    fill_s: float
    transfer_s: float
    cross_s: float
    binomial_latency_s: float
    binomial_transfer_s: float


def chain_broadcast(p: int, n: float, link: Link, k_max: int = 256) -> ChainBroadcast:
    """The broadcast schedules of §5.5 for ``n`` bytes from one of ``p`` devices over ``link``."""
    a, b = link.alpha, link.beta
    chain = {k: t_broadcast("chain", p, n, a, b, chunks=k) for k in range(1, k_max + 1)}
    k_star, t_star = cost.chain_broadcast_optimum(p, n, a, b)
    best = min(chain, key=chain.get)
    floor_k, pow2_k = int(k_star), 1 << int(math.log2(k_star))
    bnm, bound, fill, L = t_broadcast("binomial", p, n, a, b), n / b, (p - 2) * a, math.log2(p)
    return ChainBroadcast(float(n), n / link.n_half, p - 1, t_broadcast("flat", p, n, a, b), bnm, k_star, t_star,
                          k_max, best, chain[best], floor_k, chain[floor_k], chain[floor_k] - chain[best],
                          pow2_k, chain[pow2_k], bound, chain[best] / bnm, chain[best] / bound, fill, bound,
                          2 * math.sqrt(fill * bound), L * a, L * bound)
