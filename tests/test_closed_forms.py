"""The simulator's time equals the closed form of every algorithm that has one (rel. 1e-9),
in size-only mode and on real data, and the closed forms equal their textbook formulas."""
import math

import numpy as np
import pytest

from commbook import cost
from commbook.collectives import (algorithm, names, t_all_gather, t_allreduce_hierarchical, t_broadcast, t_formula,
                                  t_reduce, t_reduce_scatter)
from commbook.collectives import (all_gather, all_reduce, all_to_all, broadcast, gather, reduce,
                                  reduce_scatter, scatter, send_recv)
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, ICI_V5E, NVLINK4
from commbook.topology import Switch, Torus, TwoLevel

REL = 1e-9
PS = [1, 2, 3, 4, 5, 7, 8, 12, 16]
AR = names("all_reduce", with_closed_form=True)  # every all-reduce the registry gives a closed form


def close(a, b):
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-18)


def real(p, n_elems, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(n_elems).astype(dtype) for _ in range(p)]


@pytest.mark.parametrize("algo", AR)
@pytest.mark.parametrize("p", PS)
def test_allreduce_size_only_equals_closed_form(algo, p):
    c = VirtualCluster(Switch(p, NVLINK4))
    for n in (0.0, 1e3, 123_457.0, 4e6, 256e6):
        got = all_reduce(c, nbytes=n, algorithm=algo).time
        assert close(got, t_formula(algo, p, n, NVLINK4.alpha, NVLINK4.beta)), (algo, p, n)


@pytest.mark.parametrize("algo", AR)
@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 12, 16])
def test_allreduce_real_data_equals_closed_form(algo, p):
    # element count divisible by every chunking the schedules use (p, powers of two, 2p)
    n_elems = 2 * 16 * 3 * 5 * 7 * 4
    c = VirtualCluster(Switch(p, NVLINK4))
    r = all_reduce(c, real(p, n_elems), algorithm=algo)
    nbytes = n_elems * 8
    assert close(r.time, t_formula(algo, p, nbytes, NVLINK4.alpha, NVLINK4.beta))


def test_closed_forms_reproduce_the_sources_numbers():
    """Numbers the chapter (seed 000) and the lecture (seed 002) state, from the closed forms
    (inventory C.2, table T-g and C.3.1)."""
    us, ms = 1e-6, 1e-3
    # chapter NM 1.5: 1 MB on 64 GPUs, α = 10 µs, β = 10 GB/s: ring 1456.9 µs, tree 1320 µs
    assert t_formula("ring", 64, 1e6, 10e-6, 10e9) / us == pytest.approx(1456.9, abs=0.05)
    assert t_formula("tree", 64, 1e6, 10e-6, 10e9) / us == pytest.approx(1320, abs=0.05)
    # ... of which latency: ring 1260 µs, tree 120 µs (the closed forms at n = 0)
    assert t_formula("ring", 64, 0, 10e-6, 10e9) / us == pytest.approx(1260)
    assert t_formula("tree", 64, 0, 10e-6, 10e9) / us == pytest.approx(120)
    # chapter NM 1.1: 140 GB over 64 GPUs, IB 50 GB/s, α = 1.5 µs: 5,512.7 ms
    assert t_formula("ring", 64, 140e9, 1.5e-6, 50e9) / ms == pytest.approx(5512.7, abs=0.05)
    # chapter Def 1.1: 1,000 GPUs, 140 GB, 50 GB/s, bandwidth only: "≈ 5.6 s"
    assert round(t_formula("ring", 1000, 140e9, 0.0, 50e9), 1) == 5.6
    # lecture §5.3: the ring's 14 steps cost 28 µs of latency on NVLink (p = 8)
    assert t_formula("ring", 8, 0, NVLINK4.alpha, NVLINK4.beta) / us == pytest.approx(28)
    # lecture §5.4 / pitfall 2: 64 KB on 512 devices over IB: ring > 5 ms, RD ≈ 57 µs
    assert t_formula("ring", 512, 64e3, IB_NDR.alpha, IB_NDR.beta) > 5 * ms
    assert round(t_formula("rd", 512, 64e3, IB_NDR.alpha, IB_NDR.beta) / us) == 57


