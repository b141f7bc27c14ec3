"""The exchanges: all-to-all (uniform and variable), scatter, gather and point to point."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..comm_sim import Round, RunResult, VirtualCluster, chunk_bounds
from ..topology import Topology
from .api import Inputs, as_cluster, check_dtype, check_root
from .reference import check_equal
from .registry import algorithm as lookup
from .schedule import IN, OUT

__all__ = ["all_to_all", "all_to_all_v", "scatter", "gather", "send_recv"]


def all_to_all(cluster: VirtualCluster | Topology, data: Sequence[np.ndarray] | None = None, *,
               nbytes: float | None = None, algorithm: str = "direct",
               ranks: Sequence[int] | None = None, check: bool = True,
               trace: bool = False) -> RunResult:
    """All-to-all (a distributed transpose): rank i's flattened buffer is cut into p
    blocks; block j goes to rank j, which stores the blocks in source order.

    ``direct``: p-1 shift rounds (rank i sends to i+j in round j).  ``hierarchical``
    (TwoLevel only): inside each node the blocks are regrouped by destination rail; then
    each rail exchanges across nodes, landing every block on its final GPU.

    A distributed transpose: rank j ends with block j of every rank, in source order.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> data = [np.arange(4) + 10 * r for r in range(4)]
    >>> all_to_all(Switch(4, NVLINK4), data).outputs[1]
    array([ 1, 11, 21, 31])
    >>> np.array_equal(np.stack(all_to_all(Switch(4, NVLINK4), data).outputs), np.stack(data).T)
    True
    """
    algo = lookup("all_to_all", algorithm)
    inp = Inputs(cluster, data, nbytes, ranks)
    cluster, q = inp.cluster, inp.q
    bnd = chunk_bounds(inp.n, q, inp.size_only)
    if algo.scope == "topology":
        algo.check(cluster.topology, q)
        if q != cluster.p or not np.array_equal(inp.ranks, np.arange(cluster.p)):
            raise ValueError("the hierarchical all-to-all runs on all devices in their natural order (ranks=None)")
        schedule, tmp_len = algo.builder(cluster.topology, bnd)
    else:
        schedule, tmp_len = algo.builder(bnd)
    if inp.bufs is not None:
        size = np.diff(bnd)
        for r in range(q):
            inp.bufs[r] = [inp.bufs[r][IN], np.zeros(q * size[r], dtype=inp.dtype),
                           np.zeros(int(tmp_len[r]), dtype=inp.dtype)]
    res = inp.run(schedule, "sum", trace, "all_to_all", algo.name)
    if inp.bufs is not None:
        res.outputs = [b[OUT] for b in inp.bufs]
        if check:
            flat = [np.asarray(x).ravel() for x in data]
            for j in range(q):
                ref = np.concatenate([f[bnd[j]:bnd[j + 1]] for f in flat])
                check_equal(f"all_to_all[{algo.name}] rank {j}", res.outputs[j], ref)
    return res


"""Schedules of :func:`all_to_all_v`."""


def all_to_all_v(cluster: VirtualCluster | Topology, data: Sequence[np.ndarray] | None = None, *,
                 counts: np.ndarray, algorithm: str = "direct", ranks: Sequence[int] | None = None,
                 check: bool = True, trace: bool = False) -> RunResult:
    """All-to-all with variable counts: ``counts[i, j]`` items go from rank i to rank j
    (elements with ``data=``, bytes in a size-only run).  Rank i's buffer holds its
    outgoing segments in destination order; rank j receives them in source order.

    ``direct``: p-1 shift rounds; the hottest receiver decides each round.
    ``hierarchical`` (TwoLevel only, all devices in natural order): regroup by
    destination rail inside each node, then one aggregated message per node pair on
    each rail (see :func:`commbook.collectives.alltoall.alltoall_v_hierarchical`).
    Both deliver the same bytes to the same places.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> counts = np.array([[1, 2], [0, 3]])    # rank 0 keeps 1 item, sends 2 to rank 1; rank 1 keeps 3
    >>> r = all_to_all_v(Switch(2, NVLINK4), [np.array([1, 2, 3]), np.array([4, 5, 6])], counts=counts)
    >>> r.outputs
    [array([1]), array([2, 3, 4, 5, 6])]
    """
    cluster = as_cluster(cluster)
    algo = lookup("all_to_all_v", algorithm)
    hier = algo.scope == "topology"
    if hier and ranks is not None and not np.array_equal(np.asarray(ranks), np.arange(cluster.p)):
        raise ValueError("the hierarchical all_to_all_v runs on all devices in their natural order (ranks=None)")
    ranks = cluster.check_ranks(ranks)
    q = ranks.size
    C = np.asarray(counts)
    if C.dtype.kind not in "iuf":
        raise TypeError(f"counts must be numbers, got an array of dtype {C.dtype}")
    if C.shape != (q, q):
        raise ValueError(f"counts must have shape ({q}, {q}), got {C.shape}")
    if not np.all(np.isfinite(C)) or (C < 0).any():
        raise ValueError("counts must be finite and >= 0")
    algo.check(cluster.topology, q)
    if data is None:
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
        check_dtype(dtype)
        itemsize, bufs = dtype.itemsize, [None] * q
        for r, x in enumerate(data):
            x = np.asarray(x).ravel()
            if x.dtype != dtype:
                raise TypeError(f"rank {r} holds dtype {x.dtype}, rank 0 holds {dtype}")
            if x.size != C[r].sum():
                raise ValueError(f"rank {r} holds {x.size} items but counts[{r}] sums to {C[r].sum()}")
            bufs[r] = [x.copy(), np.zeros(int(C[:, r].sum()), dtype=dtype)]
    sdisp = np.cumsum(C, axis=1) - C
    schedule, tmp_len = algo.builder(cluster.topology, C) if hier else algo.builder(C)
    if bufs is not None:
        for r in range(q):
            bufs[r].append(np.zeros(int(tmp_len[r]), dtype=bufs[r][IN].dtype))
    res = cluster.run(schedule, ranks=ranks, buffers=bufs, itemsize=itemsize, trace=trace)
    res.collective, res.algorithm, res.p = "all_to_all_v", algo.name, q
    res.nbytes = float(C.sum() * itemsize)
    if bufs is not None:
        res.outputs = [b[OUT] for b in bufs]
        if check:
            flat = [np.asarray(x).ravel() for x in data]
            for j in range(q):
                ref = np.concatenate([flat[i][sdisp[i, j]:sdisp[i, j] + C[i, j]] for i in range(q)])
                check_equal(f"all_to_all_v[{algo.name}] rank {j}", res.outputs[j], ref)
    return res


def scatter(cluster: VirtualCluster | Topology, data: np.ndarray | None = None, *, nbytes: float | None = None,
            root: int = 0, ranks: Sequence[int] | None = None, check: bool = True,
            trace: bool = False) -> RunResult:
    """Scatter the root's array: rank r receives chunk r of it (one round; the root's port
    serializes (p-1)/p of the data).  ``data`` is the root's array only.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> r = scatter(Switch(4, NVLINK4), np.arange(8.0), root=0)
    >>> r.outputs[3], r.rounds
    (array([6., 7.]), 1)
    """
    cluster = as_cluster(cluster)
    q = cluster.check_ranks(ranks).size
    root = check_root(q, root)
    arr = None if data is None else np.asarray(data)
    inp = Inputs(cluster, None if arr is None else [arr] * q, nbytes, ranks)
    b = chunk_bounds(inp.n, q, inp.size_only)
    size = np.diff(b)
    if inp.bufs is not None:
        inp.bufs = [[arr.ravel().copy(), np.zeros(size[r], dtype=inp.dtype)] for r in range(q)]
    # the root's own chunk is a local copy, which is free
    schedule = [Round.make(root, np.arange(q), size, b[:-1], 0, sbuf=IN, dbuf=OUT, label="scatter")]
    res = inp.run(schedule, "sum", trace, "scatter", "flat")
    if inp.bufs is not None:
        res.outputs = [bb[OUT] for bb in inp.bufs]
        if check:
            for r in range(q):
                check_equal(f"scatter rank {r}", res.outputs[r], arr.ravel()[b[r]:b[r + 1]])
    return res


def gather(cluster: VirtualCluster | Topology, data: Sequence[np.ndarray] | None = None, *,
           nbytes: float | None = None, root: int = 0, ranks: Sequence[int] | None = None,
           check: bool = True, trace: bool = False) -> RunResult:
    """Gather every rank's array into the root, concatenated in rank order (one round;
    the root's receive port serializes).  With ``nbytes=`` the size is the gathered total.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> gather(Switch(3, NVLINK4), [np.full(2, r) for r in range(3)], root=1).outputs
    [None, array([0, 0, 1, 1, 2, 2]), None]
    """
    inp = Inputs(cluster, data, nbytes, ranks)
    q = inp.q
    root = check_root(q, root)
    total = inp.n if inp.size_only else inp.n * q
    b = chunk_bounds(total, q, inp.size_only)
    if inp.bufs is not None:
        for r in range(q):
            inp.bufs[r] = [inp.bufs[r][IN], np.zeros(total if r == root else 0, dtype=inp.dtype)]
    r_ = np.arange(q)
    schedule = [Round.make(r_, root, np.diff(b), 0, b[:-1], sbuf=IN, dbuf=OUT, label="gather")]
    res = inp.run(schedule, "sum", trace, "gather", "flat", nbytes=total * inp.itemsize)
    if inp.bufs is not None:
        res.outputs = [inp.bufs[r][OUT] if r == root else None for r in range(q)]
        if check:
            ref = np.concatenate([np.asarray(x).ravel() for x in data])
            check_equal("gather", res.outputs[root], ref)
    return res


def send_recv(cluster: VirtualCluster | Topology, data: np.ndarray | None = None, *, nbytes: float | None = None,
              src: int = 0, dst: int = 1, check: bool = True, trace: bool = False) -> RunResult:
    """Point to point: device ``src`` sends its array (or ``nbytes``) to device ``dst``.
    Ranks are device ids here; the time is the path's latency + n/β.

    The time is the path's latency plus n/β: 2 µs + 450 KB at 450 GB/s.

    >>> from commbook.hardware import NVLINK4
    >>> from commbook.topology import Switch
    >>> r = send_recv(Switch(8, NVLINK4), nbytes=450e3, src=0, dst=5)
    >>> round(r.time * 1e6, 9)
    3.0
    """
    cluster = as_cluster(cluster)
    topo = cluster.topology
    s, d = topo.check_device(src, "src"), topo.check_device(dst, "dst")
    ranks = np.array([s, d]) if s != d else np.array([s])
    arr = None if data is None else np.asarray(data)
    inp = Inputs(cluster, None if arr is None else [arr] * ranks.size, nbytes, ranks)
    if inp.bufs is not None:
        inp.bufs = [[arr.ravel().copy(), np.zeros(inp.n, dtype=inp.dtype)] for _ in range(ranks.size)]
    last = ranks.size - 1
    schedule = [Round.make(0, last, inp.n, 0, 0, sbuf=IN, dbuf=OUT, label="send")]
    res = inp.run(schedule, "sum", trace, "send_recv", "direct")
    if inp.bufs is not None:
        res.outputs = [inp.bufs[last][OUT].reshape(arr.shape)]
        if check:
            check_equal("send_recv", inp.bufs[last][OUT], arr.ravel())
    return res
