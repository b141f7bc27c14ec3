"""Property-based tests of the virtual cluster and every collective algorithm.

Hypothesis draws the rank count, the size (0 and sizes not divisible by p included), the
dtype, the reduction operator, the algorithm and a seed; the test builds the per-rank
arrays from the seed and compares what the simulator returns (``check=False``: the
collective's own numpy check is switched off) with a reference computed here.

Tolerances
----------
Integers and ``min``/``max`` must match exactly (integer + and x wrap modulo 2**bits in
numpy, so they are associative: the order of the ranks cannot change the result).

Floating-point sums are computed by the simulator in the data's dtype, in an order that
depends on the algorithm (ring, tree, recursive doubling...).  With unit roundoff
u = eps/2, any order of p-1 additions has error at most (p-1)·u·Σ|x_i| (Higham, *Accuracy
and Stability of Numerical Algorithms*, §4.2, to first order); the reference is the
float64 sum of the same inputs (error negligible against the dtype's), and ``avg`` adds one
division (u·|result|).  We allow ``p·eps·Σ|x_i|``, i.e. twice that bound, plus the
smallest normal number for float16 underflow.  Products have no cancellation: the
relative error is at most (p-1)·u, and we allow ``p·eps·|ref|``.
"""
from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from commbook import collectives as C
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4
from commbook.topology import Ring, Switch, Torus, TwoLevel, ring_order

# COMMBOOK_HYPOTHESIS_SCALE=20 multiplies every example budget (a long bug hunt); the
# default keeps this file well under a minute on a 2-core machine.
_SCALE = float(os.environ.get("COMMBOOK_HYPOTHESIS_SCALE", "1"))


