"""The engine (commbook.comm_sim) and the defects fixed in the restructure (56cac13).

Each test below that guards a fixed defect says so ("Defect: ...") and was checked to fail
on the tree before the fix (115d1c4).  The others pin documented behaviour of the engine:
the semantics of a round, what ``rounds`` counts, size-0 runs, port speed factors and
what a :class:`~commbook.comm_sim.RunResult` reports.
"""
from __future__ import annotations


import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from commbook import collectives as C
from commbook.collectives import ALGORITHMS, t_allreduce_hierarchical, t_formula
from commbook.comm_sim import Round, VirtualCluster, chunk_bounds
from commbook.hardware import IB_NDR, NVLINK4, Link
from commbook.topology import Switch, TwoLevel

NV, IB = NVLINK4, IB_NDR
NV0 = Link("NVLink 4, α = 0", 0.0, NV.beta, "test: NVLink 4 bandwidth without latency")
I64 = np.iinfo(np.int64)

# all-reduce algorithms that run on any group of ranks (not tied to a topology)
GROUP_AR = [a for a, spec in ALGORITHMS["all_reduce"].items() if spec.scope == "groups"]


def ints(p, n, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(-10**6, 10**6, n).astype(np.int64) for _ in range(p)]


# ============================================================================ hierarchical
@pytest.mark.parametrize("nodes,gpus", [(2, 2), (2, 4), (3, 2), (3, 3), (4, 8)])
def test_hierarchical_one_shot_equals_numpy(nodes, gpus):
    """Defect: all_reduce(algorithm="hierarchical", inter_algorithm="one_shot") on a
    TwoLevel with N >= 2 and G >= 2 crashed with a numpy broadcast error (the one-shot
    reduce flags were not broadcast over the G rails)."""
    c = VirtualCluster(TwoLevel(nodes, gpus, NV, IB))
    p = nodes * gpus
    for n in (1, 7, 4 * p + 3):
        x = ints(p, n, seed=n)
        want = np.sum(np.stack(x), axis=0)
        res = C.all_reduce(c, x, algorithm="hierarchical", inter_algorithm="one_shot", check=False)
        for r, out in enumerate(res.outputs):
            np.testing.assert_array_equal(out, want, err_msg=f"rank {r}")
        f = [v.astype(np.float64) / 7 for v in x]
        res = C.all_reduce(c, f, algorithm="hierarchical", inter_algorithm="one_shot", check=False)
        np.testing.assert_allclose(res.outputs[-1], np.sum(np.stack(f), axis=0), rtol=1e-12, atol=1e-6)


def test_hierarchical_closed_form_refuses_in_network_reduction():
    """Defect: t_allreduce_hierarchical(..., inter_algorithm="innet") returned a time
    for which no schedule exists (the schedule refuses innet across nodes)."""
    with pytest.raises(ValueError, match=r"inter_algorithm 'innet' cannot run inside the hierarchical"):
        t_allreduce_hierarchical(4, 8, 1e6, NV, IB, inter_algorithm="innet")
    with pytest.raises(ValueError, match=r"inter_algorithm 'innet'"):
        C.all_reduce(VirtualCluster(TwoLevel(4, 8, NV, IB)), nbytes=1e6, algorithm="hierarchical",
                     inter_algorithm="innet")


