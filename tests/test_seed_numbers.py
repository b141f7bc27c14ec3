"""The numbers the lecture (seed 002) and the chapter (seed 000) state, reproduced by the
core within their rounding.  References: ../shared/seed_inventory.md, parts C.2, C.3, E, F.
Where the inventory flags a source number as wrong, the test pins the correct value too."""
import numpy as np
import pytest

from commbook import cost
from commbook.collectives import t_all_gather, t_formula
from commbook.bandwidth import busbw
from commbook.collectives import (all_gather, all_reduce, all_to_all, broadcast, reduce,
                                  reduce_scatter, scatter)
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4, Link
from commbook.topology import Ring, Switch, Torus, TwoLevel, ring_order
from commbook.units import KB, KiB, MB, MiB, us

NV, IB, ICI = NVLINK4, IB_NDR, ICI_V5E


def approx(x, rel=None, abs=None):
    return pytest.approx(x, rel=rel, abs=abs)


def in_us(t):
    return t / us


# ----------------------------------------------------------------- chapter Example 1.1
def _textbook_ring(vectors):
    """The ring all-reduce written out with Python lists, in the convention of the
    chapter's Fig. 6 (rank i ends the reduce-scatter owning chunk i): at reduce-scatter
    step s rank i sends chunk (i - s - 1) mod p to rank i + 1, which adds it; at
    all-gather step s it sends chunk (i - s) mod p, which the receiver overwrites.
    Returns every rank's vector after each step."""
    p = len(vectors)
    state = [list(v) for v in vectors]
    steps = []
    for phase in ("reduce-scatter", "all-gather"):
        for s in range(p - 1):
            before = [list(v) for v in state]
            for i in range(p):
                c = (i - s - 1) % p if phase == "reduce-scatter" else (i - s) % p
                j = (i + 1) % p
                state[j][c] = before[j][c] + before[i][c] if phase == "reduce-scatter" else before[i][c]
            steps.append([list(v) for v in state])
    return steps


def test_chapter_example_1_1_ring_trace():
    """4-GPU ring: inputs [1,5,3,7], [2,6,4,8], [3,7,5,9], [4,8,6,10] (chapter Example 1.1,
    whose trace table is missing: flag F.11).  The simulator's trace equals the textbook
    ring written out independently, and ends in the chapter's sum [10, 26, 18, 34]."""
    vectors = ([1, 5, 3, 7], [2, 6, 4, 8], [3, 7, 5, 9], [4, 8, 6, 10])
    c = VirtualCluster(Switch(4, NV))
    r = all_reduce(c, [np.array(v, dtype=np.int64) for v in vectors], trace=True)
    states = [[s[0].tolist() for s in step.state] for step in r.trace]
    assert states == _textbook_ring(vectors)
    assert states[-1] == [[10, 26, 18, 34]] * 4
    assert [states[2][i][i] for i in range(4)] == [10, 26, 18, 34]   # rank i owns chunk i after RS


# ----------------------------------------------------------------- 02-1 semantics
def test_demo_02_1_semantics_on_four_devices():
    c = VirtualCluster(Switch(4, NV))
    x = [np.array([10 * d + k for k in range(4)], dtype=np.int64) for d in range(4)]
    assert all(o.tolist() == [0, 1, 2, 3] for o in broadcast(c, x).outputs)
    assert reduce(c, x).outputs[0].tolist() == [60, 64, 68, 72]
    assert all(o.tolist() == [60, 64, 68, 72] for o in all_reduce(c, x).outputs)
    assert [o.tolist() for o in reduce_scatter(c, x).outputs] == [[60], [64], [68], [72]]
    gathered = list(range(4)) + list(range(10, 14)) + list(range(20, 24)) + list(range(30, 34))
    assert all(o.tolist() == gathered for o in all_gather(c, x).outputs)
    assert [o.tolist() for o in all_to_all(c, x).outputs] == [
        [0, 10, 20, 30], [1, 11, 21, 31], [2, 12, 22, 32], [3, 13, 23, 33]]


# ----------------------------------------------------------------- 02-2 identities, broadcast
def test_demo_02_2_identities_on_eight_devices():
    rng = np.random.default_rng(2)
    c = VirtualCluster(Switch(8, NV))
    x = [rng.integers(-100, 100, 64).astype(np.int64) for _ in range(8)]
    ar = all_reduce(c, x).outputs
    rs = reduce_scatter(c, x).outputs
    ag = all_gather(c, rs).outputs
    assert max(np.abs(a - g).max() for a, g in zip(ar, ag)) == 0
    once = all_to_all(c, x).outputs
    assert all(np.array_equal(a, b) for a, b in zip(all_to_all(c, once).outputs, x))
    sa = broadcast(c, x, algorithm="scatter_allgather").outputs
    assert all(np.array_equal(o, x[0]) for o in sa)


