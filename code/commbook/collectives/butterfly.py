"""Butterfly schedules: recursive halving and doubling, recursive-doubling all-reduce and
Rabenseifner's all-reduce (halving reduce-scatter + doubling all-gather), with MPICH's
fold for a group size that is not a power of two.

Two pairing orders (:data:`commbook.cost.BUTTERFLY_ORDERS`) give the same closed form on a
switch: ``far_first`` (the reduce-scatter exchanges with local rank v xor q/2 first, v xor 1
last; afterwards rank v owns block v: MPICH 4.3.2's stand-alone recursive-halving
reduce-scatter, src/mpi/coll/reduce_scatter/reduce_scatter_intra_recursive_halving.c:167-230)
and ``near_first`` (v xor 1 first, v xor q/2 last; afterwards rank v owns block bitrev(v):
the chapter's 8-GPU trace and MPICH's Rabenseifner all-reduce,
src/mpi/coll/allreduce/allreduce_intra_reduce_scatter_allgather.c:146-243).  The
all-gather undoes the reduce-scatter's steps in reverse.  :func:`butterfly_pairs` lists
who exchanges with whom in every round of the schedule.
"""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round, chunk_bounds
from ..cost import check_order
from .schedule import IN, grid, whole


def fold(groups, base, n, label):
    """MPICH's fold for q that is not a power of two: local ranks 0, 2, …, 2r-2 hand their
    buffer to the odd neighbour.  Returns (fold rounds, unfold rounds, virtual groups).

    Six ranks: ranks 0 and 2 hand their buffer to 1 and 3; four virtual ranks remain.

    >>> first, last, virtual = fold(np.arange(6)[None, :], np.zeros(1), np.full(1, 4), "rd")
    >>> [list(zip(r.src.tolist(), r.dst.tolist())) for r in first], virtual.tolist()
    ([[(0, 1), (2, 3)]], [[1, 3, 4, 5]])
    """
    q = groups.shape[1]
    r = q - (1 << (q.bit_length() - 1))
    if r == 0:
        return [], [], groups
    evens, odds = np.arange(0, 2 * r, 2), np.arange(1, 2 * r, 2)
    vmap = np.concatenate([odds, np.arange(2 * r, q)])
    return ([whole(groups, base, n, evens, odds, True, f"{label} fold")],
            [whole(groups, base, n, odds, evens, False, f"{label} unfold")],
            groups[:, vmap])


def _distances(q: int, order: str) -> list[int]:
    """The reduce-scatter's pairing distances for q a power of two, in round order."""
    check_order(order)
    if q & (q - 1):
        raise ValueError(f"recursive halving/doubling needs a power-of-two group, got q={q}")
    near = [1 << k for k in range(q.bit_length() - 1)]
    return near if order == "near_first" else near[::-1]


def halving_reduce_scatter(groups, base, n, size_only, label="halving",
                           order: str = "far_first") -> list[Round]:
    """Recursive halving (q a power of two): in each round rank v sends the half of its
    current segment it does not keep to rank v xor d and keeps the half its bit d
    selects.  ``far_first``: d = q/2, …, 1, and rank v ends owning block v;
    ``near_first``: d = 1, …, q/2, and rank v ends owning block bitrev(v).

    >>> s = halving_reduce_scatter(np.arange(8), 0, 8, size_only=False)
    >>> [r.count.tolist()[0] for r in s], [int(r.dst[0]) for r in s]     # halves; rank 0 pairs with 4, 2, 1
    ([4, 2, 1], [4, 2, 1])
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    v = np.arange(q)
    lo, size, out = np.zeros(q, dtype=np.int64), q, []
    for d in _distances(q, order):
        size //= 2
        bit = (v & d) != 0
        send = lo + np.where(bit, 0, size)
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, send + size] - b[:, send], b[:, send],
                              reduce=True, label=f"{label} d={d}"))
        lo = lo + np.where(bit, size, 0)
    return out


def doubling_all_gather(groups, base, n, size_only, buf=IN, label="doubling",
                        order: str = "far_first") -> list[Round]:
    """Recursive doubling (q a power of two), the mirror of :func:`halving_reduce_scatter`
    with the same ``order``: rank v starts owning the block that reduce-scatter left it
    and in each round sends all it holds (an aligned segment) to rank v xor d, with d in
    the reverse of the reduce-scatter's order (``far_first``: d = 1, 2, …, q/2).

    >>> s = doubling_all_gather(np.arange(8), 0, 8, size_only=False)
    >>> [r.count.tolist()[0] for r in s], [int(r.dst[0]) for r in s]     # the halving's steps in reverse
    ([1, 2, 4], [1, 2, 4])
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    v = np.arange(q)
    dists = _distances(q, order)
    lo, size = np.zeros(q, dtype=np.int64), q
    for d in dists:                       # the block reduce-scatter leaves rank v
        size //= 2
        lo = lo + np.where((v & d) != 0, size, 0)
    out = []
    for d in reversed(dists):
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, lo + size] - b[:, lo], b[:, lo],
                              sbuf=buf, label=f"{label} d={d}"))
        lo = lo - np.where((v & d) != 0, size, 0)
        size *= 2
    return out