@pytest.mark.parametrize("nodes,gpus", [(2, 2), (3, 2), (4, 8), (5, 3)])
def test_hierarchical_closed_form_exists_exactly_where_a_schedule_does(nodes, gpus):
    """For every all-reduce name, the hierarchical schedule and its closed form agree on
    whether it may run across nodes, and where it may, the simulated time equals
    t_allreduce_hierarchical (rel 1e-12), size-only and on real data."""
    c = VirtualCluster(TwoLevel(nodes, gpus, NV, IB))
    p = nodes * gpus
    accepted = []
    for name in C.names("all_reduce"):
        def sim(**kw):
            return C.all_reduce(c, algorithm="hierarchical", inter_algorithm=name, **kw)
        try:
            sim(nbytes=0)
        except ValueError:
            with pytest.raises(ValueError, match=rf"inter_algorithm '{name}'"):
                t_allreduce_hierarchical(nodes, gpus, 1e6, NV, IB, inter_algorithm=name)
            continue
        accepted.append(name)
        for n in (0.0, 64e3, 12_345.0, 256e6):
            want = t_allreduce_hierarchical(nodes, gpus, n, NV, IB, inter_algorithm=name)
            assert sim(nbytes=n).time == pytest.approx(want, rel=1e-12, abs=1e-18), (name, n)
        m = gpus * 2 * 3 * 4 * 5                                   # every split divides it
        x = ints(p, m, seed=p)
        res = sim(data=x, check=False)
        assert res.time == pytest.approx(
            t_allreduce_hierarchical(nodes, gpus, m * 8, NV, IB, inter_algorithm=name), rel=1e-12)
        np.testing.assert_array_equal(res.outputs[0], np.sum(np.stack(x), axis=0))
    assert "innet" not in accepted
    assert {"ring", "rd", "rabenseifner", "tree", "naive", "one_shot", "two_shot"} <= set(accepted)


# ============================================================================ integer avg
def _py_avg(columns: list[list[int]]) -> list[int]:
    """The sum of each column with Python integers, divided by p truncating toward zero
    (ncclAvg on integers); no fixed-width arithmetic anywhere."""
    out = []
    for col in columns:
        s, p = sum(col), len(col)
        q = abs(s) // p
        out.append(q if s >= 0 else -q)
    return out


