"""Every bad input is refused with a ValueError or TypeError that says what is wrong.

Each test asserts the exception *type* and a *message* fragment: a reader who passes a
wrong argument must learn from the message which argument and why.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

from commbook import collectives as C
from commbook import cost
from commbook.collectives import t_all_gather, t_broadcast, t_formula, t_reduce_scatter
from commbook.bandwidth import algbw, busbw
from commbook.comm_sim import VirtualCluster
from commbook.hardware import IB_NDR, NVLINK4, Link
from commbook.topology import Ring, Switch, Torus, TwoLevel, ring_order


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture
def sw4():
    return VirtualCluster(Switch(4, NVLINK4))


@pytest.fixture
def ring4():
    return VirtualCluster(Ring(4, NVLINK4))


@pytest.fixture
def data4():
    return [np.arange(8.0) + r for r in range(4)]


def _two_level(nodes=2, gpus=2):
    return VirtualCluster(TwoLevel(nodes, gpus, intra=NVLINK4, inter=IB_NDR))


# Every size-only entry point, called with a given nbytes on a 4-device switch.
SIZE_ONLY_CALLS = {
    "all_reduce": lambda c, n: C.all_reduce(c, nbytes=n),
    "broadcast": lambda c, n: C.broadcast(c, nbytes=n),
    "reduce": lambda c, n: C.reduce(c, nbytes=n),
    "reduce_scatter": lambda c, n: C.reduce_scatter(c, nbytes=n),
    "all_gather": lambda c, n: C.all_gather(c, nbytes=n),
    "all_to_all": lambda c, n: C.all_to_all(c, nbytes=n),
    "scatter": lambda c, n: C.scatter(c, nbytes=n),
    "gather": lambda c, n: C.gather(c, nbytes=n),
    "send_recv": lambda c, n: C.send_recv(c, nbytes=n),
}


# ----------------------------------------------------------------------------- sizes
@pytest.mark.parametrize("name", sorted(SIZE_ONLY_CALLS))
@pytest.mark.parametrize("nbytes, match", [
    (-1, r"nbytes must be a finite, non-negative number of bytes, got -1"),
    (-0.5, r"nbytes must be a finite, non-negative"),
    (float("nan"), r"nbytes must be a number of bytes, got NaN"),
    (float("inf"), r"nbytes must be a finite, non-negative number of bytes, got inf"),
    (float("-inf"), r"nbytes must be a finite, non-negative"),
])
def test_bad_nbytes_value(sw4, name, nbytes, match):
    with pytest.raises(ValueError, match=match):
        SIZE_ONLY_CALLS[name](sw4, nbytes)


@pytest.mark.parametrize("nbytes", ["8", [8], object(), True])
def test_nbytes_not_a_number(sw4, nbytes):
    with pytest.raises(TypeError, match=r"nbytes must be a number of bytes, got"):
        C.all_reduce(sw4, nbytes=nbytes)


def test_cost_functions_reject_bad_sizes():
    with pytest.raises(ValueError, match=r"n must be a finite, non-negative number of bytes, got -1"):
        cost.p2p_time(-1, 1e-6, 1e9)
    with pytest.raises(ValueError, match=r"number of bytes, got NaN"):
        t_formula("ring", 4, float("nan"), 1e-6, 1e9)
    with pytest.raises(ValueError, match=r"finite, non-negative.*inf"):
        t_broadcast("binomial", 4, float("inf"), 1e-6, 1e9)


# ----------------------------------------------------------------------------- α, β, links
@pytest.mark.parametrize("alpha", [-1e-6, float("nan"), float("inf")])
def test_p2p_time_bad_alpha(alpha):
    with pytest.raises(ValueError, match=r"alpha \(latency, seconds\) must be finite and >= 0"):
        cost.p2p_time(1e6, alpha, 1e9)


@pytest.mark.parametrize("beta", [0, 0.0, -1e9, float("nan"), float("inf")])
def test_p2p_time_bad_beta(beta):
    with pytest.raises(ValueError, match=r"beta \(bandwidth, bytes/s\) must be finite and > 0"):
        cost.p2p_time(1e6, 1e-6, beta)


@pytest.mark.parametrize("alpha, beta, match", [
    (-1e-6, 1e9, r"alpha .* must be finite and >= 0, got -1e-06"),
    (float("nan"), 1e9, r"alpha .* must be finite and >= 0, got nan"),
    (1e-6, 0.0, r"beta .* must be finite and > 0, got 0.0"),
    (1e-6, -5.0, r"beta .* must be finite and > 0, got -5.0"),
    (1e-6, float("inf"), r"beta .* must be finite and > 0, got inf"),
])
def test_link_bad_alpha_beta(alpha, beta, match):
    with pytest.raises(ValueError, match=match):
        Link("bad", alpha, beta, "test")


def test_link_params_accept_numpy_scalars():
    """np.float32 is a valid number: it must not be refused as 'not finite and >= 0'.

    (np.float64 subclasses float and passes; np.float32 does not, and before 8655872
    ``cost.check_link_params`` refused it with a message that was false.)"""
    as_f32 = cost.p2p_time(1e6, np.float32(1e-6), np.float32(1e9))
    assert as_f32 == pytest.approx(cost.p2p_time(1e6, 1e-6, 1e9), rel=1e-6)
    Link("np32", np.float32(1e-6), np.float32(1e9), "test")


def test_link_alpha_of_wrong_type():
    with pytest.raises((TypeError, ValueError), match=r"alpha"):
        cost.p2p_time(1e6, "1e-6", 1e9)


# ----------------------------------------------------------------------------- p < 1
@pytest.mark.parametrize("make", [
    lambda: Switch(0, NVLINK4), lambda: Switch(-3, NVLINK4), lambda: Ring(0, NVLINK4),
])
def test_topology_p_below_one(make):
    with pytest.raises(ValueError, match=r"p \(number of devices\) must be >= 1, got -?\d+"):
        make()


def test_torus_and_two_level_bad_sizes():
    with pytest.raises(ValueError, match=r"torus dimension .* must be >= 1, got 0"):
        Torus((0, 2), NVLINK4)
    with pytest.raises(ValueError, match=r"at least one dimension"):
        Torus((), NVLINK4)
    with pytest.raises(ValueError, match=r"nodes .* must be >= 1, got 0"):
        TwoLevel(0, 8, intra=NVLINK4, inter=IB_NDR)
    with pytest.raises(ValueError, match=r"gpus_per_node .* must be >= 1, got 0"):
        TwoLevel(2, 0, intra=NVLINK4, inter=IB_NDR)


@pytest.mark.parametrize("p", [2.5, True, "4"])
def test_topology_p_not_an_integer(p):
    with pytest.raises(TypeError, match=r"p \(number of devices\) must be an integer"):
        Switch(p, NVLINK4)


def test_topology_link_not_a_link():
    """Regression: Switch(4, 'nvlink') used to fail with AttributeError inside __init__."""
    with pytest.raises(TypeError, match=r"[Ll]ink"):
        Switch(4, "nvlink")


@pytest.mark.parametrize("p", [0, -1])
def test_t_formula_p_below_one(p):
    with pytest.raises(ValueError, match=r"p \(number of devices\) must be >= 1"):
        t_formula("ring", p, 1e6, 1e-6, 1e9)


# ----------------------------------------------------------------------------- buffers
def test_buffers_of_different_shapes(sw4):
    data = [np.zeros(4), np.zeros(4), np.zeros(4), np.zeros(5)]
    with pytest.raises(ValueError, match=r"rank 3 holds shape \(5,\), rank 0 holds \(4,\)"):
        C.all_reduce(sw4, data)
    data2 = [np.zeros((2, 2))] * 3 + [np.zeros(4)]
    with pytest.raises(ValueError, match=r"rank 3 holds shape"):
        C.all_gather(sw4, data2)


def test_buffers_of_different_dtypes(sw4):
    data = [np.zeros(4)] * 3 + [np.zeros(4, np.float32)]
    with pytest.raises(TypeError, match=r"rank 3 holds dtype float32, rank 0 holds float64"):
        C.all_reduce(sw4, data)
    with pytest.raises(TypeError, match=r"rank 3 holds dtype float32"):
        C.broadcast(sw4, data)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64, np.bool_, np.int8, np.uint32, "U1"])
def test_unsupported_dtype(sw4, dtype):
    data = [np.zeros(4, dtype=dtype)] * 4
    with pytest.raises(TypeError, match=r"dtype .* is not supported; use one of float16, float32, "
                                        r"float64, int32, int64"):
        C.all_reduce(sw4, data)


def test_unsupported_dtype_other_collectives(sw4):
    z = np.zeros(4, np.complex128)
    with pytest.raises(TypeError, match=r"not supported"):
        C.send_recv(sw4, z)
    with pytest.raises(TypeError, match=r"not supported"):
        C.scatter(sw4, z)
    with pytest.raises(TypeError, match=r"not supported"):
        C.all_to_all_v(sw4, [z] * 4, counts=np.ones((4, 4), int))


@pytest.mark.parametrize("k", [1, 3, 5])
def test_wrong_number_of_arrays(sw4, k):
    with pytest.raises(ValueError, match=rf"data has {k} arrays but the collective has 4 ranks"):
        C.all_reduce(sw4, [np.zeros(4)] * k)


def test_wrong_number_of_arrays_with_ranks(sw4):
    with pytest.raises(ValueError, match=r"data has 4 arrays but the collective has 2 ranks"):
        C.all_gather(sw4, [np.zeros(4)] * 4, ranks=[0, 1])


@pytest.mark.parametrize("k", [3, 5])
def test_all_to_all_v_wrong_number_of_arrays(sw4, k):
    """Regression: all_to_all_v with 3 or 5 arrays for 4 ranks used to raise IndexError."""
    with pytest.raises(ValueError, match=rf"data has {k} arrays but the collective has 4 ranks"):
        C.all_to_all_v(sw4, [np.zeros(4)] * k, counts=np.ones((4, 4), int))


def test_data_must_be_a_list(sw4):
    with pytest.raises(TypeError, match=r"data must be a list with one numpy array per rank"):
        C.all_reduce(sw4, np.zeros((4, 8)))


@pytest.mark.parametrize("call", [
    lambda c, d: C.all_reduce(c, d, nbytes=64),
    lambda c, d: C.broadcast(c, d, nbytes=64),
    lambda c, d: C.all_to_all(c, d, nbytes=64),
    lambda c, d: C.scatter(c, d[0], nbytes=64),
    lambda c, d: C.send_recv(c, d[0], nbytes=64),
])
def test_both_data_and_nbytes(sw4, data4, call):
    with pytest.raises(ValueError, match=r"give exactly one of data= .* or nbytes="):
        call(sw4, data4)


@pytest.mark.parametrize("call", [
    C.all_reduce, C.broadcast, C.reduce, C.reduce_scatter, C.all_gather, C.all_to_all,
    C.scatter, C.gather, C.send_recv,
])
def test_neither_data_nor_nbytes(sw4, call):
    with pytest.raises(ValueError, match=r"give exactly one of data= .* or nbytes="):
        call(sw4)


def test_cluster_not_a_virtual_cluster(data4):
    with pytest.raises(TypeError, match=r"VirtualCluster needs a Topology, got str"):
        VirtualCluster("switch")
    with pytest.raises(TypeError, match=r"cluster must be a VirtualCluster or a Topology, got str"):
        C.all_reduce("switch", data4)          # a bare Topology is accepted (tests/test_front_door.py)


def test_all_to_all_v_cluster_not_a_virtual_cluster():
    """Regression: all_to_all_v used to skip the cluster check (AttributeError)."""
    with pytest.raises(TypeError, match=r"VirtualCluster"):
        C.all_to_all_v("switch", counts=np.ones((4, 4)))


# ----------------------------------------------------------------------------- names
@pytest.mark.parametrize("collective, call", [
    ("all_reduce", lambda c, d: C.all_reduce(c, d, algorithm="quantum")),
    ("broadcast", lambda c, d: C.broadcast(c, d, algorithm="quantum")),
    ("reduce", lambda c, d: C.reduce(c, d, algorithm="quantum")),
    ("reduce_scatter", lambda c, d: C.reduce_scatter(c, d, algorithm="quantum")),
    ("all_gather", lambda c, d: C.all_gather(c, d, algorithm="quantum")),
    ("all_to_all", lambda c, d: C.all_to_all(c, d, algorithm="quantum")),
    ("all_reduce", lambda c, d: t_formula("quantum", 4, 1e6, 1e-6, 1e9)),
])
def test_unknown_algorithm_lists_valid_names(sw4, data4, collective, call):
    """The message names the collective and lists every algorithm the registry holds for it."""
    with pytest.raises(ValueError, match=rf"unknown {collective} algorithm 'quantum'; valid names: ") as info:
        call(sw4, data4)
    msg = str(info.value)
    for name in C.names(collective):
        assert name in msg, f"{collective}: valid name {name!r} missing from {msg!r}"


@pytest.mark.parametrize("call", [
    lambda c, d: C.all_reduce(c, d, op="mean"),
    lambda c, d: C.all_reduce(c, nbytes=64, op="mean"),
    lambda c, d: C.reduce(c, d, op="mean"),
    lambda c, d: C.reduce_scatter(c, d, op="mean"),
])
def test_unknown_op(sw4, data4, call):
    with pytest.raises(ValueError, match=r"unknown op 'mean'; valid: sum, prod, min, max, avg"):
        call(sw4, data4)


def test_unknown_mapping_and_random_without_seed():
    with pytest.raises(ValueError, match=r"unknown mapping 'spiral'; valid: identity, row_major, snake, random"):
        ring_order((4, 4), "spiral")
    with pytest.raises(ValueError, match=r"random mapping needs a seed"):
        ring_order((4, 4), "random")


# ----------------------------------------------------------------------------- devices / ranks
@pytest.mark.parametrize("topo", [
    Switch(4, NVLINK4), Ring(4, NVLINK4), Torus((2, 2), NVLINK4),
    TwoLevel(2, 2, intra=NVLINK4, inter=IB_NDR),
])
@pytest.mark.parametrize("src, dst, bad", [(0, 99, 99), (99, 0, 99), (-1, 0, -1)])
def test_route_outside_topology(topo, src, dst, bad):
    with pytest.raises(ValueError, match=rf"device {bad} is outside the topology .*devices 0\.\.3"):
        topo.route(src, dst)
    with pytest.raises(ValueError, match=rf"device {bad} is outside the topology"):
        topo.hops(src, dst)


def test_route_device_not_an_integer():
    with pytest.raises(TypeError, match=r"device id must be an integer, got float"):
        Switch(4, NVLINK4).route(0, 1.0)


def test_send_recv_outside_topology(sw4):
    with pytest.raises(ValueError, match=r"device 99 is outside the topology"):
        C.send_recv(sw4, np.zeros(4), dst=99)
    with pytest.raises(ValueError, match=r"device 99 is outside the topology"):
        C.send_recv(sw4, nbytes=8, src=99)
    with pytest.raises(ValueError, match=r"device -1 is outside the topology"):
        C.send_recv(sw4, nbytes=8, dst=-1)


@pytest.mark.parametrize("call", [
    lambda c: C.all_reduce(c, [np.zeros(4)] * 2, ranks=[0, 99]),
    lambda c: C.all_reduce(c, nbytes=8, ranks=[0, 99]),
    lambda c: C.broadcast(c, nbytes=8, ranks=[0, 99]),
    lambda c: C.all_to_all_v(c, counts=np.ones((2, 2)), ranks=[0, 99]),
])
def test_ranks_outside_topology(sw4, call):
    with pytest.raises(ValueError, match=r"device 99 is outside the topology"):
        call(sw4)


def test_ranks_duplicate_empty_or_wrong_type(sw4):
    with pytest.raises(ValueError, match=r"ranks must not name a device twice"):
        C.all_reduce(sw4, nbytes=8, ranks=[0, 1, 1])
    with pytest.raises(ValueError, match=r"ranks must not name a device twice"):
        C.all_to_all_v(sw4, counts=np.ones((2, 2)), ranks=[2, 2])
    with pytest.raises(ValueError, match=r"ranks must be a non-empty 1-D sequence"):
        C.all_reduce(sw4, nbytes=8, ranks=[])
    with pytest.raises(ValueError, match=r"ranks must be a non-empty 1-D sequence"):
        C.all_reduce(sw4, nbytes=8, ranks=[[0, 1]])
    with pytest.raises(TypeError, match=r"ranks must be integer device ids, got dtype float64"):
        C.all_reduce(sw4, nbytes=8, ranks=[0.0, 1.0])


@pytest.mark.parametrize("root", [4, 99, -1])
@pytest.mark.parametrize("call", [
    lambda c, d, r: C.broadcast(c, d, root=r),
    lambda c, d, r: C.broadcast(c, nbytes=64, root=r, algorithm="scatter_allgather"),
    lambda c, d, r: C.reduce(c, d, root=r),
    lambda c, d, r: C.scatter(c, d[0], root=r),
    lambda c, d, r: C.gather(c, d, root=r),
])
def test_root_out_of_range(sw4, data4, root, call):
    with pytest.raises(ValueError, match=rf"root {root} is outside the ranks 0\.\.3"):
        call(sw4, data4, root)


@pytest.mark.parametrize("call", [
    lambda c, d: C.broadcast(c, nbytes=64, root=1.5),
    lambda c, d: C.broadcast(c, d, root=1.5),
    lambda c, d: C.reduce(c, nbytes=64, root=1.5),
    lambda c, d: C.scatter(c, d[0], root=1.5),
    lambda c, d: C.gather(c, d, root=1.5),
])
def test_root_not_an_integer(sw4, data4, call):
    """Regression: root=1.5 used to pass the range check: size-only runs succeeded
    silently, data runs failed with numpy's 'list indices must be integers'."""
    with pytest.raises(TypeError, match=r"root"):
        call(sw4, data4)


