"""commbook.overlap: the two-stream timeline against the chapter's Napkin Math 1.3,
Figure 4 (inventory B.1) and Napkin Math 1.8, and against closed forms (no overlap,
perfect overlap, and the max-plus recursion of serialized all-reduces)."""
import numpy as np
import pytest

from commbook.cost import LogP
from commbook.overlap import (all_hidden, layerwise_timeline, step_time_no_overlap,
                              step_time_perfect_overlap, transfer_beside_compute)

US = 1e-6


def test_napkin_math_1_3():
    """Backward 500 µs, L = 100 µs, o = 50 µs to start and 50 µs to finish → 600 µs."""
    lp = LogP(L=100 * US, o=50 * US)
    tl = transfer_beside_compute(500 * US, lp)
    assert tl.step_time == pytest.approx(600 * US)
    assert tl.step_time == pytest.approx(lp.overlapped(500 * US))
    assert tl.stall == 0 and tl.hidden_fraction == 1.0           # all of L is hidden
    overhead = sum(b.duration for b in tl.stream("compute") if b.kind in ("launch", "complete"))
    assert overhead == pytest.approx(2 * 50 * US)                  # 2o exposed
    # with a wire time longer than the compute, the rest of L shows
    assert transfer_beside_compute(80 * US, lp).step_time == pytest.approx(lp.overlapped(80 * US))


def _spans(blocks):
    return [(b.kind, b.label, round(b.start, 9), round(b.end, 9)) for b in blocks]


def test_figure_4():
    """Four layers of 2.4 units, all-reduces of 2.4, optimizer 2.2: the last all-reduce is
    exposed; step = backward + tail + optimizer = 9.6 + 2.4 + 2.2 = 14.2."""
    tl = layerwise_timeline([2.4] * 4, [2.4] * 4, optimizer=2.2)
    assert _spans(tl.stream("compute")) == [
        ("backward", "backward L4", 0, 2.4), ("backward", "backward L3", 2.4, 4.8),
        ("backward", "backward L2", 4.8, 7.2), ("backward", "backward L1", 7.2, 9.6),
        ("stall", "wait for all-reduce L1", 9.6, 12.0), ("optimizer", "optimizer", 12.0, 14.2)]
    assert _spans(tl.stream("network")) == [
        ("idle", "idle", 0, 2.4), ("allreduce", "all-reduce L4", 2.4, 4.8),
        ("allreduce", "all-reduce L3", 4.8, 7.2), ("allreduce", "all-reduce L2", 7.2, 9.6),
        ("allreduce", "all-reduce L1", 9.6, 12.0), ("idle", "idle", 12.0, 14.2)]
    assert tl.step_time == pytest.approx(14.2) == pytest.approx(4 * 2.4 + 2.4 + 2.2)
    assert tl.step_time == pytest.approx(step_time_perfect_overlap([2.4] * 4, [2.4] * 4, optimizer=2.2))
    assert tl.stall == pytest.approx(2.4) and tl.hidden_fraction == pytest.approx(0.75)
    assert step_time_no_overlap([2.4] * 4, [2.4] * 4, optimizer=2.2) == pytest.approx(9.6 + 9.6 + 2.2)


def test_napkin_math_1_8():
    """32 layers, 15 ms backward, 26.4 ms all-reduce each: 1,324.8 ms sequential,
    859.8 ms pipelined, 35.1% shorter."""
    b, a = [15.0] * 32, [26.4] * 32
    seq = layerwise_timeline(b, a, overlap=False).step_time
    pipe = layerwise_timeline(b, a).step_time
    assert seq == pytest.approx(480 + 32 * 26.4) == pytest.approx(1324.8)
    assert pipe == pytest.approx(480 + 26.4 + 31 * 11.4) == pytest.approx(859.8)
    assert round((1 - pipe / seq) * 100, 1) == 35.1
    assert not all_hidden(b, a)


def _maxplus(b, a, opt):
    """o = 0: the last all-reduce ends at max over i of (ready_i + Σ_{j ≥ i} a_j), the
    classic bound for jobs released at ready_i on one server, in order."""
    ready = np.cumsum(b)
    ops = [i for i, x in enumerate(a) if x is not None]
    if not ops:
        return sum(b) + opt
    end = max(ready[i] + sum(a[j] for j in ops if j >= i) for i in ops)
    return max(end, sum(b)) + opt