# Columns (one value per rank) whose exact sums fit in int64; several hit the minimum.
AVG_COLUMNS = [
    [I64.min, 0, 0], [I64.min, 1, 0], [I64.min, I64.max, 0], [-1, 0, 0], [-5, 0, 0],
    [7, 0, 0], [I64.min + 2, 0, 0], [I64.max, 0, 0], [I64.min // 2, I64.min // 2, 0],
]


@pytest.mark.parametrize("p", [2, 3])
def test_integer_avg_at_the_int64_minimum(p):
    """Defect: op="avg" on int64 computed sign(x)·(|x| // p); |min| overflows back to
    min, so the average of a sum equal to the int64 minimum came out positive."""
    cols = [c[:p] if p == 3 else [c[0], c[1] + c[2]] for c in AVG_COLUMNS]
    want = np.array(_py_avg(cols), dtype=np.int64)
    data = [np.array([c[r] for c in cols], dtype=np.int64) for r in range(p)]
    c = VirtualCluster(Switch(p, NV))
    for algo in GROUP_AR:
        for out in C.all_reduce(c, data, algorithm=algo, op="avg", check=False).outputs:
            np.testing.assert_array_equal(out, want, err_msg=algo)
    for algo in C.names("reduce"):
        for root in range(p):
            out = C.reduce(c, data, algorithm=algo, op="avg", root=root, check=False).outputs[root]
            np.testing.assert_array_equal(out, want, err_msg=f"reduce[{algo}] root {root}")
    b = chunk_bounds(len(cols), p, False)
    outs = C.reduce_scatter(c, data, op="avg", check=False).outputs
    for r in range(p):
        np.testing.assert_array_equal(outs[r], want[b[r]:b[r + 1]], err_msg=f"reduce_scatter rank {r}")
    # the package's own check agrees (it would raise otherwise)
    C.all_reduce(c, data, op="avg")


# ============================================================================ bad rounds
@pytest.fixture
def sw4():
    return VirtualCluster(Switch(4, NV))


def _bufs(q=4, n=4, k=1):
    return [[np.zeros(n, dtype=np.int64) for _ in range(k)] for _ in range(q)]


@pytest.mark.parametrize("field,kw", [("count", {"count": -1}), ("source offset", {"soff": -2}),
                                      ("destination offset", {"doff": -1}),
                                      ("count", {"count": float("nan")})])
def test_round_make_rejects_negative_counts_and_offsets(field, kw):
    """Defect: Round.make accepted a negative count (the engine then sliced from the end)."""
    args = {"src": [0, 1], "dst": [1, 0], "count": 2, **kw}
    with pytest.raises(ValueError, match=rf"round 'bad': every {field} must be finite and >= 0"):
        Round.make(**args, label="bad")


@pytest.mark.parametrize("src,dst,bad,which", [(0, 5, 5, "destination"), (4, 0, 4, "source"),
                                               (-1, 2, -1, "source")])
@pytest.mark.parametrize("real", [False, True])
def test_run_rejects_ranks_outside_the_schedule(sw4, src, dst, bad, which, real):
    """Defect: a message to rank 5 of 4 raised IndexError (or wrote to rank -1 silently)."""
    rnd = Round.make([0, src], [1, dst], 2, label="stray")
    with pytest.raises(ValueError, match=rf"round 'stray': {which} rank {bad} is outside the ranks 0\.\.3"):
        sw4.run([rnd], buffers=_bufs() if real else None)


def test_run_rejects_an_unknown_op(sw4):
    """Defect: an unknown op raised KeyError from the operator table."""
    with pytest.raises(ValueError, match=r"unknown op 'mean'; valid: sum, prod, min, max, avg"):
        sw4.run([Round.make(0, 1, 2)], buffers=_bufs(), op="mean")


def test_run_rejects_missing_buffers_and_regions_past_the_end(sw4):
    """Defect: a buffer index that does not exist raised IndexError; a region past the
    end of a buffer was silently truncated by numpy slicing (or broadcast error)."""
    with pytest.raises(ValueError, match=r"round 'nobuf': rank 1 has no buffer 3 \(it has 1\)"):
        sw4.run([Round.make(0, 1, 2, dbuf=3, label="nobuf")], buffers=_bufs())
    with pytest.raises(ValueError, match=r"round 'nobuf-src': rank 0 has no buffer 1 \(it has 1\)"):
        sw4.run([Round.make(0, 1, 2, sbuf=1, dbuf=0, label="nobuf-src")], buffers=_bufs())
    with pytest.raises(ValueError, match=r"round 'long': source region \[2, 5\) is past the end "
                                         r"of rank 0's buffer 0 \(4 elements\)"):
        sw4.run([Round.make(0, 1, 3, soff=2, doff=0, label="long")], buffers=_bufs())
    with pytest.raises(ValueError, match=r"round 'long-dst': destination region \[3, 5\) is past the end "
                                         r"of rank 2's buffer 0"):
        sw4.run([Round.make(1, 2, 2, soff=0, doff=3, label="long-dst")], buffers=_bufs())
    with pytest.raises(ValueError, match=r"round 'half': counts must be whole elements"):
        sw4.run([Round.make(0, 1, 1.5, label="half")], buffers=_bufs())
    # the second of several rounds is the one named
    ok = Round.make(0, 1, 2, label="fine")
    with pytest.raises(ValueError, match=r"round 'second'"):
        sw4.run([ok, Round.make(0, 1, 9, label="second")], buffers=_bufs())


# ============================================================================ round semantics
def _three(seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.integers(-100, 100, 5).astype(np.int64)] for _ in range(3)]


@pytest.mark.parametrize("op,combine", [("sum", np.add), ("max", np.maximum), ("prod", np.multiply)])
def test_writes_apply_in_message_order(op, combine):
    """Two messages of one round write rank 2's buffer: copy-then-reduce gives a ⊕ b,
    reduce-then-copy gives the copied payload (the comm_sim docstring's rule)."""
    c = VirtualCluster(Switch(3, NV))
    bufs = _three()
    a, b = bufs[0][0].copy(), bufs[1][0].copy()
    copy_a, reduce_b = (0, 2, False), (1, 2, True)
    for order, want in (((copy_a, reduce_b), combine(a, b)), ((reduce_b, copy_a), a)):
        bufs = _three()
        src, dst, red = zip(*order)
        c.run([Round.make(list(src), list(dst), 5, reduce=list(red))], buffers=bufs, op=op)
        np.testing.assert_array_equal(bufs[2][0], want, err_msg=f"{op}: order {order}")
        np.testing.assert_array_equal(bufs[0][0], a)               # the sources are untouched
        np.testing.assert_array_equal(bufs[1][0], b)