# ----------------------------------------------------------------------------- algorithm limits
@pytest.mark.parametrize("p", [3, 5, 6, 12])
def test_rh_rd_need_power_of_two(p):
    c = VirtualCluster(Switch(p, NVLINK4))
    with pytest.raises(ValueError, match=rf"p must be a power of two for recursive halving, got p={p}"):
        C.reduce_scatter(c, nbytes=64, algorithm="rh")
    with pytest.raises(ValueError, match=r"power of two"):
        C.reduce_scatter(c, [np.zeros(p)] * p, algorithm="rh")
    with pytest.raises(ValueError, match=rf"p must be a power of two for recursive doubling, got p={p}"):
        C.all_gather(c, nbytes=64, algorithm="rd")
    with pytest.raises(ValueError, match=r"power of two"):
        t_reduce_scatter("rh", p, 1e6, 1e-6, 1e9)
    with pytest.raises(ValueError, match=r"power of two"):
        t_all_gather("rd", p, 1e6, 1e-6, 1e9)


def test_rh_with_ranks_subset_not_power_of_two(sw4):
    with pytest.raises(ValueError, match=r"power of two.*p=3"):
        C.reduce_scatter(sw4, nbytes=64, algorithm="rh", ranks=[0, 1, 2])


@pytest.mark.parametrize("p", [3, 6, 12])
def test_crossover_rd_ring_non_power_of_two(p):
    with pytest.raises(ValueError, match=rf"power of two .* got p={p}"):
        cost.crossover_rd_ring(p, 2e-6, 450e9)