def test_demo_02_2_broadcast_times_need_binary_sizes():
    """32 KB: scatter+all-gather 16.1 µs vs binomial 6.2 µs (either unit); 8 MB: 49 vs 62 µs
    only with 8 MiB (flag F.25); decimal 8 MB gives 47.11 / 59.33."""
    c = VirtualCluster(Switch(8, NV))
    t = lambda n, a: in_us(broadcast(c, nbytes=n, algorithm=a).time)
    for n in (32 * KB, 32 * KiB):
        assert round(t(n, "scatter_allgather"), 1) == 16.1
        assert round(t(n, "binomial"), 1) == 6.2
    assert round(t(8 * MiB, "scatter_allgather")) == 49 and round(t(8 * MiB, "binomial")) == 62
    assert t(8 * MiB, "scatter_allgather") == approx(48.62, abs=0.005)
    assert t(8 * MiB, "binomial") == approx(61.92, abs=0.005)
    assert t(8 * MB, "scatter_allgather") == approx(47.11, abs=0.005)
    assert t(8 * MB, "binomial") == approx(59.33, abs=0.005)
    # root's bytes: 1.75n (scatter + all-gather) vs 3n (binomial)
    n = 8 * MiB
    assert broadcast(c, nbytes=n, algorithm="scatter_allgather").bytes_sent[0] == approx(1.75 * n)
    assert broadcast(c, nbytes=n, algorithm="binomial").bytes_sent[0] == approx(3 * n)


# ----------------------------------------------------------------- 02-3 bytes per device
def test_demo_02_3_bytes_per_device_p8():
    c = VirtualCluster(Switch(8, NV))
    n = 1e6
    per = lambda a: (all_reduce(c, nbytes=n, algorithm=a).bytes_sent / n).round(12).tolist()
    assert per("ring") == [1.75] * 8
    assert per("rabenseifner") == [1.75] * 8
    assert per("rd") == [3.0] * 8
    assert per("tree") == [3, 1, 2, 1, 3, 1, 2, 1]
    assert per("naive") == [7, 1, 1, 1, 1, 1, 1, 1]
    assert per("innet") == [1.0] * 8
    assert cost.lower_bound_bytes("all_reduce", 8, n) == approx(1.75 * n)


# ----------------------------------------------------------------- 03-1 time vs size
TABLE_03_1 = {  # n: ring, rd, rab, tree, naive, innet (µs)
    4 * KB: (28.02, 6.03, 12.02, 12.05, 4.12, 2.01),
    64 * KB: (28.25, 6.43, 12.25, 12.85, 5.99, 2.14),
    256 * KB: (29.00, 7.71, 13.00, 15.41, 11.96, 2.57),
    1 * MB: (31.89, 12.67, 15.89, 25.33, 35.11, 4.22),
    4 * MB: (43.56, 32.67, 27.56, 65.33, 128.44, 10.89),
    16 * MB: (90.22, 112.67, 74.22, 225.33, 501.78, 37.56),
    256 * MB: (1023.56, 1712.67, 1007.56, 3425.33, 7968.44, 570.89),
}


@pytest.mark.parametrize("n", list(TABLE_03_1))
def test_demo_03_1_time_vs_size(n):
    c = VirtualCluster(Switch(8, NV))
    algos = ("ring", "rd", "rabenseifner", "tree", "naive", "innet")
    for algo, want in zip(algos, TABLE_03_1[n]):
        assert in_us(all_reduce(c, nbytes=n, algorithm=algo).time) == approx(want, abs=0.005), algo


def _crossover(f, g, lo, hi):
    """The size in [lo, hi] where f(n) = g(n), by bisection (f - g changes sign once)."""
    for _ in range(200):
        mid = (lo + hi) / 2
        if (f(lo) - g(lo)) * (f(mid) - g(mid)) <= 0:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2


