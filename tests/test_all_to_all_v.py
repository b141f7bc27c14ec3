"""all_to_all_v(..., algorithm="hierarchical") on a two-level cluster: the same bytes in
the same places as the direct exchange (checked against numpy), and its times against
closed forms of the timing model — it wins with many small chunks (α per round) and
loses with large ones once the nodes outnumber the NVLink/IB bandwidth ratio."""
import numpy as np
import pytest

from commbook import moe
from commbook.collectives import all_to_all, all_to_all_v
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4
from commbook.topology import Switch, TwoLevel


def _cluster(N, G):
    return VirtualCluster(TwoLevel(N, G, NVLINK4, IB_NDR))


def _reference(arrays, counts, j):
    """What rank j must hold: from every rank i, in source order, the segment i sends j."""
    start = np.cumsum(counts, axis=1) - counts
    return np.concatenate([arrays[i][start[i, j]:start[i, j] + counts[i, j]] for i in range(len(arrays))])


@pytest.mark.parametrize("N, G", [(2, 4), (3, 2), (4, 4), (1, 4), (4, 1), (2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_hierarchical_delivers_what_direct_delivers(N, G, dtype):
    rng = np.random.default_rng(N * 10 + G)
    q = N * G
    counts = rng.integers(0, 6, size=(q, q))
    counts[rng.random((q, q)) < 0.2] = 0                       # some empty pairs
    arrays = [rng.integers(-99, 99, size=int(counts[i].sum())).astype(dtype) for i in range(q)]
    c = _cluster(N, G)
    d = all_to_all_v(c, arrays, counts=counts, check=False)
    h = all_to_all_v(c, arrays, counts=counts, algorithm="hierarchical", check=False)
    for j in range(q):
        np.testing.assert_array_equal(h.outputs[j], _reference(arrays, counts, j), err_msg=f"rank {j}")
        np.testing.assert_array_equal(h.outputs[j], d.outputs[j])
    assert h.nbytes == d.nbytes == counts.sum() * np.dtype(dtype).itemsize
    # the bytes that leave each node over InfiniBand are the same in both schedules
    item = np.dtype(dtype).itemsize
    node = np.arange(q) // G
    cross = counts[node[:, None] != node[None, :]].sum() * item
    names = c.topology.resource_names
    for res in (d, h):
        nic_out = sum(b for n, b in zip(names, res.link_bytes) if n.endswith("nic.out"))
        assert nic_out == pytest.approx(cross)


def test_moe_routing_counts_run_through_both_schedules():
    cfg = moe.MoEConfig(tokens_per_rank=64, ranks=16, experts=32, top_k=2)
    counts = moe.route(cfg, moe.zipf_popularity(32, 1.0, seed=3), rng=4).counts()
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(int(counts[i].sum())) for i in range(16)]
    c = _cluster(4, 4)
    h = all_to_all_v(c, arrays, counts=counts, algorithm="hierarchical")   # check=True: numpy reference
    d = all_to_all_v(c, arrays, counts=counts)
    assert all(np.array_equal(a, b) for a, b in zip(h.outputs, d.outputs))


def _t_direct(N, G, c):
    """p−1 shift rounds; every round has a cross-node message: α_IB + c/β_IB each."""
    return (N * G - 1) * (IB_NDR.alpha + c / IB_NDR.beta)


def _t_hier(N, G, c):
    """G−1 NVLink rounds moving N chunks per rank, then N−1 IB rounds of G chunks."""
    return (G - 1) * (NVLINK4.alpha + N * c / NVLINK4.beta) + (N - 1) * (IB_NDR.alpha + G * c / IB_NDR.beta)


@pytest.mark.parametrize("N, G, c", [(8, 8, 1e3), (8, 8, 64e3), (16, 8, 2e3), (16, 8, 16e6)])
def test_size_only_times_equal_the_closed_forms(N, G, c):
    q = N * G
    counts = np.full((q, q), c)
    cl = _cluster(N, G)
    d = all_to_all_v(cl, counts=counts)
    h = all_to_all_v(cl, counts=counts, algorithm="hierarchical")
    assert d.time == pytest.approx(_t_direct(N, G, c), rel=1e-12)
    assert h.time == pytest.approx(_t_hier(N, G, c), rel=1e-12)
    # equal chunks: the same as the uniform all-to-all's hierarchical schedule
    assert h.time == pytest.approx(all_to_all(cl, nbytes=q * c, algorithm="hierarchical").time, rel=1e-12)


def test_hierarchical_wins_with_many_small_chunks():
    """8 × 8 GPUs, 1 KB per pair: the direct exchange pays 63 IB start-ups, the
    hierarchical one 7 NVLink + 7 IB."""
    N, G, c = 8, 8, 1e3
    h = all_to_all_v(_cluster(N, G), counts=np.full((64, 64), c), algorithm="hierarchical")
    d = all_to_all_v(_cluster(N, G), counts=np.full((64, 64), c))
    assert h.time < d.time
    assert d.time / h.time == pytest.approx(_t_direct(N, G, c) / _t_hier(N, G, c))
    assert d.time / h.time > 6
    assert d.rounds == 63 and h.rounds == 14


def _crossover(N, G):
    """Chunk size where the two closed forms are equal (both are linear in c)."""
    a0 = _t_direct(N, G, 0) - _t_hier(N, G, 0)
    slope = (_t_hier(N, G, 1) - _t_hier(N, G, 0)) - (_t_direct(N, G, 1) - _t_direct(N, G, 0))
    return a0 / slope


def test_hierarchical_loses_with_large_chunks_on_many_nodes():
    """The extra NVLink pass costs (G−1)·N·c/β_NV and saves (G−1)·c/β_IB: it loses for
    large chunks when N > β_NV/β_IB = 9 nodes (16 here)."""
    N, G = 16, 8
    assert N > NVLINK4.beta / IB_NDR.beta
    cstar = _crossover(N, G)
    assert cstar > 0
    for c, hier_wins in ((cstar / 4, True), (4 * cstar, False)):
        counts = np.full((N * G, N * G), c)
        h = all_to_all_v(_cluster(N, G), counts=counts, algorithm="hierarchical").time
        d = all_to_all_v(_cluster(N, G), counts=counts).time
        assert (h < d) == hier_wins, (c, h, d)
    # with fewer nodes than the bandwidth ratio the slope favours the hierarchical schedule
    assert _crossover(8, 8) < 0


def test_trace_keeps_buffers():
    counts = np.ones((4, 4), dtype=int)
    arrays = [np.arange(4.0) + 10 * i for i in range(4)]
    res = all_to_all_v(_cluster(2, 2), arrays, counts=counts, algorithm="hierarchical", trace=True)
    assert res.trace and all(s.state is not None for s in res.trace)
    np.testing.assert_array_equal(res.outputs[1], [1.0, 11.0, 21.0, 31.0])


def test_bad_input():
    c = _cluster(2, 2)
    with pytest.raises(ValueError, match="unknown all_to_all_v algorithm"):
        all_to_all_v(c, counts=np.ones((4, 4)), algorithm="ring")
    with pytest.raises(ValueError, match="TwoLevel"):
        all_to_all_v(VirtualCluster(Switch(4, NVLINK4)), counts=np.ones((4, 4)), algorithm="hierarchical")
    with pytest.raises(ValueError, match="natural order"):
        all_to_all_v(c, counts=np.ones((4, 4)), algorithm="hierarchical", ranks=[1, 0, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        all_to_all_v(c, counts=np.ones((3, 3)), algorithm="hierarchical")