def test_closed_forms_against_independent_derivations():
    """Relations the lecture states, checked between closed forms (not the formulas retyped)."""
    a, b = NVLINK4.alpha, NVLINK4.beta
    for p in (2, 4, 8, 64, 1024):
        n = 64e6
        # Rabenseifner and ring are both bandwidth-optimal (chapter table 2): at α = 0 both
        # send the lower bound 2(p-1)/p·n (Patarasuk & Yuan) through each port
        bound = cost.lower_bound_bytes("all_reduce", p, n) / b
        assert close(t_formula("ring", p, n, 0.0, b), bound)
        assert close(t_formula("rabenseifner", p, n, 0.0, b), bound)
        # ... and differ only in latency: 2(p-1) steps against 2·log2 p
        assert close(t_formula("ring", p, 0, a, b) / a, 2 * (p - 1))
        assert close(t_formula("rabenseifner", p, 0, a, b) / a, 2 * math.log2(p))
        # recursive doubling sends the whole buffer log2 p times, one message per step
        assert close(t_formula("rd", p, n, a, b), math.log2(p) * cost.p2p_time(n, a, b))
    # in-network reduction: "theoretically halves" the ring's bandwidth term (lecture §5.2)
    assert t_formula("innet", 4096, 1e9, 0.0, b) / t_formula("ring", 4096, 1e9, 0.0, b) == pytest.approx(0.5, abs=1e-3)
    # butterfly is an alias of rabenseifner
    assert t_formula("butterfly", 8, 3e6, a, b) == t_formula("rabenseifner", 8, 3e6, a, b)


@pytest.mark.parametrize("algo", ["rd", "rabenseifner"])
@pytest.mark.parametrize("p", [3, 5, 6, 12, 100])
def test_non_power_of_two_fold_adds_two_point_to_point_messages(algo, p):
    """MPICH's fold: the p - q extra ranks (q the largest power of two below p) first hand
    their buffer to a partner and get the result back afterwards: two full messages."""
    a, b, n = 2e-6, 450e9, 1e6
    q = 1 << (p.bit_length() - 1)
    assert close(t_formula(algo, p, n, a, b) - t_formula(algo, q, n, a, b), 2 * cost.p2p_time(n, a, b))


@pytest.mark.parametrize("p", [2, 3, 5, 8, 12])
def test_other_collectives_equal_closed_forms(p):
    c = VirtualCluster(Switch(p, ICI_V5E))
    a, b = ICI_V5E.alpha, ICI_V5E.beta
    for n in (0.0, 8e6, 12_345.0):
        for algo in ("binomial", "flat", "scatter_allgather"):
            assert close(broadcast(c, nbytes=n, algorithm=algo).time, t_broadcast(algo, p, n, a, b))
        for k in (1, 3, 32):
            assert close(broadcast(c, nbytes=n, algorithm="chain", chunks=k).time,
                         t_broadcast("chain", p, n, a, b, chunks=k))
        for algo in ("binomial", "flat"):
            assert close(reduce(c, nbytes=n, algorithm=algo).time, t_reduce(algo, p, n, a, b))
        assert close(reduce_scatter(c, nbytes=n).time, t_reduce_scatter("ring", p, n, a, b))
        assert close(all_gather(c, nbytes=n).time, t_all_gather("ring", p, n, a, b))
        if p & (p - 1) == 0:
            assert close(reduce_scatter(c, nbytes=n, algorithm="rh").time, t_reduce_scatter("rh", p, n, a, b))
            assert close(all_gather(c, nbytes=n, algorithm="rd").time, t_all_gather("rd", p, n, a, b))
        assert close(all_to_all(c, nbytes=n).time, cost.all_to_all_direct(p, n, a, b))
        assert close(scatter(c, nbytes=n).time, cost.scatter_flat(p, n, a, b))
        assert close(gather(c, nbytes=n).time, cost.gather_flat(p, n, a, b))


