"""Channels: several rings (or trees) at once, each over a part of the buffer, as NCCL runs
them.  The simulator against closed forms derived here by hand, the channels' layout
closed form (commbook.collectives.channels.ring_time_two_level), numpy on real data, and
the NIC and rail bookkeeping."""
from __future__ import annotations

import numpy as np
import pytest

from commbook import collectives as C
from commbook.collectives.channels import ring_time_two_level
from commbook.collectives.registry import predict
from commbook.comm_sim import VirtualCluster
from commbook.hardware import Link
from commbook.topology import Switch, ThreeTier, TwoLevel

NV = Link("NVLink", 1.0e-6, 450e9, "test")
IB = Link("IB", 5.0e-6, 50e9, "test")
REL = 1e-9


def ring(p, n, alpha, beta):
    """The single ring's closed form, written out: 2(p-1) rounds of α + n/(pβ)."""
    return 2 * (p - 1) * (alpha + n / (p * beta))


@pytest.mark.parametrize("p", [8, 16, 64, 256])
@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("algorithm", ["ring", "tree", "double_tree"])
def test_channels_on_a_switch_share_the_ports(p, k, algorithm):
    """On one link class k channels of n/k cost what one of n costs: the same ports carry
    all of them.  Simulator = the registry's closed form = (ring) the hand-written form."""
    c = VirtualCluster(Switch(p, NV))
    n = 3e8
    extra = {"chunks": 4} if algorithm == "double_tree" else {}
    sim = C.all_reduce(c, nbytes=n, algorithm=algorithm, channels=k, **extra).time
    one = C.all_reduce(c, nbytes=n, algorithm=algorithm, channels=1, **extra).time
    assert sim == pytest.approx(predict("all_reduce", algorithm, p, n, NV.alpha, NV.beta, channels=k, **extra),
                                rel=REL)
    assert sim == pytest.approx(one, rel=REL)
    if algorithm == "ring":
        assert sim == pytest.approx(ring(p, n, NV.alpha, NV.beta), rel=REL)


