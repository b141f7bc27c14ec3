"""commbook.overlap, second part: PyTorch DDP's bucketing rule (read from PyTorch's source,
see the constants' docs), bucket timelines against the max-plus closed form, the bucket-cap
sweep against the chapter's "5–10 MB" and "50–100 MB" (§1.8.2), the hidden share for L equal
layers (§1.8.3) and the single-node 70B check that ends §1.8 (inventory C.2, flag F21)."""
import numpy as np
import pytest

from commbook.book.ch1.inputs import SINGLE_NODE
from commbook.overlap import (DDP_FIRST_BUCKET_BYTES, FEW_LARGE_LAYERS, MANY_SMALL_LAYERS, SWEEP_CAPS,
                              ModelShape, best_bucket_cap, bucket_cap_sweep, bucket_timeline,
                              ddp_bucket_assignment, hidden_fraction_equal_layers, layerwise_timeline,
                              ring_allreduce_cost, single_node_check)
from commbook.parallelism import DDP_BUCKET_CAP_BYTES

MiB, MB = 2**20, 1e6


def test_pytorch_constants():
    # reducer.hpp: kDefaultFirstBucketBytes = 1024 * 1024, kDefaultBucketBytesCap = 25 * 1024 * 1024
    assert DDP_FIRST_BUCKET_BYTES == 1024 * 1024
    assert DDP_BUCKET_CAP_BYTES == 25 * 1024 * 1024


SIZES = [int(x * MiB) for x in (0.5, 0.75, 10, 20, 3, 30, 2, 0.25)]


def test_bucket_boundaries_at_construction():
    """Definition order, limits [1 MiB, 25 MiB, 25 MiB, ...], a bucket closes once it reaches
    its limit: {0.5, 0.75} = 1.25 ≥ 1; {10, 20} = 30 ≥ 25; {3, 30} = 33 ≥ 25; {2, 0.25} is
    left open.  The list is then reversed: the 1 MiB bucket is reduced last."""
    assert ddp_bucket_assignment(SIZES, rebuilt=False, find_unused_parameters=True) == [[6, 7], [4, 5], [2, 3], [0, 1]]


def test_bucket_boundaries_after_rebuild():
    """Gradient-ready order (7, 6, …, 0): {0.25, 2} = 2.25 ≥ 1; {30} ≥ 25; {3, 20, 10} = 33;
    {0.75, 0.5} left open.  The 1 MiB-limited bucket is the first reduced."""
    assert ddp_bucket_assignment(SIZES) == [[7, 6], [5], [4, 3, 2], [1, 0]]


def test_buckets_can_exceed_the_cap():
    """Not "close before the tensor that would overflow": PyTorch adds first, then compares
    with >=, so 10 + 20 MiB share a 30 MiB bucket and a 40 MiB tensor joins the open one."""
    sizes = [2 * MiB, 10 * MiB, 20 * MiB, 5 * MiB, 40 * MiB]
    buckets = ddp_bucket_assignment(sizes, rebuilt=False, find_unused_parameters=True)
    assert buckets == [[3, 4], [1, 2], [0]]
    assert sum(sizes[i] for i in buckets[0]) == 45 * MiB > DDP_BUCKET_CAP_BYTES
    assert ddp_bucket_assignment([MiB] * 3, rebuilt=False, find_unused_parameters=True) == [[1, 2], [0]]   # exactly 1 MiB closes


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("rebuilt", [False, True])
def test_buckets_follow_the_greedy_specification(seed, rebuilt):
    """Checked from the specification, not the code: the buckets partition the parameters into
    runs of the walk order; every bucket but the last walked reaches its limit, and would not
    without its last tensor; the last walked one stays below the next limit."""
    rng = np.random.default_rng(seed)
    sizes = [int(x) for x in rng.integers(1, 12 * MiB, int(rng.integers(1, 60)))]
    first, cap = int(rng.integers(1, 4 * MiB)), int(rng.integers(4 * MiB, 40 * MiB))
    buckets = ddp_bucket_assignment(sizes, cap, first, rebuilt=rebuilt, find_unused_parameters=not rebuilt)
    walk = list(range(len(sizes)))[::-1] if rebuilt else list(range(len(sizes)))
    walked = buckets if rebuilt else buckets[::-1]
    assert [i for b in walked for i in b] == walk
    for j, b in enumerate(walked):
        limit = first if j == 0 else cap
        total = sum(sizes[i] for i in b)
        if j < len(walked) - 1:
            assert total >= limit and total - sizes[b[-1]] < limit
        else:
            assert total - sizes[b[-1]] < limit


def _maxplus(b_ready_order, wire):
    """o = 0: the last all-reduce ends at max_i (ready_i + Σ_{j≥i} a_j) (one server, in order)."""
    ready = np.cumsum(b_ready_order)
    ops = [i for i, a in enumerate(wire) if a is not None]
    end = max(ready[i] + sum(wire[j] for j in ops if j >= i) for i in ops)
    return max(end, ready[-1])