def budget(n: int) -> settings:
    return settings(max_examples=max(1, int(n * _SCALE)), deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


FAST = budget(150)
FEW = budget(60)
MANY = budget(250)

DTYPES = [np.float16, np.float32, np.float64, np.int32, np.int64]
OPS = ["sum", "prod", "min", "max", "avg"]

dtypes = st.sampled_from(DTYPES)
ops = st.sampled_from(OPS)
ps = st.integers(1, 16)
sizes = st.integers(0, 40)
seeds = st.integers(0, 2**32 - 1)


# ============================================================================ helpers
def make_data(p: int, shape, dtype, op: str, seed: int) -> list[np.ndarray]:
    """Per-rank arrays whose exact reduction stays in the dtype's range."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if op == "prod":
        if dt.kind == "i":
            vals = rng.integers(-3, 4, size=(p, *shape))
        else:  # |x| in [0.75, 1.5]: 1.5**16 < 660 and 0.75**16 > 0.01 stay normal in float16
            vals = rng.choice([-1.0, 1.0], size=(p, *shape)) * rng.uniform(0.75, 1.5, size=(p, *shape))
    else:
        if dt.kind == "i":
            vals = rng.integers(-1000, 1001, size=(p, *shape))
        else:
            vals = rng.uniform(-10, 10, size=(p, *shape))
    return [np.asarray(v).astype(dt) for v in vals]


def reference_reduce(stack: np.ndarray, op: str) -> np.ndarray:
    """Element-wise reduction over axis 0, written independently of the package."""
    dt = stack.dtype
    p = stack.shape[0]
    if dt.kind == "i":
        if op == "sum":
            return np.add.reduce(stack, axis=0, dtype=dt)
        if op == "prod":
            return np.multiply.reduce(stack, axis=0, dtype=dt)
        if op == "avg":  # NCCL's ncclAvg on integers: the sum divided by p, truncated toward 0
            s = np.add.reduce(stack, axis=0, dtype=np.int64).astype(np.float64)
            return np.trunc(s / p).astype(dt)
    else:
        wide = stack.astype(np.float64)
        if op == "sum":
            return wide.sum(axis=0)
        if op == "prod":
            return wide.prod(axis=0)
        if op == "avg":
            return wide.sum(axis=0) / p
    if op == "min":
        return stack.min(axis=0)
    if op == "max":
        return stack.max(axis=0)
    raise AssertionError(op)


def assert_reduced(got: np.ndarray, stack: np.ndarray, op: str, what: str = "") -> None:
    """Compare ``got`` with the reduction of ``stack`` (see the module docstring)."""
    ref = reference_reduce(stack, op)
    got = np.asarray(got)
    assert got.dtype == stack.dtype, f"{what}: dtype {got.dtype} != {stack.dtype}"
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != {ref.shape}"
    if stack.dtype.kind == "i" or op in ("min", "max"):
        np.testing.assert_array_equal(got, ref, err_msg=what)
        return
    p = stack.shape[0]
    eps = float(np.finfo(stack.dtype).eps)
    tiny = float(np.finfo(stack.dtype).tiny)
    mag = np.abs(stack.astype(np.float64))
    if op == "prod":
        tol = p * eps * np.abs(ref) + tiny
    else:
        tol = p * eps * mag.sum(axis=0) / (p if op == "avg" else 1) + eps * np.abs(ref) + tiny
    err = np.abs(got.astype(np.float64) - ref)
    bad = err > tol
    assert not bad.any(), (
        f"{what}: {int(bad.sum())} elements off; first at {np.flatnonzero(bad.ravel())[0]}: "
        f"got {got.ravel()[bad.ravel()][0]!r}, reference {ref.ravel()[bad.ravel()][0]!r}, "
        f"tolerance {tol.ravel()[bad.ravel()][0]!r}")


def bounds(n: int, p: int) -> list[int]:
    """The documented chunking: chunk r of n items is [n*r//p, n*(r+1)//p)."""
    return [n * r // p for r in range(p + 1)]


def is_pow2(p: int) -> bool:
    return p & (p - 1) == 0


def factor_pairs(p: int) -> list[tuple[int, int]]:
    return [(a, p // a) for a in range(1, p + 1) if p % a == 0]


@st.composite
def all_reduce_cases(draw):
    """(cluster, algorithm, extra kwargs) for every all-reduce algorithm."""
    algo = draw(st.sampled_from(C.names("all_reduce")))
    p = draw(ps)
    kwargs = {}
    if algo in ("hierarchical", "leader", "tiers"):
        nodes, g = draw(st.sampled_from(factor_pairs(p)))
        topo = TwoLevel(nodes, g, intra=NVLINK4, inter=IB_NDR)
        kwargs["inter_algorithm"] = draw(st.sampled_from(
            ["ring", "rd", "rabenseifner", "tree", "double_binomial", "naive", "one_shot", "two_shot",
             "parameter_server"]))
    elif algo in ("torus", "torus_rings"):
        a, b = draw(st.sampled_from(factor_pairs(p)))
        dims = draw(st.sampled_from([(a, b), (p,), (1, a, b)]))
        topo = Torus(dims, NVLINK4)
    elif algo == "innet":
        if draw(st.booleans()):
            topo = Switch(p, NVLINK4)
        else:
            nodes, g = draw(st.sampled_from(factor_pairs(p)))
            topo = TwoLevel(nodes, g, intra=NVLINK4, inter=IB_NDR)
    else:
        topo = draw(st.sampled_from([Switch(p, NVLINK4), Ring(p, NVLINK4)]))
        if algo == "parameter_server":
            kwargs["servers"] = draw(st.integers(1, p))
        elif algo == "rabenseifner":
            kwargs["order"] = draw(st.sampled_from(["far_first", "near_first"]))
    return VirtualCluster(topo), algo, kwargs


# ============================================================================ correctness
@FAST
@given(case=all_reduce_cases(), n=sizes, dtype=dtypes, op=ops, seed=seeds)
def test_all_reduce_matches_numpy(case, n, dtype, op, seed):
    cluster, algo, kwargs = case
    p = cluster.p
    data = make_data(p, (n,), dtype, op, seed)
    before = [x.copy() for x in data]
    res = C.all_reduce(cluster, data, algorithm=algo, op=op, check=False, **kwargs)
    stack = np.stack(data)
    assert len(res.outputs) == p
    for r, out in enumerate(res.outputs):
        assert_reduced(out, stack, op, f"all_reduce[{algo}] p={p} rank {r}")
    for x, y in zip(data, before):  # the caller's arrays are not modified
        np.testing.assert_array_equal(x, y)


@FEW
@given(p=ps, shape=st.sampled_from([(), (3, 2), (0, 4), (5, 1, 3)]), dtype=dtypes, op=ops,
       algo=st.sampled_from(["ring", "rd", "rabenseifner", "tree", "double_tree", "naive"]),
       seed=seeds)
def test_all_reduce_keeps_shape(p, shape, dtype, op, algo, seed):
    cluster = VirtualCluster(Switch(p, NVLINK4))
    data = make_data(p, shape, dtype, op, seed)
    res = C.all_reduce(cluster, data, algorithm=algo, op=op, check=False)
    stack = np.stack(data)
    for out in res.outputs:
        assert out.shape == shape
        assert_reduced(out, stack, op, f"all_reduce[{algo}] shape {shape}")


@FAST
@given(p=ps, n=sizes, dtype=dtypes, op=ops, algo=st.sampled_from(C.names("reduce")),
       data=st.data(), seed=seeds)
def test_reduce_matches_numpy(p, n, dtype, op, algo, data, seed):
    root = data.draw(st.integers(0, p - 1), label="root")
    cluster = VirtualCluster(Ring(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, op, seed)
    res = C.reduce(cluster, arrays, algorithm=algo, op=op, root=root, check=False)
    assert_reduced(res.outputs[root], np.stack(arrays), op, f"reduce[{algo}] root {root}")
    assert all(o is None for r, o in enumerate(res.outputs) if r != root)


@FAST
@given(p=ps, n=sizes, dtype=dtypes, op=ops, algo=st.sampled_from(C.names("reduce_scatter")),
       seed=seeds)
def test_reduce_scatter_matches_numpy(p, n, dtype, op, algo, seed):
    if algo == "rh":
        p = 1 << (p.bit_length() - 1)  # the largest power of two <= p
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, op, seed)
    res = C.reduce_scatter(cluster, arrays, algorithm=algo, op=op, check=False)
    stack = np.stack(arrays)
    b = bounds(n, p)
    for r in range(p):
        assert_reduced(res.outputs[r], stack[:, b[r]:b[r + 1]], op, f"reduce_scatter[{algo}] rank {r}")


@FAST
@given(p=ps, shape=st.sampled_from([(0,), (1,), (3,), (7,), (2, 3), ()]), dtype=dtypes,
       algo=st.sampled_from(C.names("all_gather")), seed=seeds)
def test_all_gather_matches_numpy(p, shape, dtype, algo, seed):
    if algo == "rd":
        p = 1 << (p.bit_length() - 1)
    cluster = VirtualCluster(Ring(p, NVLINK4))
    arrays = make_data(p, shape, dtype, "sum", seed)
    res = C.all_gather(cluster, arrays, algorithm=algo, check=False)
    ref = np.concatenate([np.atleast_1d(x) for x in arrays], axis=0)
    for r, out in enumerate(res.outputs):
        assert out.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(out, ref, err_msg=f"all_gather[{algo}] rank {r}")


@FAST
@given(p=ps, n=sizes, dtype=dtypes, algo=st.sampled_from(C.names("broadcast")),
       chunks=st.integers(1, 6), data=st.data(), seed=seeds)
def test_broadcast_matches_numpy(p, n, dtype, algo, chunks, data, seed):
    root = data.draw(st.integers(0, p - 1), label="root")
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, "sum", seed)
    res = C.broadcast(cluster, arrays, algorithm=algo, root=root, chunks=chunks if algo == "chain" else None, check=False)
    for r, out in enumerate(res.outputs):
        np.testing.assert_array_equal(out, arrays[root], err_msg=f"broadcast[{algo}] rank {r}")


@st.composite
def all_to_all_cases(draw):
    algo = draw(st.sampled_from(C.names("all_to_all")))
    p = draw(ps)
    if algo == "hierarchical":
        nodes, g = draw(st.sampled_from(factor_pairs(p)))
        return VirtualCluster(TwoLevel(nodes, g, intra=NVLINK4, inter=IB_NDR)), algo
    return VirtualCluster(draw(st.sampled_from([Switch(p, NVLINK4), Ring(p, NVLINK4)]))), algo


@FAST
@given(case=all_to_all_cases(), n=sizes, dtype=dtypes, seed=seeds)
def test_all_to_all_matches_numpy(case, n, dtype, seed):
    cluster, algo = case
    p = cluster.p
    arrays = make_data(p, (n,), dtype, "sum", seed)
    res = C.all_to_all(cluster, arrays, algorithm=algo, check=False)
    b = bounds(n, p)
    for j in range(p):
        ref = np.concatenate([arrays[i][b[j]:b[j + 1]] for i in range(p)])
        np.testing.assert_array_equal(res.outputs[j], ref, err_msg=f"all_to_all[{algo}] rank {j}")


@FAST
@given(p=ps, dtype=dtypes, max_count=st.integers(0, 6), seed=seeds,
       topo=st.sampled_from(["switch", "ring"]))
def test_all_to_all_v_matches_numpy(p, dtype, max_count, seed, topo):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, max_count + 1, size=(p, p))
    cluster = VirtualCluster(Switch(p, NVLINK4) if topo == "switch" else Ring(p, NVLINK4))
    arrays = [make_data(1, (int(counts[i].sum()),), dtype, "sum", seed + i)[0] for i in range(p)]
    res = C.all_to_all_v(cluster, arrays, counts=counts, check=False)
    # the segment rank i sends to rank j starts after everything it sends to ranks < j
    for j in range(p):
        parts = [arrays[i][counts[i, :j].sum():counts[i, :j + 1].sum()] for i in range(p)]
        np.testing.assert_array_equal(res.outputs[j], np.concatenate(parts), err_msg=f"rank {j}")
        assert res.outputs[j].size == counts[:, j].sum()
    # bytes: what each rank sends to others / receives from others
    item = np.dtype(dtype).itemsize
    off = counts * (1 - np.eye(p, dtype=counts.dtype))
    np.testing.assert_allclose(res.bytes_sent, off.sum(axis=1) * item)
    np.testing.assert_allclose(res.bytes_received, off.sum(axis=0) * item)


@FAST
@given(p=ps, n=sizes, dtype=dtypes, data=st.data(), seed=seeds)
def test_scatter_gather_send_recv_match_numpy(p, n, dtype, data, seed):
    root = data.draw(st.integers(0, p - 1), label="root")
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, "sum", seed)
    whole = arrays[root]
    sc = C.scatter(cluster, whole, root=root, check=False)
    b = bounds(n, p)
    for r in range(p):
        np.testing.assert_array_equal(sc.outputs[r], whole[b[r]:b[r + 1]])
    ga = C.gather(cluster, arrays, root=root, check=False)
    np.testing.assert_array_equal(ga.outputs[root], np.concatenate(arrays))
    assert all(o is None for r, o in enumerate(ga.outputs) if r != root)
    dst = data.draw(st.integers(0, p - 1), label="dst")
    sr = C.send_recv(cluster, whole, src=root, dst=dst, check=False)
    np.testing.assert_array_equal(sr.outputs[0], whole)


@FAST
@given(p=st.integers(2, 16), n=sizes, dtype=dtypes, op=ops, seed=seeds, data=st.data())
def test_subset_of_devices_in_any_order(p, n, dtype, op, seed, data):
    """ranks= maps logical ranks to any distinct devices; results depend only on ranks."""
    q = data.draw(st.integers(1, p), label="q")
    perm = np.random.default_rng(seed).permutation(p)[:q]
    algo = data.draw(st.sampled_from(["ring", "rd", "rabenseifner", "tree", "double_tree", "naive",
                                      "innet"]), label="algo")
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(q, (n,), dtype, op, seed)
    mapped = C.all_reduce(cluster, arrays, algorithm=algo, op=op, ranks=perm, check=False)
    plain = C.all_reduce(VirtualCluster(Switch(q, NVLINK4)), arrays, algorithm=algo, op=op, check=False)
    for a, b in zip(mapped.outputs, plain.outputs):
        np.testing.assert_array_equal(a, b)
    assert mapped.time == pytest.approx(plain.time, rel=1e-12)  # a switch has no distances


# ============================================================================ identities
@FAST
@given(p=ps, k=st.integers(0, 4), dtype=dtypes, op=ops, seed=seeds)
def test_all_reduce_is_reduce_scatter_then_all_gather(p, k, dtype, op, seed):
    n = k * p
    cluster = VirtualCluster(Ring(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, op, seed)
    ar = C.all_reduce(cluster, arrays, algorithm="ring", op=op, check=False)
    rs = C.reduce_scatter(cluster, arrays, algorithm="ring", op=op, check=False)
    ag = C.all_gather(cluster, rs.outputs, algorithm="ring", check=False)
    for a, b in zip(ar.outputs, ag.outputs):
        np.testing.assert_array_equal(a, b)
    assert ar.time == pytest.approx(rs.time + ag.time, rel=1e-12)


@FAST
@given(case=all_to_all_cases(), k=st.integers(0, 4), dtype=dtypes, seed=seeds)
def test_all_to_all_twice_is_identity(case, k, dtype, seed):
    cluster, algo = case
    p = cluster.p
    arrays = make_data(p, (k * p,), dtype, "sum", seed)
    once = C.all_to_all(cluster, arrays, algorithm=algo, check=False)
    twice = C.all_to_all(cluster, once.outputs, algorithm=algo, check=False)
    for x, y in zip(arrays, twice.outputs):
        np.testing.assert_array_equal(x, y)


@FAST
@given(p=ps, n=sizes, dtype=dtypes, data=st.data(), seed=seeds)
def test_broadcast_algorithms_agree(p, n, dtype, data, seed):
    root = data.draw(st.integers(0, p - 1), label="root")
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, "sum", seed)
    sag = C.broadcast(cluster, arrays, algorithm="scatter_allgather", root=root, check=False)
    bin_ = C.broadcast(cluster, arrays, algorithm="binomial", root=root, check=False)
    for a, b in zip(sag.outputs, bin_.outputs):
        np.testing.assert_array_equal(a, b)


@FEW
@given(dims=st.sampled_from([(2, 2), (2, 3), (3, 3), (4, 4), (2, 2, 2), (8,), (2, 4)]),
       n=sizes, dtype=dtypes, op=ops, seed=seeds,
       algo=st.sampled_from(["ring", "rd", "rabenseifner", "tree", "double_tree", "naive"]))
def test_random_ring_mapping_on_torus_same_outputs(dims, n, dtype, op, seed, algo):
    cluster = VirtualCluster(Torus(dims, NVLINK4))
    p = cluster.p
    arrays = make_data(p, (n,), dtype, op, seed)
    ident = C.all_reduce(cluster, arrays, algorithm=algo, op=op, check=False)
    for kind in ("random", "snake"):
        order = ring_order(dims, kind, seed=seed)
        assert sorted(order.tolist()) == list(range(p))
        mapped = C.all_reduce(cluster, arrays, algorithm=algo, op=op, ranks=order, check=False)
        for a, b in zip(ident.outputs, mapped.outputs):
            np.testing.assert_array_equal(a, b)
        # the mapping moves the same bytes per logical rank, only over other links
        np.testing.assert_allclose(mapped.bytes_sent, ident.bytes_sent)
    assert_reduced(ident.outputs[0], np.stack(arrays), op, f"torus {dims} {algo}")


@FEW
@given(seed=seeds, dims=st.sampled_from([(4,), (2, 3), (4, 4), (2, 2, 2)]))
def test_ring_order_is_a_repeatable_permutation(seed, dims):
    p = math.prod(dims)
    for kind in ("identity", "row_major", "snake", "random"):
        o = ring_order(dims, kind, seed=seed)
        assert sorted(o.tolist()) == list(range(p))
    np.testing.assert_array_equal(ring_order(dims, "random", seed=seed), ring_order(dims, "random", seed=seed))
    # snake: consecutive ranks are torus neighbours (one hop)
    topo = Torus(dims, NVLINK4)
    snake = ring_order(dims, "snake")
    assert all(topo.hops(int(a), int(b)) == 1 for a, b in zip(snake[:-1], snake[1:]))


# ============================================================================ timing and bytes
@st.composite
def timed_cases(draw):
    """(name, cluster, kwargs, p) over every collective and algorithm."""
    name = draw(st.sampled_from(["all_reduce", "broadcast", "reduce", "reduce_scatter", "all_gather",
                                 "all_to_all", "scatter", "gather", "send_recv"]))
    p = draw(ps)
    kwargs = {}
    topo = draw(st.sampled_from([
        Switch(p, NVLINK4), Ring(p, NVLINK4), Ring(p, NVLINK4, bidirectional=False),
        Ring(p, IB_NDR, hop_alpha=2.0), TwoLevel(1, p, intra=NVLINK4, inter=IB_NDR),
        TwoLevel(p, 1, intra=NVLINK4, inter=IB_NDR)]))
    if name in C.ALGORITHMS:
        algo = draw(st.sampled_from(C.names(name)))
        kwargs["algorithm"] = algo
        if algo in ("hierarchical", "innet", "leader", "tiers"):
            nodes, g = draw(st.sampled_from(factor_pairs(p)))
            topo = TwoLevel(nodes, g, intra=NVLINK4, inter=IB_NDR)
        elif algo in ("torus", "torus_rings"):
            a, b = draw(st.sampled_from(factor_pairs(p)))
            topo = Torus((a, b), NVLINK4)
        elif algo in ("rh", "rd") and name != "all_reduce":
            p = 1 << (p.bit_length() - 1)
            topo = Switch(p, NVLINK4)
        elif algo in ("chain", "double_tree"):
            kwargs["chunks"] = draw(st.integers(1, 5))
        elif algo == "parameter_server":        # K divides p, so every shard is whole
            kwargs["servers"] = draw(st.sampled_from([k for k in range(1, p + 1) if p % k == 0]))
        elif algo == "rabenseifner":
            kwargs["order"] = draw(st.sampled_from(["far_first", "near_first"]))
    if name in ("broadcast", "reduce", "scatter", "gather"):
        kwargs["root"] = draw(st.integers(0, topo.p - 1))
    if name == "send_recv":
        kwargs["src"] = draw(st.integers(0, topo.p - 1))
        kwargs["dst"] = draw(st.integers(0, topo.p - 1))
    return name, VirtualCluster(topo), kwargs


def _call(name, cluster, kwargs, data=None, nbytes=None):
    fn = getattr(C, name)
    if name in ("scatter", "send_recv") and data is not None:
        data = data[kwargs.get("root", kwargs.get("src", 0))]
    if data is not None:
        kwargs = dict(kwargs, check=False)
    return fn(cluster, data, nbytes=nbytes, **kwargs)


@MANY
@given(case=timed_cases(), m=st.integers(0, 2), dtype=dtypes, seed=seeds)
def test_size_only_time_equals_real_data_time(case, m, dtype, seed):
    """With an element count every split divides, a size-only run of the same bytes
    takes exactly the time of the real-data run, round by round, byte by byte."""
    name, cluster, kwargs = case
    p = cluster.p
    n = m * math.lcm(p, 16, kwargs.get("chunks", 1))  # per rank
    arrays = make_data(p, (n,), dtype, "sum", seed)
    item = np.dtype(dtype).itemsize
    real = _call(name, cluster, kwargs, data=arrays)
    # all_gather and gather take the gathered total as their size; send_recv one array
    nbytes = n * item * (p if name in ("all_gather", "gather") else 1)
    size = _call(name, cluster, kwargs, nbytes=nbytes)
    assert size.outputs is None
    assert real.time == pytest.approx(size.time, rel=1e-12, abs=1e-18)
    np.testing.assert_allclose(real.round_times, size.round_times, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(real.bytes_sent, size.bytes_sent, rtol=1e-12)
    np.testing.assert_allclose(real.bytes_received, size.bytes_received, rtol=1e-12)
    np.testing.assert_allclose(real.link_bytes, size.link_bytes, rtol=1e-12)


@MANY
@given(case=timed_cases(), nbytes=st.one_of(st.just(0), st.integers(1, 10**9), st.floats(0, 1e9)))
def test_bytes_conserved_and_time_consistent(case, nbytes):
    name, cluster, kwargs = case
    res = _call(name, cluster, kwargs, nbytes=nbytes)
    sent, recv = float(res.bytes_sent.sum()), float(res.bytes_received.sum())
    assert sent == pytest.approx(recv, rel=1e-12, abs=1e-9)
    assert np.all(res.bytes_sent >= 0) and np.all(res.bytes_received >= 0)
    assert res.time == pytest.approx(float(res.round_times.sum()), rel=1e-12)
    assert np.all(res.round_times >= 0) and math.isfinite(res.time)
    if cluster.p == 1 or nbytes == 0 and name != "all_reduce":
        return
    # more bytes never take less time (every round is α + load/β, monotone in the size)
    bigger = _call(name, cluster, kwargs, nbytes=2 * nbytes + 1)
    assert bigger.time >= res.time * (1 - 1e-12)


@FEW
@given(p=ps, n=sizes, dtype=dtypes, seed=seeds)
def test_real_data_bytes_conserved(p, n, dtype, seed):
    cluster = VirtualCluster(Ring(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, "sum", seed)
    item = np.dtype(dtype).itemsize
    for algo in ("ring", "rd", "rabenseifner", "tree", "double_tree", "naive"):
        res = C.all_reduce(cluster, arrays, algorithm=algo, check=False)
        assert res.bytes_sent.sum() == pytest.approx(res.bytes_received.sum())
        assert np.all(np.asarray(res.bytes_sent) % item == 0)
        if algo == "ring" and p > 1:
            # every rank sends 2(p-1) chunks: exactly 2(p-1)/p of the buffer when p | n
            if n % p == 0:
                np.testing.assert_allclose(res.bytes_sent, 2 * (p - 1) * n // p * item)


@FEW
@given(p=ps, m=st.integers(1, 3), dtype=dtypes, seed=seeds)
def test_builtin_check_agrees(p, m, dtype, seed):
    """With check=True the collective's own reference accepts what we accept."""
    cluster = VirtualCluster(Switch(p, NVLINK4))
    for op in OPS:
        arrays = make_data(p, (m * p + 1,), dtype, op, seed)
        for algo in ("ring", "rd", "rabenseifner", "tree", "double_tree", "naive", "innet"):
            res = C.all_reduce(cluster, arrays, algorithm=algo, op=op, check=True)
            assert_reduced(res.outputs[0], np.stack(arrays), op, f"{algo} {op}")


@FEW
@given(p=ps, dtype=dtypes, max_count=st.integers(0, 6), seed=seeds,
       topo=st.sampled_from(["switch", "ring", "twolevel"]))
def test_all_to_all_v_size_only_time_equals_real_data_time(p, dtype, max_count, seed, topo):
    counts = np.random.default_rng(seed).integers(0, max_count + 1, size=(p, p))
    if topo == "twolevel":
        nodes, g = factor_pairs(p)[seed % len(factor_pairs(p))]
        cluster = VirtualCluster(TwoLevel(nodes, g, intra=NVLINK4, inter=IB_NDR))
    else:
        cluster = VirtualCluster(Switch(p, NVLINK4) if topo == "switch" else Ring(p, NVLINK4))
    arrays = [np.zeros(int(counts[i].sum()), dtype) for i in range(p)]
    real = C.all_to_all_v(cluster, arrays, counts=counts, check=False)
    size = C.all_to_all_v(cluster, counts=counts * np.dtype(dtype).itemsize)
    assert real.time == pytest.approx(size.time, rel=1e-12, abs=1e-18)
    np.testing.assert_allclose(real.bytes_received, size.bytes_received)


@FEW
@given(p=ps, n=sizes, dtype=dtypes, op=st.sampled_from(["sum", "prod", "min", "max"]),
       algo=st.sampled_from(["ring", "rd", "rabenseifner", "tree", "double_tree", "naive", "innet"]),
       seed=seeds)
def test_trace_ends_in_the_outputs(p, n, dtype, op, algo, seed):
    """trace=True keeps every rank's buffers after every round; the last state is the result,
    and the trace has one step per round."""
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = make_data(p, (n,), dtype, op, seed)
    res = C.all_reduce(cluster, arrays, algorithm=algo, op=op, trace=True, check=False)
    assert len(res.trace) == len(res.round_times)
    assert [s.time for s in res.trace] == pytest.approx(list(res.round_times))
    if res.trace:
        for r in range(p):
            np.testing.assert_array_equal(res.trace[-1].state[r][0], res.outputs[r])


@FAST
@given(case=all_reduce_cases(), n=sizes, dtype=dtypes, op=ops, seed=seeds)
def test_all_reduce_outputs_identical_on_every_rank(case, n, dtype, op, seed):
    """Every schedule ends with bit-identical buffers on all ranks (as NCCL promises):
    pairwise exchanges combine a+b and b+a, which IEEE arithmetic makes equal, and the
    gather phases copy."""
    cluster, algo, kwargs = case
    arrays = make_data(cluster.p, (n,), dtype, op, seed)
    res = C.all_reduce(cluster, arrays, algorithm=algo, op=op, check=False, **kwargs)
    for r, out in enumerate(res.outputs):
        assert out.tobytes() == res.outputs[0].tobytes(), f"{algo}: rank {r} differs from rank 0"


# ============================================================================ NaN and ±inf (issue 17 §3)
_SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5])


def _odd_data(p: int, n: int, dtype, seed: int) -> list[np.ndarray]:
    """Per-rank float arrays in which NaN, +inf and -inf sit at random positions."""
    rng = np.random.default_rng(seed)
    vals = rng.uniform(-10, 10, size=(p, n))
    mask = rng.random((p, n)) < 0.3
    vals[mask] = rng.choice(_SPECIAL, size=int(mask.sum()))
    return [v.astype(dtype) for v in vals]


_REDUCING = {"all_reduce": ("ring", "rd", "rabenseifner", "tree", "double_tree", "naive", "innet"),
             "reduce_scatter": ("ring", "direct"), "reduce": ("binomial", "flat")}
_MOVING = {"broadcast": ("binomial", "flat", "chain", "scatter_allgather"), "all_gather": ("ring", "rd", "direct"),
           "all_to_all": ("direct",)}


@FEW
@given(p=st.integers(1, 9), n=st.integers(1, 20), dtype=st.sampled_from([np.float16, np.float32, np.float64]),
       op=ops, seed=seeds)
def test_builtin_check_accepts_nan_and_inf(p, n, dtype, op, seed):
    """With the default check=True, data holding NaN and ±inf passes wherever the collective
    computed what IEEE arithmetic gives (before issue 17, broadcast, all_gather and
    all_reduce(op='max') raised AssertionError 'element 0 is nan, numpy reference nan')."""
    cluster = VirtualCluster(Switch(p, NVLINK4))
    arrays = _odd_data(p, n * p, dtype, seed)
    runs = lambda coll, algo: algo in C.names(coll) and not (algo == "rd" and p & (p - 1))
    for coll, algos in _REDUCING.items():
        for algo in algos:
            if runs(coll, algo):
                getattr(C, coll)(cluster, arrays, algorithm=algo, op=op)   # check=True by default
    for coll, algos in _MOVING.items():
        for algo in algos:
            if runs(coll, algo):
                res = getattr(C, coll)(cluster, arrays, algorithm=algo)
                if coll == "broadcast":
                    np.testing.assert_array_equal(res.outputs[-1], arrays[0])    # NaN = NaN here
    C.scatter(cluster, arrays[0])
    C.gather(cluster, arrays)
    if p > 1:
        C.send_recv(cluster, arrays[0])


@pytest.mark.parametrize("call", [
    lambda c, d: C.broadcast(c, d), lambda c, d: C.all_gather(c, d), lambda c, d: C.all_reduce(c, d, op="max"),
    lambda c, d: C.all_reduce(c, d, op="min"), lambda c, d: C.all_reduce(c, d), lambda c, d: C.reduce(c, d, op="max"),
    lambda c, d: C.reduce_scatter(c, d, op="max"), lambda c, d: C.all_to_all(c, d), lambda c, d: C.gather(c, d),
    lambda c, d: C.scatter(c, d[0]), lambda c, d: C.send_recv(c, d[0]),
])
def test_nan_in_the_data_is_not_a_check_failure(call):
    """The issue's cases, one by one: NaN, inf and -inf in every rank's buffer."""
    c = VirtualCluster(Switch(4, NVLINK4))
    data = [np.array([np.nan, 1.0, np.inf, -np.inf]) + r for r in range(4)]
    res = call(c, data)
    assert any(o is not None and np.isnan(o).any() for o in res.outputs)


def test_a_check_failure_is_a_check_error_not_an_assertion():
    """A wrong NaN (or a NaN where the reference has a number) is still caught, as
    CheckError (a ValueError of the package's own), never AssertionError."""
    from commbook.collectives.reference import Reference, check_equal
    good = np.array([np.nan, 1.0, np.inf])
    check_equal("x", good, good.copy())
    for bad in (np.array([1.0, np.nan, np.inf]), np.array([np.nan, 1.0, -np.inf]), np.array([np.nan, 2.0, np.inf])):
        with pytest.raises(C.CheckError, match=r"x: element \d is .*numpy reference") as info:
            check_equal("x", bad, good)
        assert not isinstance(info.value, AssertionError) and isinstance(info.value, ValueError)
    with pytest.raises(C.CheckError, match="output shape"):
        check_equal("x", good[:2], good)
    ref = Reference([np.array([1.0, 2.0]), np.array([3.0, np.nan])], "sum")
    ref.check("y", np.array([4.0, np.nan]))
    with pytest.raises(C.CheckError, match="element 0"):
        ref.check("y", np.array([np.nan, np.nan]))
    with pytest.raises(C.CheckError, match="element 1"):
        Reference([np.array([1.0, 2.0]), np.array([3.0, 4.0])], "max").check("z", np.array([3.0, np.nan]))
