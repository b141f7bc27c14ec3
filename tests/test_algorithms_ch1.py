"""Chapter 集合通信, §1.4–1.5: the algorithms the chapter describes beyond the basic ones.

* Rabenseifner (butterfly) in both pairing orders: the chapter's 8-GPU trace pairs the
  reduce-scatter at distance 1, 2, 4 (``near_first``), MPICH at 4, 2, 1 (``far_first``).
* The parameter server sharded over K servers (§1.4, "分片将每台服务器的流量从 N×M 降至
  N×M/K_srv").
* The leader-based hierarchical all-reduce as Fig. 8 draws it, against the rail-based one
  the text describes.
* Fig. 10's card taken literally (a full ring all-reduce per torus dimension), against the
  reduce-scatter/all-gather by dimension.

Every time here is the simulator's, compared with a closed form of :mod:`commbook.cost`
(rel 1e-12); every result with numpy; the chapter's stated numbers where it states them.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

from commbook import collectives as C
from commbook import cost
from commbook.book.names import display_name
from commbook.collectives.butterfly import butterfly_pairs
from commbook.collectives.registry import nestable
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4
from commbook.topology import Ring, Switch, Torus, TwoLevel

PS = [4, 8, 16, 32, 256]
NV, IB = NVLINK4, IB_NDR
REL = 1e-12
SIZES = (0.0, 1e3, 123_457.0, 4e6, 256e6)

# p -> a two-level shape (nodes, gpus per node) and a 2-D torus
SHAPES = {4: (2, 2), 8: (2, 4), 16: (4, 4), 32: (4, 8), 256: (32, 8)}
GRIDS = {4: (2, 2), 8: (2, 4), 16: (4, 4), 32: (4, 8), 256: (16, 16)}


def ints(p: int, n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(-10**6, 10**6, n).astype(np.int64) for _ in range(p)]


def check_real(cluster: VirtualCluster, closed: float, **kw) -> None:
    """Real int64 data (2p elements: every split divides it) equals numpy's sum, and the
    run takes the closed-form time of its 16p bytes."""
    p = cluster.p
    x = ints(p, 2 * p, seed=p)
    res = C.all_reduce(cluster, x, check=False, **kw)
    want = np.sum(np.stack(x), axis=0)
    for r, out in enumerate(res.outputs):
        np.testing.assert_array_equal(out, want, err_msg=f"{kw} rank {r}")
    assert res.time == pytest.approx(closed, rel=REL, abs=1e-18), kw


# ============================================================================ butterfly orders
CHAPTER_TRACE = [  # §1.4 递归减半加倍: the 8-GPU reduce-scatter, rounds k = 0, 1, 2
    [(0, 1), (2, 3), (4, 5), (6, 7)],
    [(0, 2), (1, 3), (4, 6), (5, 7)],
    [(0, 4), (1, 5), (2, 6), (3, 7)],
]


def test_near_first_pairs_are_the_chapters_trace():
    pairs = butterfly_pairs(8, "near_first")
    assert len(pairs) == 6                                 # 2 log2 8 rounds, no fold at p = 8
    assert pairs[:3] == CHAPTER_TRACE                      # reduce-scatter
    assert pairs[3:] == CHAPTER_TRACE[::-1]                # the all-gather undoes it in reverse
    far = butterfly_pairs(8, "far_first")                  # MPICH: the same rounds, far first
    assert far[:3] == CHAPTER_TRACE[::-1] and far[3:] == CHAPTER_TRACE
    assert butterfly_pairs(8) == far                       # the default is MPICH's order


@pytest.mark.parametrize("order", ["far_first", "near_first"])
def test_pairs_are_xor_partners_and_everyone_is_busy(order):
    """Round k of the reduce-scatter pairs i with i xor d, d a distinct power of two, and
    every rank is in exactly one pair; the chapter's 1,024-GPU remark: the near-first
    reduce-scatter's last round pairs i with i xor 512."""
    for p in (4, 8, 16, 32, 1024):
        L = p.bit_length() - 1
        pairs = butterfly_pairs(p, order)
        dists = []
        for rnd in pairs[:L]:
            d = {b - a for a, b in rnd}
            assert len(d) == 1 and all(a ^ b == d.copy().pop() for a, b in rnd)
            assert sorted(x for pr in rnd for x in pr) == list(range(p))
            dists.append(d.pop())
        want = [1 << k for k in range(L)]
        assert dists == (want if order == "near_first" else want[::-1])
    last = butterfly_pairs(1024, "near_first")[9]
    assert all(b == a ^ 512 for a, b in last) and len(last) == 512