@pytest.mark.parametrize("p", [8, 16, 64, 256])
@pytest.mark.parametrize("k", [1, 2, 4, 8])
@pytest.mark.parametrize("pxn", [False, True])
def test_multi_channel_ring_on_two_level_equals_its_closed_form(p, k, pxn):
    """Simulator = the channels' layout closed form on 8-GPU nodes with a NIC per GPU, for
    1 to 32 nodes and 1 to 8 channels, with and without PXN."""
    topo = TwoLevel(max(p // 8, 1), min(p, 8), NV, IB, pxn=pxn)
    sim = C.all_reduce(VirtualCluster(topo), nbytes=1e9, channels=k).time
    assert sim == pytest.approx(ring_time_two_level(topo, 1e9, k), rel=REL)


@pytest.mark.parametrize("nodes, gpn", [(2, 8), (8, 8), (32, 8), (4, 4)])
def test_one_channel_per_nic_by_hand(nodes, gpn):
    """With PXN and one channel per NIC every NIC carries 1/G of each step's chunk and every
    NVLink port the whole chunk: 2(p-1)(α_IB + max(n/(pβ_NV), n/(Gpβ_IB))).  One channel is
    the textbook ring through one NIC per node: 2(p-1)(α_IB + n/(pβ_IB))."""
    p, n = nodes * gpn, 1e9
    topo = TwoLevel(nodes, gpn, NV, IB, pxn=True)
    nccl = C.all_reduce(VirtualCluster(topo), nbytes=n)                  # the default: NCCL's
    per_step = max(n / (p * NV.beta), n / (gpn * p * IB.beta))
    assert nccl.time == pytest.approx(2 * (p - 1) * (IB.alpha + per_step), rel=REL)
    single = C.all_reduce(VirtualCluster(topo), nbytes=n, channels=1)
    assert single.time == pytest.approx(ring(p, n, IB.alpha, IB.beta), rel=REL)


def test_napkin_1_6_against_the_ring_nccl_runs():
    """8 nodes × 8 GPUs, 1 GB, 450 GB/s NVLink, 50 GB/s per NIC, bandwidth terms only:
    NCCL's ring (a channel per NIC) takes 2·63/64 · 1 GB / (8 · 50 GB/s) ≈ 4.9 ms, the
    three-phase hierarchy 2·7/8 · 1 GB/450 GB/s + 2·7/8 · 125 MB/50 GB/s ≈ 8.3 ms."""
    nv, ib = Link("NVLink", 0.0, 450e9, "t"), Link("IB", 0.0, 50e9, "t")
    c = VirtualCluster(TwoLevel(8, 8, nv, ib, pxn=True))
    flat = C.all_reduce(c, nbytes=1e9).time
    hier = C.all_reduce(c, nbytes=1e9, algorithm="hierarchical").time
    assert flat == pytest.approx(2 * 63 / 64 * 1e9 / (8 * 50e9), rel=REL)
    assert flat == pytest.approx(4.92e-3, rel=1e-3)
    assert hier == pytest.approx(2 * 7 / 8 * 1e9 / 450e9 + 2 * 7 / 8 * 125e6 / 50e9, rel=REL)
    assert C.all_reduce(c, nbytes=1e9, channels=1).time / hier == pytest.approx(4.77, abs=0.01)


def test_channels_spread_the_bytes_over_every_nic():
    """A channel per NIC: every NIC sends and receives the same bytes, 2(p-1) · n/(Gp); one
    channel sends everything through one NIC per node."""
    N, G, n = 4, 8, 8e8
    p = N * G
    for pxn in (False, True):
        r = C.all_reduce(VirtualCluster(TwoLevel(N, G, NV, IB, pxn=pxn)), nbytes=n)
        out = np.array([b for name, b in zip(r.link_names, r.link_bytes) if name.endswith("nic.out")])
        assert out.size == p and np.allclose(out, 2 * (p - 1) * n / (G * p), rtol=REL)
    r = C.all_reduce(VirtualCluster(TwoLevel(N, G, NV, IB)), nbytes=n, channels=1)
    out = np.array([b for name, b in zip(r.link_names, r.link_bytes) if name.endswith("nic.out")])
    assert np.count_nonzero(out) == N and out.max() == pytest.approx(2 * (p - 1) * n / p, rel=REL)


def test_pxn_keeps_the_ring_on_its_rails():
    """With PXN a channel's hop between nodes leaves through the NIC of the receiver's rail
    (relayed over NVLink): no byte crosses the spine; without it every hop changes rail."""
    for pxn, spine in ((True, 0.0), (False, 1.0)):
        r = C.all_reduce(VirtualCluster(TwoLevel(4, 8, NV, IB, pxn=pxn)), nbytes=1e8)
        up = sum(b for name, b in zip(r.link_names, r.link_bytes) if name.startswith("leaf") and name.endswith(".up"))
        assert (up > 0) == bool(spine)
    t = TwoLevel(2, 8, NV, IB, pxn=True)
    assert t.route(7, 8) == [7, "nvswitch0", 0, "leaf0", 8]
    assert t.route(0, 8) == [0, "leaf0", 8]
    assert TwoLevel(2, 8, NV, IB).route(7, 8) == [7, "leaf7", "spine", "leaf0", 8]


def test_three_tier_ring_channels_closed_form():
    """Racks joined by a 2:1 spine: the rack-crossing hops of every channel share the spine."""
    for pxn in (False, True):
        topo = ThreeTier(4, 4, 8, NV, IB, rack_oversubscription=2.0, pxn=pxn)
        for k in (1, 8, 16):
            sim = C.all_reduce(VirtualCluster(topo), nbytes=1e9, channels=k).time
            assert sim == pytest.approx(ring_time_two_level(topo, 1e9, k), rel=REL)


@pytest.mark.parametrize("k", [1, 2, 3, 8])
@pytest.mark.parametrize("algorithm", ["ring", "tree", "double_tree"])
def test_real_data_equals_numpy_for_every_channel_count(k, algorithm):
    """Real buffers (an element count no channel count divides) reduce to numpy's sum."""
    rng = np.random.default_rng(k)
    for topo in (Switch(6, NV), TwoLevel(3, 4, NV, IB, pxn=True), TwoLevel(2, 4, NV, IB, nics_per_node=2)):
        data = [rng.integers(-1000, 1000, size=1001).astype(np.int64) for _ in range(topo.p)]
        extra = {"chunks": 3} if algorithm == "double_tree" else {}
        res = C.all_reduce(VirtualCluster(topo), data, algorithm=algorithm, channels=k, check=False, **extra)
        want = np.sum(data, axis=0)
        for out in res.outputs:
            np.testing.assert_array_equal(out, want)


def test_default_channels():
    """The ring's default is NCCL's: a channel per NIC across nodes, one on a node or a
    custom rank order; trees default to one."""
    assert TwoLevel(4, 8, NV, IB).ring_channels(np.arange(32)) == 8
    assert TwoLevel(4, 8, NV, IB, nics_per_node=2).ring_channels(np.arange(32)) == 2
    assert TwoLevel(1, 8, NV, IB).ring_channels(np.arange(8)) == 1
    assert TwoLevel(4, 8, NV, IB).ring_channels(np.arange(32)[::-1]) == 1
    assert Switch(8, NV).ring_channels(np.arange(8)) == 1
    c = VirtualCluster(TwoLevel(4, 8, NV, IB))
    assert C.all_reduce(c, nbytes=1e8).time == pytest.approx(C.all_reduce(c, nbytes=1e8, channels=8).time, rel=REL)
    assert C.all_reduce(c, nbytes=1e8, algorithm="tree").time == pytest.approx(
        C.all_reduce(c, nbytes=1e8, algorithm="tree", channels=1).time, rel=REL)


def test_bad_channels_are_named():
    c = VirtualCluster(Switch(4, NV))
    for bad in (0, -1, 1.5, "2"):
        with pytest.raises(ValueError, match="channels"):
            C.all_reduce(c, nbytes=1e6, channels=bad)
    with pytest.raises(ValueError, match="channels"):
        C.all_reduce(c, nbytes=1e6, algorithm="rd", channels=2)
    with pytest.raises(ValueError, match="channels"):
        predict("all_reduce", "ring", 8, 1e6, 1e-6, 1e9, channels=0)
    with pytest.raises(TypeError, match="pxn"):
        TwoLevel(2, 8, NV, IB, pxn="yes")
    with pytest.raises(TypeError, match="TwoLevel"):
        ring_time_two_level(Switch(8, NV), 1e6, 2)


def test_hierarchical_still_nests_the_ring():
    """The hierarchical all-reduce runs the ring across nodes at one channel per rail."""
    topo = TwoLevel(4, 8, NV, IB)
    got = C.all_reduce(VirtualCluster(topo), nbytes=1e9, algorithm="hierarchical").time
    assert got == pytest.approx(C.t_allreduce_hierarchical(4, 8, 1e9, NV, IB, "ring"), rel=REL)


@pytest.mark.parametrize("p", [8, 16, 64, 256])
@pytest.mark.parametrize("k", [1, 2, 4, 8])
def test_multi_channel_tree_on_two_level_equals_its_closed_form(p, k):
    """The binomial tree with k channels on 8-GPU nodes: simulator = the layout's closed form."""
    from commbook.collectives.channels import tree_time_two_level
    topo = TwoLevel(max(p // 8, 1), min(p, 8), NV, IB)
    sim = C.all_reduce(VirtualCluster(topo), nbytes=1e9, algorithm="tree", channels=k).time
    assert sim == pytest.approx(tree_time_two_level(topo, 1e9, k), rel=REL)


def test_tree_channels_by_hand():
    """2 nodes × 8 GPUs, one channel: 2 × (3 NVLink steps + 1 NIC step), each moving the whole
    buffer; a channel per NIC: the NIC step moves n/8 through each NIC, and NVLink step s
    (1, 2, 4) has a GPU send in 1/(2s) of the channels (its position ≡ s mod 2s in the
    channels' rotated orders): n/2, n/4, n/8 per port."""
    from commbook.collectives.channels import tree_time_two_level
    n = 1e9
    topo = TwoLevel(2, 8, NV, IB)
    one = 2 * (3 * (NV.alpha + n / NV.beta) + IB.alpha + n / IB.beta)
    assert tree_time_two_level(topo, n, 1) == pytest.approx(one, rel=REL)
    eight = 2 * (sum(NV.alpha + n / 2 ** j / NV.beta for j in (1, 2, 3)) + IB.alpha + n / 8 / IB.beta)
    assert tree_time_two_level(topo, n, 8) == pytest.approx(eight, rel=REL)
    assert C.all_reduce(VirtualCluster(topo), nbytes=n, algorithm="tree", channels=8).time == pytest.approx(eight, rel=REL)
