"""commbook.moe against the chapter's §1.3 (Napkin Math 1.4, capacity, binomial load,
hierarchical MoE exchange) and against independent references: exact rational
arithmetic for the binomial tails and a seeded Monte Carlo of the router."""
import math
from fractions import Fraction

import numpy as np
import pytest

from commbook import moe
from commbook.book.ch1.inputs import NM_1_4
from commbook.collectives import all_to_all_v
from commbook.comm_sim import VirtualCluster
from commbook.cost import LogP
from commbook.hardware import IB_NDR, NVLINK4, Link
from commbook.moe import MoEConfig
from commbook.topology import Switch, TwoLevel

# Napkin Math 1.4 (inventory C.2): IB NDR with α = 3 µs, β = 50 GB/s.
NM14_LINK = Link("IB NDR (NM 1.4)", 3e-6, 50e9, "chapter Napkin Math 1.4")
TRIALS = 400


# ----------------------------------------------------------------------------- capacity
def test_nm_1_4_configuration():
    """4,096 tokens over 8 GPUs (512 each), 64 experts (8 per GPU), top-1, 2,048 × BF16."""
    assert NM_1_4.tokens == 4096 and NM_1_4.experts_per_rank == 8
    assert NM_1_4.bytes_per_token == 4096                    # "4.096 KB" per token
    assert NM_1_4.tokens * NM_1_4.top_k / NM_1_4.experts == 64   # "each expert receives 64 tokens"


@pytest.mark.parametrize("c, cap", [(1.0, 64), (1.25, 80), (1.5, 96)])
def test_capacity_at_nm_1_4(c, cap):
    assert NM_1_4.capacity(c) == cap
    assert moe.expert_capacity(512, 8, 1, 64, c) == cap


def test_capacity_rounds_up_exactly():
    # ⌈P·T·k/E·C⌉ with exact rationals: 4096·1.1/64 = 70.4 → 71; 4096·1.125/64 = 72 exactly
    assert moe.expert_capacity(512, 8, 1, 64, 1.1) == math.ceil(Fraction(4096 * 11, 640))
    assert moe.expert_capacity(512, 8, 1, 64, 1.125) == 72
    assert moe.expert_capacity(100, 3, 2, 7, 1.0) == math.ceil(Fraction(600, 7))


# ----------------------------------------------------------------------------- binomial load
def test_load_mean_and_sd():
    L = NM_1_4.load()
    assert L.mean == pytest.approx(64)
    assert L.sd == pytest.approx(math.sqrt(63))              # 4096 · 1/64 · 63/64 = 63
    assert L.pmf.sum() == pytest.approx(1, abs=1e-12)


def _exact_sf(n: int, q: Fraction, c: int) -> Fraction:
    """P(N > c) for Binomial(n, q) in exact rational arithmetic: 1 − Σ_{k≤c} pmf."""
    return 1 - sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(c + 1))


def _exact_drop(n: int, q: Fraction, c: int) -> Fraction:
    """E[(N − c)+] = E[N] − c + E[(c − N)+], exactly."""
    return n * q - c + sum((c - k) * math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(c + 1))


@pytest.mark.parametrize("cap", [40, 64, 80, 96, 120])
def test_tails_match_exact_rational_arithmetic(cap):
    L = NM_1_4.load()
    q = Fraction(1, 64)
    assert L.overflow_probability(cap) == pytest.approx(float(_exact_sf(4096, q, cap)), rel=1e-9)
    assert L.expected_dropped(cap) == pytest.approx(float(_exact_drop(4096, q, cap)), rel=1e-9)
    assert L.cdf(cap) == pytest.approx(1 - float(_exact_sf(4096, q, cap)), rel=1e-9, abs=1e-15)


def _mc(cfg: MoEConfig, caps, trials=TRIALS):
    """Per trial: the share of experts over each capacity, their mean excess, the
    largest load and the mean squared deviation of the loads from the known mean
    (whose expectation is the variance of one expert's load)."""
    over, drop, mx, var = [], [], [], []
    for seed in range(trials):
        e = moe.route(cfg, rng=seed).expert_counts()
        over.append([(e > c).mean() for c in caps])
        drop.append([np.maximum(e - c, 0).mean() for c in caps])
        mx.append(e.max())
        var.append(np.mean((e - cfg.tokens * cfg.top_k / cfg.experts) ** 2))
    return np.array(over), np.array(drop), np.array(mx), np.array(var)


def _within_3se(samples, exact):
    se = samples.std(ddof=1) / math.sqrt(len(samples))
    assert abs(samples.mean() - exact) <= 3 * se, (samples.mean(), exact, se)


