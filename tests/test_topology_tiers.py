"""Chapter 集合通信 §1.5: NIC affinity and the spine on a two-level cluster, three tiers,
the switch tree of Figure 9 with in-network reduction, napkin math 1.6 and Figure 8.

Every expected time here is either the chapter's printed number (within its rounding),
an independent formula written out in the test, or the closed form against the engine
(rel 1e-12).  Every expected byte count is written out from the schedule's definition or
recounted from :meth:`Topology.route`, independently of ``message_costs``.
"""
from __future__ import annotations

import numpy as np
import pytest

from commbook import collectives as C
from commbook.book.ch1 import tier_budgets as TB
from commbook.collectives.ring import allreduce_ring
from commbook.collectives.tiers import (allreduce_tiers_form, run_by_phase, tier_groups, tier_phases)
from commbook.comm_sim import Round, VirtualCluster
from commbook.hardware import IB_NDR, IB_NDR_CHAPTER, NVLINK4, NVLINK4_CHAPTER, Link
from commbook.topology import SwitchTree, ThreeTier, TwoLevel

NV, IB = NVLINK4_CHAPTER, IB_NDR_CHAPTER
M = 1e9
REL = 1e-12
NESTED = ("ring", "rd", "rabenseifner", "tree", "double_binomial", "naive", "one_shot", "two_shot")


def ints(p, n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-10**6, 10**6, n).astype(np.int64) for _ in range(p)]


def snake(nodes, g):
    """Ranks visiting node a's GPUs forwards for even a, backwards for odd a: every
    node-crossing hop stays on one rail (and so does the wrap for an even node count)."""
    return np.concatenate([np.arange(g)[::(-1) ** a] + a * g for a in range(nodes)])


def bytes_of(res, suffix):
    return {n: float(b) for n, b in zip(res.link_names, res.link_bytes) if n.endswith(suffix)}


# ============================================================================ defaults
def test_default_cluster_is_unchanged_and_placement_free():
    """One NIC per GPU and a non-blocking spine: the hierarchical all-reduce equals its
    old closed form, the new one agrees, and a flat ring takes the same time in every
    rank placement: 2(p-1)(α_IB + n/(pβ_IB))."""
    t = TwoLevel(4, 8, NV, IB)
    c = VirtualCluster(t)
    want = C.t_allreduce_hierarchical(4, 8, M, NV, IB)
    assert C.all_reduce(c, nbytes=M, algorithm="hierarchical").time == pytest.approx(want, rel=REL)
    assert C.t_allreduce_tiers(t, M) == pytest.approx(want, rel=REL)
    flat = 2 * 31 * (IB.alpha + M / (32 * IB.beta))
    rng = np.random.default_rng(0)
    for ranks in [None, snake(4, 8), np.arange(32).reshape(4, 8).T.ravel()] + [rng.permutation(32) for _ in range(4)]:
        assert C.all_reduce(c, nbytes=M, ranks=ranks, channels=1).time == pytest.approx(flat, rel=REL)
    assert t.gpus_per_nic == 1 and t.diameter == 4 and t.route(0, 9) == [0, "leaf0", "spine", "leaf1", 9]
    assert t.bisection_bandwidth == pytest.approx(16 * IB.beta, rel=REL)


# ============================================================================ rails
def test_rail_table_from_link_bytes():
    """The chapter's rail table (T-i): on 8 nodes x 8 GPUs each rail's leaf forwards the
    same bytes, 1/8 of the cross-node traffic; per GPU on its rail that is the ring
    all-reduce of M/8 (2(N-1)/N · M/8 sent by each of N GPUs)."""
    from commbook.book.ch1.hierarchy_routing import rail_rows

    N, G = 8, 8
    rows = rail_rows(TwoLevel(N, G, NV, IB), M)
    assert [r["rail"] for r in rows] == [f"leaf{k}" for k in range(G)]
    for r in rows:
        assert r["share"] == pytest.approx(1 / 8, rel=REL)
        assert r["bytes"] == pytest.approx(N * 2 * (N - 1) / N * M / G, rel=REL)
        assert r["bytes"] / (2 * (N - 1)) == pytest.approx(M / 8, rel=REL)   # the table's "M/8"