@pytest.mark.parametrize("topo", [Ring(4, NVLINK4), Ring(4, NVLINK4, bidirectional=False),
                                  Torus((2, 2), NVLINK4)])
def test_innet_needs_a_switch(topo):
    c = VirtualCluster(topo)
    with pytest.raises(ValueError, match=r"in-network reduction needs a switch"):
        C.all_reduce(c, nbytes=64, algorithm="innet")
    with pytest.raises(ValueError, match=r"needs a switch"):
        C.all_reduce(c, [np.zeros(4)] * 4, algorithm="sharp")


def test_hierarchical_needs_two_level(sw4, ring4, data4):
    with pytest.raises(ValueError, match=r"hierarchical all-reduce needs a TwoLevel topology, got Switch"):
        C.all_reduce(sw4, data4, algorithm="hierarchical")
    with pytest.raises(ValueError, match=r"needs a TwoLevel topology, got Ring"):
        C.all_reduce(ring4, nbytes=64, algorithm="hierarchical")
    with pytest.raises(ValueError, match=r"hierarchical all-to-all needs a TwoLevel topology"):
        C.all_to_all(sw4, data4, algorithm="hierarchical")


def test_hierarchical_needs_all_devices_in_order():
    c = _two_level()
    with pytest.raises(ValueError, match=r"natural order \(ranks=None\)"):
        C.all_reduce(c, nbytes=64, algorithm="hierarchical", ranks=[1, 0, 2, 3])
    with pytest.raises(ValueError, match=r"natural order \(ranks=None\)"):
        C.all_to_all(c, nbytes=64, algorithm="hierarchical", ranks=[0, 1])
    with pytest.raises(ValueError, match=r"inter_algorithm 'innet' cannot run inside the hierarchical all-reduce"):
        C.all_reduce(c, nbytes=64, algorithm="hierarchical", inter_algorithm="innet")
    with pytest.raises(ValueError, match=r"unknown all_reduce algorithm 'foo'; valid names"):
        C.all_reduce(c, nbytes=64, algorithm="hierarchical", inter_algorithm="foo")


