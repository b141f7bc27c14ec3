"""Every collective, every algorithm: schedules run on a :class:`~commbook.comm_sim.VirtualCluster`.

Each public function takes either real per-rank arrays (``data=[...]``: the result's
``outputs`` hold what every rank ends with, checked against a numpy reference unless
``check=False``) or a size (``nbytes=``: a size-only run, no payloads).  The result is a
:class:`~commbook.comm_sim.RunResult`: ``time``, ``round_times``, ``rounds``,
``bytes_sent`` and ``bytes_received`` per rank, ``link_bytes`` per topology resource,
``trace`` and ``outputs``.

>>> from commbook.topology import Switch
>>> from commbook.hardware import NVLINK4
>>> from commbook.comm_sim import VirtualCluster
>>> import numpy as np
>>> c = VirtualCluster(Switch(4, NVLINK4))
>>> r = all_reduce(c, [np.arange(4.0) + 10 * d for d in range(4)])
>>> r.outputs[0]
array([60., 64., 68., 72.])

Schedule builders work on *groups*: an int array of shape (m, q) holding m disjoint
groups of q logical ranks that run the same algorithm at the same time, each on its
own region ``[base, base + n)`` of the buffer (one entry of ``base`` and ``n`` per group).
The hierarchical and torus algorithms are compositions of these builders.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from .comm_sim import OPS, SUPPORTED_DTYPES, Round, RunResult, VirtualCluster, chunk_bounds
from .cost import (ALL_GATHER_ALGORITHMS, ALLREDUCE_ALGORITHMS, BROADCAST_ALGORITHMS,
                   REDUCE_ALGORITHMS, REDUCE_SCATTER_ALGORITHMS, _require_pow2,
                   canonical_algorithm)
from .topology import Torus, TwoLevel
from .units import check_size

__all__ = [
    "all_reduce", "broadcast", "reduce", "reduce_scatter", "all_gather", "all_to_all",
    "all_to_all_v", "scatter", "gather", "send_recv", "ALGORITHMS",
]

IN, OUT, TMP = 0, 1, 2

ALGORITHMS: dict[str, tuple[str, ...]] = {
    "all_reduce": tuple(ALLREDUCE_ALGORITHMS) + ("hierarchical", "torus"),
    "broadcast": BROADCAST_ALGORITHMS,
    "reduce": REDUCE_ALGORITHMS,
    "reduce_scatter": REDUCE_SCATTER_ALGORITHMS,
    "all_gather": ALL_GATHER_ALGORITHMS,
    "all_to_all": ("direct", "hierarchical"),
    "scatter": ("flat",),
    "gather": ("flat",),
}
"""Valid algorithm names per collective (all-reduce aliases such as ``butterfly`` work too)."""


# ============================================================================ builders
def _grid(groups, base, n, exact):
    groups = np.atleast_2d(np.asarray(groups, dtype=np.int64))
    m = groups.shape[0]
    base = np.broadcast_to(np.asarray(base, dtype=float if exact else np.int64), (m,))
    n = np.broadcast_to(np.asarray(n, dtype=float if exact else np.int64), (m,))
    return groups, base, n


def _ring_pass(groups, base, n, exact, reduce, buf, label) -> list[Round]:
    """q-1 rounds around each group's ring; at step s rank i sends chunk (i-s) mod q
    (reduce-scatter, the receiver adds it) or (i-s+1) mod q (all-gather, it copies)."""
    groups, base, n = _grid(groups, base, n, exact)
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, exact)
    i = np.arange(q)
    lead = 0 if reduce else 1
    out = []
    for s in range(1, q):
        c = (i - s + lead) % q
        out.append(Round.make(groups[:, i], groups[:, (i + 1) % q], b[:, c + 1] - b[:, c],
                              b[:, c], sbuf=buf, reduce=reduce, label=f"{label} {s}"))
    return out


def ring_reduce_scatter(groups, base, n, exact, buf=IN, label="reduce-scatter") -> list[Round]:
    """Ring reduce-scatter: afterwards local rank i owns the reduced chunk i."""
    return _ring_pass(groups, base, n, exact, True, buf, label)


def ring_all_gather(groups, base, n, exact, buf=IN, label="all-gather") -> list[Round]:
    """Ring all-gather: rank i starts owning chunk i; all ranks end with every chunk."""
    return _ring_pass(groups, base, n, exact, False, buf, label)


def _whole(groups, base, n, src_local, dst_local, reduce, label, buf=IN):
    """One round in which, in every group, local src_local[j] sends its whole region
    to local dst_local[j]."""
    k = len(src_local)
    return Round.make(groups[:, src_local], groups[:, dst_local],
                      np.repeat(n[:, None], k, axis=1), np.repeat(base[:, None], k, axis=1),
                      sbuf=buf, reduce=reduce, label=label)


def _fold(groups, base, n, label):
    """MPICH's fold for q that is not a power of two: ranks 0,2,..,2r-2 hand their
    buffer to the odd neighbour.  Returns (fold rounds, unfold rounds, virtual groups)."""
    q = groups.shape[1]
    pow2 = 1 << (q.bit_length() - 1)
    r = q - pow2
    if r == 0:
        return [], [], groups
    evens, odds = np.arange(0, 2 * r, 2), np.arange(1, 2 * r, 2)
    vmap = np.concatenate([odds, np.arange(2 * r, q)])
    fold = [_whole(groups, base, n, evens, odds, True, f"{label} fold")]
    unfold = [_whole(groups, base, n, odds, evens, False, f"{label} unfold")]
    return fold, unfold, groups[:, vmap]


def halving_reduce_scatter(groups, base, n, exact, label="halving") -> list[Round]:
    """Recursive halving (q a power of two): at distance d = q/2, ..., 1 each rank sends
    the half of its segment it does not keep.  Afterwards rank v owns block v."""
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, exact)
    v = np.arange(q)
    out, d = [], q // 2
    while d >= 1:
        send_lo = (v & ~(d - 1)) ^ d
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, send_lo + d] - b[:, send_lo],
                              b[:, send_lo], reduce=True, label=f"{label} d={d}"))
        d //= 2
    return out


def doubling_all_gather(groups, base, n, exact, buf=IN, label="doubling") -> list[Round]:
    """Recursive doubling (q a power of two): at distance d = 1, 2, ..., q/2 each rank
    sends the aligned segment of d blocks it holds to rank v xor d."""
    q = groups.shape[1]
    b = base[:, None] + chunk_bounds(n, q, exact)
    v = np.arange(q)
    out, d = [], 1
    while d < q:
        lo = v & ~(d - 1)
        out.append(Round.make(groups[:, v], groups[:, v ^ d], b[:, lo + d] - b[:, lo],
                              b[:, lo], sbuf=buf, label=f"{label} d={d}"))
        d *= 2
    return out


def binomial_reduce(groups, base, n, label="tree reduce") -> list[Round]:
    """ceil(log2 q) rounds towards local rank 0: at step 2^k, ranks v = 2^k mod 2^(k+1) send."""
    q = groups.shape[1]
    v, out, step = np.arange(q), [], 1
    while step < q:
        s = v[(v % (2 * step)) == step]
        out.append(_whole(groups, base, n, s, s - step, True, f"{label} {step}"))
        step *= 2
    return out


def binomial_broadcast(groups, base, n, label="tree broadcast", buf=IN) -> list[Round]:
    """ceil(log2 q) rounds from local rank 0, doubling the number of holders each round."""
    q = groups.shape[1]
    v, out = np.arange(q), []
    step = 1 << max(q - 1, 0).bit_length() >> 1 if q > 1 else 0
    while step >= 1:
        s = v[((v % (2 * step)) == 0) & (v + step < q)]
        out.append(_whole(groups, base, n, s, s + step, False, f"{label} {step}", buf=buf))
        step //= 2
    return out


def allreduce_schedule(algorithm: str, groups, base, n, exact) -> list[Round]:
    """The all-reduce schedule of ``algorithm`` (canonical name) on every group."""
    groups, base, n = _grid(groups, base, n, exact)
    q = groups.shape[1]
    if q == 1:
        return []
    if algorithm == "ring":
        return ring_reduce_scatter(groups, base, n, exact) + ring_all_gather(groups, base, n, exact)
    if algorithm in ("rd", "rabenseifner"):
        fold, unfold, vg = _fold(groups, base, n, algorithm)
        if algorithm == "rd":
            v, mid, d = np.arange(vg.shape[1]), [], 1
            while d < vg.shape[1]:
                mid.append(_whole(vg, base, n, v, v ^ d, True, f"rd d={d}"))
                d *= 2
        else:
            mid = halving_reduce_scatter(vg, base, n, exact) + doubling_all_gather(vg, base, n, exact)
        return fold + mid + unfold
    if algorithm == "tree":
        return binomial_reduce(groups, base, n) + binomial_broadcast(groups, base, n)
    if algorithm == "double_tree":
        h = chunk_bounds(n, 2, exact)  # (m, 3)
        shifted = groups[:, (np.arange(q) + 1) % q]
        a = binomial_reduce(groups, base, h[:, 1]) + binomial_broadcast(groups, base, h[:, 1])
        b = (binomial_reduce(shifted, base + h[:, 1], h[:, 2] - h[:, 1])
             + binomial_broadcast(shifted, base + h[:, 1], h[:, 2] - h[:, 1]))
        return [Round.concat([x, y], label=f"double tree {x.label}") for x, y in zip(a, b)]
    if algorithm == "naive":
        others = np.arange(1, q)
        zeros = np.zeros_like(others)
        return [_whole(groups, base, n, others, zeros, True, "naive gather"),
                _whole(groups, base, n, zeros, others, False, "naive broadcast")]
    if algorithm == "one_shot":
        # every rank sums all q buffers into its scratch buffer (OUT) in rank order (its
        # own contribution is a free local read), so all ranks get bit-identical results;
        # the copy back is local too
        dst, src = np.divmod(np.arange(q * q), q)
        whole = lambda k: (np.repeat(n[:, None], k, axis=1), np.repeat(base[:, None], k, axis=1))
        return [Round.make(groups[:, src], groups[:, dst], *whole(q * q), sbuf=IN, dbuf=OUT,
                           reduce=src > 0, label="one-shot"),
                Round.make(groups, groups, *whole(q), sbuf=OUT, dbuf=IN, label="one-shot copy-back")]
    if algorithm == "two_shot":
        src, dst = np.nonzero(~np.eye(q, dtype=bool))
        b = base[:, None] + chunk_bounds(n, q, exact)
        size = b[:, dst + 1] - b[:, dst]
        return [Round.make(groups[:, src], groups[:, dst], size, b[:, dst], reduce=True,
                           label="two-shot reduce-scatter"),
                Round.make(groups[:, dst], groups[:, src], size, b[:, dst], label="two-shot all-gather")]
    if algorithm == "innet":
        if groups.shape[0] != 1:
            raise ValueError("in-network reduction runs one group at a time")
        return [Round.make(groups[0], groups[0], n[0], base[0], reduce=True, label="in-network", innet=True)]
    raise ValueError(f"no schedule for all-reduce algorithm {algorithm!r}")  # pragma: no cover


# ============================================================================ run plumbing
def _inputs(cluster, data, nbytes, ranks, what="data"):
    """Validate data or nbytes.  Returns (ranks, q, flat buffers or None, n, exact, itemsize, shape, dtype)."""
    if not isinstance(cluster, VirtualCluster):
        raise TypeError(f"expected a VirtualCluster, got {type(cluster).__name__}")
    ranks = cluster.check_ranks(ranks)
    q = ranks.size
    if (data is None) == (nbytes is None):
        raise ValueError("give exactly one of data= (per-rank arrays) or nbytes= (size-only run)")
    if data is None:
        return ranks, q, None, check_size(nbytes, "nbytes"), True, 1, None, None
    if isinstance(data, np.ndarray) or not isinstance(data, Sequence):
        raise TypeError("data must be a list with one numpy array per rank")
    if len(data) != q:
        raise ValueError(f"data has {len(data)} arrays but the collective has {q} ranks")
    arrays = [np.asarray(x) for x in data]
    shape, dtype = arrays[0].shape, arrays[0].dtype
    for r, x in enumerate(arrays):
        if x.dtype != dtype:
            raise TypeError(f"rank {r} holds dtype {x.dtype}, rank 0 holds {dtype}: all ranks must match")
        if x.shape != shape:
            raise ValueError(f"rank {r} holds shape {x.shape}, rank 0 holds {shape}: all ranks must match")
    if dtype not in SUPPORTED_DTYPES:
        raise TypeError(f"dtype {dtype} is not supported; use one of {', '.join(map(str, SUPPORTED_DTYPES))}")
    bufs = [[np.array(x, dtype=dtype).ravel()] for x in arrays]
    return ranks, q, bufs, int(arrays[0].size), False, dtype.itemsize, shape, dtype


def _check_op(op: str) -> None:
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}; valid: {', '.join(OPS)}")


class _Reference:
    """The numpy answer to a reduction, and the check of an output against it.

    Integers and min/max must match exactly.  Floats may differ by what another order
    of operations allows: 4·p·eps·(sum of |x|) for sums (|product| for prod).  Most
    elements already pass against 4·p·eps·|reference|; the sum of |x| is computed only
    for the others.  Elements whose partial results may leave the dtype's range are not
    compared: the order of operations decides there between inf and a finite value.
    """

    def __init__(self, data: Sequence[np.ndarray], op: str):
        self.rows, self.op = [np.asarray(x).ravel() for x in data], op  # views, no copy
        dt, p = self.rows[0].dtype, len(self.rows)
        self.exact = dt.kind == "i" or op in ("min", "max")
        self.work = np.float32 if dt == np.float16 else dt
        ufunc = {"min": np.minimum, "max": np.maximum, "prod": np.multiply}.get(op, np.add)
        with np.errstate(over="ignore", invalid="ignore"):
            self.ref = self.rows[0].astype(self.work if not self.exact else dt, copy=True)
            for x in self.rows[1:]:
                ufunc(self.ref, x, out=self.ref)
            if op == "avg":
                self.ref = _avg(self.ref, p)

    def check(self, name: str, got: np.ndarray, sl: slice = slice(None)) -> None:
        ref = self.ref[sl]
        if self.exact or got.shape != ref.shape:
            _check_output(name, got, ref)
            return
        p, fi = len(self.rows), np.finfo(got.dtype)
        with np.errstate(over="ignore", invalid="ignore"):
            diff = np.abs(got.astype(self.work) - ref)
            loose = np.flatnonzero(~(diff <= 4 * p * fi.eps * np.abs(ref) + fi.tiny))
            if loose.size == 0:
                return
            mag = np.abs(np.stack([x[sl][loose] for x in self.rows])).astype(self.work)
            if self.op == "prod":
                bound = np.prod(np.maximum(mag, 1), axis=0)  # no partial product exceeds it
                scale = np.abs(ref[loose])
            else:
                bound = mag.sum(axis=0)                       # no partial sum exceeds it
                scale = bound / p if self.op == "avg" else bound
            bad = ~(diff[loose] <= 4 * p * fi.eps * scale + fi.tiny) & (bound <= fi.max)
        if bad.any():
            i = int(loose[np.flatnonzero(bad)[0]])
            raise AssertionError(f"{name}: element {i} is {got[i]!r}, numpy reference {ref[i]!r}")


def _avg(x: np.ndarray, p: int) -> np.ndarray:
    """Divide by p: truncating toward zero for integers (as NCCL's ncclAvg does)."""
    if x.dtype.kind == "i":
        return np.sign(x) * (np.abs(x) // p)
    return x / np.asarray(p, dtype=x.dtype)


def _check_output(name: str, got: np.ndarray, ref: np.ndarray) -> None:
    """Raise AssertionError unless ``got`` equals ``ref`` exactly."""
    if got.shape != ref.shape:
        raise AssertionError(f"{name}: output shape {got.shape} differs from the reference {ref.shape}")
    if not np.array_equal(got, ref):
        i = int(np.flatnonzero(got != ref)[0])
        raise AssertionError(f"{name}: element {i} is {got[i]!r}, numpy reference {ref[i]!r}")


def _check_all(name: str, outs: list[np.ndarray], reference: "_Reference") -> None:
    """Check every rank's output; ranks whose output is bit-identical to an already
    checked one are not checked again."""
    checked: list[np.ndarray] = []
    for r, o in enumerate(outs):
        if not any(o.shape == c.shape and np.array_equal(o, c) for c in checked[-1:]):
            reference.check(f"{name} rank {r}", o)
            checked.append(o)


def _finish(cluster, schedule, ranks, bufs, itemsize, op, trace):
    return cluster.run(schedule, ranks=ranks, buffers=bufs, itemsize=itemsize, op=op, trace=trace)


# ============================================================================ all-reduce
def all_reduce(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
               nbytes: float | None = None, algorithm: str = "ring", op: str = "sum",
               ranks: Sequence[int] | None = None, inter_algorithm: str = "ring",
               check: bool = True, trace: bool = False) -> RunResult:
    """All-reduce: every rank ends with the reduction of all ranks' buffers.

    ``algorithm``: one of :data:`ALGORITHMS` ``["all_reduce"]`` (or an alias such as
    ``butterfly``).  ``hierarchical`` needs a :class:`~commbook.topology.TwoLevel`
    cluster (``inter_algorithm`` runs across nodes on each rail); ``torus`` runs the
    ring by dimension on a :class:`~commbook.topology.Torus`.
    """
    algo = canonical_algorithm(algorithm, ALGORITHMS["all_reduce"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    _check_op(op)
    if bufs is not None:
        for b in bufs:
            b.append(np.empty_like(b[IN]))  # scratch (OUT) for schedules that need one
    if algo == "hierarchical":
        schedule = _hierarchical_allreduce(cluster, ranks, n, exact, inter_algorithm)
    elif algo == "torus":
        schedule = _torus_allreduce(cluster, ranks, n, exact)
    else:
        if algo == "innet":
            cluster.topology.innet_latency_bandwidth(ranks)  # raises on direct networks
        schedule = allreduce_schedule(algo, np.arange(q)[None, :], 0, n, exact)
    res = _finish(cluster, schedule, ranks, bufs, itemsize, op, trace)
    if bufs is not None:
        outs = [b[IN] if op != "avg" else _avg(b[IN], q) for b in bufs]
        res.outputs = [o.reshape(shape) for o in outs]
        if check:
            _check_all(f"all_reduce[{algo}]", outs, _Reference(data, op))
    return res


def _hierarchical_allreduce(cluster, ranks, n, exact, inter_algorithm):
    topo = cluster.topology
    if not isinstance(topo, TwoLevel):
        raise ValueError(f"hierarchical all-reduce needs a TwoLevel topology, got {topo.name}")
    if ranks.size != topo.p or not np.array_equal(ranks, np.arange(topo.p)):
        raise ValueError("hierarchical all-reduce runs on all devices in their natural order (ranks=None)")
    inner = canonical_algorithm(inter_algorithm, ALLREDUCE_ALGORITHMS)
    if inner == "innet":
        raise ValueError("inter_algorithm='innet' is not supported in the hierarchical schedule")
    N, G = topo.nodes, topo.gpus_per_node
    nodes = np.arange(topo.p).reshape(N, G)
    b = chunk_bounds(n, G, exact)
    rails = nodes.T  # (G, N): rail g holds GPU g of every node
    return (ring_reduce_scatter(nodes, 0, n, exact, label="intra reduce-scatter")
            + allreduce_schedule(inner, rails, b[:-1], np.diff(b), exact)
            + ring_all_gather(nodes, 0, n, exact, label="intra all-gather"))


def _torus_allreduce(cluster, ranks, n, exact):
    topo = cluster.topology
    if not isinstance(topo, Torus):
        raise ValueError(f"the torus all-reduce needs a Torus topology, got {topo.name}")
    if ranks.size != topo.p or not np.array_equal(ranks, np.arange(topo.p)):
        raise ValueError("the torus all-reduce runs on all devices in their natural order (ranks=None)")
    dims = topo.dims
    coords = topo.coords(np.arange(topo.p))
    base, length = np.zeros(topo.p), np.full(topo.p, float(n))
    if not exact:
        base, length = base.astype(np.int64), length.astype(np.int64)
    rs, plan = [], []
    for d, a in enumerate(dims):
        if a == 1:
            continue
        lines = np.moveaxis(np.arange(topo.p).reshape(dims), d, -1).reshape(-1, a)
        lb, ln = base[lines[:, 0]], length[lines[:, 0]]
        rs += ring_reduce_scatter(lines, lb, ln, exact, label=f"dim {d} reduce-scatter")
        plan.append((d, lines, lb, ln))
        b = chunk_bounds(ln, a, exact)  # (lines, a+1)
        pos = coords[lines, d]           # position of each device along the line
        base[lines] = lb[:, None] + np.take_along_axis(b, pos, axis=1)
        length[lines] = np.take_along_axis(b, pos + 1, axis=1) - np.take_along_axis(b, pos, axis=1)
    ag = []
    for d, lines, lb, ln in reversed(plan):
        ag += ring_all_gather(lines, lb, ln, exact, label=f"dim {d} all-gather")
    return rs + ag


# ============================================================================ rooted ops
def _check_root(q: int, root: int) -> int:
    if isinstance(root, (bool, np.bool_)) or not isinstance(root, (int, np.integer)):
        raise TypeError(f"root must be an integer rank, got {root!r}")
    if not 0 <= root < q:
        raise ValueError(f"root {root} is outside the ranks 0..{q - 1}")
    return int(root)


def _check_chunks(chunks: int) -> int:
    if isinstance(chunks, (bool, np.bool_)) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise ValueError(f"chunks must be an integer >= 1, got {chunks!r}")
    return int(chunks)


def _rotated(q: int, root: int) -> np.ndarray:
    """One group of all ranks, starting at ``root`` (rooted schedules assume local rank 0)."""
    return ((np.arange(q) + _check_root(q, root)) % q)[None, :]


def broadcast(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
              nbytes: float | None = None, algorithm: str = "binomial", root: int = 0,
              chunks: int = 1, ranks: Sequence[int] | None = None, check: bool = True,
              trace: bool = False) -> RunResult:
    """Broadcast the root's buffer to every rank.

    ``binomial`` (log rounds), ``flat`` (one round; the root's port serializes),
    ``chain`` (pipelined along ranks root, root+1, ... in ``chunks`` pieces) and
    ``scatter_allgather`` (Van de Geijn: one-round flat scatter, then ring all-gather).
    ``data`` holds one array per rank (non-root contents are overwritten).
    """
    algo = canonical_algorithm(algorithm, ALGORITHMS["broadcast"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    chain = _rotated(q, root)
    chunks = _check_chunks(chunks)
    base, nn = np.zeros(1, dtype=float if exact else np.int64), np.array([n], dtype=float if exact else np.int64)
    if q == 1:
        schedule = []
    elif algo == "binomial":
        schedule = binomial_broadcast(chain, base, nn)
    elif algo == "flat":
        schedule = [_whole(chain, base, nn, np.zeros(q - 1, int), np.arange(1, q), False, "flat broadcast")]
    elif algo == "chain":
        b = chunk_bounds(n, int(chunks), exact)
        schedule = []
        for t in range(q - 2 + int(chunks)):
            j = np.arange(q - 1)
            j = j[(t - j >= 0) & (t - j < chunks)]
            c = t - j
            schedule.append(Round.make(chain[0, j], chain[0, j + 1], b[c + 1] - b[c], b[c], label=f"chain {t + 1}"))
    else:
        b = chunk_bounds(n, q, exact)
        others = np.array([c for c in range(q) if c != root])
        schedule = [Round.make(root, others, b[others + 1] - b[others], b[others], label="scatter")]
        schedule += ring_all_gather(np.arange(q)[None, :], 0, n, exact)
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [b[IN].reshape(shape) for b in bufs]
        if check:
            ref = np.asarray(data[root]).ravel()
            for r, b in enumerate(bufs):
                _check_output(f"broadcast[{algo}] rank {r}", b[IN], ref)
    return res


def reduce(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
           nbytes: float | None = None, algorithm: str = "binomial", root: int = 0,
           op: str = "sum", ranks: Sequence[int] | None = None, check: bool = True,
           trace: bool = False) -> RunResult:
    """Reduce every rank's buffer into the root (``outputs[root]``; others ``None``)."""
    algo = canonical_algorithm(algorithm, ALGORITHMS["reduce"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    _check_op(op)
    g = _rotated(q, root)
    base, nn = np.zeros(1, dtype=float if exact else np.int64), np.array([n], dtype=float if exact else np.int64)
    if q == 1:
        schedule = []
    elif algo == "binomial":
        schedule = binomial_reduce(g, base, nn)
    else:
        schedule = [_whole(g, base, nn, np.arange(1, q), np.zeros(q - 1, int), True, "flat reduce")]
    res = _finish(cluster, schedule, ranks, bufs, itemsize, op, trace)
    if bufs is not None:
        out = bufs[root][IN] if op != "avg" else _avg(bufs[root][IN], q)
        res.outputs = [out.reshape(shape) if r == root else None for r in range(q)]
        if check:
            _Reference(data, op).check(f"reduce[{algo}]", out)
    return res


# ============================================================================ RS / AG
def reduce_scatter(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
                   nbytes: float | None = None, algorithm: str = "ring", op: str = "sum",
                   ranks: Sequence[int] | None = None, check: bool = True,
                   trace: bool = False) -> RunResult:
    """Reduce-scatter: rank r ends with chunk r of the reduction (chunks split the
    flattened buffer as :func:`~commbook.comm_sim.chunk_bounds` does).  ``rh`` is
    recursive halving (p a power of two)."""
    algo = canonical_algorithm(algorithm, ALGORITHMS["reduce_scatter"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    _check_op(op)
    g = np.arange(q)[None, :]
    if algo == "ring":
        schedule = ring_reduce_scatter(g, 0, n, exact)
    else:
        _require_pow2(q, "recursive halving")
        schedule = halving_reduce_scatter(*_grid(g, 0, n, exact), exact)
    res = _finish(cluster, schedule, ranks, bufs, itemsize, op, trace)
    if bufs is not None:
        b = chunk_bounds(n, q, False)
        outs = [bufs[r][IN][b[r]:b[r + 1]] for r in range(q)]
        outs = [o if op != "avg" else _avg(o, q) for o in outs]
        res.outputs = outs
        if check:
            reference = _Reference(data, op)
            for r in range(q):
                reference.check(f"reduce_scatter[{algo}] rank {r}", outs[r], slice(b[r], b[r + 1]))
    return res


def all_gather(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
               nbytes: float | None = None, algorithm: str = "ring",
               ranks: Sequence[int] | None = None, check: bool = True,
               trace: bool = False) -> RunResult:
    """All-gather: every rank ends with the concatenation (along axis 0) of all ranks'
    arrays.  With ``nbytes=`` the size is the gathered *output* (each rank adds n/p),
    as in the lecture and in nccl-tests.  ``rd`` needs p a power of two."""
    algo = canonical_algorithm(algorithm, ALGORITHMS["all_gather"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    total = n if exact else n * q
    if bufs is not None:
        for r in range(q):
            out = np.zeros(total, dtype=dtype)
            out[r * n:(r + 1) * n] = bufs[r][IN]
            bufs[r] = [out]
    g = np.arange(q)[None, :]
    if algo == "ring":
        schedule = ring_all_gather(g, 0, total, exact)
    else:
        _require_pow2(q, "recursive doubling")
        schedule = doubling_all_gather(*_grid(g, 0, total, exact), exact)
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        lead = (q * shape[0],) + shape[1:] if shape else (q,)
        res.outputs = [b[IN].reshape(lead) for b in bufs]
        if check:
            ref = np.concatenate([np.asarray(x).ravel() for x in data])
            for r, b in enumerate(bufs):
                _check_output(f"all_gather[{algo}] rank {r}", b[IN], ref)
    return res


# ============================================================================ all-to-all
def all_to_all(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
               nbytes: float | None = None, algorithm: str = "direct",
               ranks: Sequence[int] | None = None, check: bool = True,
               trace: bool = False) -> RunResult:
    """All-to-all (a distributed transpose): rank i's flattened buffer is cut into p
    blocks; block j goes to rank j, which stores the blocks in source order.

    ``direct``: p-1 shift rounds (rank i sends to i+j in round j).  ``hierarchical``
    (TwoLevel only): inside each node, blocks are regrouped by destination rail; then
    each rail exchanges across nodes, landing every block on its final GPU.
    """
    algo = canonical_algorithm(algorithm, ALGORITHMS["all_to_all"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    bnd = chunk_bounds(n, q, exact)
    size = np.diff(bnd)
    if bufs is not None:
        for r in range(q):
            bufs[r] = [bufs[r][IN], np.zeros(q * size[r], dtype=dtype), np.zeros(0, dtype=dtype)]
    if algo == "direct":
        schedule = _shift_rounds(q, lambda i, j: (bnd[j], size[j], i * size[j]), "all-to-all")
    else:
        schedule = _hierarchical_a2a(cluster, ranks, bnd, size, bufs, dtype)
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [b[OUT] for b in bufs]
        if check:
            flat = [np.asarray(x).ravel() for x in data]
            for j in range(q):
                ref = np.concatenate([f[bnd[j]:bnd[j + 1]] for f in flat])
                _check_output(f"all_to_all[{algo}] rank {j}", res.outputs[j], ref)
    return res


def _shift_rounds(q: int, block, label: str) -> list[Round]:
    """Rounds j = 0..q-1 in which rank i sends to (i+j) mod q; round 0 is the free
    local copy.  ``block(i, j)`` gives (source offset, count, destination offset)."""
    i = np.arange(q)
    out = []
    for j in range(q):
        d = (i + j) % q
        so, cnt, do = block(i, d)
        out.append(Round.make(i, d, cnt, so, do, sbuf=IN, dbuf=OUT, label=f"{label} shift {j}"))
    return out


def _hierarchical_a2a(cluster, ranks, bnd, size, bufs, dtype):
    topo = cluster.topology
    if not isinstance(topo, TwoLevel):
        raise ValueError(f"hierarchical all-to-all needs a TwoLevel topology, got {topo.name}")
    if ranks.size != topo.p or not np.array_equal(ranks, np.arange(topo.p)):
        raise ValueError("hierarchical all-to-all runs on all devices in their natural order (ranks=None)")
    N, G = topo.nodes, topo.gpus_per_node
    q = N * G
    v = np.arange(q)
    node, local = v // G, v % G
    # staging layout at rank (a, g'): blocks [b][g] for destination (b, g'), each size[b*G+g']
    dest = np.arange(N)[:, None] * G + np.arange(G)[None, :]         # (N, G): dest rank of (b, g')
    seg = G * size[dest]                                              # staging segment per (b, g')
    seg_off = np.cumsum(seg, axis=0) - seg                             # offset of segment b at rail g'
    tmp_len = seg.sum(axis=0)                                          # per rail g'
    if bufs is not None:
        for r in range(q):
            bufs[r][TMP] = np.zeros(int(tmp_len[local[r]]), dtype=dtype)
    rounds = []
    bb = np.arange(N)
    for j in range(G):  # intra-node regroup by destination rail (j = 0 is local)
        gd = (local + j) % G
        src = np.repeat(v, N)
        dst = np.repeat(node * G + gd, N)
        b_ = np.tile(bb, q)
        w = b_ * G + np.repeat(gd, N)                                  # final destination
        so, cnt = bnd[w], size[w]
        do = seg_off[b_, np.repeat(gd, N)] + np.repeat(local, N) * cnt
        rounds.append(Round.make(src, dst, cnt, so, do, sbuf=IN, dbuf=TMP, label=f"intra regroup {j}"))
    for j in range(N):  # across nodes on each rail (j = 0 is local)
        b_ = (node + j) % N
        dst = b_ * G + local
        so = seg_off[b_, local]
        cnt = G * size[dst]
        do = node * G * size[dst]
        rounds.append(Round.make(v, dst, cnt, so, do, sbuf=TMP, dbuf=OUT, label=f"rail exchange {j}"))
    return rounds


def all_to_all_v(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
                 counts: np.ndarray, ranks: Sequence[int] | None = None, check: bool = True,
                 trace: bool = False) -> RunResult:
    """All-to-all with variable counts: ``counts[i, j]`` items go from rank i to rank j
    (elements with ``data=``, bytes in a size-only run).  Rank i's buffer holds its
    outgoing segments in destination order; rank j receives them in source order.
    Direct schedule: p-1 shift rounds; the hottest receiver decides each round."""
    if not isinstance(cluster, VirtualCluster):
        raise TypeError(f"expected a VirtualCluster, got {type(cluster).__name__}")
    ranks = cluster.check_ranks(ranks)
    q = ranks.size
    C = np.asarray(counts)
    if C.dtype.kind not in "iuf":
        raise TypeError(f"counts must be numbers, got an array of dtype {C.dtype}")
    if C.shape != (q, q):
        raise ValueError(f"counts must have shape ({q}, {q}), got {C.shape}")
    if not np.all(np.isfinite(C)) or (C < 0).any():
        raise ValueError("counts must be finite and >= 0")
    exact = data is None
    if exact:
        C = C.astype(float)
        bufs, itemsize = None, 1
    else:
        if not np.issubdtype(C.dtype, np.integer):
            raise TypeError("counts must be integers when data is given")
        if isinstance(data, np.ndarray) or not isinstance(data, Sequence):
            raise TypeError("data must be a list with one numpy array per rank")
        if len(data) != q:
            raise ValueError(f"data has {len(data)} arrays but the collective has {q} ranks")
        dtype = np.asarray(data[0]).dtype
        if dtype not in SUPPORTED_DTYPES:
            raise TypeError(f"dtype {dtype} is not supported; use one of {', '.join(map(str, SUPPORTED_DTYPES))}")
        itemsize, bufs = dtype.itemsize, [None] * q
        for r, x in enumerate(data):
            x = np.asarray(x).ravel()
            if x.dtype != dtype:
                raise TypeError(f"rank {r} holds dtype {x.dtype}, rank 0 holds {dtype}")
            if x.size != C[r].sum():
                raise ValueError(f"rank {r} holds {x.size} items but counts[{r}] sums to {C[r].sum()}")
            bufs[r] = [x.copy(), np.zeros(int(C[:, r].sum()), dtype=dtype)]
    sdisp = np.cumsum(C, axis=1) - C
    rdisp = np.cumsum(C, axis=0) - C
    schedule = _shift_rounds(q, lambda i, d: (sdisp[i, d], C[i, d], rdisp[i, d]), "all-to-all-v")
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [b[OUT] for b in bufs]
        if check:
            flat = [np.asarray(x).ravel() for x in data]
            for j in range(q):
                ref = np.concatenate([flat[i][sdisp[i, j]:sdisp[i, j] + C[i, j]] for i in range(q)])
                _check_output(f"all_to_all_v rank {j}", res.outputs[j], ref)
    return res


# ============================================================================ scatter/gather/p2p
def scatter(cluster: VirtualCluster, data: np.ndarray | None = None, *, nbytes: float | None = None,
            root: int = 0, algorithm: str = "flat", ranks: Sequence[int] | None = None,
            check: bool = True, trace: bool = False) -> RunResult:
    """Scatter the root's array: rank r receives chunk r of it (one round; the root's
    port serializes (p-1)/p of the data).  ``data`` is the root's array only."""
    canonical_algorithm(algorithm, ALGORITHMS["scatter"])
    ranks = cluster.check_ranks(ranks)
    q = ranks.size
    root = _check_root(q, root)
    arr = None if data is None else np.asarray(data)
    _, _, bufs, n, exact, itemsize, _, dtype = _inputs(
        cluster, None if arr is None else [arr] * q, nbytes, ranks)
    b = chunk_bounds(n, q, exact)
    size = np.diff(b)
    if bufs is not None:
        bufs = [[arr.ravel().copy(), np.zeros(size[r], dtype=dtype)] for r in range(q)]
    r_ = np.arange(q)
    schedule = [Round.make(root, r_, size, b[:-1], 0, sbuf=IN, dbuf=OUT, label="scatter")] if q > 1 else []
    if q == 1 and bufs is not None:
        bufs[0][OUT][...] = bufs[0][IN]
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [bb[OUT] for bb in bufs]
        if check:
            for r in range(q):
                _check_output(f"scatter rank {r}", res.outputs[r], arr.ravel()[b[r]:b[r + 1]])
    return res


def gather(cluster: VirtualCluster, data: Sequence[np.ndarray] | None = None, *,
           nbytes: float | None = None, root: int = 0, algorithm: str = "flat",
           ranks: Sequence[int] | None = None, check: bool = True, trace: bool = False) -> RunResult:
    """Gather every rank's array into the root, concatenated in rank order (one round;
    the root's receive port serializes).  With ``nbytes=`` the size is the gathered total."""
    canonical_algorithm(algorithm, ALGORITHMS["gather"])
    ranks, q, bufs, n, exact, itemsize, shape, dtype = _inputs(cluster, data, nbytes, ranks)
    root = _check_root(q, root)
    total = n if exact else n * q
    b = chunk_bounds(total, q, exact)
    if bufs is not None:
        for r in range(q):
            bufs[r] = [bufs[r][IN], np.zeros(total if r == root else 0, dtype=dtype)]
    r_ = np.arange(q)
    schedule = [Round.make(r_, root, np.diff(b), 0, b[:-1], sbuf=IN, dbuf=OUT, label="gather")]
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [bufs[r][OUT] if r == root else None for r in range(q)]
        if check:
            ref = np.concatenate([np.asarray(x).ravel() for x in data])
            _check_output("gather", res.outputs[root], ref)
    return res


def send_recv(cluster: VirtualCluster, data: np.ndarray | None = None, *, nbytes: float | None = None,
              src: int = 0, dst: int = 1, check: bool = True, trace: bool = False) -> RunResult:
    """Point-to-point: device ``src`` sends its array (or ``nbytes``) to device ``dst``.
    Ranks are device ids here; the time is hops·α-style latency + n/β on the path."""
    topo = cluster.topology
    s, d = topo.check_device(src), topo.check_device(dst)
    ranks = np.array([s, d]) if s != d else np.array([s])
    arr = None if data is None else np.asarray(data)
    _, _, bufs, n, exact, itemsize, _, dtype = _inputs(
        cluster, None if arr is None else [arr] * ranks.size, nbytes, ranks)
    if bufs is not None:
        bufs = [[arr.ravel().copy(), np.zeros(n, dtype=dtype)] for _ in range(ranks.size)]
    last = ranks.size - 1
    schedule = [Round.make(0, last, n, 0, 0, sbuf=IN, dbuf=OUT, label="send")]
    res = _finish(cluster, schedule, ranks, bufs, itemsize, "sum", trace)
    if bufs is not None:
        res.outputs = [bufs[last][OUT].reshape(arr.shape)]
        if check:
            _check_output("send_recv", bufs[last][OUT], arr.ravel())
    return res
