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
    send their partial result to v - 2^k.

    Eight ranks: 4, then 2, then 1 partial result move towards rank 0.

    >>> [list(zip(r.src.tolist(), r.dst.tolist())) for r in binomial_reduce(np.arange(8), 0, 4)]
    [[(1, 0), (3, 2), (5, 4), (7, 6)], [(2, 0), (6, 4)], [(4, 0)]]
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    v, out, step = np.arange(q), [], 1
    while step < q:
        s = v[(v % (2 * step)) == step]
        out.append(whole(groups, base, n, s, s - step, True, f"{label} {step}"))
        step *= 2
    return out


def binomial_broadcast(groups, base, n, size_only=False, label="tree broadcast", buf=IN) -> list[Round]:
    """⌈log2 q⌉ rounds from local rank 0, doubling the number of holders each round.

    >>> [r.dst.tolist() for r in binomial_broadcast(np.arange(8), 0, 4)]        # holders double each round
    [[4], [2, 6], [1, 3, 5, 7]]
    """
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
    """Binomial-tree reduce to local rank 0, then binomial broadcast.

    >>> [r.label for r in allreduce_tree(np.arange(4), 0, 4, size_only=False)]     # 2⌈log2 q⌉ rounds
    ['tree reduce 1', 'tree reduce 2', 'tree broadcast 2', 'tree broadcast 1']
    """
    return binomial_reduce(groups, base, n, size_only) + binomial_broadcast(groups, base, n, size_only)


def allreduce_double_binomial(groups, base, n, size_only) -> list[Round]:
    """Two binomial trees at once, the second rooted one rank further along; each carries
    half of the buffer, without chunk pipelining: 2⌈log2 q⌉ rounds of n/2.

    >>> s = allreduce_double_binomial(np.arange(4), 0, 8, size_only=False)
    >>> len(s), s[0].count.tolist()                                # 2⌈log2 q⌉ rounds of n/2
    (4, [4, 4, 4, 4])
    """
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
    broadcasts it back down, chunk by chunk; both trees share the rounds.

    The engine's time of the size-only schedule is the closed form of :mod:`commbook.double_tree`:

    >>> from commbook.comm_sim import VirtualCluster
    >>> from commbook.double_tree import allreduce_double_tree as closed_form
    >>> from commbook.hardware import Link
    >>> from commbook.topology import Switch
    >>> link = Link("example", 1e-6, 1e9, "round numbers")
    >>> t = VirtualCluster(Switch(8, link)).run(allreduce_double_tree(np.arange(8), 0, 8e6, True, chunks=4)).time
    >>> round(t / closed_form(8, 8e6, 1e-6, 1e9, chunks=4), 12)
    1.0
    """
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
