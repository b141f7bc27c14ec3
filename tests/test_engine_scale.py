"""Schedules of thousands of ranks: repeated rounds (a size-only ring pass is one round
standing for its q-1 steps) and lazily built rounds (the direct all-to-all's p shifts).
The results are those of the explicit schedules; speed and memory are measured in
benchmarks/bench_sim.py (cases d-g), not here."""
from __future__ import annotations

import numpy as np
import pytest

from commbook import cost
from commbook import collectives as C
from commbook.collectives import ring
from commbook.comm_sim import LazyRounds, Round, VirtualCluster
from commbook.hardware import Link
from commbook.topology import Switch, TwoLevel

NV = Link("NVLink", 1e-6, 450e9, "test")
IB = Link("IB", 5e-6, 50e9, "test")


def test_a_size_only_ring_pass_is_one_repeated_round():
    sched = ring.allreduce_ring(np.arange(16384)[None, :], 0.0, 1e9, True)
    assert len(sched) == 2 and [r.repeat for r in sched] == [16383, 16383]
    assert all(len(r) == 16384 for r in sched)
    explicit = ring.allreduce_ring(np.arange(8)[None, :], 0, 800, False)
    assert len(explicit) == 14 and all(r.repeat == 1 for r in explicit)


@pytest.mark.parametrize("topo", [Switch(8, NV), TwoLevel(2, 4, NV, IB), TwoLevel(3, 4, NV, IB, pxn=True)])
def test_repeated_rounds_account_like_explicit_ones(topo):
    """Time, round count, round times, bytes per rank and per link: the size-only run (one
    repeated round per pass) equals the real-data run (every step explicit)."""
    p, n = topo.p, 960
    c = VirtualCluster(topo)
    data = [np.arange(n, dtype=np.float64) + r for r in range(p)]
    real = C.all_reduce(c, data, channels=1)
    size = C.all_reduce(c, nbytes=n * 8, channels=1)
    assert size.rounds == real.rounds == 2 * (p - 1)
    np.testing.assert_allclose(size.round_times, real.round_times, rtol=1e-12)
    assert size.time == pytest.approx(real.time, rel=1e-12)
    for field in ("bytes_sent", "bytes_received", "link_bytes"):
        np.testing.assert_allclose(getattr(size, field), getattr(real, field), rtol=1e-12)
    assert sum(s.time for s in size.trace) == pytest.approx(size.time, rel=1e-12)


def test_thousands_of_ranks_equal_the_closed_forms():
    """A ring of 16,384 ranks and 8 channels on 1,024 nodes × 8 GPUs (size only) match their
    closed forms; so does the direct all-to-all of 2,048 ranks built lazily."""
    from commbook.collectives.channels import ring_time_two_level
    r = C.all_reduce(VirtualCluster(Switch(16384, IB)), nbytes=1e9)
    assert r.time == pytest.approx(cost.allreduce_ring(16384, 1e9, IB.alpha, IB.beta), rel=1e-9)
    assert r.rounds == 2 * 16383 and r.round_times.size == 2 * 16383
    topo = TwoLevel(1024, 8, NV, IB, pxn=True)
    got = C.all_reduce(VirtualCluster(topo), nbytes=1e9, channels=8).time
    assert got == pytest.approx(ring_time_two_level(topo, 1e9, 8), rel=1e-9)
    a = C.all_to_all(VirtualCluster(Switch(2048, IB)), nbytes=1e9)
    assert a.time == pytest.approx(cost.all_to_all_direct(2048, 1e9, IB.alpha, IB.beta), rel=1e-9)
    assert a.trace == []                   # a lazy schedule keeps no rounds unless traced


def test_lazy_rounds_are_kept_when_traced():
    c = VirtualCluster(Switch(4, NV))
    data = [np.arange(8, dtype=np.int64) * (r + 1) for r in range(4)]
    res = C.all_to_all(c, data, trace=True)
    assert len(res.trace) == 4 and res.trace[1].round.label.endswith("shift 1")
    rounds = LazyRounds(3, lambda i: Round.make([0], [1], 8, label=f"r{i}"))
    assert len(rounds) == 3 and rounds[-1].label == "r2" and [r.label for r in rounds[1:]] == ["r1", "r2"]
    with pytest.raises(IndexError):
        rounds[3]


def test_repeat_is_checked():
    with pytest.raises(ValueError, match="repeat"):
        Round.make([0], [1], 8, repeat=0)
    with pytest.raises(ValueError, match="repeat"):
        Round.make([0], [1], 8, repeat=1.5)
    rnd = Round.make([0], [1], 4, repeat=3, label="thrice")
    bufs = [[np.zeros(4)], [np.zeros(4)]]
    with pytest.raises(ValueError, match="size-only"):
        VirtualCluster(Switch(2, NV)).run([rnd], buffers=bufs, itemsize=8)
    with pytest.raises(ValueError, match="repeat the same"):
        Round.concat([rnd, Round.make([1], [0], 4)])
    res = VirtualCluster(Switch(2, NV)).run([rnd])
    assert res.rounds == 3 and res.time == pytest.approx(3 * (NV.alpha + 4 / NV.beta), rel=1e-12)
    assert res.bytes_sent[0] == 12