def test_reads_see_the_state_at_the_start_of_the_round():
    c = VirtualCluster(Switch(3, NV))
    start = [b[0].copy() for b in _three()]
    # swap 0 <-> 1 in one round
    bufs = _three()
    c.run([Round.make([0, 1], [1, 0], 5)], buffers=bufs)
    np.testing.assert_array_equal(bufs[0][0], start[1])
    np.testing.assert_array_equal(bufs[1][0], start[0])
    # a chain 0 -> 1 -> 2 in one round moves each value one step only
    bufs = _three()
    c.run([Round.make([0, 1], [1, 2], 5)], buffers=bufs)
    np.testing.assert_array_equal(bufs[2][0], start[1])
    np.testing.assert_array_equal(bufs[1][0], start[0])
    # a pairwise exchange that reduces on both sides leaves both with a + b
    bufs = _three()
    c.run([Round.make([0, 1], [1, 0], 5, reduce=True)], buffers=bufs)
    np.testing.assert_array_equal(bufs[0][0], start[0] + start[1])
    np.testing.assert_array_equal(bufs[1][0], start[0] + start[1])
    # the same with trace=True: one state per round, the last equals the buffers
    bufs = _three()
    res = c.run([Round.make([0, 1], [1, 2], 5), Round.make(2, 0, 5)], buffers=bufs, trace=True)
    assert len(res.trace) == 2
    np.testing.assert_array_equal(res.trace[0].state[2][0], start[1])
    np.testing.assert_array_equal(res.trace[1].state[0][0], start[1])