def test_torus_allreduce_needs_a_torus(sw4, data4):
    with pytest.raises(ValueError, match=r"torus all-reduce needs a Torus topology, got Switch"):
        C.all_reduce(sw4, data4, algorithm="torus")
    c = VirtualCluster(Torus((2, 2), NVLINK4))
    with pytest.raises(ValueError, match=r"natural order"):
        C.all_reduce(c, nbytes=64, algorithm="torus", ranks=[3, 2, 1, 0])


# ----------------------------------------------------------------------------- all_to_all_v
def test_all_to_all_v_counts_shape(sw4):
    with pytest.raises(ValueError, match=r"counts must have shape \(4, 4\), got \(3, 3\)"):
        C.all_to_all_v(sw4, counts=np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"counts must have shape \(4, 4\), got \(16,\)"):
        C.all_to_all_v(sw4, counts=np.ones(16))
    with pytest.raises(ValueError, match=r"counts must have shape \(2, 2\), got \(4, 4\)"):
        C.all_to_all_v(sw4, counts=np.ones((4, 4)), ranks=[0, 1])


@pytest.mark.parametrize("bad", [-1, np.nan, np.inf])
def test_all_to_all_v_negative_or_non_finite_counts(sw4, bad):
    counts = np.ones((4, 4))
    counts[1, 2] = bad
    with pytest.raises(ValueError, match=r"counts must be finite and >= 0"):
        C.all_to_all_v(sw4, counts=counts)
    counts_i = np.ones((4, 4), int)
    counts_i[0, 3] = -2
    with pytest.raises(ValueError, match=r"counts must be finite and >= 0"):
        C.all_to_all_v(sw4, [np.zeros(4)] * 4, counts=counts_i)


