"""Tree schedules: binomial reduce and broadcast, the binomial-tree all-reduce, two
binomial trees each carrying half of the buffer (unpipelined), and NCCL's pipelined double
binary tree."""
from __future__ import annotations

import numpy as np

from ..comm_sim import Round, chunk_bounds
from ..double_tree import double_tree_parents, tree_depths
from .schedule import IN, grid, whole


def binomial_reduce(groups, base, n, size_only=False, label="tree reduce") -> list[Round]:
    """⌈log2 q⌉ rounds towards local rank 0: at step 2^k, local ranks v ≡ 2^k (mod 2^(k+1))
    send their partial result to v - 2^k."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    v, out, step = np.arange(q), [], 1
    while step < q:
        s = v[(v % (2 * step)) == step]
        out.append(whole(groups, base, n, s, s - step, True, f"{label} {step}"))
        step *= 2
    return out


def binomial_broadcast(groups, base, n, size_only=False, label="tree broadcast", buf=IN) -> list[Round]:
    """⌈log2 q⌉ rounds from local rank 0, doubling the number of holders each round."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    v, out = np.arange(q), []
    step = 1 << (q - 1).bit_length() >> 1 if q > 1 else 0
    while step >= 1:
        s = v[((v % (2 * step)) == 0) & (v + step < q)]
        out.append(whole(groups, base, n, s, s + step, False, f"{label} {step}", buf=buf))
        step //= 2
    return out


def allreduce_tree(groups, base, n, size_only) -> list[Round]:
    """Binomial-tree reduce to local rank 0, then binomial broadcast."""
    return binomial_reduce(groups, base, n, size_only) + binomial_broadcast(groups, base, n, size_only)


def allreduce_double_binomial(groups, base, n, size_only) -> list[Round]:
    """Two binomial trees at once, the second rooted one rank further along; each carries
    half of the buffer, without chunk pipelining: 2⌈log2 q⌉ rounds of n/2."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    h = chunk_bounds(n, 2, size_only)  # (m, 3)
    shifted = groups[:, (np.arange(q) + 1) % q]
    first, second = h[:, 1], h[:, 2] - h[:, 1]
    a = allreduce_tree(groups, base, first, size_only)
    b = allreduce_tree(shifted, base + first, second, size_only)
    return [Round.concat([x, y], label=f"double binomial {x.label}") for x, y in zip(a, b)]


def allreduce_double_tree(groups, base, n, size_only, chunks: int = 1) -> list[Round]:
    """NCCL's double binary tree, pipelined (see :mod:`commbook.double_tree`): each of the
    two complementary trees reduces half of the buffer to its root chunk by chunk, then
    broadcasts it back down, chunk by chunk; both trees share the rounds."""
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    k = chunks
    h = base[:, None] + chunk_bounds(n, 2, size_only)               # (m, 3): the two halves
    trees = []
    for t, parents in enumerate(double_tree_parents(q)):
        depth = tree_depths(parents)
        bounds = h[:, t:t + 1] + chunk_bounds(h[:, t + 1] - h[:, t], k, size_only)  # (m, k+1)
        trees.append((parents, depth, int(depth.max()), bounds))
    D = max(Dt for _, _, Dt, _ in trees)
    v = np.arange(q)
    schedule = []
    for phase in ("reduce", "broadcast"):
        for r in range(k + D - 1):
            parts = []
            for parents, depth, Dt, bounds in trees:
                c = r - (Dt - depth) if phase == "reduce" else r - (depth - 1)
                on = (parents >= 0) & (c >= 0) & (c < k)
                child, chunk = v[on], c[on]
                src, dst = (child, parents[on]) if phase == "reduce" else (parents[on], child)
                parts.append(Round.make(groups[:, src], groups[:, dst],
                                        bounds[:, chunk + 1] - bounds[:, chunk], bounds[:, chunk],
                                        reduce=phase == "reduce", label=f"double tree {phase} {r + 1}"))
            schedule.append(Round.concat(parts))
    return schedule
