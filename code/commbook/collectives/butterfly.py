"""Butterfly schedules: recursive halving and doubling, recursive-doubling all-reduce and
Rabenseifner's all-reduce (halving reduce-scatter + doubling all-gather), with MPICH's
fold for a group size that is not a power of two."""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round, chunk_bounds
from .schedule import IN, grid, whole


def fold(groups, base, n, label):
    """MPICH's fold for q that is not a power of two: local ranks 0, 2, …, 2r-2 hand their
    buffer to the odd neighbour.  Returns (fold rounds, unfold rounds, virtual groups)."""
    q = groups.shape[1]
    r = q - (1 << (q.bit_length() - 1))
    if r == 0:
        return [], [], groups
    evens, odds = np.arange(0, 2 * r, 2), np.arange(1, 2 * r, 2)
    vmap = np.concatenate([odds, np.arange(2 * r, q)])
    return ([whole(groups, base, n, evens, odds, True, f"{label} fold")],
            [whole(groups, base, n, odds, evens, False, f"{label} unfold")],
            groups[:, vmap])


def halving_reduce_scatter(groups, base, n, size_only, label="halving") -> list[Round]:
    """Recursive halving (q a power of two): at distance d = q/2, …, 1 each rank sends the
    half of its segment it does not keep.  Afterwards local rank v owns block v."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    v = np.arange(q)
    out, d = [], q // 2
    while d >= 1:
        lo = (v & ~(d - 1)) ^ d
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, lo + d] - b[:, lo], b[:, lo],
                              reduce=True, label=f"{label} d={d}"))
        d //= 2
    return out


def doubling_all_gather(groups, base, n, size_only, buf=IN, label="doubling") -> list[Round]:
    """Recursive doubling (q a power of two): at distance d = 1, 2, …, q/2 each rank sends
    the aligned segment of d blocks it holds to rank v xor d."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, size_only)
    v = np.arange(q)
    out, d = [], 1
    while d < q:
        lo = v & ~(d - 1)
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, lo + d] - b[:, lo], b[:, lo],
                              sbuf=buf, label=f"{label} d={d}"))
        d *= 2
    return out


def allreduce_rd(groups, base, n, size_only) -> list[Round]:
    """Recursive doubling: log2 q rounds, each exchanging the whole buffer with rank v xor d."""
    groups, base, n = grid(groups, base, n, size_only)
    first, last, vg = fold(groups, base, n, "rd")
    v, mid, d = np.arange(vg.shape[1]), [], 1
    while d < vg.shape[1]:
        mid.append(whole(vg, base, n, v, v ^ d, True, f"rd d={d}"))
        d *= 2
    return first + mid + last


def allreduce_rabenseifner(groups, base, n, size_only) -> list[Round]:
    """Rabenseifner: recursive-halving reduce-scatter, then recursive-doubling all-gather."""
    groups, base, n = grid(groups, base, n, size_only)
    first, last, vg = fold(groups, base, n, "rabenseifner")
    mid = halving_reduce_scatter(vg, base, n, size_only) + doubling_all_gather(vg, base, n, size_only)
    return first + mid + last