@pytest.mark.parametrize("seed", range(10))
def test_bucket_timeline_is_the_max_plus_closed_form(seed):
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(2, 40))
    sizes = [int(x) for x in rng.integers(1, 6 * MiB, n)]
    back = rng.uniform(0, 2e-3, n).tolist()
    cost = ring_allreduce_cost(8)
    plan = bucket_timeline(sizes, back, cost, bucket_cap=int(rng.integers(MiB, 20 * MiB)))
    ready = list(range(n))[::-1]
    wire = [None] * n
    for bucket in plan.buckets:
        wire[max(ready.index(i) for i in bucket)] = cost(sum(sizes[i] for i in bucket))
    assert plan.step_time == pytest.approx(_maxplus([back[i] for i in ready], wire), rel=1e-12)
    assert plan.bucket_bytes == tuple(sum(sizes[i] for i in b) for b in plan.buckets)
    assert sum(plan.bucket_bytes) == sum(sizes)


def test_one_bucket_hides_nothing():
    sizes, back = [MiB] * 10, [1e-3] * 10
    plan = bucket_timeline(sizes, back, lambda n: n / 1e9, bucket_cap=10**12, first_bucket=10**12)
    assert len(plan.buckets) == 1
    assert plan.step_time == pytest.approx(10e-3 + 10 * MiB / 1e9)
    assert plan.timeline.hidden_fraction == 0


def test_sweep_has_interior_optima_where_the_chapter_says():
    """Many small layers: the best cap is 5 MiB (inside "5–10 MB"); few large layers: 100 MiB
    (the top of "50–100 MB"); both strictly better than the smallest and largest caps."""
    best = {}
    for shape in (MANY_SMALL_LAYERS, FEW_LARGE_LAYERS):
        sweep = bucket_cap_sweep(shape)
        cap, plan = best_bucket_cap(sweep)
        assert plan.step_time < sweep[0][1].step_time and plan.step_time < sweep[-1][1].step_time
        assert cap not in (SWEEP_CAPS[0], SWEEP_CAPS[-1])
        best[shape.name] = (cap, plan)
    small, large = best["many small layers"], best["few large layers"]
    assert 5 * MB <= small[0] <= 10 * MB and small[0] == 5 * MiB
    assert 50 * MB <= large[0] / 1.05 <= 100 * MB and large[0] == 100 * MiB
    assert large[0] >= 10 * small[0]


def test_large_layer_optimum_on_a_fine_grid_is_just_above_100_mb():
    """Finer caps move the large-layer optimum to 120 MiB (126 MB), above the chapter's range,
    with the step time within 0.3 % from 104 to 192 MiB: the range is flat."""
    sweep = bucket_cap_sweep(FEW_LARGE_LAYERS, [int(x * MiB) for x in range(40, 260, 8)])
    cap, plan = best_bucket_cap(sweep)
    assert cap == 120 * MiB and cap > 100 * MB
    flat = [p.step_time for c, p in sweep if 104 * MiB <= c <= 192 * MiB]
    assert max(flat) <= plan.step_time * 1.003


@pytest.mark.parametrize("layers, share", [(2, 0.5), (3, 0.667), (10, 0.9), (20, 0.95)])
def test_hidden_fraction_of_equal_layers(layers, share):
    assert round(hidden_fraction_equal_layers(layers), 3) == share
    assert hidden_fraction_equal_layers(layers) == pytest.approx((layers - 1) / layers)


def test_chapter_shallow_range_stops_short_of_three_layers():
    """§1.8.3: "50–60 %" for 2–3 layers; the model gives 66.7 % at L = 3."""
    assert hidden_fraction_equal_layers(3) > 0.60


def test_single_node_70b_check():
    """2·(7/8)·140 GB / 450 GB/s = 0.5444 s, 25.9 % of 2.1 s; but 16 B/param of model state
    is 1.12 TB per GPU (F21)."""
    c = single_node_check(**SINGLE_NODE)
    assert c.allreduce_time == pytest.approx(2 * 7 / 8 * 140e9 / 450e9)
    assert round(c.allreduce_time, 4) == 0.5444 and round(c.share * 100, 1) == 25.9
    assert c.memory_per_gpu == pytest.approx(16 * 70e9) and not c.fits
    assert single_node_check(alpha=2e-6, **SINGLE_NODE).allreduce_time == pytest.approx(c.allreduce_time + 14 * 2e-6)


def test_bad_input():
    with pytest.raises(ValueError, match="at least one"):
        ddp_bucket_assignment([])
    with pytest.raises(ValueError, match=r"param_bytes\[1\]"):
        ddp_bucket_assignment([MiB, 0])
    with pytest.raises(TypeError, match="whole number"):
        ddp_bucket_assignment([1.5])
    with pytest.raises(ValueError, match="backward has"):
        bucket_timeline([MiB], [1, 2], ring_allreduce_cost())
    with pytest.raises(TypeError, match="allreduce_cost"):
        bucket_timeline([MiB], [1], 3.0)
    with pytest.raises(ValueError, match="allreduce_cost"):
        bucket_timeline([MiB], [1], lambda n: -1.0)
    with pytest.raises(TypeError, match="ModelShape"):
        bucket_cap_sweep("model")
    with pytest.raises(ValueError, match="n_layers"):
        hidden_fraction_equal_layers(0)
    assert isinstance(ModelShape.uniform("x", [MiB], 2, 1e-9, "two layers"), ModelShape)
    assert layerwise_timeline([1.0], [1.0]).step_time == 2.0