def test_all_to_all_v_data_disagrees_with_counts(sw4):
    with pytest.raises(ValueError, match=r"rank 0 holds 5 items but counts\[0\] sums to 4"):
        C.all_to_all_v(sw4, [np.zeros(5)] * 4, counts=np.ones((4, 4), int))
    with pytest.raises(TypeError, match=r"counts must be integers when data is given"):
        C.all_to_all_v(sw4, [np.zeros(4)] * 4, counts=np.ones((4, 4)))
    with pytest.raises(TypeError, match=r"rank 3 holds dtype float32, rank 0 holds float64"):
        C.all_to_all_v(sw4, [np.zeros(4)] * 3 + [np.zeros(4, np.float32)], counts=np.ones((4, 4), int))


def test_all_to_all_v_counts_not_numbers(sw4):
    """Regression: string counts used to fail inside np.isfinite with numpy's ufunc message."""
    with pytest.raises((TypeError, ValueError), match=r"counts"):
        C.all_to_all_v(sw4, counts=[["a"] * 4] * 4)


# ----------------------------------------------------------------------------- chain chunks
@pytest.mark.parametrize("chunks", [0, -1, 1.5, "2"])
def test_chain_broadcast_bad_chunks(sw4, data4, chunks):
    with pytest.raises(ValueError, match=rf"chunks must be an integer >= 1, got {chunks!r}".replace(".", r"\.")):
        C.broadcast(sw4, data4, algorithm="chain", chunks=chunks)
    with pytest.raises(ValueError, match=r"chunks must be an integer >= 1"):
        C.broadcast(sw4, nbytes=64, algorithm="chain", chunks=chunks)