@pytest.mark.parametrize("cfg", [NM_1_4, MoEConfig(tokens_per_rank=128, ranks=4, experts=16, top_k=2)],
                         ids=["nm14-top1", "top2"])
def test_exact_overflow_and_drop_agree_with_monte_carlo(cfg):
    caps = [cfg.capacity(1.0), cfg.capacity(1.25)]
    L = cfg.load()
    over, drop, _, _ = _mc(cfg, caps)
    for j, c in enumerate(caps):
        _within_3se(over[:, j], L.overflow_probability(c))
        _within_3se(drop[:, j], L.expected_dropped(c))
    # dropped share of the whole batch = E[(N − c)+] / E[N]
    routed = cfg.tokens * cfg.top_k
    shares = np.array([moe.route(cfg, rng=s).dropped(caps[0]) / routed for s in range(TRIALS)])
    _within_3se(shares, L.dropped_share(caps[0]))


def test_top_k_picks_distinct_experts():
    """Top-2 of 4 experts: the load is Binomial(512, 2/4), variance 128 — not the 192 of
    1,024 independent picks of 1/4 (which would let a token pick an expert twice)."""
    cfg = MoEConfig(tokens_per_rank=128, ranks=4, experts=4, top_k=2)
    r = moe.route(cfg, rng=7)
    assert all(len(set(row)) == 2 for row in r.choices.reshape(-1, 2).tolist())
    _, _, _, var = _mc(cfg, [256])
    assert cfg.load().var == 512 * (1 / 2) * (1 / 2)
    _within_3se(var, cfg.load().var)
    assert abs(var.mean() - 1024 * (1 / 4) * (3 / 4)) > 10 * var.std(ddof=1) / math.sqrt(len(var))


def test_expected_max_is_a_lower_bound_close_to_monte_carlo():
    """E[max] over 64 experts as if independent: the real loads are negatively associated,
    so the simulated maximum is a little larger (within 1%)."""
    approx = NM_1_4.load().expected_max(64)
    _, _, mx, _ = _mc(NM_1_4, [64], trials=2000)
    se = mx.std(ddof=1) / math.sqrt(len(mx))
    assert mx.mean() >= approx - 3 * se
    assert abs(mx.mean() / approx - 1) < 0.01
    # for independent Binomial copies the formula is exact (Monte Carlo of 64 independent draws)
    rng = np.random.default_rng(3)
    ind = rng.binomial(4096, 1 / 64, size=(4000, 64)).max(axis=1)
    _within_3se(ind.astype(float), approx)


# ----------------------------------------------------------------------------- routing
def test_routing_is_reproducible_and_counts_are_consistent():
    a, b = moe.route(NM_1_4, rng=11), moe.route(NM_1_4, rng=11)
    assert np.array_equal(a.choices, b.choices)
    C = a.counts()
    assert (C.sum(axis=1) == NM_1_4.tokens_per_rank).all()        # every token sent once (top-1)
    assert np.array_equal(C.sum(axis=0), a.rank_loads())
    assert a.expert_counts().sum() == NM_1_4.tokens
    assert np.array_equal(a.counts_bytes(), C * 4096)


def test_zipf_skew_concentrates_load():
    pop = moe.zipf_popularity(64, s=1.0)
    assert pop[0] == pytest.approx(1 / sum(1 / k for k in range(1, 65)))
    loads = np.mean([moe.route(NM_1_4, pop, rng=s).expert_counts() for s in range(200)], axis=0)
    np.testing.assert_allclose(loads, 4096 * pop, rtol=0.1)      # E[N_e] = n·p_e
    shuffled = moe.zipf_popularity(64, s=1.0, seed=5)
    assert sorted(shuffled) == pytest.approx(sorted(pop)) and shuffled[0] != pop[0]


# ----------------------------------------------------------------------------- NM 1.4 bounds
def test_nm_1_4_uniform_dispatch():
    C = moe.uniform_counts(NM_1_4)
    assert C[0, 1] == 262_144                                    # 64 tokens × 4.096 KB
    sent = C[0].sum() - C[0, 0]
    assert round(sent / 1e6, 2) == 1.84                          # "1.84 MB" sent (and received)
    per_transfer = NM14_LINK.alpha + C[0, 1] / NM14_LINK.beta
    assert round(per_transfer * 1e6) == 8                        # "3 μs + 5 μs = 8 μs" (8.243)
    assert 7 * per_transfer * 1e6 == pytest.approx(57.70, abs=0.005)   # chapter: 7 × 8 = 56 μs
    b = moe.a2a_bounds(C, alpha=NM14_LINK.alpha, inject_bw=NM14_LINK.beta, bisection_bw=4 * NM14_LINK.beta)
    assert b.injection * 1e6 == pytest.approx(39.7, abs=0.005)   # "α + total/β = 39.7 μs"
    assert b.reception == b.injection and b.binding == "injection"
    assert b.startup == pytest.approx(7 * 3e-6)
    # uniform exchange: p·n/4 bytes cross the bisection each way (cost.all_to_all_bounds)
    assert b.bisection == pytest.approx(3e-6 + 8 * C[0].sum() / 4 / (4 * 50e9))