def test_section_5_3_anchors():
    c = VirtualCluster(Switch(8, NV))
    # ring's 14 steps cost 28 µs of latency: a 0-byte ring all-reduce on the simulator
    empty = all_reduce(c, nbytes=0)
    assert empty.rounds == 14 and in_us(empty.time) == approx(28)
    # RD/ring crossover 7.92 MB (8.8·αβ)
    assert cost.crossover_rd_ring(8, NV.alpha, NV.beta) == approx(7.92e6, rel=1e-12)
    # winners without in-network: naive below 81.8 KB, RD to 2.16 MB, Rabenseifner above,
    # found where the simulated times cross
    t = lambda a: (lambda n: all_reduce(c, nbytes=n, algorithm=a).time)
    assert _crossover(t("naive"), t("rd"), 1e3, 1e6) / KB == approx(81.8, abs=0.05)
    assert _crossover(t("rd"), t("rabenseifner"), 1e5, 1e8) / MB == approx(2.16, abs=0.005)
    for n, winner in ((4 * KB, "naive"), (1 * MB, "rd"), (16 * MB, "rabenseifner"), (256 * MB, "rabenseifner")):
        algos = ("ring", "rd", "rabenseifner", "tree", "naive")
        assert min(algos, key=lambda a: t(a)(n)) == winner, n
    # the simulator agrees with the formulas to float64 rounding, not 3.3e-6 (flag F.26)
    worst = max(abs(all_reduce(c, nbytes=n, algorithm=a).time / t_formula(a, 8, n, NV.alpha, NV.beta) - 1)
                for n in TABLE_03_1 for a in ("ring", "rd", "rabenseifner", "tree", "naive", "innet"))
    assert worst < 1e-12


# ----------------------------------------------------------------- 03-2 scaling with p
RING_64K_MS = {8: 0.072, 16: 0.152, 32: 0.313, 64: 0.633, 128: 1.273, 256: 2.553, 512: 5.113}
RING_256M_MS = {8: 9.03, 16: 9.75, 32: 10.23, 64: 10.71, 128: 11.43, 256: 12.75, 512: 15.33}


@pytest.mark.parametrize("p", list(RING_64K_MS))
def test_demo_03_2_scaling_with_p(p):
    c = VirtualCluster(Switch(p, IB))
    ms = lambda n, a: all_reduce(c, nbytes=n, algorithm=a).time * 1e3
    # 0.6 µs: the inventory rounds p = 32's 0.31248 ms (via 0.3125) up to 0.313
    assert ms(64 * KB, "ring") == approx(RING_64K_MS[p], abs=0.0006)
    assert ms(256 * MB, "ring") == approx(RING_256M_MS[p], abs=0.005)
    r = all_reduce(c, nbytes=64 * KB, algorithm="ring")
    assert r.rounds == 2 * (p - 1)


def test_section_5_4_anchors():
    c = VirtualCluster(Switch(512, IB))
    ring = all_reduce(c, nbytes=64 * KB, algorithm="ring")
    rd = all_reduce(c, nbytes=64 * KB, algorithm="rd")
    assert ring.rounds == 1022 and rd.rounds == 9
    assert ring.time > 5e-3 and ring.time * 1e3 == approx(5.113, abs=0.0005)
    assert in_us(rd.time) == approx(56.5, abs=0.05)  # pitfall 2: "5 ms vs 57 µs"
    assert round(in_us(rd.time)) == 57
    # flag F.27: at 256 MB ring is NOT p-independent at p = 512 (9.03 -> 15.33 ms, +70 %)
    rab = [all_reduce(VirtualCluster(Switch(p, IB)), nbytes=256 * MB, algorithm="rabenseifner").time
           for p in (8, 512)]
    assert rab[0] * 1e3 == approx(8.99, abs=0.005) and rab[1] * 1e3 == approx(10.31, abs=0.005)
    assert RING_256M_MS[512] / RING_256M_MS[8] > 1.6


# ----------------------------------------------------------------- 03-4 pipelined broadcast
def test_demo_03_4_broadcast_pipeline_ici():
    c = VirtualCluster(Switch(8, ICI))
    t = lambda a, k=None: in_us(broadcast(c, nbytes=8 * MB, algorithm=a, chunks=k).time)
    assert t("flat") == approx(1245.44, abs=0.005)      # "1.25 ms"
    assert t("binomial") == approx(536.33, abs=0.005)   # "536 µs"
    chain = {1: 1251.44, 2: 719.11, 4: 454.44, 8: 325.11, 16: 266.44, 32: 249.11, 64: 264.44, 128: 320.11}
    for k, want in chain.items():
        assert t("chain", k) == approx(want, abs=0.005)
    assert round(t("chain", 32) / t("binomial") * 100) == 46
    assert round(t("chain", 32) / in_us(8 * MB / ICI.beta), 2) == 1.40
    k_star, t_star = cost.chain_broadcast_optimum(8, 8 * MB, ICI.alpha, ICI.beta)
    assert k_star == approx(32.66, abs=0.005) and in_us(t_star) == approx(249.10, abs=0.005)
    # flag F.28: k = 32 is best only among powers of two; k = 33 is 0.01 µs faster
    assert t("chain", 33) == approx(249.10, abs=0.005) and t("chain", 33) < t("chain", 32)
    assert int(k_star) == 32