def test_pairs_with_the_fold():
    """p = 6: the fold pairs (0, 1) and (2, 3), then a butterfly on ranks 1, 3, 4, 5."""
    pairs = butterfly_pairs(6, "near_first")
    assert pairs[0] == [(0, 1), (2, 3)] and pairs[-1] == [(0, 1), (2, 3)]
    assert pairs[1] == [(1, 3), (4, 5)] and pairs[2] == [(1, 4), (3, 5)]


@pytest.mark.parametrize("p", PS)
@pytest.mark.parametrize("order", ["far_first", "near_first"])
def test_rabenseifner_orders_equal_the_closed_form_on_a_switch(p, order):
    c = VirtualCluster(Switch(p, NV))
    for n in SIZES:
        got = C.all_reduce(c, nbytes=n, algorithm="rabenseifner", order=order).time
        want = C.t_formula("rabenseifner", p, n, NV.alpha, NV.beta, order=order)
        assert got == pytest.approx(want, rel=REL, abs=1e-18), (p, order, n)
        assert want == C.t_formula("rabenseifner", p, n, NV.alpha, NV.beta)   # order-free on a switch
    check_real(c, C.t_formula("rabenseifner", p, 16 * p, NV.alpha, NV.beta), algorithm="butterfly", order=order)


@pytest.mark.parametrize("p", [2, 4, 8, 16, 32, 256])
@pytest.mark.parametrize("hop_alpha", [1.0, 2.0])
def test_on_a_ring_near_first_wins(p, hop_alpha):
    """On a ring distance costs: the simulator equals cost.allreduce_rabenseifner_on_ring,
    and near-first (big halves to near partners) beats MPICH's far-first for every
    n > 0 once p >= 4; the latency is the same."""
    c = VirtualCluster(Ring(p, NV, hop_alpha=hop_alpha))
    for n in SIZES:
        t = {}
        for order in ("far_first", "near_first"):
            t[order] = C.all_reduce(c, nbytes=n, algorithm="rabenseifner", order=order).time
            want = cost.allreduce_rabenseifner_on_ring(p, n, NV.alpha, NV.beta, order, hop_alpha)
            assert t[order] == pytest.approx(want, rel=REL, abs=1e-18), (p, order, n)
        if n == 0 or p == 2:
            assert t["near_first"] == pytest.approx(t["far_first"], rel=REL)
        else:
            assert t["near_first"] < t["far_first"]
    if p == 256:   # 256 MB: 14x (the far-first all-gather's last, n/2 round crosses half the ring)
        big = {o: C.all_reduce(c, nbytes=256e6, algorithm="rabenseifner", order=o).time
               for o in ("far_first", "near_first")}
        assert big["far_first"] / big["near_first"] > 10


def test_on_a_torus_and_across_nodes_near_first_wins():
    """4×4 torus (rank order row-major) and 2 nodes × 4 GPUs: near-first is faster.  Across
    nodes the near-first schedule crosses in its last reduce-scatter and first all-gather
    round, with n/8; far-first crosses first with n/2: each GPU's NIC carries n/4 against n
    (the segment sizes at distance 4 under the two orders)."""
    n = 64e6
    tor = VirtualCluster(Torus((4, 4), NV))
    t = {o: C.all_reduce(tor, nbytes=n, algorithm="rabenseifner", order=o).time for o in ("far_first", "near_first")}
    assert t["near_first"] < t["far_first"]
    two = VirtualCluster(TwoLevel(2, 4, NV, IB))
    nic = [i for i, name in enumerate(two.topology.resource_names) if name.endswith(".nic.out")]
    res = {o: C.all_reduce(two, nbytes=n, algorithm="rabenseifner", order=o) for o in ("far_first", "near_first")}
    np.testing.assert_allclose(res["far_first"].link_bytes[nic], n * (1 / 2 + 1 / 2), rtol=REL)
    np.testing.assert_allclose(res["near_first"].link_bytes[nic], n * (1 / 8 + 1 / 8), rtol=REL)
    assert res["near_first"].time < res["far_first"].time