@pytest.mark.parametrize("seed", range(25))
def test_without_overhead_the_timeline_is_the_max_plus_closed_form(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    b = rng.uniform(0, 3, n).tolist()
    a = [None if rng.random() < 0.2 else float(x) for x in rng.uniform(0, 4, n)]
    opt = float(rng.uniform(0, 2))
    tl = layerwise_timeline(b, a, optimizer=opt)
    assert tl.step_time == pytest.approx(_maxplus(b, a, opt), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("seed", range(25))
def test_hidden_regime_equals_perfect_overlap(seed):
    """Each all-reduce fits in the next layer's backward: only the last is exposed."""
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 10))
    b = rng.uniform(0.5, 3, n).tolist()
    a = [float(rng.uniform(0, b[i + 1])) if i + 1 < n else float(rng.uniform(0, 5)) for i in range(n)]
    o, opt = float(rng.uniform(0, 0.3)), float(rng.uniform(0, 1))
    assert all_hidden(b, a)
    tl = layerwise_timeline(b, a, overhead=o, optimizer=opt)
    # independent: compute-stream work is Σb + 2n·o, plus whatever of the last wire time
    # is left after its launch (nothing runs beside it: it is the last layer's)
    expect = sum(b) + 2 * n * o + a[-1] + opt
    assert tl.step_time == pytest.approx(expect)
    assert tl.step_time == pytest.approx(step_time_perfect_overlap(b, a, overhead=o, optimizer=opt))
    assert tl.stall == pytest.approx(a[-1])


@pytest.mark.parametrize("seed", range(10))
def test_no_overlap_and_stream_invariants(seed):
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 10))
    b = rng.uniform(0, 3, n).tolist()
    a = [None if rng.random() < 0.2 else float(x) for x in rng.uniform(0, 4, n)]
    o, opt = float(rng.uniform(0, 0.5)), float(rng.uniform(0, 1))
    blocking = layerwise_timeline(b, a, overhead=o, optimizer=opt, overlap=False)
    assert blocking.step_time == pytest.approx(sum(b) + sum(2 * o + x for x in a if x is not None) + opt)
    assert blocking.step_time == pytest.approx(step_time_no_overlap(b, a, overhead=o, optimizer=opt))
    tl = layerwise_timeline(b, a, overhead=o, optimizer=opt)
    assert tl.step_time <= blocking.step_time + 1e-12
    work = sum(b) + 2 * o * sum(x is not None for x in a) + opt
    assert tl.step_time == pytest.approx(work + tl.stall)        # compute stream: work + waits
    for stream in ("compute", "network"):                          # each stream tiles [0, step]
        blocks = tl.stream(stream)
        if blocks:
            assert blocks[0].start == 0 and blocks[-1].end == pytest.approx(tl.step_time)
            assert all(x.end == pytest.approx(y.start) for x, y in zip(blocks, blocks[1:]))
    ends = {blk.label.split()[-1]: blk.end for blk in tl.stream("compute") if blk.kind == "backward"}
    for blk in tl.stream("network"):
        if blk.kind == "allreduce":                                # starts after backward + launch
            assert blk.start >= ends.get(blk.label.split()[-1], 0.0) + o - 1e-12


def test_bad_input():
    with pytest.raises(ValueError, match="allreduce has"):
        layerwise_timeline([1, 2], [1])
    with pytest.raises(ValueError, match="at least one layer"):
        layerwise_timeline([], [])
    with pytest.raises(ValueError, match=r"backward\[1\]"):
        layerwise_timeline([1, -2], [1, 1])
    with pytest.raises(TypeError, match="backward"):
        layerwise_timeline(3.0, [1])
    with pytest.raises(ValueError, match="overhead"):
        layerwise_timeline([1], [1], overhead=float("nan"))
    with pytest.raises(ValueError, match="labels"):
        layerwise_timeline([1], [1], labels=["a", "b"])
    with pytest.raises(TypeError, match="LogP"):
        transfer_beside_compute(1.0, 0.5)
    with pytest.raises(TypeError, match="overlap"):
        layerwise_timeline([1], [1], overlap=1)