def test_demo_03_4_nvlink_4mb_chain_vs_binomial():
    c = VirtualCluster(Switch(8, NV))
    k_star, _ = cost.chain_broadcast_optimum(8, 4 * MB, NV.alpha, NV.beta)
    assert int(k_star) == 5  # int(k*): not a power of two
    best = in_us(broadcast(c, nbytes=4 * MB, algorithm="chain", chunks=int(k_star)).time)
    assert best == approx(41.56, abs=0.005)
    assert in_us(broadcast(c, nbytes=4 * MB, algorithm="binomial").time) == approx(32.67, abs=0.005)
    assert 4 * MB / NV.n_half == approx(4.44, abs=0.005)


# ----------------------------------------------------------------- 03-3 model busbw
def test_demo_03_3_model_busbw_and_effective_alpha():
    c = VirtualCluster(Switch(8, NV))
    model = {1 * MB: 54.9, 8 * MB: 236.8, 58 * MB: 400.3, 256 * MB: 437.7, 1e9: 446.8, 10e9: 449.7}
    for n, want in model.items():
        t = all_reduce(c, nbytes=n).time
        assert busbw("all_reduce", n, t, 8) / 1e9 == approx(want, abs=0.05)
    # measured ≈150 GB/s busbw at 58 MB implies α_eff ≈ 32 µs (decimal MB): the ring's time
    # is linear in α with slope = its rounds, so α_eff = (t_measured - t at α = 0) / rounds
    t_meas = busbw("all_reduce", 58 * MB, 1.0, 8) / 150e9       # the time that gives 150 GB/s
    no_alpha = all_reduce(VirtualCluster(Switch(8, Link("nv", 0.0, NV.beta, "α = 0"))), nbytes=58 * MB)
    alpha_eff = (t_meas - no_alpha.time) / no_alpha.rounds
    assert in_us(alpha_eff) == approx(32.2, abs=0.05)
    slow = VirtualCluster(Switch(8, Link("nv", alpha_eff, NV.beta, "α_eff")))
    assert busbw("all_reduce", 58 * MB, all_reduce(slow, nbytes=58 * MB).time, 8) == approx(150e9, rel=1e-9)


# ----------------------------------------------------------------- 01-1, 01-3, 01-2 links and topologies
def test_demo_01_1_links():
    assert NV.n_half == approx(900e3) and IB.n_half == approx(250e3) and ICI.n_half == approx(45e3)
    eff = lambda L: cost.effective_bandwidth(4 * KB, L.alpha, L.beta)
    assert eff(NV) / 1e9 == approx(1.99, abs=0.005) and eff(NV) / NV.beta * 100 == approx(0.44, abs=0.005)
    assert eff(IB) / 1e9 == approx(0.79, abs=0.005) and eff(IB) / IB.beta * 100 == approx(1.57, abs=0.005)
    assert eff(ICI) / 1e9 == approx(3.67, abs=0.005) and eff(ICI) / ICI.beta * 100 == approx(8.2, abs=0.05)
    for L in (NV, IB, ICI):
        assert cost.effective_bandwidth(L.n_half, L.alpha, L.beta) == approx(L.beta / 2)
    assert IB.beta / NV.beta == approx(1 / 9)


def test_demo_01_3_point_to_point_on_ici():
    from commbook.collectives import send_recv
    c = VirtualCluster(Torus((16,), ICI))
    small = [round(in_us(send_recv(c, nbytes=4 * KB, src=0, dst=h).time), 2) for h in (1, 2, 4, 8)]
    assert small == [1.09, 2.09, 4.09, 8.09]
    big = [in_us(send_recv(c, nbytes=64 * MB, src=0, dst=h).time) for h in (1, 2, 4, 8)]
    assert 1423 <= min(big) and max(big) <= 1431


