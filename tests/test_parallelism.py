"""commbook.parallelism against its sources: PyTorch's DDP bucket cap and FSDP sharding
strategies, the ZeRO paper (Rajbhandari et al. 2020) and the chapter's FSDP count
(§1.3, "FSDP 通信模式"), which inventory flag F22 corrects."""
import math

import pytest

from commbook import parallelism as par
from commbook.units import MiB

N_LAYERS, WORLD = 32, 64


def test_ddp_default_bucket_cap_is_25_mib():
    # torch/nn/parallel/distributed.py: bucket_cap_mb = 25; int(bucket_cap_mb * 1024 * 1024)
    assert par.DDP_BUCKET_CAP_MB == 25
    assert par.DDP_BUCKET_CAP_BYTES == int(25 * 1024 * 1024) == 26_214_400


def test_ddp_bucket_count_of_a_7b_bf16_model():
    expected = math.ceil(7e9 * 2 / (25 * 2**20))          # 14 GB of gradients / 25 MiB
    assert expected == 535
    assert par.ddp_bucket_count(7e9 * 2) == expected
    step = par.ddp(7e9, WORLD)
    assert step.n_collectives == expected == step.count("all_reduce", "backward")
    # decimal 25 MB would give 560: the cap is binary
    assert par.ddp_bucket_count(7e9 * 2, 25e6) == 560


def test_ddp_bytes_per_gpu_is_one_ring_all_reduce():
    step = par.ddp(7e9, WORLD)
    assert step.bytes_per_gpu == pytest.approx(2 * (WORLD - 1) / WORLD * 14e9)
    # serial time = Σ over buckets of the ring closed form 2(p-1)(α + n/(pβ))
    a, b = 5e-6, 50e9
    buckets = [25 * MiB] * 534 + [14e9 - 534 * 25 * MiB]
    ring = sum(2 * (WORLD - 1) * (a + n / (WORLD * b)) for n in buckets)
    assert step.time(a, b) == pytest.approx(ring)


def test_fsdp_collective_counts():
    """Chapter: "FSDP issues 2·N_L collectives per step instead of 1" (one all-gather in
    forward, one reduce-scatter in backward).  With the default FULL_SHARD the parameters
    are freed after forward and gathered again before backward: 3·N_L."""
    chapter_count = 2 * N_LAYERS
    full = par.fsdp(7e9, N_LAYERS, WORLD)                               # reshard after forward
    grad_op = par.fsdp(7e9, N_LAYERS, WORLD, reshard_after_forward=False)
    assert grad_op.n_collectives == chapter_count == 64
    assert full.n_collectives == 3 * N_LAYERS == 96 != chapter_count
    assert full.count("all_gather", "forward") == full.count("all_gather", "backward") == N_LAYERS
    assert full.count("reduce_scatter", "backward") == N_LAYERS
    assert grad_op.count("all_gather", "backward") == 0
    # the chapter's α term ≈ 2·N_L·α_eff becomes 3·N_L·α_eff
    assert full.startup_cost(20e-6) == pytest.approx(3 * N_LAYERS * 20e-6)
    assert grad_op.startup_cost(20e-6) == pytest.approx(2 * N_LAYERS * 20e-6)


def test_bytes_relative_to_ddp():
    """ZeRO paper §7: stages 1–2 move 2Ψ like DDP; stage 3 moves 3Ψ, i.e. 1.5× DDP."""
    ddp = par.ddp(7e9, WORLD).bytes_per_gpu
    ratios = {s: par.zero(s, 7e9, WORLD, n_layers=N_LAYERS).bytes_per_gpu / ddp for s in range(4)}
    assert ratios == pytest.approx({0: 1.0, 1: 1.0, 2: 1.0, 3: 1.5})
    assert par.fsdp(7e9, N_LAYERS, WORLD).bytes_per_gpu / ddp == pytest.approx(1.5)
    assert par.fsdp(7e9, N_LAYERS, WORLD, reshard_after_forward=False).bytes_per_gpu / ddp == pytest.approx(1.0)
    # per all-gather / reduce-scatter each GPU sends (p-1)/p of the buffer
    unit = 14e9 / N_LAYERS
    assert par.fsdp(7e9, N_LAYERS, WORLD).bytes_per_gpu == pytest.approx(3 * N_LAYERS * (WORLD - 1) / WORLD * unit)


def test_zero_memory_matches_the_paper():
    """ZeRO paper Figure 1: Ψ = 7.5B, N_d = 64, K = 12 → 120 GB, 31.4 GB, 16.6 GB, 1.9 GB."""
    got = [par.zero_memory_per_gpu(s, 7.5e9, 64) / 1e9 for s in range(4)]
    assert [round(got[0]), round(got[1], 1), round(got[2], 1), round(got[3], 1)] == [120, 31.4, 16.6, 1.9]


def test_bad_input():
    with pytest.raises(ValueError, match="params"):
        par.ddp(0, 8)
    with pytest.raises(TypeError, match="world"):
        par.ddp(7e9, 8.5)
    with pytest.raises(ValueError, match="bucket_cap"):
        par.ddp_bucket_count(1e9, 0)
    with pytest.raises(ValueError, match="n_layers"):
        par.fsdp(7e9, 0, 8)
    with pytest.raises(TypeError, match="reshard_after_forward"):
        par.fsdp(7e9, 4, 8, reshard_after_forward="yes")
    with pytest.raises(ValueError, match="stage"):
        par.zero(4, 7e9, 8)
    with pytest.raises(ValueError, match="stage"):
        par.zero_memory_per_gpu(True, 7e9, 8)
    with pytest.raises(ValueError, match="bytes_per_value"):
        par.ddp(7e9, 8, bytes_per_value=0)