# ============================================================================ chunk_bounds
@settings(max_examples=300, deadline=None)
@given(n=st.integers(0, 10**7), parts=st.integers(1, 200))
def test_chunk_bounds_balanced_and_spread(n, parts):
    """Chunk sizes are floor(n/parts) or ceil(n/parts) and cover n; the larger chunks are
    spread out: every prefix of j chunks holds within one item of its share n·j/parts."""
    b = chunk_bounds(n, parts, False)
    sizes = np.diff(b)
    assert b[0] == 0 and b[-1] == n and sizes.size == parts
    assert set(sizes.tolist()) <= {n // parts, -(-n // parts)}
    j = np.arange(parts + 1)
    assert np.all(np.abs(b * parts - n * j) < parts)        # |b_j - n·j/parts| < 1


def test_chunk_bounds_documented_examples():
    sizes = lambda n, k: np.diff(chunk_bounds(n, k, False)).tolist()
    assert sizes(10, 4) == [2, 3, 2, 3]                       # interleaved, not "larger last"
    assert sizes(7, 3) == [2, 2, 3] and sizes(8, 3) == [2, 3, 3] and sizes(5, 4) == [1, 1, 1, 2]
    assert sizes(3, 5) == [0, 1, 0, 1, 1]
    np.testing.assert_allclose(np.diff(chunk_bounds(10.0, 4, True)), [2.5] * 4)
    both = chunk_bounds(np.array([10, 7]), 4, False)          # one split per entry
    assert both.shape == (2, 5) and np.diff(both[1]).tolist() == [1, 2, 2, 2]


# ============================================================================ rounds, α, size 0
@pytest.mark.parametrize("p", [2, 3, 5, 8])
def test_size_zero_collectives_pay_alpha_per_round(p):
    """A size-only run of 0 bytes: every round that crosses devices costs α exactly
    (a switch has no hop latency), so time == rounds·α; the ring has 2(p-1) rounds."""
    c = VirtualCluster(Switch(p, NV))
    for algo in GROUP_AR:
        res = C.all_reduce(c, nbytes=0, algorithm=algo)
        assert res.rounds >= 1, algo
        assert res.time == pytest.approx(res.rounds * NV.alpha, rel=1e-12), algo
    assert C.all_reduce(c, nbytes=0).rounds == 2 * (p - 1)
    for res in (C.broadcast(c, nbytes=0), C.reduce(c, nbytes=0), C.all_gather(c, nbytes=0),
                C.reduce_scatter(c, nbytes=0), C.all_to_all(c, nbytes=0)):
        assert res.time == pytest.approx(res.rounds * NV.alpha, rel=1e-12) and res.rounds >= 1


def test_rounds_count_rounds_that_cross_devices():
    """Defect: rounds counted rounds with a positive time, so with α = 0 a size-0 ring
    all-reduce reported 0 rounds; it has 2(p-1) rounds that cross devices."""
    c = VirtualCluster(Switch(8, NV0))
    res = C.all_reduce(c, nbytes=0)
    assert res.time == 0 and res.rounds == 14
    # local copies only: free and not counted
    bufs = [[np.arange(4), np.zeros(4, dtype=np.int64)] for _ in range(3)]
    local = VirtualCluster(Switch(3, NV)).run([Round.make([0, 1, 2], [0, 1, 2], 4, sbuf=0, dbuf=1)],
                                              buffers=bufs)
    assert local.rounds == 0 and local.time == 0 and local.round_times.tolist() == [0.0]
    assert all(np.array_equal(b[1], np.arange(4)) for b in bufs)


@pytest.mark.parametrize("topo", [Switch(8, NV), TwoLevel(2, 4, NV, IB)])
def test_in_network_reduction_records_no_link_bytes(topo):
    res = C.all_reduce(VirtualCluster(topo), nbytes=1e6, algorithm="innet")
    assert not res.link_bytes.any()
    np.testing.assert_allclose(res.bytes_sent, 1e6)
    np.testing.assert_allclose(res.bytes_received, 1e6)
    assert res.rounds == 1
    if isinstance(topo, Switch):
        assert res.time == pytest.approx(t_formula("innet", 8, 1e6, NV.alpha, NV.beta), rel=1e-12)


# ============================================================================ port speed
def test_a_straggler_at_two_thirds_makes_the_ring_one_and_a_half_times_slower():
    """Every round of the ring moves n/p through every port; one port at 2/3 of β makes
    every round 3/2 as long (α = 0, so only bandwidth counts)."""
    nominal = C.all_reduce(VirtualCluster(Switch(8, NV0)), nbytes=1e9).time
    assert nominal == pytest.approx(t_formula("ring", 8, 1e9, 0.0, NV.beta), rel=1e-12)
    slow = VirtualCluster(Switch(8, NV0), speed={3: 2 / 3})
    assert C.all_reduce(slow, nbytes=1e9).time == pytest.approx(1.5 * nominal, rel=1e-12)
    as_list = VirtualCluster(Switch(8, NV0), speed=[1, 1, 1, 2 / 3, 1, 1, 1, 1])
    assert C.all_reduce(as_list, nbytes=1e9).time == pytest.approx(1.5 * nominal, rel=1e-12)
    assert "speed={3: 0.666" in repr(slow)


def test_faster_ports_make_the_ring_faster():
    """The docstring accepts any finite factor > 0; all ports at 2x β halve the ring's time
    at α = 0 (and one fast port alone changes nothing: the others still bound each round)."""
    nominal = C.all_reduce(VirtualCluster(Switch(8, NV0)), nbytes=1e9).time
    fast = VirtualCluster(Switch(8, NV0), speed=[2.0] * 8)
    assert C.all_reduce(fast, nbytes=1e9).time == pytest.approx(nominal / 2, rel=1e-12)


@pytest.mark.parametrize("speed,match", [
    ({3: 0}, r"speed factor of device 3 must be a finite number > 0, got 0"),
    ({3: -1.0}, r"speed factor of device 3 must be a finite number > 0, got -1\.0"),
    ({5: float("nan")}, r"speed factor of device 5 must be a finite number > 0, got nan"),
    ({2: float("inf")}, r"speed factor of device 2 must be a finite number > 0"),
    ({1: "fast"}, r"speed factor of device 1 must be a finite number > 0"),
    ({1: True}, r"speed factor of device 1"),
    ([1.0] * 7, r"speed needs one factor per device \(8\), got 7"),
    ([1.0] * 3 + [0.0] + [1.0] * 4, r"speed factor of device 3"),
    ({8: 1.0}, r"device 8 is outside the topology"),
    ({-1: 1.0}, r"device -1 is outside the topology"),
])
def test_bad_speed_factors(speed, match):
    with pytest.raises(ValueError, match=match):
        VirtualCluster(Switch(8, NV), speed=speed)


# ============================================================================ RunResult
# nccl-tests, doc/PERFORMANCE.md, "Summary": busbw = algbw x a factor per collective,
# with n the number of ranks.  Stated here from that document, not from the package.
NCCL_TESTS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1.0,
    "reduce": lambda n: 1.0,
    "all_to_all": lambda n: (n - 1) / n,
}