def test_demo_01_2_topologies_p64():
    rows = {
        "switch": Switch(64, ICI), "ring": Ring(64, ICI), "torus2d": Torus((8, 8), ICI),
        "torus3d": Torus((4, 4, 4), ICI), "twolevel": TwoLevel(8, 8, NV, IB),
    }
    want = {  # ports, diameter, bisection GB/s
        "switch": (1, 2, 1440), "ring": (2, 32, 90), "torus2d": (4, 8, 720),
        "torus3d": (6, 6, 1440), "twolevel": (2, 4, 1600),
    }
    for k, t in rows.items():
        assert (t.ports_per_device, t.diameter, t.bisection_bandwidth / 1e9) == approx(want[k]), k
    assert IB.beta / NV.beta == approx(1 / 9)  # cross-node bisection per GPU


# ----------------------------------------------------------------- 04-1 mapping
def test_demo_04_1_ring_mapping_on_4x4_torus():
    ideal = t_formula("ring", 16, 64 * MB, ICI.alpha, ICI.beta)
    assert in_us(ideal) == approx(2696.7, abs=0.05)
    c = VirtualCluster(Torus((4, 4), ICI))
    t = lambda kind, seed=None: all_reduce(c, nbytes=64 * MB, ranks=ring_order((4, 4), kind, seed)).time
    assert t("snake") == approx(ideal, rel=1e-12)
    # h·α per hop (default): row-major +1.1 %; the lecture's "2 %" needs 2α per extra hop (flag F.29)
    assert (t("row_major") / ideal - 1) * 100 == approx(1.11, abs=0.005)
    c2 = VirtualCluster(Torus((4, 4), ICI, hop_alpha=2.0))
    t2 = all_reduce(c2, nbytes=64 * MB, ranks=ring_order((4, 4), "row_major")).time
    assert (t2 / ideal - 1) * 100 == approx(2.22, abs=0.005)
    ratios = [t("random", s) / ideal for s in range(20)]
    assert 1.9 < float(np.median(ratios)) < 2.1   # "random ≈ 2x"


def test_section_6_1_two_dimensional_algorithm():
    c = VirtualCluster(Torus((4, 4), ICI))
    flat = all_reduce(c, nbytes=64 * KB, ranks=ring_order((4, 4), "snake"))
    two_d = all_reduce(c, nbytes=64 * KB, algorithm="torus")
    assert flat.rounds == 30 and two_d.rounds == 12
    assert in_us(flat.time) == approx(32.67, abs=0.005) and in_us(two_d.time) == approx(14.67, abs=0.005)
    big = [in_us(all_reduce(c, nbytes=64 * MB, **kw).time)
           for kw in ({"ranks": ring_order((4, 4), "snake")}, {"algorithm": "torus"})]
    assert big == approx([2696.7, 2678.7], abs=0.05)


# ----------------------------------------------------------------- 04-2 all-to-all and bisection
def test_demo_04_2_all_to_all_p64():
    n = 16 * MB
    sw = all_to_all(VirtualCluster(Switch(64, ICI)), nbytes=n).time
    ring_t = Ring(64, ICI)
    rg = all_to_all(VirtualCluster(ring_t), nbytes=n).time
    tor_t = Torus((8, 8), ICI)
    to = all_to_all(VirtualCluster(tor_t), nbytes=n).time
    egress, _ = cost.all_to_all_bounds(64, n, ICI.beta, Switch(64, ICI).bisection_bandwidth)
    assert sw * 1e3 == approx(0.413, abs=0.0005) and egress * 1e3 == approx(0.350, abs=0.0005)
    assert rg / sw == approx(16.3, abs=0.05)                       # "ring ≈ 16x slower"
    assert 1 < to / sw < rg / sw                                   # torus in between
    ring_lb = max(cost.all_to_all_bounds(64, n, ICI.beta, ring_t.bisection_bandwidth))
    tor_lb = max(cost.all_to_all_bounds(64, n, ICI.beta, tor_t.bisection_bandwidth))
    assert ring_lb * 1e3 == approx(2.844, abs=0.0005)
    assert 2 <= rg / ring_lb <= 4 and 2 <= to / tor_lb <= 4         # "2-4x above their bound"


def test_demo_04_2_p16_does_not_give_16x():
    """Flag F.30: with p = 16 the ring is only ≈4.3x the switch."""
    sw = all_to_all(VirtualCluster(Switch(16, ICI)), nbytes=16 * MB).time
    rg = all_to_all(VirtualCluster(Ring(16, ICI)), nbytes=16 * MB).time
    assert rg / sw == approx(4.27, abs=0.01)


# ----------------------------------------------------------------- 04-3 hierarchical
SPEEDUP = {2: (3.97, 5.83), 4: (5.34, 5.08), 8: (6.42, 4.84), 16: (7.13, 4.82), 32: (7.54, 4.95)}


