"""Ring and chain schedules: ring reduce-scatter / all-gather / all-reduce, the pipelined
chain broadcast, and Van de Geijn's scatter + ring all-gather broadcast."""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round, chunk_bounds
from .schedule import IN, grid


def _ring_pass(groups, base, n, size_only, reduce, buf, label) -> list[Round]:
    """q-1 rounds around each group's ring; at step s local rank i sends chunk (i-s) mod q
    (reduce-scatter: the receiver adds it) or (i-s+1) mod q (all-gather: it copies).  In a
    size-only run the q-1 steps carry the same messages and counts (n/q per rank), so they
    are one round repeated q-1 times."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    if q < 2:
        return []
    if size_only:
        return [Round.make(groups.reshape(-1), groups[:, (np.arange(q) + 1) % q].reshape(-1),
                           np.repeat(n / q, q), sbuf=buf, reduce=reduce, repeat=q - 1,
                           label=f"{label} 1–{q - 1}" if q > 2 else f"{label} 1")]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    i = np.arange(q)
    steps = np.arange(1, q)
    c = (i[None, :] - steps[:, None] + (0 if reduce else 1)) % q      # (step, local rank)
    by_step = lambda a: a.transpose(1, 0, 2).reshape(q - 1, -1)       # (group, step, i) -> (step, msg)
    return Round.rows([f"{label} {s}" for s in steps], groups.reshape(1, -1),
                      groups[:, (i + 1) % q].reshape(1, -1), by_step(b[:, c + 1] - b[:, c]),
                      by_step(b[:, c]), sbuf=buf, reduce=reduce)


def ring_reduce_scatter(groups, base, n, size_only, buf=IN, label="reduce-scatter") -> list[Round]:
    """Ring reduce-scatter: afterwards local rank i owns the reduced chunk i."""
    return _ring_pass(groups, base, n, size_only, True, buf, label)


def ring_all_gather(groups, base, n, size_only, buf=IN, label="all-gather") -> list[Round]:
    """Ring all-gather: local rank i starts owning chunk i; all end with every chunk."""
    return _ring_pass(groups, base, n, size_only, False, buf, label)


def allreduce_ring(groups, base, n, size_only) -> list[Round]:
    """Ring all-reduce: reduce-scatter then all-gather, 2(q-1) rounds of n/q."""
    return (ring_reduce_scatter(groups, base, n, size_only)
            + ring_all_gather(groups, base, n, size_only))


def broadcast_chain(groups, base, n, size_only, chunks: int = 1) -> list[Round]:
    """Pipelined chain from local rank 0 along 0 → 1 → … → q-1 in ``chunks`` pieces:
    q - 2 + chunks rounds; in round t link j forwards chunk t - j."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, chunks, size_only)
    out = []
    for t in range(q - 2 + chunks):
        j = np.arange(q - 1)
        j = j[(t - j >= 0) & (t - j < chunks)]
        c = t - j
        out.append(Round.make(groups[:, j], groups[:, j + 1], b[:, c + 1] - b[:, c], b[:, c],
                              label=f"chain {t + 1}"))
    return out


def broadcast_scatter_allgather(groups, base, n, size_only) -> list[Round]:
    """Van de Geijn: local rank 0 scatters chunk i to rank i in one round, then a ring
    all-gather."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    others = np.arange(1, q)
    scatter = Round.make(groups[:, np.zeros_like(others)], groups[:, others],
                         b[:, others + 1] - b[:, others], b[:, others], label="scatter")
    return [scatter] + ring_all_gather(groups, base, n, size_only)