def test_bisection_finds_the_hot_cut():
    """Ranks 0–3 send only to ranks 4–7: the worst cut is {0,1,2,3} | {4,5,6,7}."""
    C = np.zeros((8, 8))
    C[:4, 4:] = 1e6
    b = moe.a2a_bounds(C, alpha=0.0, inject_bw=1e9, bisection_bw=2e9)
    assert b.cut == (0, 1, 2, 3) and b.bisection == pytest.approx(16e6 / 2e9)


@pytest.mark.parametrize("s", [0.0, 1.2])
def test_simulated_times_respect_the_bounds(s):
    cfg = MoEConfig(tokens_per_rank=256, ranks=16, experts=64, top_k=2, d_model=1024)
    C = moe.route(cfg, moe.zipf_popularity(64, s, seed=1), rng=2).counts_bytes()
    sw = Switch(16, NM14_LINK)
    b = moe.a2a_bounds_on(sw, C)
    assert all_to_all_v(VirtualCluster(sw), counts=C).time >= b.bound * (1 - 1e-12)
    two = TwoLevel(2, 8, NVLINK4, IB_NDR)
    b2 = moe.a2a_bounds_on(two, C)
    for algo in ("direct", "hierarchical"):
        t = all_to_all_v(VirtualCluster(two), counts=C, algorithm=algo).time
        assert t >= max(b2.injection, b2.reception, b2.bisection) * (1 - 1e-12), algo
    assert all_to_all_v(VirtualCluster(two), counts=C).time >= b2.startup


# ----------------------------------------------------------------------------- flows
def test_flows_direct_vs_hierarchical():
    """The chapter: P(P−1) = 4,032 flows at P = 64 fall to N_nodes(N_nodes−1) = 56."""
    topo = TwoLevel(8, 8, NVLINK4, IB_NDR)
    C = np.ones((64, 64))
    d = moe.count_flows(all_to_all_v(VirtualCluster(topo), counts=C, trace=True), topo)
    h = moe.count_flows(all_to_all_v(VirtualCluster(topo), counts=C, algorithm="hierarchical", trace=True), topo)
    assert d.gpu_pairs == 64 * 63 == 4032                 # the chapter's P(P−1)
    assert h.node_pairs == h.max_per_rail == 8 * 7 == 56  # the chapter's N_nodes(N_nodes−1)
    # like for like: GPU-to-GPU flows that cross nodes fall by G = 8; per rail 448 → 56
    assert d.cross_node_gpu_pairs == 64 * 56 and h.cross_node_gpu_pairs == 8 * 56
    assert d.max_per_rail == 8 * 56 and d.node_pairs == 56


# ----------------------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(ValueError, match="capacity_factor"):
        moe.expert_capacity(512, 8, 1, 64, 0)
    with pytest.raises(ValueError, match="top_k"):
        moe.expert_capacity(512, 8, 65, 64)
    with pytest.raises(TypeError, match="ranks"):
        moe.expert_capacity(512, 8.0, 1, 64)
    with pytest.raises(ValueError, match="multiple of ranks"):
        MoEConfig(512, 8, 60)
    with pytest.raises(ValueError, match="popularity"):
        moe.route(NM_1_4, np.ones(64))
    with pytest.raises(TypeError, match="rng"):
        moe.route(NM_1_4, rng="seed")
    with pytest.raises(ValueError, match="q"):
        moe.ExpertLoad(10, 0.0)
    with pytest.raises(ValueError, match="capacity"):
        NM_1_4.load().overflow_probability(-1)
    with pytest.raises(ValueError, match="square"):
        moe.a2a_bounds(np.ones((2, 3)), alpha=0, inject_bw=1, bisection_bw=1)
    with pytest.raises(ValueError, match="groups"):
        moe.a2a_bounds(np.ones((30, 30)), alpha=0, inject_bw=1, bisection_bw=1)
    with pytest.raises(TypeError, match="Switch or TwoLevel"):
        moe.a2a_bounds_on(LogP(1, 1), np.ones((2, 2)))
    with pytest.raises(ValueError, match="uniform|split"):
        moe.uniform_counts(MoEConfig(tokens_per_rank=10, ranks=4, experts=8))