@pytest.mark.parametrize("nodes", list(SPEEDUP))
def test_demo_04_3_hierarchical_speedup(nodes):
    c = VirtualCluster(TwoLevel(nodes, 8, NV, IB))
    for n, want in zip((64 * KB, 256 * MB), SPEEDUP[nodes]):
        flat = all_reduce(c, nbytes=n, channels=1).time
        hier = all_reduce(c, nbytes=n, algorithm="hierarchical").time
        assert flat / hier == approx(want, abs=0.005)
        # the flat ring crosses nodes, so every step runs at the NIC's speed: the ring's
        # closed form on the InfiniBand link
        assert flat == approx(t_formula("ring", 8 * nodes, n, IB.alpha, IB.beta), rel=1e-12)


def test_section_7_3_tp16_hierarchical():
    n = 64 * 8192 * 2
    tp8 = 160 * all_reduce(VirtualCluster(Switch(8, NV)), nbytes=n).time
    tp16 = 160 * all_reduce(VirtualCluster(TwoLevel(2, 8, NV, IB)), nbytes=n, algorithm="hierarchical").time
    assert tp8 * 1e3 == approx(5.13, abs=0.005) and tp16 * 1e3 == approx(7.15, abs=0.005)


# ----------------------------------------------------------------- exercises 1, 3, 5, 6, 9
def test_exercise_1():
    assert IB.n_half / KB == approx(250)
    t = cost.p2p_time(25 * KB, IB.alpha, IB.beta)
    assert in_us(t) == approx(5.5) and 25 * KB / t / 1e9 == approx(4.545, abs=0.0005)
    assert round(25 * KB / t / IB.beta * 100) == 9
    t = cost.p2p_time(2.5 * MB, IB.alpha, IB.beta)
    assert in_us(t) == approx(55) and round(2.5 * MB / t / IB.beta * 100) == 91


def test_exercise_3_crossover_p16():
    n16 = cost.crossover_rd_ring(16, 2e-6, 450e9)
    assert n16 / MB == approx(11.0, abs=0.05)
    assert t_formula("ring", 16, n16, 2e-6, 450e9) == approx(t_formula("rd", 16, n16, 2e-6, 450e9))
    assert n16 > cost.crossover_rd_ring(8, 2e-6, 450e9)


def test_exercise_5_all_to_all_bounds():
    egress, bisect = cost.all_to_all_bounds(64, 64 * MB, 50e9, Switch(64, IB).bisection_bandwidth)
    assert bisect * 1e3 == approx(0.64) and egress * 1e3 == approx(1.26)


def test_exercise_6_hierarchical_bandwidth_terms():
    nv0, ib0 = Link("nv", 0.0, NV.beta, "α = 0"), Link("ib", 0.0, IB.beta, "α = 0")
    c = VirtualCluster(TwoLevel(4, 8, nv0, ib0))
    hier = all_reduce(c, nbytes=512 * MB, algorithm="hierarchical").time
    flat = all_reduce(c, nbytes=512 * MB, channels=1).time
    assert hier * 1e3 == approx(3.91, abs=0.005) and flat * 1e3 == approx(19.84, abs=0.005)
    assert round(flat / hier) == 5


def test_exercise_9_optimal_chunks():
    k, t = cost.chain_broadcast_optimum(8, 8 * MB, 1e-6, 45e9)
    assert round(k) == 33 and round(in_us(t)) == 249


def test_exercise_4_and_7_use_t_formula():
    # Ex 4: all-gather of bf16[1024, 16384] over 8 NVLink GPUs ≈ 79 µs
    n = 1024 * 16384 * 2
    t = t_all_gather("ring", 8, n, 2e-6, 450e9)
    assert in_us(t) == approx(79.24, abs=0.005)
    # Ex 7: 131,072 B per all-reduce, TP = 4: ring ≈0.80 ms, RD ≈0.29 ms over 64 all-reduces
    assert 64 * t_formula("ring", 4, 131072, 2e-6, 450e9) * 1e3 == approx(0.796, abs=0.0005)
    assert 64 * t_formula("rd", 4, 131072, 2e-6, 450e9) * 1e3 == approx(0.293, abs=0.0005)


def test_scatter_semantics():
    c = VirtualCluster(Switch(4, NV))
    out = scatter(c, np.arange(8)).outputs
    assert [o.tolist() for o in out] == [[0, 1], [2, 3], [4, 5], [6, 7]]