@pytest.mark.parametrize("chunks", [float("inf"), float("nan"), "8"])
def test_chain_broadcast_non_finite_chunks(sw4, chunks):
    """Regression: inf gave OverflowError, nan a ValueError without 'chunks', None a
    TypeError from int(): none of them said that chunks was wrong."""
    with pytest.raises((TypeError, ValueError), match=r"chunks"):
        C.broadcast(sw4, nbytes=64, algorithm="chain", chunks=chunks)


def test_cost_chain_chunks_zero():
    with pytest.raises(ValueError, match=r"chunks must be an integer >= 1, got 0"):
        t_broadcast("chain", 4, 1e6, 1e-6, 1e9, chunks=0)
    with pytest.raises(ValueError, match=r"chain optimum needs p >= 3"):
        cost.chain_broadcast_optimum(2, 1e6, 1e-6, 1e9)


def test_other_cost_inputs():
    with pytest.raises(ValueError, match=r"unknown op 'foo'; valid: all_reduce"):
        busbw("foo", 1e6, 1e-3, 4)
    with pytest.raises(ValueError, match=r"time must be > 0 seconds"):
        algbw(1e6, 0.0)
    with pytest.raises(ValueError, match=r"coincide for p < 4"):
        cost.crossover_rd_ring(2, 1e-6, 1e9)
    with pytest.raises(ValueError, match=r"hop_alpha must be >= 0"):
        Torus((2, 2), NVLINK4, hop_alpha=-1)
    with pytest.raises(ValueError, match=r"oversubscription must be >= 1"):
        TwoLevel(2, 2, intra=NVLINK4, inter=IB_NDR, oversubscription=0.5)
    assert math.isfinite(cost.p2p_time(0, 0.0, 1.0))  # the boundary values are valid


# ----------------------------------------------------------------------------- issue 17 §2, case by case
import commbook.compression as cz  # noqa: E402
from commbook import llm, units  # noqa: E402
from commbook.collectives import crossover, t_allreduce_hierarchical, t_allreduce_tiers  # noqa: E402
from commbook.double_tree import double_tree_optimum, round_loads  # noqa: E402
from commbook.hardware import Chip  # noqa: E402
from commbook.measure import nccl_model  # noqa: E402
from commbook.overlap import hidden_fraction_equal_layers  # noqa: E402

_HOP_INF = dict(hop_alpha=math.inf)