def _inter_phase(topo):
    phases = dict(tier_phases(topo, M, True, allreduce_ring))
    return VirtualCluster(topo).run(phases["rail all-reduce"]).time


@pytest.mark.parametrize("kw,factor", [
    (dict(nics_per_node=1), 8),                                  # all traffic through one NIC
    (dict(nics_per_node=4), 2),                                  # two GPUs per NIC
    (dict(nic_of_gpu=[0, 0, 2, 2, 4, 4, 6, 6], nics_per_node=8), 2),   # wrong affinity: 2 on a NIC
    (dict(nic_of_gpu=[0, 0, 0, 0, 4, 4, 4, 4], nics_per_node=8), 4),   # 4 on a NIC
    (dict(oversubscription=2), 2),                               # node uplink halved
    (dict(spine_oversubscription=2), 1),                         # rail-aligned: no spine
])
def test_nic_sharing_multiplies_the_inter_node_phase(kw, factor):
    """The rail all-reduce's bandwidth term is k times longer when k GPUs share a NIC;
    the NVLink phases do not change; the closed form follows the engine."""
    N, G = 8, 8
    base, topo = TwoLevel(N, G, NV, IB), TwoLevel(N, G, NV, IB, **kw)
    lat = 2 * (N - 1) * IB.alpha
    assert (_inter_phase(topo) - lat) / (_inter_phase(base) - lat) == pytest.approx(factor, rel=1e-9)
    assert _inter_phase(topo) == pytest.approx(2 * (N - 1) * (IB.alpha + factor * M / (G * N * IB.beta)), rel=REL)
    c = VirtualCluster(topo)
    for algo in ("hierarchical", "tiers"):
        assert C.all_reduce(c, nbytes=M, algorithm=algo).time == pytest.approx(C.t_allreduce_tiers(topo, M), rel=REL)


def test_a_shared_nic_serializes_each_direction():
    """Two GPUs behind one NIC sending to two different nodes share the NIC's out side
    (2n through it); receiving from two nodes they share its in side; the NIC names say
    which node and NIC."""
    t = TwoLevel(3, 4, NV, IB, nics_per_node=2)
    c, n = VirtualCluster(t), 1e8
    out = c.run([Round.make([0, 1], [4, 8], n)])
    assert out.time == pytest.approx(IB.alpha + 2 * n / IB.beta, rel=REL)
    assert bytes_of(out, ".out")["node0.nic0.out"] == pytest.approx(2 * n)
    assert bytes_of(out, ".in")["node1.nic0.in"] == pytest.approx(n)
    inn = c.run([Round.make([4, 8], [0, 1], n)])
    assert inn.time == pytest.approx(IB.alpha + 2 * n / IB.beta, rel=REL)
    assert bytes_of(inn, ".in")["node0.nic0.in"] == pytest.approx(2 * n)
    apart = c.run([Round.make([0, 2], [4, 8], n)])               # GPUs 0 and 2: NICs 0 and 1
    assert apart.time == pytest.approx(IB.alpha + n / IB.beta, rel=REL)


def test_mismatch_costs_two_to_four_times_on_the_inter_node_phase_only():
    """The chapter's "2–4×" for a wrong GPU→NIC mapping holds for the inter-node phase (2 or 4
    GPUs on one NIC); the whole 1 GB all-reduce on 8 x 8 slows by 1.53× and 2.58×."""
    good = C.t_allreduce_tiers(TwoLevel(8, 8, NV, IB), M)
    two = C.t_allreduce_tiers(TwoLevel(8, 8, NV, IB, nic_of_gpu=[0, 0, 2, 2, 4, 4, 6, 6], nics_per_node=8), M)
    four = C.t_allreduce_tiers(TwoLevel(8, 8, NV, IB, nic_of_gpu=[0, 0, 0, 0, 4, 4, 4, 4], nics_per_node=8), M)
    assert round(two / good, 2) == 1.53 and round(four / good, 2) == 2.58


