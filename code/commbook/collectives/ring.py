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
    """Ring reduce-scatter: afterwards local rank i owns the reduced chunk i.

    Four ranks, 8 elements: three steps around the ring, a chunk of 2 each.

    >>> s = ring_reduce_scatter(np.arange(4), 0, 8, size_only=False)
    >>> [r.label for r in s], s[0].dst.tolist(), s[0].count.tolist(), bool(s[0].reduce.all())
    (['reduce-scatter 1', 'reduce-scatter 2', 'reduce-scatter 3'], [1, 2, 3, 0], [2, 2, 2, 2], True)
    """
    return _ring_pass(groups, base, n, size_only, True, buf, label)


def ring_all_gather(groups, base, n, size_only, buf=IN, label="all-gather") -> list[Round]:
    """Ring all-gather: local rank i starts owning chunk i; all end with every chunk.

    >>> s = ring_all_gather(np.arange(4), 0, 8, size_only=False)
    >>> len(s), s[0].soff.tolist(), bool(s[0].reduce.any())        # rank i first forwards its own chunk i
    (3, [0, 2, 4, 6], False)
    """
    return _ring_pass(groups, base, n, size_only, False, buf, label)


def allreduce_ring(groups, base, n, size_only) -> list[Round]:
    """Ring all-reduce: reduce-scatter then all-gather, 2(q-1) rounds of n/q.

    Run on real data by the engine, every rank ends with numpy's sum:

    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> data = [np.arange(8.0) * (r + 1) for r in range(4)]
    >>> bufs = [[x.copy()] for x in data]
    >>> res = VirtualCluster(Switch(4, NVLINK4)).run(allreduce_ring(np.arange(4), 0, 8, False), buffers=bufs)
    >>> res.rounds, all(np.array_equal(b[0], np.sum(data, axis=0)) for b in bufs)
    (6, True)
    """
    return (ring_reduce_scatter(groups, base, n, size_only)
            + ring_all_gather(groups, base, n, size_only))


def broadcast_chain(groups, base, n, size_only, chunks: int = 1) -> list[Round]:
    """Pipelined chain from local rank 0 along 0 → 1 → … → q-1 in ``chunks`` pieces:
    q - 2 + chunks rounds; in round t link j forwards chunk t - j.

    >>> s = broadcast_chain(np.arange(4), 0, 6, size_only=False, chunks=3)
    >>> len(s), [r.src.tolist() for r in s]                         # q - 2 + chunks rounds
    (5, [[0], [0, 1], [0, 1, 2], [1, 2], [2]])
    """
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
    all-gather.

    >>> s = broadcast_scatter_allgather(np.arange(4), 0, 8, size_only=False)
    >>> [r.label for r in s], s[0].dst.tolist(), s[0].count.tolist()
    (['scatter', 'all-gather 1', 'all-gather 2', 'all-gather 3'], [1, 2, 3], [2, 2, 2])
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    others = np.arange(1, q)
    scatter = Round.make(groups[:, np.zeros_like(others)], groups[:, others],
                         b[:, others + 1] - b[:, others], b[:, others], label="scatter")
    return [scatter] + ring_all_gather(groups, base, n, size_only)