# (call, exception type, the parameter the message must name).  Each returned a wrong
# number or raised a bare internal error before (issue 17 §2 lists them).
ISSUE_17_REFUSED = [
    (lambda: llm.tp_message_bytes(bytes_per_value=-2), ValueError, "bytes_per_value"),          # was -16384
    (lambda: llm.kv_bytes(bytes_per_value=math.nan), ValueError, "bytes_per_value"),            # was nan
    (lambda: llm.tp_message_bytes(bytes_per_value="2"), TypeError, "bytes_per_value"),          # was a str
    (lambda: llm.decode_step(bytes_per_param="2"), TypeError, "bytes_per_param"),               # was MemoryError
    (lambda: llm.DenseModel("m", -3, 64, 4, 2, 16, 128, 1000, "s"), ValueError, "n_layers"),     # negative time
    (lambda: Chip("c", -1, math.nan, 8e10, "s"), ValueError, "bf16_flops"),                     # accepted
    (lambda: Chip("c", 1e15, math.nan, 8e10, "s"), ValueError, "hbm_bandwidth"),
    (lambda: Ring(4, NVLINK4, **_HOP_INF), ValueError, "hop_alpha"),                            # every time nan
    (lambda: Torus((2, 2), NVLINK4, **_HOP_INF), ValueError, "hop_alpha"),
    (lambda: units.fmt_rate(math.nan), ValueError, "bytes_per_s"),                              # "nan GB/s"
    (lambda: units.fmt_rate(-5e9), ValueError, "bytes_per_s"),
    (lambda: units.fmt_time(math.nan), ValueError, "t"),
    (lambda: units.fmt_bytes(-1), ValueError, "n"),
    (lambda: cz.sparse_ratio(1000, 10, value_bytes=-3), ValueError, "value_bytes"),             # was 400
    (lambda: cz.Threshold("8"), TypeError, "threshold"),                                        # accepted
    (lambda: cost.allreduce_torus([], 1e6, 1e-6, 1e9), ValueError, "dims"),                     # was 0.0
    (lambda: cost.allreduce_torus_rings([], 1e6, 1e-6, 1e9), ValueError, "dims"),
    (lambda: ring_order([]), ValueError, "dims"),
    (lambda: round_loads(8, chunks=0), ValueError, "chunks"),
    (lambda: round_loads(8, chunks=1.5), ValueError, "chunks"),
    (lambda: Link("l", 2e-6, 5e10, "s", alpha_range=(5, -1)), ValueError, "alpha_range"),
    (lambda: t_broadcast("chain", 1, 1e6, 1e-6, 1e9, chunks=-1), ValueError, "chunks"),         # p = 1: was 0.0
    (lambda: cost.broadcast_chain(1, 1e6, 1e-6, 1e9, chunks=-1), ValueError, "chunks"),
    (lambda: cost.allreduce_parameter_server(1, 1e6, 1e-6, 1e9, servers=100), ValueError, "servers"),
    (lambda: t_formula("parameter_server", 1, 1e6, 1e-6, 1e9, servers=100), ValueError, "servers"),
    (lambda: cost.allreduce_rabenseifner(1, 1e6, 1e-6, 1e9, order="bogus"), ValueError, "order"),
    (lambda: t_formula("rabenseifner", 1, 1e6, 1e-6, 1e9, order="bogus"), ValueError, "order"),
    (lambda: crossover("ring", "rd", 8, 2e-6, 50e9, n_max=0), ValueError, "n_max"),              # math domain
    (lambda: crossover("ring", "rd", 8, 2e-6, 50e9, n_max=math.inf), ValueError, "n_max"),       # OverflowError
    (lambda: cost.allreduce_ring(8, 10**400, 1e-6, 1e9), ValueError, "n"),                      # OverflowError
    (lambda: cost.allreduce_ring(10**400, 1e6, 1e-6, 1e9), ValueError, "p"),
    (lambda: cz.onebit_adam_ratio(0, math.inf), ValueError, "bits"),                            # ZeroDivisionError
    (lambda: cost.allreduce_hierarchical(2, 4, 1e6, "NVLink", IB_NDR), TypeError, "intra"),     # AttributeError
    (lambda: t_allreduce_hierarchical(2, 4, 1e6, NVLINK4, None), TypeError, "inter"),
    (lambda: llm.tp_comm_time(tp=16, intra=object()), TypeError, "intra"),
    (lambda: t_allreduce_tiers(None, 1e6), TypeError, "topology"),
    (lambda: llm.kv_transfer_time(link="IB"), TypeError, "link"),
    (lambda: Switch(4, "IB"), TypeError, "link"),
    (lambda: nccl_model.predict_nccl(None, "all_reduce", [1e6]), TypeError, "node"),
    (lambda: nccl_model.choose(node=None, collective="all_reduce", nbytes=1e6), TypeError, "node"),
    (lambda: cost.LogP(L="1", o=1e-6), TypeError, "L"),                                         # numpy/Python TypeError
    (lambda: algbw(1e6, time="1"), TypeError, "time"),
    (lambda: Ring(4, NVLINK4, hop_alpha="1"), TypeError, "hop_alpha"),
    (lambda: C.all_reduce(VirtualCluster(Switch(4, NVLINK4)), nbytes=np.array([5.0, 6.0])), TypeError, "nbytes"),
    (lambda: C.all_reduce(VirtualCluster(Switch(4, NVLINK4)), nbytes=8, op=["sum"]), TypeError, "op"),
    (lambda: cost.all_to_all_bounds(8, 1e6, beta_port=-1, bisection_bw=1e9), ValueError, "beta_port"),  # said beta
    (lambda: cost.all_to_all_bounds(8, 1e6, beta_port=1e9, bisection_bw=0), ValueError, "bisection_bw"),
    (lambda: llm.tp_comm_time(bytes_per_value=-1), ValueError, "bytes_per_value"),              # said "n ... -8192"
    (lambda: hidden_fraction_equal_layers(8, layer_time=-1), ValueError, "layer_time"),         # said backward[0]
]