def test_real_data_other_collectives_equal_closed_forms():
    p, m = 8, 8 * 16 * 3
    c = VirtualCluster(Switch(p, NVLINK4))
    a, b = NVLINK4.alpha, NVLINK4.beta
    data = real(p, m, np.float32)
    n = m * 4
    assert close(broadcast(c, data, algorithm="chain", chunks=4).time, t_broadcast("chain", p, n, a, b, 4))
    assert close(broadcast(c, data, algorithm="scatter_allgather").time,
                 t_broadcast("scatter_allgather", p, n, a, b))
    assert close(reduce_scatter(c, data, algorithm="rh").time, t_reduce_scatter("rh", p, n, a, b))
    assert close(all_gather(c, data).time, t_all_gather("ring", p, n * p, a, b))
    assert close(all_to_all(c, data).time, cost.all_to_all_direct(p, n, a, b))


@pytest.mark.parametrize("nodes,inner", [(2, "ring"), (4, "ring"), (4, "rd"), (3, "tree"), (8, "rabenseifner")])
def test_hierarchical_equals_closed_form(nodes, inner):
    c = VirtualCluster(TwoLevel(nodes, 8, NVLINK4, IB_NDR))
    for n in (64e3, 256e6):
        got = all_reduce(c, nbytes=n, algorithm="hierarchical", inter_algorithm=inner).time
        want = t_allreduce_hierarchical(nodes, 8, n, NVLINK4, IB_NDR, inter_algorithm=inner)
        assert close(got, want)
    data = real(nodes * 8, 8 * 8 * 3 * 2)
    got = all_reduce(c, data, algorithm="hierarchical", inter_algorithm=inner).time
    want = t_allreduce_hierarchical(nodes, 8, data[0].nbytes, NVLINK4, IB_NDR, inter_algorithm=inner)
    assert close(got, want)


@pytest.mark.parametrize("dims", [(4, 4), (2, 3, 4), (8,)])
def test_torus_by_dimension_equals_closed_form(dims):
    c = VirtualCluster(Torus(dims, ICI_V5E))
    for n in (64e3, 64e6):
        assert close(all_reduce(c, nbytes=n, algorithm="torus").time,
                     cost.allreduce_torus(dims, n, ICI_V5E.alpha, ICI_V5E.beta))


def test_send_recv_hops_on_a_ring():
    c = VirtualCluster(Torus((16,), ICI_V5E))
    for h in (1, 2, 4, 8):
        t = send_recv(c, nbytes=4e3, src=0, dst=h).time
        assert close(t, h * ICI_V5E.alpha + 4e3 / ICI_V5E.beta)


def test_p2p_and_half_bandwidth():
    n_half = cost.half_bandwidth_point(NVLINK4.alpha, NVLINK4.beta)
    assert close(n_half, 900e3)                                   # lecture §2.2: "> 900 KB"
    assert close(cost.effective_bandwidth(n_half, NVLINK4.alpha, NVLINK4.beta), NVLINK4.beta / 2)
    # the closed form is what the simulator measures for one message through a switch
    for n in (0.0, 4e3, n_half, 1e9):
        sim = send_recv(VirtualCluster(Switch(2, NVLINK4)), nbytes=n, src=0, dst=1)
        assert close(sim.time, cost.p2p_time(n, NVLINK4.alpha, NVLINK4.beta))


def _logp_events(L, o, g, m):
    """Event-by-event LogP (Culler et al. 1993): the sender spends o per message and
    injects at most one message per g; each travels L; the receiver spends o per message,
    one at a time.  Returns when the last message has been received."""
    send_free, recv_free, done = 0.0, 0.0, 0.0
    last_inject = -math.inf
    for _ in range(m):
        start = max(send_free, last_inject + g)
        last_inject = start
        send_free = start + o
        arrive = send_free + L
        recv_free = max(recv_free, arrive) + o
        done = recv_free
    return done


def test_logp_napkin_math_1_3():
    """Chapter NM 1.3: L = 100 µs, o = 50 µs, 500 µs backward -> 600 µs."""
    m = cost.LogP(L=100e-6, o=50e-6)
    assert close(m.overlapped(500e-6), 600e-6)
    for L, o, g in ((1e-6, 2e-6, 3e-6), (5e-6, 1e-6, 0.5e-6), (2e-6, 2e-6, 2e-6), (1e-6, 0.0, 4e-6)):
        for k in (1, 2, 4, 9):
            assert close(cost.LogP(L=L, o=o, g=g).p2p(k), _logp_events(L, o, g, k)), (L, o, g, k)


