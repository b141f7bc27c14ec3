"""Every algorithm of every primitive, on real data, against numpy: p in {1,2,3,4,5,7,8,12,16},
sizes including 0 and sizes not divisible by p; exact for integers."""
import numpy as np
import pytest

from commbook.collectives import (ALGORITHMS, CheckError, all_gather, all_reduce, all_to_all, all_to_all_v,
                                  broadcast, gather, reduce, reduce_scatter, scatter, send_recv)
from commbook.comm_sim import VirtualCluster, chunk_bounds
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import Ring, Switch, Torus, TwoLevel, ring_order

PS = [1, 2, 3, 4, 5, 7, 8, 12, 16]
SIZES = [0, 1, 13, 64]  # 13 is not divisible by any p > 1 here


def ints(p, n, seed=0, dtype=np.int64):
    rng = np.random.default_rng(seed + 31 * p + n)
    return [rng.integers(-1000, 1000, n).astype(dtype) for _ in range(p)]


REF = {"sum": lambda s: s.sum(axis=0), "prod": lambda s: s.prod(axis=0),
       "min": lambda s: s.min(axis=0), "max": lambda s: s.max(axis=0)}


@pytest.mark.parametrize("p", PS)
def test_all_reduce_every_algorithm_exact(p):
    c = VirtualCluster(Switch(p, NVLINK4))
    for n in SIZES:
        x = ints(p, n)
        stack = np.stack(x)
        for algo, spec in ALGORITHMS["all_reduce"].items():
            if spec.scope == "topology":
                continue
            for op, f in REF.items():
                xs = [v % 3 + 1 for v in x] if op == "prod" else x  # keep products in range
                want = f(np.stack(xs))
                outs = all_reduce(c, xs, algorithm=algo, op=op, check=False).outputs
                for r, o in enumerate(outs):
                    assert np.array_equal(o, want), (algo, op, p, n, r)
        outs = all_reduce(c, x, algorithm="ring", op="avg", check=False).outputs
        s = stack.sum(axis=0)
        assert all(np.array_equal(o, np.sign(s) * (np.abs(s) // p)) for o in outs)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("p", [3, 8, 12])
def test_all_reduce_floats_close_to_numpy(dtype, p):
    c = VirtualCluster(Switch(p, NVLINK4))
    rng = np.random.default_rng(p)
    x = [rng.standard_normal(37).astype(dtype) for _ in range(p)]
    want = np.stack(x).astype(np.float64).sum(axis=0)
    tol = 4 * p * np.finfo(dtype).eps * np.abs(np.stack(x).astype(np.float64)).sum(axis=0)
    for algo in ("ring", "rd", "rabenseifner", "tree", "double_tree", "naive", "innet"):
        for o in all_reduce(c, x, algorithm=algo, check=False).outputs:
            assert o.dtype == np.dtype(dtype)
            assert np.all(np.abs(o.astype(np.float64) - want) <= tol), algo
        outs = all_reduce(c, x, algorithm=algo, op="avg", check=False).outputs
        assert np.allclose(outs[0].astype(np.float64), want / p, atol=float(tol.max()) / p + 1e-3)


@pytest.mark.parametrize("p", PS)
def test_rooted_and_gather_scatter_ops(p):
    c = VirtualCluster(Switch(p, ICI_V5E))
    for n in SIZES:
        x = ints(p, n, seed=1)
        root = p // 2
        for algo in ALGORITHMS["broadcast"]:
            outs = broadcast(c, x, algorithm=algo, root=root, chunks=3 if algo == "chain" else None,
                             check=False).outputs
            assert all(np.array_equal(o, x[root]) for o in outs), algo
        for algo in ALGORITHMS["reduce"]:
            outs = reduce(c, x, algorithm=algo, root=root, check=False).outputs
            assert np.array_equal(outs[root], np.stack(x).sum(axis=0))
            assert all(o is None for r, o in enumerate(outs) if r != root)
        cat = np.concatenate(x)
        assert np.array_equal(gather(c, x, root=root, check=False).outputs[root], cat)
        b = chunk_bounds(n, p, False)
        outs = scatter(c, x[root], root=root, check=False).outputs
        assert all(np.array_equal(outs[r], x[root][b[r]:b[r + 1]]) for r in range(p))


@pytest.mark.parametrize("p", PS)
def test_reduce_scatter_all_gather_all_to_all(p):
    c = VirtualCluster(Switch(p, NVLINK4))
    for n in SIZES:
        x = ints(p, n, seed=2)
        total = np.stack(x).sum(axis=0)
        b = chunk_bounds(n, p, False)
        algos_rs = ALGORITHMS["reduce_scatter"] if p & (p - 1) == 0 else ("ring",)
        for algo in algos_rs:
            outs = reduce_scatter(c, x, algorithm=algo, check=False).outputs
            assert all(np.array_equal(outs[r], total[b[r]:b[r + 1]]) for r in range(p)), algo
        algos_ag = ALGORITHMS["all_gather"] if p & (p - 1) == 0 else ("ring",)
        for algo in algos_ag:
            outs = all_gather(c, x, algorithm=algo, check=False).outputs
            assert all(np.array_equal(o, np.concatenate(x)) for o in outs), algo
        outs = all_to_all(c, x, check=False).outputs
        for j in range(p):
            assert np.array_equal(outs[j], np.concatenate([v[b[j]:b[j + 1]] for v in x]))


def test_multidimensional_arrays_keep_their_shape():
    c = VirtualCluster(Switch(4, NVLINK4))
    x = [np.full((3, 5), float(r)) for r in range(4)]
    assert all_reduce(c, x).outputs[0].shape == (3, 5)
    assert all_gather(c, x).outputs[0].shape == (12, 5)
    assert np.array_equal(all_gather(c, x).outputs[1], np.concatenate(x))


@pytest.mark.parametrize("nodes,g", [(1, 4), (2, 4), (3, 2), (4, 8)])
def test_two_level_algorithms(nodes, g):
    c = VirtualCluster(TwoLevel(nodes, g, NVLINK4, IB_NDR))
    p = nodes * g
    for n in (0, 7, 96):
        x = ints(p, n, seed=3)
        for inner in ("ring", "rd", "rabenseifner", "tree", "double_binomial", "naive", "one_shot", "two_shot"):
            outs = all_reduce(c, x, algorithm="hierarchical", inter_algorithm=inner, check=False).outputs
            assert all(np.array_equal(o, np.stack(x).sum(axis=0)) for o in outs)
        b = chunk_bounds(n, p, False)
        outs = all_to_all(c, x, algorithm="hierarchical", check=False).outputs
        for j in range(p):
            assert np.array_equal(outs[j], np.concatenate([v[b[j]:b[j + 1]] for v in x]))
        # in-network reduction on a two-level machine (NVLink SHARP / IB SHARP)
        assert np.array_equal(all_reduce(c, x, algorithm="innet").outputs[0], np.stack(x).sum(axis=0))


@pytest.mark.parametrize("dims", [(4, 4), (2, 3), (3, 2, 2), (5,)])
def test_torus_algorithms_and_mappings(dims):
    c = VirtualCluster(Torus(dims, ICI_V5E))
    p = int(np.prod(dims))
    for n in (0, 11, 60):
        x = ints(p, n, seed=4)
        want = np.stack(x).sum(axis=0)
        assert all(np.array_equal(o, want) for o in all_reduce(c, x, algorithm="torus", check=False).outputs)
        for kind, seed in (("snake", None), ("row_major", None), ("random", 7)):
            outs = all_reduce(c, x, ranks=ring_order(dims, kind, seed), check=False).outputs
            assert all(np.array_equal(o, want) for o in outs)


def test_all_to_all_v_and_send_recv():
    p = 5
    c = VirtualCluster(Ring(p, NVLINK4))
    rng = np.random.default_rng(9)
    C = rng.integers(0, 4, (p, p))
    x = [rng.integers(0, 99, C[i].sum()) for i in range(p)]
    outs = all_to_all_v(c, x, counts=C, check=False).outputs
    sd = np.cumsum(C, axis=1) - C
    for j in range(p):
        want = np.concatenate([x[i][sd[i, j]:sd[i, j] + C[i, j]] for i in range(p)])
        assert np.array_equal(outs[j], want)
    r = send_recv(c, np.arange(6.0), src=1, dst=3)
    assert np.array_equal(r.outputs[0], np.arange(6.0))
    assert r.time == pytest.approx(2 * NVLINK4.alpha + 48 / NVLINK4.beta)


def test_ring_order_snake_is_a_neighbour_cycle():
    t = Torus((4, 4), ICI_V5E)
    order = ring_order((4, 4), "snake")
    assert sorted(order.tolist()) == list(range(16))
    assert all(t.hops(int(a), int(b)) == 1 for a, b in zip(order, np.roll(order, -1)))
    row = ring_order((4, 4), "row_major")
    assert sum(t.hops(int(a), int(b)) == 2 for a, b in zip(row, np.roll(row, -1))) == 4


def test_the_built_in_check_catches_a_wrong_answer(monkeypatch):
    """Corrupt one payload operation: the default check must refuse the result."""
    from commbook import comm_sim
    c = VirtualCluster(Switch(4, NVLINK4))
    x = [np.arange(8.0) + r for r in range(4)]
    original = comm_sim.VirtualCluster._apply

    def corrupt(rnd, store, ufunc):
        original(rnd, store, ufunc)
        store.write(2, 0, 3, 4, np.ones(1, dtype=store.read(2, 0, 3, 4).dtype), np.add)

    monkeypatch.setattr(comm_sim.VirtualCluster, "_apply", staticmethod(corrupt))
    with pytest.raises(CheckError, match="numpy reference"):
        all_reduce(c, x)
    with pytest.raises(CheckError, match="numpy reference"):
        all_reduce(c, [v.astype(np.int64) for v in x])
    assert all_reduce(c, x, check=False).outputs[2][3] != all_reduce(c, x, check=False).outputs[0][3]