@pytest.mark.parametrize("call, exc, param", ISSUE_17_REFUSED,
                         ids=[f"{i}-{p}" for i, (_, _, p) in enumerate(ISSUE_17_REFUSED)])
def test_issue_17_cases_refused_by_name(call, exc, param):
    with pytest.raises(exc) as info:
        call()
    assert re.search(rf"(?<![A-Za-z0-9_]){re.escape(param)}(?![A-Za-z0-9_])", str(info.value)), str(info.value)
    assert type(info.value) in (ValueError, TypeError)


def test_issue_17_numpy_scalars_and_odd_but_valid_values():
    """The cases of §2 that must give a result: numpy scalars, 0-d arrays, np.int64 dims."""
    assert units.fmt_time(np.float32(1e-3)) == "1 ms"                     # was TypeError
    assert units.fmt_time(np.int64(3)) == "3 s"                           # was TypeError
    assert units.fmt_time(np.array(2e-6)) == "2 µs"
    assert units.fmt_rate(np.float32(450e9)) == "450 GB/s"
    assert units.fmt_bytes(np.int64(8_000_000)) == "8 MB"
    assert units.fmt_bytes(123456, digits=1) == "100 KB"                  # was "1e+02 KB"
    assert units.fmt_bytes(5e15) == "5000 TB"
    assert units.fmt_time(-2e-3) == "-2 ms"    # a signed duration (test_units_hardware asserts "-1 s")
    t = Torus(np.int64(4), NVLINK4)                                       # was a numpy TypeError
    assert t.dims == (4,) and Torus((np.int64(2), np.int32(2)), NVLINK4).p == 4
    assert Switch(np.int64(4), NVLINK4).p == 4
    assert cost.allreduce_ring(np.int64(8), np.float32(1e6), np.array(2e-6), np.float64(5e10)) == \
        pytest.approx(cost.allreduce_ring(8, 1e6, 2e-6, 5e10), rel=1e-6)
    assert isinstance(cost.allreduce_ring(8, 1e6, np.float32(2e-6), np.float32(5e10)), float)
    k, t_best = double_tree_optimum(8, 1e6, 2e-6, 1e-300)                 # was OverflowError
    assert math.isfinite(t_best) and 1 <= k <= 4096
    assert llm.tp_message_bytes(bytes_per_value=np.int64(2)) == llm.tp_message_bytes()
    assert hidden_fraction_equal_layers(np.int64(8), np.float32(1.0)) == pytest.approx(7 / 8)
    assert cz.Threshold(0.5).threshold == cz.Threshold().threshold
    c = VirtualCluster(Switch(4, NVLINK4))
    assert C.all_reduce(c, nbytes=np.array(64.0)).time == C.all_reduce(c, nbytes=64).time
    assert C.broadcast(c, nbytes=64, root=np.int64(2)).time == C.broadcast(c, nbytes=64, root=2).time


def test_issue_17_p1_still_valid():
    """At p = 1 every closed form costs 0 for valid extra parameters."""
    assert t_broadcast("chain", 1, 1e6, 1e-6, 1e9, chunks=4) == 0.0
    assert cost.allreduce_parameter_server(1, 1e6, 1e-6, 1e9, servers=1) == 0.0
    assert cost.allreduce_rabenseifner(1, 1e6, 1e-6, 1e9, order="near_first") == 0.0