# ============================================================================ parameter server
@pytest.mark.parametrize("p", PS)
def test_parameter_server_equals_its_closed_form(p):
    c = VirtualCluster(Switch(p, NV))
    for k in sorted({1, 2, p // 4, p // 2, p - 1, p}):
        for n in SIZES:
            got = C.all_reduce(c, nbytes=n, algorithm="parameter_server", servers=k).time
            want = C.t_formula("parameter_server", p, n, NV.alpha, NV.beta, servers=k)
            assert got == pytest.approx(want, rel=REL, abs=1e-18), (p, k, n)
        if k in (1, 2, p):
            check_real(c, C.t_formula("parameter_server", p, 16 * p, NV.alpha, NV.beta, servers=k),
                       algorithm="ps", servers=k)


@pytest.mark.parametrize("p", PS)
def test_one_server_is_the_naive_star_and_p_servers_the_two_shot(p):
    c = VirtualCluster(Switch(p, NV))
    for n in SIZES:
        ps = C.all_reduce(c, nbytes=n, algorithm="parameter_server", servers=1)
        star = C.all_reduce(c, nbytes=n, algorithm="naive")
        assert ps.time == star.time and ps.rounds == star.rounds == 2
        np.testing.assert_array_equal(ps.bytes_received, star.bytes_received)
        assert C.t_formula("parameter_server", p, n, NV.alpha, NV.beta) == C.t_formula("naive", p, n, NV.alpha, NV.beta)
        assert C.t_formula("parameter_server", p, n, NV.alpha, NV.beta, servers=p) == pytest.approx(
            C.t_formula("two_shot", p, n, NV.alpha, NV.beta), rel=REL)


def test_k_servers_divide_the_bandwidth_term():
    """§1.4: T ∝ N·M/(K·β) for large M: the bandwidth term is exactly 2(N-1)·M/(K·β), and
    at 1 GB one server takes K times as long as K servers (within the α terms)."""
    p, m = 16, 1e9
    c = VirtualCluster(Switch(p, NV))
    t1 = C.all_reduce(c, nbytes=m, algorithm="parameter_server", servers=1).time
    for k in (1, 2, 4, 8, 16):
        t = C.all_reduce(c, nbytes=m, algorithm="parameter_server", servers=k).time
        assert t - 2 * NV.alpha == pytest.approx(2 * (p - 1) * m / (k * NV.beta), rel=1e-9)
        assert t1 / t == pytest.approx(k, rel=1e-3)


def test_push_round_bytes_per_server():
    """Sharding cuts each server's traffic from N·M to N·M/K_srv (§1.4; here (N-1)·M/K, a
    server's own shard stays put), yet the server tier as a whole still receives (N-1)·M
    for every K ("通过中心层的聚合流量都随 O(N×M) 增长").  The push round alone."""
    from commbook.collectives.direct import allreduce_parameter_server
    p, m = 8, 8e6
    c = VirtualCluster(Switch(p, NV))
    for k in range(1, p + 1):
        push = allreduce_parameter_server(np.arange(p)[None, :], 0, m, True, servers=k)[0]
        res = c.run([push])
        np.testing.assert_allclose(res.bytes_received[:k], (p - 1) * m / k, rtol=REL)
        assert res.bytes_received.sum() == pytest.approx((p - 1) * m, rel=REL)


def test_the_alias_parameter_server_is_not_the_star():
    assert C.algorithm("all_reduce", "parameter_server").name == "parameter_server"
    assert "parameter_server" not in C.algorithm("all_reduce", "naive").aliases
    assert display_name("all_reduce", "parameter_server", "zh").startswith("参数服务器")


# ============================================================================ leader vs rails
@pytest.mark.parametrize("p", PS)
def test_leader_equals_its_closed_form(p):
    nodes, g = SHAPES[p]
    c = VirtualCluster(TwoLevel(nodes, g, NV, IB))
    for inter in ("ring", "rabenseifner", "tree", "parameter_server"):
        form = nestable(inter).closed_form
        for n in SIZES:
            got = C.all_reduce(c, nbytes=n, algorithm="leader", inter_algorithm=inter).time
            assert got == pytest.approx(cost.allreduce_leader(nodes, g, n, NV, IB, form), rel=REL, abs=1e-18)
    check_real(c, cost.allreduce_leader(nodes, g, 16 * p, NV, IB), algorithm="leader")


@pytest.mark.parametrize("nodes,g", [(1, 4), (4, 1), (3, 3), (5, 2)])
def test_leader_degenerate_shapes(nodes, g):
    c = VirtualCluster(TwoLevel(nodes, g, NV, IB))
    for n in SIZES:
        got = C.all_reduce(c, nbytes=n, algorithm="leader").time
        assert got == pytest.approx(cost.allreduce_leader(nodes, g, n, NV, IB), rel=REL, abs=1e-18)
    check_real(c, cost.allreduce_leader(nodes, g, 16 * nodes * g, NV, IB), algorithm="leader")


def _cross_node_time(res, g: int) -> float:
    """Time of the rounds in which some message crosses between nodes."""
    return sum(s.time for s in res.trace if np.any((s.round.src // g) != (s.round.dst // g)))


@pytest.mark.parametrize("nodes,g", [(2, 4), (4, 8), (8, 8), (32, 8)])
def test_rails_beat_the_leader_by_g_on_the_inter_node_phase(nodes, g):
    """Fig. 8 draws one leader per node crossing the fabric; the text (and NCCL) have every
    GPU cross on its own rail with 1/G of the buffer.  Same rounds, α the same: the
    inter-node bandwidth term is G times larger through the leaders, and the busiest NIC
    carries G times the bytes."""
    c = VirtualCluster(TwoLevel(nodes, g, NV, IB))
    n = 1e9
    lead = C.all_reduce(c, nbytes=n, algorithm="leader")
    rail = C.all_reduce(c, nbytes=n, algorithm="hierarchical")
    lat = 2 * (nodes - 1) * IB.alpha
    t_lead, t_rail = _cross_node_time(lead, g), _cross_node_time(rail, g)
    assert t_lead == pytest.approx(C.t_formula("ring", nodes, n, IB.alpha, IB.beta), rel=REL)
    assert t_rail == pytest.approx(C.t_formula("ring", nodes, n / g, IB.alpha, IB.beta), rel=REL)
    assert (t_lead - lat) / (t_rail - lat) == pytest.approx(g, rel=1e-9)
    nic = [i for i, name in enumerate(c.topology.resource_names) if name.endswith(".nic.out")]
    assert lead.link_bytes[nic].max() / rail.link_bytes[nic].max() == pytest.approx(g, rel=REL)
    assert np.count_nonzero(lead.link_bytes[nic]) == nodes           # only the leaders cross
    assert rail.time < lead.time
    assert rail.time == pytest.approx(C.t_allreduce_hierarchical(nodes, g, n, NV, IB), rel=REL)


def test_napkin_math_1_6_needs_the_rails():
    """NM 1.6 (8 nodes × 8 GPUs, 1 GB): the hierarchical all-reduce is ≈4.8× faster than
    the flat ring.  That holds for the rail version (≈4.8× in the model too); Fig. 8's
    leader-only version moves the whole 1 GB through one NIC per node and is slower than
    even the flat ring."""
    c = VirtualCluster(TwoLevel(8, 8, NV, IB))
    flat = C.all_reduce(c, nbytes=1e9, algorithm="ring", channels=1).time
    rail = C.all_reduce(c, nbytes=1e9, algorithm="hierarchical").time
    lead = C.all_reduce(c, nbytes=1e9, algorithm="leader").time
    assert flat / rail == pytest.approx(4.8, abs=0.05)
    assert lead > flat > rail


@pytest.mark.parametrize("nodes", [2, 8, 32])
def test_napkin_math_1_6_the_ring_nccl_runs_beats_the_rails(nodes):
    """The same cluster with NCCL's ring (one channel per NIC, PXN): 2(p-1) rounds of
    α_IB + max(n/(pβ_NV), n/(Gpβ_IB)) (each GPU's NVLink port carries G chunks of n/(Gp),
    each NIC one), each NIC sending 2(p-1)/p · n/G; on 8 nodes it is faster than the
    hierarchy, which runs its NVLink phases while the NICs wait."""
    g, n = 8, 1e9
    p = nodes * g
    c = VirtualCluster(TwoLevel(nodes, g, NV, IB, pxn=True))
    run = C.all_reduce(c, nbytes=n)
    form = 2 * (p - 1) * max(NV.alpha + n / (p * NV.beta), IB.alpha + max(n / (p * NV.beta), n / (g * p * IB.beta)))
    assert run.time == pytest.approx(form, rel=REL)
    nic = [i for i, name in enumerate(c.topology.resource_names) if name.endswith(".nic.out")]
    assert run.link_bytes[nic] == pytest.approx(np.full(len(nic), 2 * (p - 1) / p * n / g), rel=REL)
    rail = C.all_reduce(c, nbytes=n, algorithm="hierarchical").time
    assert rail == pytest.approx(C.t_allreduce_hierarchical(nodes, g, n, NV, IB), rel=REL)
    if nodes == 8:
        assert run.time < rail


def test_fallacy_and_summary_quote_the_ring_nccl_runs():
    """§1.9's nic_load and §1.10's figures: NCCL's ring on 8 x 8 GPUs of Table 1 against the
    written-out form, and the summary's ratio hierarchy / that ring."""
    from commbook.book.ch1 import fallacies_topology as fo, summary as su
    from commbook.hardware import IB_NDR_CHAPTER as ib, NVLINK4_CHAPTER as nv
    nl, p, g, n = fo.nic_load(), 64, 8, 1e9
    form = 2 * (p - 1) * max(nv.alpha + n / (p * nv.beta), ib.alpha + max(n / (p * nv.beta), n / (g * p * ib.beta)))
    assert nl.nccl_s == pytest.approx(form, rel=REL)
    assert nl.nccl_nic_bytes == pytest.approx(2 * (p - 1) / p * n / g, rel=REL)
    assert su.takeaway_numbers().hier_nccl_x == pytest.approx(nl.hier_s / form, rel=REL)
    assert f"{nl.hier_s / form:.2f}×" in su.archetype_figures()["A"]["en"]


# ============================================================================ torus variants
@pytest.mark.parametrize("p", PS)
def test_torus_rings_equal_their_closed_form(p):
    for dims in (GRIDS[p], (p,), (1,) + GRIDS[p]):
        c = VirtualCluster(Torus(dims, NV))
        for n in SIZES:
            got = C.all_reduce(c, nbytes=n, algorithm="torus_rings").time
            assert got == pytest.approx(cost.allreduce_torus_rings(dims, n, NV.alpha, NV.beta), rel=REL, abs=1e-18)
        if dims == GRIDS[p]:
            check_real(c, cost.allreduce_torus_rings(dims, 16 * p, NV.alpha, NV.beta), algorithm="torus_rings")


def test_fig10_bytes_and_steps_on_4x4():
    """Fig. 10: 2(X-1) + 2(Y-1) = 12 steps against 30 for a flat 16-ring (2.5×).  Bytes per
    device: 1.875·M by dimension (= 2·15/16·M, the flat ring's, as the card's invariant
    says) but 3·M with a full ring all-reduce per dimension (60 % more)."""
    c = VirtualCluster(Torus((4, 4), NV))
    m = 1e6
    by_dim = C.all_reduce(c, nbytes=m, algorithm="torus")
    rings = C.all_reduce(c, nbytes=m, algorithm="torus_rings")
    flat = C.all_reduce(c, nbytes=m, algorithm="ring")
    np.testing.assert_allclose(by_dim.bytes_sent, 1.875 * m, rtol=REL)
    np.testing.assert_allclose(rings.bytes_sent, 3 * m, rtol=REL)
    np.testing.assert_allclose(flat.bytes_sent, cost.lower_bound_bytes("all_reduce", 16, m), rtol=REL)
    np.testing.assert_allclose(by_dim.bytes_sent, flat.bytes_sent, rtol=REL)
    assert by_dim.rounds == rings.rounds == 2 * (4 - 1) + 2 * (4 - 1) == 12
    assert flat.rounds == 2 * (16 - 1) == 30
    assert flat.rounds / rings.rounds == 2.5
    assert by_dim.time < rings.time


# ============================================================================ bad input
def test_bad_parameters_fail_clearly():
    sw = VirtualCluster(Switch(4, NV))
    for k in (0, -1):
        with pytest.raises(ValueError, match=r"servers must be an integer >= 1"):
            C.all_reduce(sw, nbytes=64, algorithm="parameter_server", servers=k)
        with pytest.raises(ValueError, match=r"servers must be an integer >= 1"):
            C.t_formula("parameter_server", 4, 64, 1e-6, 1e9, servers=k)
    for k in (1.5, True, "2"):
        with pytest.raises(ValueError, match=r"servers must be an integer >= 1"):
            C.all_reduce(sw, nbytes=64, algorithm="parameter_server", servers=k)
    with pytest.raises(ValueError, match=r"servers must be at most the number of ranks \(4\), got 5"):
        C.all_reduce(sw, nbytes=64, algorithm="parameter_server", servers=5)
    with pytest.raises(ValueError, match=r"servers must be at most the number of ranks \(4\), got 5"):
        C.t_formula("parameter_server", 4, 64, 1e-6, 1e9, servers=5)
    with pytest.raises(ValueError, match=r"unknown butterfly order 'middle'; valid: far_first, near_first"):
        C.all_reduce(sw, nbytes=64, algorithm="rabenseifner", order="middle")
    with pytest.raises(ValueError, match=r"unknown butterfly order"):
        C.t_formula("rabenseifner", 4, 64, 1e-6, 1e9, order="middle")
    with pytest.raises(ValueError, match=r"unknown butterfly order"):
        butterfly_pairs(8, "backwards")
    with pytest.raises(ValueError, match=r"takes no parameter 'order'"):
        C.all_reduce(sw, nbytes=64, algorithm="ring", order="near_first")
    with pytest.raises(ValueError, match=r"takes no parameter 'servers'"):
        C.all_reduce(sw, nbytes=64, algorithm="rabenseifner", servers=2)
    with pytest.raises(ValueError, match=r"takes no parameter 'servers'"):
        C.all_reduce(VirtualCluster(Switch(1, NV)), nbytes=64, algorithm="ring", servers=2)
    with pytest.raises(ValueError, match=r"takes no parameter servers"):
        C.predict("all_reduce", "naive", 4, 64, 1e-6, 1e9, servers=2)
    with pytest.raises(ValueError, match=r"needs a TwoLevel topology, got Switch"):
        C.all_reduce(sw, nbytes=64, algorithm="leader")
    with pytest.raises(ValueError, match=r"needs a Torus topology, got Switch"):
        C.all_reduce(sw, nbytes=64, algorithm="torus_rings")
    with pytest.raises(ValueError, match=r"natural order"):
        C.all_reduce(VirtualCluster(TwoLevel(2, 2, NV, IB)), nbytes=64, algorithm="leader", ranks=[1, 0, 2, 3])
    with pytest.raises(ValueError, match=r"inter_algorithm 'innet' cannot run inside"):
        C.all_reduce(VirtualCluster(TwoLevel(2, 2, NV, IB)), nbytes=64, algorithm="leader", inter_algorithm="innet")
    with pytest.raises(ValueError, match=r"power of two"):
        cost.allreduce_rabenseifner_on_ring(6, 64, 1e-6, 1e9)
    assert math.isclose(cost.allreduce_rabenseifner_on_ring(1, 64, 1e-6, 1e9), 0.0)
