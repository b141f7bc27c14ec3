"""One-round (direct) schedules: the star all-reduce, the parameter server sharded over K
servers, one-shot and two-shot kernels, in-network reduction, flat broadcast/reduce/
scatter/gather and the shift rounds of the direct all-to-all."""
from __future__ import annotations

import numpy as np

from ..comm_sim import LazyRounds, Round, chunk_bounds
from ..cost import check_servers
from .schedule import IN, OUT, grid, whole


def allreduce_naive(groups, base, n, size_only) -> list[Round]:
    """Everyone sends its buffer to local rank 0, which reduces and sends the result back.

    >>> s = allreduce_naive(np.arange(4), 0, 8, size_only=False)
    >>> [(r.src.tolist(), r.dst.tolist()) for r in s]             # a star through rank 0
    [([1, 2, 3], [0, 0, 0]), ([0, 0, 0], [1, 2, 3])]
    """
    groups, base, n = grid(groups, base, n, size_only)
    others = np.arange(1, groups.shape[1])
    zeros = np.zeros_like(others)
    return [whole(groups, base, n, others, zeros, True, "naive gather"),
            whole(groups, base, n, zeros, others, False, "naive broadcast")]


def allreduce_parameter_server(groups, base, n, size_only, servers: int = 1) -> list[Round]:
    """Parameter server sharded over K = ``servers``: local ranks 0 … K-1 are the servers
    (each also a worker, as in a colocated deployment).  Push: every rank sends shard k
    (n/K) of its buffer to server k, which adds it to its own; pull: server k sends the
    reduced shard k back to every other rank.  Two rounds; server k's receive port carries
    (q-1)·n/K in each, so K servers cut the star's bandwidth term K-fold (K = 1 is
    :func:`allreduce_naive`, K = q the two-shot all-reduce).

    Two servers (ranks 0 and 1), each owning half of the buffer:

    >>> push, pull = allreduce_parameter_server(np.arange(4), 0, 8, size_only=False, servers=2)
    >>> sorted(set(push.dst.tolist())), push.count.tolist()[:2], pull.label
    ([0, 1], [4, 4], 'parameter server pull')
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    k_srv = check_servers(servers, q)
    w, k = (a.ravel() for a in np.meshgrid(np.arange(q), np.arange(k_srv), indexing="ij"))
    w, k = w[w != k], k[w != k]                  # a server's own shard stays where it is
    b = base[:, None] + chunk_bounds(n, k_srv, size_only)
    size, off = b[:, k + 1] - b[:, k], b[:, k]
    return [Round.make(groups[:, w], groups[:, k], size, off, reduce=True, label="parameter server push"),
            Round.make(groups[:, k], groups[:, w], size, off, label="parameter server pull")]


def allreduce_one_shot(groups, base, n, size_only) -> list[Round]:
    """Every rank reads all q buffers into its scratch buffer (OUT) in rank order, so all
    ranks get bit-identical sums (its own contribution is a free local read), then copies
    the result back locally.  The first message of each destination (src = local 0) copies,
    the others reduce: this relies on the in-order semantics of a round (see comm_sim).

    >>> s = allreduce_one_shot(np.arange(4), 0, 8, size_only=False)
    >>> [(r.label, len(r)) for r in s]        # q² reads, the q local ones free
    [('one-shot', 16), ('one-shot copy-back', 4)]
    """
    groups, base, n = grid(groups, base, n, size_only)
    m, q = groups.shape
    dst, src = np.divmod(np.arange(q * q), q)

    def region(k):
        return np.repeat(n[:, None], k, axis=1), np.repeat(base[:, None], k, axis=1)

    return [Round.make(groups[:, src], groups[:, dst], *region(q * q), sbuf=IN, dbuf=OUT,
                       reduce=np.broadcast_to(src > 0, (m, q * q)), label="one-shot"),
            Round.make(groups, groups, *region(q), sbuf=OUT, dbuf=IN, label="one-shot copy-back")]


def allreduce_two_shot(groups, base, n, size_only) -> list[Round]:
    """A one-round direct reduce-scatter, then a one-round direct all-gather.

    >>> s = allreduce_two_shot(np.arange(4), 0, 8, size_only=False)
    >>> [(r.label, len(r), int(r.count.max())) for r in s]    # q(q-1) messages of n/q each way
    [('two-shot reduce-scatter', 12, 2), ('two-shot all-gather', 12, 2)]
    """
    groups, base, n = grid(groups, base, n, size_only)
    q = groups.shape[1]
    src, dst = np.nonzero(~np.eye(q, dtype=bool))
    b = base[:, None] + chunk_bounds(n, q, size_only)
    size = b[:, dst + 1] - b[:, dst]
    return [Round.make(groups[:, src], groups[:, dst], size, b[:, dst], reduce=True,
                       label="two-shot reduce-scatter"),
            Round.make(groups[:, dst], groups[:, src], size, b[:, dst], label="two-shot all-gather")]


def allreduce_innet(groups, base, n, size_only) -> list[Round]:
    """In-network reduction: every participant streams its buffer into the switch and
    receives the reduction (one round, one group).

    >>> (r,) = allreduce_innet(np.arange(4), 0, 8, size_only=False)
    >>> r.innet, r.src.tolist(), r.count.tolist()
    (True, [0, 1, 2, 3], [8, 8, 8, 8])
    """
    groups, base, n = grid(groups, base, n, size_only)
    if groups.shape[0] != 1:
        raise ValueError("in-network reduction runs one group at a time")
    return [Round.make(groups[0], groups[0], n[0], base[0], reduce=True, label="in-network", innet=True)]


def broadcast_flat(groups, base, n, size_only) -> list[Round]:
    """Local rank 0 sends the whole buffer to every other rank in one round.

    >>> (r,) = broadcast_flat(np.arange(4), 0, 8, size_only=False)
    >>> r.src.tolist(), r.dst.tolist()
    ([0, 0, 0], [1, 2, 3])
    """
    groups, base, n = grid(groups, base, n, size_only)
    others = np.arange(1, groups.shape[1])
    return [whole(groups, base, n, np.zeros_like(others), others, False, "flat broadcast")]


def reduce_flat(groups, base, n, size_only) -> list[Round]:
    """Every rank sends its buffer to local rank 0 in one round; rank 0 reduces.

    >>> (r,) = reduce_flat(np.arange(4), 0, 8, size_only=False)
    >>> r.src.tolist(), r.dst.tolist(), bool(r.reduce.all())
    ([1, 2, 3], [0, 0, 0], True)
    """
    groups, base, n = grid(groups, base, n, size_only)
    others = np.arange(1, groups.shape[1])
    return [whole(groups, base, n, others, np.zeros_like(others), True, "flat reduce")]


def shift_rounds(q: int, block, label: str) -> LazyRounds:
    """Rounds j = 0 … q-1 in which rank i sends to (i + j) mod q; round 0 is the free
    local copy.  ``block(i, d)`` gives (source offset, count, destination offset).

    >>> s = shift_rounds(4, lambda i, d: (d, 1, i), "shift")
    >>> len(s), s[1].src.tolist(), s[1].dst.tolist()                # round j: rank i sends to i + j
    (4, [0, 1, 2, 3], [1, 2, 3, 0])
    """
    i = np.arange(q)

    def shift(j: int) -> Round:
        d = (i + j) % q
        so, cnt, do = block(i, d)
        return Round.make(i, d, cnt, so, do, sbuf=IN, dbuf=OUT, label=f"{label} shift {j}")
    return LazyRounds(q, shift)