@pytest.mark.parametrize("p", [2, 5, 8])
def test_algbw_and_busbw_follow_nccl_tests(p):
    c = VirtualCluster(Switch(p, NV))
    m = 3 * p                                                   # float32 elements per rank
    data = [np.ones(m, np.float32) for _ in range(p)]
    runs = {name: getattr(C, name)(c, data, check=False) for name in NCCL_TESTS_FACTOR}
    # the size nccl-tests reports: the buffer per rank; for all-gather the gathered output
    for name, res in runs.items():
        want_size = m * 4 * (p if name == "all_gather" else 1)
        assert (res.collective, res.p, res.nbytes) == (name, p, want_size)
        assert res.algbw == pytest.approx(want_size / res.time, rel=1e-12)
        assert res.busbw == pytest.approx(res.algbw * NCCL_TESTS_FACTOR[name](p), rel=1e-12), name


@pytest.mark.parametrize("p", [2, 3, 8, 64])
def test_busbw_of_the_ring_is_the_link_bandwidth(p):
    """PERFORMANCE.md: the bus bandwidth "should reflect the speed of the hardware
    bottleneck".  Ring schedules at α = 0 are limited by the port alone: busbw == β."""
    c = VirtualCluster(Switch(p, NV0))
    for res in (C.all_reduce(c, nbytes=1e9), C.reduce_scatter(c, nbytes=1e9),
                C.all_gather(c, nbytes=1e9), C.all_to_all(c, nbytes=1e9)):
        assert res.busbw == pytest.approx(NV.beta, rel=1e-12), res.collective


def test_run_result_repr_summary_and_plot():
    c = VirtualCluster(Switch(8, NV))
    res = C.all_reduce(c, [np.arange(64.0)] * 8, trace=True, check=False)
    text = repr(res)
    assert "all_reduce[ring]" in text and "p=8" in text and "rounds=14" in text
    assert "\n" not in text and "array" not in text and len(text) < 120
    bc = C.broadcast(c, nbytes=8e6, algorithm="flat", root=2)   # root 2's port sends 7 copies
    summary = bc.summary()
    assert "busiest resource: port2.out" in summary and "broadcast[flat]" in summary
    assert "algbw" in summary and "busbw" in summary
    ax = res.plot()
    assert isinstance(ax, matplotlib.axes.Axes)
    assert len(ax.patches) == len(res.round_times) == 14
    assert [t.get_text() for t in ax.get_yticklabels()] == [s.round.label for s in res.trace]
    widths = sorted(p.get_width() for p in ax.patches)
    np.testing.assert_allclose(widths, sorted(res.round_times))
    import matplotlib.pyplot as plt
    plt.close(ax.figure)