def test_rail_misaligned_traffic_through_a_two_to_one_spine_takes_twice_as_long():
    """One round in which GPU g of node a sends n to GPU g+1 of node a+1: through a 2:1
    spine every leaf's uplink carries N messages at N·β/2, so α + 2n/β; non-blocking, α + n/β;
    rail-aligned (GPU g to GPU g) it never touches the spine."""
    N, G, n = 4, 8, 1e8
    d = np.arange(N * G)
    mis = ((d // G + 1) % N) * G + (d % G + 1) % G
    aligned = ((d // G + 1) % N) * G + d % G
    for s, want_mis in ((1, IB.alpha + n / IB.beta), (2, IB.alpha + 2 * n / IB.beta)):
        c = VirtualCluster(TwoLevel(N, G, NV, IB, spine_oversubscription=s))
        assert c.run([Round.make(d, mis, n)]).time == pytest.approx(want_mis, rel=REL)
        assert c.run([Round.make(d, aligned, n)]).time == pytest.approx(IB.alpha + n / IB.beta, rel=REL)


@pytest.mark.parametrize("N,G", [(8, 8), (4, 4)])
def test_flat_ring_placement_matters_only_with_a_bottleneck(N, G):
    """Oversubscribed spine: the flat ring in rank order changes rails at every node
    boundary (GPU G-1 → GPU 0), and all N of those hops share leaf G-1's uplink at N·β/2;
    in snake order the hops stay on their rail.  Shared NICs: round-robin placement puts
    every hop across nodes, two per NIC.  With one NIC per GPU and a non-blocking spine
    the placements tie."""
    p, c_ = N * G, M / (N * G)
    ring = lambda bw: 2 * (p - 1) * (IB.alpha + c_ / bw)
    spine = VirtualCluster(TwoLevel(N, G, NV, IB, spine_oversubscription=2))
    assert C.all_reduce(spine, nbytes=M, channels=1).time == pytest.approx(ring(IB.beta / 2), rel=REL)
    assert C.all_reduce(spine, nbytes=M, ranks=snake(N, G)).time == pytest.approx(ring(IB.beta), rel=REL)
    rr = np.arange(p).reshape(N, G).T.ravel()                   # rank r on node r mod N
    shared = VirtualCluster(TwoLevel(N, G, NV, IB, nics_per_node=G // 2))
    assert C.all_reduce(shared, nbytes=M, ranks=rr).time == pytest.approx(ring(IB.beta / 2), rel=REL)
    assert C.all_reduce(shared, nbytes=M, channels=1).time == pytest.approx(ring(IB.beta), rel=REL)
    plain = VirtualCluster(TwoLevel(N, G, NV, IB))
    for ranks in (None, snake(N, G), rr):
        assert C.all_reduce(plain, nbytes=M, ranks=ranks, channels=1).time == pytest.approx(ring(IB.beta), rel=REL)


def test_nic_parameters_reject_bad_input():
    with pytest.raises(ValueError, match="nics_per_node=3 does not divide gpus_per_node=8"):
        TwoLevel(2, 8, NV, IB, nics_per_node=3)
    with pytest.raises(ValueError, match="nics_per_node"):
        TwoLevel(2, 8, NV, IB, nics_per_node=0)
    with pytest.raises(ValueError, match="nic_of_gpu must list one integer NIC index per GPU"):
        TwoLevel(2, 8, NV, IB, nic_of_gpu=[0, 1])
    with pytest.raises(ValueError, match=r"nic_of_gpu entries must be NIC indices 0\.\.1"):
        TwoLevel(2, 2, NV, IB, nic_of_gpu=[0, 2], nics_per_node=2)
    with pytest.raises(ValueError, match="spine_oversubscription must be >= 1"):
        TwoLevel(2, 8, NV, IB, spine_oversubscription=0.5)
    with pytest.raises(TypeError, match="spine must be a commbook.hardware.Link"):
        TwoLevel(2, 8, NV, IB, spine=50e9)
    with pytest.raises(ValueError, match="rack_oversubscription must be >= 1"):
        ThreeTier(2, 2, 2, NV, IB, rack_oversubscription=float("nan"))
    with pytest.raises(ValueError, match="racks"):
        ThreeTier(0, 2, 2, NV, IB)
    with pytest.raises(ValueError, match="needs a TwoLevel or ThreeTier topology"):
        C.all_reduce(VirtualCluster(SwitchTree(2, 2, IB)), nbytes=64, algorithm="tiers")
    with pytest.raises(ValueError, match=r"all devices in their natural order"):
        C.all_reduce(VirtualCluster(ThreeTier(2, 2, 2, NV, IB)), nbytes=64, algorithm="tiers",
                     ranks=[1, 0, 2, 3, 4, 5, 6, 7])
    with pytest.raises(ValueError, match="give one link per tier"):
        allreduce_tiers_form([8, 4], 1.0, [NV])


# ============================================================================ three tiers
TOPOS = [
    ThreeTier(4, 4, 8, NV, IB, rack_oversubscription=2),
    ThreeTier(3, 2, 4, NVLINK4, IB_NDR, spine=Link("slow spine", 7e-6, 20e9, "test"), rack_oversubscription=1.5),
    ThreeTier(2, 3, 4, NV, IB, rack_oversubscription=2, nics_per_node=2, oversubscription=1.5),
    ThreeTier(3, 1, 2, NV, IB, rack_oversubscription=4, nic_of_gpu=[0, 0], nics_per_node=2),
    ThreeTier(2, 2, 1, NV, IB),
    TwoLevel(4, 4, NV, IB, nics_per_node=2, spine_oversubscription=3),
    TwoLevel(1, 4, NV, IB), TwoLevel(5, 1, NV, IB),
]


@pytest.mark.parametrize("topo", TOPOS, ids=lambda t: t.name)
def test_tiers_closed_form_equals_the_engine(topo):
    c = VirtualCluster(topo)
    for inter in NESTED:
        for n in (0.0, 12_345.0, M):
            got = C.all_reduce(c, nbytes=n, algorithm="tiers", inter_algorithm=inter).time
            assert got == pytest.approx(C.t_allreduce_tiers(topo, n, inter), rel=REL, abs=1e-18), (inter, n)


@pytest.mark.parametrize("topo", TOPOS[1:], ids=lambda t: t.name)
def test_tiers_on_real_data_equal_numpy(topo):
    c = VirtualCluster(topo)
    for n in (0, 1, 7, 3 * topo.p + 5):
        x = ints(topo.p, n, seed=n)
        want = np.sum(np.stack(x), axis=0)
        for inter in ("ring", "rd", "naive", "two_shot"):
            res = C.all_reduce(c, x, algorithm="tiers", inter_algorithm=inter, check=False)
            for r, out in enumerate(res.outputs):
                np.testing.assert_array_equal(out, want, err_msg=f"{inter} rank {r}")


def test_tier_groups_and_phases():
    t = ThreeTier(2, 3, 4, NV, IB)
    g = tier_groups(t)
    assert [x.shape for x in g] == [(6, 4), (8, 3), (12, 2)]
    assert g[1][0].tolist() == [0, 4, 8] and g[2][0].tolist() == [0, 12]
    names = [name for name, _ in tier_phases(t, 96, True, allreduce_ring)]
    assert names == ["node reduce-scatter", "rail reduce-scatter", "cross-rack all-reduce",
                     "rail all-gather", "node all-gather"]
    pieces = run_by_phase(VirtualCluster(t), C.algorithm("all_reduce", "tiers").builder(t, M, True, allreduce_ring),
                          lambda label: label.split()[0])
    assert sum(r.time for r in pieces.values()) == pytest.approx(C.t_allreduce_tiers(t, M), rel=REL)


def test_three_tier_128_gpu_example():
    """The chapter: "≈15 ms vs flat ≈160 ms" (M not given).  With M = 1 GB, Table 1's links
    (NVLink 450 GB/s α 1.5 µs; IB 50 GB/s α 2 µs, also between racks) and 2:1 between racks:
    multi-level 9.56 ms (model = engine), flat ring 79.9 ms in rank order (its node-crossing
    hops change rails, so they cross the 2:1 spine), 40.2 ms rail-aligned."""
    from commbook.book.ch1.hierarchy_numbers import three_tier
    e = three_tier()
    G, Nr, R, p = 8, 4, 4, 128
    hand = (2 * (G - 1) * (NV.alpha + M / (G * NV.beta)) + 2 * (Nr - 1) * (IB.alpha + M / (G * Nr * IB.beta))
            + 2 * (R - 1) * (IB.alpha + M / (G * Nr * R * IB.beta / 2)))
    assert e.model_s == pytest.approx(hand, rel=REL) and e.sim_s == pytest.approx(hand, rel=REL)
    assert e.flat_s == pytest.approx(2 * (p - 1) * (IB.alpha + M / p / (IB.beta / 2)), rel=REL)
    assert e.aligned_s == pytest.approx(2 * (p - 1) * (IB.alpha + M / p / IB.beta), rel=REL)
    assert round(e.sim_s * 1e3, 2) == 9.56 and round(e.flat_s * 1e3, 1) == 79.9
    assert round(e.aligned_s * 1e3, 1) == 40.2
    assert e.payload_bytes == pytest.approx(M / 32, rel=REL) and e.reduction == 32
    # the chapter's numbers are not what the model gives under these assumptions
    assert abs(e.sim_s - 15e-3) > 5e-3 and abs(e.flat_s - 160e-3) > 80e-3
    with pytest.raises(ValueError, match="racks"):
        three_tier(racks=1)


def test_three_tier_metrics():
    t = ThreeTier(4, 4, 8, NV, IB, rack_oversubscription=2)
    assert t.p == 128 and t.diameter == 4
    assert t.route(0, 8) == [0, "rack0.leaf0", 8]
    assert t.route(0, 32) == [0, "rack0.leaf0", "spine", "rack1.leaf0", 32]
    # half the racks: 2 racks x 8 leaves x (4 nodes x 50 GB/s / 2)
    assert t.bisection_bandwidth == pytest.approx(2 * 8 * 4 * IB.beta / 2, rel=REL)
    assert t.rack_of(127) == 3


# ============================================================================ switch tree
def recount(res, topo):
    """Per-link bytes recounted from the trace and route(): GPU→leaf, leaf→root, root→leaf,
    leaf→GPU (the engine's innet rule written out for innet rounds), each round as many
    times as it repeats."""
    out = dict.fromkeys(topo.resource_names, 0.0)
    for step in res.trace:
        r = step.round
        if r.innet:
            for s, d, n in zip(r.src, r.dst, r.count):
                out[f"gpu{s}.up"] += n
                out[f"gpu{d}.down"] += n
            leaves = sorted({int(s) // topo.gpus_per_leaf for s in r.src})
            if len(leaves) > 1:
                for l in leaves:
                    out[f"leaf{l}.up"] += r.count.max()
                    out[f"leaf{l}.down"] += r.count.max()
            continue
        for s, d, n in zip(r.src, r.dst, r.count * r.repeat):
            if s == d:
                continue
            path = topo.route(int(s), int(d))
            out[f"gpu{s}.up"] += n
            out[f"gpu{d}.down"] += n
            if "root" in path:
                out[f"{path[1]}.up"] += n
                out[f"{path[3]}.down"] += n
    return np.array([out[k] for k in topo.resource_names])


def test_figure_9_bytes_per_link():
    """2 leaves x 2 GPUs.  Panel (a) as drawn (flat reduction to GPU 0 and back): leaf B's
    uplink carries both full tensors g2, g3 up and both copies down; the binomial tree one
    partial sum each way.  Panel (b), in-switch reduction: one aggregate per link each way,
    α + n/β.  The recount from route() agrees with the engine for every algorithm."""
    n = 1e8
    topo = SwitchTree(2, 2, IB)
    runs = {a: C.all_reduce(VirtualCluster(topo), nbytes=n, algorithm=a, trace=True)
            for a in ("naive", "tree", "ring", "innet")}
    for a, r in runs.items():
        np.testing.assert_allclose(r.link_bytes, recount(r, topo), rtol=REL, err_msg=a)
    up = {a: bytes_of(r, ".up") for a, r in runs.items()}
    assert up["naive"]["leaf1.up"] == pytest.approx(2 * n) and up["naive"]["leaf0.up"] == pytest.approx(2 * n)
    assert bytes_of(runs["naive"], ".down")["gpu0.down"] == pytest.approx(3 * n)
    assert up["tree"]["leaf1.up"] == pytest.approx(n)
    np.testing.assert_allclose(runs["innet"].link_bytes, n)
    assert runs["innet"].time == pytest.approx(IB.alpha + n / IB.beta, rel=REL)
    assert runs["naive"].time == pytest.approx(2 * (IB.alpha + 3 * n / IB.beta), rel=REL)


def test_in_switch_reduction_under_one_leaf_uses_no_uplink():
    topo = SwitchTree(3, 4, IB)
    res = C.all_reduce(VirtualCluster(topo), nbytes=1e6, algorithm="innet", ranks=[4, 5, 6, 7])
    leaf = {k: v for k, v in bytes_of(res, "").items() if k.startswith("leaf")}
    assert not any(leaf.values()) and res.link_bytes.sum() == pytest.approx(8e6)
    slow = SwitchTree(2, 2, IB, uplink=Link("slow uplink", 3e-6, 10e9, "test"))
    r = C.all_reduce(VirtualCluster(slow), nbytes=1e6, algorithm="innet")
    assert r.time == pytest.approx(3e-6 + 1e6 / 10e9, rel=REL)


@pytest.mark.parametrize("leaves,k", [(2, 2), (4, 2), (8, 4)])
def test_sharp_speedup_is_below_two_against_the_ring(leaves, k):
    """Bandwidth term (α = 0): ring / in-switch = 2(p-1)/p < 2 on the engine (uplinks at
    k·β so the ring's one crossing per leaf never binds); the chapter's "2–3×" is reached
    only against the binomial tree (2⌈log2 p⌉) or the flat star."""
    p = leaves * k
    L0 = Link("IB, α = 0", 0.0, IB.beta, "test")
    topo = SwitchTree(leaves, k, L0, uplink=Link("uplink", 0.0, k * IB.beta, "test"))
    c = VirtualCluster(topo)
    ring, innet = (C.all_reduce(c, nbytes=M, algorithm=a).time for a in ("ring", "innet"))
    assert ring / innet == pytest.approx(2 * (p - 1) / p, rel=REL) == TB.sharp_ratio(p)
    assert TB.sharp_ratio(p) < 2 and TB.sharp_ratio(p, "tree") == 2 * int(np.ceil(np.log2(p)))
    assert C.all_reduce(c, nbytes=M, algorithm="tree").time / innet == pytest.approx(TB.sharp_ratio(p, "tree"), rel=REL)


def test_switch_tree_metrics_and_input():
    t = SwitchTree(4, 2, IB)
    assert (t.p, t.diameter, t.ports_per_device) == (8, 4, 1)
    assert t.route(0, 1) == [0, "leaf0", 1] and t.route(0, 7) == [0, "leaf0", "root", "leaf3", 7]
    assert t.bisection_bandwidth == pytest.approx(2 * IB.beta)
    assert SwitchTree(1, 4, IB).diameter == 2
    with pytest.raises(ValueError, match="gpus_per_leaf"):
        SwitchTree(2, 0, IB)
    with pytest.raises(TypeError, match="uplink must be a commbook.hardware.Link"):
        SwitchTree(2, 2, IB, uplink="IB")


# ============================================================================ napkin math 1.6
def test_napkin_1_6_chapter_convention():
    """Reduce-scatter 875 MB at 450 GB/s = 1.944 ms; inter-node 2·7/8·125 MB/50 GB/s + 14·3 µs
    = 4.417 ms (the chapter's 4.42); total 8.306 (8.3); flat 2 GB/50 GB/s = 40 ms; 4.82× (4.8×)."""
    b = TB.napkin_1_6()["chapter"]
    assert round(b.reduce_scatter * 1e3, 3) == 1.944 and round(b.reduce_scatter * 1e3, 2) == 1.94
    assert round(b.inter * 1e3, 3) == 4.417 and round(b.inter * 1e3, 2) == 4.42
    assert round(b.total * 1e3, 3) == 8.306 and round(b.total * 1e3, 1) == 8.3
    assert b.flat == pytest.approx(40e-3, rel=REL)
    assert round(b.speedup, 2) == 4.82 and round(b.speedup, 1) == 4.8


def test_napkin_1_6_consistent_convention_is_the_engine():
    """Every tier with its α, the flat ring with (p-1)/p: flat 39.753 ms, hierarchy 8.327 ms,
    4.77× — and the engine on TwoLevel(8, 8) gives exactly these."""
    b = TB.napkin_1_6()["consistent"]
    c = VirtualCluster(TwoLevel(8, 8, NVLINK4_CHAPTER, TB.NM_1_6["inter"]))
    assert C.all_reduce(c, nbytes=M, channels=1).time == pytest.approx(b.flat, rel=REL)
    assert C.all_reduce(c, nbytes=M, algorithm="hierarchical").time == pytest.approx(b.total, rel=REL)
    assert round(b.flat * 1e3, 3) == 39.753 and round(b.total * 1e3, 3) == 8.327
    assert round(b.speedup, 2) == 4.77
    with pytest.raises(ValueError, match="flat must be 'ring' or 'ideal'"):
        TB.hierarchical_budget(8, 8, M, NV, IB, flat="exact")


def test_figure_8_bytes_per_phase_and_the_leader_inset():
    """2 nodes x 8 GPUs, 1 GB: each NVLink phase sends 7/8 GB per GPU (14 GB in all), no
    NIC bytes; the rail phase sends 2(N-1)/N · M/8 = 125 MB per NIC, on all 16 NICs; the
    leader-based variant sends the whole 1 GB through each leader's NIC: 8× the busiest NIC."""
    from commbook.book.ch1.hierarchy_figures import fig8_data

    N, G = 2, 8
    f = fig8_data(N, G, M, NV, IB)
    ph = {k: {**v, "nvlink": sum(v["nvlink"].values()), "nic": sum(v["nic"].values())} for k, v in f.phases.items()}
    assert list(ph) == ["node reduce-scatter", "rail all-reduce", "node all-gather"]
    for k in ("node reduce-scatter", "node all-gather"):
        assert ph[k]["nvlink"] == pytest.approx(N * G * (G - 1) / G * M, rel=REL) and ph[k]["nic"] == 0
    assert ph["rail all-reduce"]["nic"] == pytest.approx(N * G * 2 * (N - 1) / N * M / G, rel=REL)
    assert ph["rail all-reduce"]["nvlink"] == 0
    rails, leader = (max(f.nic[a].values()) for a in ("hierarchical", "leader"))
    assert rails == pytest.approx(2 * (N - 1) / N * M / G, rel=REL)
    assert leader == pytest.approx(2 * (N - 1) / N * M, rel=REL) and leader / rails == pytest.approx(G, rel=REL)
    assert sum(v["time"] for v in ph.values()) == pytest.approx(f.times["hierarchical"], rel=REL)