def allreduce_rd(groups, base, n, size_only) -> list[Round]:
    """Recursive doubling: log2 q rounds, each exchanging the whole buffer with rank v xor d.

    >>> [int(r.dst[0]) for r in allreduce_rd(np.arange(8), 0, 4, size_only=False)]    # rank 0's partners: 0 xor d
    [1, 2, 4]
    """
    groups, base, n = grid(groups, base, n, size_only)
    first, last, vg = fold(groups, base, n, "rd")
    v, mid, d = np.arange(vg.shape[1]), [], 1
    while d < vg.shape[1]:
        mid.append(whole(vg, base, n, v, v ^ d, True, f"rd d={d}"))
        d *= 2
    return first + mid + last


def allreduce_rabenseifner(groups, base, n, size_only, order: str = "far_first") -> list[Round]:
    """Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling all-gather,
    pairing ranks in ``order`` (``far_first``, or ``near_first``, the chapter's and MPICH's
    all-reduce's).

    >>> s = allreduce_rabenseifner(np.arange(8), 0, 8, size_only=False, order="near_first")
    >>> len(s), [int(r.dst[0]) for r in s]                          # 2 log2 q rounds
    (6, [1, 2, 4, 4, 2, 1])
    """
    groups, base, n = grid(groups, base, n, size_only)
    check_order(order)
    first, last, vg = fold(groups, base, n, "rabenseifner")
    mid = (halving_reduce_scatter(vg, base, n, size_only, order=order)
           + doubling_all_gather(vg, base, n, size_only, order=order))
    return first + mid + last


def round_pairs(schedule: list[Round]) -> list[list[tuple[int, int]]]:
    """For every round of ``schedule``, the sorted pairs (a, b), a < b, of ranks that
    exchange (in either direction) in it; local copies are left out.

    >>> round_pairs(allreduce_rd(np.arange(4), 0, 4, size_only=False))
    [[(0, 1), (2, 3)], [(0, 2), (1, 3)]]
    """
    out = []
    for rnd in schedule:
        pairs = {(int(min(s, d)), int(max(s, d))) for s, d in zip(rnd.src, rnd.dst) if s != d}
        out.append(sorted(pairs))
    return out


def butterfly_pairs(p: int, order: str = "far_first") -> list[list[tuple[int, int]]]:
    """Who exchanges with whom in each round of Rabenseifner's all-reduce on ranks
    0 … p-1, read from the schedule itself: its fold round (p not a power of two), the
    log2 reduce-scatter rounds, the log2 all-gather rounds and its unfold round.

    >>> butterfly_pairs(8, "near_first")[0]
    [(0, 1), (2, 3), (4, 5), (6, 7)]
    """
    if isinstance(p, bool) or not isinstance(p, (int, np.integer)) or p < 1:
        raise ValueError(f"p must be an integer >= 1, got {p!r}")
    return round_pairs(allreduce_rabenseifner(np.arange(int(p))[None, :], 0, float(p), True, order=order))