def test_lower_bounds_against_the_simulator():
    """Lecture §4.3 (p = 8): all-reduce 1.75n, the others 0.875n; no all-reduce schedule
    lets its busiest rank send less (in-network reduction aside: the switch reduces), and
    the ring meets the bound on every rank."""
    assert close(cost.lower_bound_bytes("all_reduce", 8, 1.0), 1.75)
    for op in ("all_gather", "reduce_scatter", "all_to_all"):
        assert close(cost.lower_bound_bytes(op, 8, 1.0), 0.875)
    for p in (2, 3, 8, 12):
        c = VirtualCluster(Switch(p, NVLINK4))
        bound = cost.lower_bound_bytes("all_reduce", p, 1e6)
        for algo in names("all_reduce"):
            if algo == "innet" or algorithm("all_reduce", algo).scope == "topology":
                continue
            sent = all_reduce(c, nbytes=1e6, algorithm=algo).bytes_sent
            assert sent.max() >= bound * (1 - 1e-12), (algo, p)
        np.testing.assert_allclose(all_reduce(c, nbytes=1e6).bytes_sent, bound, rtol=1e-12)
        for name, op in (("all_gather", all_gather), ("reduce_scatter", reduce_scatter), ("all_to_all", all_to_all)):
            np.testing.assert_allclose(op(c, nbytes=1e6).bytes_sent, cost.lower_bound_bytes(name, p, 1e6), rtol=1e-12)


def test_crossovers_solve_their_equations():
    a, b = 2e-6, 450e9
    for p in (4, 8, 16, 64):
        n = cost.crossover_rd_ring(p, a, b)
        assert close(t_formula("rd", p, n, a, b), t_formula("ring", p, n, a, b))
    for p in (8, 64, 100, 256):
        n = cost.crossover_tree_ring(p, a, b)
        assert close(t_formula("tree", p, n, a, b), t_formula("ring", p, n, a, b))
    # the chapter's log-aware estimate: N=100, α=5 µs, β=50 GB/s -> ≈3.8 MB; N=64, 10 µs, 10 GB/s -> ≈1.1 MB
    assert round(cost.crossover_tree_ring(100, 5e-6, 50e9, exact=False) / 1e6, 1) == 3.8
    assert round(cost.crossover_tree_ring(64, 10e-6, 10e9, exact=False) / 1e6, 1) == 1.1
    k, t = cost.chain_broadcast_optimum(8, 8e6, 1e-6, 45e9)
    grid = [t_broadcast("chain", 8, 8e6, 1e-6, 45e9, chunks=kk) for kk in range(1, 200)]
    assert t <= min(grid) + 1e-15
    assert abs(int(np.argmin(grid)) + 1 - k) < 1


# ----------------------------------------------------------------------------- crossover
@pytest.mark.parametrize("p", [4, 8, 64, 256])
def test_numeric_crossover_equals_the_closed_form_crossovers(p):
    """collectives.crossover finds the size numerically; the affine pairs have closed forms."""
    from commbook.collectives import crossover
    a, b = IB_NDR.alpha, IB_NDR.beta
    assert crossover("rd", "ring", p, a, b) == pytest.approx(cost.crossover_rd_ring(p, a, b), rel=1e-9)
    assert crossover("tree", "ring", p, a, b) == pytest.approx(cost.crossover_tree_ring(p, a, b), rel=1e-9)


def test_crossover_of_a_form_that_is_not_affine():
    """The double tree at its best chunk count is not affine in n: at the crossover found,
    the two closed forms agree, and on either side the order flips."""
    from commbook.collectives import crossover
    p, a, b = 256, 3.5e-6, 25e9
    n = crossover("double_tree", "ring", p, a, b)
    assert t_formula("double_tree", p, n, a, b) == pytest.approx(t_formula("ring", p, n, a, b), rel=1e-9)
    assert (t_formula("double_tree", p, n / 2, a, b) < t_formula("ring", p, n / 2, a, b)) != \
           (t_formula("double_tree", p, 2 * n, a, b) < t_formula("ring", p, 2 * n, a, b))


def test_crossover_says_when_two_algorithms_never_cross():
    from commbook.collectives import crossover
    with pytest.raises(ValueError, match="'naive' and 'rd' do not cross"):
        crossover("naive", "rd", 2, 1e-6, 1e9)
